//! A replay as a bulk load: a batch folds while the one before it is written, over a copy
//! in memory of what the load wrote that the folds will read.
//!
//! sled 0.34 holds a process-wide lock while it writes a batch, and every read waits for
//! it: a fold that read the tree while the batch before it was written would wait for
//! that write, and nothing would overlap. From an empty store (a first start), every
//! record a fold reads is one the load wrote, so the loader holds what it writes, and a
//! record it does not hold is known not to exist. Folding and rendering take one core,
//! sled's writes another.
//!
//! It holds only what the folds will read again (`loader_cache.rs`): the records of the race
//! days the log is at, and those of horses, people and names. A day's records are let go
//! once the log has moved past it, so what is held follows the days being replayed, not
//! the length of the log, and the folds read nothing back from the tree but a settled day
//! that an event goes back to. Past a budget, it lets go of the rest too, and from then on
//! the folds read what they lack from the tree (waiting for the step of the write in
//! progress, a few thousand records: `load_steps.rs`).
//!
//! A catch-up while the API answers folds the same way ([`Loader::beside_reads`]), but
//! writes each batch whole for readers, so that no reader sees part of one, and holds only
//! the batch being written: the store is not empty, and the batches' own cache of what
//! they read (`read_cache.rs`) answers most of what the folds read again. Folding takes
//! one core there too while the batch before is written, a record at a time for sled
//! (`Kv::apply_beside_readers`), so that the folds' reads of the tree do not wait for it
//! as they would for a sled batch.
//!
//! A load in steps is a first start's replay, while the API answers 503 and nothing else
//! needs the machine (or a rebuild's, in a process of its own at the idle priority). Its
//! fold's one thread bounds it, so its writer gives way to that thread
//! ([`WRITER_IN_STEPS_NICE`]). At the same priority, on two cores, the fold's thread was
//! runnable all the time but ran seven eighths of it: where the writer, the decoder and
//! nats-server had work at once, the kernel gave the fold its fair share of a core, and
//! at other times the second core sat idle (more than a quarter of the time). At the
//! lowest priority the writer's work waits for those times.

use std::cell::Cell;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::batch::Batch;
use crate::batch::{BatchStats, Sealed};
use crate::kv::StoreError;
use crate::loader_cache::Held;
use crate::store::Store;

/// Folds batches into a store while the batch before each is written on a thread of its
/// own, one write at a time, each atomic with its checkpoint as a commit is (written in
/// steps, `load_steps.rs`, or whole beside readers).
pub struct Loader {
    store: Store,
    /// How it writes a batch.
    way: Way,
    held: Held,
    /// The checkpoint of the last batch sealed.
    checkpoint: u64,
    /// Most bytes held ([`Held`]).
    budget: usize,
    /// The writer: one thread for the whole load (`None` once stopped).
    writer: Option<Writer>,
    /// Whether a write is in progress, not yet answered ([`Loader::wait`],
    /// [`Loader::written_yet`]).
    writing: Cell<bool>,
    /// Whether a write failed.
    failed: Cell<bool>,
}

/// How a [`Loader`] writes each batch, and the applied ids' upkeep after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// In steps through a redo file (`load_steps.rs`), with a batch's upkeep: nobody
    /// reads the store meanwhile.
    InSteps,
    /// Atomic for readers and after a crash, as a commit is, with a prompt batch's upkeep:
    /// readers of the store see each batch whole or not at all, and wait for no long step;
    /// the folds do not wait for it.
    Whole,
}

/// The nice value the writer of a load in steps lowers its thread to (Linux, where each
/// thread has its own): the lowest priority, so that it takes a core that the fold's
/// thread could have only when nothing else asks for it. It writes a batch while the next
/// one folds, in about half the time, and the fold waits for it at each batch's hand-over
/// ([`Loader::write`]) if it has not ended. A catch-up beside readers keeps the writer at
/// the projector's priority: it gives way to requests by pacing ([`Loader::beside_reads`]).
pub(crate) const WRITER_IN_STEPS_NICE: i32 = 19;

/// A batch written: what it did, and how long its write took (how long readers of the
/// store may have waited for it, written whole).
#[derive(Debug, Clone, Copy)]
pub struct Written {
    /// What the batch did; its checkpoint.
    pub stats: BatchStats,
    /// How long its write took.
    pub took: Duration,
}

