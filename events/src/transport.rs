//! What travels: the subjects of the feed, the header a feeder names itself in, and the
//! payload's limit (the feed contract's Transport).

/// Largest payload a feeder may publish, in bytes (feed contract, Transport).
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;

/// The header a feeder's messages carry its NATS user's name in (`feeder-hkjc`): the
/// service keeps the refusals of that feeder's events where that user alone may read them.
pub const FEEDER_HEADER: &str = "Racing-Feeder";

/// Every subject of the feed starts with this token.
pub const SUBJECT_ROOT: &str = "racing";

/// The subject filter of the whole feed, as the stream is configured.
pub const ALL_SUBJECTS: &str = "racing.>";

/// The subject filter of the odds events alone.
pub const ODDS_SUBJECTS: &str = "racing.odds.>";

/// The subject filter of the race status events alone (v1.2).
pub const STATUS_SUBJECTS: &str = "racing.status.>";

/// The subject of a race's event of `kind`: `racing.{kind}.{date}.{race_number}`.
pub(crate) fn race_subject(kind: &str, date: &str, race_number: i64) -> String {
    format!("{SUBJECT_ROOT}.{kind}.{date}.{race_number}")
}
