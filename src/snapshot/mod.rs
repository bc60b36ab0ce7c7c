//! Snapshots of the read models in the JetStream object store beside the stream, so that
//! a new replica (or one whose store is empty, of an older layout, or damaged) starts
//! from what another replica built rather than replaying the whole log.
//!
//! - [`Snapshots`]: the bucket, `{stream}_SNAPSHOTS`; each snapshot an object named by
//!   its layout and checkpoint, its metadata saying what it is (layout, checkpoint,
//!   stream, SHA-256 of the file, records), so that a list needs no download.
//! - [`upload`]: how one is sent (and what a failed or abandoned upload left is removed).
//! - [`room`]: whether there is room for one, in the bucket, in JetStream beside the log,
//!   and on the disk beside the read models.
//! - [`writer`]: one replica at a time, chosen by a lease in the `{stream}_SNAPSHOT_LEASE`
//!   bucket ([`lease`]), writes one every so many events or so much time, and keeps the
//!   last few.
//! - [`start`]: what a start loads, and how it went (for `/readyz` and `racing status`).
//!
//! The file's format, and the frozen view a live store is written from, are the store's
//! (`racing_projections::snapshot`).

mod files;
pub mod lease;
pub(crate) mod listed;
pub mod room;
pub(crate) mod settings;
pub mod start;
pub mod upload;
pub mod writer;

pub use listed::Created;

use files::{Fetched, NotWritten, RemoveOnDrop, Written};
use lease::InUse;
use listed::Listed;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use async_nats::jetstream::{self, object_store::ObjectInfo, object_store::ObjectStore};
use futures::StreamExt as _;
use racing_projections::{SnapshotSummary, Store};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The start of every snapshot's object name.
const PREFIX: &str = "read-models-";
/// The directory under the data directory where snapshots are written before they are
/// sent, and fetched before they are loaded.
const WORK_DIR: &str = "snapshots";
/// Bytes fetched between two looks at the disk's free space.
const FETCH_LOOK: u64 = 1 << 20;

