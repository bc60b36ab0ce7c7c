//! The read models in use, and where they live on disk. Every reader (handlers, live
//! sessions, the admin listener) and the projector go through [`ReadModels`], so that a
//! rebuild (`racing rebuild`) can build a fresh store beside the one in use and swap it in
//! at once, while the API keeps answering from the old one until then.
//!
//! On disk, `DATA_DIR/read-models.active` names the directory in use (`read-models` until
//! the first rebuild, then `read-models.gen-<unix ms>`); it is replaced atomically after a
//! rebuilt store is flushed and before it is swapped in. A directory of another
//! generation left by a crash is removed at start-up.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use arc_swap::ArcSwap;
use racing_projections::{
    changes_analyses, list_key, record_key, Doc, DocKey, Reader, Role, Span, Store, StoreError,
    Subject,
};
use tokio_util::sync::CancellationToken;

use crate::supervise::lock;

/// The file naming the directory in use.
const POINTER: &str = "read-models.active";
/// The directory in use before any rebuild.
const FIRST: &str = "read-models";
/// The prefix of rebuilt directories.
const GENERATION: &str = "read-models.gen-";
/// A file left in a store's directory once the store is found damaged: a start that finds
/// it in a store no longer in use (the service stopped before the rebuilt store's swap
/// moved it aside) moves that store aside rather than removing it.
const DAMAGED_MARK: &str = "DAMAGED";
/// How often [`ReadModels::close`] looks whether the other handles of a store have gone.
const CLOSE_POLL: Duration = Duration::from_millis(100);
/// How long an open waits for a store's files that another holds: the service before
/// this one, still stopping in a restart, or in this process sled's threads of a store
/// just dropped (they let go of its files a moment after).
pub const LET_GO_PATIENCE: Duration = Duration::from_secs(10);

/// The store in use, swapped whole by a rebuild.
pub struct ReadModels {
    current: ArcSwap<Store>,
    /// Held by the projector from the start of a batch to its commit, and by a rebuild
    /// from the moment it catches up with the projector until its store is swapped in:
    /// no batch is ever committed to a store that is being replaced.
    commit: tokio::sync::Mutex<()>,
    data_dir: PathBuf,
    docs: DocCache,
    /// Records by condition answered lately (`/analysis`), by path and query: worked out
    /// when read, from many records, and forgotten whole when a commit changes a form.
    analyses: DocCache,
    /// Answers as of a point of the log given lately ([`ReadModels::as_of`]): rendered
    /// when read, from the versions then in force, and never changed by a commit; forgotten
    /// when another store is swapped in. At most `RACING_AS_OF_CACHE_MIB`.
    answered_as_of: DocCache,
    /// The keys of the documents read from the store lately: what a rebuilt store is
    /// warmed with before it is swapped in.
    read_lately: Mutex<ReadLately>,
    /// Why the projector cannot write the store now, if it cannot.
    cannot_write: Mutex<Option<String>>,
    /// The address of the store in use when it was found damaged: a rebuild is replacing
    /// it, and its I/O errors wait for the swap rather than stop the service.
    damaged: Mutex<Option<usize>>,
    /// The checkpoint of the store in use, told after each commit once the documents it
    /// changed are forgotten: what a read that must see a position (`min_seq`, an
    /// `as_of` past the checkpoint) waits on, without a thread held.
    applied: tokio::sync::watch::Sender<u64>,
}

impl ReadModels {
    /// Shares `store`, which lives in `data_dir`, keeping at most `as_of_bytes` of answers
    /// as of a point of the log in memory.
    pub fn new(store: Store, data_dir: &Path, as_of_bytes: usize) -> Arc<ReadModels> {
        let checkpoint = store.checkpoint().unwrap_or_default();
        Arc::new(ReadModels {
            current: ArcSwap::from_pointee(store),
            commit: tokio::sync::Mutex::new(()),
            data_dir: data_dir.to_owned(),
            docs: DocCache::default(),
            analyses: DocCache::default(),
            answered_as_of: DocCache::holding(as_of_bytes),
            read_lately: Mutex::default(),
            cannot_write: Mutex::default(),
            damaged: Mutex::default(),
            applied: tokio::sync::watch::Sender::new(checkpoint),
        })
    }

