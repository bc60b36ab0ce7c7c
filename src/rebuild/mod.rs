//! Rebuilding every read model from the log into a fresh store, then swapping it in,
//! while the API answers from the store in use (`racing rebuild`, `POST /rebuild` on the
//! admin listener).
//!
//! The rebuild reads the stream from its first message with a consumer of its own and
//! folds it into a new directory, never past the projector's checkpoint, so that every
//! odds update still goes live exactly once, from the projector. Once it reaches a
//! message the projector has not committed (or the stream's end), it takes the commit
//! lock, which holds the projector between batches, folds up to exactly the projector's
//! checkpoint, flushes, records the new directory in the pointer file and swaps the
//! stores. The projector then goes on from the same checkpoint in the new store, and the
//! old directory is removed.
//!
//! The fold up to the projector's checkpoint runs in a process of its own when the
//! service knows its own program ([`worker`]), so that its commits never hold the API's
//! reads; the last messages, with the projector held, are folded here. What it reports
//! of itself is `status`.
//!
//! A consumer that delivers nothing is never taken for the stream's end: below the
//! projector's checkpoint the stream itself is asked what it holds there. If it holds a
//! message, the consumer has stalled and is made again; only sequences the stream no
//! longer holds (deleted) are skipped; and a rebuild that cannot reach the checkpoint
//! within [`HOLD_LIMIT`] fails and keeps the store in use.

mod copy;
mod pace;
mod retire;
pub(crate) mod status;
pub(crate) mod worker;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream;
use futures::FutureExt as _;
use racing_projections::{Options, Store};
use tokio_util::sync::CancellationToken;

use crate::faults::Faults;
use crate::projector::bulk::fold_messages;
use crate::projector::catch_up::{CATCH_UP_BATCH, CATCH_UP_WINDOW};
use crate::projector::MAX_BATCH;
use crate::read_models::{self, ReadModels, LET_GO_PATIENCE};
use crate::snapshot::Snapshots;
use crate::supervise::lock;

pub use worker::run as run_worker;

use status::{Origin, State, Status};

/// Most messages folded in one batch, and how long a batch waits for more after its
/// first: large while the rebuild is behind (each document a batch touches is rendered
/// once per batch), small while it holds the projector.
const CATCH_UP: (usize, Duration) = (CATCH_UP_BATCH, CATCH_UP_WINDOW);
const HOLDING: (usize, Duration) = (MAX_BATCH, Duration::from_millis(50));
/// How long the rebuild waits for more messages before it asks the stream what is left.
const IDLE: Duration = Duration::from_millis(250);
/// Longest the projector may be held while the rebuild folds its last messages.
const HOLD_LIMIT: Duration = Duration::from_secs(30);
/// How long the rebuild's consumer may deliver nothing below the projector's checkpoint
/// before it is made again.
const STALL: Duration = Duration::from_secs(3);
/// How long the rebuild keeps trying to make its consumer: several attempts of
/// [`crate::nats::messages::CONSUMER_WITHIN`], so that all of them drawing a dead node is unlikely.
const CONSUMER_PATIENCE: Duration = Duration::from_secs(10);
/// Longest a replaced or failed store's directory waits for the last other handle of it
/// to go (a request in flight, the background check of a store it reads whole, a fold
/// on a blocking thread that a stop left running).
const RETIRE_WAIT: Duration = Duration::from_secs(600);

/// Runs at most one rebuild at a time, and keeps the last one's status.
pub struct Rebuilder {
    read_models: Arc<ReadModels>,
    js: jetstream::Context,
    stream: String,
    shutdown: CancellationToken,
    status: Arc<Mutex<Status>>,
    faults: Arc<Faults>,
    /// The `racing` program whose `rebuild-worker` folds a rebuild; none folds it here.
    worker: Option<PathBuf>,
    /// The snapshot bucket, for a rebuild from a snapshot.
    snapshots: Option<Snapshots>,
}

impl Rebuilder {
    /// A rebuilder of `read_models` from `stream`; a rebuild under way stops on `shutdown`.
    pub fn new(
        read_models: Arc<ReadModels>,
        js: jetstream::Context,
        stream: String,
        shutdown: CancellationToken,
        faults: Arc<Faults>,
    ) -> Rebuilder {
        Rebuilder {
            read_models,
            js,
            stream,
            shutdown,
            status: Arc::default(),
            faults,
            worker: None,
            snapshots: None,
        }
    }

