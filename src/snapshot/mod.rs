//! Snapshots of the read models in the JetStream object store beside the stream, so that
//! a new replica (or one whose store is empty, of an older layout, or damaged) starts
//! from what another replica built rather than replaying the whole log.
//!
//! - [`Snapshots`]: the bucket, `{stream}_SNAPSHOTS`; each snapshot an object named by
//!   its layout and checkpoint, its metadata saying what it is (layout, checkpoint,
//!   stream, SHA-256 of the file, records), so that a list needs no download.
//! - [`writer`]: one replica at a time, chosen by a lease in the `{stream}_SNAPSHOT_LEASE`
//!   bucket, writes one every so many events or so much time, and keeps the last few.
//! - [`start`]: what a start loads, and how it went (for `/readyz` and `racing status`).
//!
//! The file's format, and the frozen view a live store is written from, are the store's
//! (`racing_projections::snapshot`).

pub mod lease;
pub mod start;
pub mod writer;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use async_nats::jetstream::{self, object_store::ObjectStore};
use futures::StreamExt as _;
use racing_projections::{SnapshotSummary, Store};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt as _;

/// The start of every snapshot's object name.
const PREFIX: &str = "read-models-";
/// The directory under the data directory where snapshots are written before they are
/// sent, and fetched before they are loaded.
const WORK_DIR: &str = "snapshots";

/// How a service writes and uses snapshots.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Whether this replica may write them (when it holds the lease).
    pub write: bool,
    /// Whether a start with an empty, older or damaged store loads the newest one.
    pub load: bool,
    /// A snapshot is due once this many events were applied since the last one...
    pub every_events: u64,
    /// ...or this long has passed since it, with at least one event since.
    pub every: Duration,
    /// How many are kept; older ones are removed once a new one is written.
    pub keep: usize,
    /// How long a start with no snapshot of its layout waits for the one another replica
    /// of its layout, holding the writer's lease, will publish.
    pub wait: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            write: true,
            load: true,
            every_events: 250_000,
            every: Duration::from_secs(3600),
            keep: 3,
            wait: Duration::from_secs(3600),
        }
    }
}

/// A snapshot in the bucket, as its metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// Its object's name.
    pub name: String,
    /// Its store's layout version.
    pub layout: String,
    /// The last stream sequence its records hold.
    pub checkpoint: u64,
    /// The stream they were built from.
    pub stream: String,
    /// The SHA-256 of its file, in hex.
    pub digest: String,
    /// Records it holds.
    pub records: u64,
    /// Bytes of its file.
    pub bytes: u64,
    /// When it was written (RFC 3339).
    pub created_at: String,
    /// The replica that wrote it.
    pub replica: String,
}

/// The snapshot bucket beside a stream.
#[derive(Clone)]
pub struct Snapshots {
    bucket: ObjectStore,
    stream: String,
    work_dir: PathBuf,
}

impl Snapshots {
    /// Opens the bucket beside `stream`, which the set-up made; files go through
    /// `data_dir/snapshots`.
    pub async fn open(
        js: &jetstream::Context,
        stream: &str,
        data_dir: &Path,
    ) -> anyhow::Result<Snapshots> {
        let name = bucket_name(stream);
        let bucket = js.get_object_store(&name).await.with_context(|| {
            format!("opening object store {name}; `racing setup` makes it (docs/operations.md)")
        })?;
        Ok(Snapshots {
            bucket,
            stream: stream.to_owned(),
            work_dir: data_dir.join(WORK_DIR),
        })
    }

    /// Every snapshot whose metadata is whole, newest checkpoint first. An object whose
    /// writer died before its metadata was written is never listed: the object store
    /// writes an object's metadata after its last chunk.
    pub async fn list(&self) -> anyhow::Result<Vec<Listed>> {
        let mut objects = self.bucket.list().await.context("listing snapshots")?;
        let mut listed = Vec::new();
        while let Some(info) = objects.next().await {
            let info = info.context("listing snapshots")?;
            if info.deleted || !info.name.starts_with(PREFIX) {
                continue;
            }
            if let Some(l) = listed_of(&info.name, info.size as u64, &info.metadata) {
                listed.push(l);
            }
        }
        listed.sort_by(|a, b| b.checkpoint.cmp(&a.checkpoint).then(b.name.cmp(&a.name)));
        Ok(listed)
    }

