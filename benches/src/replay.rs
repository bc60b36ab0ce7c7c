//! Projection: the service replaying the whole log into empty read models, against an
//! ordered consumer that only reads the same stream and drops each message; then the
//! service's start-up on read models already caught up.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use async_nats::jetstream::{self, consumer};
use futures::StreamExt;
use serde::Serialize;

use crate::feed::STREAM;
use crate::scale::Scale;
use crate::service::{Metrics, Service, Target};

/// The path asked to see the service ready: any document answers 503 until the
/// projector has caught up once.
const PROBE: &str = "/api/v1/racecards/today";

/// Replay runs of both sides.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayResult {
    /// Messages in the stream.
    pub events: u64,
    /// Seconds the raw consumer took to read them all, per run.
    pub raw_secs: Vec<f64>,
    /// Seconds from the service's start to its first 200 on empty read models, per run.
    pub service_secs: Vec<f64>,
    /// The same on one CPU (`taskset -c 0`), per run: with [`ReplayResult::service_secs`],
    /// how the replay scales with the cores it has.
    pub one_core_secs: Vec<f64>,
    /// Peak resident memory of the service by its first 200, KiB, per run (all cores).
    pub peak_rss_kib: Vec<u64>,
    /// Bytes of the log's payloads, which the store's size is compared with.
    pub log_bytes: u64,
    /// Bytes the read models take on disk after the last replay (documents, the
    /// versions kept for `as_of`, the odds journal, the change feed, applied ids).
    pub store_bytes: u64,
    /// Bytes the service had written to storage when it answered its first 200, per run
    /// ([`Service::written_bytes`]).
    pub written_bytes: Vec<u64>,
    /// Of those, bytes of files removed before the kernel wrote them back, per run.
    pub cancelled_bytes: Vec<u64>,
    /// CPU seconds (user and system) the service had used by then, per run.
    pub cpu_secs: Vec<f64>,
}

/// Start-up runs on caught-up read models.
#[derive(Debug, Clone, Serialize)]
pub struct StartupResult {
    /// Messages the read models hold.
    pub events: u64,
    /// Seconds from process start to the first 200, per run.
    pub secs: Vec<f64>,
}

/// Replays the stream into fresh read models at `store` (left caught up for the other
/// parts), alternating with the raw consumer.
pub async fn replay(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log_bytes: u64,
) -> anyhow::Result<ReplayResult> {
    let js = jetstream::new(target.connect(racing::nats::Role::Service).await?);
    let state = js.get_stream(STREAM).await?.info().await?.state.clone();
    let (events, last) = (state.messages, state.last_sequence);
    let client = reqwest::Client::new();
    let mut result = ReplayResult {
        events,
        raw_secs: Vec::new(),
        service_secs: Vec::new(),
        one_core_secs: Vec::new(),
        peak_rss_kib: Vec::new(),
        log_bytes,
        store_bytes: 0,
        written_bytes: Vec::new(),
        cancelled_bytes: Vec::new(),
        cpu_secs: Vec::new(),
    };
    for round in 0..scale.replay_rounds {
        // The raw consumer, the service on one CPU, then on every CPU; the other way
        // round every other round. The last replay on every CPU leaves its store.
        let order = if round % 2 == 0 {
            [Side::Raw, Side::OneCore, Side::AllCores]
        } else {
            [Side::OneCore, Side::AllCores, Side::Raw]
        };
        for side in order {
            if side == Side::OneCore && !scale.replay_one_core {
                continue;
            }
            if side == Side::Raw {
                let (count, took) = match raw_consume(&js, last).await {
                    Ok(read) => read,
                    Err(e) => {
                        // The baseline's ordered pull consumer stalled once in about ten
                        // full runs, nothing delivered for 60 s (stalled pull consumers
                        // are a known class of client issue; the service's projector
                        // checks for them): its round runs again, once, and says so.
                        eprintln!(
                            "bench:   replay round {} raw: {e:#}; running it again",
                            round + 1
                        );
                        raw_consume(&js, last).await?
                    }
                };
                ensure!(
                    count == events,
                    "the raw consumer read {count} of {events} messages"
                );
                eprintln!(
                    "bench:   replay round {} raw     {:.2} s  {:>9.0} events/s",
                    round + 1,
                    took.as_secs_f64(),
                    events as f64 / took.as_secs_f64()
                );
                result.raw_secs.push(took.as_secs_f64());
            } else {
                let _ = std::fs::remove_dir_all(store);
                let (label, cpus) = match side {
                    Side::OneCore => ("replay-one-core", Some("0")),
                    _ => ("replay", None),
                };
                let mut service = Service::start_on(target, store, label, cpus).await?;
                let took = service
                    .wait_ok(
                        &client,
                        PROBE,
                        Duration::from_millis(10),
                        Duration::from_secs(3600),
                    )
                    .await?;
                let (written, cancelled) = service.written_bytes()?;
                let cpu = service.cpu_ticks()? as f64 / crate::service::TICKS_PER_SECOND as f64;
                let peak = service.peak_rss_kib()?;
                let handed = service.metrics(&client).await?;
                service.stop().await?;
                eprintln!(
                    "bench:   replay round {} {label:<15} {:.2} s  {:>9.0} events/s  {:.0} bytes written/event  {cpu:.1} CPU s  peak RSS {} MiB",
                    round + 1,
                    took.as_secs_f64(),
                    events as f64 / took.as_secs_f64(),
                    written as f64 / events.max(1) as f64,
                    peak >> 10
                );
                print_handed(&handed, events, written)?;
                if side == Side::OneCore {
                    result.one_core_secs.push(took.as_secs_f64());
                    continue;
                }
                result.peak_rss_kib.push(peak);
                result.service_secs.push(took.as_secs_f64());
                result.written_bytes.push(written);
                result.cancelled_bytes.push(cancelled);
                result.cpu_secs.push(cpu);
            }
        }
    }
    // Measured before the check, which opens the store with this benchmark's own
    // projections: a build of an older schema, run for a side-by-side figure, still
    // reports its size before the check refuses its store.
    result.store_bytes = dir_bytes(&store.join("read-models"))?;
    eprintln!(
        "bench:   read models on disk: {:.1} MiB",
        result.store_bytes as f64 / (1 << 20) as f64
    );
    let models = check_store(store, last)?;
    print_kinds(&models, events)?;
    Ok(result)
}

