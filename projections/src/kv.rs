//! The one way to the storage engine: a record by its key, the records of a range of keys
//! in order from either end, and writes applied together atomically. The store, its
//! read models' queries and the folds' reads all go through [`Kv`]; no other file of the
//! crate names the engine (sled 0.34), so that what the read models ask of it is this
//! page, and trying another engine means changing this file alone.

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard};

use crate::compressed::{self, Damaged};
use crate::encoding::{part, put_part};
use crate::keys;
use crate::keys::kinds::{packing, InOrder};

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
    /// The view being read as the store stood when it was frozen ([`Kv::freeze`]), if
    /// one is: every write goes through this lock, and keeps what it replaces there.
    frozen: Arc<Mutex<Option<Frozen>>>,
    /// Closed while a commit is written beside readers, a record at a time
    /// ([`Kv::apply_beside_readers`]): each read waits at it for the whole commit, as
    /// sled's own lock makes a read wait for a whole batch.
    gate: Arc<RwLock<()>>,
    /// Whether this handle's reads wait at the gate: a fold's do not ([`Kv::for_folds`]).
    gated: bool,
}

/// What a frozen view still needs of the store as it stood: the records that writes
/// since have replaced or removed (`None`: the key had no record), among the keys the
/// view has not read yet.
#[derive(Default)]
struct Frozen {
    /// The last key the view has read; `None` before its first read.
    reached: Option<Bytes>,
    /// Each key written since the freeze past `reached`, with its record before.
    before: BTreeMap<Bytes, Option<Bytes>>,
}

impl Kv {
    /// Opens (or creates) the store in `dir`, with `cache_bytes` of the engine's cache of
    /// pages.
    pub(crate) fn open(dir: &Path, cache_bytes: u64) -> Result<Kv, StoreError> {
        // (sled's high-throughput mode was tried: the replay was no faster for it than
        // with this cache alone.)
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(cache_bytes)
            .open()?;
        let tree = db.open_tree("read_models")?;
        let kv = Kv {
            db,
            tree,
            frozen: Arc::default(),
            gate: Arc::default(),
            gated: true,
        };
        kv.finish_beside_readers()?;
        Ok(kv)
    }

    /// This store, for the reads of the folds of a [`crate::load::Loader`]: they do not
    /// wait at the gate. A fold reads the records of the batch being written from the
    /// loader, never from the tree, and every other record it reads stays as it is while
    /// that batch is written (a batch with no loader folds once its last write is done).
    pub(crate) fn for_folds(&self) -> Kv {
        Kv {
            gated: false,
            ..self.clone()
        }
    }

    /// The record under `key`, unpacked where the store packed it ([`Commit::pack`]).
    pub(crate) fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>, StoreError> {
        let key = key.as_ref();
        (self.get_as_stored(key)?)
            .map(|stored| Kv::unpacked(key, stored))
            .transpose()
    }

