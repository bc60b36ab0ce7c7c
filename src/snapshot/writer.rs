//! Who writes snapshots, and when. One replica at a time holds the lease, a value in the
//! `{stream}_SNAPSHOT_LEASE` bucket that lapses [`LEASE_TTL`] after it was last renewed;
//! the holder writes a snapshot when one is due (events or time since the newest in the
//! bucket, or none of this layout yet: the first replica to build a store of a new
//! layout publishes it for the others), and never from a store that is behind, being
//! rebuilt, or damaged. An operator's `racing snapshot create` writes one at once on the
//! replica asked, lease or not, with the same refusals.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::lease::Lease;
use super::{Created, Listed, Settings, Snapshots};
use crate::projector::Progress;
use crate::read_models::ReadModels;

/// How often the holder renews the lease (which lapses after
/// [`crate::nats::buckets::SNAPSHOT_LEASE_TTL`]), and the others try to take it.
const LEASE_RENEW: Duration = Duration::from_secs(10);

/// How long a stop waits to let go of the lease before leaving it to lapse.
const LEASE_RELEASE: Duration = Duration::from_secs(2);

/// Where the writer stands, for `/status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WriterStatus {
    /// Whether this replica holds the lease.
    pub holds_lease: bool,
    /// Whether a snapshot is being written now.
    pub writing: bool,
    /// The last snapshot this replica wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Created>,
    /// The newest snapshot in the bucket of this layout and stream, when last listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest: Option<Listed>,
    /// Why the last attempt failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// Why a snapshot is not written now.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The store is not in a state to be snapshotted.
    #[error("{0}")]
    NotNow(String),
    /// Writing it failed.
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

/// What the writer reads of the service.
pub struct Writer {
    snapshots: Snapshots,
    lease: Lease,
    replica: String,
    settings: Settings,
    read_models: Arc<ReadModels>,
    progress: watch::Receiver<Progress>,
    rebuilding: Box<dyn Fn() -> bool + Send + Sync>,
    most_behind: u64,
    js: jetstream::Context,
    shutdown: CancellationToken,
    holds_lease: AtomicBool,
    status: Mutex<WriterStatus>,
    /// One snapshot at a time from this replica.
    one_at_a_time: tokio::sync::Mutex<()>,
}

/// The parts a [`Writer`] is made of.
pub struct Parts {
    /// The bucket.
    pub snapshots: Snapshots,
    /// The writer's lease.
    pub lease: Lease,
    /// This replica's id.
    pub replica: String,
    /// When to write.
    pub settings: Settings,
    /// The store in use.
    pub read_models: Arc<ReadModels>,
    /// The projector's progress.
    pub progress: watch::Receiver<Progress>,
    /// Whether a rebuild of the read models is under way.
    pub rebuilding: Box<dyn Fn() -> bool + Send + Sync>,
    /// Most events the store may be behind the stream's end to be snapshotted.
    pub most_behind: u64,
    /// For the stream's end.
    pub js: jetstream::Context,
    /// The service stopping: a snapshot being written stops with it.
    pub shutdown: CancellationToken,
}

impl Writer {
    /// A writer of these parts.
    pub fn new(parts: Parts) -> Arc<Writer> {
        Arc::new(Writer {
            snapshots: parts.snapshots,
            lease: parts.lease,
            replica: parts.replica,
            settings: parts.settings,
            read_models: parts.read_models,
            progress: parts.progress,
            rebuilding: parts.rebuilding,
            most_behind: parts.most_behind,
            js: parts.js,
            shutdown: parts.shutdown,
            holds_lease: AtomicBool::new(false),
            status: Mutex::default(),
            one_at_a_time: tokio::sync::Mutex::new(()),
        })
    }

    /// The bucket.
    pub fn snapshots(&self) -> &Snapshots {
        &self.snapshots
    }

    /// Where it stands.
    pub fn status(&self) -> WriterStatus {
        let mut status = crate::supervise::lock(&self.status).clone();
        status.holds_lease = self.holds_lease.load(Ordering::Relaxed);
        status
    }

