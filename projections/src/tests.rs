//! The folds as pure functions: given these events, the documents are these. No NATS, no
//! disk; one test at the end runs the same events through a sled store.

use racing_events::samples::{card, odds, profile, result, runner, scratch};
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
        f.apply(&mut s, i as u64 + 1, &e).expect("apply");
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
    f.apply(&mut s, 10, &env(profile("E271", "GOLDEN SIXTY")))
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
    assert_eq!(f.apply(&mut s, 1, &first).expect("apply"), Outcome::Applied);
    for seq in 2..50 {
        f.apply(&mut s, seq, &env(profile(&format!("H{seq}"), "FILLER")))
            .expect("apply");
    }
    assert_eq!(
        f.apply(&mut s, 50, &again).expect("apply"),
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
    b.apply(1, &env(odds("2026-11-21", 3, &[("A1", 3.5), ("B2", 8.0)])))
        .expect("apply");
    b.apply(2, &env(odds("2026-11-21", 3, &[("A1", 3.2)])))
        .expect("apply");
    b.commit().expect("commit");
    let race = store.odds("2026-11-21", 3).expect("read").expect("odds");
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
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> TempDir {
    let p = std::env::temp_dir().join(format!("racing-proj-{}", uuid::Uuid::new_v4()));
    TempDir(p)
}

#[test]
fn the_store_commits_batches_with_their_checkpoint_and_skips_redeliveries() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    assert_eq!(store.checkpoint().expect("checkpoint"), 0);

    let mut b = store.batch().expect("batch");
    b.apply(1, &env(profile("E271", "GOLDEN SIXTY")))
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
    b.apply(3, &env(profile("B1", "UNCOMMITTED")))
        .expect("apply");
    drop(b);
    assert!(store.doc(DocKey::Profile("B1")).expect("read").is_none());
    assert_eq!(store.checkpoint().expect("checkpoint"), 2);

    // Messages at or below the checkpoint are skipped, not applied twice.
    let mut b = store.batch().expect("batch");
    assert_eq!(
        b.apply(1, &env(profile("E271", "CHANGED"))).expect("apply"),
        None
    );
    b.apply(3, &env(profile("B1", "BEAUTY ONE")))
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
    b.apply(1, &env(odds("2026-11-21", 2, &[("B2", 8.0), ("A1", 3.5)])))
        .expect("apply");
    b.apply(2, &env(odds("2026-11-22", 1, &[("C3", 2.0)])))
        .expect("apply");
    b.apply(3, &env(odds("2026-11-21", 2, &[("A1", 3.1)])))
        .expect("apply");
    b.apply(4, &env(profile("E271", "NOT ODDS")))
        .expect("apply");
    b.commit().expect("commit");
    let doc = store
        .doc(DocKey::Odds {
            date: "2026-11-21",
            race_number: 2,
        })
        .expect("read")
        .expect("doc");
    assert_eq!(
        std::str::from_utf8(&doc).expect("utf8"),
        r#"{"date":"2026-11-21","race_number":2,"seq":3,"odds":[{"horse_no":"A1","win_odds":3.1},{"horse_no":"B2","win_odds":8.0}]}"#
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
        b.apply(1, &first).expect("apply");
        b.commit().expect("commit");
        let mut b = store.batch().expect("batch");
        assert_eq!(b.apply(2, &dropped).expect("apply"), Some(Outcome::Applied));
        drop(b);
        let mut b = store.batch().expect("batch");
        assert_eq!(b.apply(2, &first).expect("apply"), Some(Outcome::Duplicate));
        assert_eq!(b.apply(3, &dropped).expect("apply"), Some(Outcome::Applied));
        assert_eq!(
            b.apply(4, &dropped).expect("apply"),
            Some(Outcome::Duplicate)
        );
        b.commit().expect("commit");
    }
    let store = Store::open(dir.path()).expect("reopen");
    let ids = store.applied_event_ids().expect("ids");
    assert_eq!(ids.len(), 2);
    let mut b = store.batch().expect("batch");
    assert_eq!(b.apply(5, &first).expect("apply"), Some(Outcome::Duplicate));
    assert_eq!(
        b.apply(6, &dropped).expect("apply"),
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
