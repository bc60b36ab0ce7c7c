//! What each record of the store is, in words, by the prefix of its key: how the store
//! counts what its commits write (`write_counts.rs`), what an operator reads in the
//! service's `/metrics`, and how the bench breaks a replayed store down.

use super::parse_history;

/// Every kind of record, with the prefix of its keys. The first prefix a key starts with
/// names its kind (none is a prefix of another's). A version of a record (kept for `as_of`
/// reads, [`super::history`]) is counted apart, as a version of its record's kind.
pub const KINDS: [(&str, &[u8]); 33] = [
    ("profile documents", b"doc\0profile\0"),
    ("form heads", b"doc\0form\0"),
    ("odds documents", b"doc\0odds\0"),
    ("date results heads", b"doc\0results\0"),
    ("race result heads", b"doc\0race\0"),
    ("card heads", b"doc\0cards\0"),
    ("form entries", b"fe\0"),
    ("form entries' past versions", b"fc\0"),
    ("race prices", b"odds\0"),
    ("odds journal", b"oj\0"),
    ("odds journal counts", b"on\0"),
    ("race-day journal", b"rd\0"),
    ("race-day journal order", b"rdo\0"),
    ("cards", b"card\0"),
    ("cards by horse", b"cx\0"),
    ("cards' form sources", b"cf\0"),
    ("results", b"res\0"),
    ("scratchings", b"scr\0"),
    ("race statuses", b"rst\0"),
    ("days", b"day\0"),
    ("meetings", b"mtg\0"),
    ("name search: whole names", b"hw\0"),
    ("name search: parts of names", b"hx\0"),
    ("horse names", b"hn\0"),
    ("horses' newest names", b"hnw\0"),
    ("horse names by date", b"hd\0"),
    ("careers", b"hc\0"),
    ("people's records", b"ppl\0"),
    ("people's recent days", b"pr\0"),
    ("people's races", b"px\0"),
    ("change feed", b"chg\0"),
    ("applied ids", b"seen\0"),
    ("dead letters", b"dead\0"),
];

/// The kind of a key that starts with no prefix of [`KINDS`] (the store's own
/// bookkeeping, such as its checkpoint, among them).
pub const OTHER: &str = "other";

/// Where a key's kind stands in [`KINDS`] (`KINDS.len()`: [`OTHER`]), and whether the
/// key is a version of a record of that kind.
pub fn kind_of(key: &[u8]) -> (usize, bool) {
    let (record, version) = match parse_history(key) {
        Some((record, _)) => (record, true),
        None => (key, false),
    };
    let kind = KINDS
        .iter()
        .position(|(_, prefix)| record.starts_with(prefix))
        .unwrap_or(KINDS.len());
    (kind, version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{self, DocKey};

    #[test]
    fn no_prefix_of_a_kind_starts_another_s() {
        for (i, (_, a)) in KINDS.iter().enumerate() {
            for (j, (_, b)) in KINDS.iter().enumerate() {
                assert!(i == j || !b.starts_with(a), "{a:?} starts {b:?}");
            }
        }
    }

    #[test]
    fn a_record_and_its_versions_are_of_its_kind() {
        let prices = keys::odds("2026-11-21", 3, Some("Sha Tin"));
        let (kind, version) = kind_of(&prices);
        assert_eq!((KINDS[kind].0, version), ("race prices", false));
        let (kind, version) = kind_of(&keys::history(&prices, 7));
        assert_eq!((KINDS[kind].0, version), ("race prices", true));
        let odds = DocKey::Odds {
            date: "2026-11-21",
            race_number: 3,
            venue: None,
        };
        assert_eq!(KINDS[kind_of(&odds.key()).0].0, "odds documents");
        assert_eq!(kind_of(keys::CHECKPOINT), (KINDS.len(), false));
    }
}
