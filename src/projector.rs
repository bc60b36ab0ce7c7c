//! The projector: reads the stream from the message after the checkpoint, folds each event
//! into the read models, and commits every batch with the sequence it reached. Batches are
//! large while replaying and small when live: a batch closes when it is full or a few
//! milliseconds after its first message.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use futures::StreamExt;
use racing_events::{Envelope, Event};
use racing_projections::{BatchStats, Outcome, Store};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::live::{odds_frame, OddsDelta, OddsHub};
use crate::read_models::ReadModels;

/// Most messages in one batch.
const MAX_BATCH: usize = 4096;
/// Longest a live message waits for others to share its commit.
const BATCH_WINDOW: Duration = Duration::from_millis(5);
/// Pause before re-creating the consumer after an error.
const RETRY_DELAY: Duration = Duration::from_millis(500);
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
}

/// The projector's handle on shared state.
pub struct Projector {
    /// The read models.
    pub read_models: Arc<ReadModels>,
    /// JetStream context.
    pub js: jetstream::Context,
    /// Stream name.
    pub stream: String,
    /// Published after every commit.
    pub progress: watch::Sender<Progress>,
    /// Set once caught up; the API answers 503 until then.
    pub ready: Arc<AtomicBool>,
    /// Where applied odds updates go live, after their batch commits.
    pub hub: Arc<OddsHub>,
}

impl Projector {
    /// Runs until `shutdown`; re-creates its consumer from the checkpoint after any error,
    /// so that a message is never skipped and never applied twice.
    pub async fn run(self, shutdown: CancellationToken) {
        // A store already at the stream's end is ready at once, before any message.
        if let Ok(mut s) = self.js.get_stream(&self.stream).await {
            if let (Ok(info), Ok(cp)) = (s.info().await, self.read_models.load().checkpoint()) {
                if cp >= info.state.last_sequence {
                    self.mark_caught_up(cp);
                }
            }
        }
        while !shutdown.is_cancelled() {
            match self.consume(&shutdown).await {
                Ok(()) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "projector interrupted; resuming from checkpoint");
                    tokio::select! {
                        _ = tokio::time::sleep(RETRY_DELAY) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
            }
        }
        if let Err(e) = self.read_models.load_full().flush().await {
            tracing::error!(error = %e, "flushing the read models at shutdown");
        }
    }

    fn mark_caught_up(&self, checkpoint: u64) {
        if !self.ready.swap(true, Ordering::SeqCst) {
            tracing::info!(checkpoint, "projector caught up; API ready");
        }
        self.progress.send_modify(|p| {
            p.checkpoint = p.checkpoint.max(checkpoint);
            p.caught_up = true;
        });
    }

