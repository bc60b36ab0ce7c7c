//! A store answers the same whatever batches built it: one event a batch (a live service),
//! batches of many (a catch-up), or a bulk load ([`Loader`], a replay into an empty
//! store, holding everything it writes or almost nothing). Every document with its
//! position, every page of the change feed from every position, every document as of
//! several positions, the odds history, the race-day journal, people and meetings.

use std::collections::BTreeSet;

use racing_events::samples::{odds_with_place, recorded_profile, runner, status};
use racing_events::RaceStatus;

use super::*;
use crate::tests::tempdir;

const D1: &str = "2026-11-18";
const D2: &str = "2026-11-22";

/// A log of two dates and two venues: profiles (one sent again unchanged, one changed),
/// cards, scratchings, odds for one venue and for every venue, win and place, statuses,
/// results, a corrected result, a retraction and prices after it.
fn log() -> Vec<Envelope> {
    let mut events: Vec<Event> = Vec::new();
    for n in 1..=8 {
        events.push(profile(&format!("H{n}"), &format!("HORSE {n}")));
    }
    events.push(card(D1, "Sha Tin", 1, &["H1", "H2", "H3", "H4"]));
    events.push(card(D1, "Sha Tin", 2, &["H5", "H6", "H7"]));
    events.push(card(D1, "Happy Valley", 1, &["H8", "H2", "H6"]));
    // Sent again as it was: it changes nothing.
    events.push(profile("H3", "HORSE 3"));
    for round in 0..6u32 {
        let p = 2.0 + f64::from(round) / 4.0;
        events.push(odds_at(D1, "Sha Tin", 1, &[("H1", p), ("H2", p + 1.5)]));
        events.push(odds(D1, 1, &[("H3", 9.0 - p)]));
        events.push(odds_at(D1, "Happy Valley", 1, &[("H8", p + 0.5)]));
        events.push(odds_with_place(
            D1,
            None,
            2,
            &[("H5", Some(p), Some(1.1)), ("H6", Some(7.0), None)],
        ));
        if round == 2 {
            events.push(scratch(D1, 1, "H4"));
            events.push(scratch_at(D1, "Happy Valley", 1, "H6"));
            events.push(status(D1, Some("Sha Tin"), 2, RaceStatus::Open, None));
        }
    }
    events.push(status(D1, None, 1, RaceStatus::Off, None));
    events.push(odds_at(D1, "Sha Tin", 1, &[("H1", 1.9)]));
    events.push(result(
        D1,
        "Sha Tin",
        1,
        vec![
            runner(Some(1), "H1"),
            runner(Some(2), "H2"),
            runner(None, "H3"),
        ],
    ));
    events.push(status(D1, Some("Sha Tin"), 2, RaceStatus::Off, None));
    events.push(result(
        D1,
        "Sha Tin",
        2,
        vec![
            runner(Some(1), "H5"),
            runner(Some(2), "H6"),
            runner(Some(3), "H7"),
        ],
    ));
    events.push(result(
        D1,
        "Happy Valley",
        1,
        vec![runner(Some(1), "H8"), runner(Some(2), "H2")],
    ));
    // A correction of a result, then a race withdrawn.
    events.push(result(
        D1,
        "Sha Tin",
        2,
        vec![
            runner(Some(1), "H6"),
            runner(Some(2), "H5"),
            runner(Some(3), "H7"),
        ],
    ));
    events.push(retraction(D1, "Happy Valley", 1, "declared in error"));
    events.push(recorded_profile("H2", "HORSE TWO"));
    events.push(card(D2, "Sha Tin", 1, &["H1", "H5", "H8"]));
    for round in 0..4u32 {
        let p = 3.0 + f64::from(round) / 2.0;
        events.push(odds(D2, 1, &[("H1", p), ("H5", 6.0 - p)]));
        events.push(odds_at(D2, "Sha Tin", 1, &[("H8", p * 2.0)]));
    }
    events.push(status(D2, None, 1, RaceStatus::Finished, None));
    events.push(result(
        D2,
        "Sha Tin",
        1,
        vec![
            runner(Some(1), "H8"),
            runner(Some(2), "H1"),
            runner(Some(3), "H5"),
        ],
    ));
    events.push(odds_at(D2, "Sha Tin", 1, &[("H8", 2.2)]));
    events.into_iter().map(env).collect()
}

/// How a store is built from the log.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// A batch an event, as a live service commits them when they arrive apart.
    Live,
    /// Batches of `n` events, committed one after another.
    Batches(usize),
    /// A bulk load of batches of `n` events, holding up to `budget` bytes.
    Load { n: usize, budget: usize },
}

