//! The core NATS subjects beside a stream that carry no event of the feed: the replicas'
//! reports of each key's use to each other (`keys::usage`). Named here, below both the
//! permissions that grant them ([`super::auth`]) and the service that uses them.

/// The subject a replica reports its keys' use on.
pub fn rate_use(stream: &str, replica: &str) -> String {
    format!("{stream}_RATE_USE.{replica}")
}

/// The subjects of every replica's reports, which the service's NATS user may publish and
/// subscribe to.
pub fn rate_use_all(stream: &str) -> String {
    format!("{stream}_RATE_USE.>")
}
