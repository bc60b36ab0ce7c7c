//! A start from a snapshot: when the store is empty (a new replica, or one whose store
//! was of an older layout, damaged, or another stream's, and so made anew), the newest
//! snapshot of this layout and stream is fetched, its digest checked, and loaded into a
//! directory of its own; the projector then goes on from its checkpoint as from any
//! store's. A snapshot that fails any check is refused, the next older one is tried, and
//! with none left the log is replayed, as without snapshots. Nothing of a refused
//! snapshot is ever served: its directory is removed before the service starts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use racing_projections::{Options, Store};
use serde::{Deserialize, Serialize};

use super::lease::Lease;
use super::listed::Listed;
use super::settings::Settings;
use super::Snapshots;
use crate::starting::Starting;

/// The file in a data directory naming the replica that last ran on it.
const LAST_REPLICA: &str = "last-replica";

/// The replica that last ran on `data_dir`, if one did; and `replica` noted there as the
/// next start's. A directory copied from a live replica names that one: a start on the
/// copy then replays rather than waits for its snapshot, which costs time, never data.
pub fn predecessor(data_dir: &Path, replica: &str) -> Option<String> {
    let file = data_dir.join(LAST_REPLICA);
    let last = std::fs::read_to_string(&file)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    if let Err(e) = std::fs::write(&file, replica) {
        tracing::warn!(error = %e, file = %file.display(), "noting this replica's id");
    }
    last
}

/// How this start got its read models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartPath {
    /// It opened the store it had, and goes on from its checkpoint.
    #[default]
    Store,
    /// It loaded a snapshot, and goes on from its checkpoint.
    Snapshot,
    /// It replays the log from its start.
    Replay,
}

/// How a start went, as `/status` and `/readyz` show it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StartReport {
    /// Which path it took.
    pub path: StartPath,
    /// The snapshot loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// The checkpoint it started from.
    pub from_checkpoint: u64,
    /// Seconds fetching and loading the snapshot took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_secs: Option<f64>,
    /// Seconds it waited for another replica's snapshot, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_secs: Option<f64>,
    /// Why it did not wait for the snapshot of the replica holding the writer's lease,
    /// when that replica is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_waited: Option<String>,
    /// Snapshots passed over or refused, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

/// A store loaded from a snapshot, in a directory of its own.
pub struct Loaded {
    /// The store.
    pub store: Store,
    /// Its directory.
    pub dir: PathBuf,
    /// The snapshot.
    pub listed: Listed,
}

/// Where a start may find a snapshot, and whether it may wait for one.
pub struct Sources<'a> {
    /// The bucket, where snapshots are loaded.
    pub snapshots: Option<&'a Snapshots>,
    /// The writer's lease, where there is one.
    pub lease: Option<&'a Lease>,
    /// Whether this replica writes snapshots, and how long it waits for another's.
    pub settings: &'a Settings,
    /// Whether the replica of an id is gone: it ran on this data directory before this
    /// process (two processes never share one: the store is locked), or its presence
    /// lapsed from the replicas' registry. Its lease outlives it by the lease's life;
    /// its snapshot never comes.
    pub gone: &'a (dyn Fn(&str) -> bool + Sync),
}

/// How often a start waiting for another replica's snapshot looks for it.
const WAIT_POLL: Duration = Duration::from_secs(2);

/// The store a start serves from: `store` (opened, or made anew, in `dir` by the
/// start-up), or, when it is empty and the stream is not, a snapshot's if one loads. The
/// loaded store's directory becomes the one in use. Returns the store, its directory and
/// how the start went.
///
/// With no snapshot of this layout and stream, a replica that writes snapshots takes the
/// writer's lease, replays the log and publishes one once caught up; a replica that finds
/// the lease held by another of this layout waits for that one's snapshot (up to the
/// settings' `wait`, and only while the other keeps the lease), so that a new layout is
/// replayed once per cluster rather than by every replica.
pub async fn choose(
    store: Store,
    dir: PathBuf,
    sources: Sources<'_>,
    identity: &str,
    stream_last: u64,
    data_dir: &Path,
    starting: &Starting,
) -> anyhow::Result<(Store, PathBuf, StartReport)> {
    let checkpoint = store.checkpoint()?;
    let empty = checkpoint == 0 && stream_last > 0;
    let snapshots = match sources.snapshots {
        Some(snapshots) if empty => snapshots,
        _ => {
            let report = StartReport {
                path: if empty {
                    StartPath::Replay
                } else {
                    StartPath::Store
                },
                from_checkpoint: checkpoint,
                ..StartReport::default()
            };
            return Ok((store, dir, report));
        }
    };
    let options = store.options();
    let (mut loaded, mut report) =
        load_newest(snapshots, identity, data_dir, options, starting).await;
    if loaded.is_none() {
        if let Some(lease) = sources.lease {
            let waited =
                wait_for_peer(snapshots, lease, &sources, identity, &mut report, starting).await;
            if waited.is_some() {
                let (again, mut second) =
                    load_newest(snapshots, identity, data_dir, options, starting).await;
                second.waited_secs = waited.map(|w| w.as_secs_f64());
                (loaded, report) = (again, second);
            }
        }
    }
    match loaded {
        Some(loaded) => {
            // The empty store goes before anything points past it.
            drop(store);
            crate::read_models::make_active(data_dir, &loaded.dir)?;
            Ok((loaded.store, loaded.dir, report))
        }
        None => Ok((store, dir, report)),
    }
}