/// The writer's thread and its two ends.
struct Writer {
    /// A sealed batch, and how many records the folds wrote in it.
    to_write: std::sync::mpsc::SyncSender<(Sealed, usize)>,
    written: std::sync::mpsc::Receiver<Result<Written, StoreError>>,
    thread: JoinHandle<()>,
}

/// Writes `sealed` the loader's `way`: the writer thread's work. Never inlined, so that
/// `scripts/fold-count` finds the writer by this name (callgrind turns counting on and off
/// at each function whose name starts as a name it is given).
#[inline(never)]
fn write_sealed(way: Way, sealed: Sealed) -> Result<BatchStats, StoreError> {
    match way {
        Way::InSteps => sealed.write_in_steps(),
        Way::Whole => sealed.write_beside_readers(),
    }
}

impl Writer {
    fn start(way: Way) -> Result<Writer, StoreError> {
        let (to_write, sealed) = std::sync::mpsc::sync_channel::<(Sealed, usize)>(1);
        let (done, written) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("racing-load".into())
            .spawn(move || {
                if way == Way::InSteps {
                    give_way_to_the_fold();
                }
                for (sealed, records) in sealed {
                    let store = sealed.store().clone();
                    let began = Instant::now();
                    let written = write_sealed(way, sealed);
                    let took = began.elapsed();
                    free_what_sled_replaced(records);
                    let written = written.and_then(|stats| {
                        // The applied ids' upkeep a batch of the store does before it starts.
                        match way {
                            Way::InSteps => store.upkeep()?,
                            Way::Whole => store.prompt_upkeep()?,
                        }
                        Ok(Written { stats, took })
                    });
                    if done.send(written).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| StoreError::Sled(e.into()))?;
        Ok(Writer {
            to_write,
            written,
            thread,
        })
    }
}

/// Lowers the calling thread to [`WRITER_IN_STEPS_NICE`]. Raising a nice value never
/// needs a privilege, so it does not fail but where the kernel lacks the call; then the
/// writer keeps its priority, as elsewhere than on Linux.
fn give_way_to_the_fold() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::setpriority_process(None, WRITER_IN_STEPS_NICE);
}

/// Frees what sled's write of `records` replaced in memory: the pages each insert made
/// anew. sled frees a replaced page only once no thread may still read it (epoch-based
/// reclamation, crossbeam-epoch), a few bags of them each time some thread pins an epoch
/// 128 times or flushes ([`crate::kv::free_replaced`]). A commit's fold reads the tree and
/// so pins often; a load's folds read what the loader holds and pin almost never, and the
/// pages replaced piled up: on the bench log, the load's peak resident memory was many
/// times the records it held, and this cut it by more than half. Each flush frees up to 8
/// bags of 64 deferred frees, so a flush for every 8 records leaves room for many pages
/// replaced a record; fixed counts of 4,096 and 65,536 flushes a batch gave the same peak.
fn free_what_sled_replaced(records: usize) {
    for _ in 0..records / 8 + 64 {
        crate::kv::free_replaced();
    }
}

impl Loader {
    /// A loader of `store` holding up to about `budget` bytes of records in memory. On a
    /// store that is not empty, it holds only the batch being written, and folds read the
    /// rest from the tree.
    pub fn new(store: &Store, budget: usize) -> Result<Loader, StoreError> {
        // A batch of a load before it that a failed write left in part is whole first.
        crate::load_steps::finish(&store.kv, store.dir())?;
        let checkpoint = store.checkpoint()?;
        let whole = checkpoint == 0 && store.holds_nothing_folded()?;
        Loader::start(store, Way::InSteps, Held::new(whole), budget)
    }

    /// A loader of `store` while the API answers from it (a catch-up of a backlog): each
    /// batch written whole for readers (`Kv::apply_beside_readers`; one that a failed write
    /// left in part finished first), and only the batch being written held; the folds read
    /// the rest from the tree.
    pub fn beside_reads(store: &Store) -> Result<Loader, StoreError> {
        crate::load_steps::finish(&store.kv, store.dir())?;
        store.kv.finish_beside_readers()?;
        Loader::start(store, Way::Whole, Held::new(false), 0)
    }

    fn start(store: &Store, way: Way, held: Held, budget: usize) -> Result<Loader, StoreError> {
        Ok(Loader {
            store: store.clone(),
            way,
            held,
            checkpoint: store.checkpoint()?,
            budget,
            writer: Some(Writer::start(way)?),
            writing: Cell::new(false),
            failed: Cell::new(false),
        })
    }

