//! What each record of the store is, in words, by the prefix of its key: how the store
//! counts what its commits write (`write_counts.rs`), what an operator reads in the
//! service's `/metrics`, and how the bench breaks a replayed store down.

use super::versions::parse_history;
use crate::compressed::Dictionary;
use crate::dictionaries as dict;

/// Whether the store packs a kind's records, and with what ([`packing`]).
pub type Packed = Option<Dictionary>;

/// The records of the kind are packed where that makes them shorter, with `dictionary`
/// (`dictionaries.rs`): JSON texts that are long and repeat their field names
/// (documents, cards, results, prices, the change feed's parts, a person's day of rides,
/// a race's chunk of odds moves), which zstd packs to a third of their size or less
/// against a dictionary of their kind (the cards' form sources to under a tenth).
const fn packed(dictionary: Dictionary) -> Packed {
    Some(dictionary)
}

/// The records of the kind are stored as they are written: short ones, binary ones, and
/// those already packed by the module that writes them (the versions' records, against
/// the value after them: `history/packing.rs`).
const AS_IS: Packed = None;

/// Every kind of record, with the prefix of its keys and whether and how the store packs
/// its records. The first prefix a key starts with names its kind (none is a prefix of
/// another's). A version of a record (kept for `as_of` reads, [`super::versions::history`]) is
/// counted apart, as a version of its record's kind, and is never packed by the store.
/// A static, not a constant: one copy, so that each dictionary has one address, by which
/// a thread finds its context for it (`compressed.rs`).
pub static KINDS: [(&str, &[u8], Packed); 32] = [
    (
        "profile documents",
        b"doc\0profile\0",
        packed(dict::PROFILE_DOCUMENTS),
    ),
    ("form heads", b"doc\0form\0", AS_IS),
    (
        "odds documents",
        b"doc\0odds\0",
        packed(dict::ODDS_DOCUMENTS),
    ),
    ("date results heads", b"doc\0results\0", AS_IS),
    ("race result heads", b"doc\0race\0", AS_IS),
    ("card heads", b"doc\0cards\0", AS_IS),
    ("form entries by year", b"fe\0", packed(dict::FORM_ENTRIES)),
    ("form entries' past versions", b"fc\0", AS_IS),
    ("race prices", b"odds\0", packed(dict::RACE_PRICES)),
    ("odds journal", b"oj\0", packed(dict::ODDS_JOURNAL)),
    ("odds journal counts", b"on\0", AS_IS),
    ("race-day journal", b"rd\0", AS_IS),
    ("race-day journal order", b"rdo\0", AS_IS),
    ("cards", b"card\0", packed(dict::CARDS)),
    ("cards' form sources", b"cf\0", packed(dict::CARD_FORMS)),
    ("days' rides", b"dr\0", packed(dict::DAYS_RIDES)),
    ("results", b"res\0", packed(dict::RESULTS)),
    ("scratchings", b"scr\0", AS_IS),
    ("race statuses", b"rst\0", AS_IS),
    ("days", b"day\0", AS_IS),
    ("meetings", b"mtg\0", AS_IS),
    ("name search: whole names", b"hw\0", AS_IS),
    ("name search: parts of names", b"hx\0", AS_IS),
    ("horse names", b"hn\0", AS_IS),
    ("horse names' counts", b"hnc\0", AS_IS),
    ("horses' newest names", b"hnw\0", AS_IS),
    ("horse names by year", b"hd\0", AS_IS),
    ("careers", b"hc\0", packed(dict::CAREERS)),
    ("people's records", b"ppl\0", packed(dict::PEOPLE)),
    ("change feed", b"chg\0", packed(dict::CHANGE_FEED)),
    ("applied ids", b"seen\0", AS_IS),
    ("dead letters", b"dead\0", AS_IS),
];

/// The kind of a key that starts with no prefix of [`KINDS`] (the store's own
/// bookkeeping, such as its checkpoint, among them).
pub const OTHER: &str = "other";

/// Where a key's kind stands in [`KINDS`] (`KINDS.len()`: [`OTHER`]), and whether the
/// key is a version of a record of that kind.
pub fn kind_of(key: &[u8]) -> (usize, bool) {
    InOrder::default().kind_of(key)
}

/// Where the kind of a record's key (not a version's) stands in [`KINDS`].
fn kind_of_record(record: &[u8]) -> usize {
    KINDS
        .iter()
        .position(|(_, prefix, _)| record.starts_with(prefix))
        .unwrap_or(KINDS.len())
}

/// How the store packs the record under `key` (`compressed.rs`): with the dictionary of its
/// kind ([`KINDS`]), if it is a record (not a version) of a kind the store packs.
pub(crate) fn packing(key: &[u8]) -> Packed {
    packing_of(kind_of(key))
}

