//! The read models of discovery as pure folds: the meetings of each date, horses by
//! name, jockeys and trainers (in `people`); amendments and retractions included. One
//! test at the end runs events through a sled store for the reads that scan.

use racing_events::samples::{card, profile, result, retraction, runner};
use racing_events::*;
use serde_json::{json, Value};

use crate::tests::tempdir;
use crate::*;

mod people;

fn env(event: Event) -> Envelope {
    samples::envelope(event)
}

/// Folds the events, one batch each.
fn fold_each(events: impl IntoIterator<Item = Event>) -> MemState {
    let mut s = MemState::default();
    fold_into(&mut s, events);
    s
}

fn fold_into(s: &mut MemState, events: impl IntoIterator<Item = Event>) {
    let first = s.seen.len() as u64 + 1;
    for (i, e) in events.into_iter().enumerate() {
        let mut f = Fold::default();
        f.apply(s, first + i as u64, 0, &env(e)).expect("apply");
        f.render(s).expect("render");
    }
}

/// Folds the events in one batch.
fn fold_batch(events: impl IntoIterator<Item = Event>) -> MemState {
    let mut s = MemState::default();
    let mut f = Fold::default();
    for (i, e) in events.into_iter().enumerate() {
        f.apply(&mut s, i as u64 + 1, 0, &env(e)).expect("apply");
    }
    f.render(&mut s).expect("render");
    s
}

fn meetings(s: &MemState, date: &str) -> Vec<MeetingRow> {
    crate::meetings::meetings_of(s, date).expect("meetings")
}

fn row(date: &str, venue: &str, races: usize, card: bool, results: usize) -> MeetingRow {
    MeetingRow {
        date: date.into(),
        venue: venue.into(),
        races,
        card,
        results,
    }
}

const DAY: &str = "2026-11-18";

const HV: &str = "Happy Valley";

const ST: &str = "Sha Tin";

#[test]
fn a_meeting_counts_races_with_a_card_or_a_result_and_goes_with_its_last_race() {
    let s = fold_each([
        card(DAY, HV, 1, &["A1"]),
        card(DAY, HV, 2, &["B2"]),
        result(DAY, HV, 2, vec![runner(Some(1), "B2")]),
        result(DAY, HV, 3, vec![runner(Some(1), "C3")]),
        result(DAY, ST, 1, vec![runner(Some(1), "D4")]),
    ]);
    assert_eq!(
        meetings(&s, DAY),
        [row(DAY, HV, 3, true, 2), row(DAY, ST, 1, false, 1)]
    );
    // The record the endpoint scans is the same rows.
    let stored: Vec<MeetingRow> =
        serde_json::from_slice(&s.records[&crate::keys::meetings(DAY)]).expect("record");
    assert_eq!(stored, meetings(&s, DAY));

    let mut s = s;
    fold_into(
        &mut s,
        [
            retraction(DAY, HV, 2, "void"),
            retraction(DAY, ST, 1, "wrong venue"),
        ],
    );
    assert_eq!(meetings(&s, DAY), [row(DAY, HV, 2, true, 1)]);
    fold_into(
        &mut s,
        [
            retraction(DAY, HV, 1, "void"),
            retraction(DAY, HV, 3, "void"),
        ],
    );
    assert_eq!(meetings(&s, DAY), []);
    assert!(
        !s.records.contains_key(&crate::keys::meetings(DAY)),
        "a date without meetings has no record"
    );
}

#[test]
fn an_amended_result_counts_once() {
    let s = fold_each([
        result(DAY, HV, 1, vec![runner(Some(1), "A1")]),
        result(DAY, HV, 1, vec![runner(Some(1), "B2")]),
    ]);
    assert_eq!(meetings(&s, DAY), [row(DAY, HV, 1, false, 1)]);
}

fn named(horse: &str, name: &str) -> ResultRunner {
    let mut r = runner(Some(1), horse);
    r.horse_name = name.into();
    r
}