fn build(path: Path, events: &[Envelope]) -> (crate::tests::TempDir, Store) {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let numbered: Vec<(u64, &Envelope)> = (1..).zip(events).collect();
    match path {
        Path::Live => {
            for (seq, e) in numbered {
                let mut b = store.batch().expect("batch");
                b.apply(seq, seq as i128 * 1_000_000_000, e).expect("apply");
                b.commit().expect("commit");
            }
        }
        Path::Batches(n) => {
            for chunk in numbered.chunks(n) {
                let mut b = store.batch().expect("batch");
                for &(seq, e) in chunk {
                    b.apply(seq, seq as i128 * 1_000_000_000, e).expect("apply");
                }
                b.commit().expect("commit");
            }
        }
        Path::Load { n, budget } => {
            let mut loader = Loader::new(&store, budget).expect("loader");
            for chunk in numbered.chunks(n) {
                let mut b = loader.batch();
                for &(seq, e) in chunk {
                    b.apply(seq, seq as i128 * 1_000_000_000, e).expect("apply");
                }
                let sealed = b.seal(|_| {}).expect("seal");
                loader.write(sealed).expect("write");
            }
            loader.finish().expect("finish");
        }
    }
    (dir, store)
}

/// Every page of the change feed from `from`, `limit` rows a page: rows and cursors.
fn pages(store: &Store, from: ChangeCursor, limit: usize) -> Vec<ChangePage> {
    let mut out = Vec::new();
    let mut at = Some(from);
    while let Some(from) = at {
        let page = store.change_page(from, limit).expect("page");
        at = page.next;
        out.push(page);
        assert!(out.len() < 10_000, "the feed ends");
    }
    out
}

/// Everything the store answers, as text to compare: the documents with their positions,
/// the change feed's pages from every position, each document as of several positions,
/// odds history, the race-day journal, people, meetings and statuses.
fn answers(store: &Store, last: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut keys = BTreeSet::new();
    for item in store.documents() {
        let (key, stored) = item.expect("document");
        let doc = store.doc_by_key(&key).expect("read").expect("a document");
        out.push(format!(
            "doc {} at {}: {}",
            String::from_utf8_lossy(&key),
            doc.seq(),
            String::from_utf8_lossy(&stored)
        ));
        keys.insert(key.to_vec());
    }
    for since in 0..=last {
        for limit in [1, 2, 5, 1000] {
            for ChangePage { rows, next } in pages(store, ChangeCursor::After(since), limit) {
                for (seq, key) in &rows {
                    keys.insert(key.clone());
                    out.push(format!(
                        "change after {since} by {limit}: {seq} {}",
                        String::from_utf8_lossy(key)
                    ));
                }
                out.push(format!("page after {since} by {limit} ends {next:?}"));
            }
        }
    }
    for seq in (1..=last).step_by(3).chain([last]) {
        for key in &keys {
            let key = DocKey::parse(key).expect("a document key");
            let past = store.doc_as_of(key, seq).expect("as of");
            out.push(format!(
                "{key:?} as of {seq}: {:?}",
                past.map(|d| (
                    d.seq(),
                    String::from_utf8_lossy(&d.into_stored()).into_owned()
                ))
            ));
        }
    }
    for date in [D1, D2] {
        for n in 1..=2u8 {
            for venue in [None, Some("Sha Tin"), Some("Happy Valley")] {
                for after in [0, last / 2] {
                    let page = store
                        .odds_history(date, n, venue, after, 1000)
                        .expect("history");
                    out.push(format!(
                        "odds history {date} {n} {venue:?} after {after}: {:?}",
                        page.map(|p| String::from_utf8_lossy(&p).into_owned())
                    ));
                }
            }
            out.push(format!(
                "statuses {date} {n}: {:?}",
                store.race_statuses(date, Some(n)).expect("statuses")
            ));
        }
        for e in store.race_day(date, 0, 1000).expect("race day") {
            out.push(format!(
                "race day {date}: {} {} {}",
                e.seq, e.race_number, e.frame
            ));
        }
        for after in 0..=last {
            out.push(format!(
                "odds changed since {after}: {:?}",
                store
                    .odds_changed_since(Some(date), after)
                    .expect("odds changed")
            ));
        }
    }
    for role in [Role::Jockey, Role::Trainer] {
        let list = store.people(role).expect("people");
        out.push(format!(
            "{role:?}: {:?}",
            list.map(|d| (d.seq(), d.into_stored()))
        ));
        for id in ["z-purton", "j-size"] {
            let one = store.person(role, id).expect("person");
            out.push(format!(
                "{role:?} {id}: {:?}",
                one.map(|d| (d.seq(), d.into_stored()))
            ));
        }
    }
    out.push(format!(
        "meetings: {:?}",
        store.meetings(D1, D2).expect("meetings")
    ));
    out.push(format!(
        "latest odds: {}",
        store.latest_odds_seq().expect("latest odds")
    ));
    out
}