    /// Tells the readers waiting for a position that the store in use holds the log up
    /// to `checkpoint`: called after each commit, once [`ReadModels::forget`] has dropped
    /// the documents it changed, so that a reader it wakes reads none of them stale.
    pub fn applied_up_to(&self, checkpoint: u64) {
        self.applied.send_if_modified(|known| {
            let later = checkpoint > *known;
            if later {
                *known = checkpoint;
            }
            later
        });
    }

    /// The checkpoint last told by [`ReadModels::applied_up_to`]: every document of the
    /// log up to it is served.
    pub fn applied(&self) -> u64 {
        *self.applied.borrow()
    }

    /// Waits until the store in use holds the log up to `seq`, for at most `limit`:
    /// `Ok(())` once it does, else the checkpoint it holds. The wait is a watch's, woken
    /// by each commit; it holds no thread.
    pub async fn wait_applied(&self, seq: u64, limit: Duration) -> Result<(), u64> {
        let mut applied = self.applied.subscribe();
        let reached = tokio::time::timeout(limit, async {
            applied.wait_for(|c| *c >= seq).await.is_ok()
        })
        .await;
        match reached {
            Ok(true) => Ok(()),
            // The sender lives as long as `self`; a timeout reports where it stands.
            _ => Err(self.applied()),
        }
    }

    /// The address [`ReadModels::mark_damaged`] knows `store` by (no handle is kept).
    pub fn address(store: &Arc<Store>) -> usize {
        Arc::as_ptr(store) as usize
    }

    /// Records that the store at `address` ([`ReadModels::address`]) was found damaged
    /// and a rebuild is replacing it.
    pub fn mark_damaged(&self, address: usize) {
        *lock(&self.damaged) = Some(address);
        let marked = active_dir(&self.data_dir)
            .and_then(|dir| Ok(std::fs::write(dir.join(DAMAGED_MARK), b"damaged\n")?));
        if let Err(e) = marked {
            tracing::warn!(error = format!("{e:#}"), "marking the damaged read models");
        }
    }

    /// Whether the store in use is one found damaged, which a rebuild is replacing.
    pub fn in_repair(&self) -> bool {
        let current = ReadModels::address(&self.current.load());
        lock(&self.damaged).is_some_and(|damaged| damaged == current)
    }

    /// The reads of the store in use, and none of its writes: what the readers (handlers,
    /// live sessions, the webhooks' scanner) hold. Only the writers (the projector, a
    /// rebuild, the snapshots) [`ReadModels::load`] the store itself.
    pub fn reader(&self) -> Reader {
        Reader::of(&self.current.load())
    }

    /// The store in use now, for its writers; hold it for one request or one batch, not
    /// longer.
    pub fn load(&self) -> arc_swap::Guard<Arc<Store>> {
        self.current.load()
    }

    /// The store in use now, for its writers, to keep across an `.await`.
    pub fn load_full(&self) -> Arc<Store> {
        self.current.load_full()
    }

    /// A document of the read models in use, from memory when it was read before and has
    /// not changed since.
    pub fn doc(&self, key: DocKey<'_>) -> Result<Option<Doc>, StoreError> {
        self.cached(key.key(), |store, key| store.doc_by_key(key))
    }

    /// The record of a jockey or trainer, from memory as [`ReadModels::doc`]'s documents
    /// are: it is assembled from tens of records when read from the store.
    pub fn person(&self, role: Role, id: &str) -> Result<Option<Doc>, StoreError> {
        self.cached(record_key(role, id), |store, _| store.person(role, id))
    }

    /// The list of every jockey (or trainer), from memory as [`ReadModels::doc`]'s
    /// documents are: it is assembled from a row a person when read from the store.
    pub fn people(&self, role: Role) -> Result<Option<Doc>, StoreError> {
        self.cached(list_key(role), |store, _| store.people(role))
    }

