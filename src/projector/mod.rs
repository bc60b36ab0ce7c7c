//! The projector: reads the stream from the message after the checkpoint, folds each event
//! into the read models, and commits every batch with the sequence it reached. Batches are
//! large while replaying and small when live: a batch closes when it is full or a few
//! milliseconds after its first message. While the projector is far behind the stream
//! (replaying the log at start-up), batches are much larger, so each document a batch
//! touches is rendered and written far fewer times.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream;
use racing_projections::{BatchStats, StoreError};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::faults::Faults;
use crate::live::hub::OddsHub;
use crate::load::GiveWay;
use crate::read_models::ReadModels;
use crate::retry::Fatal;
use live::Held;

mod applied_ids;
mod batch;
pub(crate) mod bulk;
pub(crate) mod catch_up;
mod commits;
pub(crate) mod decoded;
mod live;

use batch::{Taken, Whose};
use catch_up::{Catching, CATCH_UP_BATCH, CATCH_UP_SLICE, CATCH_UP_WINDOW};
use commits::{commit_due, off_the_workers, timed};
use decoded::{Ahead, Decoded};

/// Most messages in one batch.
pub(crate) const MAX_BATCH: usize = 4096;
/// Longest a live message waits for others to share its commit. Long enough to group an
/// update with the next, so that their frames go out in one write (with no window at all,
/// the service used more CPU for no better p99). Short, because in paired runs a shorter
/// window gave a lower live p99 and a lower ratio to nats-server's, for no more CPU: 2 ms
/// did better than 5, and 1 ms better than 2.
const BATCH_WINDOW: Duration = Duration::from_millis(1);
/// Quiet time after which the projector checks that its consumer is not stuck behind a
/// stream that has moved on (as after the stream leader's node died).
const STALL_CHECK: Duration = Duration::from_secs(5);

/// What the projector has reached, for readiness and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Last stream sequence committed to the store.
    pub checkpoint: u64,
    /// Whether the projector has caught up with the stream at least once since start.
    pub caught_up: bool,
    /// Events applied since start.
    pub applied: u64,
    /// Events ignored as duplicates since start.
    pub duplicates: u64,
    /// Messages recorded as dead letters since start.
    pub dead_letters: u64,
    /// Times the projector stopped on an error and went on from its checkpoint since
    /// start (NATS unreachable, a consumer that stalled).
    pub interruptions: u64,
}

/// What a projector is made of but its NATS connection: kept by the service and cloned
/// for each start of the projector, which opens a connection of its own
/// ([`Projector::run_on_own_threads`]).
#[derive(Clone)]
pub struct Parts {
    /// The read models.
    pub read_models: Arc<ReadModels>,
    /// Stream name.
    pub stream: String,
    /// Published after every commit.
    pub progress: watch::Sender<Progress>,
    /// Set once caught up; the API answers 503 until then.
    pub ready: Arc<AtomicBool>,
    /// Where applied odds updates go live, after their batch commits.
    pub hub: Arc<OddsHub>,
    /// Faults a test injects.
    pub faults: Arc<Faults>,
    /// Told what is wrong when a commit finds the store damaged (a file of it missing),
    /// which a rebuild from the log mends: the service marks the store damaged and starts
    /// that rebuild, and the projector waits for its swap.
    pub on_damage: Arc<dyn Fn(String) + Send + Sync>,
}

/// The projector: its parts and its own NATS connection.
pub struct Projector {
    parts: Parts,
    /// JetStream through the projector's own connection.
    js: jetstream::Context,
    /// Keeps the refusals of the events it refuses for their feeders.
    refusals: crate::refusals::Keeper,
    /// How far past its target the filter of applied ids was when the log last warned
    /// of it (`applied_ids.rs`).
    filter_warned: AtomicU32,
}

