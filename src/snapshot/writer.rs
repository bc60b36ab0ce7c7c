//! Who writes snapshots, and when. One replica at a time holds the lease, a value in the
//! `{stream}_SNAPSHOT_LEASE` bucket that lapses (30 s as set up: the bucket's maximum
//! age) after it was last renewed, a third of that apart (`Lease::renew_every`) while
//! held; the holder writes a snapshot when one is due (events or time since the newest in the
//! bucket, or none of this layout yet: the first replica to build a store of a new
//! layout publishes it for the others), and never from a store that is behind, being
//! rebuilt, or damaged. An operator's `racing snapshot create` writes one at once on the
//! replica asked, with the same refusals, taking the lease for it where nobody holds it:
//! every upload is fenced by the lease ([`super::lease`]), so one replica at a time
//! sends, and the holder alone removes what failed uploads left ([`super::upload`]).
//!
//! A snapshot is skipped, its reason kept for `/status` and `racing snapshot list` and
//! counted in `racing_snapshot_skipped_total{reason}`, where there is no room for it: on
//! the disk beside the read models, in the snapshots' bucket, or in JetStream's storage
//! without leaving the log its margin ([`super::room`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::files::{NotWritten, Written};
use super::lease::Lease;
use super::listed::{Created, Listed};
use super::room::Lack;
use super::settings::Settings;
use super::{upload, Snapshots};
use crate::projector::Progress;
use crate::read_models::ReadModels;

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
    /// The last snapshot skipped for want of room since one was written, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Skipped>,
}

/// A snapshot skipped for want of room.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Skipped {
    /// Where room lacked.
    pub lack: Lack,
    /// Why, and what to change.
    pub reason: String,
    /// When (RFC 3339).
    pub at: String,
}

/// Why a snapshot was not made, inside [`Writer::create`].
enum NotMade {
    NoRoom(Lack, String),
    Lost(String),
    Failed(anyhow::Error),
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
    /// Whether the log said once that JetStream's room is not known here.
    said_unchecked: AtomicBool,
    /// When the last snapshot was skipped for want of room, since one was written: the
    /// writer tries again only a period (`every`) later.
    skipped_at: Mutex<Option<std::time::Instant>>,
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
            said_unchecked: AtomicBool::new(false),
            skipped_at: Mutex::default(),
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
    /// service stops; as the holder, removes what failed uploads left. Where the settings
    /// say this replica never writes, it only says which layout it runs, for the prune.
    pub async fn run(self: Arc<Self>) {
        let shutdown = self.shutdown.clone();
        if !self.settings.write {
            loop {
                self.lease.announce().await;
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    _ = tokio::time::sleep(self.lease.renew_every()) => {}
                }
            }
            let _ = tokio::time::timeout(LEASE_RELEASE, self.lease.withdraw()).await;
            return;
        }
        let lease = tokio::spawn(self.clone().keep_lease(shutdown.clone()));
        let mut tick = tokio::time::interval(
            self.lease
                .renew_every()
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
            tokio::select! {
                _ = shutdown.cancelled() => break,
                () = self.sweep() => {}
            }
            let not_now = tokio::select! {
                _ = shutdown.cancelled() => break,
                not_now = self.not_now() => not_now,
            };
            if not_now.is_some() {
                continue;
            }
            // Not abandoned at a stop: the file's write stops between two parts, and lets
            // go of the store before the service ends. After a skip for want of room, not
            // again for a period: room seldom comes back sooner, and each try writes a file.
            let skipped_lately = crate::supervise::lock(&self.skipped_at)
                .is_some_and(|at| at.elapsed() < self.settings.every);
            if self.due(newest.as_ref()) && !skipped_lately {
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
        let _ = tokio::time::timeout(LEASE_RELEASE, self.lease.withdraw()).await;
    }

    /// Writes a snapshot now, unless the store is behind, being rebuilt or damaged,
    /// another replica holds the writer's lease, or there is no room for it. A replica
    /// that does not write snapshots of its own lets go of the lease after.
    pub async fn create(&self) -> Result<Created, Refused> {
        let _one = self.one_at_a_time.try_lock().map_err(|_| {
            Refused::NotNow("a snapshot is already being written by this replica".into())
        })?;
        if let Some(why) = self.not_now().await {
            return Err(Refused::NotNow(why));
        }
        let term = match self.lease.hold().await {
            true => self.lease.term().await,
            false => None,
        };
        let Some(term) = term else {
            return Err(Refused::NotNow(match self.lease.holder().await {
                Some(holder) => format!(
                    "replica {} holds the snapshot writer's lease (layout {}): it writes them",
                    holder.replica, holder.layout
                ),
                None => "the snapshot writer's lease cannot be taken now".to_owned(),
            }));
        };
        crate::supervise::lock(&self.status).writing = true;
        tracing::info!(replica = %self.replica, "writing a snapshot of the read models");
        // Renewed while the file is written and sent, however long that takes: a replica
        // that writes no snapshot of its own has no other renewal, and the fence before
        // the metadata finds a lease that lapsed meanwhile over.
        let made = tokio::select! {
            made = self.make(term) => made,
            never = self.renew_while_making() => match never {},
        };
        if !self.settings.write {
            self.lease.release().await;
        }
        let mut status = crate::supervise::lock(&self.status);
        status.writing = false;
        match made {
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
                status.skipped = None;
                *crate::supervise::lock(&self.skipped_at) = None;
                Ok(created)
            }
            Err(NotMade::NoRoom(lack, reason)) => {
                metrics::counter!("racing_snapshot_skipped_total", "reason" => lack.label())
                    .increment(1);
                tracing::warn!(reason = %reason, "snapshot skipped for want of room");
                *crate::supervise::lock(&self.skipped_at) = Some(std::time::Instant::now());
                status.skipped = Some(Skipped {
                    lack,
                    reason: reason.clone(),
                    at: racing_events::Instant::now(),
                });
                Err(Refused::NotNow(reason))
            }
            Err(NotMade::Lost(why)) => {
                tracing::warn!(why = %why, "snapshot abandoned: the writer's lease passed on");
                status.last_error = Some(why.clone());
                Err(Refused::NotNow(why))
            }
            Err(NotMade::Failed(e)) => {
                status.last_error = Some(format!("{e:#}"));
                Err(Refused::Failed(e))
            }
        }
    }

