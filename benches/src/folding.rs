//! The fold alone, in this process: the bench's log (its seasons generated here, for a
//! fixed day) folded into a fresh store through a [`Loader`], as the service's replay
//! folds it, but with no NATS, no decoding and no other thread than the loader's writer.
//! What it prints (the fold's time, its thread's CPU, the process's) is that of one build;
//! run under `valgrind --tool=callgrind` with `--toggle-collect` on [`fold`] and the
//! writer's thread, it counts instructions, which do not move with the machine's load:
//! two builds compared so tell a change of a few percent that a replay's time, which
//! moves by a quarter from run to run here, does not (BENCHMARKS.md, "The fold alone").

use std::path::Path;
use std::time::Instant;

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
}

/// Generates the log, folds it into a fresh store under `work` and prints the figures.
pub fn run(asked: &Asked<'_>) -> anyhow::Result<()> {
    let day = Day::utc(asked.date);
    let mut events = Vec::new();
    for s in (0..asked.seasons).rev() {
        events.extend(season_events(s, &day, asked.ticks)?);
    }
    let dir = asked.work.join("fold-alone");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    // Published once the last event had occurred, as the bench's log is: the next day.
    let published = asked
        .date
        .tomorrow()?
        .to_zoned(jiff::tz::TimeZone::UTC)?
        .timestamp()
        .as_nanosecond();
    let result = fold_timed(&dir, &events, published);
    let _ = std::fs::remove_dir_all(&dir);
    let (secs, thread_cpu, process_cpu) = result?;
    let n = events.len() as f64;
    println!(
        "fold alone: {} events ({} seasons, {} moves a race, ending {}): {secs:.2} s, \
         {:.0} events/s; the folding thread's CPU {thread_cpu:.2} s ({:.1} µs an event), \
         the process's {process_cpu:.2} s",
        events.len(),
        asked.seasons,
        asked.ticks,
        asked.date,
        n / secs.max(1e-9),
        thread_cpu * 1e6 / n.max(1.0),
    );
    Ok(())
}

/// Folds `events` into a fresh store in `dir`: seconds, the folding thread's CPU seconds
/// and the process's.
fn fold_timed(dir: &Path, events: &[Envelope], published: i128) -> anyhow::Result<(f64, f64, f64)> {
    let options = Options::default();
    let budget = options.replay_bytes;
    let store = Store::open_with(dir, options)?;
    let (thread0, process0) = (cpu(THREAD)?, cpu(PROCESS)?);
    let started = Instant::now();
    fold(&store, events, published, budget)?;
    let secs = started.elapsed().as_secs_f64();
    let thread = cpu(THREAD)? - thread0;
    let process = cpu(PROCESS)? - process0;
    Ok((secs, thread, process))
}

/// The fold itself (what callgrind is told to count, with the writer's thread): each
/// batch of [`BATCH`] messages folded, sealed and handed to the loader's writer, which
/// writes it while the next folds.
#[inline(never)]
pub fn fold(
    store: &Store,
    events: &[Envelope],
    published: i128,
    budget: usize,
) -> anyhow::Result<()> {
    let mut loader = Loader::new(store, budget)?;
    let mut seq = 0u64;
    for chunk in events.chunks(BATCH) {
        let mut batch = loader.batch();
        for env in chunk {
            seq += 1;
            let at = published + i128::from(seq) * 1_000;
            batch.apply(seq, at, env)?;
        }
        let sealed = batch.seal(|_| {})?;
        loader.write(sealed)?;
    }
    loader.finish()?;
    Ok(())
}

/// User and system CPU seconds of `stat` (a `/proc/.../stat`).
fn cpu(stat: &str) -> anyhow::Result<f64> {
    Ok(cpu_ticks(stat)? as f64 / TICKS_PER_SECOND as f64)
}
