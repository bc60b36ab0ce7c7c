//! NATS wiring: who may do what ([`auth`]), connecting with credentials ([`client`]),
//! the stream of the feed contract ([`stream`]) and its buckets ([`buckets`]), made by the set-up
//! ([`setup`]), the subjects beside it that carry no event ([`subjects`]), reading the
//! log in order ([`messages`]), and running a local nats-server when no NATS URL is
//! configured ([`local`]).

pub mod auth;
pub mod buckets;
pub mod client;
pub mod local;
pub mod messages;
pub mod setup;
pub(crate) mod stream;
pub mod subjects;

pub use auth::{Credentials, Role};
pub use client::{connect, ClientAuth, Connection, NatsArgs};
pub use local::{free_port, LocalNats, ServerOptions, ServerTls, WebSocketUser};
pub use messages::{messages_from, Messages, CONSUMER_WITHIN};
pub use setup::{set_up, StreamSettings};
pub use stream::{ensure_stream, stream_config};
