//! The full record a feed may give beyond the interface's fields, in results, races,
//! forms and profiles, and a profile of the interface's fields alone.

use super::*;

#[test]
fn profile_document_has_exactly_the_interface_fields_in_order() {
    let s = fold_each([env(profile("E271", "GOLDEN SIXTY"))]);
    let bytes = s.doc(DocKey::Profile("E271")).expect("doc");
    assert_eq!(
        std::str::from_utf8(&bytes).expect("utf8"),
        r#"{"horse_no":"E271","horse_name":"GOLDEN SIXTY","country_of_origin":"NZ","colour":"Bay","sex":"Gelding","age":5,"trainer":"J Size","owner":"The Syndicate","total_stakes":1250000,"starts":10,"wins":2,"places":3}"#
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
    let race = std::str::from_utf8(&race).expect("utf8");
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
    let form = FormDoc::body(&form, None).expect("framed");
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
        std::str::from_utf8(&race).expect("utf8"),
        r#"{"date":"2026-11-01","venue":"Sha Tin","race_number":1,"race_name":"RACE 1 HANDICAP","distance":1200,"going":"GOOD","runners":[{"position":1,"horse_no":"A1","horse_name":"NAME A1","jockey":"Z Purton","trainer":"J Size","finish_time":"1:09.41","win_odds":4.5,"status":null,"dead_heat":false}]}"#
    );
    // The form entry gains what every result knows (race name, going, trainer) only.
    let form = s.doc(DocKey::Form("A1")).expect("form");
    let form = FormDoc::body(&form, None).expect("framed");
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
        std::str::from_utf8(&bytes).expect("utf8"),
        r#"{"horse_no":"E271","horse_name":"GOLDEN SIXTY","country_of_origin":"NZ","colour":"Bay","sex":"Gelding","age":5,"trainer":"J Size","owner":"The Syndicate","total_stakes":1250000,"starts":10,"wins":2,"places":3,"sire":"Street Cry","dam":"Clinque","dam_sire":"Casual Lies","import_type":"PPG","current_rating":126,"season_start_rating":131,"season_stakes":0}"#
    );
}