    /// This rebuilder, able to start a fresh store from a snapshot of `snapshots`.
    pub fn with_snapshots(mut self, snapshots: Option<Snapshots>) -> Rebuilder {
        self.snapshots = snapshots;
        self
    }

    /// This rebuilder, folding each rebuild up to the projector's checkpoint in a
    /// `rebuild-worker` of `program` (the running `racing`), if there is one.
    pub fn with_worker(mut self, program: Option<PathBuf>) -> Rebuilder {
        self.worker = program;
        self
    }

    /// The current or last rebuild's status.
    pub fn status(&self) -> Status {
        lock(&self.status).clone()
    }

    /// How many events the store in use is behind the stream's end, as the stream last
    /// said (its cached info).
    pub async fn behind(&self) -> anyhow::Result<u64> {
        let stream = self.js.get_stream(&self.stream).await?;
        let last = stream.cached_info().state.last_sequence;
        Ok(last.saturating_sub(self.read_models.load().checkpoint()?))
    }

    /// What is wrong with the store in use, while a rebuild repairs it.
    pub fn repairing(&self) -> Option<String> {
        let status = lock(&self.status);
        match status.state {
            State::Running => status.repair.clone(),
            _ => None,
        }
    }

    /// Starts a rebuild that replaces a damaged store in use (`problem` says what is
    /// wrong with it), which is then kept aside as `read-models.damaged-<time>`.
    pub fn repair(&self, problem: String) -> Result<Status, Box<Status>> {
        self.begin(Some(problem), Origin::Log)
    }

    /// Starts a rebuild in the background; `Err` with the status of the one under way if
    /// there is one.
    pub fn start(&self) -> Result<Status, Box<Status>> {
        self.begin(None, Origin::Log)
    }

    /// Starts a rebuild whose fresh store starts `from` a snapshot or the log's start.
    pub fn start_from(&self, from: Origin) -> Result<Status, Box<Status>> {
        self.begin(None, from)
    }

    fn begin(&self, repair: Option<String>, from: Origin) -> Result<Status, Box<Status>> {
        let started = {
            let mut status = lock(&self.status);
            if status.state == State::Running {
                return Err(Box::new(status.clone()));
            }
            *status = Status {
                state: State::Running,
                started_at: Some(racing_events::Instant::now()),
                repair: repair.clone(),
                ..Status::default()
            };
            status.clone()
        };
        let run = Run {
            repair: repair.is_some(),
            read_models: self.read_models.clone(),
            js: self.js.clone(),
            stream: self.stream.clone(),
            status: self.status.clone(),
            faults: self.faults.clone(),
            worker: self.worker.clone(),
            shutdown: self.shutdown.clone(),
            fresh: Mutex::default(),
            from,
            snapshots: self.snapshots.clone(),
        };
        let shutdown = self.shutdown.clone();
        let status = self.status.clone();
        tokio::spawn(async move {
            let dir = read_models::new_generation(run.read_models.data_dir());
            // A panic (sled panics on some damaged pages) fails the rebuild like an error,
            // rather than leaving it running for ever.
            let folded = std::panic::AssertUnwindSafe(run.run(&dir)).catch_unwind();
            let outcome = tokio::select! {
                r = folded => r.unwrap_or_else(|panic| {
                    Err(anyhow::anyhow!("panicked: {}", crate::supervise::panic_message(panic)))
                }),
                _ = shutdown.cancelled() => Err(anyhow::anyhow!("the service is shutting down")),
            };
            // A failed rebuild's store is closed as a replaced one is, whatever the path
            // that failed (the hold, the fold in this process, a panic, the stop), and its
            // directory goes before the failure is told, a little at a time.
            let fresh = lock(&run.fresh).take();
            if outcome.is_err() {
                let closed = match fresh {
                    Some(store) => {
                        let models = &run.read_models;
                        models.close(Arc::new(store), RETIRE_WAIT, &shutdown).await
                    }
                    None => true,
                };
                if !closed {
                    tracing::warn!(
                        store = %dir.display(),
                        "the failed rebuild's store is still in use; its directory is left to the next start"
                    );
                } else if dir.exists() {
                    let (failed, stop) = (dir.clone(), shutdown.clone());
                    let removed =
                        tokio::task::spawn_blocking(move || retire::remove(&failed, &stop)).await;
                    if let Ok(Err(e)) = removed {
                        tracing::warn!(store = %dir.display(), error = %e, "removing a failed rebuild");
                    }
                }
            }
            let mut status = lock(&status);
            status.finished_at = Some(racing_events::Instant::now());
            match outcome {
                Ok(()) => {
                    status.state = State::Done;
                    tracing::info!(
                        checkpoint = status.checkpoint,
                        folded = status.folded,
                        store = %dir.display(),
                        "rebuilt read models swapped in"
                    );
                }
                Err(e) => {
                    status.state = State::Failed;
                    status.error = Some(format!("{e:#}"));
                    tracing::error!(
                        error = format!("{e:#}"),
                        "rebuild failed; the store in use is kept"
                    );
                }
            }
        });
        Ok(started)
    }
}

