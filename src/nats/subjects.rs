//! The core NATS subjects beside a stream that carry no event of the feed: the replicas'
//! reports of each key's use to each other (`keys::usage`), and where a feeder's reading
//! of its refusals is delivered. Named here, below both the permissions that grant them
//! ([`super::auth`]) and the code that uses them.

/// Where a feeder's reading of its refusals is delivered (`{this}.{consumer}`): a
/// subject its user alone may subscribe to, unlike the role's inbox, which every feeder
/// shares.
pub fn refusals_delivery(stream: &str, feeder: &str) -> String {
    format!("{stream}_REFUSALS_TO.{feeder}")
}

/// The subject a replica reports its keys' use on.
pub fn rate_use(stream: &str, replica: &str) -> String {
    format!("{stream}_RATE_USE.{replica}")
}

/// The subjects of every replica's reports, which the service's NATS user may publish and
/// subscribe to.
pub fn rate_use_all(stream: &str) -> String {
    format!("{stream}_RATE_USE.>")
}
