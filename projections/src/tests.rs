//! The folds as pure functions: given these events, the documents are these. No NATS, no
//! disk; one test at the end runs the same events through a sled store.

use std::collections::BTreeMap;

use racing_events::samples::{
    card, odds, odds_at, profile, result, retraction, runner, scratch, scratch_at,
};
use racing_events::*;
use serde_json::{json, Value};

use crate::*;

fn env(event: Event) -> Envelope {
    samples::envelope(event)
}

/// Folds the events, one batch each, and returns the state.
fn fold_each(events: impl IntoIterator<Item = Envelope>) -> MemState {
    let mut s = MemState::default();
    for (i, e) in events.into_iter().enumerate() {
        let mut f = Fold::default();
        f.apply(&mut s, i as u64 + 1, 0, &e).expect("apply");
        f.render(&mut s).expect("render");
    }
    s
}

fn doc(s: &MemState, key: DocKey<'_>) -> Value {
    let bytes = s.doc(key).unwrap_or_else(|| panic!("no document {key:?}"));
    match key {
        DocKey::Form(_) => {
            serde_json::from_slice(&FormDoc::body(bytes, None).expect("framed")).expect("json")
        }
        _ => serde_json::from_slice(bytes).expect("json"),
    }
}

fn horses(v: &Value, list: &str) -> Vec<String> {
    v[list]
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["horse_no"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn profile_document_has_exactly_the_interface_fields_in_order() {
    let s = fold_each([env(profile("E271", "GOLDEN SIXTY"))]);
    let bytes = s.doc(DocKey::Profile("E271")).expect("doc");
    assert_eq!(
        std::str::from_utf8(bytes).expect("utf8"),
        r#"{"horse_no":"E271","horse_name":"GOLDEN SIXTY","country_of_origin":"NZ","colour":"Bay","sex":"Gelding","age":5,"trainer":"J Size","owner":"The Syndicate","total_stakes":1250000,"starts":10,"wins":2,"places":3}"#
    );
}

#[test]
fn form_lists_newest_race_first_whatever_the_arrival_order() {
    let s = fold_each([
        env(result(
            "2026-10-01",
            "Sha Tin",
            2,
            vec![runner(Some(1), "E271")],
        )),
        env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(3), "E271")],
        )),
        env(result(
            "2026-10-01",
            "Sha Tin",
            7,
            vec![runner(Some(2), "E271")],
        )),
    ]);
    let form = doc(&s, DocKey::Form("E271"));
    let order: Vec<(String, i64)> = form["form"]
        .as_array()
        .expect("form")
        .iter()
        .map(|e| {
            (
                e["date"].as_str().unwrap_or_default().into(),
                e["race_number"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("2026-11-01".into(), 1),
            ("2026-10-01".into(), 7),
            ("2026-10-01".into(), 2)
        ]
    );
    assert_eq!(form["form"][0]["position"], 3);
    assert_eq!(form["form"][0]["dead_heat"], false);
    assert_eq!(form["form"][0]["status"], Value::Null);
}

#[test]
fn form_limit_keeps_the_newest_entries_and_stays_valid_json() {
    let s = fold_each((1..=5).map(|d| {
        env(result(
            &format!("2026-10-0{d}"),
            "Sha Tin",
            1,
            vec![runner(Some(d), "E271")],
        ))
    }));
    let stored = s.doc(DocKey::Form("E271")).expect("doc");
    for (limit, expect) in [
        (Some(1), 1),
        (Some(3), 3),
        (Some(5), 5),
        (Some(99), 5),
        (None, 5),
    ] {
        let body = FormDoc::body(stored, limit).expect("framed");
        let v: Value = serde_json::from_slice(&body).expect("valid json");
        let form = v["form"].as_array().expect("form");
        assert_eq!(form.len(), expect);
        assert_eq!(form[0]["date"], "2026-10-05");
    }
}

#[test]
fn a_horse_known_only_from_results_takes_its_name_from_the_latest_result() {
    let mut older = runner(Some(1), "E271");
    older.horse_name = "OLD NAME".into();
    let s = fold_each([
        env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "E271")],
        )),
        env(result("2026-10-01", "Sha Tin", 1, vec![older])),
    ]);
    assert_eq!(doc(&s, DocKey::Form("E271"))["horse_name"], "NAME E271");
    assert!(s.doc(DocKey::Profile("E271")).is_none());

    // Once a profile arrives, its name wins.
    let mut s = s;
    let mut f = Fold::default();
    f.apply(&mut s, 10, 0, &env(profile("E271", "GOLDEN SIXTY")))
        .expect("apply");
    f.render(&mut s).expect("render");
    assert_eq!(doc(&s, DocKey::Form("E271"))["horse_name"], "GOLDEN SIXTY");
}

#[test]
fn an_amended_result_replaces_the_race_and_every_affected_form() {
    let s = fold_each([
        env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        )),
        env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "B2"), runner(Some(2), "C3")],
        )),
    ]);
    let race = doc(
        &s,
        DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        },
    );
    assert_eq!(horses(&race, "runners"), ["B2", "C3"]);
    let day = doc(
        &s,
        DocKey::Results {
            date: "2026-11-01",
            venue: None,
        },
    );
    assert_eq!(day["races"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc(&s, DocKey::Form("B2"))["form"][0]["position"], 1);
    assert_eq!(doc(&s, DocKey::Form("C3"))["form"][0]["position"], 2);
    // A1 is in no race any more and has no profile: it appears nowhere.
    assert!(s.doc(DocKey::Form("A1")).is_none());
}

#[test]
fn dead_heats_share_a_position_and_non_finishers_come_last() {
    let mut a = runner(Some(1), "A1");
    let mut b = runner(Some(1), "B2");
    a.dead_heat = true;
    b.dead_heat = true;
    let s = fold_each([env(result(
        "2026-11-01",
        "Happy Valley",
        4,
        vec![runner(None, "PU1"), runner(Some(3), "C3"), b, a],
    ))]);
    let race = doc(
        &s,
        DocKey::Race {
            date: "2026-11-01",
            race_number: 4,
            venue: None,
        },
    );
    assert_eq!(horses(&race, "runners"), ["B2", "A1", "C3", "PU1"]);
    assert_eq!(race["runners"][0]["dead_heat"], true);
    assert_eq!(race["runners"][3]["position"], Value::Null);
    assert_eq!(race["runners"][3]["status"], "PU");
    assert_eq!(race["venue"], "Happy Valley");
    assert_eq!(race["race_number"], 4);
    assert_eq!(race["going"], "GOOD");
    assert!(race.get("meetings").is_none());
    let form = doc(&s, DocKey::Form("PU1"));
    assert_eq!(form["form"][0]["status"], "PU");
}

