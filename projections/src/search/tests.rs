//! The name records and the index they keep: what a card or a result writes for a horse
//! with a long history, and the index, through amendments, retractions, renames and dates
//! out of order, batched in any way, as it is made from every name each source gives.

use std::collections::{BTreeMap, BTreeSet};

use racing_events::samples::{card, profile, result, retraction, runner};
use racing_events::Event;

use super::index::{INDEXED_CHARS, MIN_SEARCH_CHARS};
use super::names::Touched;
use crate::batch::MemState;
use crate::counting_state::Tally;
use crate::facts::{Change, Listing, What};
use crate::keys;
use crate::model::ReadModel;
use crate::state::State;
use crate::tests::fold_batch;

/// The `i`th date from 2020-01-01, 28 days a month.
fn date(i: usize) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        2020 + i / 336,
        i / 28 % 12 + 1,
        i % 28 + 1
    )
}

/// A result of one race at Sha Tin on `date` whose runners are `(horse, name)`.
fn named_result(date: &str, race: i64, runners: &[(&str, &str)]) -> Event {
    let runners = runners
        .iter()
        .enumerate()
        .map(|(i, (horse, name))| {
            let mut r = runner(Some(i as i64 + 1), horse);
            r.horse_name = (*name).to_owned();
            r
        })
        .collect();
    result(date, "Sha Tin", race, runners)
}

/// Notes one event's names in a batch of their own, as the fold does (as if nothing was
/// stored of its race before), and writes them.
fn note(s: &mut impl State, seq: u64, event: &Event) {
    let what = match event {
        Event::HorseProfileUpdated(p) => What::Profile(p),
        Event::RaceCardDeclared(c) => What::Card { old: None, new: c },
        Event::RaceResultPublished(r) => What::Result { old: None, new: r },
        _ => return,
    };
    let change = Change {
        seq,
        published: 0,
        occurred_at: "2026-11-21T13:05:41Z",
        event,
        what,
        listing: Listing::Unchanged,
        status_changed: false,
        book: None,
    };
    let mut names = Touched::default();
    names.apply(s, &change).expect("note");
    names.render(s, seq, &Default::default()).expect("render");
}

#[test]
fn a_horse_running_again_under_its_name_writes_a_few_small_records_and_no_index_entry() {
    let mut memory = MemState::default();
    let mut s = Tally::new(&mut memory);
    let indexed = |key: &[u8]| keys::parse_name_index(key).is_some();
    note(&mut s, 1, &profile("H1", "LONG HISTORY"));
    let other = [("H1", "LONG HISTORY"), ("H2", "NEIGHBOUR")];
    // A race a month, as a busy horse runs: twelve a year, over seventeen years.
    let monthly = |i: usize| date(i * 28);
    let mut ninth = 0;
    for i in 0..200 {
        let seq = i as u64 + 2;
        let before = s.bytes(|_| true);
        note(&mut s, seq, &named_result(&monthly(i), 1, &other));
        if i == 8 {
            ninth = s.bytes(|_| true) - before;
        }
    }
    let (bytes, entries) = (s.bytes(|_| true), s.count(indexed));
    assert!(entries > 0, "the first names are indexed");

    // The 201st race of each horse, under its name, the ninth of its year: whatever their
    // 200 before, its year's record, which holds each of its dates of the year (some fifty
    // bytes a date), and its own small record. As many bytes as its ninth race wrote, but
    // for a byte more of each date's sequence and the year's first date pointing to a
    // date of the year before.
    note(&mut s, 300, &named_result(&monthly(200), 1, &other));
    let written = s.bytes(|_| true) - bytes;
    assert!(
        written <= 2 * (100 + 9 * 50) && written <= ninth + 2 * (9 + 1 + 11),
        "{written} bytes of name records written for two horses' 201st race, {ninth} for \
         their ninth"
    );
    assert_eq!(s.count(indexed), entries, "no index entry written");
}

/// A horse renamed after many names writes the entries of its new name and its newest
/// name's record: none of the entries of the names it had before, whose number grows with
/// its history (as a horse renamed every season's would).
#[test]
fn a_horse_renamed_after_many_names_writes_its_new_names_entries_and_no_other() {
    let mut memory = MemState::default();
    let mut s = Tally::new(&mut memory);
    let indexed = |key: &[u8]| keys::parse_name_index(key).is_some();
    for i in 0..100 {
        let name = format!("NAME NUMBER {i:03}");
        note(
            &mut s,
            i as u64 + 1,
            &named_result(&date(i), 1, &[("H1", &name)]),
        );
    }
    let entries_before = s.count(indexed);
    let bytes = s.bytes(indexed);
    note(
        &mut s,
        200,
        &named_result(&date(100), 1, &[("H1", "BRAND NEW")]),
    );
    // "brand new" has 9 places to be read from, the last a character alone, which no
    // search reads: 8 entries, 44 bytes of keys and more, whatever the 100 names before it.
    let written = s.bytes(indexed) - bytes;
    assert_eq!(
        s.count(indexed) - entries_before,
        8,
        "the new name's entries"
    );
    assert!(
        written <= 8 * 40,
        "{written} bytes of index entries written for a new name"
    );
}

