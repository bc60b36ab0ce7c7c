//! What a [`crate::Loader`] holds in memory of the store it loads: the records of the batch
//! being written and of those before it, within a budget, read by its batches before the
//! tree.

use std::collections::{BTreeMap, HashSet};

use crate::kv::Kv;
use crate::state::Writes;
use crate::StoreError;

/// Bytes counted for each record held beside its key and value: the map's node and the
/// two vectors' heads.
const RECORD_OVERHEAD: usize = 96;

/// What a [`crate::Loader`] holds of the store, read by its batches before the tree.
#[derive(Default)]
pub struct Held {
    /// The records of the batch being written.
    writing: Writes,
    /// Those of the batches written before it, while the budget allows.
    written: Writes,
    /// Whether the two hold every record of the store that a fold reads: the load began
    /// on an empty store, and nothing was let go.
    pub(crate) whole: bool,
    /// About the bytes held.
    pub(crate) bytes: usize,
    /// The `event_id`s applied by the batch being written, which join the store's applied
    /// ids once it is.
    pub(crate) writing_ids: HashSet<u128, foldhash::fast::RandomState>,
}

impl Held {
    /// Nothing held yet; `whole` where the store holds nothing a fold wrote.
    pub(crate) fn new(whole: bool) -> Held {
        Held {
            whole,
            ..Held::default()
        }
    }

    /// The record under `key` as the loader knows it: `Some(None)` where it knows there is
    /// none, `None` where the tree must say.
    pub(crate) fn get(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        match self.writing.get(key).or_else(|| self.written.get(key)) {
            Some(v) => Some(v.clone()),
            None if self.whole => Some(None),
            None => None,
        }
    }

    /// The scan `ask` of the tree as it will be once the loader's writes are written, and
    /// then `writes`.
    pub(crate) fn scan(
        &self,
        kv: &Kv,
        writes: &Writes,
        ask: crate::scan::Ask<'_>,
    ) -> Result<Vec<crate::scan::Item>, StoreError> {
        let layers = [writes, &self.writing, &self.written];
        crate::scan::over_layers(kv, &layers, self.whole, ask)
    }

    /// The records held.
    pub(crate) fn records(&self) -> usize {
        self.writing.len() + self.written.len()
    }

    /// Whether `event_id` was applied by the batch being written.
    pub(crate) fn writing(&self, event_id: u128) -> bool {
        self.writing_ids.contains(&event_id)
    }

    /// Holds `writes`, of the batch whose write starts, and its applied `ids`; the batch
    /// written before it joins those written, within `budget`.
    pub(crate) fn add(&mut self, writes: Writes, ids: &[u128], budget: usize) {
        let previous = std::mem::replace(&mut self.writing, writes);
        self.bytes -= size(&previous);
        for (key, value) in previous {
            let added = record_size(&key, &value);
            if let Some(old) = self.written.insert(key, value) {
                self.bytes -= old.as_ref().map_or(0, Vec::len);
                self.bytes += added - RECORD_OVERHEAD;
            } else {
                self.bytes += added;
            }
        }
        // (Keys are counted again where a replaced value's key was; near enough.)
        self.bytes += size(&self.writing);
        if self.bytes > budget && !self.written.is_empty() {
            // The records written are in the tree; only the batch being written must stay.
            self.written = BTreeMap::new();
            self.whole = false;
            self.bytes = size(&self.writing);
        }
        self.writing_ids = ids.iter().copied().collect();
    }
}

fn record_size(key: &[u8], value: &Option<Vec<u8>>) -> usize {
    key.len() + value.as_ref().map_or(0, Vec::len) + RECORD_OVERHEAD
}

fn size(writes: &Writes) -> usize {
    writes.iter().map(|(k, v)| record_size(k, v)).sum()
}
