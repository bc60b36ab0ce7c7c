//! Signed webhooks: a key's endpoints, each sent every race-day event of the topics it
//! chose as one `POST` in the Standard Webhooks 1.0 form, in stream order, at least once,
//! with retries on the specification's schedule. Where things are: `settings` the flags
//! and what they make; `endpoint` the records (an endpoint, what is owed to it); `sign`
//! the signatures; `guard` the rules against request forgery; `send` one delivery over
//! HTTP; `store` the buckets in NATS; `owner` the mail to an endpoint's owner; `scanner`
//! the race-day journal's new events; `manage` what the API asks of them; `lane` one
//! endpoint's deliveries in order on the retry schedule, and `dispatch` the sender of
//! them all, on one replica at a time.
//!
//! What is owed lives in JetStream's key-value buckets, never in memory alone: the sender
//! writes each endpoint's position and retry schedule after every attempt, so that a kill
//! and a failover lose nothing, and a delivery the receiver took but whose record was not
//! written goes again with the same `webhook-id`.

pub mod dispatch;
pub mod endpoint;
pub mod guard;
mod lane;
pub mod manage;
pub mod owner;
pub mod scanner;
pub mod send;
pub(crate) mod settings;
pub mod sign;
pub mod store;

pub use guard::Resolve;
pub use lane::SCHEDULE;