/// What the index holds: every entry, and each horse's newest name, by key.
fn index(s: &MemState) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let is_entry = |k: &&Vec<u8>| keys::parse_name_index(k).is_some() || k.starts_with(b"hnw\0");
    s.records
        .iter()
        .filter(|(k, _)| is_entry(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A race's card (`c`) or result (`r`): its date, number and kind.
type Race = (String, i64, char);

/// The index entries of a horse's names, made the plain way: one for each character each
/// name can be read from to its end (lower case, at most [`INDEXED_CHARS`] of it), those
/// from its first apart, but for the last character alone, which no search reads.
fn entries(horse: &str, names: &BTreeSet<String>) -> BTreeSet<Vec<u8>> {
    let mut out = BTreeSet::new();
    for name in names {
        let lower = name.to_lowercase();
        for (at, _) in lower.char_indices() {
            let text: String = lower[at..].chars().take(INDEXED_CHARS).collect();
            if text.chars().count() >= MIN_SEARCH_CHARS {
                out.insert(keys::name_index(at == 0, &text, horse));
            }
        }
    }
    out
}

/// Every name each source gives each horse, as the log has it so far, kept the plain way:
/// by horse, its profile and each race's card or result, with the sequence of the event.
#[derive(Default)]
struct Given {
    profiles: BTreeMap<String, (String, u64)>,
    /// By horse, then by `(date, race, c|r)`.
    races: BTreeMap<String, BTreeMap<Race, (String, u64)>>,
    /// The runners of each race's card and result, as stored.
    stored: BTreeMap<Race, Vec<(String, String)>>,
}

impl Given {
    fn apply(&mut self, seq: u64, event: &Event) {
        match event {
            Event::HorseProfileUpdated(p) => {
                self.profiles
                    .insert(p.horse_no.clone(), (p.horse_name.clone(), seq));
            }
            Event::RaceCardDeclared(c) => {
                let runners = c.runners.iter();
                let named = runners.map(|r| (r.horse_no.clone(), r.horse_name.clone()));
                self.race((c.date.clone(), c.race_number, 'c'), named.collect(), seq);
            }
            Event::RaceResultPublished(r) => {
                let runners = r.runners.iter();
                let named = runners.map(|r| (r.horse_no.clone(), r.horse_name.clone()));
                self.race((r.date.clone(), r.race_number, 'r'), named.collect(), seq);
            }
            Event::RaceRetracted(x) => {
                for kind in ['c', 'r'] {
                    self.race((x.date.clone(), x.race_number, kind), Vec::new(), seq);
                }
            }
            _ => {}
        }
    }

    /// One race's card or result now names `runners` (none: retracted).
    fn race(&mut self, race: Race, runners: Vec<(String, String)>, seq: u64) {
        for (horse, _) in self.stored.remove(&race).unwrap_or_default() {
            if let Some(races) = self.races.get_mut(&horse) {
                races.remove(&race);
            }
        }
        for (horse, name) in &runners {
            let races = self.races.entry(horse.clone()).or_default();
            races.insert(race.clone(), (name.clone(), seq));
        }
        if !runners.is_empty() {
            self.stored.insert(race, runners);
        }
    }

    /// The index as made from every horse's names and its newest: its profile's or its
    /// latest-dated race's (the later event of a date), whichever came later.
    fn index(&self) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let horses: BTreeSet<&String> = self.profiles.keys().chain(self.races.keys()).collect();
        let mut out = BTreeMap::new();
        for horse in horses {
            let profile = self.profiles.get(horse);
            let races = self.races.get(horse);
            let raced = races
                .into_iter()
                .flatten()
                .max_by_key(|((date, _, _), (_, seq))| (date.clone(), *seq))
                .map(|(_, given)| given);
            let newest = match (profile, raced) {
                (Some(p), Some(r)) => Some(if p.1 >= r.1 { &p.0 } else { &r.0 }),
                (p, r) => p.or(r).map(|(name, _)| name),
            };
            let names: BTreeSet<String> = profile
                .into_iter()
                .chain(races.into_iter().flat_map(BTreeMap::values))
                .map(|(name, _)| name.clone())
                .collect();
            if let Some(newest) = newest {
                out.extend(entries(horse, &names).into_iter().map(|k| (k, Vec::new())));
                out.insert(keys::horse_newest(horse), newest.as_bytes().to_vec());
            }
        }
        out
    }
}

/// A log of six horses over nine dates, two races a date, in an order a small generator
/// makes: cards and results (amended, some for earlier dates than others before them),
/// profiles and retractions, each horse under one of three names (`named(horse, k)`).
fn shuffled_log(named: fn(u64, u64) -> String) -> Vec<Event> {
    let mut seed: u64 = 42;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) % n
    };
    let mut out = Vec::new();
    for _ in 0..400 {
        let d = date(next(9) as usize);
        let race = next(2) as i64 + 1;
        let name = |h: u64, k: u64| (format!("H{h}"), named(h, k));
        let pick = |next: &mut dyn FnMut(u64) -> u64| -> Vec<(String, String)> {
            let first = next(6);
            let count = next(4);
            (0..count).map(|i| name((first + i) % 6, next(3))).collect()
        };
        let event = match next(10) {
            0 => {
                let (h, n) = name(next(6), next(3));
                profile(&h, &n)
            }
            1 => retraction(&d, "Sha Tin", race, "void"),
            2..=5 => {
                let runners = pick(&mut next);
                let horses: Vec<&str> = runners.iter().map(|(h, _)| h.as_str()).collect();
                let mut c = card(&d, "Sha Tin", race, &horses);
                if let Event::RaceCardDeclared(c) = &mut c {
                    for (r, (_, n)) in c.runners.iter_mut().zip(&runners) {
                        r.horse_name.clone_from(n);
                    }
                }
                c
            }
            _ => {
                let runners = pick(&mut next);
                let named: Vec<(&str, &str)> = runners
                    .iter()
                    .map(|(h, n)| (h.as_str(), n.as_str()))
                    .collect();
                named_result(&d, race, &named)
            }
        };
        out.push(event);
    }
    out
}