    /// Writes the file, looks for room, sends it under the lease's `term`, prunes and
    /// sweeps: [`Writer::create`]'s work.
    async fn make(&self, term: u64) -> Result<Created, NotMade> {
        let layout = racing_projections::layout();
        let listed = self.snapshots.list().await.map_err(NotMade::Failed)?;
        let store = self.read_models.load_full();
        let estimate = estimate(&listed, layout, self.snapshots.data_dir());
        let written = self
            .snapshots
            .write(&store, estimate, &self.shutdown)
            .await
            .map_err(|e| match e {
                NotWritten::NoRoom(why) => NotMade::NoRoom(Lack::Disk, why),
                NotWritten::Failed(e) => NotMade::Failed(e),
            })?;
        drop(store);
        // From here on a stop does not wait: the file is written and has let go of the
        // store, and each step is a request to the cluster, which waits out the client's
        // timeout where a node is down. An upload cut short leaves chunks that no snapshot
        // names, which the next sweep removes, as after a failed one.
        let (listed, sent, removed) = tokio::select! {
            _ = self.shutdown.cancelled() => {
                return Err(NotMade::Failed(anyhow::anyhow!(
                    "the service stopped while the snapshot was sent"
                )));
            }
            sent = self.send(&written, term, layout) => sent?,
        };
        let (record_bytes, took) = (written.summary.record_bytes, written.took);
        drop(written);
        Ok(Created {
            listed,
            record_bytes,
            write_secs: took.as_secs_f64(),
            send_secs: sent.as_secs_f64(),
            removed,
        })
    }

