//! What the folds' commits hand the storage engine, by kind of record: how many records
//! and how many bytes (keys and values; a removal its key), counted for the whole process
//! since it started, every store it wrote together. (A rebuild that folds in a worker
//! process counts there, not in the service's figures.) The engine writes more than it is
//! handed (its log and its pages); this is what the read models ask of it, the figure a
//! redesign of what they keep moves.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::keys::kinds::{InOrder, KINDS, OTHER};
use crate::kv::Commit;

/// One kind of record's count: its records, then its versions, for each kind and
/// [`OTHER`].
const SLOTS: usize = 2 * (KINDS.len() + 1);

/// What the commits of this process wrote, by kind.
struct Counts {
    records: [AtomicU64; SLOTS],
    bytes: [AtomicU64; SLOTS],
}

static COUNTS: Counts = Counts {
    records: [const { AtomicU64::new(0) }; SLOTS],
    bytes: [const { AtomicU64::new(0) }; SLOTS],
};

/// The records of one kind (or their versions) that the commits wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindWritten {
    /// The kind, in words ([`crate::keys::kinds::KINDS`], or `other`).
    pub kind: &'static str,
    /// Whether these are the versions of the kind's records, kept for `as_of` reads.
    pub versions: bool,
    /// Records written or removed.
    pub records: u64,
    /// Their keys' and values' bytes.
    pub bytes: u64,
}

/// Counts `commit`'s writes, before it is applied.
pub(crate) fn count(commit: &Commit) {
    let mut kinds = InOrder::default();
    for (key, value) in commit.iter() {
        let (kind, version) = kinds.kind_of(key);
        let slot = 2 * kind + usize::from(version);
        let bytes = key.len() + value.map_or(0, <[u8]>::len);
        COUNTS.records[slot].fetch_add(1, Ordering::Relaxed);
        COUNTS.bytes[slot].fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// What the commits of this process have written since it started, by kind, the kinds
/// never written left out.
pub fn written() -> Vec<KindWritten> {
    let names = KINDS.iter().map(|(name, _, _)| *name).chain([OTHER]);
    names
        .enumerate()
        .flat_map(|(kind, name)| {
            [false, true].map(|versions| {
                let slot = 2 * kind + usize::from(versions);
                KindWritten {
                    kind: name,
                    versions,
                    records: COUNTS.records[slot].load(Ordering::Relaxed),
                    bytes: COUNTS.bytes[slot].load(Ordering::Relaxed),
                }
            })
        })
        .filter(|w| w.records > 0)
        .collect()
}
