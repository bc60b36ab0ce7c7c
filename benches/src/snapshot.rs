//! Snapshots of the read models (issue #60): what writing one of the replayed store
//! costs, and how soon a new replica is ready through it, against one that replays the
//! log. Both replicas start on an empty data directory against the same NATS, one after
//! the other, and are timed the same way, from the process's spawn to its first 200 of
//! `/readyz`; the floor of the same run (`crate::floor`) is what both are set against.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, ensure, Context as _};
use racing::snapshot::start::{StartPath, StartReport};
use racing::snapshot::Created;
use serde::Serialize;

use crate::figures::{thousands, verdict};
use crate::floor::FloorResult;
use crate::replay::dir_bytes;
use crate::service::{Service, Target, TICKS_PER_SECOND};

/// A replica ready through a snapshot in at most this many times the floor's seconds.
pub const SNAPSHOT_FLOOR: f64 = 1.5;
/// A replica ready through a replay in at most this many times the floor's seconds.
pub const REPLAY_FLOOR: f64 = 2.0;

/// The snapshot written, and the two replicas.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotResult {
    /// The snapshot, as `POST /snapshots` answered: its size, records, checkpoint, and
    /// the seconds writing its file and sending it took.
    pub created: Created,
    /// Bytes the store it was written from takes on disk.
    pub store_bytes: u64,
    /// The replica that loaded it.
    pub through_snapshot: Replica,
    /// The replica that replayed the log (`RACING_SNAPSHOT_LOAD=false`).
    pub through_replay: Replica,
}

/// A replica started on an empty data directory, until ready.
#[derive(Debug, Clone, Serialize)]
pub struct Replica {
    /// How its start went, as its `/status` says.
    pub start: StartReport,
    /// Seconds from its spawn to its first 200 of `/readyz`.
    pub ready_secs: f64,
    /// Its peak resident memory by then, KiB (`VmHWM`).
    pub peak_rss_kib: u64,
    /// Bytes it had written to storage by then (the fetched snapshot's file included).
    pub written_bytes: u64,
    /// CPU seconds it had used by then.
    pub cpu_secs: f64,
    /// Bytes its store takes on disk once it stopped.
    pub store_bytes: u64,
}

/// Writes a snapshot of the store in `store` (replayed first if the replay part did not
/// run) through a service started on it, then starts the two replicas, each in a data
/// directory under `work` that is removed afterwards.
pub async fn run(target: &Target, store: &Path, work: &Path) -> anyhow::Result<SnapshotResult> {
    let client = reqwest::Client::new();
    // Idle before the write: its background check of the store would share the machine.
    let source = Service::start_ready(target, store, "snapshot-source").await?;
    let created = create(&client, &source).await;
    source.stop().await?;
    let created = created?;
    let store_bytes = dir_bytes(&racing::read_models::active_dir(store)?)?;
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    eprintln!(
        "bench:   snapshot {}: {} records ({:.1} MiB) in {:.1} MiB, written in {:.2} s and sent in {:.2} s; the store {:.1} MiB",
        created.listed.name,
        thousands(created.listed.records as f64),
        mib(created.record_bytes),
        mib(created.listed.bytes),
        created.write_secs,
        created.send_secs,
        mib(store_bytes)
    );
    let dir = work.join("replica");
    let through_snapshot = replica(target, &dir, true, &client).await?;
    ensure!(
        through_snapshot.start.path == StartPath::Snapshot
            && through_snapshot.start.snapshot.as_deref() == Some(created.listed.name.as_str()),
        "the replica asked to load the snapshot started as {:?}",
        through_snapshot.start
    );
    let through_replay = replica(target, &dir, false, &client).await?;
    ensure!(
        through_replay.start.path == StartPath::Replay,
        "the replica asked to replay started as {:?}",
        through_replay.start
    );
    Ok(SnapshotResult {
        created,
        store_bytes,
        through_snapshot,
        through_replay,
    })
}

/// `POST /snapshots` on `service`'s admin listener: the snapshot it wrote and sent.
pub(crate) async fn create(client: &reqwest::Client, service: &Service) -> anyhow::Result<Created> {
    let answer = client
        .post(service.admin_url("/snapshots"))
        .timeout(Duration::from_secs(3600))
        .send()
        .await
        .context("POST /snapshots")?;
    let status = answer.status();
    let body = answer.text().await?;
    if status != reqwest::StatusCode::CREATED {
        bail!("POST /snapshots: {status}: {body}");
    }
    serde_json::from_str(&body).with_context(|| format!("POST /snapshots answered {body}"))
}

/// Starts a replica on the empty directory `dir`, loading the newest snapshot or
/// replaying the log as `load` says, and measures it until ready; then stops it, and
/// removes `dir` once its store is measured.
async fn replica(
    target: &Target,
    dir: &Path,
    load: bool,
    client: &reqwest::Client,
) -> anyhow::Result<Replica> {
    let _ = std::fs::remove_dir_all(dir);
    let mut target = target.clone();
    target
        .settings
        .push(("RACING_SNAPSHOT_LOAD".into(), load.to_string()));
    let label = if load {
        "replica-snapshot"
    } else {
        "replica-replay"
    };
    let mut service = Service::start(&target, dir, label).await?;
    let took = service
        .wait_ready(client, Duration::from_millis(10), Duration::from_secs(3600))
        .await?;
    let (written, _) = service.written_bytes()?;
    let cpu_secs = service.cpu_ticks()? as f64 / TICKS_PER_SECOND as f64;
    let peak_rss_kib = service.peak_rss_kib()?;
    let start = start_report(client, &service).await;
    service.stop().await?;
    let start = start?;
    let store_bytes = dir_bytes(&racing::read_models::active_dir(dir)?)?;
    let _ = std::fs::remove_dir_all(dir);
    eprintln!(
        "bench:   {label}: ready in {:.2} s ({:?}{}), peak RSS {} MiB, {} bytes written, {cpu_secs:.1} CPU s, store {:.1} MiB",
        took.as_secs_f64(),
        start.path,
        start
            .load_secs
            .map(|s| format!(", fetched and loaded in {s:.2} s"))
            .unwrap_or_default(),
        peak_rss_kib >> 10,
        thousands(written as f64),
        store_bytes as f64 / (1 << 20) as f64
    );
    Ok(Replica {
        start,
        ready_secs: took.as_secs_f64(),
        peak_rss_kib,
        written_bytes: written,
        cpu_secs,
        store_bytes,
    })
}