    /// The record under `key` as the store holds it: packed where the store packed it.
    /// Two reads of one record that give the same bytes read the same value, so that a
    /// read that checks whether a record changed meanwhile need not unpack it again
    /// ([`Kv::unpacked`]).
    pub(crate) fn get_as_stored(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>, StoreError> {
        let _open = self.gated.then(|| read(&self.gate));
        Ok(self.tree.get(key.as_ref())?)
    }

    /// A record under `key` that [`Kv::get_as_stored`] read, unpacked as [`Kv::get`] reads
    /// it.
    pub(crate) fn unpacked(key: &[u8], stored: Bytes) -> Result<Bytes, StoreError> {
        read_back(key, stored)
    }

    /// The records whose keys are in `range`, in key order (from the last with
    /// [`Iterator::rev`]), each read as it is reached, and unpacked as [`Kv::get`] reads
    /// it.
    pub(crate) fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Range {
        self.reading(self.tree.range(range), true)
    }

    /// The records whose keys start with `prefix`, as [`Kv::range`] reads them.
    pub(crate) fn prefix(&self, prefix: impl AsRef<[u8]>) -> Range {
        self.reading(self.tree.scan_prefix(prefix), true)
    }

    /// Every record, as [`Kv::range`] reads them.
    pub(crate) fn all(&self) -> Range {
        self.reading(self.tree.iter(), true)
    }

    /// Every record as it is stored, packed where the store packed it: what sled holds.
    pub(crate) fn stored(&self) -> Range {
        self.reading(self.tree.iter(), false)
    }

    /// The records `iter` reads, each read waiting at the gate where this handle's do.
    fn reading(&self, iter: sled::Iter, unpack: bool) -> Range {
        Range {
            iter,
            unpack,
            gate: self.gated.then(|| Arc::clone(&self.gate)),
        }
    }

    /// Applies `commit`'s writes together: after a crash the store holds all or none.
    pub(crate) fn apply(&self, commit: Commit) -> Result<(), StoreError> {
        let _frozen = self.keep_before(commit.0.keys())?;
        Ok(self.tree.apply_batch(batch_of(commit.0))?)
    }

    /// Applies `commit`'s writes in key order, `step` of them together at a time: after a
    /// crash the store may hold any number of its steps ([`crate::load_steps`] makes the whole
    /// recoverable). sled keeps everything a batch replaces until the batch's end.
    pub(crate) fn apply_in_steps(&self, commit: Commit, step: usize) -> Result<(), StoreError> {
        let mut writes = commit.0.into_iter().peekable();
        while writes.peek().is_some() {
            let step: Vec<_> = writes.by_ref().take(step.max(1)).collect();
            let _frozen = self.keep_before(step.iter().map(|(key, _)| key))?;
            self.tree.apply_batch(batch_of(step))?;
        }
        Ok(())
    }

    /// Applies `commit`'s writes together for readers, a record at a time for sled: after a
    /// crash the store holds all of them or none. A sled batch holds sled's one lock over
    /// the store while it is applied, so that every read waits for it, a loader's folds'
    /// too (a fifth of the folding thread's time on the amending demo seasons:
    /// BENCHMARKS.md); here the gated reads wait as long, and the folds' read on
    /// ([`Kv::for_folds`]). The writes are first kept whole in one record
    /// ([`keys::BESIDE_READERS`]), which sled recovers before those after it, and removed
    /// last: [`Kv::open`] and the next catch-up write again those of a commit cut short by
    /// a crash or a failed write (after which sled fails every write, and the service stops
    /// for its supervisor to start it again: readers may meanwhile see part of it).
    pub(crate) fn apply_beside_readers(&self, commit: Commit) -> Result<(), StoreError> {
        let written = commit.0.keys().map(AsRef::as_ref);
        let _frozen = self.keep_before(written.chain([keys::BESIDE_READERS]))?;
        let _closed = self
            .gate
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.tree.insert(keys::BESIDE_READERS, commit.encoded())?;
        self.write_each(commit)
    }

    /// Writes again the writes of a commit that [`Kv::apply_beside_readers`] began and a
    /// crash or a failed write cut short, if there was one: they are the values it gave.
    pub(crate) fn finish_beside_readers(&self) -> Result<(), StoreError> {
        match self.tree.get(keys::BESIDE_READERS)? {
            Some(kept) => self.write_each(Commit::decoded(&kept)?),
            None => Ok(()),
        }
    }

    /// Writes `commit`'s writes one by one, then removes the record that kept them.
    fn write_each(&self, commit: Commit) -> Result<(), StoreError> {
        for (key, value) in commit.0 {
            match value {
                Some(value) => self.tree.insert(key, value)?,
                None => self.tree.remove(key)?,
            };
        }
        self.tree.remove(keys::BESIDE_READERS)?;
        Ok(())
    }

    /// Writes one record, alone, as it is given (a snapshot's records come as they were
    /// stored).
    pub(crate) fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        let _frozen = self.keep_before([key])?;
        self.tree.insert(key, value)?;
        Ok(())
    }

    /// A view of every record as the store stands now, read in key order a part at a
    /// time while writes go on: a write of a key the view has not read yet keeps the
    /// record it replaces for it. Writes wait only while the view reads a part. One view
    /// at a time; `None` while another is open.
    pub(crate) fn freeze(&self) -> Option<FrozenView> {
        let mut frozen = lock(&self.frozen);
        if frozen.is_some() {
            return None;
        }
        *frozen = Some(Frozen::default());
        Some(FrozenView {
            kv: self.clone(),
            done: false,
        })
    }

    /// Holds the writes' lock for a write of `keys`, having kept for a frozen view the
    /// records they replace that it has not read yet.
    fn keep_before<'k, K: AsRef<[u8]> + ?Sized + 'k>(
        &self,
        keys: impl IntoIterator<Item = &'k K>,
    ) -> Result<MutexGuard<'_, Option<Frozen>>, StoreError> {
        let mut guard = lock(&self.frozen);
        if let Some(frozen) = guard.as_mut() {
            for key in keys {
                let key = key.as_ref();
                let read = frozen.reached.as_ref().is_some_and(|r| key <= r.as_ref());
                if !read && !frozen.before.contains_key(key) {
                    frozen.before.insert(key.into(), self.tree.get(key)?);
                }
            }
        }
        Ok(guard)
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn read(gate: &RwLock<()>) -> RwLockReadGuard<'_, ()> {
    gate.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The records of a store as they stood when [`Kv::freeze`] made it, read a part at a
/// time, as they are stored (packed where the store packed them: a snapshot carries them
/// so); the view ends (and writes keep nothing more) when it is dropped.
pub(crate) struct FrozenView {
    kv: Kv,
    done: bool,
}

impl FrozenView {
    /// The record under `key` as it stood at the freeze; only before the first part is
    /// read (past it, what the view has read is no longer kept).
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<Bytes>, StoreError> {
        let guard = lock(&self.kv.frozen);
        let kept = guard.as_ref().and_then(|frozen| {
            debug_assert!(frozen.reached.is_none(), "read after a part");
            frozen.before.get(key).cloned()
        });
        match kept {
            Some(before) => Ok(before),
            None => self.kv.get_as_stored(key),
        }
    }