    /// A batch from the last one sealed, reading what the loader holds before the tree.
    pub fn batch(&self) -> Batch<'_> {
        Batch::new(&self.store, self.checkpoint, Some(&self.held))
    }

    /// Waits for the write in progress, then has the writer write `sealed`, holding
    /// `writes` (its records) meanwhile. Returns what the write waited for did, if there
    /// was one.
    pub fn write(&mut self, sealed: Sealed) -> Result<Option<Written>, StoreError> {
        let done = self.wait()?;
        self.checkpoint = sealed.stats().checkpoint;
        let writes = Arc::clone(&sealed.writes);
        let records = writes.len();
        self.held.add(writes, sealed.ids(), self.budget);
        let writer = self.writer.as_ref().ok_or_else(writer_gone)?;
        writer
            .to_write
            .send((sealed, records))
            .map_err(|_| writer_gone())?;
        self.writing.set(true);
        Ok(done)
    }

    /// Waits for the write in progress, if there is one not yet answered, and returns what
    /// it did.
    pub fn wait(&mut self) -> Result<Option<Written>, StoreError> {
        let written = match self.writing.take() {
            true => {
                let writer = self.writer.as_ref().ok_or_else(writer_gone)?;
                Some(self.noted(writer.written.recv().ok()))
            }
            false => None,
        };
        self.held.writing_ids.clear();
        written.transpose()
    }

    /// What the write in progress did, where it is done, without waiting for it (nor
    /// letting go of what it held: the next [`Loader::write`] does): for a catch-up beside
    /// readers to follow a write up (the documents' caches told, the progress published)
    /// between the messages of the next batch's fold, not once that batch is sealed.
    /// `None` while it goes on, or where none is in progress or it was answered.
    pub fn written_yet(&self) -> Option<Result<Written, StoreError>> {
        if !self.writing.get() {
            return None;
        }
        let answer = match self.writer.as_ref()?.written.try_recv() {
            Ok(written) => Some(written),
            Err(std::sync::mpsc::TryRecvError::Empty) => return None,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
        };
        self.writing.set(false);
        Some(self.noted(answer))
    }

    /// The writer's answer (`None`: it is gone), a failure noted.
    fn noted(&self, answer: Option<Result<Written, StoreError>>) -> Result<Written, StoreError> {
        let written = answer.unwrap_or_else(|| Err(writer_gone()));
        self.failed.set(self.failed.get() | written.is_err());
        written
    }

    /// Waits for the write in progress, then ends the load's steps ([`crate::load_steps`]):
    /// after it, the store may be written otherwise. Returns what the write waited for
    /// did, if there was one.
    pub fn finish(&mut self) -> Result<Option<Written>, StoreError> {
        let done = self.wait()?;
        // A write that failed may have left its batch in part: the marker stays, for the
        // next batch or opening of the store to finish it.
        if !self.failed.get() && self.way == Way::InSteps {
            crate::load_steps::end(&self.store.kv, self.store.dir())?;
        }
        Ok(done)
    }

    /// The checkpoint of the last batch handed to [`Loader::write`]: the store's once that
    /// write is done.
    pub fn checkpoint(&self) -> u64 {
        self.checkpoint
    }

    /// About the bytes of records it holds, and how many.
    pub fn held(&self) -> (usize, usize) {
        (self.held.bytes, self.held.records())
    }

    /// Whether it still holds every record a fold reads, apart from the dates it let go.
    pub fn holds_all(&self) -> bool {
        self.held.whole
    }

    /// How many of its folds' reads the tree answered: reads of the dates let go (a
    /// correction of a settled race), or of everything once past the budget.
    pub fn read_back(&self) -> u64 {
        self.held.read_back()
    }
}

/// The error of a writer that ended without answering: it panicked.
fn writer_gone() -> StoreError {
    StoreError::Corrupt("the load's writer panicked".into())
}

impl Drop for Loader {
    fn drop(&mut self) {
        // A write in progress finishes (or fails) before the store may be used otherwise.
        // (Where the steps could not be ended, the next batch or opening of the store
        // finishes them: `load_steps.rs`.)
        let _ = self.finish();
        if let Some(Writer {
            to_write, thread, ..
        }) = self.writer.take()
        {
            drop(to_write);
            let _ = thread.join();
        }
    }
}
