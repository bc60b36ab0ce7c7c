//! The catch-ups: batches far behind the stream, folded while the one before each is
//! written on a thread of its own ([`Loader`]). The start-up replay into empty read models
//! is a bulk load; a backlog while the API answers (an outage's, a feeder's burst of
//! amendments) is folded the same way, each batch written whole as a commit is, in the
//! batches a commit may write then, giving way to requests.

use std::time::{Duration, Instant};

use racing_projections::{Loader, Written};
use tokio_util::sync::CancellationToken;

use super::batch::Taken;
use super::commits::{commit_due, off_the_workers};
use super::decoded::{Ahead, Decoded};
use super::live::{Held, LiveUpdate};
use super::Projector;
use crate::load::{GiveWay, REQUESTS_FIRST};
use crate::read_models::ReadModels;

/// Most messages in one batch while catching up: a batch that starts with more than
/// `MAX_BATCH` messages still to read. It closes early when it reaches the stream's end.
pub(crate) const CATCH_UP_BATCH: usize = 65_536;
/// A catch-up's batch closes at its first wait for a message past this long after its
/// start. It does not bound how long a batch takes: with messages decoded ahead, each
/// batch of the start-up replay fills to [`CATCH_UP_BATCH`], however long its fold takes.
pub(crate) const CATCH_UP_WINDOW: Duration = Duration::from_secs(1);
/// Longest a catch-up's batch takes messages while the catch-up gives way to requests: a
/// batch and its commit take a core from them for about that long and a few milliseconds
/// more. In paired runs, 2 ms gave reads about the same p99; the shorter slice takes the
/// core from them for less.
pub(super) const CATCH_UP_SLICE: Duration = Duration::from_millis(1);
/// A catch-up gives way to requests from a backlog of more than this many messages at the
/// start of one of its batches. A live feed's burst past `MAX_BATCH` (the fold stopped
/// for a moment, or a feeder sent a season at once) is applied as a catch-up, but at once:
/// given way under 64 reading connections, 20,000 odds moves a second fell 42 s behind
/// in a minute, after the ten seconds before it at that rate had stayed within 0.3 s.
const GIVE_WAY_BACKLOG: u64 = CATCH_UP_BATCH as u64;
/// How long a catch-up gives way at the least share; then it takes more of the time, all
/// of it at twice this ([`GiveWay::with_patience`]): under reads that saturate the machine,
/// a catch-up at the least share alone applies a backlog for as long as the reads last
/// (BENCHMARKS.md, "What was tried").
const CATCH_UP_PATIENCE: Duration = Duration::from_secs(15);
/// Longest a catch-up while the API answers holds the commit lock, from its first batch:
/// a rebuild's swap waits for it. It then lets the lock go at the end of a write, and
/// takes it again for its next batches.
const BESIDE_READS_HOLD: Duration = Duration::from_secs(1);

/// Which catch-up the projector makes through a [`Loader`].
pub(super) enum Catching<'a> {
    /// The start-up replay into empty read models, answered with 503s: batches of up to
    /// [`CATCH_UP_BATCH`] messages, written in steps, to the stream's end.
    StartUp,
    /// A backlog while the API answers: batches as large as a commit may be then
    /// ([`commit_due`]), each written whole, giving way to requests at `pace` (which the
    /// catch-up's later batches keep), for [`BESIDE_READS_HOLD`] at most.
    BesideReads(&'a mut Option<GiveWay>),
}

/// Where a catch-up through a [`Loader`] stopped.
pub(super) struct Caught {
    /// Messages the stream held past the last one written.
    pub pending: u64,
    /// How long the catch-up asks to give way to requests before its next batch.
    pub pause: Duration,
}

/// The batch being written: the documents it changed, its odds updates and the messages
/// the stream held past it, for what follows its write ([`Projector::written`]). Dropped
/// with them still here (an error or a panic ended the catch-up), after the loader has
/// waited for the write, it has the caches forget those documents all the same: the write
/// may have been made, and a document cached from before it would be served on.
struct Writing<'a> {
    read_models: &'a ReadModels,
    batch: Option<(Vec<Vec<u8>>, Vec<LiveUpdate>, u64)>,
}

impl Writing<'_> {
    /// Follows the batch being written up once its write is `done`, as after a commit
    /// ([`Projector::written`]).
    fn written(
        &mut self,
        projector: &Projector,
        done: Option<Written>,
        beside_reads: bool,
        held: &mut Held,
    ) -> anyhow::Result<()> {
        let Some(done) = done else {
            return Ok(());
        };
        if let Some((changed, live, pending)) = self.batch.take() {
            projector.written(done, beside_reads, &changed, live, held, pending)?;
        }
        Ok(())
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        if let Some((changed, ..)) = self.batch.take() {
            self.read_models.forget(&changed);
        }
    }
}