/// How a record of the kind at `kind` is packed ([`packing`]); a version never.
fn packing_of((kind, version): (usize, bool)) -> Packed {
    if version {
        return None;
    }
    KINDS.get(kind).and_then(|(_, _, packed)| *packed)
}

/// The kinds of keys taken in key order, as a commit's are ([`kind_of`]): the kind of the
/// key before is tried first, since keys in order come in runs of one kind (no other
/// kind's prefix starts a key that starts with its prefix), and only a key of another
/// kind is looked up in [`KINDS`].
#[derive(Debug, Default)]
pub(crate) struct InOrder {
    last: Option<usize>,
}

impl InOrder {
    /// [`kind_of`] `key`.
    pub(crate) fn kind_of(&mut self, key: &[u8]) -> (usize, bool) {
        let (record, version) = match parse_history(key) {
            Some((record, _)) => (record, true),
            None => (key, false),
        };
        if let Some(last) = self.last {
            if record.starts_with(KINDS[last].1) {
                return (last, version);
            }
        }
        let kind = kind_of_record(record);
        self.last = (kind < KINDS.len()).then_some(kind);
        (kind, version)
    }

    /// [`packing`] of `key`.
    pub(crate) fn packing(&mut self, key: &[u8]) -> Packed {
        packing_of(self.kind_of(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{self, DocKey};

    #[test]
    fn no_prefix_of_a_kind_starts_another_s() {
        for (i, (_, a, _)) in KINDS.iter().enumerate() {
            for (j, (_, b, _)) in KINDS.iter().enumerate() {
                assert!(i == j || !b.starts_with(a), "{a:?} starts {b:?}");
            }
        }
    }

    #[test]
    fn each_packed_kind_is_packed_with_the_dictionary_named_after_its_prefix() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dictionaries");
        let mut files = 0;
        for (name, prefix, packed) in KINDS {
            let Some(dictionary) = packed else { continue };
            let file = dir.join(crate::dictionaries::file_name(prefix));
            let on_disk = std::fs::read(&file).expect("the kind's dictionary file");
            assert_eq!(dictionary, &on_disk[..], "{name}: {}", file.display());
            // In zstd's own format: its magic number, then its entropy tables.
            assert!(dictionary.starts_with(&[0x37, 0xa4, 0x30, 0xec]), "{name}");
            files += 1;
        }
        let on_disk = std::fs::read_dir(&dir).expect("the dictionaries").count();
        assert_eq!(files, on_disk, "a dictionary file no kind packs with");
    }

    /// The dictionaries are part of the layout: a store packed with others reads as
    /// damaged. Dictionaries trained anew (`racing-bench dictionaries`) are a new
    /// `SCHEMA` (`schema.rs`), written here with their digest.
    #[test]
    fn the_dictionaries_are_those_of_the_layout() {
        let mut laid = Vec::new();
        for dictionary in KINDS.iter().filter_map(|(_, _, packed)| *packed) {
            laid.extend_from_slice(&(dictionary.len() as u64).to_le_bytes());
            laid.extend_from_slice(dictionary);
        }
        let digest = xxhash_rust::xxh3::xxh3_128(&laid);
        assert_eq!(
            (crate::schema::SCHEMA, digest),
            (&b"40"[..], 0xcc27_53f7_15a2_0429_9978_86b9_3784_0938),
            "dictionaries other than the layout's: a new SCHEMA in schema.rs, then it and \
             the dictionaries' digest, {digest:#x}, here"
        );
    }

    #[test]
    fn keys_taken_one_after_another_are_of_the_kind_each_is_alone() {
        let mut keys: Vec<Vec<u8>> = KINDS
            .iter()
            .flat_map(|(_, prefix, _)| {
                let record = [*prefix, b"2026-11-21"].concat();
                [record.clone(), keys::versions::history(&record, 7)]
            })
            .chain([keys::CHECKPOINT.to_vec(), b"doc\0zz".to_vec()])
            .collect();
        keys.sort();
        let reversed: Vec<Vec<u8>> = keys.iter().rev().cloned().collect();
        for order in [keys, reversed] {
            let mut in_order = InOrder::default();
            for key in &order {
                assert_eq!(in_order.kind_of(key), kind_of(key), "{key:?}");
                assert_eq!(in_order.packing(key), packing(key), "{key:?}");
            }
        }
    }

    #[test]
    fn a_record_and_its_versions_are_of_its_kind() {
        let prices = keys::odds("2026-11-21", 3, Some("Sha Tin"));
        let (kind, version) = kind_of(&prices);
        assert_eq!((KINDS[kind].0, version), ("race prices", false));
        let (kind, version) = kind_of(&keys::versions::history(&prices, 7));
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
