//! Records a batch writes once for each subject it touched, holding that subject's entries
//! of the batch in the order of their events: the versions of a source record
//! (`history.rs`). One record a batch and subject, not one
//! an event: a replay's batches make hundreds of thousands of entries, and each record is
//! an insert of its own in sled's tree, whose walk down the tree and rewrite of a leaf
//! cost more than its bytes.
//!
//! A record is its entries one after the other, each its event's sequence (8 bytes,
//! big-endian), the entry's length (4 bytes, big-endian), then the entry. It is kept under
//! the sequence of its first entry, so that a subject's records follow one another in
//! the order of their batches and never overlap. Its writer stores it packed where that
//! makes it shorter (`history/packing.rs`), and unpacks it before [`entries`] reads it.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use crate::kv::StoreError;

/// The entries a batch made, by subject, until [`PerBatch::drain`] takes them to write.
#[derive(Debug)]
pub(crate) struct PerBatch<K> {
    /// By subject: the sequence of the first entry, and the record so far.
    subjects: BTreeMap<K, (u64, Vec<u8>)>,
}

impl<K> Default for PerBatch<K> {
    fn default() -> PerBatch<K> {
        PerBatch {
            subjects: BTreeMap::new(),
        }
    }
}

impl<K: Ord> PerBatch<K> {
    /// Adds `subject`'s entry by the event at `seq`, after any it holds. The subject is
    /// copied only the first time in the batch: most entries are of a subject it holds.
    pub(crate) fn push<Q>(&mut self, subject: &Q, seq: u64, entry: &[u8])
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        match self.subjects.get_mut(subject) {
            Some((_, record)) => append(record, seq, entry),
            None => {
                let mut record = Vec::with_capacity(12 + entry.len());
                append(&mut record, seq, entry);
                self.subjects.insert(subject.to_owned(), (seq, record));
            }
        }
    }

    /// Each subject's record, with the sequence of its first entry; none is left.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (K, u64, Vec<u8>)> {
        std::mem::take(&mut self.subjects)
            .into_iter()
            .map(|(subject, (first, record))| (subject, first, record))
    }
}

/// Appends the entry by the event at `seq` to a subject's record.
fn append(record: &mut Vec<u8>, seq: u64, entry: &[u8]) {
    record.extend_from_slice(&seq.to_be_bytes());
    // An entry is a record of the read models or a form's change: kilobytes, never 4 GiB.
    record.extend_from_slice(&(entry.len() as u32).to_be_bytes());
    record.extend_from_slice(entry);
}

/// The entries of a record [`PerBatch`] made, as `(seq, entry)`, in order; a damaged one
/// ends them with an error.
pub(crate) fn entries(mut record: &[u8]) -> impl Iterator<Item = Result<(u64, &[u8]), StoreError>> {
    std::iter::from_fn(move || {
        if record.is_empty() {
            return None;
        }
        let next = record.split_first_chunk::<8>().and_then(|(seq, rest)| {
            let (len, rest) = rest.split_first_chunk::<4>()?;
            let (entry, rest) = rest.split_at_checked(u32::from_be_bytes(*len) as usize)?;
            Some((u64::from_be_bytes(*seq), entry, rest))
        });
        let Some((seq, entry, rest)) = next else {
            // Nothing after a damaged entry can be read.
            record = &[];
            return Some(Err(StoreError::Corrupt(
                "a record of a batch's entries is truncated".into(),
            )));
        };
        record = rest;
        Some(Ok((seq, entry)))
    })
}