    /// Writes a snapshot of `store` (a frozen view of it, its writes going on) to a file,
    /// then sends it to the bucket, and removes all but the newest `keep`. `replica`
    /// names the writer in its metadata. Once `stop` is cancelled the file's write stops
    /// between two parts; it is awaited, so no handle of the store outlives the call.
    pub async fn create(
        &self,
        store: &Store,
        replica: &str,
        keep: usize,
        stop: &tokio_util::sync::CancellationToken,
    ) -> anyhow::Result<Created> {
        std::fs::create_dir_all(&self.work_dir)
            .with_context(|| format!("creating {}", self.work_dir.display()))?;
        let file = self
            .work_dir
            .join(format!("writing-{}", uuid::Uuid::new_v4()));
        let _remove = RemoveOnDrop(file.clone());
        let started = Instant::now();
        let (snapshot, path, stop) = (store.clone(), file.clone(), stop.clone());
        let (done, written) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("racing-snapshot".into())
            .spawn(move || {
                give_way();
                let written = snapshot.write_snapshot(&path, || !stop.is_cancelled());
                // The store's handle goes before the answer does.
                drop(snapshot);
                let _ = done.send(written);
            })
            .context("starting the snapshot's thread")?;
        let summary = written
            .await
            .context("the snapshot's thread ended")?
            .context("writing the snapshot file")?;
        let written = started.elapsed();
        let name = object_name(&summary);
        let meta = async_nats::jetstream::object_store::ObjectMetadata {
            name: name.clone(),
            description: Some(format!(
                "read models at {} of {}",
                summary.head.checkpoint, summary.head.stream
            )),
            metadata: metadata_of(&summary, replica),
            ..Default::default()
        };
        let mut f = tokio::fs::File::open(&file).await?;
        self.bucket
            .put(meta, &mut f)
            .await
            .with_context(|| format!("sending snapshot {name} to the object store"))?;
        let sent = started.elapsed() - written;
        let removed = self
            .prune(keep, &summary.head.layout, &summary.head.stream)
            .await?;
        Ok(Created {
            listed: Listed {
                name,
                layout: summary.head.layout.clone(),
                checkpoint: summary.head.checkpoint,
                stream: summary.head.stream.clone(),
                digest: summary.digest.clone(),
                records: summary.records,
                bytes: summary.bytes,
                created_at: jiff::Timestamp::now().to_string(),
                replica: replica.to_owned(),
            },
            record_bytes: summary.record_bytes,
            write_secs: written.as_secs_f64(),
            send_secs: sent.as_secs_f64(),
            removed,
        })
    }

    /// Removes the snapshots of `layout` and `stream` but the newest `keep` (at least
    /// one), and, once there is one of them, every snapshot of another stream (made
    /// anew: its snapshots fit no replica) or of an older layout (an upgrade's leftovers).
    /// A newer layout's are left to the replicas of that version.
    pub async fn prune(
        &self,
        keep: usize,
        layout: &str,
        stream: &str,
    ) -> anyhow::Result<Vec<String>> {
        let listed = self.list().await?;
        let ours = |l: &Listed| l.layout == layout && l.stream == stream;
        let any_ours = listed.iter().any(ours);
        let older_layout = |l: &Listed| match (l.layout.parse::<u32>(), layout.parse::<u32>()) {
            (Ok(theirs), Ok(mine)) => theirs < mine,
            _ => false,
        };
        let mut kept = 0;
        let mut removed = Vec::new();
        for l in listed {
            let remove = if ours(&l) {
                kept += 1;
                kept > keep.max(1)
            } else {
                any_ours && (l.stream != stream || older_layout(&l))
            };
            if remove {
                self.bucket
                    .delete(&l.name)
                    .await
                    .with_context(|| format!("removing snapshot {}", l.name))?;
                removed.push(l.name);
            }
        }
        Ok(removed)
    }

    /// Fetches snapshot `name` into a file of the work directory, removed when the
    /// returned guard drops. The object store checks its own digest of the chunks as it
    /// reads them; the snapshot's is checked by whoever loads or verifies the file.
    pub async fn fetch(&self, name: &str) -> anyhow::Result<Fetched> {
        std::fs::create_dir_all(&self.work_dir)
            .with_context(|| format!("creating {}", self.work_dir.display()))?;
        let path = self
            .work_dir
            .join(format!("fetched-{}", uuid::Uuid::new_v4()));
        let guard = RemoveOnDrop(path.clone());
        let mut object = self
            .bucket
            .get(name)
            .await
            .with_context(|| format!("reading snapshot {name}"))?;
        let mut file = tokio::fs::File::create(&path).await?;
        tokio::io::copy(&mut object, &mut file)
            .await
            .with_context(|| format!("reading snapshot {name}"))?;
        file.flush().await?;
        Ok(Fetched { file: guard })
    }