    async fn consume(&self, shutdown: &CancellationToken) -> anyhow::Result<()> {
        let start = self.read_models.load().checkpoint()? + 1;
        let stream = self.js.get_stream(&self.stream).await?;
        let consumer = stream
            .create_consumer(consumer::pull::OrderedConfig {
                deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                    start_sequence: start,
                },
                ..Default::default()
            })
            .await?;
        let mut messages = consumer.messages().await?;
        tracing::info!(from = start, stream = %self.stream, "projecting");
        loop {
            let first = tokio::select! {
                m = tokio::time::timeout(STALL_CHECK, messages.next()) => match m {
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
            let mut batch = vec![first?];
            let deadline = tokio::time::Instant::now() + BATCH_WINDOW;
            while batch.len() < MAX_BATCH {
                match tokio::time::timeout_at(deadline, messages.next()).await {
                    Ok(Some(m)) => batch.push(m?),
                    Ok(None) => anyhow::bail!("message stream ended"),
                    Err(_) => break,
                }
            }
            let (stats, pending) = self.commit(&batch).await?;
            tracing::debug!(?stats, pending, "batch committed");
            self.progress.send_modify(|p| {
                p.checkpoint = stats.checkpoint;
                p.applied += stats.applied;
                p.duplicates += stats.duplicates;
                p.dead_letters += stats.dead_letters;
            });
            if pending == 0 {
                self.mark_caught_up(stats.checkpoint);
            }
        }
    }

    /// After a quiet spell: an error (so the consumer is re-created from the checkpoint)
    /// if the stream holds messages past the checkpoint that the consumer has not
    /// delivered, or if the stream's end cannot be read: after its leader's node died, a
    /// stream may answer nothing for a while, and a consumer from before may never
    /// deliver again.
    async fn check_not_stalled(&self) -> anyhow::Result<()> {
        let last = tokio::time::timeout(STALL_CHECK, async {
            let mut stream = self.js.get_stream(&self.stream).await?;
            anyhow::Ok(stream.info().await?.state.last_sequence)
        })
        .await
        .map_err(|_| anyhow::anyhow!("the stream's end could not be read within {STALL_CHECK:?}"))?
        .map_err(|e| anyhow::anyhow!("the stream's end could not be read: {e}"))?;
        let checkpoint = self.read_models.load().checkpoint()?;
        if last > checkpoint {
            anyhow::bail!(
                "consumer delivered nothing for {STALL_CHECK:?} while the stream is at {last} and the read models at {checkpoint}"
            );
        }
        Ok(())
    }

    /// Folds a batch of messages and commits it to the store in use, then hands its odds
    /// updates to the live sessions; returns what it did and how many messages the stream
    /// still holds. No rebuild swaps the store while it runs.
    async fn commit(&self, messages: &[jetstream::Message]) -> anyhow::Result<(BatchStats, u64)> {
        let folded = {
            let _no_swap = self.read_models.lock_commits().await;
            fold_messages(&self.read_models.load(), messages, true)?
        };
        let stats = folded.stats;
        metrics::counter!("racing_events_applied_total").increment(stats.applied);
        metrics::counter!("racing_events_duplicate_total").increment(stats.duplicates);
        metrics::counter!("racing_dead_letters_total").increment(stats.dead_letters);
        for delta in folded.live {
            self.hub.publish(delta);
        }
        Ok((stats, folded.pending))
    }
}

/// What [`fold_messages`] did.
pub struct Folded {
    /// Counts and the checkpoint reached.
    pub stats: BatchStats,
    /// Messages the stream held past the last one, when it was delivered.
    pub pending: u64,
    /// The odds updates applied, ready to go live.
    pub live: Vec<OddsDelta>,
}

/// Folds `messages` into `store` and commits them with the checkpoint they reach, in one
/// batch. Refused events become dead letters (logged if `log_dead_letters`).
pub fn fold_messages(
    store: &Store,
    messages: &[jetstream::Message],
    log_dead_letters: bool,
) -> anyhow::Result<Folded> {
    let mut batch = store.batch()?;
    let mut pending = 0;
    let mut live = Vec::new();
    for m in messages {
        let info = m
            .info()
            .map_err(|e| anyhow::anyhow!("message metadata: {e}"))?;
        pending = info.pending;
        let seq = info.stream_sequence;
        let subject = m.subject.as_str();
        match Envelope::decode(subject, &m.payload) {
            Ok(env) => {
                let outcome = batch.apply(seq, &env)?;
                if let (Some(Outcome::Applied), Event::OddsUpdated(o)) = (outcome, &env.event) {
                    let published =
                        crate::live::published_at(info.published.unix_timestamp_nanos());
                    let race_number = u8::try_from(o.race_number).unwrap_or(0);
                    live.push(OddsDelta {
                        frame: odds_frame(&o.date, race_number, seq, &published, &o.odds),
                        date: o.date.clone(),
                        race_number,
                        seq,
                    });
                }
            }
            Err(reason) => {
                if log_dead_letters {
                    tracing::warn!(seq, subject, %reason, "dead letter");
                }
                batch.dead_letter(seq, subject, &reason.to_string(), &m.payload);
            }
        }
    }
    let stats = batch.commit()?;
    Ok(Folded {
        stats,
        pending,
        live,
    })
}
