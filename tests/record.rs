//! The full Hong Kong record end to end (feed contract v1.1, "The full Hong Kong
//! record"): a result's lengths behind, running positions, weights and draw and its class,
//! and a profile's pedigree and ratings, published through NATS and read over HTTP in the
//! results, the single race, the form and the profile; a v1 event served as before; a
//! value outside its rule a dead letter.

use racing_events::samples::{envelope, profile, recorded_profile, result, runner};
use racing_events::{Event, ResultRunner};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::service_with;

const DAY: &str = "2026-11-18";

/// A runner of the full record: `lbw` and its calls given, 126 lb on a 1,105 lb body.
fn recorded(position: i64, horse: &str, lbw: &str, calls: &[i64], draw: i64) -> ResultRunner {
    ResultRunner {
        lbw: Some(lbw.into()),
        running_positions: Some(calls.to_vec()),
        actual_weight: Some(126),
        declared_weight: Some(1105),
        draw: Some(draw),
        ..runner(Some(position), horse)
    }
}

fn class_3(mut e: Event) -> Event {
    if let Event::RaceResultPublished(r) = &mut e {
        r.class = Some("Class 3".into());
    }
    e
}

/// The runner `horse` of a race document.
fn runner_of<'a>(race: &'a Value, horse: &str) -> &'a Value {
    race["runners"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["horse_no"] == horse))
        .unwrap_or_else(|| panic!("no {horse} in {race}"))
}

#[tokio::test]
async fn a_v1_1_result_and_profile_are_served_in_results_race_form_and_profile() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let horse = recorded_profile("E271", "GOLDEN SIXTY");
    let race = class_3(result(
        DAY,
        "Happy Valley",
        1,
        vec![
            recorded(1, "E271", "-", &[3, 2, 1], 4),
            recorded(2, "CA206", "1-1/4", &[1, 1, 2], 7),
            recorded(3, "H123", "SH", &[5, 4, 3], 1),
        ],
    ));
    let last = nats.publish(&[envelope(horse), envelope(race)]).await;
    app.projected(last).await;

    let (status, day) = app.get(&format!("/api/v1/results/{DAY}")).await;
    assert_eq!(status, StatusCode::OK);
    let first = &day["races"][0];
    assert_eq!(first["class"], "Class 3");
    let second = runner_of(first, "CA206");
    assert_eq!(
        [
            &second["lbw"],
            &second["lbw_lengths"],
            &second["running_positions"],
            &second["actual_weight"],
            &second["declared_weight"],
            &second["draw"],
        ],
        [
            &json!("1-1/4"),
            &json!(1.25),
            &json!([1, 1, 2]),
            &json!(126),
            &json!(1105),
            &json!(7)
        ]
    );
    assert_eq!(runner_of(first, "H123")["lbw_lengths"], 0.1);

    let (status, single) = app.get(&format!("/api/v1/results/{DAY}/1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(single["class"], "Class 3");
    assert_eq!(single["runners"], first["runners"]);

    let (status, form) = app.get("/api/v1/horses/CA206/form").await;
    assert_eq!(status, StatusCode::OK);
    let entry = &form["form"][0];
    for (field, value) in [
        ("race_name", json!("RACE 1 HANDICAP")),
        ("going", json!("GOOD")),
        ("class", json!("Class 3")),
        ("trainer", json!("J Size")),
        ("draw", json!(7)),
        ("actual_weight", json!(126)),
        ("declared_weight", json!(1105)),
        ("lbw", json!("1-1/4")),
        ("lbw_lengths", json!(1.25)),
        ("running_positions", json!([1, 1, 2])),
    ] {
        assert_eq!(entry[field], value, "{field} in {entry}");
    }

    let (status, horse) = app.get("/api/v1/horses/E271").await;
    assert_eq!(status, StatusCode::OK);
    for (field, value) in [
        ("sire", json!("Street Cry")),
        ("dam", json!("Clinque")),
        ("dam_sire", json!("Casual Lies")),
        ("import_type", json!("PPG")),
        ("current_rating", json!(126)),
        ("season_start_rating", json!(131)),
        ("season_stakes", json!(12_500_000)),
    ] {
        assert_eq!(horse[field], value, "{field} in {horse}");
    }
}

#[tokio::test]
async fn a_v1_result_and_profile_are_served_without_the_new_fields() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let events = [
        envelope(profile("E271", "GOLDEN SIXTY")),
        envelope(result(DAY, "Sha Tin", 2, vec![runner(Some(1), "E271")])),
    ];
    let last = nats.publish(&events).await;
    app.projected(last).await;
    let (_, single) = app.get(&format!("/api/v1/results/{DAY}/2")).await;
    assert_eq!(
        single,
        json!({
            "date": DAY, "venue": "Sha Tin", "race_number": 2,
            "race_name": "RACE 2 HANDICAP", "distance": 1200, "going": "GOOD",
            "runners": [{
                "position": 1, "horse_no": "E271", "horse_name": "NAME E271",
                "jockey": "Z Purton", "trainer": "J Size", "finish_time": "1:09.41",
                "win_odds": 4.5, "status": null, "dead_heat": false
            }]
        })
    );
    let (_, horse) = app.get("/api/v1/horses/E271").await;
    let fields = horse.as_object().map(|o| o.len());
    assert_eq!(
        fields,
        Some(12),
        "the fields of the horse profile (docs/api.md) only: {horse}"
    );
    let (_, form) = app.get("/api/v1/horses/E271/form").await;
    let entry = &form["form"][0];
    assert_eq!(
        (&entry["going"], &entry["trainer"]),
        (&json!("GOOD"), &json!("J Size"))
    );
    for absent in [
        "class",
        "draw",
        "actual_weight",
        "declared_weight",
        "lbw",
        "lbw_lengths",
        "running_positions",
    ] {
        assert!(entry.get(absent).is_none(), "{absent} in {entry}");
    }
}