#[test]
fn scratchings_remove_runners_whether_they_come_before_or_after_the_card() {
    let s = fold_each([
        env(scratch("2026-11-21", 1, "A1")),
        env(card("2026-11-21", "Sha Tin", 2, &["D4"])),
        env(card("2026-11-21", "Sha Tin", 1, &["A1", "B2", "C3"])),
        env(scratch("2026-11-21", 1, "C3")),
    ]);
    let c = doc(
        &s,
        DocKey::Card {
            date: "2026-11-21",
            venue: None,
        },
    );
    assert_eq!(c["races"][0]["race_number"], 1);
    assert_eq!(horses(&c["races"][0], "runners"), ["B2"]);
    assert_eq!(c["races"][1]["race_number"], 2);
    assert_eq!(c["races"][0]["class"], "Class 4");
    assert_eq!(c["races"][0]["runners"][0]["draw"], 2);
}

#[test]
fn a_duplicate_event_id_is_ignored_at_any_age() {
    let first = env(result(
        "2026-11-01",
        "Sha Tin",
        1,
        vec![runner(Some(1), "A1")],
    ));
    let mut again = env(result(
        "2026-11-01",
        "Sha Tin",
        1,
        vec![runner(Some(1), "Z9")],
    ));
    again.event_id = first.event_id;
    let mut s = MemState::default();
    let mut f = Fold::default();
    assert_eq!(
        f.apply(&mut s, 1, 0, &first).expect("apply"),
        Outcome::Applied
    );
    for seq in 2..50 {
        f.apply(&mut s, seq, 0, &env(profile(&format!("H{seq}"), "FILLER")))
            .expect("apply");
    }
    assert_eq!(
        f.apply(&mut s, 50, 0, &again).expect("apply"),
        Outcome::Duplicate
    );
    f.render(&mut s).expect("render");
    let race = doc(
        &s,
        DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        },
    );
    assert_eq!(horses(&race, "runners"), ["A1"]);
}

#[test]
fn a_date_with_two_meetings_answers_with_the_larger_and_lists_both() {
    let s = fold_each([
        env(result(
            "2026-11-01",
            "Happy Valley",
            1,
            vec![runner(Some(1), "A1")],
        )),
        env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "B1")],
        )),
        env(result(
            "2026-11-01",
            "Sha Tin",
            2,
            vec![runner(Some(1), "B2")],
        )),
    ]);
    let main = doc(
        &s,
        DocKey::Results {
            date: "2026-11-01",
            venue: None,
        },
    );
    assert_eq!(main["venue"], "Sha Tin");
    assert_eq!(main["meetings"], json!(["Happy Valley", "Sha Tin"]));
    let hv = doc(
        &s,
        DocKey::Results {
            date: "2026-11-01",
            venue: Some("Happy Valley"),
        },
    );
    assert_eq!(hv["venue"], "Happy Valley");
    let race = doc(
        &s,
        DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        },
    );
    assert_eq!(horses(&race, "runners"), ["B1"]);
    let race = doc(
        &s,
        DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: Some("Happy Valley"),
        },
    );
    assert_eq!(horses(&race, "runners"), ["A1"]);
}

#[test]
fn odds_keep_the_last_price_of_runners_not_listed() {
    let s = fold_each([
        env(odds("2026-11-21", 3, &[("A1", 3.5), ("B2", 8.0)])),
        env(odds("2026-11-21", 3, &[("A1", 3.2)])),
    ]);
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(
        1,
        0,
        &env(odds("2026-11-21", 3, &[("A1", 3.5), ("B2", 8.0)])),
    )
    .expect("apply");
    b.apply(2, 0, &env(odds("2026-11-21", 3, &[("A1", 3.2)])))
        .expect("apply");
    b.commit().expect("commit");
    let race = store
        .odds("2026-11-21", 3, None)
        .expect("read")
        .expect("odds");
    assert_eq!(race.seq, 2);
    assert_eq!(race.runners["A1"], (3.2, 2));
    assert_eq!(race.runners["B2"], (8.0, 1));
    // The pure fold and the store agree.
    let folded = s
        .records
        .iter()
        .find(|(k, _)| k.starts_with(b"odds"))
        .expect("odds record");
    let folded: RaceOdds = serde_json::from_slice(folded.1).expect("json");
    assert_eq!(folded, race);
}

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(std::path::PathBuf);

impl TempDir {
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens the store in `dir` again. sled lets go of a dropped store's file lock only once
/// its background threads finish, a moment later in this same process; a new process (a
/// restart) never waits. So the lock is waited for here, for a few seconds at most.
pub(crate) fn reopen(dir: &std::path::Path, options: Options) -> Store {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match Store::open_with(dir, options) {
            Ok(store) => return store,
            Err(e) if e.to_string().contains("could not acquire lock") => {
                assert!(std::time::Instant::now() < deadline, "reopen: {e}");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => panic!("reopen: {e}"),
        }
    }
}

pub(crate) fn tempdir() -> TempDir {
    let p = std::env::temp_dir().join(format!("racing-proj-{}", uuid::Uuid::new_v4()));
    TempDir(p)
}

#[test]
fn warming_a_store_reads_the_keys_it_holds_and_passes_over_the_rest() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(1, 0, &env(odds("2026-11-21", 3, &[("A1", 3.5)])))
        .expect("apply");
    b.commit().expect("commit");
    let held: Vec<Vec<u8>> = store
        .documents()
        .map(|d| d.expect("a document").0.to_vec())
        .collect();
    assert!(!held.is_empty(), "the batch wrote documents");
    let missing = DocKey::Profile("Z999").key();
    let keys = held.iter().chain([&missing]).map(Vec::as_slice);
    assert_eq!(store.warm(keys).expect("warm"), held.len());
}