fn search(s: &MemState, text: &str, limit: usize) -> Vec<(String, String)> {
    let text = text.to_lowercase();
    let entries = |whole| {
        let prefix = crate::keys::name_index_of(whole, &text);
        s.records
            .iter()
            .filter(move |(k, _)| k.starts_with(&prefix))
            .map(Ok)
    };
    let newest = |horse: &str| Ok(s.records.get(&crate::keys::horse_newest(horse)).cloned());
    crate::search::find_in(entries(true), || entries(false), newest, limit)
        .expect("search")
        .into_iter()
        .map(|m| (m.horse_no, m.horse_name))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(h, n)| ((*h).to_owned(), (*n).to_owned()))
        .collect()
}

#[test]
fn horses_are_found_by_part_of_any_name_those_starting_with_it_first() {
    let mut s = fold_each([
        profile("E271", "GOLDEN SIXTY"),
        result(
            DAY,
            HV,
            1,
            vec![named("K307", "ROMANTIC WARRIOR"), named("A1", "SIXTY ONE")],
        ),
        card(DAY, HV, 2, &["B2"]),
    ]);
    // A card names its runners too (the sample's are `NAME {horse_no}`).
    assert_eq!(search(&s, "name b", 20), pairs(&[("B2", "NAME B2")]));
    assert_eq!(
        search(&s, "sixty", 20),
        pairs(&[("A1", "SIXTY ONE"), ("E271", "GOLDEN SIXTY")])
    );
    assert_eq!(search(&s, "SiXtY", 1), pairs(&[("A1", "SIXTY ONE")]));
    assert_eq!(search(&s, "xyz", 20), pairs(&[]));

    // Renamed by a later result: found by both names, listed under the new one.
    fold_into(
        &mut s,
        [result(
            "2026-11-22",
            ST,
            1,
            vec![named("E271", "GOLDEN SEVENTY")],
        )],
    );
    assert_eq!(
        search(&s, "golden s", 20),
        pairs(&[("E271", "GOLDEN SEVENTY")])
    );
    assert_eq!(
        search(&s, "sixty", 20),
        pairs(&[("A1", "SIXTY ONE"), ("E271", "GOLDEN SEVENTY")])
    );
    // An older result names it no more; a later profile does.
    fold_into(
        &mut s,
        [result("2026-10-01", ST, 1, vec![named("E271", "OLD NAME")])],
    );
    assert_eq!(search(&s, "old", 20), pairs(&[("E271", "GOLDEN SEVENTY")]));
    fold_into(&mut s, [profile("E271", "GOLDEN EIGHTY")]);
    assert_eq!(
        search(&s, "golden", 20),
        pairs(&[("E271", "GOLDEN EIGHTY")])
    );
}

/// A result runner ridden by `jockey` for `trainer`.
fn ride(position: Option<i64>, horse: &str, jockey: &str, trainer: &str) -> ResultRunner {
    let mut r = runner(position, horse);
    r.jockey = jockey.into();
    r.trainer = trainer.into();
    r
}

#[test]
fn the_store_scans_meetings_by_date_and_serves_people() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    let events = [
        result(
            "2026-11-20",
            ST,
            1,
            vec![ride(Some(1), "A1", "Z Purton", "J Size")],
        ),
        card("2026-11-18", HV, 1, &["B2"]),
        card("2026-11-18", ST, 1, &["C3"]),
        card("2026-12-01", ST, 1, &["C3"]),
        profile("E271", "GOLDEN SIXTY"),
    ];
    for (i, e) in events.into_iter().enumerate() {
        b.apply(i as u64 + 1, 0, &env(e)).expect("apply");
    }
    b.commit().expect("commit");
    assert_eq!(
        store.meetings("2026-11-18", "2026-11-30").expect("scan"),
        [
            row("2026-11-18", HV, 1, true, 0),
            row("2026-11-18", ST, 1, true, 0),
            row("2026-11-20", ST, 1, false, 1)
        ]
    );
    assert_eq!(
        store.meetings("2026-11-19", "2026-11-19").expect("scan"),
        []
    );
    let found = store.find_horses("sixty", 20).expect("search");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].horse_no, "E271");
    let doc = store
        .person(Role::Jockey, "z-purton")
        .expect("read")
        .expect("doc");
    let body: Value = serde_json::from_slice(&doc).expect("json");
    assert_eq!(body["wins"], json!(1));
    assert_eq!(doc.etag(), etag(&doc).as_slice());
    assert!(store
        .person(Role::Trainer, "z-purton")
        .expect("read")
        .is_none());
    assert!(store.people(Role::Trainer).expect("read").is_some());
}
