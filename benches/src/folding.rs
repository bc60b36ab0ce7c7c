//! The fold alone, in this process: the bench's log (its seasons generated here, for a
//! fixed day) folded into a fresh store through a [`Loader`], as the service's replay
//! folds it, but with no NATS, no decoding and no other thread than the loader's writer;
//! or logs as `racing demo` writes them (the amending seasons of `scripts/amendments`),
//! in batches of a few events written whole, as a catch-up while the API answers folds
//! them.
//! What it prints (the fold's time, its thread's CPU, the process's, how long its thread
//! waited for the writer) is that of one build; run under `valgrind --tool=callgrind`
//! with `--toggle-collect` on [`fold`] and the writer's thread, it counts instructions,
//! which do not move with the machine's load: two builds compared so tell a change of a
//! few percent that a replay's time, which moves by a quarter from run to run here, does
//! not (BENCHMARKS.md, "The fold alone").

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use jiff::civil::Date;
use racing_events::Envelope;
use racing_projections::{Loader, Options, Store};

use crate::feed::{season_events, Day};
use crate::service::{cpu_ticks, TICKS_PER_SECOND};

/// The folding thread's CPU time, and the process's.
const THREAD: &str = "/proc/thread-self/stat";
const PROCESS: &str = "/proc/self/stat";

/// Messages a batch: the service's while it catches up (`CATCH_UP_BATCH`).
const BATCH: usize = 65_536;

/// What [`run`] is asked.
pub struct Asked<'a> {
    /// Where the store goes (removed at the end).
    pub work: &'a Path,
    /// The day the log's newest season ends on.
    pub date: Date,
    /// Seasons, oldest first: the bench's log at this many seasons.
    pub seasons: u64,
    /// Price moves of each race.
    pub ticks: usize,
    /// Logs folded in place of the bench's, one after the other: an envelope a line.
    pub logs: &'a [PathBuf],
    /// Events a batch, each batch written whole (`Loader::beside_reads`); `None`: batches
    /// of [`BATCH`] written in steps, as a replay's.
    pub batch: Option<usize>,
}

/// Generates the log (or reads the logs asked), folds it into a fresh store under `work`
/// and prints the figures.
pub fn run(asked: &Asked<'_>) -> anyhow::Result<()> {
    let (events, published, log) = if asked.logs.is_empty() {
        let day = Day::utc(asked.date);
        let mut events = Vec::new();
        for s in (0..asked.seasons).rev() {
            events.extend(season_events(s, &day, asked.ticks)?);
        }
        // Published once the last event had occurred, as the bench's log is: the next day.
        let published = next_day(asked.date)?;
        let log = format!(
            "{} seasons, {} moves a race, ending {}",
            asked.seasons, asked.ticks, asked.date
        );
        (events, published, log)
    } else {
        let events = read_logs(asked.logs)?;
        // Published the day after the last that any event occurred on, so that the same
        // logs fold the same whatever the hour.
        let mut last = None;
        for env in &events {
            let at: jiff::Timestamp = env.occurred_at.parse()?;
            last = last.max(Some(at));
        }
        let last = last.unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let published = next_day(last.to_zoned(jiff::tz::TimeZone::UTC).date())?;
        let log = match asked.logs.len() {
            1 => "1 log".to_owned(),
            n => format!("{n} logs"),
        };
        (events, published, log)
    };
    let dir = asked.work.join("fold-alone");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let result = fold_timed(&dir, &events, published, asked.batch);
    let _ = std::fs::remove_dir_all(&dir);
    let (secs, thread_cpu, process_cpu, waited) = result?;
    let n = events.len() as f64;
    let batches = match asked.batch {
        Some(batch) => format!("{batch} a batch, each written whole"),
        None => format!("{BATCH} a batch, written in steps"),
    };
    println!(
        "fold alone: {} events ({log}; {batches}): {secs:.2} s, {:.0} events/s; the \
         folding thread's CPU {thread_cpu:.2} s ({:.1} µs an event), the process's \
         {process_cpu:.2} s; the folding thread waited {:.2} s for the writer",
        events.len(),
        n / secs.max(1e-9),
        thread_cpu * 1e6 / n.max(1.0),
        waited.as_secs_f64(),
    );
    Ok(())
}

/// The start of the day after `date`, UTC, in nanoseconds since the epoch.
pub(crate) fn next_day(date: Date) -> anyhow::Result<i128> {
    Ok(date
        .tomorrow()?
        .to_zoned(jiff::tz::TimeZone::UTC)?
        .timestamp()
        .as_nanosecond())
}