#[test]
fn the_store_commits_batches_with_their_checkpoint_and_skips_redeliveries() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    assert_eq!(store.checkpoint().expect("checkpoint"), 0);

    let mut b = store.batch().expect("batch");
    b.apply(1, 0, &env(profile("E271", "GOLDEN SIXTY")))
        .expect("apply");
    b.dead_letter(
        2,
        "racing.horses.X",
        "envelope: expected value",
        b"not json",
    );
    let stats = b.commit().expect("commit");
    assert_eq!(
        (stats.applied, stats.dead_letters, stats.checkpoint),
        (1, 1, 2)
    );

    // A batch that is dropped without commit leaves nothing behind.
    let mut b = store.batch().expect("batch");
    b.apply(3, 0, &env(profile("B1", "UNCOMMITTED")))
        .expect("apply");
    drop(b);
    assert!(store.doc(DocKey::Profile("B1")).expect("read").is_none());
    assert_eq!(store.checkpoint().expect("checkpoint"), 2);

    // Messages at or below the checkpoint are skipped, not applied twice.
    let mut b = store.batch().expect("batch");
    assert_eq!(
        b.apply(1, 0, &env(profile("E271", "CHANGED")))
            .expect("apply"),
        None
    );
    b.apply(3, 0, &env(profile("B1", "BEAUTY ONE")))
        .expect("apply");
    let stats = b.commit().expect("commit");
    assert_eq!((stats.applied, stats.replayed, stats.checkpoint), (1, 1, 3));
    let p: Value = serde_json::from_slice(
        &store
            .doc(DocKey::Profile("E271"))
            .expect("read")
            .expect("doc"),
    )
    .expect("json");
    assert_eq!(p["horse_name"], "GOLDEN SIXTY");

    let dead = store.dead_letters(0, 10).expect("dead letters");
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].seq, 2);
    assert_eq!(dead[0].excerpt, "not json");
}

#[test]
fn the_odds_document_is_the_snapshot_and_changes_are_found_by_sequence() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(
        1,
        0,
        &env(odds("2026-11-21", 2, &[("B2", 8.0), ("A1", 3.5)])),
    )
    .expect("apply");
    b.apply(2, 0, &env(odds("2026-11-22", 1, &[("C3", 2.0)])))
        .expect("apply");
    b.apply(3, 0, &env(odds("2026-11-21", 2, &[("A1", 3.1)])))
        .expect("apply");
    b.apply(4, 0, &env(profile("E271", "NOT ODDS")))
        .expect("apply");
    b.commit().expect("commit");
    let doc = store
        .doc(DocKey::Odds {
            date: "2026-11-21",
            race_number: 2,
            venue: None,
        })
        .expect("read")
        .expect("doc");
    assert_eq!(
        std::str::from_utf8(&doc).expect("utf8"),
        r#"{"date":"2026-11-21","venue":null,"race_number":2,"seq":3,"odds":[{"horse_no":"A1","win_odds":3.1},{"horse_no":"B2","win_odds":8.0}]}"#
    );
    assert_eq!(store.latest_odds_seq().expect("seq"), 3);
    let all = store.odds_changed_since(None, 0).expect("scan");
    assert_eq!(
        all,
        [("2026-11-21".to_owned(), 2), ("2026-11-22".to_owned(), 1)]
    );
    assert_eq!(
        store.odds_changed_since(None, 2).expect("scan"),
        [("2026-11-21".to_owned(), 2)]
    );
    assert!(store
        .odds_changed_since(Some("2026-11-22"), 2)
        .expect("scan")
        .is_empty());
}

#[test]
fn applied_event_ids_outlive_batches_and_restarts_but_not_a_dropped_batch() {
    let dir = tempdir();
    let first = env(profile("E271", "GOLDEN SIXTY"));
    let dropped = env(profile("B1", "BEAUTY ONE"));
    {
        let store = Store::open(dir.path()).expect("open");
        let mut b = store.batch().expect("batch");
        b.apply(1, 0, &first).expect("apply");
        b.commit().expect("commit");
        let mut b = store.batch().expect("batch");
        assert_eq!(
            b.apply(2, 0, &dropped).expect("apply"),
            Some(Outcome::Applied)
        );
        drop(b);
        let mut b = store.batch().expect("batch");
        assert_eq!(
            b.apply(2, 0, &first).expect("apply"),
            Some(Outcome::Duplicate)
        );
        assert_eq!(
            b.apply(3, 0, &dropped).expect("apply"),
            Some(Outcome::Applied)
        );
        assert_eq!(
            b.apply(4, 0, &dropped).expect("apply"),
            Some(Outcome::Duplicate)
        );
        b.commit().expect("commit");
    }
    let store = reopen(dir.path(), Options::default());
    let ids = store.applied_event_ids().expect("ids");
    assert_eq!(ids.len(), 2);
    let mut b = store.batch().expect("batch");
    assert_eq!(
        b.apply(5, 0, &first).expect("apply"),
        Some(Outcome::Duplicate)
    );
    assert_eq!(
        b.apply(6, 0, &dropped).expect("apply"),
        Some(Outcome::Duplicate)
    );
}

#[test]
fn an_amendment_in_a_later_batch_leaves_no_stale_form_in_the_store() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(
        1,
        0,
        &env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        )),
    )
    .expect("apply");
    b.apply(
        2,
        0,
        &env(result(
            "2026-10-01",
            "Sha Tin",
            1,
            vec![runner(Some(3), "B2")],
        )),
    )
    .expect("apply");
    b.commit().expect("commit");
    let mut b = store.batch().expect("batch");
    b.apply(
        3,
        0,
        &env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "B2"), runner(Some(2), "C3")],
        )),
    )
    .expect("apply");
    b.commit().expect("commit");
    let form = |h: &str| -> Option<Value> {
        store.doc(DocKey::Form(h)).expect("read").map(|d| {
            serde_json::from_slice(&FormDoc::body(&d, None).expect("framed")).expect("json")
        })
    };
    assert!(form("A1").is_none(), "A1 ran in no race any more");
    let b2 = form("B2").expect("B2");
    let positions: Vec<i64> = b2["form"]
        .as_array()
        .expect("form")
        .iter()
        .map(|e| e["position"].as_i64().unwrap_or_default())
        .collect();
    assert_eq!(positions, [1, 3]);
    assert_eq!(form("C3").expect("C3")["form"][0]["position"], 2);
}