/// A log whose corrections change the form of cards declared after the races they
/// correct: D1's results, D2's cards of the same horses and people, then D1's results
/// corrected, one withdrawn, and corrected back.
fn amending_log() -> Vec<Envelope> {
    let ridden = |position: Option<i64>, horse: &str, jockey: &str| {
        let mut r = runner(position, horse);
        r.jockey = jockey.into();
        r
    };
    let first = || {
        result(
            D1,
            "Sha Tin",
            1,
            vec![
                ridden(Some(1), "H1", "A Badel"),
                ridden(Some(2), "H2", "H Bowman"),
                ridden(Some(3), "H3", "H Bowman"),
            ],
        )
    };
    let mut events: Vec<Event> = (1..=4)
        .map(|n| profile(&format!("H{n}"), &format!("HORSE {n}")))
        .collect();
    events.push(first());
    events.push(result(
        D1,
        "Sha Tin",
        2,
        vec![ridden(Some(1), "H4", "H Bowman")],
    ));
    events.push(card(D2, "Sha Tin", 1, &["H1", "H2", "H3"]));
    let mut second = card(D2, "Sha Tin", 2, &["H4", "H2"]);
    if let Event::RaceCardDeclared(c) = &mut second {
        c.runners[0].jockey = "A Badel".into();
    }
    events.push(second);
    events.push(result(
        D1,
        "Sha Tin",
        1,
        vec![
            ridden(Some(1), "H3", "H Bowman"),
            ridden(Some(2), "H1", "A Badel"),
            ridden(None, "H2", "A Badel"),
        ],
    ));
    events.push(retraction(D1, "Sha Tin", 2, "declared in error"));
    events.push(first());
    events.push(result(
        D2,
        "Sha Tin",
        1,
        vec![
            ridden(Some(1), "H2", "H Bowman"),
            ridden(Some(2), "H1", "A Badel"),
        ],
    ));
    events.into_iter().map(env).collect()
}

#[test]
fn a_fold_hands_on_what_it_read_only_to_the_batch_that_starts_where_it_was_written() {
    let events = amending_log();
    let last = events.len() as u64;
    let (_whole_dir, whole) = build(Path::Batches(events.len()), &events);
    let want = answers(&whole, last);
    // A batch an event, each event first folded by a batch that is sealed and never
    // written, as when a commit fails and the projector folds the same events again.
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    for (seq, e) in (1..).zip(&events) {
        let published = seq as i128 * 1_000_000_000;
        let mut lost = store.batch().expect("batch");
        lost.apply(seq, published, e).expect("apply");
        drop(lost.seal(|_| {}).expect("seal"));
        let mut b = store.batch().expect("batch");
        b.apply(seq, published, e).expect("apply");
        b.commit().expect("commit");
    }
    let got = answers(&store, last);
    if let Some(diff) = first_difference(&want, &got) {
        panic!("folded again after lost batches, the store answers otherwise:\n{diff}");
    }
}

/// The first line where two lists of answers differ, for a readable failure.
fn first_difference(want: &[String], got: &[String]) -> Option<String> {
    want.iter()
        .zip(got)
        .find(|(w, g)| w != g)
        .map(|(w, g)| format!("live:  {w}\nother: {g}"))
        .or_else(|| {
            (want.len() != got.len())
                .then(|| format!("{} answers against {}", want.len(), got.len()))
        })
}

#[test]
fn a_store_answers_the_same_whatever_batches_built_it() {
    let events = log();
    let last = events.len() as u64;
    let (_live_dir, live) = build(Path::Live, &events);
    let want = answers(&live, last);
    assert!(want
        .iter()
        .any(|a| a.starts_with("change after 0 by 1000: 1 ")));
    for path in [
        Path::Batches(7),
        Path::Batches(events.len()),
        Path::Load {
            n: 9,
            budget: usize::MAX,
        },
        Path::Load {
            n: events.len(),
            budget: usize::MAX,
        },
        Path::Load { n: 5, budget: 1 },
    ] {
        let (_dir, store) = build(path, &events);
        let got = answers(&store, last);
        if let Some(diff) = first_difference(&want, &got) {
            panic!("{path:?} answers otherwise than one event a batch:\n{diff}");
        }
    }
}