/// With no snapshot to load: takes the lease if this replica writes snapshots and nobody
/// holds it (then it replays, and publishes one: `None`); or, while another replica of
/// this layout holds it, waits for a snapshot not `refused` yet to appear, unless that
/// one is gone (said in the report's `not_waited`). How long it waited, when one did.
async fn wait_for_peer(
    snapshots: &Snapshots,
    lease: &Lease,
    sources: &Sources<'_>,
    identity: &str,
    report: &mut StartReport,
    starting: &Starting,
) -> Option<Duration> {
    let settings = sources.settings;
    if settings.write && lease.hold().await {
        tracing::info!(
            "no snapshot of this layout: this replica replays the log and publishes one"
        );
        return None;
    }
    let layout = racing_projections::layout();
    let started = Instant::now();
    let mut said = false;
    while started.elapsed() < settings.wait {
        let holder = lease.holder().await?;
        if lease.is_me(&holder) || holder.layout != layout {
            return None;
        }
        if (sources.gone)(&holder.replica) {
            let why = format!(
                "replica {} holds the snapshot writer's lease but is gone: its snapshot will not come",
                holder.replica
            );
            tracing::info!("{why}; this replica replays the log");
            report.not_waited = Some(why);
            return None;
        }
        if !said {
            starting.set(format!(
                "waiting up to {} s for the snapshot that replica {} will publish once it has replayed the log",
                settings.wait.as_secs(),
                holder.replica
            ));
            tracing::info!(
                replica = %holder.replica,
                most_secs = settings.wait.as_secs(),
                "no snapshot of this layout yet; waiting for the one the replica holding the writer's lease will publish"
            );
            said = true;
        }
        tokio::time::sleep(WAIT_POLL).await;
        let listed = snapshots.list().await.ok()?;
        let fresh = listed.iter().any(|l| {
            l.layout == layout
                && l.stream == identity
                && !report
                    .refused
                    .iter()
                    .any(|r| r.starts_with(&format!("{}:", l.name)))
        });
        if fresh {
            return Some(started.elapsed());
        }
    }
    None
}

/// Loads the newest snapshot of this layout and of the stream `identity` into a new
/// directory under `data_dir`, trying older ones if it is refused; `None` (and why in
/// the report) when none could be loaded: the caller replays the log.
pub async fn load_newest(
    snapshots: &Snapshots,
    identity: &str,
    data_dir: &Path,
    options: Options,
    starting: &Starting,
) -> (Option<Loaded>, StartReport) {
    let started = Instant::now();
    starting.set("listing the snapshots");
    let mut report = StartReport {
        path: StartPath::Replay,
        ..StartReport::default()
    };
    let listed = match snapshots.list().await {
        Ok(listed) => listed,
        Err(e) => {
            tracing::warn!(
                error = format!("{e:#}"),
                "snapshots could not be listed; replaying the log"
            );
            report
                .refused
                .push(format!("the bucket could not be listed: {e:#}"));
            return (None, report);
        }
    };
    let layout = racing_projections::layout();
    for listed in listed {
        if listed.layout != layout {
            report.refused.push(format!(
                "{}: of layout {}, not {layout}",
                listed.name, listed.layout
            ));
            continue;
        }
        if listed.stream != identity {
            report.refused.push(format!(
                "{}: of stream {}, not {identity}",
                listed.name, listed.stream
            ));
            continue;
        }
        starting.set(format!(
            "fetching and loading snapshot {} (checkpoint {}, {} records, {} bytes)",
            listed.name, listed.checkpoint, listed.records, listed.bytes
        ));
        match load(snapshots, &listed, identity, data_dir, options).await {
            Ok((store, dir)) => {
                report.path = StartPath::Snapshot;
                report.snapshot = Some(listed.name.clone());
                report.from_checkpoint = listed.checkpoint;
                report.load_secs = Some(started.elapsed().as_secs_f64());
                metrics::gauge!("racing_snapshot_load_seconds")
                    .set(started.elapsed().as_secs_f64());
                tracing::info!(
                    snapshot = %listed.name,
                    checkpoint = listed.checkpoint,
                    records = listed.records,
                    ms = started.elapsed().as_millis() as u64,
                    "read models loaded from a snapshot; the projector goes on from its checkpoint"
                );
                return (Some(Loaded { store, dir, listed }), report);
            }
            Err(e) => {
                tracing::error!(
                    snapshot = %listed.name,
                    error = format!("{e:#}"),
                    "snapshot refused"
                );
                report.refused.push(format!("{}: {e:#}", listed.name));
            }
        }
    }
    tracing::info!(
        refused = report.refused.len(),
        "no snapshot to load; replaying the log"
    );
    (None, report)
}

/// Fetches and loads `listed` into a new directory; on any failure the directory is
/// removed.
async fn load(
    snapshots: &Snapshots,
    listed: &Listed,
    identity: &str,
    data_dir: &Path,
    options: Options,
) -> anyhow::Result<(Store, PathBuf)> {
    tracing::info!(
        snapshot = %listed.name,
        checkpoint = listed.checkpoint,
        bytes = listed.bytes,
        "fetching and loading a snapshot of the read models"
    );
    let dir = crate::read_models::new_generation(data_dir);
    match snapshots.load(listed, identity, &dir, options).await {
        Ok(store) => Ok((store, dir)),
        Err(e) => {
            remove(&dir);
            Err(e)
        }
    }
}

/// Removes a refused snapshot's directory once sled has let go of it.
fn remove(dir: &Path) {
    // The store is dropped by now; sled's threads let go of its files a moment later.
    for _ in 0..50 {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
    tracing::warn!(dir = %dir.display(), "a refused snapshot's directory is left to the next start");
}