    /// The next records (up to `most` read from the tree, and any removed since the
    /// freeze among them), in key order; empty at the end.
    pub(crate) fn next_part(&mut self, most: usize) -> Result<Vec<Record>, StoreError> {
        // A part whose records were all written since the freeze holds nothing: read on.
        let mut part = Vec::new();
        while part.is_empty() && !self.done {
            part = self.read_part(most.max(1))?;
        }
        Ok(part)
    }

    fn read_part(&mut self, most: usize) -> Result<Vec<Record>, StoreError> {
        let mut guard = lock(&self.kv.frozen);
        let frozen = guard.get_or_insert_with(Frozen::default);
        let from = match &frozen.reached {
            Some(key) => Bound::Excluded(key.clone()),
            None => Bound::Unbounded,
        };
        let mut now = BTreeMap::new();
        for item in self.kv.tree.range::<Bytes, _>((from, Bound::Unbounded)) {
            let (key, value) = item?;
            now.insert(key, value);
            if now.len() >= most {
                break;
            }
        }
        // Up to the last key read, or to the end when the tree has no more.
        let full = now.len() >= most;
        let end = full.then(|| now.keys().next_back().cloned()).flatten();
        let kept: Vec<Bytes> = frozen
            .before
            .keys()
            .take_while(|key| end.as_ref().is_none_or(|end| *key <= end))
            .cloned()
            .collect();
        for key in kept {
            match frozen.before.remove(&key).flatten() {
                Some(value) => now.insert(key, value),
                None => now.remove(&key),
            };
        }
        match end {
            Some(end) => frozen.reached = Some(end),
            None => self.done = true,
        }
        Ok(now.into_iter().collect())
    }
}

impl Drop for FrozenView {
    fn drop(&mut self) {
        *lock(&self.kv.frozen) = None;
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

    /// Packs each record of a kind the store packs (`keys::KINDS`) where that makes it
    /// shorter: done where the commit is handed to sled, on the thread that writes it.
    pub(crate) fn pack(&mut self) {
        let mut kinds = InOrder::default();
        for (key, value) in &mut self.0 {
            let Some(stored) = value else { continue };
            let Some(dictionary) = kinds.packing(key) else {
                continue;
            };
            if compressed::is_frame(stored) {
                continue;
            }
            if let Some(packed) = compressed::packed(stored, dictionary) {
                *stored = packed.into();
            }
        }
    }

    /// The writes as one value ([`Commit::decoded`] reads it back): each its key as a part
    /// (`encoding.rs`), 1 then its value as a part, or 0 and an empty part for a removal.
    pub(crate) fn encoded(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (key, value) in self.iter() {
            put_part(&mut out, key);
            out.push(u8::from(value.is_some()));
            put_part(&mut out, value.unwrap_or_default());
        }
        out
    }

    /// The writes [`Commit::encoded`] made `rest` of.
    fn decoded(mut rest: &[u8]) -> Result<Commit, StoreError> {
        let cut = || StoreError::Corrupt("the record of a commit's writes is cut".into());
        let mut commit = Commit::default();
        while !rest.is_empty() {
            let key = part(&mut rest).ok_or_else(cut)?;
            let (&given, after) = rest.split_first().ok_or_else(cut)?;
            rest = after;
            let value = part(&mut rest).ok_or_else(cut)?;
            match given {
                0 => commit.remove(key),
                1 => commit.put(key, value),
                _ => return Err(cut()),
            }
        }
        Ok(commit)
    }

    /// The writes whose keys `first` picks, and the others.
    pub(crate) fn split(self, first: impl Fn(&[u8]) -> bool) -> (Commit, Commit) {
        let (picked, rest) = self.0.into_iter().partition(|(k, _)| first(k));
        (Commit(picked), Commit(rest))
    }
}

impl<'a> FromIterator<(&'a [u8], Option<&'a [u8]>)> for Commit {
    /// Writes in key order, each key once (a batch's): the map built at once, not searched.
    fn from_iter<W: IntoIterator<Item = (&'a [u8], Option<&'a [u8]>)>>(writes: W) -> Commit {
        let owned = |(k, v): (&[u8], Option<&[u8]>)| (Bytes::from(k), v.map(Bytes::from));
        Commit(writes.into_iter().map(owned).collect())
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

/// A stored record as it is read: unpacked where the store packed it.
fn read_back(key: &[u8], stored: Bytes) -> Result<Bytes, StoreError> {
    // The frame's first bytes are checked first: most records are not packed, and the
    // kind of a key is looked up only for those that look so.
    if !compressed::is_frame(&stored) {
        return Ok(stored);
    }
    match packing(key) {
        Some(dictionary) => Ok(compressed::unpack_with(&stored, dictionary)?
            .into_owned()
            .into()),
        None => Ok(stored),
    }
}

impl From<Damaged> for StoreError {
    fn from(Damaged(why): Damaged) -> StoreError {
        StoreError::Corrupt(format!("a packed value: {why}"))
    }
}

/// The records of a range of keys ([`Kv::range`]).
pub(crate) struct Range {
    iter: sled::Iter,
    /// Whether its records are read back as [`Kv::get`] reads them, or as stored.
    unpack: bool,
    /// The gate its reads wait at, where they do ([`Kv::for_folds`]).
    gate: Option<Arc<RwLock<()>>>,
}

impl Range {
    /// A record as the range reads it.
    fn read(&self, item: sled::Result<Record>) -> Result<Record, StoreError> {
        let (key, stored) = item?;
        if !self.unpack {
            return Ok((key, stored));
        }
        let value = read_back(&key, stored)?;
        Ok((key, value))
    }

    /// Their keys alone.
    pub(crate) fn keys(self) -> impl DoubleEndedIterator<Item = Result<Bytes, StoreError>> {
        self.map(|item| item.map(|(key, _)| key))
    }
}

impl Iterator for Range {
    type Item = Result<Record, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let open = self.gate.as_deref().map(read);
        let item = self.iter.next();
        drop(open);
        Some(self.read(item?))
    }
}

impl DoubleEndedIterator for Range {
    fn next_back(&mut self) -> Option<Self::Item> {
        let open = self.gate.as_deref().map(read);
        let item = self.iter.next_back();
        drop(open);
        Some(self.read(item?))
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
mod tests;

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// sled failed (disk full, I/O error). The batch did not commit; the caller should stop
    /// projecting and retry from the checkpoint, or report the store unusable.
    #[error("store: {0}")]
    Sled(#[from] Error),
    /// A record could not be decoded: the store is damaged or from an incompatible
    /// version. Rebuild the read models from the log.
    #[error("store record damaged: {0}")]
    Corrupt(String),
    /// The store was written by an older version of this crate, in an older layout (its
    /// schema version is given). Nothing is damaged: discard it and rebuild the read
    /// models from the log.
    #[error("read models of schema {0}, older than this version's")]
    OlderSchema(u32),
    /// A read ran past the deadline of its store ([`Store::until`]) and stopped. Nothing
    /// is wrong: the caller should answer that it is busy, or ask for less.
    #[error("the read ran past its deadline")]
    TooLong,
}

impl StoreError {
    /// The error of a write that failed on I/O (a file of the store gone, the disk full),
    /// as the engine reports one.
    pub fn io(error: std::io::Error) -> StoreError {
        StoreError::Sled(Error::Io(error))
    }

    /// Whether the store could not be opened because another process holds it open: sled
    /// locks a store's files for the process that opens it. Not damage: the store is
    /// that process's, and nothing may move it or write to it.
    pub fn is_held_elsewhere(&self) -> bool {
        matches!(self, StoreError::Sled(e) if held_elsewhere(e))
    }

    /// Whether sled failed to read or write the store's files (a full disk, an I/O
    /// error): sled 0.34 then fails every later write of the store, until it is opened
    /// again.
    pub fn is_io(&self) -> bool {
        matches!(self, StoreError::Sled(e) if is_io(e))
    }

    /// Whether the store itself is damaged rather than its disk failing: a file of it is
    /// missing (a blob that a page points at: sled opens such a store, and fails only on
    /// the records concerned), or sled found a page corrupt, or a record does not decode.
    /// A rebuild from the log mends it; opening it again would not.
    pub fn is_damage(&self) -> bool {
        match self {
            StoreError::Sled(e) => is_damage(e),
            StoreError::Corrupt(_) => true,
            _ => false,
        }
    }
}