/// One rebuild.
struct Run {
    /// Whether the store replaced is damaged, and so kept aside.
    repair: bool,
    read_models: Arc<ReadModels>,
    js: jetstream::Context,
    stream: String,
    status: Arc<Mutex<Status>>,
    faults: Arc<Faults>,
    worker: Option<PathBuf>,
    /// The service stopping: the removal of the replaced store stops with it.
    shutdown: CancellationToken,
    /// A handle of the fresh store once this process has opened it, so that its last
    /// handle is never dropped on the way out of a failure (an error, a panic, the run
    /// dropped at a stop), but by [`ReadModels::close`] once the run has ended.
    fresh: Mutex<Option<Store>>,
    /// Where the fresh store starts.
    from: Origin,
    snapshots: Option<Snapshots>,
}

/// Where the fold up to the projector's checkpoint happens.
enum Folder {
    /// In this process, on a blocking thread.
    Here(Store),
    /// In a worker process.
    Worker(Box<worker::Worker>),
}

/// What the stream holds between the fresh store's checkpoint and a target.
enum Below {
    /// A message at this sequence, which the consumer has not delivered.
    Stored(u64),
    /// Nothing: every sequence up to the target was deleted from the stream.
    Deleted,
}

impl Run {
    /// An ordered consumer of the stream from the message after `checkpoint`, tried for
    /// up to [`CONSUMER_PATIENCE`]: an attempt may draw a dead node of a cluster
    /// ([`crate::nats::messages::CONSUMER_WITHIN`]).
    async fn messages_after(
        &self,
        checkpoint: u64,
    ) -> anyhow::Result<crate::nats::messages::Messages> {
        crate::retry::patiently("the rebuild's consumer", CONSUMER_PATIENCE, || {
            crate::nats::messages::messages_from(&self.js, &self.stream, checkpoint + 1)
        })
        .await
    }

    /// The fresh store at `dir`, in a worker process if there is a program for one (or
    /// here if it cannot start), built from the stream `identity`, and filled up to
    /// `checkpoint` (by a snapshot; 0: empty).
    async fn folder(
        &self,
        dir: &std::path::Path,
        identity: &str,
        checkpoint: u64,
    ) -> anyhow::Result<Folder> {
        let options = self.read_models.load().options();
        if let Some(program) = &self.worker {
            match worker::Worker::start(program, dir, options, identity, checkpoint) {
                Ok(worker) => return Ok(Folder::Worker(Box::new(worker))),
                Err(e) => tracing::warn!(
                    error = format!("{e:#}"),
                    "the rebuild folds in the service's process instead"
                ),
            }
        }
        let fresh = self.keep(open_fresh(dir, options).await?);
        fresh.set_stream(identity)?;
        Ok(Folder::Here(fresh))
    }

