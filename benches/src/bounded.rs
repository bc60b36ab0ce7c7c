//! The reads whose work is bounded by their answer, at scale: a store of 100,000 horses'
//! names and a day of 100,000 odds moves, folded here, then the median time of each read
//! the endpoints make of it (a search, a race's odds history, its odds as of a point, a
//! change feed page of one) with the records it read. The store's reads, not HTTP's: the
//! HTTP part measures the service around them.

use std::path::Path;
use std::time::Instant;

use racing_events::samples::{envelope, odds_at, profile};
use racing_projections::{ChangeCursor, DocKey, Store};

use crate::figures::median;

/// The day of the moves.
const DAY: &str = "2026-11-25";
/// Its meeting.
const VENUE: &str = "Sha Tin";
/// Its races: the moves go to each in turn.
const RACES: u64 = 10;
/// Runners of each race.
const RUNNERS: u64 = 14;
/// Events folded a batch.
const BATCH: u64 = 5_000;

/// Syllables of the horses' names: each name two words of three, from the horse's number.
const SYLLABLES: [&str; 16] = [
    "KA", "LO", "MI", "SU", "TE", "RA", "NO", "VI", "DE", "ZU", "PA", "GO", "LI", "BE", "CHA",
    "WIN",
];

/// A word of three syllables, one for each of the low twelve bits of `n`, four a syllable.
fn word(n: u64) -> String {
    (0..3)
        .map(|i| SYLLABLES[((n >> (4 * i)) & 15) as usize])
        .collect()
}

/// The name of horse `n`: distinct for every `n` below 2^24.
fn name(n: u64) -> String {
    format!("{} {}", word(n), word(n >> 12))
}

/// A read to time: the size of its answer.
type Read<'a> = Box<dyn Fn() -> anyhow::Result<usize> + 'a>;

/// Folds `events` into `store` as one batch, after sequence `seq`.
fn fold(
    store: &Store,
    seq: &mut u64,
    events: impl Iterator<Item = racing_events::Event>,
) -> anyhow::Result<()> {
    let mut batch = store.batch()?;
    for event in events {
        *seq += 1;
        batch.apply(*seq, 0, &envelope(event))?;
    }
    batch.commit()?;
    Ok(())
}

/// Builds the store in `work` with `horses` names and `moves` odds moves, then times each
/// read `rounds` times and prints the medians.
pub fn run(work: &Path, horses: u64, moves: u64, rounds: usize) -> anyhow::Result<()> {
    let dir = work.join("bounded-store");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(work)?;
    let store = Store::open(&dir)?;
    let started = Instant::now();
    let mut seq = 0;
    for first in (0..horses).step_by(BATCH as usize) {
        let last = (first + BATCH).min(horses);
        let names = (first..last).map(|n| profile(&format!("H{n:06}"), &name(n)));
        fold(&store, &mut seq, names)?;
    }
    let names_at = seq;
    let names_took = started.elapsed();
    for first in (0..moves).step_by(BATCH as usize) {
        let last = (first + BATCH).min(moves);
        let moves = (first..last).map(|i| {
            let race = i % RACES + 1;
            // Each race has its field of runners; each move prices one of them.
            let horse = (race * RUNNERS + i / RACES % RUNNERS) % horses.max(1);
            let price = 1.5 + (i % 97) as f64 / 10.0;
            odds_at(DAY, VENUE, race as i64, &[(&format!("H{horse:06}"), price)])
        });
        fold(&store, &mut seq, moves)?;
    }
    let checkpoint = store.checkpoint()?;
    println!(
        "bounded: folded {horses} horses' names in {:.1} s, then {moves} odds moves in {:.1} s",
        names_took.as_secs_f64(),
        (started.elapsed() - names_took).as_secs_f64()
    );

    // A move of race 5 near the middle of the day, for a page from there and an `as_of`.
    let middle = names_at + moves / 2;
    let one_race = |after, limit| {
        store
            .odds_history(DAY, 5, Some(VENUE), after, limit)
            .map(|page| page.map_or(0, |p| p.len()))
    };
    let odds_doc = DocKey::Odds {
        date: DAY,
        race_number: 5,
        venue: Some(VENUE),
    };
    let selective = name(horses / 2);
    let selective = selective.split(' ').next().unwrap_or("KALOMI").to_owned();
    let reads: Vec<(String, Read<'_>)> = vec![
        (
            format!("search `{selective}`, limit 20"),
            Box::new(|| Ok(store.find_horses(&selective, 20)?.len())),
        ),
        (
            "search `ka` (starts many names), limit 20".into(),
            Box::new(|| Ok(store.find_horses("ka", 20)?.len())),
        ),
        (
            "search `al` (inside many names, starts none), limit 20".into(),
            Box::new(|| Ok(store.find_horses("al", 20)?.len())),
        ),
        (
            "odds history of race 5, first page of 1,000".into(),
            Box::new(|| Ok(one_race(0, 1_000)?)),
        ),
        (
            "odds history of race 5, a page of 100 from mid-day".into(),
            Box::new(|| Ok(one_race(middle, 100)?)),
        ),
        (
            "odds history of race 99 (none: 404)".into(),
            Box::new(|| {
                Ok(store
                    .odds_history(DAY, 99, None, 0, 1_000)?
                    .map_or(0, |p| p.len()))
            }),
        ),
        (
            "odds of race 5 as_of mid-day".into(),
            Box::new(|| {
                Ok(store
                    .doc_as_of(odds_doc, middle)?
                    .map_or(0, |d| d.into_stored().len()))
            }),
        ),
        (
            "odds of race 5 as_of the end of the day".into(),
            Box::new(|| {
                Ok(store
                    .doc_as_of(odds_doc, checkpoint)?
                    .map_or(0, |d| d.into_stored().len()))
            }),
        ),
        (
            "changes since=0 limit=1".into(),
            Box::new(|| Ok(store.change_page(ChangeCursor::After(0), 1)?.rows.len())),
        ),
        (
            "changes since=0 limit=1000".into(),
            Box::new(|| Ok(store.change_page(ChangeCursor::After(0), 1_000)?.rows.len())),
        ),
    ];
    println!(
        "bounded: {rounds} rounds each; median time, records read a call, the answer (horses, \
         changes or bytes)"
    );
    for (what, read) in &reads {
        let before = store.records_read();
        let mut times = Vec::with_capacity(rounds);
        let mut size = 0;
        for _ in 0..rounds {
            let at = Instant::now();
            size = read()?;
            times.push(at.elapsed().as_secs_f64() * 1e3);
        }
        let records = (store.records_read() - before) / rounds.max(1) as u64;
        println!(
            "  {what:<55} {:>9.3} ms {records:>7} records {size:>8}",
            median(times)
        );
    }
    drop(reads);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