    /// Sends the file `written` under the lease's `term` where the bucket and the log have
    /// room for it, then prunes the snapshots kept and sweeps what no snapshot names: the
    /// part of [`Writer::make`] that talks to the cluster. The snapshot as listed, the time
    /// its sending took, and what was pruned.
    async fn send(
        &self,
        written: &Written,
        term: u64,
        layout: &str,
    ) -> Result<(Listed, Duration, Vec<String>), NotMade> {
        let bucket = self
            .snapshots
            .bucket_info()
            .await
            .map_err(NotMade::Failed)?;
        let account = super::room::account(&self.js).await.map_err(|e| {
            NotMade::NoRoom(
                Lack::Log,
                format!("JetStream's use of storage cannot be read ({e:#}); no snapshot is sent without it"),
            )
        })?;
        let storage = super::room::Storage::of(&bucket, &account);
        let checked = super::room::check(written.summary.bytes, &storage, &self.settings)
            .map_err(|(lack, why)| NotMade::NoRoom(lack, why))?;
        if !checked && !self.said_unchecked.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "the log's room in JetStream is not looked at before a snapshot is sent: \
                 set RACING_NATS_FILE_STORE_MIB to the NATS servers' max_file_store"
            );
        }
        let (listed, sent) = self
            .snapshots
            .send(
                written,
                &self.replica,
                &self.lease,
                term,
                self.settings.send_rate,
                &self.shutdown,
            )
            .await
            .map_err(|e| match e {
                upload::Failed::Lost(_) => NotMade::Lost(e.to_string()),
                upload::Failed::Other(e) => NotMade::Failed(e),
            })?;
        let in_use = self.lease.in_use().await;
        let removed = self
            .snapshots
            .prune(self.settings.keep, layout, &listed.stream, &in_use)
            .await
            .map_err(NotMade::Failed)?;
        // The fence renewed the lease just now: it is this replica's while it sweeps.
        match self.snapshots.sweep(term).await {
            Ok(swept) => said_swept(&swept),
            Err(e) => tracing::warn!(
                error = format!("{e:#}"),
                "looking for chunks no snapshot names"
            ),
        }
        Ok((listed, sent, removed))
    }

    /// As the lease's holder, with no upload of this replica's under way: removes what
    /// no snapshot names (`Snapshots::sweep`), once the lease is renewed so that it stays
    /// this replica's meanwhile.
    async fn sweep(&self) {
        let Ok(_one) = self.one_at_a_time.try_lock() else {
            return;
        };
        let Some(term) = self.lease.term().await else {
            return;
        };
        if self.lease.renew(term).await.is_err() {
            return;
        }
        match self.snapshots.sweep(term).await {
            Ok(swept) => said_swept(&swept),
            Err(e) => tracing::warn!(
                error = format!("{e:#}"),
                "looking for chunks no snapshot names"
            ),
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

    /// Renews the lease, as long as it is polled: beside [`Writer::make`]. A renewal
    /// keeps the hold's term only where nobody wrote the lease since this replica last
    /// did, so it cannot carry an upload across a hold that broke.
    async fn renew_while_making(&self) -> std::convert::Infallible {
        loop {
            tokio::time::sleep(self.lease.renew_every()).await;
            self.lease.hold().await;
        }
    }

    /// Takes the lease when nobody holds it, and renews it while it is this replica's;
    /// and says which layout this replica runs.
    async fn keep_lease(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            let held = self.lease.hold().await;
            if held != self.holds_lease.swap(held, Ordering::Relaxed) {
                tracing::info!(replica = %self.replica, held, "the snapshot writer's lease");
            }
            self.lease.announce().await;
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(self.lease.renew_every()) => {}
            }
        }
    }
}

/// About the bytes of the next snapshot's file: a quarter more than the largest of this
/// layout in the bucket, or with none, an eighth of the store (more than a large store's
/// snapshot takes).
fn estimate(listed: &[Listed], layout: &str, data_dir: &std::path::Path) -> u64 {
    match listed
        .iter()
        .filter(|l| l.layout == layout)
        .map(|l| l.bytes)
        .max()
    {
        Some(bytes) => bytes.saturating_add(bytes / 4),
        None => {
            crate::read_models::active_dir(data_dir)
                .map(|dir| crate::disk::dir_bytes(&dir))
                .unwrap_or(0)
                / 8
        }
    }
}

/// Logs what a sweep removed, and what it left for later.
fn said_swept(swept: &upload::Swept) {
    if !swept.chunks.is_empty() || swept.marks > 0 {
        tracing::info!(
            chunks = swept.chunks.len(),
            marks = swept.marks,
            "removed what no snapshot names from the bucket"
        );
    }
    if swept.young > 0 {
        tracing::debug!(
            young = swept.young,
            "chunks of an upload under way, or lately failed, left for now"
        );
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