    async fn run(&self, dir: &std::path::Path) -> anyhow::Result<()> {
        lock(&self.status).directory = Some(dir.display().to_string());
        tracing::info!(store = %dir.display(), "rebuilding the read models from the log");
        let mut stream = self.js.get_stream(&self.stream).await?;
        let info = stream.info().await?;
        let identity = crate::nats::stream::stream_identity(info);
        let loaded = match &self.from {
            Origin::Snapshot(name) => self.load_snapshot(dir, name.as_deref(), &identity).await?,
            Origin::Store { why, record_bytes } => {
                let (models, stop) = (&self.read_models, &self.shutdown);
                copy::copy_store(models, dir, (why, *record_bytes), &self.status, stop).await?
            }
            Origin::Log => 0,
        };
        let mut folder = self.folder(dir, &identity, loaded).await?;
        {
            let mut status = lock(&self.status);
            status.stream_last_seq = info.state.last_sequence;
            status.worker = matches!(folder, Folder::Worker(_));
        }
        let mut messages = self.messages_after(folder.checkpoint()?).await?;

        // Up to the projector's checkpoint, with the projector running.
        let mut quiet_since = None;
        let mut stalls = 0;
        let mut waiting = loop {
            let batch = next_batch(&mut messages, CATCH_UP).await?;
            let live = self.read_models.load().checkpoint()?;
            let (now, later): (Vec<_>, Vec<_>) =
                batch.into_iter().partition(|m| sequence(m) <= live);
            let idle = now.is_empty() && later.is_empty();
            if !now.is_empty() {
                self.faults.rebuild_before_fold().await;
            }
            self.fold_in(&mut folder, now).await?;
            // A message the projector has not committed yet, or nothing more for a moment
            // with the fresh store level with the projector.
            if !later.is_empty() || (idle && folder.checkpoint()? >= live) {
                break later;
            }
            if !idle {
                quiet_since = None;
                stalls = 0;
                continue;
            }
            // Behind the projector with nothing delivered: the rest may have been deleted
            // from the stream (then the hold below skips it), or the consumer has stalled
            // (as after a stream leader's loss, or under load): it is made again from the
            // fresh store's checkpoint, and one that stays stalled ends the rebuild
            // rather than hanging it.
            if let Below::Deleted = self.below(folder.checkpoint()?, live).await? {
                break later;
            }
            let quiet = *quiet_since.get_or_insert_with(tokio::time::Instant::now);
            if quiet.elapsed() > HOLD_LIMIT {
                anyhow::bail!(
                    "the log delivered nothing for {HOLD_LIMIT:?} below the projector's checkpoint {live}"
                );
            } else if quiet.elapsed() > STALL * (stalls + 1) {
                stalls += 1;
                lock(&self.status).consumer_stalls += 1;
                tracing::warn!(
                    checkpoint = folder.checkpoint()?,
                    live,
                    "the rebuild's consumer delivers nothing below the projector's checkpoint; making it again"
                );
                messages = self.messages_after(folder.checkpoint()?).await?;
            }
        };

        // The rest with the projector held between batches: up to exactly its checkpoint,
        // folded here.
        let fresh = match folder {
            Folder::Here(fresh) => fresh,
            Folder::Worker(worker) => {
                worker.finish().await?;
                self.keep(open_fresh(dir, self.read_models.load().options()).await?)
            }
        };
        self.warm(&fresh).await?;
        let mut folder = Folder::Here(fresh.clone());
        self.faults.rebuild_before_hold().await;
        let _held = self.read_models.lock_commits().await;
        let target = self.read_models.load().checkpoint()?;
        let deadline = tokio::time::Instant::now() + HOLD_LIMIT;
        loop {
            let (now, later): (Vec<_>, Vec<_>) =
                waiting.into_iter().partition(|m| sequence(m) <= target);
            self.fold_in(&mut folder, now).await?;
            if self.faults.rebuild_hold_fails().await {
                anyhow::bail!("a failure injected into a rebuild's hold (test fault)");
            }
            let reached = fresh.checkpoint()?;
            if reached >= target {
                break;
            }
            let delivered = !later.is_empty();
            waiting = Vec::new();
            if !delivered {
                waiting = tokio::time::timeout_at(deadline, self.next_held(&mut messages))
                    .await
                    .map_err(|_| {
                        anyhow::anyhow!("the log did not reach the projector's checkpoint {target} within {HOLD_LIMIT:?}")
                    })??;
                if !waiting.is_empty() {
                    continue;
                }
            }
            // Short of the target with nothing more delivered below it, or with a message
            // past it: the stream says whether the rest is deleted or still to come.
            match self.below(reached, target).await? {
                Below::Deleted => {
                    tracing::info!(
                        from = reached + 1,
                        to = target,
                        "the stream no longer holds these sequences; the rebuild skips them"
                    );
                    fresh.skip_to(target)?;
                    break;
                }
                Below::Stored(seq) => {
                    if tokio::time::Instant::now() >= deadline {
                        anyhow::bail!(
                            "the log did not deliver message {seq} below the projector's checkpoint {target} within {HOLD_LIMIT:?}"
                        );
                    }
                    tracing::warn!(
                        checkpoint = reached,
                        target,
                        stored = seq,
                        "the rebuild's consumer stalled below the projector's checkpoint; making it again"
                    );
                    lock(&self.status).consumer_stalls += 1;
                    messages = self.messages_after(reached).await?;
                }
            }
        }
        fresh.flush().await?;
        let (old, old_dir) = self.read_models.swap(fresh, dir)?;
        drop(_held);
        let read_models = self.read_models.clone();
        let repair = self.repair;
        let stop = self.shutdown.clone();
        // The old store is closed ([`ReadModels::close`]: flushed and dropped with the
        // projector held) once no other handle of it is left, and only then does its
        // directory go (or is moved aside, if damaged): sled writes to a store's directory
        // as its last handle drops, and a directory removed under a handle left that flush
        // waiting for ever, holding whatever thread dropped it (a test's hang at the end
        // of a rebuild, 2026-11-24). Requests in flight and the background check let go of
        // it in their own time; a handle still held after [`RETIRE_WAIT`] leaves the
        // directory to the next start, which removes it.
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            if !read_models.close(old, RETIRE_WAIT, &stop).await {
                tracing::warn!(
                    store = %old_dir.display(),
                    "the replaced read models are still in use; their directory is left to the next start"
                );
                return;
            }
            tracing::info!(
                store = %old_dir.display(),
                ms = started.elapsed().as_millis() as u64,
                "the replaced read models closed"
            );
            let data_dir = read_models.data_dir().to_owned();
            let _ = tokio::task::spawn_blocking(move || {
                retire::retire(&old_dir, &data_dir, repair, &stop)
            })
            .await;
        });
        Ok(())
    }

    /// Loads the snapshot `name` (the newest of this layout and of the stream `identity`
    /// if none) into `dir`, whose store the fold then goes on from. A snapshot past the
    /// projector's checkpoint is refused: the rebuild never folds what the projector has
    /// not, so that every odds update goes live once, from the projector. Returns the
    /// snapshot's checkpoint.
    async fn load_snapshot(
        &self,
        dir: &std::path::Path,
        name: Option<&str>,
        identity: &str,
    ) -> anyhow::Result<u64> {
        let snapshots = self.snapshots.as_ref().context(
            "this service has no snapshot bucket: `racing setup` makes it (docs/operations.md)",
        )?;
        let layout = racing_projections::layout();
        let listed = snapshots.list().await?.into_iter().find(|l| match name {
            Some(name) => l.name == name,
            None => l.layout == layout && l.stream == identity,
        });
        let listed = listed.with_context(|| match name {
            Some(name) => format!("no snapshot {name}"),
            None => format!("no snapshot of layout {layout} and stream {identity}"),
        })?;
        let live = self.read_models.load().checkpoint()?;
        if listed.checkpoint > live {
            anyhow::bail!(
                "snapshot {} is at {}, past this replica's checkpoint {live}: try again once the projector has reached it",
                listed.name,
                listed.checkpoint
            );
        }
        {
            let mut status = lock(&self.status);
            status.snapshot = Some(listed.name.clone());
            status.checkpoint = listed.checkpoint;
        }
        // The fresh store's handle goes before the fold opens it (in a worker, maybe).
        let options = self.read_models.load().options();
        drop(
            snapshots
                .load(&listed, identity, dir, options)
                .await
                .with_context(|| format!("snapshot {} refused", listed.name))?,
        );
        tracing::info!(
            snapshot = %listed.name,
            checkpoint = listed.checkpoint,
            "the rebuild's fresh store loaded from a snapshot; folding the log from its checkpoint"
        );
        Ok(listed.checkpoint)
    }

    /// `store`, with a handle of it kept in [`Run::fresh`].
    fn keep(&self, store: Store) -> Store {
        *lock(&self.fresh) = Some(store.clone());
        store
    }

    /// Reads the documents read lately from the fresh store, before the swap, so that its
    /// cache holds them: the swap empties the cache of documents, and every first read of a
    /// page of a store just opened waits for it to be read back from its log and decoded.
    /// Without it, the reads' p99 in the catch-up right after a swap was clearly higher
    /// (one run each), and warming a busy store's documents takes well under a second. Its
    /// applied ids are loaded then too, which the first batch folded into it (under the
    /// hold, or the catch-up's after the swap) would otherwise load. Done before the
    /// projector is held, on a blocking thread: the live store keeps answering meanwhile.
    async fn warm(&self, fresh: &Store) -> anyhow::Result<()> {
        let keys = self.read_models.read_lately();
        let store = fresh.clone();
        let started = std::time::Instant::now();
        let held = tokio::task::spawn_blocking(move || {
            store.load_applied_ids()?;
            store.warm(keys.iter().map(Vec::as_slice))
        })
        .await??;
        lock(&self.status).warmed = held as u64;
        tracing::info!(
            documents = held,
            ms = started.elapsed().as_millis() as u64,
            "the documents read lately warmed in the rebuilt read models"
        );
        Ok(())
    }

    /// The next messages while holding the projector (none, as from a stalled consumer,
    /// while a test's fault says so).
    async fn next_held(
        &self,
        messages: &mut crate::nats::messages::Messages,
    ) -> anyhow::Result<Vec<jetstream::Message>> {
        if self.faults.rebuild_read_stalls() {
            tokio::time::sleep(IDLE).await;
            return Ok(Vec::new());
        }
        next_batch(messages, HOLDING).await
    }

    /// What the stream holds after `checkpoint`, up to `target`: the first message there,
    /// or nothing (deleted).
    async fn below(&self, checkpoint: u64, target: u64) -> anyhow::Result<Below> {
        use async_nats::jetstream::stream::RawMessageErrorKind as Kind;
        let from = checkpoint + 1;
        let stream = self.js.get_stream(&self.stream).await?;
        let next = stream
            .raw_message_builder()
            .sequence(from)
            .next_by_subject(racing_events::ALL_SUBJECTS)
            .send()
            .await;
        match next {
            Ok(m) if m.sequence <= target => Ok(Below::Stored(m.sequence)),
            Ok(_) => Ok(Below::Deleted),
            Err(e) if e.kind() == Kind::NoMessageFound => Ok(Below::Deleted),
            Err(e) => Err(anyhow::Error::from(e).context(format!(
                "asking stream {} for its message at {from} or after",
                self.stream
            ))),
        }
    }

    /// Folds `messages` into the fresh store: in the worker, or here on a blocking thread,
    /// so that a long rebuild never holds one of the runtime's workers that serve requests.
    async fn fold_in(
        &self,
        folder: &mut Folder,
        messages: Vec<jetstream::Message>,
    ) -> anyhow::Result<()> {
        if messages.is_empty() {
            return Ok(());
        }
        let count = messages.len() as u64;
        let (checkpoint, pending) = match folder {
            Folder::Worker(worker) => {
                let reached = worker.fold(&messages).await?;
                lock(&self.status).held_secs = worker.held().as_secs_f64();
                (reached.checkpoint, reached.pending)
            }
            Folder::Here(fresh) => {
                let store = fresh.clone();
                let (stats, pending) =
                    tokio::task::spawn_blocking(move || fold_messages(&store, messages)).await??;
                (stats.checkpoint, pending)
            }
        };
        let mut status = lock(&self.status);
        status.checkpoint = checkpoint;
        status.folded += count;
        status.stream_last_seq = status.stream_last_seq.max(checkpoint + pending);
        Ok(())
    }
}