    /// The records asked for under `key` (what names the question), where they are held in
    /// memory: asked for before, and no form changed since.
    pub fn remembered_analysis(&self, key: &str) -> Option<Doc> {
        self.analyses.get(key.as_bytes())
    }

    /// The records of `subject` over `span` as they are, from memory when they were
    /// asked for before (under `key`, what names the question) and no form changed since;
    /// read from the store in use otherwise, stopped at `until`.
    pub fn analysis(
        &self,
        key: &str,
        subject: Subject<'_>,
        span: Span<'_>,
        until: std::time::Instant,
    ) -> Result<Option<Doc>, StoreError> {
        if let Some(doc) = self.analyses.get(key.as_bytes()) {
            return Ok(Some(doc));
        }
        let seen = self.analyses.version();
        let doc = self.load().until(until).analysis(subject, span, None)?;
        if let Some(doc) = &doc {
            self.analyses.offer(key.as_bytes().to_vec(), doc, seen);
        }
        Ok(doc)
    }

    /// The answer to `question` as of the point `seq` of the log (a document's key, or
    /// what names records by condition): from memory where it was given lately, since a
    /// later event changes nothing of what was so at `seq`; else `read` from the store in
    /// use (`None`: none, which is not kept) and kept, unless another store was swapped in
    /// meanwhile. `read` checks that the store holds `seq`.
    pub fn as_of<E>(
        &self,
        seq: u64,
        question: &[u8],
        read: impl FnOnce(Reader) -> Result<Option<Doc>, E>,
    ) -> Result<Option<Doc>, E> {
        let key = [&seq.to_be_bytes()[..], question].concat();
        if let Some(doc) = self.answered_as_of.get(&key) {
            return Ok(Some(doc));
        }
        let seen = self.answered_as_of.version();
        let doc = read(self.reader())?;
        if let Some(doc) = &doc {
            self.answered_as_of.offer(key, doc, seen);
        }
        Ok(doc)
    }

    /// The document under `key`: from memory, or read from the store in use by `read`
    /// and kept for the next reads, unless a commit came between.
    fn cached(
        &self,
        key: Vec<u8>,
        read: impl FnOnce(&Store, &[u8]) -> Result<Option<Doc>, StoreError>,
    ) -> Result<Option<Doc>, StoreError> {
        if let Some(doc) = self.docs.get(&key) {
            return Ok(Some(doc));
        }
        let seen = self.docs.version();
        let doc = read(&self.load(), &key)?;
        if let Some(doc) = &doc {
            lock(&self.read_lately).note(&key);
            self.docs.offer(key, doc, seen);
        }
        Ok(doc)
    }

    /// The keys of the documents read lately, those held in memory first: the documents
    /// a rebuilt store should have in its cache when it is swapped in, since the swap
    /// empties the cache of documents and every read goes to the new store.
    pub fn read_lately(&self) -> Vec<Vec<u8>> {
        let mut keys = self.docs.keys();
        let cached: HashSet<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let more: Vec<Vec<u8>> = lock(&self.read_lately)
            .keys()
            .filter(|k| !cached.contains(k.as_slice()))
            .cloned()
            .collect();
        keys.extend(more);
        keys
    }

    /// Forgets the documents a commit to the store in use changed (their keys, given
    /// after the commit and before anything is told of it).
    pub fn forget(&self, changed: &[Vec<u8>]) {
        self.docs.forget(changed);
        if changed.iter().any(|k| changes_analyses(k)) {
            self.analyses.forget_all();
        }
    }

    /// Waits until no batch or swap is under way, and keeps it so until dropped.
    pub async fn lock_commits(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.commit.lock().await
    }