const DAY: &str = "2026-11-25";
const ST: &str = "Sha Tin";
const HV: &str = "Happy Valley";

fn race_doc(s: &MemState, race_number: u8, venue: Option<&str>) -> Option<Value> {
    let key = DocKey::Race {
        date: DAY,
        race_number,
        venue,
    };
    s.doc(key).map(|_| doc(s, key))
}

fn races_of(v: &Value) -> Vec<i64> {
    v["races"]
        .as_array()
        .expect("races")
        .iter()
        .map(|r| r["race_number"].as_i64().unwrap_or_default())
        .collect()
}

fn form_races(s: &MemState, horse: &str) -> Option<Vec<(String, i64, String)>> {
    s.doc(DocKey::Form(horse))?;
    let form = doc(s, DocKey::Form(horse));
    Some(
        form["form"]
            .as_array()
            .expect("form")
            .iter()
            .map(|e| {
                (
                    e["date"].as_str().unwrap_or_default().to_owned(),
                    e["race_number"].as_i64().unwrap_or_default(),
                    e["venue"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
    )
}

/// Race 3 run at both venues of `DAY` (A1 and B2 at Sha Tin, C3 at Happy Valley), Sha
/// Tin's race 4, an older run of A1, and odds and a scratching given for Sha Tin's race 3.
fn two_meetings() -> Vec<Envelope> {
    [
        result("2026-11-01", ST, 1, vec![runner(Some(2), "A1")]),
        card(DAY, ST, 3, &["A1", "B2", "X9"]),
        card(DAY, HV, 3, &["C3"]),
        card(DAY, ST, 4, &["E5"]),
        scratch_at(DAY, ST, 3, "X9"),
        odds_at(DAY, ST, 3, &[("A1", 2.5)]),
        odds_at(DAY, HV, 3, &[("C3", 4.0)]),
        result(
            DAY,
            ST,
            3,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        ),
        result(DAY, HV, 3, vec![runner(Some(1), "C3")]),
        result(DAY, ST, 4, vec![runner(Some(1), "E5")]),
    ]
    .into_iter()
    .map(env)
    .collect()
}

#[test]
fn a_retraction_removes_that_venues_card_result_race_and_form_entries_only() {
    let mut events = two_meetings();
    events.push(env(retraction(
        DAY,
        ST,
        3,
        "published under the wrong venue",
    )));
    let s = fold_each(events);

    // The day's results and card keep Sha Tin's race 4 and Happy Valley's race 3.
    let results = |venue| doc(&s, DocKey::Results { date: DAY, venue });
    assert_eq!(races_of(&results(Some(ST))), [4]);
    assert_eq!(races_of(&results(Some(HV))), [3]);
    assert_eq!(results(None)["meetings"], json!([HV, ST]));
    let cards = |venue| doc(&s, DocKey::Card { date: DAY, venue });
    assert_eq!(races_of(&cards(Some(ST))), [4]);
    assert_eq!(races_of(&cards(Some(HV))), [3]);

    // The single race: gone at Sha Tin; without a venue, Happy Valley's.
    assert!(race_doc(&s, 3, Some(ST)).is_none());
    let race = race_doc(&s, 3, None).expect("Happy Valley's race 3");
    assert_eq!(
        (race["venue"].as_str(), horses(&race, "runners")),
        (Some(HV), vec!["C3".to_owned()])
    );
    assert!(race_doc(&s, 3, Some(HV)).is_some());
    assert!(race_doc(&s, 4, Some(ST)).is_some());

    // Form: A1 keeps its older run, B2 ran nowhere else and has no profile, C3 is untouched.
    assert_eq!(
        form_races(&s, "A1"),
        Some(vec![("2026-11-01".to_owned(), 1, ST.to_owned())])
    );
    assert_eq!(form_races(&s, "B2"), None);
    assert_eq!(
        form_races(&s, "C3"),
        Some(vec![(DAY.to_owned(), 3, HV.to_owned())])
    );

    // The odds given for Sha Tin's race 3 went with it; Happy Valley's stay.
    let odds = |venue| {
        s.doc(DocKey::Odds {
            date: DAY,
            race_number: 3,
            venue,
        })
        .map(|_| {
            doc(
                &s,
                DocKey::Odds {
                    date: DAY,
                    race_number: 3,
                    venue,
                },
            )
        })
    };
    assert!(odds(Some(ST)).is_none());
    assert_eq!(
        odds(Some(HV)).expect("HV odds")["odds"],
        json!([{"horse_no": "C3", "win_odds": 4.0}])
    );
    assert_eq!(odds(None).expect("odds without venue")["venue"], HV);
}

#[test]
fn a_retracted_race_published_again_appears_again_without_its_old_scratchings() {
    let mut events = two_meetings();
    events.push(env(retraction(DAY, ST, 3, "void race")));
    events.push(env(card(DAY, ST, 3, &["A1", "B2", "X9"])));
    events.push(env(result(DAY, ST, 3, vec![runner(Some(3), "B2")])));
    let s = fold_each(events);
    let cards = doc(
        &s,
        DocKey::Card {
            date: DAY,
            venue: Some(ST),
        },
    );
    assert_eq!(races_of(&cards), [3, 4]);
    // X9's scratching was for the race withdrawn: the new card's X9 runs.
    assert_eq!(horses(&cards["races"][0], "runners"), ["A1", "B2", "X9"]);
    let race = race_doc(&s, 3, Some(ST)).expect("race 3 at Sha Tin again");
    assert_eq!(horses(&race, "runners"), ["B2"]);
    assert_eq!(
        form_races(&s, "B2"),
        Some(vec![(DAY.to_owned(), 3, ST.to_owned())])
    );
    assert_eq!(form_races(&s, "A1").map(|f| f.len()), Some(1));
}

#[test]
fn retracting_a_dates_only_race_leaves_nothing_behind() {
    let s = fold_each([
        env(card(DAY, ST, 1, &["A1", "B2"])),
        env(scratch_at(DAY, ST, 1, "B2")),
        env(odds_at(DAY, ST, 1, &[("A1", 3.0)])),
        env(result(DAY, ST, 1, vec![runner(Some(1), "A1")])),
        env(retraction(DAY, ST, 1, "wrong date")),
    ]);
    // The history the read models keep (the odds journal, the versions of the records
    // and the form changes, for `as_of`) holds the race as it was; nothing else does.
    let history = |k: &[u8]| {
        ["oj\0", "h\0", "fc\0"]
            .iter()
            .any(|p| k.starts_with(p.as_bytes()))
    };
    let left: Vec<String> = s
        .records
        .keys()
        .filter(|k| !history(k))
        .map(|k| String::from_utf8_lossy(k).replace('\0', "/"))
        .collect();
    // Only the latest odds sequence: the odds events were applied, and stay in the log's
    // history, the odds journal (one move, at sequence 3).
    assert_eq!(left, ["meta/odds_seq"]);
    let journal: Vec<Vec<u8>> = crate::journal_by_move(s.records.clone())
        .expect("chunks that decode")
        .into_keys()
        .filter(|k| k.starts_with(b"oj\0"))
        .collect();
    let mut one_move = format!("oj\0{DAY}\0").into_bytes();
    one_move.extend_from_slice(&3u64.to_be_bytes());
    one_move.push(1);
    assert_eq!(journal, [one_move], "one move, at sequence 3, of race 1");
}

#[test]
fn a_retraction_of_a_race_with_nothing_stored_changes_nothing() {
    let events = two_meetings();
    let before = fold_each(events.clone());
    let mut after = before.clone();
    let mut f = Fold::default();
    for (seq, e) in [
        retraction(DAY, ST, 7, "no such race"),
        retraction(DAY, "Kranji", 3, "no such venue"),
        retraction("2026-11-26", ST, 3, "no such day"),
    ]
    .into_iter()
    .enumerate()
    {
        let outcome = f
            .apply(&mut after, 100 + seq as u64, 0, &env(e))
            .expect("apply");
        assert_eq!(outcome, Outcome::Applied);
    }
    f.render(&mut after).expect("render");
    assert_eq!(after.records, before.records);

    // Retracting twice is retracting once.
    let mut once = events.clone();
    once.push(env(retraction(DAY, HV, 3, "void")));
    let mut twice = once.clone();
    twice.push(env(retraction(DAY, HV, 3, "void, again")));
    assert_eq!(fold_each(once).records, fold_each(twice).records);
}

#[test]
fn a_retraction_in_the_batch_of_its_race_leaves_what_separate_batches_leave() {
    let mut events = two_meetings();
    events.push(env(retraction(DAY, ST, 3, "void")));
    events.push(env(odds_at(DAY, ST, 3, &[("A1", 9.0)])));
    let separate = fold_each(events.clone());
    let mut together = MemState::default();
    let mut f = Fold::default();
    for (i, e) in events.iter().enumerate() {
        f.apply(&mut together, i as u64 + 1, 0, e).expect("apply");
    }
    f.render(&mut together).expect("render");
    // Each document names the sequence it reflects: the batch's last event, or its own.
    assert!(
        answers(&together) == answers(&separate),
        "the same records answer the same"
    );
}

/// The records of `s`, each document as it answers: its `ETag` and bytes, without the
/// sequence it was sealed at (which is where its batch ended); the odds journal a record
/// per move, and the versions and forms' changes a record per event (their records are
/// where batches ended too).
fn answers(s: &MemState) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let by_move = crate::journal_by_move(s.records.clone()).expect("chunks that decode");
    crate::history_by_event(by_move)
        .expect("versions and form changes that decode")
        .into_iter()
        .map(|(k, v)| {
            let v = if is_sealed(&k) { answered(&v) } else { v };
            (k, v)
        })
        .collect()
}

fn odds_doc(s: &MemState, race_number: u8, venue: Option<&str>) -> Value {
    doc(
        s,
        DocKey::Odds {
            date: DAY,
            race_number,
            venue,
        },
    )
}

#[test]
fn odds_given_for_a_venue_are_that_venues_race_only() {
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1"])),
        env(card(DAY, ST, 4, &["E5"])),
        env(card(DAY, HV, 3, &["C3"])),
        env(odds_at(DAY, ST, 3, &[("A1", 2.5)])),
        env(odds_at(DAY, HV, 3, &[("C3", 4.0)])),
    ]);
    assert_eq!(
        odds_doc(&s, 3, Some(ST)),
        json!({"date": DAY, "venue": ST, "meetings": [HV, ST], "race_number": 3, "seq": 4,
               "odds": [{"horse_no": "A1", "win_odds": 2.5}]})
    );
    assert_eq!(
        odds_doc(&s, 3, Some(HV)),
        json!({"date": DAY, "venue": HV, "meetings": [HV, ST], "race_number": 3, "seq": 5,
               "odds": [{"horse_no": "C3", "win_odds": 4.0}]})
    );
    // Without a venue: the day's main meeting (Sha Tin, two races).
    assert_eq!(odds_doc(&s, 3, None), odds_doc(&s, 3, Some(ST)));
}

#[test]
fn odds_without_a_venue_are_for_that_race_at_every_venue_whatever_the_order() {
    // A v1 feeder's prices for race 3, on a date with two meetings that both run a race 3.
    let events = [
        odds(DAY, 3, &[("A1", 3.0), ("C3", 6.0)]),
        card(DAY, ST, 3, &["A1"]),
        card(DAY, HV, 3, &["C3"]),
        odds_at(DAY, HV, 3, &[("C3", 5.0)]),
        odds(DAY, 3, &[("A1", 2.8)]),
    ];
    let s = fold_each(events.iter().cloned().map(env));
    let prices = |venue| odds_doc(&s, 3, venue)["odds"].clone();
    // Each runner at its latest price for the venue: C3's Happy Valley price is newer
    // than the price given for every venue, A1's newest price was given for every venue.
    assert_eq!(
        prices(Some(HV)),
        json!([{"horse_no": "A1", "win_odds": 2.8}, {"horse_no": "C3", "win_odds": 5.0}])
    );
    assert_eq!(
        prices(Some(ST)),
        json!([{"horse_no": "A1", "win_odds": 2.8}, {"horse_no": "C3", "win_odds": 6.0}])
    );
    assert_eq!(odds_doc(&s, 3, Some(ST))["seq"], 5);
    assert_eq!(odds_doc(&s, 3, Some(HV))["seq"], 5);
    // Before any card, the same prices were the race's without a venue.
    let early = fold_each([env(events[0].clone())]);
    assert_eq!(
        odds_doc(&early, 3, None),
        json!({"date": DAY, "venue": null, "race_number": 3, "seq": 1,
               "odds": [{"horse_no": "A1", "win_odds": 3.0}, {"horse_no": "C3", "win_odds": 6.0}]})
    );
    // The cards first or last, the documents are the same.
    let cards_first = fold_each([1, 2, 0, 3, 4].map(|i| env(events[i].clone())));
    for venue in [Some(ST), Some(HV), None] {
        let mut first = odds_doc(&cards_first, 3, venue);
        let mut last = odds_doc(&s, 3, venue);
        // The sequence is the fold's position, which the reordering moved.
        first["seq"] = Value::Null;
        last["seq"] = Value::Null;
        assert_eq!(first, last, "{venue:?}");
    }
}

#[test]
fn a_scratching_for_a_venue_leaves_the_other_venues_race_alone() {
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1", "B2", "Z9"])),
        env(card(DAY, HV, 3, &["A1", "B2", "Z9"])),
        env(scratch_at(DAY, HV, 3, "B2")),
        // A v1 scratching: race 3 at every venue.
        env(scratch(DAY, 3, "Z9")),
    ]);
    let runners = |venue| {
        let card = doc(&s, DocKey::Card { date: DAY, venue });
        horses(&card["races"][0], "runners")
    };
    assert_eq!(runners(Some(ST)), ["A1", "B2"]);
    assert_eq!(runners(Some(HV)), ["A1"]);
}

