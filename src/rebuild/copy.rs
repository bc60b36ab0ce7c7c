//! A rebuild's fresh store started from a copy of the store in use ([`super::Origin::Store`]):
//! every record as it stood at one commit, written as a snapshot is loaded (a group of a
//! few thousand at a time out of key order: `Store::copy_to`), on a thread of its own at
//! the least priority. The compaction's (`src/compaction.rs`): a store long in use takes
//! many times its records on disk, its copy what a load takes.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use racing_projections::SnapshotError;
use tokio_util::sync::CancellationToken;

use super::status::Status;
use crate::read_models::ReadModels;
use crate::supervise::lock;

/// Room a copy asks for on the disk, in times the records' bytes: sled takes 2.4 to 3.5
/// times the records of a store loaded in key order (six amending demo seasons' 288 MiB
/// of records in 719 MiB; the bench's replayed store, 3.9 M records of 130 bytes on
/// average, 485 MiB in 1,687), and the projector goes on writing to the store in use.
const ROOM: u64 = 4;
/// Longest a copy waits for a snapshot being written to end.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(600);
/// The niceness of the copy's thread: the API's requests and the projector have the
/// cores first.
const NICE: i32 = 19;

/// Copies the store in use of `read_models` into `dir`, for the reason `why`, which
/// `status` says: refused unless the disk has room for [`ROOM`] times `record_bytes`
/// besides the read models' spare, and stopped once it has no more than that spare or
/// `stop` is cancelled. Returns the copy's checkpoint.
pub(super) async fn copy_store(
    read_models: &ReadModels,
    dir: &Path,
    (why, record_bytes): (&str, u64),
    status: &Mutex<Status>,
    stop: &CancellationToken,
) -> anyhow::Result<u64> {
    lock(status).compaction = Some(why.to_owned());
    let data_dir = read_models.data_dir().to_owned();
    let need = record_bytes.saturating_mul(ROOM);
    let what = format!("a copy of the read models, {} MiB", need.div_ceil(1 << 20));
    crate::disk::room_beside_store(&data_dir, need, &what).map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    loop {
        let store = read_models.load_full();
        let options = store.options();
        let (dir, stopped, data_dir) = (dir.to_owned(), stop.clone(), data_dir.clone());
        let copied = crate::load::on_own_thread("racing-compact", NICE, move || {
            let go_on = || {
                !stopped.is_cancelled() && crate::disk::room_beside_store(&data_dir, 0, "").is_ok()
            };
            // The copy's handle goes before the fold opens it (in a worker, maybe).
            store
                .copy_to(&dir, options, go_on)
                .map(|(_, copied)| copied)
        })
        .await?;
        // A snapshot being written holds the store's one frozen view: the copy waits for
        // it to end.
        if matches!(copied, Err(SnapshotError::Busy)) && started.elapsed() < SNAPSHOT_WAIT {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(5)) => continue,
                _ = stop.cancelled() => anyhow::bail!("the service is stopping"),
            }
        }
        let copied = copied.context("copying the read models")?;
        lock(status).checkpoint = copied.head.checkpoint;
        tracing::info!(
            records = copied.records,
            record_bytes = copied.record_bytes,
            checkpoint = copied.head.checkpoint,
            ms = started.elapsed().as_millis() as u64,
            "the store in use copied; folding the log from the copy's checkpoint"
        );
        return Ok(copied.head.checkpoint);
    }
}