impl Folder {
    /// The fresh store's checkpoint.
    fn checkpoint(&self) -> anyhow::Result<u64> {
        Ok(match self {
            Folder::Here(fresh) => fresh.checkpoint()?,
            Folder::Worker(worker) => worker.checkpoint(),
        })
    }
}

fn sequence(m: &jetstream::Message) -> u64 {
    m.info().map_or(u64::MAX, |i| i.stream_sequence)
}

/// The next messages: those that arrive within `window` of the first (at most `limit`);
/// none if the stream has nothing more for [`IDLE`].
async fn next_batch(
    messages: &mut crate::nats::messages::Messages,
    (limit, window): (usize, Duration),
) -> anyhow::Result<Vec<jetstream::Message>> {
    let first = match tokio::time::timeout(IDLE, messages.next()).await {
        Ok(Some(m)) => m?,
        Ok(None) => anyhow::bail!("message stream ended"),
        Err(_) => return Ok(Vec::new()),
    };
    let mut batch = vec![first];
    let deadline = tokio::time::Instant::now() + window;
    while batch.len() < limit {
        match tokio::time::timeout_at(deadline, messages.next()).await {
            Ok(Some(m)) => batch.push(m?),
            Ok(None) => anyhow::bail!("message stream ended"),
            Err(_) => break,
        }
    }
    Ok(batch)
}

/// Opens the fresh store in `dir` on a blocking thread (a large one's log is read back for
/// seconds, which held the runtime's requests as long), once sled has let go of the store
/// that filled it: a snapshot's load, a copy or a worker, which let go of it just now.
async fn open_fresh(dir: &std::path::Path, options: Options) -> anyhow::Result<Store> {
    let path = dir.to_owned();
    tokio::task::spawn_blocking(move || Store::open_once_let_go(&path, options, LET_GO_PATIENCE))
        .await?
        .with_context(|| format!("opening {}", dir.display()))
}
