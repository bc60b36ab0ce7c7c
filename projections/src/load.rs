//! A replay as a bulk load: a batch folds while the one before it is written, over a copy
//! in memory of what the load has written.
//!
//! sled 0.34 holds a process-wide lock while it writes a batch, and every read waits for
//! it: a fold that read the tree while the batch before it was written would wait for
//! that write, and nothing would overlap. From an empty store (a first start, a rebuild),
//! every record a fold reads is one the load wrote, so the loader keeps each record it
//! writes, and a record it does not hold is known not to exist. Folding and rendering take
//! one core, sled's writes another.
//!
//! What it holds is bounded by a budget: past it, the records of every batch but the one
//! being written are let go, and from then on the folds read what they lack from the tree
//! (waiting for the write in progress), so that a log of any size loads within it.

use std::collections::{BTreeMap, HashSet};
use std::thread::JoinHandle;

use crate::store::{BatchStats, Sealed, Writes};
use crate::{Batch, Store, StoreError};

/// Bytes counted for each record held beside its key and value: the map's node and the
/// two vectors' heads.
const RECORD_OVERHEAD: usize = 96;

/// What a [`Loader`] holds of the store, read by its batches before the tree.
#[derive(Default)]
pub struct Held {
    /// The records of the batch being written.
    writing: Writes,
    /// Those of the batches written before it, while the budget allows.
    written: Writes,
    /// Whether the two hold every record of the store that a fold reads: the load began
    /// on an empty store, and nothing was let go.
    whole: bool,
    /// About the bytes held.
    bytes: usize,
    /// The `event_id`s applied by the batch being written, which join the store's applied
    /// ids once it is.
    writing_ids: HashSet<u128, foldhash::fast::RandomState>,
}

impl Held {
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
        tree: &sled::Tree,
        writes: &Writes,
        ask: crate::scan::Ask<'_>,
    ) -> Result<Vec<crate::scan::Item>, StoreError> {
        let layers = [writes, &self.writing, &self.written];
        crate::scan::over_layers(tree, &layers, self.whole, ask)
    }

    /// Whether `event_id` was applied by the batch being written.
    pub(crate) fn writing(&self, event_id: u128) -> bool {
        self.writing_ids.contains(&event_id)
    }

    /// Holds `writes`, of the batch whose write starts, and its applied `ids`; the batch
    /// written before it joins those written, within `budget`.
    fn add(&mut self, writes: Writes, ids: &[u128], budget: usize) {
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

/// Folds batches into a store while the batch before each is written on a thread of its
/// own, one write at a time, each atomic with its checkpoint as a commit is.
pub struct Loader {
    store: Store,
    held: Held,
    /// The checkpoint of the last batch sealed.
    checkpoint: u64,
    /// Most bytes held ([`Held`]).
    budget: usize,
    /// The write in progress.
    writing: Option<JoinHandle<Result<BatchStats, StoreError>>>,
}

impl Loader {
    /// A loader of `store` holding up to about `budget` bytes of records in memory. On a
    /// store that is not empty, it holds only the batch being written, and folds read the
    /// rest from the tree.
    pub fn new(store: &Store, budget: usize) -> Result<Loader, StoreError> {
        let checkpoint = store.checkpoint()?;
        let whole = checkpoint == 0 && store.holds_nothing_folded()?;
        Ok(Loader {
            store: store.clone(),
            held: Held {
                whole,
                ..Held::default()
            },
            checkpoint,
            budget,
            writing: None,
        })
    }

    /// A batch from the last one sealed, reading what the loader holds before the tree.
    pub fn batch(&self) -> Batch<'_> {
        Batch::new(&self.store, self.checkpoint, Some(&self.held))
    }

    /// Waits for the write in progress, then starts writing `sealed` on a thread of its
    /// own, holding `writes` (its records) meanwhile. Returns what the write waited for
    /// did, if there was one.
    pub fn write(&mut self, mut sealed: Sealed) -> Result<Option<BatchStats>, StoreError> {
        let done = self.wait()?;
        self.checkpoint = sealed.stats().checkpoint;
        let writes = std::mem::take(&mut sealed.writes);
        self.held.add(writes, sealed.ids(), self.budget);
        let thread = std::thread::Builder::new()
            .name("racing-load".into())
            .spawn(move || {
                let store = sealed.store().clone();
                let stats = sealed.write()?;
                // The applied ids' upkeep a batch of the store does before it starts.
                store.upkeep()?;
                Ok(stats)
            })
            .map_err(|e| StoreError::Sled(sled::Error::Io(e)))?;
        self.writing = Some(thread);
        Ok(done)
    }

    /// Waits for the write in progress, if there is one, and returns what it did.
    pub fn wait(&mut self) -> Result<Option<BatchStats>, StoreError> {
        let Some(thread) = self.writing.take() else {
            return Ok(None);
        };
        let stats = thread
            .join()
            .map_err(|_| StoreError::Corrupt("the load's writer panicked".into()))??;
        self.held.writing_ids.clear();
        Ok(Some(stats))
    }

    /// About the bytes of records held in memory.
    pub fn bytes_held(&self) -> usize {
        self.held.bytes
    }

    /// Whether it still holds every record the load wrote.
    pub fn holds_all(&self) -> bool {
        self.held.whole
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        // A write in progress finishes (or fails) before the store may be used otherwise.
        let _ = self.wait();
    }
}
