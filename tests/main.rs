//! Integration tests of the whole service: one binary, each test with its own nats-server,
//! port and data directory. Nothing is mocked: real NATS, real sled, real HTTP.

/// The service's allocator, as its binary has it (`src/main.rs`): most tests run their
/// services in this process, and under glibc's malloc the replay guard took about 6% more CPU.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod admin;
mod analysis;
mod api;
mod architecture;
mod browser;
mod cluster;
mod compaction;
mod corrections;
mod discovery;
mod doc_names;
mod documents;
mod examples;
mod feed;
mod feed_tables;
mod feeding;
mod history;
mod import;
mod json_examples;
mod keys;
mod live;
mod log_reader;
mod modules;
mod openapi;
mod position;
mod projector;
mod race_status;
mod raceday;
mod rebuild;
mod record;
mod refusals;
pub(crate) mod reliability;
mod replay;
mod replayed;
mod scripts;
mod security;
mod sessions;
mod snapshots;
mod sse;
mod startup;
mod subscribe;
mod subscribe_rules;
mod supervision;
mod support;
mod tls_front;
mod watch;
mod webhooks;