/// The snapshot bucket beside a stream.
#[derive(Clone)]
pub struct Snapshots {
    bucket: ObjectStore,
    upload: upload::Bucket,
    stream: String,
    data_dir: PathBuf,
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
            upload: upload::Bucket::open(js, &name).await?,
            stream: stream.to_owned(),
            data_dir: data_dir.to_owned(),
            work_dir: data_dir.join(WORK_DIR),
        })
    }

    /// Every object's metadata in the bucket (deleted ones included), as written.
    pub async fn objects(&self) -> anyhow::Result<Vec<ObjectInfo>> {
        let mut objects = self.bucket.list().await.context("listing snapshots")?;
        let mut all = Vec::new();
        while let Some(info) = objects.next().await {
            all.push(info.context("listing snapshots")?);
        }
        Ok(all)
    }

    /// Every snapshot whose metadata is whole, newest checkpoint first. An object whose
    /// writer died before its metadata was written is never listed: its metadata is
    /// written after its last chunk.
    pub async fn list(&self) -> anyhow::Result<Vec<Listed>> {
        Ok(listed_among(&self.objects().await?))
    }

    /// Writes a snapshot of `store` (a frozen view of it, its writes going on) to a file
    /// of the work directory, on a thread of its own. Refused before it starts unless the
    /// disk has room for `estimate` bytes besides the read models' spare, and stopped
    /// (its file removed) once the disk has no more than that spare left, or once `stop`
    /// is cancelled. It is awaited, so no handle of the store outlives the call.
    pub async fn write(
        &self,
        store: &Store,
        estimate: u64,
        stop: &tokio_util::sync::CancellationToken,
    ) -> Result<Written, NotWritten> {
        let what = format!(
            "a snapshot's file of about {} MiB",
            estimate.div_ceil(1 << 20)
        );
        crate::disk::room_beside_store(&self.data_dir, estimate, &what)
            .map_err(NotWritten::NoRoom)?;
        std::fs::create_dir_all(&self.work_dir)
            .with_context(|| format!("creating {}", self.work_dir.display()))
            .map_err(NotWritten::Failed)?;
        let store_bytes = crate::read_models::active_dir(&self.data_dir)
            .map(|dir| crate::disk::dir_bytes(&dir))
            .unwrap_or(0);
        let file = self
            .work_dir
            .join(format!("writing-{}", uuid::Uuid::new_v4()));
        let remove = RemoveOnDrop(file.clone());
        let started = Instant::now();
        let (snapshot, path, stop) = (store.clone(), file.clone(), stop.clone());
        let data_dir = self.data_dir.clone();
        let out_of_room = Arc::new(AtomicBool::new(false));
        let full = out_of_room.clone();
        let written = crate::load::on_own_thread("racing-snapshot", NICE, move || {
            let go_on = || {
                let room = crate::disk::room_beside_store(&data_dir, 0, "").is_ok();
                full.fetch_or(!room, Ordering::Relaxed);
                room && !stop.is_cancelled()
            };
            let written = snapshot.write_snapshot(&path, go_on);
            // The store's handle goes before the answer does.
            drop(snapshot);
            written
        })
        .await
        .context("the snapshot's thread")
        .map_err(NotWritten::Failed)?;
        if out_of_room.load(Ordering::Relaxed) {
            drop(remove);
            let why = crate::disk::room_beside_store(&self.data_dir, estimate, &what)
                .err()
                .unwrap_or_else(|| format!("the disk of {} filled", self.data_dir.display()));
            return Err(NotWritten::NoRoom(format!(
                "stopped writing {what} before its end: {why}"
            )));
        }
        let summary = written
            .context("writing the snapshot file")
            .map_err(NotWritten::Failed)?;
        Ok(Written {
            file: remove,
            summary,
            store_bytes,
            took: started.elapsed(),
        })
    }

    /// Sends `written` to the bucket as `replica`'s, while `lease` holds in `term` and
    /// until `stop` ([`upload`]): what is listed for it, and how long sending took.
    pub async fn send(
        &self,
        written: &Written,
        replica: &str,
        lease: &lease::Lease,
        term: u64,
        rate: Option<u64>,
        stop: &tokio_util::sync::CancellationToken,
    ) -> Result<(Listed, Duration), upload::Failed> {
        let summary = &written.summary;
        let name = object_name(summary);
        let metadata = metadata_of(summary, written.store_bytes, replica);
        let description = format!(
            "read models at {} of {}",
            summary.head.checkpoint, summary.head.stream
        );
        tracing::info!(
            snapshot = %name,
            bytes = summary.bytes,
            "sending a snapshot to the object store"
        );
        let started = Instant::now();
        let object = upload::Object {
            name: &name,
            description: &description,
            metadata: &metadata,
            file: &written.file.0,
        };
        let info = self
            .upload
            .send(&object, &upload::Fence { lease, term, stop }, rate)
            .await?;
        let listed = listed_of(&info.name, info.size as u64, &info.metadata).ok_or_else(|| {
            upload::Failed::Other(anyhow::anyhow!("snapshot {name} sent without its metadata"))
        })?;
        Ok((listed, started.elapsed()))
    }

    /// Removes the snapshots of `layout` and `stream` but the newest `keep` (at least
    /// one), and, once there is one of them, every snapshot of another stream (made
    /// anew: its snapshots fit no replica) or of an older layout (an upgrade's
    /// leftovers) but the newest of each older layout that a live replica runs
    /// (`in_use`). A newer layout's are left to the replicas of that version.
    pub async fn prune(
        &self,
        keep: usize,
        layout: &str,
        stream: &str,
        in_use: &InUse,
    ) -> anyhow::Result<Vec<String>> {
        let objects = self.objects().await?;
        let doomed = doomed(&listed_among(&objects), keep, layout, stream, in_use);
        for name in &doomed {
            if let Some(info) = objects.iter().find(|o| &o.name == name) {
                self.upload
                    .remove(info)
                    .await
                    .with_context(|| format!("removing snapshot {name}"))?;
            }
        }
        Ok(doomed)
    }

    /// Removes what no snapshot's metadata names (the chunks of an upload that failed or
    /// whose writer died, and removed objects' marks), as the holder of the lease in
    /// `term`, with no upload of its own under way ([`upload::Bucket::sweep`]).
    pub async fn sweep(&self, term: u64) -> anyhow::Result<upload::Swept> {
        let objects = self.objects().await?;
        self.upload.sweep(&objects, term).await
    }

    /// The bucket's stream as it stands now, for [`room`].
    pub async fn bucket_info(&self) -> anyhow::Result<jetstream::stream::Info> {
        self.upload.info().await
    }

    /// Fetches snapshot `name` into a file of the work directory, removed when the
    /// returned guard drops, unless the disk lacks room for it besides the read models'
    /// spare (looked at before, and as it is written). The object store checks its own
    /// digest of the chunks as it reads them; the snapshot's is checked by whoever loads
    /// or verifies the file.
    pub async fn fetch(&self, name: &str) -> anyhow::Result<Fetched> {
        let mut object = self
            .bucket
            .get(name)
            .await
            .with_context(|| format!("reading snapshot {name}"))?;
        let size = object.info().size as u64;
        let what = format!("snapshot {name} ({} MiB)", size.div_ceil(1 << 20));
        crate::disk::room_beside_store(&self.data_dir, size, &what).map_err(anyhow::Error::msg)?;
        std::fs::create_dir_all(&self.work_dir)
            .with_context(|| format!("creating {}", self.work_dir.display()))?;
        let path = self
            .work_dir
            .join(format!("fetched-{}", uuid::Uuid::new_v4()));
        let guard = RemoveOnDrop(path.clone());
        let mut file = tokio::fs::File::create(&path).await?;
        let mut buf = vec![0; 128 << 10];
        let (mut fetched, mut looked) = (0u64, 0u64);
        loop {
            let n = object
                .read(&mut buf)
                .await
                .with_context(|| format!("reading snapshot {name}"))?;
            if n == 0 {
                break;
            }
            file.write_all(&buf[..n]).await?;
            fetched += n as u64;
            if fetched - looked >= FETCH_LOOK {
                looked = fetched;
                crate::disk::room_beside_store(&self.data_dir, 0, &what)
                    .map_err(|why| anyhow::anyhow!("stopped fetching {what}: {why}"))?;
            }
        }
        file.flush().await?;
        Ok(Fetched { file: guard })
    }

    /// Fetches `listed` and loads it into a new store at `dir`, on a blocking thread: its
    /// digest, layout and stream (`identity`) checked first, and its file's checkpoint
    /// against its metadata's. Refused before anything is fetched unless the disk has
    /// room for its file and the store loaded from it besides the read models' spare. On
    /// failure `dir` may hold part of a store, which the caller removes.
    pub async fn load(
        &self,
        listed: &Listed,
        identity: &str,
        dir: &Path,
        options: racing_projections::Options,
    ) -> anyhow::Result<Store> {
        let store = listed.store_estimate();
        crate::disk::room_beside_store(
            &self.data_dir,
            listed.bytes.saturating_add(store),
            &format!(
                "snapshot {} ({} MiB) and the store loaded from it (about {} MiB)",
                listed.name,
                listed.bytes.div_ceil(1 << 20),
                store.div_ceil(1 << 20)
            ),
        )
        .map_err(anyhow::Error::msg)?;
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

    /// The data directory the snapshots' files go through.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }
}