#[test]
fn the_odds_of_a_race_are_one_document_a_venue_and_changes_are_found_once_a_race() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    for (seq, e) in [
        odds(DAY, 2, &[("A1", 3.5)]),
        card(DAY, ST, 3, &["A1"]),
        card(DAY, HV, 3, &["C3"]),
        odds_at(DAY, HV, 3, &[("C3", 4.0)]),
        odds_at(DAY, ST, 3, &[("A1", 2.0)]),
        odds(DAY, 3, &[("B2", 9.0)]),
    ]
    .into_iter()
    .enumerate()
    {
        b.apply(seq as u64 + 1, 0, &env(e)).expect("apply");
    }
    b.commit().expect("commit");
    let venues = |n| -> Vec<Value> {
        store
            .odds_docs(DAY, n)
            .expect("read")
            .iter()
            .map(|d| serde_json::from_slice::<Value>(d).expect("json")["venue"].clone())
            .collect()
    };
    assert_eq!(venues(2), [Value::Null]);
    assert_eq!(venues(3), [json!(HV), json!(ST)]);
    assert!(venues(4).is_empty());
    assert_eq!(
        store.odds_changed_since(Some(DAY), 0).expect("scan"),
        [(DAY.to_owned(), 2), (DAY.to_owned(), 3)]
    );
    assert_eq!(
        store.odds_changed_since(None, 5).expect("scan"),
        [(DAY.to_owned(), 3)]
    );
    let st = store.odds(DAY, 3, Some(ST)).expect("read").expect("odds");
    assert_eq!(st.runners["A1"], (2.0, 5));
    assert!(!st.runners.contains_key("B2"), "given for every venue");
}