impl Projector {
    /// Catches up from `first`, as `catching` says ([the module](self)). Every batch's
    /// write is followed, once done (looked at between the next batch's messages, but in a
    /// slice given way), by what follows a commit; a batch's odds updates are held for the
    /// end of the catch-up.
    pub(super) async fn catch_up(
        &self,
        first: Decoded,
        decoded: &mut Ahead,
        held: &mut Held,
        mut catching: Catching<'_>,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Caught> {
        // No rebuild swaps the store meanwhile.
        let _no_swap = self.parts.read_models.lock_commits().await;
        let store = self.parts.read_models.load_full();
        self.room_for(0)?;
        let beside_reads = matches!(catching, Catching::BesideReads(_));
        // Before the loader, so dropped after it, once its write is done.
        let mut writing = Writing {
            read_models: &self.parts.read_models,
            batch: None,
        };
        let mut loader = off_the_workers(|| match catching {
            Catching::StartUp => Loader::new(&store, store.options().replay_bytes),
            Catching::BesideReads(_) => Loader::beside_reads(&store),
        })?;
        if !beside_reads {
            tracing::info!(
                from = first.seq,
                pending = first.pending,
                whole = loader.holds_all(),
                "replaying as a bulk load"
            );
        }
        let held_since = Instant::now();
        let mut caught = Caught {
            pending: first.pending,
            pause: Duration::ZERO,
        };
        let mut next = Some(first);
        while let Some(first) = next.take() {
            self.parts.faults.projector_batch();
            let began = Instant::now();
            let sliced = match &mut catching {
                Catching::StartUp => false,
                Catching::BesideReads(pace) => {
                    // A catch-up of an outage's backlog gives way to requests from its
                    // first batch, until a look says that none wait: on two cores the fold
                    // and the decoder ahead of it take both, and document reads during a
                    // catch-up of odds updates had a p99 several times what they had with
                    // the projector idle. Live updates wait for the end of a catch-up in
                    // any case; a paused one ends later.
                    if pace.is_none() && first.pending > GIVE_WAY_BACKLOG {
                        **pace =
                            Some(GiveWay::new(REQUESTS_FIRST).with_patience(CATCH_UP_PATIENCE));
                    }
                    pace.as_ref().is_some_and(GiveWay::gives_way)
                }
            };
            // Once the API answers, a commit's size is bounded by what it writes, so that
            // no commit holds readers long; while it gives way, a batch is also as short
            // as [`CATCH_UP_SLICE`], so that no batch takes a core from requests for long.
            let full = |batch: &Taken<'_>| {
                beside_reads && commit_due(&batch.batch)
                    || sliced && began.elapsed() >= CATCH_UP_SLICE
            };
            let mut batch = Taken::over(loader.batch(), self.whose());
            batch.take(first)?;
            let deadline = tokio::time::Instant::now() + CATCH_UP_WINDOW;
            let mut taken = 1;
            while taken < CATCH_UP_BATCH && batch.pending > 0 && !full(&batch) {
                match tokio::time::timeout_at(deadline, decoded.recv()).await {
                    Ok(Some(m)) => batch.take(m?)?,
                    Ok(None) => anyhow::bail!("message stream ended"),
                    Err(_) => break,
                }
                taken += 1;
                // The batch before followed up as soon as it is written, not once this one
                // is sealed: meanwhile the store answers with it and a cache without it.
                // (A batch in a slice is sealed within the slice.)
                if !sliced {
                    let done = loader.written_yet().transpose()?;
                    writing.written(self, done, beside_reads, held)?;
                }
            }
            self.refusals.keep_later(batch.drain_refusals());
            let Taken {
                batch,
                live,
                pending,
                ..
            } = batch;
            self.room_for(batch.bytes())?;
            if beside_reads {
                self.parts.faults.store_file_lost()?;
            }
            let mut changed = Vec::new();
            let sealed = off_the_workers(|| batch.seal(|key| changed.push(key.to_vec())))?;
            let done = off_the_workers(|| loader.write(sealed))?;
            let (held_bytes, held_records) = loader.held();
            tracing::debug!(
                held_bytes,
                held_records,
                read_back = loader.read_back(),
                whole = loader.holds_all(),
                pending,
                "catching up"
            );
            writing.written(self, done, beside_reads, held)?;
            writing.batch = Some((changed, live, pending));
            caught.pending = pending;
            if let Catching::BesideReads(pace) = &mut catching {
                match pace.as_mut() {
                    Some(p) if pending > 0 => caught.pause = p.pause_after(began.elapsed()),
                    _ => **pace = None,
                }
                if !caught.pause.is_zero() || held_since.elapsed() >= BESIDE_READS_HOLD {
                    break;
                }
            }
            if pending > 0 {
                next = tokio::select! {
                    m = self.next_message(decoded) => m?,
                    () = shutdown.cancelled() => None,
                };
            }
        }
        let done = off_the_workers(|| loader.finish())?;
        writing.written(self, done, beside_reads, held)?;
        Ok(caught)
    }

    /// What follows the write of a catch-up's batch, as after a commit: the progress, and
    /// its odds updates held for the end of the catch-up. A write made whole beside
    /// readers counts as a commit (`racing_commit_seconds`): readers waited for it.
    fn written(
        &self,
        done: Written,
        beside_reads: bool,
        changed: &[Vec<u8>],
        live: Vec<LiveUpdate>,
        held: &mut Held,
        pending: u64,
    ) -> anyhow::Result<()> {
        let Written { stats, took } = done;
        if beside_reads {
            metrics::histogram!("racing_commit_seconds").record(took);
        }
        self.after_commit(&stats, changed)?;
        held.extend(live);
        if pending == 0 || held.len() >= CATCH_UP_BATCH {
            self.go_live(held.take());
        }
        tracing::debug!(?stats, pending, "batch committed");
        self.progressed(&stats, pending);
        Ok(())
    }
}