impl Projector {
    /// [`Projector::run`] on threads of its own ([`crate::supervise::on_own_threads`]):
    /// this one folds and commits, the other decodes ahead. While catching up, each takes
    /// a core; on the runtime that serves requests, reads queued behind them, and while
    /// catching up odds updates their p99 was several times what it is with the projector
    /// on threads of its own.
    ///
    /// The projector is made there of `parts` and a NATS connection of its own, opened
    /// there through `dial`: a connection's task reads and parses every message it
    /// delivers, on the runtime it was opened on, and a catch-up's backlog parsed on the
    /// runtime that answers requests held them up as the fold did.
    pub async fn run_on_own_threads(
        parts: Parts,
        dial: crate::nats::client::Dial,
        shutdown: CancellationToken,
    ) -> anyhow::Result<()> {
        crate::supervise::on_own_threads("projector", async move {
            let connection = tokio::select! {
                c = dial.open() => c?,
                _ = shutdown.cancelled() => return Ok(()),
            };
            let projector = Projector {
                refusals: crate::refusals::Keeper::new(connection.jetstream(), &parts.stream),
                parts,
                js: connection.jetstream(),
                filter_warned: AtomicU32::new(0),
            };
            projector.run(shutdown).await
        })
        .await
    }

    /// Runs until `shutdown`; re-creates its consumer from the checkpoint after any error,
    /// so that a message is never skipped and never applied twice, after a pause that
    /// grows while errors follow one another ([`crate::retry::Pauses::nats`]) and starts
    /// again from the shortest once a consumer has worked. Ends with a [`Fatal`] error if
    /// the stream is no longer the one the read models were built from.
    pub async fn run(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        // A store already at the stream's end is ready at once, before any message.
        if let Ok(mut s) = self.js.get_stream(&self.parts.stream).await {
            if let (Ok(info), Ok(cp)) = (s.info().await, self.parts.read_models.load().checkpoint())
            {
                if cp >= info.state.last_sequence {
                    self.mark_caught_up(cp);
                }
            }
        }
        let mut pauses = crate::retry::Pauses::nats();
        while !shutdown.is_cancelled() {
            let began = tokio::time::Instant::now();
            let committed = self.parts.progress.borrow().checkpoint;
            match self.consume(&shutdown).await {
                Ok(()) => break,
                Err(e) if e.is::<Fatal>() => return Err(e),
                Err(e) if store_damage(&e).is_some() && !self.parts.read_models.in_repair() => {
                    // Not a failing disk: a store that lost a file (a blob a page points
                    // at) fails on the records concerned, and only those. It is rebuilt
                    // from the log and swapped out, as the check at start-up does with
                    // what it finds; meanwhile its commits wait below for the swap.
                    let problem = store_damage(&e)
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    // The rebuild begun (`/readyz` says so) before the line is logged.
                    (self.parts.on_damage)(problem.clone());
                    tracing::error!(problem, "the projector found the read models damaged");
                    tokio::select! {
                        _ = tokio::time::sleep(pauses.next_pause()) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
                Err(e) if store_io(&e).is_some() && !self.parts.read_models.in_repair() => {
                    // sled fails every later write of this store (a commit's, the upkeep's
                    // before a batch, its flusher's seen at the next): only opening it
                    // again mends it, and the service stops for its supervisor to start
                    // it again. (A store found damaged is being rebuilt instead: its
                    // errors wait below for the swap.)
                    let io = store_io(&e).map(ToString::to_string).unwrap_or_default();
                    self.cannot_write(&io);
                    return Err(Fatal(format!(
                        "the read models cannot be written ({io}); a restart opens them again"
                    ))
                    .into());
                }
                Err(e) => {
                    // A consumer that committed a batch, or ran past a stall check, worked.
                    if self.parts.progress.borrow().checkpoint > committed
                        || began.elapsed() > STALL_CHECK
                    {
                        pauses.reset();
                    }
                    let pause = pauses.next_pause();
                    tracing::warn!(error = %e, ?pause, "projector interrupted; resuming from checkpoint");
                    metrics::counter!("racing_projector_interruptions_total").increment(1);
                    self.parts.progress.send_modify(|p| p.interruptions += 1);
                    tokio::select! {
                        _ = tokio::time::sleep(pause) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
            }
        }
        if let Err(e) = self.parts.read_models.load_full().flush().await {
            tracing::error!(error = %e, "flushing the read models at shutdown");
        }
        Ok(())
    }

    /// A [`Fatal`] error if the stream is not the one the read models were built from (it
    /// was made again since): its sequences count other messages than the checkpoint.
    async fn check_same_stream(&self) -> anyhow::Result<()> {
        let Some(built_from) = self.parts.read_models.load().stream()? else {
            return Ok(());
        };
        let mut stream = self.js.get_stream(&self.parts.stream).await?;
        let now = crate::nats::stream::stream_identity(stream.info().await?);
        if now != built_from {
            return Err(Fatal(format!(
                "the stream is now {now}, made again since the read models were built from {built_from}; \
                 a restart rebuilds them from the new log"
            ))
            .into());
        }
        Ok(())
    }

    fn mark_caught_up(&self, checkpoint: u64) {
        if !self.parts.ready.swap(true, Ordering::SeqCst) {
            tracing::info!(checkpoint, "projector caught up; API ready");
        }
        self.parts.progress.send_modify(|p| {
            p.checkpoint = p.checkpoint.max(checkpoint);
            p.caught_up = true;
        });
    }

    /// Projects from the checkpoint until `shutdown` or an error; odds updates it
    /// committed but had not yet relayed go live whatever the end.
    async fn consume(&self, shutdown: &CancellationToken) -> anyhow::Result<()> {
        let mut held = Held::new(self.parts.hub.one_by_one());
        let ended = self.consume_into(shutdown, &mut held).await;
        self.go_live(held.take());
        ended
    }

    /// [`Projector::consume`], keeping in `held` the odds updates of the batches committed
    /// while catching up, to go live together.
    async fn consume_into(
        &self,
        shutdown: &CancellationToken,
        held: &mut Held,
    ) -> anyhow::Result<()> {
        let start = self.parts.read_models.load().checkpoint()? + 1;
        // Before the first message, rather than in its batch: on a store already at the
        // stream's end, that is the first live update's, held for as long as the load
        // takes.
        off_the_workers(|| self.parts.read_models.load().load_applied_ids())?;
        // Bounded as a whole: during a stream leader's election each of these requests
        // may go unanswered until the client's 10 s request timeout, and three in a row
        // kept the projector silent for half a minute; a retry a few seconds later finds
        // the new leader. The consumer's making has a shorter bound of its own
        // ([`crate::nats::messages::CONSUMER_WITHIN`]).
        let made = tokio::time::timeout(STALL_CHECK, async {
            self.check_same_stream().await?;
            crate::nats::messages::messages_from(&self.js, &self.parts.stream, start).await
        })
        .await;
        let messages = made.map_err(|_| {
            anyhow::anyhow!("the stream could not be checked and read within {STALL_CHECK:?}")
        })??;
        let (mut decoded, _decoder) = decoded::ahead(messages);
        let mut pace: Option<GiveWay> = None;
        let mut pause = Duration::ZERO;
        tracing::info!(from = start, stream = %self.parts.stream, "projecting");
        // From a batch that starts far behind the stream to one that reaches its end.
        let mut in_catch_up = false;
        loop {
            if !pause.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = shutdown.cancelled() => return Ok(()),
                }
                metrics::gauge!("racing_projector_paused_seconds").increment(pause.as_secs_f64());
                pause = Duration::ZERO;
            }
            let first = tokio::select! {
                m = tokio::time::timeout(STALL_CHECK, decoded.recv()) => match m {
                    Ok(m) => m,
                    Err(_) => {
                        self.check_not_stalled().await?;
                        continue;
                    }
                },
                _ = shutdown.cancelled() => return Ok(()),
            };
            let Some(first) = first else {
                anyhow::bail!("message stream ended");
            };
            let first = first?;
            // Far behind the stream: a large batch, closed at the stream's end; live: a
            // prompt one.
            let backlog = first.pending;
            let catching_up = backlog > MAX_BATCH as u64;
            if catching_up && !in_catch_up {
                metrics::counter!("racing_projector_catch_ups_total").increment(1);
            }
            // Once the API answers, a commit's size is bounded by what it writes, so
            // that no commit holds readers long.
            let serving = self.parts.ready.load(Ordering::Relaxed);
            let bulk = self.parts.read_models.load().options().replay_bytes > 0;
            let catching = match (catching_up, serving) {
                // The start-up replay, answered with 503s.
                (true, false) if bulk => Some(Catching::StartUp),
                (true, true) => Some(Catching::BesideReads(&mut pace)),
                _ => None,
            };
            if let Some(catching) = catching {
                if serving {
                    self.parts.faults.projector_before_batch().await;
                }
                let caught = self
                    .catch_up(first, &mut decoded, held, catching, shutdown)
                    .await?;
                in_catch_up = caught.pending > 0;
                pause = caught.pause;
                continue;
            }
            self.parts.faults.projector_before_batch().await;
            let began = std::time::Instant::now();
            self.parts.faults.projector_batch();
            // No rebuild swaps the store from the start of a batch to its commit.
            let _no_swap = self.parts.read_models.lock_commits().await;
            let store = self.parts.read_models.load_full();
            // A live batch, and any once the API answers, after a short step of the store's
            // upkeep: the upkeep's writes hold readers as a commit's do, and a catch-up's
            // long steps held the batch after them far longer than a live update may wait.
            // The start-up replay, answered with 503s, takes long steps. The upkeep before a
            // batch writes too.
            self.room_for(0)?;
            let mut batch = Taken::new(&store, self.whose(), !catching_up || serving)?;
            batch.take(first)?;
            in_catch_up |= catching_up;
            let (limit, window) = if catching_up {
                (CATCH_UP_BATCH, CATCH_UP_WINDOW)
            } else {
                (MAX_BATCH, BATCH_WINDOW)
            };
            // The last batches of a catch-up that gave way (`catch_up.rs`) go on giving
            // way, each as short as [`CATCH_UP_SLICE`].
            let sliced = pace.as_ref().is_some_and(GiveWay::gives_way);
            let full = |batch: &Taken<'_>| {
                serving && commit_due(&batch.batch) || sliced && began.elapsed() >= CATCH_UP_SLICE
            };
            let deadline = tokio::time::Instant::now() + window;
            let mut taken = 1;
            while taken < limit && !(catching_up && batch.pending == 0) && !full(&batch) {
                match tokio::time::timeout_at(deadline, decoded.recv()).await {
                    Ok(Some(m)) => batch.take(m?)?,
                    Ok(None) => anyhow::bail!("message stream ended"),
                    Err(_) => break,
                }
                taken += 1;
            }
            let pending = batch.pending;
            // Small commits of a catch-up go live together, as one large batch would,
            // its last ones too (those that start less than a batch behind).
            in_catch_up &= pending > 0;
            let hold = in_catch_up && held.len() < CATCH_UP_BATCH;
            self.room_for(batch.batch.bytes())?;
            self.parts.faults.store_file_lost()?;
            self.refusals.keep_later(batch.drain_refusals());
            let stats = off_the_workers(|| self.commit(batch, held, hold))?;
            tracing::debug!(?stats, pending, "batch committed");
            self.progressed(&stats, pending);
            match pace.as_mut() {
                Some(p) if in_catch_up => pause = p.pause_after(began.elapsed()),
                _ => pace = None,
            }
        }
    }

    /// The next message decoded, waiting up to [`STALL_CHECK`] for it: `None` if none
    /// came.
    async fn next_message(&self, decoded: &mut Ahead) -> anyhow::Result<Option<Decoded>> {
        match tokio::time::timeout(STALL_CHECK, decoded.recv()).await {
            Ok(Some(m)) => Ok(Some(m?)),
            Ok(None) => anyhow::bail!("message stream ended"),
            Err(_) => Ok(None),
        }
    }

    /// After a quiet spell: an error (so the consumer is re-created from the checkpoint)
    /// if the stream holds messages past the checkpoint that the consumer has not
    /// delivered, or if the stream's end cannot be read: after its leader's node died, a
    /// stream may answer nothing for a while, and a consumer from before may never
    /// deliver again.
    async fn check_not_stalled(&self) -> anyhow::Result<()> {
        let last = tokio::time::timeout(STALL_CHECK, async {
            let mut stream = self.js.get_stream(&self.parts.stream).await?;
            anyhow::Ok(stream.info().await?.state.last_sequence)
        })
        .await
        .map_err(|_| anyhow::anyhow!("the stream's end could not be read within {STALL_CHECK:?}"))?
        .map_err(|e| anyhow::anyhow!("the stream's end could not be read: {e}"))?;
        let checkpoint = self.parts.read_models.load().checkpoint()?;
        if last > checkpoint {
            anyhow::bail!(
                "consumer delivered nothing for {STALL_CHECK:?} while the stream is at {last} and the read models at {checkpoint}"
            );
        }
        Ok(())
    }

    /// What the projector's batches keep for the live sessions.
    fn whose(&self) -> Whose {
        Whose::Projector {
            one_by_one: self.parts.hub.one_by_one(),
        }
    }

    /// An error, recorded ([`Projector::cannot_write`]), unless the disk has room for a
    /// commit of `bytes` (a batch's estimate) besides its spare: one write of sled's that
    /// fails for want of space fails every later one of the store. The batch is then
    /// dropped, and taken again from the checkpoint after a pause.
    fn room_for(&self, bytes: usize) -> anyhow::Result<()> {
        if self.parts.faults.disk_room_unchecked() {
            return Ok(());
        }
        crate::disk::room_for(self.parts.read_models.data_dir(), bytes).map_err(|problem| {
            self.cannot_write(&problem);
            anyhow::anyhow!(problem)
        })
    }

    /// Records that the projector cannot write the read models, and why: `/readyz` says
    /// so until a commit succeeds, and `racing_projector_write_failures_total` counts it.
    fn cannot_write(&self, problem: &str) {
        metrics::counter!("racing_projector_write_failures_total").increment(1);
        tracing::error!(problem, "the projector cannot write the read models");
        self.parts
            .read_models
            .set_cannot_write(Some(problem.to_owned()));
    }

    /// Publishes what a written batch reached, and that the projector caught up where the
    /// stream held nothing past it (`pending`).
    fn progressed(&self, stats: &BatchStats, pending: u64) {
        self.parts.read_models.applied_up_to(stats.checkpoint);
        self.parts.progress.send_modify(|p| {
            p.checkpoint = stats.checkpoint;
            p.applied += stats.applied;
            p.duplicates += stats.duplicates;
            p.dead_letters += stats.dead_letters;
        });
        if pending == 0 {
            self.mark_caught_up(stats.checkpoint);
        }
    }

    /// Commits a batch, then hands the odds updates in `held` and the batch's to the live
    /// sessions, unless `hold` keeps them all in `held` for a later commit.
    fn commit(&self, taken: Taken<'_>, held: &mut Held, hold: bool) -> anyhow::Result<BatchStats> {
        let mut changed = Vec::new();
        let stats = timed(|| taken.batch.commit_noting(|key| changed.push(key.to_vec())))?;
        self.after_commit(&stats, &changed)?;
        held.extend(taken.live);
        if !hold {
            self.go_live(held.take());
        }
        Ok(stats)
    }

    /// What every commit is followed by: the store known writable again, the documents
    /// it changed forgotten by the caches, its counts.
    fn after_commit(&self, stats: &BatchStats, changed: &[Vec<u8>]) -> anyhow::Result<()> {
        if self.parts.read_models.set_cannot_write(None).is_some() {
            tracing::info!(
                checkpoint = stats.checkpoint,
                "the projector writes the read models again"
            );
        }
        // Before the updates go live: a client told of a change never reads the old document.
        self.parts.read_models.forget(changed);
        metrics::counter!("racing_events_applied_total").increment(stats.applied);
        metrics::counter!("racing_events_duplicate_total").increment(stats.duplicates);
        metrics::counter!("racing_dead_letters_total").increment(stats.dead_letters);
        metrics::counter!("racing_late_prices_total").increment(stats.late_prices);
        self.note_applied_ids(stats)
    }
}

/// The store's damage among the causes of `e`, if there is one ([`StoreError::is_damage`]).
fn store_damage(e: &anyhow::Error) -> Option<&StoreError> {
    e.chain()
        .filter_map(|cause| cause.downcast_ref::<StoreError>())
        .find(|store| store.is_damage())
}

/// The store's I/O error (a full disk) among the causes of `e`, if there is one.
fn store_io(e: &anyhow::Error) -> Option<&StoreError> {
    e.chain()
        .filter_map(|cause| cause.downcast_ref::<StoreError>())
        .find(|store| store.is_io())
}
