//! What a batch hands the next of the records it read from the tree: those records as the
//! batches before left them.

use std::collections::HashMap;

use crate::state::Writes;

/// Records read from the tree, unpacked, as the store holds them once the batches before
/// have committed. The models read the same records event after event and batch after
/// batch (an amended result's 14 days of cards: each race's card and form sources, at
/// every result), and each read from the tree was a lookup and often an unpacking
/// (`compressed.rs`); a catch-up while the API answers commits a few events a batch. A
/// batch reads its own writes before this, and at its seal sets each record it wrote that
/// this holds to what it wrote ([`ReadCache::written`]): only a batch's commit writes the
/// records a fold reads, and the next batch is handed this only where it starts at the
/// checkpoint that commit reached (`Store::handed`). Past [`READ_CACHE_BYTES`] it starts
/// again empty.
#[derive(Default)]
pub(crate) struct ReadCache {
    records: HashMap<Vec<u8>, Option<Vec<u8>>, foldhash::fast::RandomState>,
    bytes: usize,
}

/// About the most a store's [`ReadCache`] holds: what an amended result reads (the cards
/// and forms of the races after it that share a horse or, within 14 days, a person)
/// changes little from one result to the next. (A quarter of this, with a quarter of the
/// cards and forms decoded kept, lost most of the gain on the amending demo seasons:
/// BENCHMARKS.md.)
const READ_CACHE_BYTES: usize = 32 << 20;

/// Bytes counted for each record cached beside its key and value: the map's entry and the
/// two vectors' headers.
const READ_CACHE_ENTRY: usize = 64;

impl ReadCache {
    pub(crate) fn get(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        self.records.get(key).cloned()
    }

    pub(crate) fn keep(&mut self, key: &[u8], value: Option<&[u8]>) {
        let size = key.len() + value.map_or(0, <[u8]>::len) + READ_CACHE_ENTRY;
        if self.bytes + size > READ_CACHE_BYTES {
            self.records.clear();
            self.bytes = 0;
        }
        self.bytes += size;
        self.records.insert(key.to_vec(), value.map(<[u8]>::to_vec));
    }

    /// The records held as they stand once `writes` are committed.
    pub(crate) fn written(&mut self, writes: &Writes) {
        for (key, value) in writes {
            if let Some(held) = self.records.get_mut(key) {
                let was = held.as_ref().map_or(0, Vec::len);
                let now = value.as_ref().map_or(0, Vec::len);
                self.bytes = (self.bytes + now).saturating_sub(was);
                held.clone_from(value);
            }
        }
    }
}