/// `racing-bench kinds`: the records of the read models in `dir` (a service's
/// `read-models`, the service stopped) by kind, for a store built elsewhere than in the
/// bench (`scripts/amendments`' with `AMEND_KINDS`).
pub fn kinds(dir: &Path) -> anyhow::Result<()> {
    let models = racing_projections::Store::open(dir)
        .with_context(|| format!("opening the read models in {}", dir.display()))?;
    let events = models.checkpoint()?;
    eprintln!("bench:   the read models of {events} events, by kind:");
    print_kinds(&models, events)
}

/// The records of the read models `models`, of `events` events, and their bytes, by kind.
fn print_kinds(models: &racing_projections::Store, events: u64) -> anyhow::Result<()> {
    let kinds = store_breakdown(models)?;
    let (records, bytes) = (kinds.values()).fold((0, 0), |(r, b), (kr, kb)| (r + kr, b + kb));
    for (kind, (records, bytes)) in kinds.into_iter().chain([("all".into(), (records, bytes))]) {
        eprintln!(
            "bench:     {kind:<32} {records:>9} records {:>9.1} MiB ({:.0} B/event, {:.0} B/record)",
            bytes as f64 / (1 << 20) as f64,
            bytes as f64 / events.max(1) as f64,
            bytes as f64 / records.max(1) as f64
        );
    }
    Ok(())
}

/// What the replay's commits handed sled, by kind of record, the most bytes first, and
/// in all against what sled wrote to storage (`written` bytes): how much of the bytes
/// written an event is the read models' own and how much the engine adds. Builds without
/// the service's count of it print nothing.
fn print_handed(metrics: &Metrics, events: u64, written: u64) -> anyhow::Result<()> {
    let records = metrics.series("racing_store_written_records_total")?;
    let mut bytes = metrics.series("racing_store_written_bytes_total")?;
    if bytes.is_empty() {
        return Ok(());
    }
    bytes.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = bytes.iter().map(|(_, b)| b).sum();
    let per_event = |b: f64| b / events.max(1) as f64;
    eprintln!(
        "bench:     handed to sled {:.0} bytes an event; sled wrote {:.2} times that",
        per_event(total),
        written as f64 / total.max(1.0)
    );
    for (labels, b) in bytes {
        let count = records
            .iter()
            .find(|(l, _)| *l == labels)
            .map_or(0.0, |(_, c)| *c);
        eprintln!(
            "bench:       {:>6.0} B/event {:>5.1} %  {:>10.0} records  {labels}",
            per_event(b),
            100.0 * b / total.max(1.0),
            count
        );
    }
    Ok(())
}

