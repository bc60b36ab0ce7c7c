//! The commands of the `racing` binary other than `serve`, one file per concern: the
//! admin listener's client, API keys, NATS credentials, the set-up, the feeds, the
//! feed's offline check, the import of Hong Kong history and a feeder's refusals.
//! `command` is the command line, `serve` the service's own, `nats_target` where those
//! that talk to NATS find it; `src/main.rs` runs them.

pub mod admin;
pub mod check;
pub mod command;
pub mod credentials;
pub mod feed;
pub mod import;
pub mod keys;
mod nats_target;
pub mod refusals;
pub mod serve;
pub mod setup;
pub mod snapshot;