/// The envelopes of `logs`, one after the other, each a line of its log (blank lines
/// skipped).
fn read_logs(logs: &[PathBuf]) -> anyhow::Result<Vec<Envelope>> {
    let mut events = Vec::new();
    for log in logs {
        let text =
            std::fs::read_to_string(log).with_context(|| format!("reading {}", log.display()))?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            // Validated as the service's decoder validates what it takes.
            let env = Envelope::parse(line.as_bytes())
                .map_err(|e| anyhow::anyhow!("{} line {}: {e}", log.display(), i + 1))?;
            events.push(env);
        }
    }
    Ok(events)
}

/// Folds `events` into a fresh store in `dir`: seconds, the folding thread's CPU seconds
/// and the process's, and how long the folding thread waited for the writer.
fn fold_timed(
    dir: &Path,
    events: &[Envelope],
    published: i128,
    batch: Option<usize>,
) -> anyhow::Result<(f64, f64, f64, Duration)> {
    let options = Options::default();
    let budget = options.replay_bytes;
    let store = Store::open_with(dir, options)?;
    let (thread0, process0) = (cpu(THREAD)?, cpu(PROCESS)?);
    let started = Instant::now();
    let waited = fold(&store, events, published, (budget, batch))?;
    let secs = started.elapsed().as_secs_f64();
    let thread = cpu(THREAD)? - thread0;
    let process = cpu(PROCESS)? - process0;
    Ok((secs, thread, process, waited))
}

/// The fold itself (what callgrind is told to count, with the writer's thread): each
/// batch of [`BATCH`] messages folded, sealed and handed to the loader's writer, which
/// writes it in steps while the next folds, holding up to `budget` bytes of records; or,
/// where `batch` says, batches of that many written whole. How long it waited for the
/// writer: a batch is handed over once the one before it is written.
#[inline(never)]
pub fn fold(
    store: &Store,
    events: &[Envelope],
    published: i128,
    (budget, batch): (usize, Option<usize>),
) -> anyhow::Result<Duration> {
    let mut loader = match batch {
        Some(_) => Loader::beside_reads(store)?,
        None => Loader::new(store, budget)?,
    };
    let mut seq = 0u64;
    let mut waited = Duration::ZERO;
    for chunk in events.chunks(batch.unwrap_or(BATCH).max(1)) {
        let mut batch = loader.batch();
        for env in chunk {
            seq += 1;
            let at = published + i128::from(seq) * 1_000;
            batch.apply(seq, at, env)?;
        }
        let sealed = batch.seal(|_| {})?;
        let handing = Instant::now();
        loader.write(sealed)?;
        waited += handing.elapsed();
    }
    let finishing = Instant::now();
    loader.finish()?;
    Ok(waited + finishing.elapsed())
}

/// User and system CPU seconds of `stat` (a `/proc/.../stat`).
fn cpu(stat: &str) -> anyhow::Result<f64> {
    Ok(cpu_ticks(stat)? as f64 / TICKS_PER_SECOND as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory of this test's own, removed when dropped.
    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn logs_given_are_folded_in_order_in_the_batches_asked() {
        let dir =
            Dir(std::env::temp_dir().join(format!("racing-bench-fold-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0).expect("dir");
        let day = Day::utc(Date::constant(2026, 11, 25));
        let events = season_events(0, &day, 1).expect("season");
        let (first, second) = events.split_at(events.len() / 2);
        let mut logs = Vec::new();
        for (i, part) in [first, second].into_iter().enumerate() {
            let path = dir.0.join(format!("log-{i}.ndjson"));
            let lines: Vec<String> = part.iter().map(Envelope::to_json).collect();
            // A blank line between events is skipped.
            std::fs::write(&path, lines.join("\n\n") + "\n").expect("log");
            logs.push(path);
        }
        let read = read_logs(&logs).expect("read");
        assert_eq!(read.len(), events.len());
        assert!(read
            .iter()
            .zip(&events)
            .all(|(a, b)| a.event_id == b.event_id));
        let store = Store::open_with(&dir.0.join("store"), Options::default()).expect("store");
        fold(
            &store,
            &read,
            next_day(day.date).expect("day"),
            (0, Some(7)),
        )
        .expect("fold");
        assert_eq!(store.checkpoint().expect("checkpoint"), events.len() as u64);

        // A line that is not an event is named by its log and line.
        std::fs::write(&logs[1], "{}\n").expect("log");
        let err = read_logs(&logs).expect_err("refused").to_string();
        assert!(err.contains("log-1.ndjson line 1"), "{err}");
    }
}