    /// Fetches `listed` and loads it into a new store at `dir`, on a blocking thread: its
    /// digest, layout and stream (`identity`) checked first, and its file's checkpoint
    /// against its metadata's. On failure `dir` may hold part of a store, which the caller
    /// removes.
    pub async fn load(
        &self,
        listed: &Listed,
        identity: &str,
        dir: &Path,
        options: racing_projections::Options,
    ) -> anyhow::Result<Store> {
        let fetched = self.fetch(&listed.name).await?;
        let (file, digest, stream, into) = (
            fetched.path().to_owned(),
            listed.digest.clone(),
            identity.to_owned(),
            dir.to_owned(),
        );
        let (store, summary) = tokio::task::spawn_blocking(move || {
            let expected = racing_projections::Expected {
                digest: &digest,
                stream: &stream,
            };
            racing_projections::load_snapshot(&file, expected, &into, options)
        })
        .await
        .map_err(|e| anyhow::anyhow!("the load panicked: {e}"))??;
        drop(fetched);
        if summary.head.checkpoint != listed.checkpoint {
            anyhow::bail!(
                "its file holds checkpoint {}, its metadata says {}",
                summary.head.checkpoint,
                listed.checkpoint
            );
        }
        Ok(store)
    }

    /// The stream's name the bucket is beside.
    pub fn stream(&self) -> &str {
        &self.stream
    }
}

/// A snapshot written and sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Created {
    /// What it is.
    pub listed: Listed,
    /// Bytes of its records, uncompressed.
    pub record_bytes: u64,
    /// Seconds writing its file took (the frozen view read, compressed).
    pub write_secs: f64,
    /// Seconds sending it took.
    pub send_secs: f64,
    /// Older snapshots removed after it.
    pub removed: Vec<String>,
}

/// A fetched snapshot's file, removed on drop.
pub struct Fetched {
    file: RemoveOnDrop,
}

impl Fetched {
    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.file.0
    }
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The snapshot bucket beside `stream` and the writer's lease, as a start finds them
/// (none where the set-up has not made them: then no snapshot is written or loaded, and
/// the log says so), with the files a process killed while it wrote or fetched one left
/// under `data_dir` removed.
pub async fn open(
    js: &jetstream::Context,
    stream: &str,
    data_dir: &Path,
    replica: &str,
) -> (Option<Snapshots>, Option<lease::Lease>) {
    let _ = std::fs::remove_dir_all(data_dir.join(WORK_DIR));
    let opened = async {
        let snapshots = Snapshots::open(js, stream, data_dir).await?;
        let lease = lease::Lease::open(js, stream, replica).await?;
        anyhow::Ok((snapshots, lease))
    };
    match opened.await {
        Ok((snapshots, lease)) => (Some(snapshots), Some(lease)),
        Err(e) => {
            tracing::warn!(
                error = format!("{e:#}"),
                "no snapshots of the read models are written or loaded"
            );
            (None, None)
        }
    }
}

/// The niceness of the thread that writes a snapshot's file.
const NICE: i32 = 19;

/// Lowers this thread's priority to the least, so that the API's requests and the
/// projector have the cores first while a snapshot is written (it still runs on any
/// spare time, so a busy machine slows it rather than starves it).
fn give_way() {
    let tid = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(tid), NICE) {
        tracing::warn!(error = %e, "the snapshot's thread could not lower its priority");
    }
}

/// The bucket's name beside `stream`.
pub fn bucket_name(stream: &str) -> String {
    crate::nats::buckets::snapshots_name(stream)
}

/// A snapshot's object name: its layout, then its checkpoint, padded so that names sort
/// as checkpoints do.
fn object_name(summary: &SnapshotSummary) -> String {
    format!(
        "{PREFIX}{}-{:020}",
        summary.head.layout, summary.head.checkpoint
    )
}

fn metadata_of(summary: &SnapshotSummary, replica: &str) -> HashMap<String, String> {
    HashMap::from([
        ("layout".to_owned(), summary.head.layout.clone()),
        ("checkpoint".to_owned(), summary.head.checkpoint.to_string()),
        ("stream".to_owned(), summary.head.stream.clone()),
        ("digest".to_owned(), summary.digest.clone()),
        ("records".to_owned(), summary.records.to_string()),
        ("created_at".to_owned(), jiff::Timestamp::now().to_string()),
        ("replica".to_owned(), replica.to_owned()),
    ])
}

/// A listed snapshot from its object's metadata; `None` where any part is missing (not
/// one of ours, or written by hand).
fn listed_of(name: &str, bytes: u64, meta: &HashMap<String, String>) -> Option<Listed> {
    let get = |k: &str| meta.get(k).cloned();
    Some(Listed {
        name: name.to_owned(),
        layout: get("layout")?,
        checkpoint: get("checkpoint")?.parse().ok()?,
        stream: get("stream")?,
        digest: get("digest")?,
        records: get("records")?.parse().ok()?,
        bytes,
        created_at: get("created_at").unwrap_or_default(),
        replica: get("replica").unwrap_or_default(),
    })
}
