//! The one way to the storage engine: a record by its key, the records of a range of keys
//! in order from either end, and writes applied together atomically. The store, its
//! read models' queries and the folds' reads all go through [`Kv`]; no other file of the
//! crate names the engine (sled 0.34), so that what the read models ask of it is this
//! page, and trying another engine means changing this file alone.

use std::collections::BTreeMap;
use std::ops::RangeBounds;
use std::path::Path;

use crate::StoreError;

/// A value (or key) as the engine hands it out: cheap to clone, and sliced without a copy.
pub type Bytes = sled::IVec;

/// How the engine fails ([`StoreError::Sled`]).
pub type Error = sled::Error;

/// A record: its key and its value.
pub(crate) type Record = (Bytes, Bytes);

/// The key-value store under the read models: one ordered map of bytes to bytes.
#[derive(Clone)]
pub(crate) struct Kv {
    db: sled::Db,
    tree: sled::Tree,
}

impl Kv {
    /// Opens (or creates) the store in `dir`, with `cache_bytes` of the engine's cache of
    /// pages.
    pub(crate) fn open(dir: &Path, cache_bytes: u64) -> Result<Kv, StoreError> {
        // (sled's high-throughput mode was tried: the replay was no faster for it than
        // with this cache alone; BENCHMARKS.md at f406d42, "Performance".)
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(cache_bytes)
            .open()?;
        let tree = db.open_tree("read_models")?;
        Ok(Kv { db, tree })
    }

    /// The record under `key`.
    pub(crate) fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>, StoreError> {
        Ok(self.tree.get(key)?)
    }

    /// The records whose keys are in `range`, in key order (from the last with
    /// [`Iterator::rev`]), each read as it is reached.
    pub(crate) fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Range {
        Range(self.tree.range(range))
    }

    /// The records whose keys start with `prefix`, as [`Kv::range`] reads them.
    pub(crate) fn prefix(&self, prefix: impl AsRef<[u8]>) -> Range {
        Range(self.tree.scan_prefix(prefix))
    }

    /// Every record, as [`Kv::range`] reads them.
    pub(crate) fn all(&self) -> Range {
        Range(self.tree.iter())
    }

    /// Applies `commit`'s writes together: after a crash the store holds all of them or
    /// none.
    pub(crate) fn apply(&self, commit: Commit) -> Result<(), StoreError> {
        Ok(self.tree.apply_batch(batch_of(commit.0))?)
    }

    /// Applies `commit`'s writes in key order, `step` of them together at a time: after a
    /// crash the store may hold any number of its steps ([`crate::steps`] makes the whole
    /// recoverable). sled keeps everything a batch replaces until the batch's end.
    pub(crate) fn apply_in_steps(&self, commit: Commit, step: usize) -> Result<(), StoreError> {
        let mut writes = commit.0.into_iter().peekable();
        while writes.peek().is_some() {
            self.tree
                .apply_batch(batch_of(writes.by_ref().take(step.max(1))))?;
        }
        Ok(())
    }

    /// Writes one record, alone.
    pub(crate) fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.tree.insert(key, value)?;
        Ok(())
    }

    /// Writes everything applied so far to disk.
    pub(crate) async fn flush(&self) -> Result<(), StoreError> {
        self.db.flush_async().await?;
        Ok(())
    }

    /// [`Kv::flush`], waiting on this thread.
    pub(crate) fn flush_now(&self) -> Result<(), StoreError> {
        self.tree.flush()?;
        Ok(())
    }
}

/// Frees some of the memory of pages that writes replaced and no thread can still read:
/// sled frees such pages (epoch-based reclamation, crossbeam-epoch) a few bags of up to 64
/// at a time, each time some thread pins an epoch 128 times or flushes one; this flushes
/// one. A bulk load's folds seldom read the tree, and so seldom pin (`load.rs`).
pub(crate) fn free_replaced() {
    sled::pin().flush();
}

/// Writes to apply together ([`Kv::apply`]).
#[derive(Default, Clone)]
pub(crate) struct Commit(BTreeMap<Bytes, Option<Bytes>>);