    /// Renews or takes the lease, and writes a snapshot when one is due, until the
    /// service stops. Does nothing where the settings say this replica never writes.
    pub async fn run(self: Arc<Self>) {
        let shutdown = self.shutdown.clone();
        if !self.settings.write {
            return;
        }
        let lease = tokio::spawn(self.clone().keep_lease(shutdown.clone()));
        let mut tick = tokio::time::interval(
            LEASE_RENEW
                .min(self.settings.every / 4)
                .max(Duration::from_millis(200)),
        );
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tick.tick() => {}
            }
            // Each writing replica keeps the newest snapshot's age current in its metrics,
            // the lease's holder or not.
            // A stop does not wait for the answers: with a node of the cluster down, a
            // listing waits out the client's request timeout.
            let newest = tokio::select! {
                _ = shutdown.cancelled() => break,
                newest = self.newest() => newest,
            };
            let newest = match newest {
                Ok(newest) => newest,
                Err(e) => {
                    tracing::warn!(error = format!("{e:#}"), "listing snapshots");
                    continue;
                }
            };
            if !self.holds_lease.load(Ordering::Relaxed) {
                continue;
            }
            let not_now = tokio::select! {
                _ = shutdown.cancelled() => break,
                not_now = self.not_now() => not_now,
            };
            if not_now.is_some() {
                continue;
            }
            // Not abandoned at a stop: the file's write stops between two parts, and lets
            // go of the store before the service ends.
            if self.due(newest.as_ref()) {
                if let Err(e) = self.create().await {
                    tracing::warn!(error = %e, "the snapshot due was not written");
                }
            }
        }
        lease.abort();
        // A lease let go of at a stop lets another replica take it at once.
        // Bounded: where the bucket does not answer, the lease lapses by itself.
        if self.holds_lease.swap(false, Ordering::Relaxed) {
            let _ = tokio::time::timeout(LEASE_RELEASE, self.lease.release()).await;
        }
    }

    /// Writes a snapshot now, unless the store is behind, being rebuilt or damaged.
    pub async fn create(&self) -> Result<Created, Refused> {
        let _one = self.one_at_a_time.try_lock().map_err(|_| {
            Refused::NotNow("a snapshot is already being written by this replica".into())
        })?;
        if let Some(why) = self.not_now().await {
            return Err(Refused::NotNow(why));
        }
        crate::supervise::lock(&self.status).writing = true;
        tracing::info!(replica = %self.replica, "writing a snapshot of the read models");
        let store = self.read_models.load_full();
        let created = self
            .snapshots
            .create(&store, &self.replica, self.settings.keep, &self.shutdown)
            .await;
        drop(store);
        let mut status = crate::supervise::lock(&self.status);
        status.writing = false;
        match created {
            Ok(created) => {
                record(&created);
                tracing::info!(
                    snapshot = %created.listed.name,
                    checkpoint = created.listed.checkpoint,
                    records = created.listed.records,
                    bytes = created.listed.bytes,
                    write_ms = (created.write_secs * 1000.0) as u64,
                    send_ms = (created.send_secs * 1000.0) as u64,
                    removed = created.removed.len(),
                    "snapshot of the read models written"
                );
                status.last = Some(created.clone());
                status.last_error = None;
                Ok(created)
            }
            Err(e) => {
                status.last_error = Some(format!("{e:#}"));
                Err(Refused::Failed(e))
            }
        }
    }

    /// Why the store in use may not be snapshotted now, if it may not.
    async fn not_now(&self) -> Option<String> {
        let progress = *self.progress.borrow();
        if !progress.caught_up {
            return Some("the read models are still being built from the log".into());
        }
        if (self.rebuilding)() {
            return Some("a rebuild of the read models is under way".into());
        }
        if self.read_models.in_repair() {
            return Some("the read models are damaged and being rebuilt".into());
        }
        if let Some(problem) = self.read_models.cannot_write() {
            return Some(format!("the read models cannot be written ({problem})"));
        }
        let last = match self.js.get_stream(self.snapshots.stream()).await {
            Ok(stream) => stream.cached_info().state.last_sequence,
            Err(e) => return Some(format!("the stream's end is not known: {e}")),
        };
        let behind = last.saturating_sub(progress.checkpoint);
        let most = self.most_behind;
        (behind > most)
            .then(|| format!("the read models are {behind} events behind the stream (most {most})"))
    }

    /// The newest snapshot of this layout and of the stream the store is built from,
    /// kept in the status and its age in the metrics.
    async fn newest(&self) -> anyhow::Result<Option<Listed>> {
        let store = self.read_models.load_full();
        let identity = tokio::task::spawn_blocking(move || store.stream()).await??;
        let layout = racing_projections::layout();
        let newest = self
            .snapshots
            .list()
            .await?
            .into_iter()
            .find(|l| l.layout == layout && Some(&l.stream) == identity.as_ref());
        if let Some(age) = newest.as_ref().and_then(age) {
            metrics::gauge!("racing_snapshot_age_seconds").set(age.as_secs_f64());
        }
        crate::supervise::lock(&self.status).newest = newest.clone();
        Ok(newest)
    }

    /// Whether a snapshot is due after `newest`: none of this layout and stream yet, or
    /// enough events or time since it.
    fn due(&self, newest: Option<&Listed>) -> bool {
        let checkpoint = self.progress.borrow().checkpoint;
        match newest {
            _ if checkpoint == 0 => false,
            None => true,
            Some(newest) if checkpoint <= newest.checkpoint => false,
            Some(newest) => {
                let old = age(newest).is_none_or(|age| age >= self.settings.every);
                checkpoint - newest.checkpoint >= self.settings.every_events || old
            }
        }
    }

    /// Takes the lease when nobody holds it, and renews it while it is this replica's.
    async fn keep_lease(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            let held = self.lease.hold().await;
            if held != self.holds_lease.swap(held, Ordering::Relaxed) {
                tracing::info!(replica = %self.replica, held, "the snapshot writer's lease");
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(LEASE_RENEW) => {}
            }
        }
    }
}

/// How long ago `listed` was written, if it says when.
fn age(listed: &Listed) -> Option<Duration> {
    let at = listed.created_at.parse::<jiff::Timestamp>().ok()?;
    jiff::Timestamp::now().duration_since(at).try_into().ok()
}

/// The metrics of the last snapshot written.
fn record(created: &Created) {
    metrics::gauge!("racing_snapshot_last_bytes").set(created.listed.bytes as f64);
    metrics::gauge!("racing_snapshot_last_checkpoint").set(created.listed.checkpoint as f64);
    metrics::gauge!("racing_snapshot_last_write_seconds")
        .set(created.write_secs + created.send_secs);
    metrics::gauge!("racing_snapshot_age_seconds").set(0.0);
}
