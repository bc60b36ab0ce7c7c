//! Applied event ids at scale: the store folding a log of many distinct `event_id`s, as
//! the projector does while catching up (batches of 65,536), then opened again as at a
//! restart. Each side runs in a process of its own, so that its resident memory is its
//! own: the figures are the fold's rate, the peak resident memory, the share of new ids
//! its filter let through to a look-up in the runs, and the restart's time to its first
//! batch with the memory it then holds and the ids it read.
//!
//! Then, in a third process, the store folds ids as live updates come, in prompt batches
//! (`Store::prompt_batch`): enough of them to make a save of the filter and merges of
//! every size due. The figure is the upkeep before each batch, which every live update in
//! the batch, and every client's frame of it, waits for.
//!
//! No NATS: the messages are made in memory, so what is measured is the store and its
//! duplicate detection alone (the replay part measures the whole path from the stream).

use std::path::Path;
use std::time::Instant;

use anyhow::{ensure, Context as _};
use racing_events::{samples, Envelope};
use racing_projections::{AppliedIdStats, Outcome, Store};
use serde::{Deserialize, Serialize};

use crate::figures::{percentile_ms, thousands, verdict};
use crate::scale::Scale;

/// Peak resident memory folding the applied-ids log, under this, MiB: sled's cache of
/// 256 MiB, the filter's 32 MiB (its first layer, up to 24 M ids; it grows by layers past
/// that, 224 MiB at 100 M), one batch.
pub const IDS_PEAK_MIB: u64 = 512;

/// Messages per batch: the projector's while catching up.
const BATCH: u64 = 65_536;

/// Messages per prompt batch: more than a live batch holds, so that the part takes
/// seconds; the upkeep before a batch does not depend on it.
const PROMPT_BATCH: u64 = 256;

/// What the two processes measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdsResult {
    /// Distinct ids folded.
    pub events: u64,
    /// Seconds the fold took.
    pub fold_secs: f64,
    /// Peak resident memory of the folding process, KiB (`VmHWM`).
    pub fold_peak_rss_kib: u64,
    /// Seconds from opening the store again to its first batch folded and committed.
    pub reopen_secs: f64,
    /// Resident memory of the reopening process after that batch, KiB.
    pub reopen_rss_kib: u64,
    /// Ids the reopening read from disk to take up its duplicate detection.
    #[serde(default)]
    pub reopen_ids_read: u64,
    /// Of `reopen_secs`, seconds sled took to open the store, and then the applied ids
    /// to load (the saved filter, and the ids of the runs it lacks).
    #[serde(default)]
    pub reopen_open_secs: f64,
    #[serde(default)]
    pub reopen_load_secs: f64,
    /// The prompt batches folded after the restart.
    #[serde(default)]
    pub prompt: Option<PromptFigures>,
    /// The filter of applied ids over the fold, and as it ended.
    #[serde(default)]
    pub fold_filter: Option<FilterFigures>,
}