/// The records of the read models `models` and their keys' and values' bytes, by kind
/// (the kinds the service counts its writes by, a version apart from its record), to see
/// where the store's bytes go.
fn store_breakdown(
    models: &racing_projections::Store,
) -> anyhow::Result<std::collections::BTreeMap<String, (u64, u64)>> {
    let mut kinds = std::collections::BTreeMap::<String, (u64, u64)>::new();
    for item in models.stored_records() {
        let (key, value) = item?;
        let (kind, version) = racing_projections::kind_of(&key);
        let name = racing_projections::KINDS
            .get(kind)
            .map_or(racing_projections::OTHER, |(name, _, _)| *name);
        let kind = match version {
            true => format!("{name} (versions)"),
            false => name.to_owned(),
        };
        let slot = kinds.entry(kind).or_default();
        slot.0 += 1;
        slot.1 += (key.len() + value.len()) as u64;
    }
    Ok(kinds)
}

/// Which side of the replay part runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Raw,
    OneCore,
    AllCores,
}

/// The bytes of the files under `dir`, however deep.
pub fn dir_bytes(dir: &Path) -> anyhow::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_bytes(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

/// Reads the whole stream with an ordered pull consumer, as the projector does, and
/// drops each message: the count and the time from consumer creation to the last.
async fn raw_consume(js: &jetstream::Context, last: u64) -> anyhow::Result<(u64, Duration)> {
    let started = Instant::now();
    let stream = js.get_stream(STREAM).await?;
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await?;
    let mut messages = consumer.messages().await?;
    let mut count = 0u64;
    let mut bytes = 0usize;
    while let Some(m) = tokio::time::timeout(Duration::from_secs(60), messages.next())
        .await
        .context("the raw consumer got nothing for 60 s")?
    {
        let m = m?;
        count += 1;
        bytes += m.payload.len();
        let info = m
            .info()
            .map_err(|e| anyhow::anyhow!("message metadata: {e}"))?;
        if info.stream_sequence >= last || info.pending == 0 {
            break;
        }
    }
    let took = started.elapsed();
    std::hint::black_box(bytes);
    Ok((count, took))
}

/// The read models reached the end of the stream, and no event became a dead letter;
/// returns them, open (sled holds a store's files locked until a handle's last flush, so
/// it is opened once).
fn check_store(store: &Path, last: u64) -> anyhow::Result<racing_projections::Store> {
    let models = racing_projections::Store::open(&store.join("read-models"))?;
    let checkpoint = models.checkpoint()?;
    ensure!(
        checkpoint == last,
        "the read models stopped at {checkpoint} of {last}"
    );
    let dead = models.dead_letters(0, 3)?;
    ensure!(dead.is_empty(), "dead letters in the replay: {dead:?}");
    Ok(models)
}

/// Starts the service on `store` until it first answers, then stops it: a store that
/// lacks part of the log (or all of it, where the replay part did not run) catches up.
/// The service's log is `label`'s.
pub async fn catch_up(target: &Target, store: &Path, label: &str) -> anyhow::Result<()> {
    let mut service = Service::start(target, store, label).await?;
    service
        .wait_ok(
            &reqwest::Client::new(),
            PROBE,
            Duration::from_millis(10),
            Duration::from_secs(3600),
        )
        .await?;
    service.stop().await
}

/// Starts the service on the caught-up `store` `scale.startup_rounds` times: time to the
/// first 200.
pub async fn startup(
    scale: &Scale,
    target: &Target,
    store: &Path,
) -> anyhow::Result<StartupResult> {
    let js = jetstream::new(target.connect(racing::nats::Role::Service).await?);
    let events = js.get_stream(STREAM).await?.info().await?.state.messages;
    let client = reqwest::Client::new();
    catch_up(target, store, "startup").await?;
    let mut secs = Vec::new();
    for round in 0..scale.startup_rounds {
        let mut service = Service::start(target, store, "startup").await?;
        let took = service
            .wait_ok(
                &client,
                PROBE,
                Duration::from_millis(2),
                Duration::from_secs(120),
            )
            .await?;
        service.stop().await?;
        eprintln!(
            "bench:   start-up round {} {:.3} s to the first 200",
            round + 1,
            took.as_secs_f64()
        );
        secs.push(took.as_secs_f64());
    }
    Ok(StartupResult { events, secs })
}