impl Commit {
    /// Writes `value` under `key`.
    pub(crate) fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.0
            .insert(key.as_ref().into(), Some(value.as_ref().into()));
    }

    /// Removes the record under `key`, if any.
    pub(crate) fn remove(&mut self, key: impl AsRef<[u8]>) {
        self.0.insert(key.as_ref().into(), None);
    }

    /// Each write, in key order: the key, and the value or `None` for a removal.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v.as_deref()))
    }

    /// The writes whose keys `first` picks, and the others.
    pub(crate) fn split(self, first: impl Fn(&[u8]) -> bool) -> (Commit, Commit) {
        let (picked, rest) = self.0.into_iter().partition(|(k, _)| first(k));
        (Commit(picked), Commit(rest))
    }
}

/// The engine's atomic batch of `writes`.
fn batch_of(writes: impl IntoIterator<Item = (Bytes, Option<Bytes>)>) -> sled::Batch {
    let mut batch = sled::Batch::default();
    for (key, value) in writes {
        match value {
            Some(value) => batch.insert(key, value),
            None => batch.remove(key),
        }
    }
    batch
}

/// The records of a range of keys ([`Kv::range`]).
pub(crate) struct Range(sled::Iter);

impl Range {
    /// Their keys alone.
    pub(crate) fn keys(self) -> impl DoubleEndedIterator<Item = Result<Bytes, StoreError>> {
        self.map(|item| item.map(|(key, _)| key))
    }
}

impl Iterator for Range {
    type Item = Result<Record, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|item| item.map_err(StoreError::from))
    }
}

impl DoubleEndedIterator for Range {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0
            .next_back()
            .map(|item| item.map_err(StoreError::from))
    }
}

/// Whether `e` says another process holds the store open: sled locks a store's files for
/// the process that opens it, and says so only in the message of an `ErrorKind::Other`
/// (sled 0.34, config.rs).
pub(crate) fn held_elsewhere(e: &Error) -> bool {
    matches!(e, sled::Error::Io(e) if e.to_string().starts_with("could not acquire lock on"))
}

/// Whether `e` is a failure to read or write the store's files (a full disk, an I/O error).
pub(crate) fn is_io(e: &Error) -> bool {
    matches!(e, sled::Error::Io(_))
}

/// A failure to read or write a file of the store's own beside the engine's, as the
/// engine's would be ([`is_io`]).
pub(crate) fn io_error(e: std::io::Error) -> StoreError {
    StoreError::Sled(sled::Error::Io(e))
}

/// Whether `e` says the store itself is damaged: a file of it is missing (a blob that a
/// page points at), or a page is corrupt.
pub(crate) fn is_damage(e: &Error) -> bool {
    match e {
        sled::Error::Io(e) => e.kind() == std::io::ErrorKind::NotFound,
        sled::Error::Corruption { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::StoreError;

    #[test]
    fn a_store_that_lost_a_blob_fails_as_damaged_not_as_a_failing_disk() {
        let temp = crate::tests::tempdir();
        let dir = temp.path();
        {
            let db = sled::open(dir).expect("a store");
            // Over sled's 128 KiB a page, kept in a blob file of its own.
            db.insert(b"large", vec![7u8; 300 << 10]).expect("insert");
            db.flush().expect("flush");
        }
        // sled writes its snapshot (where each page is) as it opens a store: from then on
        // the page is found through its blob, no longer by reading the log.
        drop(sled::open(dir).expect("opened again"));
        let blobs = std::fs::read_dir(dir.join("blobs")).expect("blob files");
        let mut lost = 0;
        for blob in blobs {
            std::fs::remove_file(blob.expect("a blob").path()).expect("removed");
            lost += 1;
        }
        assert!(lost > 0, "the large value was kept in a blob file");
        let read = sled::open(dir).and_then(|db| db.get(b"large"));
        let error = StoreError::from(read.expect_err("the lost blob fails the read"));
        assert!(error.is_damage(), "{error}");
        assert!(
            !StoreError::from(sled::Error::Io(std::io::ErrorKind::StorageFull.into())).is_damage()
        );
    }
}
