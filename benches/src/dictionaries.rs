//! `racing-bench dictionaries`: the zstd dictionaries the store packs each packed kind's
//! records with (`projections/dictionaries/`), trained anew. They are trained on the
//! bench's kind of log (demo seasons and the trading of every race) made from seeds apart
//! from those of every season the bench's logs and `scripts/amendments` are made of, so
//! that no figure is measured on records a dictionary learnt. The log is folded into a
//! fresh store as the fold alone folds it (`folding.rs`), and each kind's records, as a
//! read gives them, are its samples.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use jiff::civil::Date;
use racing_projections::{dictionary_file, kind_of, Bytes, Options, Store, KINDS};

use crate::feed::{season_events_apart, Day};
use crate::folding::{fold, next_day};

/// Bytes a dictionary. In a trial on the amending seasons' records, dictionaries of a
/// quarter of this packed the kinds from 1 % smaller to 15 % larger (profiles); each
/// thread that packs or unpacks holds a context a kind, made with its dictionary.
const SIZE: usize = 16 << 10;

/// How far the log's seeds are from the bench's first season's: past any season a bench
/// makes (`--seasons` in the hundreds).
const APART: u64 = 1_000_000;

/// Seasons of the log, and its last day.
const SEASONS: u64 = 6;
const LAST_DAY: Date = jiff::civil::date(2026, 11, 25);

/// Price moves a race: the bench's log's.
const TICKS: usize = 30;

/// The most records of a kind a dictionary is trained on, taken evenly through the kind's
/// keys: zstd's training takes time and memory with the samples' bytes.
const MOST_SAMPLES: usize = 20_000;

/// Trains a dictionary for each kind the store packs and writes it to `out`, in the file
/// of its kind; the store it folds goes under `work`.
pub fn run(out: &Path, work: &Path) -> anyhow::Result<()> {
    let day = Day::utc(LAST_DAY);
    let mut events = Vec::new();
    for s in (0..SEASONS).rev() {
        events.extend(season_events_apart(s, APART, &day, TICKS)?);
    }
    let dir = work.join("dictionaries");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let samples = samples(&dir, &events);
    let _ = std::fs::remove_dir_all(&dir);
    let samples = samples?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    eprintln!(
        "bench: {} events folded; a dictionary a kind:",
        events.len()
    );
    for (kind, (name, prefix, packed)) in KINDS.iter().enumerate() {
        if packed.is_none() {
            continue;
        }
        let values = samples
            .get(&kind)
            .with_context(|| format!("the log left no records of {name}"))?;
        let step = values.len().div_ceil(MOST_SAMPLES).max(1);
        let picked: Vec<&[u8]> = values.iter().step_by(step).map(|v| &v[..]).collect();
        let dictionary = zstd::dict::from_samples(&picked, SIZE)
            .with_context(|| format!("training the dictionary of {name}"))?;
        let file = out.join(dictionary_file(prefix));
        std::fs::write(&file, &dictionary)
            .with_context(|| format!("writing {}", file.display()))?;
        let bytes: usize = picked.iter().map(|v| v.len()).sum();
        eprintln!(
            "bench:   {name:<24} {:>6} of {:>6} records, {bytes:>10} bytes: {:>6} bytes in {}",
            picked.len(),
            values.len(),
            dictionary.len(),
            file.display()
        );
    }
    Ok(())
}

/// The records of each packed kind (not their versions) that `events` leave in a fresh
/// store in `dir`, by the kind's place in `KINDS`.
fn samples(
    dir: &Path,
    events: &[racing_events::Envelope],
) -> anyhow::Result<BTreeMap<usize, Vec<Bytes>>> {
    let options = Options::default();
    let budget = options.replay_bytes;
    let store = Store::open_with(dir, options)?;
    fold(&store, events, next_day(LAST_DAY)?, (budget, None))?;
    let mut samples: BTreeMap<usize, Vec<Bytes>> = BTreeMap::new();
    for item in store.records() {
        let (key, value) = item?;
        let (kind, version) = kind_of(&key);
        if !version
            && KINDS
                .get(kind)
                .is_some_and(|(_, _, packed)| packed.is_some())
        {
            samples.entry(kind).or_default().push(value);
        }
    }
    Ok(samples)
}
