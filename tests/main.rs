//! Integration tests of the whole service: one binary, each test with its own nats-server,
//! port and data directory. Nothing is mocked: real NATS, real sled, real HTTP.

mod admin;
mod analysis;
mod api;
mod architecture;
mod browser;
mod cluster;
mod corrections;
mod discovery;
mod documents;
mod examples;
mod feed;
mod history;
mod keys;
mod live;
mod log_reader;
mod modules;
mod openapi;
mod projector;
mod race_status;
mod raceday;
mod rebuild;
mod record;
pub(crate) mod reliability;
mod replay;
mod replayed;
mod security;
mod sessions;
mod snapshots;
mod sse;
mod startup;
mod subscribe;
mod subscribe_rules;
mod supervision;
mod support;
mod watch;
mod webhooks;