/// What every horse's date record's key starts with.
fn dated_prefix() -> Vec<u8> {
    let mut key = keys::horse_names_in("", "");
    key.pop();
    key
}

/// What every count of a horse's name's key starts with.
fn counts_prefix() -> Vec<u8> {
    let mut key = keys::horse_name_count("", "");
    key.pop();
    key
}

/// The horses' records of names (not the index).
fn names(s: &MemState) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let kinds = [keys::horse_names(""), dated_prefix(), counts_prefix()];
    s.records
        .iter()
        .filter(|(k, _)| kinds.iter().any(|kind| k.starts_with(kind)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Folds the log in batches of `size` events, checking the index against the one made
/// from every name given after each batch.
fn fold_checked(log: &[Event], size: usize) -> MemState {
    let mut s = MemState::default();
    let mut given = Given::default();
    for (b, batch) in log.chunks(size).enumerate() {
        fold_batch(&mut s, b * size, batch);
        for (i, e) in batch.iter().enumerate() {
            given.apply((b * size + i + 1) as u64, e);
        }
        assert!(
            index(&s) == given.index(),
            "the index after event {}",
            b * size + batch.len()
        );
    }
    s
}

/// Names that share no entry.
fn apart(h: u64, k: u64) -> String {
    format!("NAME {h} V{k}")
}

/// Names that end one another, so that they share entries: `LUCKY 1 STAR`, `1 STAR` and
/// `STAR`.
fn ending_alike(h: u64, k: u64) -> String {
    ["LUCKY {h} STAR", "{h} STAR", "STAR"][k as usize].replace("{h}", &h.to_string())
}

#[test]
fn the_index_is_made_from_every_name_given_through_amendments_and_retractions() {
    for named in [apart, ending_alike] {
        every_name_given(named);
    }
}

fn every_name_given(named: fn(u64, u64) -> String) {
    let log = shuffled_log(named);
    let one = fold_checked(&log, 1);
    for size in [7, log.len()] {
        let other = fold_checked(&log, size);
        assert_eq!(index(&other), index(&one), "batches of {size}");
        assert_eq!(names(&other), names(&one), "batches of {size}");
    }

    // Every race taken back: only the profiles' names are left, and no date or count
    // of a name given by a race.
    let mut all = log.clone();
    for d in 0..9 {
        for race in 1..=2 {
            all.push(retraction(&date(d), "Sha Tin", race, "void"));
        }
    }
    let s = fold_checked(&all, 5);
    for kind in [dated_prefix(), counts_prefix()] {
        assert!(!s.records.keys().any(|k| k.starts_with(&kind)));
    }
}