    /// Closes `store`, which is not the one in use (a store a rebuild replaced, or a
    /// failed rebuild's): once no other handle of it is left (waiting up to `patience`, or
    /// until `stop`), flushes it and drops its last handle, both while holding the commit
    /// lock. Returns whether it closed; if not, a handle is still held elsewhere, and the
    /// store's directory must be left alone (sled writes into it as that handle drops).
    ///
    /// Why under the lock: sled flushes a store as its last handle drops, holding sled
    /// 0.34's process-wide lock for reading while it waits for its own flusher thread; a
    /// projector commit queued for that lock meanwhile holds the flusher out, and the
    /// process deadlocks (two test runs hung so). With the projector held, nothing in the
    /// process queues for it. A store left to another handle is still flushed here, so
    /// that its drop has little to write.
    pub async fn close(
        &self,
        store: Arc<Store>,
        patience: Duration,
        stop: &CancellationToken,
    ) -> bool {
        let others = |s: &Arc<Store>| Arc::strong_count(s) > 1 || s.handles() > 1;
        let deadline = tokio::time::Instant::now() + patience;
        while others(&store) && !stop.is_cancelled() && tokio::time::Instant::now() < deadline {
            tokio::select! {
                () = tokio::time::sleep(CLOSE_POLL) => {}
                () = stop.cancelled() => {}
            }
        }
        let _held = self.lock_commits().await;
        if let Err(e) = store.flush().await {
            tracing::warn!(error = %e, "flushing read models no longer in use");
        }
        if others(&store) {
            return false;
        }
        // On a blocking thread: the drop joins sled's threads and may write.
        let _ = tokio::task::spawn_blocking(move || drop(store)).await;
        true
    }

    /// Why the projector cannot write the read models now (a full disk), for readiness;
    /// `None` while it can.
    pub fn cannot_write(&self) -> Option<String> {
        lock(&self.cannot_write).clone()
    }

    /// Records why the projector cannot write the read models, or (`None`) that it can
    /// again; returns what was recorded before.
    pub fn set_cannot_write(&self, problem: Option<String>) -> Option<String> {
        std::mem::replace(&mut *lock(&self.cannot_write), problem)
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Makes `store`, in `dir` under the data directory, the one in use: records it in
    /// the pointer file, then swaps it in. The caller holds [`ReadModels::lock_commits`]
    /// and has flushed `store`. Returns the store it replaces, and its directory.
    pub fn swap(&self, store: Store, dir: &Path) -> anyhow::Result<(Arc<Store>, PathBuf)> {
        *lock(&self.damaged) = None;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|_| dir.parent() == Some(self.data_dir.as_path()))
            .with_context(|| format!("{} is not in the data directory", dir.display()))?;
        let old_dir = active_dir(&self.data_dir)?;
        write_pointer(&self.data_dir, name)?;
        let checkpoint = store.checkpoint().unwrap_or_default();
        let old = self.current.swap(Arc::new(store));
        self.docs.forget_all();
        self.analyses.forget_all();
        self.answered_as_of.forget_all();
        self.applied_up_to(checkpoint);
        Ok((old, old_dir))
    }
}

/// The documents the API read recently, so that a hot document is answered from memory
/// rather than a B-tree look-up (the bare server the benchmark compares with answers from
/// a `HashMap`; a sled read was a large share of the service's CPU serving one document).
///
/// Nothing stale is ever served: a commit bumps the version, then removes the documents
/// it changed. A miss reads the version before it reads the store and keeps the document
/// only if no commit came between, checked under the same shard lock as the removal: so
/// either the removal follows the insert (and removes it) or the version check refuses
/// it. A rebuild's swap clears everything. Bounded: a shard that grows past its share of
/// the cache's bytes ([`DOC_CACHE_BYTES`] unless told otherwise) is emptied, and a
/// document larger than that share is not kept.
struct DocCache<D = Doc> {
    version: AtomicU64,
    shards: [RwLock<Shard<D>>; DOC_CACHE_SHARDS],
    /// Chooses a key's shard; each shard's map has its own. Fast rather than SipHash:
    /// the keys are the documents' own, found in the store (with, for an answer as of a
    /// point, the position a client chose), and the hashers are seeded at random.
    hasher: foldhash::fast::RandomState,
    /// Most bytes of keys and documents a shard holds.
    shard_bytes: usize,
}

