//! The core NATS subjects beside a stream that carry no event of the feed: the replicas'
//! reports of each key's use to each other (`keys::usage`), and where a feeder's reading
//! of its refusals is delivered, with the names of those readings' consumers. Named here,
//! below both the permissions that grant them ([`super::auth`]) and the code that uses
//! them.

/// Where a feeder's reading of its refusals is delivered (`{this}.{token}`, a new token
/// for each consumer a reading makes): a subject its user alone may subscribe to, unlike
/// the role's inbox, which every feeder shares.
pub fn refusals_delivery(stream: &str, feeder: &str) -> String {
    format!("{stream}_REFUSALS_TO.{feeder}")
}

/// How many readings of its refusals one feeder may hold at once: each is a consumer
/// named [`refusals_reader`], and the feeder's permissions name each one.
pub const REFUSAL_READERS: usize = 4;

/// The name of a feeder's reading `slot` (below [`REFUSAL_READERS`]) of its refusals,
/// `refusals_feeder-hkjc_0`. A consumer's name is one subject token, and a permission's
/// wildcard matches whole tokens only, so names fixed per feeder are what lets its user
/// make, look up and remove its own readings and no other feeder's.
pub fn refusals_reader(feeder: &str, slot: usize) -> String {
    format!("refusals_{feeder}_{slot}")
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