#[test]
fn the_odds_journal_keeps_every_applied_move_in_order_and_no_duplicate() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let first = env(odds("2026-11-21", 2, &[("B2", 8.0), ("A1", 3.5)]));
    // 2026-11-21T12:00:00Z, as JetStream would have stamped it.
    let noon: i128 = 1_795_262_400_000_000_000;
    let mut b = store.batch().expect("batch");
    b.apply(1, noon, &first).expect("apply");
    b.apply(
        2,
        noon + 1_000_000_000,
        &env(odds_at("2026-11-21", "Sha Tin", 3, &[("C3", 2.0)])),
    )
    .expect("apply");
    b.apply(3, noon, &first).expect("apply");
    b.apply(4, noon, &env(profile("E271", "NOT ODDS")))
        .expect("apply");
    b.apply(5, noon, &env(odds("2026-11-22", 1, &[("D4", 5.0)])))
        .expect("apply");
    b.commit().expect("commit");
    let mut b = store.batch().expect("batch");
    b.apply(6, noon, &env(odds("2026-11-21", 2, &[("A1", 3.1)])))
        .expect("apply");
    // A retraction takes the race out of the read models; its moves stay in the journal.
    b.apply(
        7,
        noon,
        &env(retraction("2026-11-21", "Sha Tin", 3, "wrong venue")),
    )
    .expect("apply");
    b.commit().expect("commit");

    let moves = store
        .odds_moves("2026-11-21", 0, None, 100)
        .expect("journal");
    let seqs: Vec<(u64, u8)> = moves.iter().map(|m| (m.seq, m.race_number)).collect();
    assert_eq!(
        seqs,
        [(1, 2), (2, 3), (6, 2)],
        "the duplicate at 3 is not a move"
    );
    assert_eq!(
        std::str::from_utf8(&moves[0].body).expect("utf8"),
        r#"{"date":"2026-11-21","venue":null,"race_number":2,"seq":1,"published_at":"2026-11-21T12:00:00Z","odds":[{"horse_no":"B2","win_odds":8.0},{"horse_no":"A1","win_odds":3.5}]}"#
    );
    let second: Value = serde_json::from_slice(&moves[1].body).expect("json");
    assert_eq!(second["venue"], "Sha Tin");
    assert_eq!(second["published_at"], "2026-11-21T12:00:01Z");

    let race_2: Vec<u64> = store
        .odds_moves("2026-11-21", 1, Some(2), 100)
        .expect("journal")
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(race_2, [6], "after 1, race 2 only");
    assert_eq!(
        store
            .odds_moves("2026-11-21", 0, None, 2)
            .expect("journal")
            .len(),
        2
    );
    assert_eq!(
        store
            .count_odds_moves("2026-11-21", 0, None, 100)
            .expect("count"),
        3
    );
    assert_eq!(
        store
            .count_odds_moves("2026-11-21", 0, Some(2), 100)
            .expect("count"),
        2
    );
    assert_eq!(
        store
            .count_odds_moves("2026-11-21", 0, None, 1)
            .expect("count"),
        1
    );
    assert_eq!(
        store
            .odds_moves("2026-11-22", 0, None, 100)
            .expect("journal")
            .len(),
        1,
        "each date its own"
    );
}

