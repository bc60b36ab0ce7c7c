//! Compaction: sled writes a page again at each change and gives no room back, so a store
//! that applies events for months, amendments above all, grows on disk to many times its
//! records. Once the store in use passes [`Settings::ratio`] times its records on disk,
//! a rebuild starts from a copy of it ([`Origin::Store`]): copied whole (`Store::copy_to`),
//! caught up from the log with the projector running, then held between batches for the
//! last events and swapped in. The API answers from the store in use all along, and the
//! replaced one is removed a little at a time, as after any rebuild.
//!
//! The size on disk is looked at every [`EVERY`]; the records are read through (a read of
//! the whole store, at the least priority) only when the disk passes the ratio of their
//! size as last read, so a store that grows by its records alone is read again once each
//! time it passes it, and compacted only where its records are still that far behind;
//! and never before it has doubled since the last copy or rebuild, so that each copy at
//! least halves it: a store a rebuild swapped in is as fresh as a copy.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::read_models::ReadModels;
use crate::rebuild::status::{Origin, State, Status};
use crate::rebuild::Rebuilder;

/// How often the store's size on disk is looked at.
const EVERY: Duration = Duration::from_secs(10);
/// How long after a failed compaction the next is tried.
const AFTER_FAILURE: Duration = Duration::from_secs(600);
/// Most events the store may be behind the stream's end to be compacted (as for
/// readiness): a backlog is applied first, as the store grows meanwhile and the copy
/// would have it to fold again.
const MOST_BEHIND: u64 = 1000;
/// The niceness of the thread that reads the store through.
const NICE: i32 = 19;

/// When the store in use is compacted (`RACING_STORE_COMPACT_RATIO`,
/// `RACING_STORE_COMPACT_MIN_MIB`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Once its size on disk is more than this many times its records' bytes; 0: never.
    pub ratio: f64,
    /// ...and at least this many bytes: below, sled's own files are most of a store.
    pub least_bytes: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            // Above what a fresh store takes: sled holds a copy's records in about 1.4 to 3
            // times their bytes, the more the smaller they are (BENCHMARKS.md).
            ratio: 4.0,
            least_bytes: 256 << 20,
        }
    }
}

/// Compacts the store in use of `read_models` through `rebuilder` whenever it passes
/// `settings`, once the service has been `ready`, while it is no more than
/// [`MOST_BEHIND`] behind the stream, no rebuild runs and the store is whole and
/// writable, until `stop`.
pub async fn watch(
    rebuilder: Arc<Rebuilder>,
    read_models: Arc<ReadModels>,
    settings: Settings,
    ready: Arc<AtomicBool>,
    stop: CancellationToken,
) {
    if settings.ratio <= 0.0 {
        return;
    }
    let mut sizes = Sizes::default();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(EVERY) => {}
            _ = stop.cancelled() => return,
        }
        let rebuild = rebuilder.status();
        if !ready.load(Ordering::Relaxed)
            || rebuild.state == State::Running
            || read_models.in_repair()
            || read_models.cannot_write().is_some()
        {
            continue;
        }
        let looked = match sizes.after_rebuild(&rebuild, &read_models).await {
            Ok(()) => sizes.check(&rebuilder, &read_models, settings, &stop).await,
            Err(e) => Err(e),
        };
        if let Err(e) = looked {
            tracing::warn!(
                error = format!("{e:#}"),
                "the read models could not be compacted; the store in use is kept"
            );
            metrics::counter!("racing_store_compactions_total", "outcome" => "failed").increment(1);
            sizes.next_try = Some(tokio::time::Instant::now() + AFTER_FAILURE);
        }
    }
}

/// What the watch knows of the store in use.
#[derive(Debug, Default)]
struct Sizes {
    /// The bytes of its records, as last read.
    records: Option<u64>,
    /// Bytes on disk it is not compacted below: twice what the last rebuild (a
    /// compaction's among them) left, so that each copy at least halves the store, and a
    /// store whose copy is still past the ratio (sled's own files weigh most in a small
    /// one) is not copied again and again.
    floor: u64,
    /// When the last rebuild seen done ended.
    rebuilt: Option<String>,
    /// Not before then, after a failure.
    next_try: Option<tokio::time::Instant>,
}

impl Sizes {
    /// Where a rebuild has ended and swapped its store in since the last look: that store
    /// is not compacted before it has doubled. An operator's rebuild under reads was
    /// otherwise copied once more right after its swap.
    async fn after_rebuild(&mut self, rebuild: &Status, models: &ReadModels) -> anyhow::Result<()> {
        if rebuild.state != State::Done || rebuild.finished_at == self.rebuilt {
            return Ok(());
        }
        let left = on_disk(models.data_dir()).await?;
        metrics::gauge!("racing_store_disk_bytes").set(left as f64);
        self.floor = left.saturating_mul(2);
        self.rebuilt.clone_from(&rebuild.finished_at);
        Ok(())
    }

    async fn check(
        &mut self,
        rebuilder: &Rebuilder,
        models: &ReadModels,
        settings: Settings,
        stop: &CancellationToken,
    ) -> anyhow::Result<()> {
        let now = tokio::time::Instant::now();
        if self.next_try.is_some_and(|at| now < at) || rebuilder.behind().await? > MOST_BEHIND {
            return Ok(());
        }
        let data_dir = models.data_dir().to_owned();
        let disk = on_disk(&data_dir).await?;
        metrics::gauge!("racing_store_disk_bytes").set(disk as f64);
        let past = |records: u64| disk as f64 > settings.ratio * records as f64;
        if disk < settings.least_bytes.max(self.floor) || !self.records.is_none_or(past) {
            return Ok(());
        }
        let store = models.load_full();
        let (records, record_bytes) =
            crate::load::on_own_thread("racing-measure", NICE, move || store.record_bytes())
                .await?
                .context("reading the read models through")?;
        metrics::gauge!("racing_store_record_bytes").set(record_bytes as f64);
        self.records = Some(record_bytes);
        if !past(record_bytes) {
            return Ok(());
        }
        let why = format!(
            "the store took {} MiB on disk, {:.1} times its {} MiB of records ({records} of \
             them; compacted past {} times)",
            disk >> 20,
            disk as f64 / record_bytes.max(1) as f64,
            record_bytes >> 20,
            settings.ratio
        );
        tracing::info!(reason = %why, "compacting the read models");
        let origin = Origin::Store { why, record_bytes };
        if let Err(running) = rebuilder.start_from(origin) {
            tracing::info!(
                state = ?running.state,
                "a rebuild started first; the compaction waits for the next look"
            );
            return Ok(());
        }
        let ended = loop {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = stop.cancelled() => return Ok(()),
            }
            let status = rebuilder.status();
            if status.state != State::Running {
                break status;
            }
        };
        if ended.state != State::Done {
            anyhow::bail!(ended.error.unwrap_or_else(|| "the rebuild failed".into()));
        }
        metrics::counter!("racing_store_compactions_total", "outcome" => "done").increment(1);
        let left = on_disk(&data_dir).await?;
        tracing::info!(
            on_disk_mib = left >> 20,
            records_mib = record_bytes >> 20,
            "the read models compacted"
        );
        // The next look sets the floor from the store swapped in, as after any rebuild.
        Ok(())
    }
}

/// The bytes the store in use under `data_dir` takes on disk.
async fn on_disk(data_dir: &Path) -> anyhow::Result<u64> {
    let data_dir = data_dir.to_owned();
    tokio::task::spawn_blocking(move || {
        crate::read_models::active_dir(&data_dir).map(|dir| crate::disk::dir_bytes(&dir))
    })
    .await?
}
