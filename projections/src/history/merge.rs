//! A store's records as a compaction copies them ([`crate::Store::copy_to`]): each run of
//! a source record's records of versions that ends with one packed alone, merged into
//! one record packed alone. The records of a run are packed against the value after them
//! (`history.rs`), so an `as_of` read that starts in a run reads it to its end: one
//! record of the same entries answers the same, and the copy holds fewer records for the
//! same bytes, where sled takes disk for each record far beyond its bytes. The
//! run a record's versions end with, packed against the record's value now, is copied as
//! it is: in key order, the value is not at hand.

use super::packing::{against_after, pack_alone, unpack_versions};
use crate::keys;
use crate::kv::StoreError;

/// Records handed in key order ([`Merging::push`]) and handed on to `out`, each run of a
/// source record's versions that ends with a record packed alone merged into one.
pub(crate) struct Merging<F> {
    out: F,
    /// The source record whose versions are being handed.
    record: Vec<u8>,
    /// Its records of versions since the last packed alone, each packed against the
    /// value after it: keys and values.
    run: Vec<(Vec<u8>, Vec<u8>)>,
}

impl<F, E> Merging<F>
where
    F: FnMut(&[u8], &[u8]) -> Result<(), E>,
    E: From<StoreError>,
{
    /// Hands each record on to `out`, or its run merged.
    pub(crate) fn new(out: F) -> Merging<F> {
        Merging {
            out,
            record: Vec::new(),
            run: Vec::new(),
        }
    }

    /// The next record, in key order.
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) -> Result<(), E> {
        let Some((record, _)) = keys::versions::parse_history(key) else {
            self.hand_on_run()?;
            return (self.out)(key, value);
        };
        if record != self.record.as_slice() {
            self.hand_on_run()?;
            self.record = record.to_vec();
        }
        let alone = !against_after(value);
        if alone && self.run.is_empty() {
            return (self.out)(key, value);
        }
        self.run.push((key.to_vec(), value.to_vec()));
        if !alone {
            return Ok(());
        }
        // The run's entries, unpacked from its last record back, one after the other
        // under the key of its first: as read, the same entries in the same order.
        let run = std::mem::take(&mut self.run);
        let stored: Vec<&[u8]> = run.iter().map(|(_, value)| value.as_slice()).collect();
        let entries = unpack_versions(&stored, None)?.concat();
        (self.out)(&run[0].0, &pack_alone(entries))
    }

    /// Hands on what is held, after the last record.
    pub(crate) fn finish(mut self) -> Result<(), E> {
        self.hand_on_run()
    }

    /// Hands on the run held, as it is: it ends a record's versions, packed against the
    /// record's value now.
    fn hand_on_run(&mut self) -> Result<(), E> {
        for (key, value) in std::mem::take(&mut self.run) {
            (self.out)(&key, &value)?;
        }
        Ok(())
    }
}