impl IdsResult {
    /// The part's rows of the table (`crate::report`); the goal judged where `judged`.
    pub fn rows(&self, judged: bool) -> Vec<[String; 7]> {
        let mut rows = Vec::new();
        rows.push([
            format!("Applied ids ({} distinct)", thousands(self.events as f64)),
            "store fold events/s; peak RSS".into(),
            format!(
                "{} /s; {} MiB",
                thousands(self.events as f64 / self.fold_secs),
                self.fold_peak_rss_kib / 1024
            ),
            String::new(),
            String::new(),
            format!("peak < {IDS_PEAK_MIB} MiB"),
            verdict(judged, self.fold_peak_rss_kib / 1024 < IDS_PEAK_MIB).into(),
        ]);
        rows.push([
            String::new(),
            "reopened: to first batch (sled's open, the ids' load); RSS; ids read".into(),
            format!(
                "{:.3} s ({:.3}, {:.3}); {} MiB; {}",
                self.reopen_secs,
                self.reopen_open_secs,
                self.reopen_load_secs,
                self.reopen_rss_kib / 1024,
                thousands(self.reopen_ids_read as f64)
            ),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
        let filters = [
            ("fold", self.fold_filter),
            ("then", self.prompt.as_ref().and_then(|p| p.filter)),
        ];
        for (when, f) in filters.iter().filter_map(|(w, f)| Some((w, (*f)?))) {
            rows.push([
                String::new(),
                format!("{when}: new ids let through by the filter; its layers, MiB, estimate"),
                format!(
                    "{:.3}%; {}, {}, {:.3}%",
                    100.0 * f.rate(),
                    f.layers,
                    f.bytes >> 20,
                    100.0 * f.estimated_rate
                ),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        if let Some(p) = &self.prompt {
            rows.push([
                String::new(),
                format!(
                    "then {} ids in {} prompt batches: upkeep before a batch p50 / p99.9 / max ms ({} merges, {} filter saves)",
                    thousands(p.ids as f64),
                    thousands(p.batches as f64),
                    p.merges,
                    p.filter_saves
                ),
                format!(
                    "{:.3} / {:.2} / {:.2}",
                    p.upkeep_p50_ms, p.upkeep_p999_ms, p.upkeep_max_ms
                ),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        rows
    }
}

/// The filter in front of the applied ids over some ids folded, and as it then stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct FilterFigures {
    /// New ids folded meanwhile.
    pub ids: u64,
    /// Of those, ids the filter let through to a look-up in the runs (none was found).
    pub false_positives: u64,
    /// Layers and bytes of the filter at the end.
    pub layers: usize,
    pub bytes: usize,
    /// Its estimate at the end of the share of new ids it lets through.
    pub estimated_rate: f64,
}

impl FilterFigures {
    /// The filter between `before` and `after`, `ids` new ids folded between them.
    fn between(before: &AppliedIdStats, after: &AppliedIdStats, ids: u64) -> FilterFigures {
        FilterFigures {
            ids,
            false_positives: after.false_positives - before.false_positives,
            layers: after.filter_layers,
            bytes: after.filter_bytes,
            estimated_rate: after.filter_false_positive_rate,
        }
    }

    /// The share of the new ids let through.
    pub fn rate(&self) -> f64 {
        self.false_positives as f64 / self.ids.max(1) as f64
    }
}

/// Ids folded in prompt batches, and the upkeep before each.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptFigures {
    /// Distinct ids folded.
    pub ids: u64,
    /// Prompt batches they took.
    pub batches: u64,
    /// Time to start a prompt batch (the upkeep of the applied ids before it), ms:
    /// median, 99.9th percentile, most.
    pub upkeep_p50_ms: f64,
    pub upkeep_p999_ms: f64,
    pub upkeep_max_ms: f64,
    /// Merges of runs and saves of the filter completed meanwhile.
    pub merges: u64,
    pub filter_saves: u64,
    /// The filter over these ids.
    #[serde(default)]
    pub filter: Option<FilterFigures>,
}

/// One child's figures, as it prints them.
#[derive(Debug, Serialize, Deserialize)]
pub struct ChildFigures {
    /// Seconds of the measured work.
    pub secs: f64,
    /// `VmHWM`, KiB.
    pub peak_rss_kib: u64,
    /// `VmRSS` at the end, KiB.
    pub rss_kib: u64,
    /// Ids read from disk when the store loaded its applied ids.
    #[serde(default)]
    pub ids_read: u64,
    /// Of `secs`, seconds sled took to open the store, and then the applied ids to load.
    #[serde(default)]
    pub open_secs: f64,
    #[serde(default)]
    pub load_secs: f64,
    /// What prompt batches measured, if the child folded them.
    #[serde(default)]
    pub prompt: Option<PromptFigures>,
    /// The filter over the ids the child folded in batches.
    #[serde(default)]
    pub filter: Option<FilterFigures>,
}

/// Runs both sides in child processes of this benchmark, on a fresh store under `work`,
/// which is removed afterwards (at 10 M ids it holds gigabytes).
pub fn run(scale: &Scale, work: &Path) -> anyhow::Result<IdsResult> {
    let store = work.join("ids-store");
    let _ = std::fs::remove_dir_all(&store);
    let exe = std::env::current_exe()?;
    let child = |args: &[&str]| -> anyhow::Result<ChildFigures> {
        let out = std::process::Command::new(&exe)
            .arg("fold-ids")
            .arg("--store")
            .arg(&store)
            .args(args)
            .output()
            .context("running the fold-ids child")?;
        ensure!(
            out.status.success(),
            "fold-ids failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(serde_json::from_slice(&out.stdout)?)
    };
    let events = scale.distinct_ids;
    let fold = child(&["--events", &events.to_string()]);
    let reopen = fold.as_ref().ok().map(|_| child(&["--reopen"]));
    let prompt = match &reopen {
        Some(Ok(_)) => Some(child(&[
            "--events",
            &events.to_string(),
            "--prompt",
            &scale.prompt_ids.to_string(),
        ])),
        _ => None,
    };
    let _ = std::fs::remove_dir_all(&store);
    let (fold, reopen) = (fold?, reopen.context("no reopen")??);
    let prompt = prompt.context("no prompt batches")??;
    let result = IdsResult {
        events,
        fold_secs: fold.secs,
        fold_peak_rss_kib: fold.peak_rss_kib,
        reopen_secs: reopen.secs,
        reopen_rss_kib: reopen.rss_kib,
        reopen_ids_read: reopen.ids_read,
        reopen_open_secs: reopen.open_secs,
        reopen_load_secs: reopen.load_secs,
        prompt: prompt.prompt,
        fold_filter: fold.filter,
    };
    eprintln!(
        "bench:   ids {} folded in {:.1} s ({:.0} events/s), peak RSS {} MiB; reopened to a first batch in {:.3} s (sled's open {:.3} s, the ids' load {:.3} s), RSS {} MiB, {} ids read",
        events,
        result.fold_secs,
        events as f64 / result.fold_secs,
        result.fold_peak_rss_kib / 1024,
        result.reopen_secs,
        result.reopen_open_secs,
        result.reopen_load_secs,
        result.reopen_rss_kib / 1024,
        result.reopen_ids_read
    );
    if let Some(f) = &result.fold_filter {
        eprintln!(
            "bench:   ids filter over the fold: {} of {} new ids looked up in the runs ({:.3}%); at the end {} layers, {} MiB, estimated {:.3}%",
            f.false_positives, f.ids, 100.0 * f.rate(), f.layers, f.bytes >> 20, 100.0 * f.estimated_rate
        );
    }
    if let Some(f) = result.prompt.as_ref().and_then(|p| p.filter) {
        eprintln!(
            "bench:   ids filter over the prompt batches: {} of {} new ids looked up in the runs ({:.3}%); at the end {} layers, {} MiB, estimated {:.3}%",
            f.false_positives, f.ids, 100.0 * f.rate(), f.layers, f.bytes >> 20, 100.0 * f.estimated_rate
        );
    }
    if let Some(p) = &result.prompt {
        eprintln!(
            "bench:   ids then {} in {} prompt batches: upkeep before a batch p50 / p99.9 / max {:.3} / {:.2} / {:.2} ms; {} merges, {} filter saves",
            p.ids, p.batches, p.upkeep_p50_ms, p.upkeep_p999_ms, p.upkeep_max_ms, p.merges, p.filter_saves
        );
    }
    Ok(result)
}

/// The child: folds `events` distinct ids into a fresh store at `store`, or (`reopen`)
/// opens it and folds one batch of a duplicate and a new id, or (`prompt` ids) opens it
/// and folds that many ids after the first `events` in prompt batches; prints its figures
/// as JSON.
pub fn child(store: &Path, events: u64, reopen: bool, prompt: u64) -> anyhow::Result<()> {
    if prompt > 0 {
        return prompt_child(store, events, prompt);
    }
    let started = Instant::now();
    let s = Store::open(store)?;
    let open_secs = started.elapsed().as_secs_f64();
    s.load_applied_ids()?;
    let load_secs = started.elapsed().as_secs_f64() - open_secs;
    let mut filter = None;
    if reopen {
        let next = s.checkpoint()? + 1;
        let mut batch = s.batch()?;
        ensure!(
            batch.apply(next, 0, &event(0))? == Some(Outcome::Duplicate),
            "the first id was applied again after the restart"
        );
        ensure!(
            batch.apply(next + 1, 0, &event(u64::MAX))? == Some(Outcome::Applied),
            "a new id was taken for a duplicate"
        );
        batch.commit()?;
    } else {
        let mut n = 0;
        while n < events {
            let mut batch = s.batch()?;
            for i in n..events.min(n + BATCH) {
                ensure!(
                    batch.apply(i + 1, 0, &event(i))? == Some(Outcome::Applied),
                    "id {i} taken for a duplicate"
                );
            }
            batch.commit()?;
            n += BATCH;
        }
        // What a crash would leave unflushed is on disk before the clock stops.
        futures::executor::block_on(s.flush())?;
        let before = AppliedIdStats::default();
        filter = Some(FilterFigures::between(
            &before,
            &s.applied_id_stats()?,
            events,
        ));
    }
    let secs = started.elapsed().as_secs_f64();
    let figures = ChildFigures {
        secs,
        peak_rss_kib: status_kib("VmHWM:")?,
        rss_kib: status_kib("VmRSS:")?,
        ids_read: s.applied_id_stats()?.read_at_load,
        open_secs,
        load_secs,
        prompt: None,
        filter,
    };
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}

/// Folds the ids from `from` to `from + ids` in prompt batches into the store at `store`,
/// timing the start of each batch.
fn prompt_child(store: &Path, from: u64, ids: u64) -> anyhow::Result<()> {
    let s = Store::open(store)?;
    let before = s.applied_id_stats()?;
    let started = Instant::now();
    let mut upkeep = Vec::new();
    let mut seq = s.checkpoint()?;
    let mut n = from;
    while n < from + ids {
        let asked = Instant::now();
        let mut batch = s.prompt_batch()?;
        upkeep.push(asked.elapsed().as_micros() as u64);
        for i in n..(from + ids).min(n + PROMPT_BATCH) {
            seq += 1;
            ensure!(
                batch.apply(seq, 0, &event(i))? == Some(Outcome::Applied),
                "id {i} taken for a duplicate"
            );
        }
        batch.commit()?;
        n += PROMPT_BATCH;
    }
    let secs = started.elapsed().as_secs_f64();
    let after = s.applied_id_stats()?;
    upkeep.sort_unstable();
    let at = |p: f64| percentile_ms(&upkeep, p);
    let figures = ChildFigures {
        secs,
        peak_rss_kib: status_kib("VmHWM:")?,
        rss_kib: status_kib("VmRSS:")?,
        ids_read: before.read_at_load,
        open_secs: 0.0,
        load_secs: 0.0,
        prompt: Some(PromptFigures {
            ids,
            batches: upkeep.len() as u64,
            upkeep_p50_ms: at(0.5),
            upkeep_p999_ms: at(0.999),
            upkeep_max_ms: at(1.0),
            merges: after.merges - before.merges,
            filter_saves: after.filter_saves - before.filter_saves,
            filter: Some(FilterFigures::between(&before, &after, ids)),
        }),
        filter: None,
    };
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}

/// The `i`th event: an odds move of one of ten races under an id of its own, spread over
/// the id space as random ids are.
fn event(i: u64) -> Envelope {
    let race = i64::try_from(i % 10).unwrap_or(0) + 1;
    let price = 2.0 + (i % 50) as f64 / 10.0;
    let mut e = samples::envelope(samples::odds("2026-11-22", race, &[("A1", price)]));
    e.event_id = uuid::Uuid::from_u128(
        u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835),
    );
    e
}

/// A figure of this process from `/proc/self/status`, KiB.
fn status_kib(field: &str) -> anyhow::Result<u64> {
    std::fs::read_to_string("/proc/self/status")?
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .with_context(|| format!("no {field} in /proc/self/status"))
}