/// A runner with the full Hong Kong record: drawn 4, 126 lb on a 1,100 lb body.
fn recorded(position: i64, horse: &str, lbw: &str, calls: &[i64]) -> ResultRunner {
    ResultRunner {
        lbw: Some(lbw.into()),
        running_positions: Some(calls.to_vec()),
        actual_weight: Some(126),
        declared_weight: Some(1100),
        draw: Some(4),
        ..runner(Some(position), horse)
    }
}

/// A Class 3 result of the full record.
fn recorded_result(runners: Vec<ResultRunner>) -> Event {
    let mut e = result("2026-11-01", "Sha Tin", 1, runners);
    if let Event::RaceResultPublished(r) = &mut e {
        r.class = Some("Class 3".into());
    }
    e
}

fn single_race(s: &MemState) -> Value {
    doc(
        s,
        DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        },
    )
}

#[test]
fn the_full_record_is_served_in_results_race_and_form_after_the_v1_fields() {
    let s = fold_each([env(recorded_result(vec![
        recorded(1, "A1", "-", &[2, 1, 1]),
        recorded(2, "B2", "1-1/4", &[1, 2, 2]),
        ResultRunner {
            lbw: Some("---".into()),
            ..runner(None, "C3")
        },
    ]))]);
    let race = s
        .doc(DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        })
        .expect("race");
    let race = std::str::from_utf8(race).expect("utf8");
    assert!(
        race.contains(r#""status":null,"dead_heat":false,"lbw":"1-1/4","lbw_lengths":1.25,"running_positions":[1,2,2],"actual_weight":126,"declared_weight":1100,"draw":4}"#),
        "{race}"
    );
    assert!(race.ends_with(r#"],"class":"Class 3"}"#), "{race}");
    let day = doc(
        &s,
        DocKey::Results {
            date: "2026-11-01",
            venue: None,
        },
    );
    let first = &day["races"][0];
    assert_eq!(first["class"], "Class 3");
    assert_eq!(first["runners"][0]["lbw_lengths"], 0.0);
    // Where the feed gave only `lbw`, `lbw_lengths` comes with it, null for no margin;
    // the fields not given are left out.
    let c3 = &first["runners"][2];
    assert_eq!(
        (&c3["lbw"], &c3["lbw_lengths"]),
        (&json!("---"), &Value::Null)
    );
    for absent in [
        "running_positions",
        "actual_weight",
        "declared_weight",
        "draw",
    ] {
        assert!(c3.get(absent).is_none(), "{absent}");
    }
    assert_eq!(single_race(&s)["runners"], first["runners"]);

    let form = s.doc(DocKey::Form("B2")).expect("form");
    let form = FormDoc::body(form, None).expect("framed");
    assert_eq!(
        std::str::from_utf8(&form).expect("utf8"),
        r#"{"horse_no":"B2","horse_name":"NAME B2","form":[{"date":"2026-11-01","venue":"Sha Tin","race_number":1,"distance":1200,"position":2,"finish_time":"1:09.42","win_odds":4.5,"jockey":"Z Purton","status":null,"dead_heat":false,"race_name":"RACE 1 HANDICAP","going":"GOOD","class":"Class 3","trainer":"J Size","draw":4,"actual_weight":126,"declared_weight":1100,"lbw":"1-1/4","lbw_lengths":1.25,"running_positions":[1,2,2]}]}"#
    );
}

#[test]
fn a_v1_result_is_served_without_the_record_fields() {
    let s = fold_each([env(result(
        "2026-11-01",
        "Sha Tin",
        1,
        vec![runner(Some(1), "A1")],
    ))]);
    let race = s
        .doc(DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        })
        .expect("race");
    assert_eq!(
        std::str::from_utf8(race).expect("utf8"),
        r#"{"date":"2026-11-01","venue":"Sha Tin","race_number":1,"race_name":"RACE 1 HANDICAP","distance":1200,"going":"GOOD","runners":[{"position":1,"horse_no":"A1","horse_name":"NAME A1","jockey":"Z Purton","trainer":"J Size","finish_time":"1:09.41","win_odds":4.5,"status":null,"dead_heat":false}]}"#
    );
    // The form entry gains what every result knows (race name, going, trainer) only.
    let form = s.doc(DocKey::Form("A1")).expect("form");
    let form = FormDoc::body(form, None).expect("framed");
    assert_eq!(
        std::str::from_utf8(&form).expect("utf8"),
        r#"{"horse_no":"A1","horse_name":"NAME A1","form":[{"date":"2026-11-01","venue":"Sha Tin","race_number":1,"distance":1200,"position":1,"finish_time":"1:09.41","win_odds":4.5,"jockey":"Z Purton","status":null,"dead_heat":false,"race_name":"RACE 1 HANDICAP","going":"GOOD","trainer":"J Size"}]}"#
    );
}

#[test]
fn an_amended_record_updates_results_and_form_and_a_retraction_removes_them() {
    let first = recorded_result(vec![
        recorded(1, "A1", "-", &[2, 1, 1]),
        recorded(2, "B2", "HD", &[1, 2, 2]),
    ]);
    let amended = recorded_result(vec![
        recorded(1, "B2", "-", &[1, 2, 1]),
        recorded(2, "A1", "N", &[2, 1, 2]),
    ]);
    let mut s = fold_each([env(first), env(amended)]);
    let race = single_race(&s);
    assert_eq!(horses(&race, "runners"), ["B2", "A1"]);
    assert_eq!(race["runners"][1]["lbw"], "N");
    assert_eq!(race["runners"][1]["lbw_lengths"], 0.3);
    assert_eq!(race["runners"][1]["running_positions"], json!([2, 1, 2]));
    let a1 = &doc(&s, DocKey::Form("A1"))["form"][0];
    assert_eq!(
        (&a1["position"], &a1["lbw"], &a1["lbw_lengths"]),
        (&json!(2), &json!("N"), &json!(0.3))
    );
    assert_eq!(a1["running_positions"], json!([2, 1, 2]));
    let b2 = &doc(&s, DocKey::Form("B2"))["form"][0];
    assert_eq!((&b2["lbw"], &b2["lbw_lengths"]), (&json!("-"), &json!(0.0)));

    let mut f = Fold::default();
    let gone = env(retraction("2026-11-01", "Sha Tin", 1, "void race"));
    f.apply(&mut s, 3, 0, &gone).expect("apply");
    f.render(&mut s).expect("render");
    assert!(s
        .doc(DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        })
        .is_none());
    for horse in ["A1", "B2"] {
        assert!(s.doc(DocKey::Form(horse)).is_none(), "{horse}");
    }
}