struct Shard<D> {
    docs: HashMap<Vec<u8>, D, foldhash::fast::RandomState>,
    bytes: usize,
}

impl<D> Default for DocCache<D> {
    fn default() -> Self {
        DocCache::holding(DOC_CACHE_BYTES)
    }
}

impl<D> DocCache<D> {
    /// A cache of at most `bytes` of keys and documents (0: none kept).
    fn holding(bytes: usize) -> Self {
        DocCache {
            version: AtomicU64::new(0),
            shards: std::array::from_fn(|_| {
                RwLock::new(Shard {
                    docs: HashMap::default(),
                    bytes: 0,
                })
            }),
            hasher: foldhash::fast::RandomState::default(),
            shard_bytes: bytes / DOC_CACHE_SHARDS,
        }
    }
}

/// Shards of the document cache, so that readers of different documents rarely meet.
const DOC_CACHE_SHARDS: usize = 16;
/// Most bytes of documents kept in memory.
pub const DOC_CACHE_BYTES: usize = 64 * 1024 * 1024;
/// Most bytes of answers as of a point of the log kept in memory, unless told otherwise
/// (`RACING_AS_OF_CACHE_MIB`).
pub const AS_OF_CACHE_BYTES: usize = 64 * 1024 * 1024;

impl<D: Clone + std::ops::Deref<Target = [u8]>> DocCache<D> {
    fn shard(&self, key: &[u8]) -> &RwLock<Shard<D>> {
        let i = (self.hasher.hash_one(key) as usize) % DOC_CACHE_SHARDS;
        &self.shards[i]
    }

    fn get(&self, key: &[u8]) -> Option<D> {
        let shard = self.shard(key).read().unwrap_or_else(|p| p.into_inner());
        shard.docs.get(key).cloned()
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn keys(&self) -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        for shard in &self.shards {
            let shard = shard.read().unwrap_or_else(|p| p.into_inner());
            keys.extend(shard.docs.keys().cloned());
        }
        keys
    }

    fn offer(&self, key: Vec<u8>, doc: &D, seen: u64) {
        let size = key.len() + doc.len();
        let mut shard = self.shard(&key).write().unwrap_or_else(|p| p.into_inner());
        if self.version() != seen || size > self.shard_bytes {
            return;
        }
        if shard.bytes + size > self.shard_bytes {
            shard.docs.clear();
            shard.bytes = 0;
        }
        if let Some(old) = shard.docs.insert(key, doc.clone()) {
            shard.bytes -= size - doc.len() + old.len();
        }
        shard.bytes += size;
    }

    fn forget(&self, changed: &[Vec<u8>]) {
        self.version.fetch_add(1, Ordering::AcqRel);
        for key in changed {
            let mut shard = self.shard(key).write().unwrap_or_else(|p| p.into_inner());
            if let Some(old) = shard.docs.remove(key.as_slice()) {
                shard.bytes -= key.len() + old.len();
            }
        }
    }

    fn forget_all(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
        for shard in &self.shards {
            let mut shard = shard.write().unwrap_or_else(|p| p.into_inner());
            shard.docs.clear();
            shard.bytes = 0;
        }
    }
}

/// Most keys [`ReadLately`] keeps.
const READ_LATELY_KEYS: usize = 65_536;

/// The keys of the documents read from the store (missed by [`DocCache`]) lately, each
/// with when it was last: bounded by [`READ_LATELY_KEYS`], the older half dropped when
/// full. The documents read most are in [`DocCache`] and seldom miss it; a read that
/// misses already reads sled, and this costs it a lock and a key's copy besides.
#[derive(Default)]
struct ReadLately {
    reads: u64,
    keys: HashMap<Vec<u8>, u64>,
}

impl ReadLately {
    fn note(&mut self, key: &[u8]) {
        self.reads += 1;
        if let Some(last) = self.keys.get_mut(key) {
            *last = self.reads;
            return;
        }
        if self.keys.len() >= READ_LATELY_KEYS {
            let mut lasts: Vec<u64> = self.keys.values().copied().collect();
            let middle = lasts.len() / 2;
            let (_, &mut oldest_kept, _) = lasts.select_nth_unstable(middle);
            self.keys.retain(|_, last| *last >= oldest_kept);
        }
        self.keys.insert(key.to_vec(), self.reads);
    }