/// The `start` of `service`'s `/status`.
async fn start_report(client: &reqwest::Client, service: &Service) -> anyhow::Result<StartReport> {
    let status: serde_json::Value = client
        .get(service.admin_url("/status"))
        .timeout(Duration::from_secs(30))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await
        .context("the replica's /status")?;
    serde_json::from_value(status.get("start").cloned().unwrap_or_default())
        .context("the start of the replica's /status")
}

impl SnapshotResult {
    /// The part's rows of the table (`crate::report`), each replica's time set against the
    /// `floor` of the same run, and judged where `judged` and there is one.
    pub fn rows(&self, floor: Option<&FloorResult>, judged: bool) -> Vec<[String; 7]> {
        let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
        let c = &self.created;
        let (snapshot, replay) = (&self.through_snapshot, &self.through_replay);
        let events = c.listed.checkpoint.max(1) as f64;
        let floor_secs = floor.map(|f| f.secs);
        let baseline = |text: String| match floor {
            Some(_) => text,
            None => "no floor in this run".into(),
        };
        let ratio =
            |of: f64, to: Option<f64>| to.map_or("-".into(), |to| format!("{:.2}", of / to));
        let judge = |of: f64, most: f64| {
            String::from(verdict(
                judged && floor.is_some(),
                floor_secs.is_some_and(|f| of <= most * f),
            ))
        };
        let ready = |r: &Replica| {
            format!(
                "{:.1} s{}; {} MiB",
                r.ready_secs,
                r.start
                    .load_secs
                    .map(|s| format!(" ({s:.1} s fetching and loading)"))
                    .unwrap_or_default(),
                thousands((r.peak_rss_kib >> 10) as f64)
            )
        };
        vec![
            [
                format!(
                    "Snapshot ({} records, {:.1} MiB of keys and values, at {})",
                    thousands(c.listed.records as f64),
                    mib(c.record_bytes),
                    thousands(c.listed.checkpoint as f64)
                ),
                "create: seconds (writing its file; sending it); its file, MiB; ratio: the file over the store it was written from (baseline)".into(),
                format!(
                    "{:.1} s ({:.1}; {:.1}); {:.1} MiB",
                    c.write_secs + c.send_secs,
                    c.write_secs,
                    c.send_secs,
                    mib(c.listed.bytes)
                ),
                format!("{:.1} MiB", mib(self.store_bytes)),
                format!("{:.2}", c.listed.bytes as f64 / self.store_bytes.max(1) as f64),
                String::new(),
                String::new(),
            ],
            [
                String::new(),
                "replica ready through a snapshot: spawn to /readyz 200 on an empty directory; peak RSS; ratio: over the floor's seconds (baseline)".into(),
                ready(snapshot),
                baseline(floor_secs.map(|f| format!("{f:.1} s")).unwrap_or_default()),
                ratio(snapshot.ready_secs, floor_secs),
                format!("≤ {SNAPSHOT_FLOOR:.1} × the floor"),
                judge(snapshot.ready_secs, SNAPSHOT_FLOOR),
            ],
            [
                String::new(),
                "replica ready through a replay (RACING_SNAPSHOT_LOAD=false), the same way".into(),
                ready(replay),
                baseline(floor_secs.map(|f| format!("{f:.1} s")).unwrap_or_default()),
                ratio(replay.ready_secs, floor_secs),
                format!("≤ {REPLAY_FLOOR:.1} × the floor"),
                judge(replay.ready_secs, REPLAY_FLOOR),
            ],
            [
                String::new(),
                "ready through a snapshot over through a replay".into(),
                String::new(),
                String::new(),
                format!("{:.2}", snapshot.ready_secs / replay.ready_secs),
                String::new(),
                String::new(),
            ],
            [
                String::new(),
                "the replicas' stores on disk, MiB, and bytes written to storage per event by ready: through a snapshot; through a replay; ratio: the stores over the floor's (baseline)".into(),
                format!(
                    "{:.1}, {:.0}; {:.1}, {:.0}",
                    mib(snapshot.store_bytes),
                    snapshot.written_bytes as f64 / events,
                    mib(replay.store_bytes),
                    replay.written_bytes as f64 / events
                ),
                baseline(
                    floor
                        .map(|f| format!("{:.1} MiB", mib(f.store_bytes)))
                        .unwrap_or_default(),
                ),
                match floor {
                    Some(f) => format!(
                        "{:.2}; {:.2}",
                        snapshot.store_bytes as f64 / f.store_bytes.max(1) as f64,
                        replay.store_bytes as f64 / f.store_bytes.max(1) as f64
                    ),
                    None => "-".into(),
                },
                String::new(),
                String::new(),
            ],
        ]
    }
}
