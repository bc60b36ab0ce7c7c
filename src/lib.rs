//! The racing service: configuration, NATS wiring, the projector task, the HTTP API,
//! the feeder (the demo is a feeder of its own, `racing-demo`) and the commands of the
//! `racing` binary (`cli`). `main.rs` is only the command line around this library, so
//! that tests drive the very same code.

pub mod admin;
pub mod app;
pub mod cli;
pub mod compaction;
pub mod config;
pub mod disk;
pub mod faults;
pub mod files;
pub mod http;
pub mod import;
pub mod keys;
pub mod live;
pub mod load;
pub mod memory;
pub mod nats;
pub mod projector;
pub mod publish;
pub mod read_models;
pub mod rebuild;
pub mod refusals;
pub mod retry;
pub mod snapshot;
pub mod starting;
pub mod subscribe;
pub mod supervise;
pub mod telemetry;
pub mod text;
pub mod watch;
pub mod webhooks;

pub use app::Application;
pub use config::Config;
