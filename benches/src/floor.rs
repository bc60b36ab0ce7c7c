//! sled's floor: every record of the replayed store, read back and written once, in key
//! order, an insert a record, into a fresh sled database, then flushed. That is what the
//! engine costs for the store's final records alone, with nothing to fold, render or
//! decode; a replay and a start from a snapshot are measured against it.
//!
//! The records are read into memory first, so that the time is sled's writing alone.
//! Bytes written are this process's `write_bytes` (`/proc/self/io`), sled's threads
//! included, from before the database is made to after it is closed.

use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use serde::Serialize;

use crate::figures::{thousands, verdict};
use crate::replay::dir_bytes;
use crate::service::Target;

/// The replayed store on disk, at most this many times the floor's.
pub const STORE_RATIO: f64 = 1.2;

/// sled's cache of pages, as the service has it by default (`RACING_STORE_CACHE_MIB`):
/// the cache a snapshot's load writes with.
const CACHE_BYTES: u64 = 1024 << 20;

/// The tree the records go into, the store's own.
const TREE: &str = "read_models";

/// What writing the replayed store's records once cost.
#[derive(Debug, Clone, Serialize)]
pub struct FloorResult {
    /// Events the replayed store holds (its checkpoint).
    pub events: u64,
    /// Records written.
    pub records: u64,
    /// Bytes of their keys and values.
    pub record_bytes: u64,
    /// Seconds reading them out of the replayed store into memory (not part of the floor).
    pub read_secs: f64,
    /// Seconds from making the database to the end of its flush after the last insert.
    pub secs: f64,
    /// Bytes this process had written to storage by the database's close.
    pub written_bytes: u64,
    /// Bytes the database takes on disk once closed.
    pub store_bytes: u64,
    /// Bytes the replayed store takes on disk.
    pub replayed_store_bytes: u64,
    /// Bytes of the log's payloads.
    pub log_bytes: u64,
}

/// Writes the records of the store in `store` (replayed first if the replay part did not
/// run) into a fresh database under `work`, which is removed afterwards.
pub async fn run(
    target: &Target,
    store: &Path,
    work: &Path,
    log_bytes: u64,
) -> anyhow::Result<FloorResult> {
    crate::replay::catch_up(target, store, "floor-catch-up").await?;
    let source = racing::read_models::active_dir(store)?;
    let dir = work.join("floor");
    let result = tokio::task::spawn_blocking(move || measure(&source, &dir, log_bytes)).await??;
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    eprintln!(
        "bench:   floor: {} records ({:.1} MiB) read in {:.2} s; written in {:.2} s, {:.0} bytes written/event, {:.1} MiB on disk ({:.2} × the log; the replayed store {:.1} MiB, {:.2} × this)",
        thousands(result.records as f64),
        mib(result.record_bytes),
        result.read_secs,
        result.secs,
        result.written_bytes as f64 / result.events.max(1) as f64,
        mib(result.store_bytes),
        result.store_bytes as f64 / log_bytes.max(1) as f64,
        mib(result.replayed_store_bytes),
        result.replayed_store_bytes as f64 / result.store_bytes.max(1) as f64,
    );
    Ok(result)
}

fn measure(source: &Path, dir: &Path, log_bytes: u64) -> anyhow::Result<FloorResult> {
    let replayed_store_bytes = dir_bytes(source)?;
    let started = Instant::now();
    let (events, records) = Records::read(source)?;
    let read_secs = started.elapsed().as_secs_f64();

    let _ = std::fs::remove_dir_all(dir);
    let (before, _) = crate::service::written_bytes("/proc/self/io")?;
    let started = Instant::now();
    let db = sled::Config::new()
        .path(dir)
        .cache_capacity(CACHE_BYTES)
        .open()
        .with_context(|| format!("making {}", dir.display()))?;
    let tree = db.open_tree(TREE)?;
    for (key, value) in records.iter() {
        tree.insert(key, value)?;
    }
    tree.flush()?;
    let secs = started.elapsed().as_secs_f64();
    // Closed, so that what sled writes at its close counts, and its files are whole.
    drop(tree);
    drop(db);
    let (after, _) = crate::service::written_bytes("/proc/self/io")?;
    let store_bytes = dir_bytes(dir)?;
    let _ = std::fs::remove_dir_all(dir);
    Ok(FloorResult {
        events,
        records: records.lens.len() as u64,
        record_bytes: records.bytes.len() as u64,
        read_secs,
        secs,
        written_bytes: after.saturating_sub(before),
        store_bytes,
        replayed_store_bytes,
        log_bytes,
    })
}

/// Every record of a store, keys and values one after the other in one buffer: the
/// least memory for them, and nothing of sled's pages held.
struct Records {
    bytes: Vec<u8>,
    lens: Vec<(u32, u32)>,
}

impl Records {
    /// The checkpoint and the records of the store in `dir`, which is closed again.
    fn read(dir: &Path) -> anyhow::Result<(u64, Records)> {
        let store = racing_projections::Store::open(dir)?;
        let mut records = Records {
            bytes: Vec::new(),
            lens: Vec::new(),
        };
        for item in store.stored_records() {
            let (key, value) = item?;
            records.bytes.extend_from_slice(&key);
            records.bytes.extend_from_slice(&value);
            records
                .lens
                .push((u32::try_from(key.len())?, u32::try_from(value.len())?));
        }
        Ok((store.checkpoint()?, records))
    }

    /// Each record's key and value, in key order.
    fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let mut at = 0;
        self.lens.iter().map(move |&(key, value)| {
            let (key, value) = (key as usize, value as usize);
            let record = &self.bytes[at..at + key + value];
            at += key + value;
            record.split_at(key)
        })
    }
}

impl FloorResult {
    /// The part's rows of the table (`crate::report`): the floor is the baseline, and the
    /// replayed store is judged against it where `judged`.
    pub fn rows(&self, judged: bool) -> Vec<[String; 7]> {
        let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
        let ratio = self.replayed_store_bytes as f64 / self.store_bytes.max(1) as f64;
        vec![
            [
                format!(
                    "sled's floor ({} records, {:.1} MiB of keys and values, an insert each in key order, then a flush)",
                    thousands(self.records as f64),
                    mib(self.record_bytes)
                ),
                "seconds; bytes written to storage per event; on disk, MiB (× the log's payloads)"
                    .into(),
                String::new(),
                format!(
                    "{:.1} s; {:.0}; {:.1} ({:.2} ×)",
                    self.secs,
                    self.written_bytes as f64 / self.events.max(1) as f64,
                    mib(self.store_bytes),
                    self.store_bytes as f64 / self.log_bytes.max(1) as f64
                ),
                String::new(),
                String::new(),
                String::new(),
            ],
            [
                String::new(),
                "the replayed store on disk, MiB, against the floor's".into(),
                format!("{:.1}", mib(self.replayed_store_bytes)),
                format!("{:.1}", mib(self.store_bytes)),
                format!("{ratio:.2}"),
                format!("≤ {STORE_RATIO:.1} × the floor's"),
                verdict(judged, ratio <= STORE_RATIO).into(),
            ],
        ]
    }
}