    fn keys(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.keys.keys()
    }
}

/// The directory of the store in use under `data_dir`: the one the pointer file names, or
/// `read-models`.
pub fn active_dir(data_dir: &Path) -> anyhow::Result<PathBuf> {
    let pointer = data_dir.join(POINTER);
    let name = match std::fs::read_to_string(&pointer) {
        Ok(text) => text.trim().to_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(data_dir.join(FIRST)),
        Err(e) => return Err(e).with_context(|| format!("reading {}", pointer.display())),
    };
    if !is_store_name(&name) {
        anyhow::bail!(
            "{} names {name:?}, not a read-models directory",
            pointer.display()
        );
    }
    Ok(data_dir.join(name))
}

/// A fresh directory for a rebuilt store under `data_dir`.
pub fn new_generation(data_dir: &Path) -> PathBuf {
    let ms = jiff::Timestamp::now().as_millisecond();
    data_dir.join(format!("{GENERATION}{ms}"))
}

/// Makes the store in `dir` (under `data_dir`) the one a start opens, before any
/// [`ReadModels`] is made: a store loaded from a snapshot at start-up.
pub fn make_active(data_dir: &Path, dir: &Path) -> anyhow::Result<()> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|name| dir.parent() == Some(data_dir) && is_store_name(name))
        .with_context(|| format!("{} is not a store of {}", dir.display(), data_dir.display()))?;
    write_pointer(data_dir, name)
}

/// Where a damaged store of `data_dir` is moved aside for inspection, now.
pub fn damaged_aside(data_dir: &Path) -> PathBuf {
    data_dir.join(format!(
        "read-models.damaged-{}",
        jiff::Timestamp::now().as_second()
    ))
}

/// Removes the store directories under `data_dir` other than `active`: a rebuild that a
/// crash interrupted, or the store a finished rebuild replaced. Damaged stores are kept
/// for inspection: those moved aside already (`read-models.damaged-*`), and one marked
/// damaged that a stop left where it was, which is moved aside now.
pub fn remove_stale(data_dir: &Path, active: &Path) {
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if path != active && is_store_name(name) && path.is_dir() {
            if path.join(DAMAGED_MARK).exists() {
                let aside = damaged_aside(data_dir);
                match std::fs::rename(&path, &aside) {
                    Ok(()) => tracing::warn!(
                        moved_to = %aside.display(),
                        "damaged read models replaced before the last stop, moved aside now"
                    ),
                    Err(e) => tracing::warn!(
                        store = %path.display(),
                        error = %e,
                        "moving damaged read models aside"
                    ),
                }
                continue;
            }
            match std::fs::remove_dir_all(&path) {
                Ok(()) => tracing::info!(store = %path.display(), "removed a stale store"),
                Err(e) => {
                    tracing::warn!(store = %path.display(), error = %e, "removing a stale store");
                }
            }
        }
    }
}

fn is_store_name(name: &str) -> bool {
    name == FIRST
        || name
            .strip_prefix(GENERATION)
            .is_some_and(|ms| !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()))
}

/// Replaces the pointer file atomically: a new file, synced, renamed over the old one,
/// and the directory synced, so that a crash leaves the old name or the new, never none.
fn write_pointer(data_dir: &Path, name: &str) -> anyhow::Result<()> {
    let pointer = data_dir.join(POINTER);
    let temporary = data_dir.join(format!("{POINTER}.tmp"));
    let mut file = std::fs::File::create(&temporary)
        .with_context(|| format!("creating {}", temporary.display()))?;
    writeln!(file, "{name}")?;
    file.sync_all()?;
    std::fs::rename(&temporary, &pointer)
        .with_context(|| format!("replacing {}", pointer.display()))?;
    std::fs::File::open(data_dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests;