#[test]
fn a_profile_of_the_full_record_serves_its_fields_after_the_interface_ones() {
    let mut p = profile("E271", "GOLDEN SIXTY");
    if let Event::HorseProfileUpdated(h) = &mut p {
        h.sire = Some("Street Cry".into());
        h.dam = Some("Clinque".into());
        h.dam_sire = Some("Casual Lies".into());
        h.import_type = Some("PPG".into());
        h.current_rating = Some(126);
        h.season_start_rating = Some(131);
        h.season_stakes = Some(0);
    }
    let s = fold_each([env(p)]);
    let bytes = s.doc(DocKey::Profile("E271")).expect("doc");
    assert_eq!(
        std::str::from_utf8(bytes).expect("utf8"),
        r#"{"horse_no":"E271","horse_name":"GOLDEN SIXTY","country_of_origin":"NZ","colour":"Bay","sex":"Gelding","age":5,"trainer":"J Size","owner":"The Syndicate","total_stakes":1250000,"starts":10,"wins":2,"places":3,"sire":"Street Cry","dam":"Clinque","dam_sire":"Casual Lies","import_type":"PPG","current_rating":126,"season_start_rating":131,"season_stakes":0}"#
    );
}

/// The journal in chunks reads as one list of moves: from any point, of one race or all,
/// up to a limit, whether the moves a point falls among came in one batch (several chunks
/// of a date) or in many.
#[test]
fn the_odds_journal_reads_the_same_across_its_chunks_and_batches() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    // 700 moves of two races of a date, and one of another date between them: in one
    // batch of 500 messages (chunks of at most 128 moves), then in batches of 1 to 7.
    let mut seq = 0;
    let mut expected = Vec::new();
    let mut add = |b: &mut Batch<'_>, i: u64| {
        seq += 1;
        let race = if i.is_multiple_of(3) { 2 } else { 1 };
        let date = if i == 250 { "2026-11-22" } else { "2026-11-21" };
        let price = 2.0 + (i % 40) as f64 / 10.0;
        b.apply(seq, 0, &env(odds(date, race, &[("A1", price)])))
            .expect("apply");
        if date == "2026-11-21" {
            expected.push((seq, race as u8));
        }
    };
    let mut b = store.batch().expect("batch");
    for i in 0..500 {
        add(&mut b, i);
    }
    b.commit().expect("commit");
    let mut i = 500;
    while i < 701 {
        let mut b = store.batch().expect("batch");
        for _ in 0..(i % 7 + 1) {
            add(&mut b, i);
            i += 1;
        }
        b.commit().expect("commit");
    }
    let read = |after: u64, race: Option<u8>, limit: usize| -> Vec<(u64, u8)> {
        store
            .odds_moves("2026-11-21", after, race, limit)
            .expect("journal")
            .iter()
            .map(|m| (m.seq, m.race_number))
            .collect()
    };
    assert_eq!(read(0, None, usize::MAX), expected);
    for after in [
        0, 1, 127, 128, 129, 250, 251, 255, 256, 499, 500, 501, 650, 700, 701, 9999,
    ] {
        let past: Vec<(u64, u8)> = expected.iter().copied().filter(|m| m.0 > after).collect();
        assert_eq!(read(after, None, usize::MAX), past, "after {after}");
        assert_eq!(
            read(after, None, 3),
            past[..past.len().min(3)],
            "after {after}, 3"
        );
        let race_2: Vec<(u64, u8)> = past.iter().copied().filter(|m| m.1 == 2).collect();
        assert_eq!(
            read(after, Some(2), usize::MAX),
            race_2,
            "after {after}, race 2"
        );
        assert_eq!(
            store
                .count_odds_moves("2026-11-21", after, Some(2), 50)
                .expect("count"),
            race_2.len().min(50) as u64,
            "count after {after}"
        );
        // Every move as it went live, with its own sequence.
        for m in store
            .odds_moves("2026-11-21", after, None, 5)
            .expect("journal")
        {
            let body: Value = serde_json::from_slice(&m.body).expect("json");
            assert_eq!(body["seq"], m.seq);
            assert_eq!(body["race_number"], m.race_number);
        }
    }
    assert_eq!(
        store
            .odds_moves("2026-11-22", 0, None, 10)
            .expect("journal")
            .iter()
            .map(|m| m.seq)
            .collect::<Vec<_>>(),
        [251]
    );
}

#[test]
fn a_document_without_a_venue_is_stored_once_as_the_main_meetings() {
    let s = fold_each(two_meetings());
    let unnamed = [
        DocKey::Results {
            date: DAY,
            venue: None,
        },
        DocKey::Race {
            date: DAY,
            race_number: 3,
            venue: None,
        },
        DocKey::Card {
            date: DAY,
            venue: None,
        },
        DocKey::Odds {
            date: DAY,
            race_number: 3,
            venue: None,
        },
    ];
    for key in unnamed {
        let stored = &s.records[&key.key()];
        assert!(
            stored.len() < 32,
            "{key:?} holds {} bytes: a copy, not the name of the main meeting's",
            stored.len()
        );
        let main = match key {
            DocKey::Results { date, .. } => DocKey::Results {
                date,
                venue: Some(ST),
            },
            DocKey::Race {
                date, race_number, ..
            } => DocKey::Race {
                date,
                race_number,
                venue: Some(ST),
            },
            DocKey::Card { date, .. } => DocKey::Card {
                date,
                venue: Some(ST),
            },
            DocKey::Odds {
                date, race_number, ..
            } => DocKey::Odds {
                date,
                race_number,
                venue: Some(ST),
            },
            _ => unreachable!("only dated documents"),
        };
        assert_eq!(s.doc(key), s.doc(main), "{key:?} answers as {main:?}");
        assert!(s.doc(key).is_some_and(|d| !d.is_empty()));
    }
}