#[tokio::test]
async fn a_value_outside_its_rule_makes_the_event_a_dead_letter() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let mut heavy = recorded(1, "A1", "-", &[1, 1, 1], 3);
    heavy.declared_weight = Some(1600);
    let bad = [
        (
            envelope(result(
                DAY,
                "Sha Tin",
                1,
                vec![recorded(1, "A1", "1.25", &[1], 3)],
            )),
            "runners[0].lbw must be",
        ),
        (
            envelope(result(DAY, "Sha Tin", 1, vec![heavy])),
            "runners[0].declared_weight must be from 700 to 1500, got 1600",
        ),
        (
            envelope(result(
                DAY,
                "Sha Tin",
                1,
                vec![recorded(1, "A1", "-", &[1, 2, 3, 4, 5, 6, 1], 3)],
            )),
            "runners[0].running_positions must list 1 to 6 positions",
        ),
    ];
    let mut stallion = profile("B2", "NAME B2");
    if let Event::HorseProfileUpdated(p) = &mut stallion {
        p.import_type = Some("pp".into());
    }
    let bad_profile = envelope(stallion);
    for (e, _) in &bad {
        nats.publish_raw(&e.subject(), e.to_json().as_bytes(), None)
            .await;
    }
    nats.publish_raw(
        &bad_profile.subject(),
        bad_profile.to_json().as_bytes(),
        None,
    )
    .await;
    let good = envelope(result(
        DAY,
        "Sha Tin",
        2,
        vec![recorded(1, "C3", "-", &[2, 1], 5)],
    ));
    let last = nats.publish(&[good]).await;
    let progress = app.projected(last).await;
    assert_eq!((progress.applied, progress.dead_letters), (1, 4));
    let letters = app.store().dead_letters(0, 100).expect("dead letters");
    let reasons: Vec<&str> = letters.iter().map(|l| l.reason.as_str()).collect();
    for ((_, why), reason) in bad.iter().zip(&reasons) {
        assert!(reason.starts_with(why), "{reason} is not {why}");
    }
    assert!(
        reasons[3].starts_with("import_type must be"),
        "{}",
        reasons[3]
    );
    // Nothing of a refused event was applied.
    assert_eq!(
        app.get(&format!("/api/v1/results/{DAY}/1")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.get("/api/v1/horses/B2").await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        app.get(&format!("/api/v1/results/{DAY}/2")).await.0,
        StatusCode::OK
    );
}
