//! A replay as a bulk load: a batch folds while the one before it is written, over a copy
//! in memory of what the load has written.
//!
//! sled 0.34 holds a process-wide lock while it writes a batch, and every read waits for
//! it: a fold that read the tree while the batch before it was written would wait for
//! that write, and nothing would overlap. From an empty store (a first start), every
//! record a fold reads is one the load wrote, so the loader keeps each record it
//! writes, and a record it does not hold is known not to exist. Folding and rendering take
//! one core, sled's writes another.
//!
//! What it holds is bounded by a budget: past it, the records of every batch but the one
//! being written are let go, and from then on the folds read what they lack from the tree
//! (waiting for the write in progress), so that a log of any size loads within it.

use std::thread::JoinHandle;

use crate::batch::{BatchStats, Sealed};
use crate::held::Held;
use crate::{Batch, Store, StoreError};

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
            held: Held::new(whole),
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