/// The snapshots `prune` removes of `listed` (newest first): see [`Snapshots::prune`].
/// An older layout is in use where a replica says it runs it, or where more replicas are
/// live than say which layout they run (an older version's, which says nothing).
fn doomed(
    listed: &[Listed],
    keep: usize,
    layout: &str,
    stream: &str,
    in_use: &InUse,
) -> Vec<String> {
    let ours = |l: &Listed| l.layout == layout && l.stream == stream;
    let any_ours = listed.iter().any(ours);
    let older_layout = |l: &Listed| match (l.layout.parse::<u32>(), layout.parse::<u32>()) {
        (Ok(theirs), Ok(mine)) => theirs < mine,
        _ => false,
    };
    let running = |l: &Listed| in_use.unknown || in_use.layouts.contains(&l.layout);
    let mut kept = 0;
    let mut kept_older = std::collections::HashSet::new();
    let mut doomed = Vec::new();
    for l in listed {
        let remove = if ours(l) {
            kept += 1;
            kept > keep.max(1)
        } else if !any_ours {
            false
        } else if l.stream != stream {
            true
        } else if older_layout(l) {
            !(running(l) && kept_older.insert(l.layout.clone()))
        } else {
            false
        };
        if remove {
            doomed.push(l.name.clone());
        }
    }
    doomed
}

/// The snapshot bucket beside `stream` and the writer's lease, as a start finds them
/// (none where the set-up has not made them: then no snapshot is written or loaded, and
/// the log says so), with the files a process killed while it wrote or fetched one left
/// under `data_dir` removed. `live` counts the replicas live, for what a prune keeps.
pub async fn open(
    js: &jetstream::Context,
    stream: &str,
    data_dir: &Path,
    replica: &str,
    live: Arc<dyn Fn() -> u32 + Send + Sync>,
) -> (Option<Snapshots>, Option<lease::Lease>) {
    let _ = std::fs::remove_dir_all(data_dir.join(WORK_DIR));
    let opened = async {
        let snapshots = Snapshots::open(js, stream, data_dir).await?;
        let lease = lease::Lease::open(js, stream, replica, live).await?;
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

/// The niceness of the thread that writes a snapshot's file: the API's requests and the
/// projector have the cores first (it still runs on any spare time, so a busy machine
/// slows it rather than starves it).
const NICE: i32 = 19;

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

fn metadata_of(
    summary: &SnapshotSummary,
    store_bytes: u64,
    replica: &str,
) -> HashMap<String, String> {
    HashMap::from([
        ("layout".to_owned(), summary.head.layout.clone()),
        ("checkpoint".to_owned(), summary.head.checkpoint.to_string()),
        ("stream".to_owned(), summary.head.stream.clone()),
        ("digest".to_owned(), summary.digest.clone()),
        ("records".to_owned(), summary.records.to_string()),
        ("store_bytes".to_owned(), store_bytes.to_string()),
        ("created_at".to_owned(), racing_events::Instant::now()),
        ("replica".to_owned(), replica.to_owned()),
    ])
}

/// The snapshots among `objects`, newest checkpoint first.
fn listed_among(objects: &[ObjectInfo]) -> Vec<Listed> {
    let mut listed: Vec<Listed> = objects
        .iter()
        .filter(|info| !info.deleted && info.name.starts_with(PREFIX))
        .filter_map(|info| listed_of(&info.name, info.size as u64, &info.metadata))
        .collect();
    listed.sort_by(|a, b| b.checkpoint.cmp(&a.checkpoint).then(b.name.cmp(&a.name)));
    listed
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
        store_bytes: get("store_bytes").and_then(|b| b.parse().ok()),
        created_at: get("created_at").unwrap_or_default(),
        replica: get("replica").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests;
