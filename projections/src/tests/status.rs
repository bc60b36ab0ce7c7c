//! Race statuses and place prices (feed v1.2): stored per race and venue, served in the
//! day's card and the odds document, absent where never given.

use racing_events::samples::{odds_with_place, status};
use racing_events::RaceStatus::{Abandoned, Finished, Off, Open, Suspended};

use super::*;

/// `event` as the feeder stamped it at `at`.
fn at(event: Event, at: &str) -> Envelope {
    Envelope::new(event, at)
}

fn card_race(s: &MemState, venue: &str, n: i64) -> Value {
    let day = doc(
        s,
        DocKey::Card {
            date: DAY,
            venue: Some(venue),
        },
    );
    day["races"]
        .as_array()
        .expect("races")
        .iter()
        .find(|r| r["race_number"] == n)
        .cloned()
        .unwrap_or_else(|| panic!("no race {n} at {venue}"))
}

fn odds_doc(s: &MemState, venue: Option<&str>, n: u8) -> Value {
    doc(
        s,
        DocKey::Odds {
            date: DAY,
            race_number: n,
            venue,
        },
    )
}

/// The status fields of a race in a document: `(status, status_at, status_reason)`.
fn status_of(race: &Value) -> (Value, Value, Value) {
    (
        race["status"].clone(),
        race["status_at"].clone(),
        race["status_reason"].clone(),
    )
}

#[test]
fn a_status_is_served_with_its_time_and_reason_in_the_card_and_the_odds() {
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1", "B2"])),
        env(odds_at(DAY, ST, 3, &[("A1", 2.5)])),
        at(
            status(DAY, Some(ST), 3, Suspended, Some("reweigh")),
            "2026-11-25T12:01:00Z",
        ),
    ]);
    let want = (
        json!("suspended"),
        json!("2026-11-25T12:01:00.000Z"),
        json!("reweigh"),
    );
    assert_eq!(status_of(&card_race(&s, ST, 3)), want);
    let odds = odds_doc(&s, Some(ST), 3);
    assert_eq!(status_of(&odds), want);
    // Beside the prices, and the document without a venue is the same.
    assert_eq!(prices(&odds), json!([{"horse_no": "A1", "win_odds": 2.5}]));
    assert_eq!(odds_doc(&s, None, 3), odds);
}

#[test]
fn every_instant_is_served_in_utc_with_z_to_the_millisecond_whatever_the_feeder_wrote() {
    // Hong Kong time with nanoseconds, and UTC to the second: both served one way.
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1", "B2"])),
        at(
            odds_at(DAY, ST, 3, &[("A1", 2.5)]),
            "2026-11-25T19:58:30.123456789+08:00",
        ),
        at(
            status(DAY, Some(ST), 3, Off, None),
            "2026-11-25T20:00:00+08:00",
        ),
    ]);
    let off = json!("2026-11-25T12:00:00.000Z");
    assert_eq!(card_race(&s, ST, 3)["status_at"], off);
    let odds = odds_doc(&s, Some(ST), 3);
    assert_eq!(odds["status_at"], off);
    assert_eq!(odds["market"]["clock"], "2026-11-25T11:58:30.123Z");
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    let given = at(
        odds_at(DAY, ST, 3, &[("A1", 2.5)]),
        "2026-11-25T19:58:30+08:00",
    );
    // JetStream's stamp, to the nanosecond: 2026-11-21T12:00:00.000000001Z.
    b.apply(1, 1_795_262_400_000_000_001, &given)
        .expect("apply");
    b.commit().expect("commit");
    let moves = store.odds_moves(DAY, 0, None, 10).expect("journal");
    let body: Value = serde_json::from_slice(&moves[0].body).expect("json");
    assert_eq!(
        (&body["occurred_at"], &body["published_at"]),
        (
            &json!("2026-11-25T11:58:30.000Z"),
            &json!("2026-11-21T12:00:00.000Z")
        )
    );
}

#[test]
fn a_status_without_a_venue_is_every_venues_and_the_later_one_stands() {
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1"])),
        env(card(DAY, HV, 3, &["C3"])),
        env(card(DAY, HV, 4, &["D4"])),
        at(status(DAY, None, 3, Open, None), "2026-11-25T11:00:00Z"),
        at(status(DAY, Some(HV), 3, Off, None), "2026-11-25T12:00:00Z"),
    ]);
    let open = (
        json!("open"),
        json!("2026-11-25T11:00:00.000Z"),
        Value::Null,
    );
    assert_eq!(status_of(&card_race(&s, ST, 3)), open);
    assert_eq!(
        status_of(&card_race(&s, HV, 3)),
        (json!("off"), json!("2026-11-25T12:00:00.000Z"), Value::Null),
        "its own status, given later"
    );
    assert_eq!(
        card_race(&s, HV, 4).get("status"),
        None,
        "race 4 was given none"
    );
    // A status given for every venue after the venue's own stands over it.
    let s = fold_each([
        env(card(DAY, HV, 3, &["C3"])),
        at(status(DAY, Some(HV), 3, Off, None), "2026-11-25T12:00:00Z"),
        at(
            status(DAY, None, 3, Abandoned, Some("waterlogged")),
            "2026-11-25T12:30:00Z",
        ),
    ]);
    assert_eq!(
        status_of(&card_race(&s, HV, 3)),
        (
            json!("abandoned"),
            json!("2026-11-25T12:30:00.000Z"),
            json!("waterlogged")
        )
    );
}

#[test]
fn a_result_after_a_status_finishes_the_race_until_a_later_status() {
    let events = [
        env(card(DAY, ST, 3, &["A1", "B2"])),
        env(odds_at(DAY, ST, 3, &[("A1", 2.5)])),
        at(status(DAY, None, 3, Off, None), "2026-11-25T12:00:00Z"),
        at(
            result(DAY, ST, 3, vec![runner(Some(1), "A1")]),
            "2026-11-25T12:04:00Z",
        ),
    ];
    let s = fold_each(events.clone());
    let finished = (
        json!("finished"),
        json!("2026-11-25T12:04:00.000Z"),
        Value::Null,
    );
    assert_eq!(status_of(&card_race(&s, ST, 3)), finished);
    assert_eq!(status_of(&odds_doc(&s, Some(ST), 3)), finished);

    let mut later = events.to_vec();
    later.push(at(
        status(DAY, Some(ST), 3, RaceStatus::Void, Some("false start")),
        "2026-11-25T12:10:00Z",
    ));
    let s = fold_each(later);
    assert_eq!(
        status_of(&card_race(&s, ST, 3)),
        (
            json!("void"),
            json!("2026-11-25T12:10:00.000Z"),
            json!("false start")
        )
    );
}

#[test]
fn a_race_never_given_a_status_has_none_result_or_not() {
    let events = [
        env(card(DAY, ST, 3, &["A1", "B2"])),
        env(odds_at(DAY, ST, 3, &[("A1", 2.5)])),
        env(result(DAY, ST, 3, vec![runner(Some(1), "A1")])),
    ];
    let s = fold_each(events);
    let card = s
        .doc(DocKey::Card {
            date: DAY,
            venue: Some(ST),
        })
        .expect("card");
    assert_eq!(
        std::str::from_utf8(&card).expect("utf8"),
        r#"{"date":"2026-11-25","venue":"Sha Tin","races":[{"race_number":3,"race_name":"RACE 3 HANDICAP","distance":1650,"class":"Class 4","runners":[{"horse_no":"A1","horse_name":"NAME A1","jockey":"H Bowman","trainer":"C S Shum","draw":1,"weight":126,"form":{"figures":"","runs":0,"days_since_run":null,"c":false,"d":false,"cd":false,"course":{"runs":0,"wins":0,"places":0},"distance":{"runs":0,"wins":0,"places":0},"going":[],"jockey_14d":{"rides":0,"wins":0,"strike_rate":0.0},"trainer_14d":{"rides":0,"wins":0,"strike_rate":0.0}}},{"horse_no":"B2","horse_name":"NAME B2","jockey":"H Bowman","trainer":"C S Shum","draw":2,"weight":126,"form":{"figures":"","runs":0,"days_since_run":null,"c":false,"d":false,"cd":false,"course":{"runs":0,"wins":0,"places":0},"distance":{"runs":0,"wins":0,"places":0},"going":[],"jockey_14d":{"rides":0,"wins":0,"strike_rate":0.0},"trainer_14d":{"rides":0,"wins":0,"strike_rate":0.0}}}]}]}"#
    );
    let odds = s
        .doc(DocKey::Odds {
            date: DAY,
            race_number: 3,
            venue: Some(ST),
        })
        .expect("odds");
    assert_eq!(
        std::str::from_utf8(&odds).expect("utf8"),
        r#"{"date":"2026-11-25","venue":"Sha Tin","race_number":3,"seq":2,"odds":[{"horse_no":"A1","win_odds":2.5,"win_prob":0.4,"first_win_odds":2.5,"win_move_pct":0.0}],"market":{"clock":"2026-11-21T12:00:00.000Z","win_book_pct":40.0,"favourites":["A1"],"steamers":[],"drifters":[]}}"#
    );
}

#[test]
fn a_retraction_takes_the_venues_status_and_leaves_every_venues() {
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1"])),
        at(status(DAY, None, 3, Open, None), "2026-11-25T11:00:00Z"),
        at(status(DAY, Some(ST), 3, Off, None), "2026-11-25T12:00:00Z"),
        env(retraction(DAY, ST, 3, "wrong venue")),
        env(card(DAY, ST, 3, &["A1"])),
    ]);
    assert_eq!(
        status_of(&card_race(&s, ST, 3)),
        (
            json!("open"),
            json!("2026-11-25T11:00:00.000Z"),
            Value::Null
        )
    );
}

#[test]
fn place_prices_are_kept_beside_win_prices_each_at_its_latest() {
    let s = fold_each([
        env(odds_with_place(
            DAY,
            Some(ST),
            3,
            &[
                ("A1", Some(2.5), Some(1.3)),
                ("B2", Some(6.0), None),
                ("C3", None, Some(2.2)),
            ],
        )),
        // A runner given one of the two keeps its last other one.
        env(odds_with_place(
            DAY,
            Some(ST),
            3,
            &[("A1", None, Some(1.2)), ("B2", Some(5.5), None)],
        )),
        env(odds(DAY, 3, &[("C3", 9.0)])),
    ]);
    let doc = odds_doc(&s, Some(ST), 3);
    assert_eq!(
        prices(&doc),
        json!([
            {"horse_no": "A1", "win_odds": 2.5, "place_odds": 1.2},
            {"horse_no": "B2", "win_odds": 5.5},
            {"horse_no": "C3", "win_odds": 9.0, "place_odds": 2.2},
        ])
    );
    // Given without a venue, only the win price of C3 is known there.
    assert_eq!(
        odds_doc(&s, None, 3)["odds"],
        doc["odds"],
        "the main meeting's"
    );
}

#[test]
fn a_race_given_win_prices_only_stores_no_place_prices() {
    let s = fold_each([env(odds_at(DAY, ST, 3, &[("A1", 3.1)]))]);
    let record = s
        .records
        .iter()
        .find(|(k, _)| k.starts_with(b"odds\0"))
        .expect("odds record");
    assert_eq!(
        std::str::from_utf8(record.1).expect("utf8"),
        r#"{"seq":1,"runners":{"A1":[3.1,1]},"trail":{"clock":1795262400000,"first":{"A1":[3.1,1]},"base":{},"recent":[[1795262400000,1,"A1",3.1]]}}"#
    );
    assert_eq!(
        prices(&odds_doc(&s, Some(ST), 3)).to_string(),
        r#"[{"horse_no":"A1","win_odds":3.1}]"#
    );
}

#[test]
fn odds_for_a_race_already_off_are_applied_and_counted_late() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    let events = [
        odds_at(DAY, ST, 3, &[("A1", 2.5)]),
        status(DAY, Some(ST), 3, Suspended, None),
        odds_at(DAY, ST, 3, &[("A1", 2.4)]),
        status(DAY, None, 3, Off, None),
        odds_at(DAY, ST, 3, &[("A1", 2.3)]),
        odds(DAY, 3, &[("A1", 2.2)]),
        odds_at(DAY, HV, 4, &[("D4", 5.0)]),
    ];
    for (i, e) in events.into_iter().enumerate() {
        b.apply(i as u64 + 1, 0, &env(e)).expect("apply");
    }
    assert_eq!(b.commit().expect("commit").late_prices, 2);
    // In a batch of its own, from the stored status; odds without a venue are late where
    // the race is off at one venue.
    let mut b = store.batch().expect("batch");
    b.apply(8, 0, &env(status(DAY, Some(HV), 4, Finished, None)))
        .expect("apply");
    b.commit().expect("commit");
    let mut b = store.batch().expect("batch");
    b.apply(9, 0, &env(odds(DAY, 4, &[("D4", 4.0)])))
        .expect("apply");
    b.apply(10, 0, &env(odds_at(DAY, ST, 4, &[("E5", 3.0)])))
        .expect("apply");
    assert_eq!(b.commit().expect("commit").late_prices, 1);
    let doc: Value = serde_json::from_slice(
        &store
            .doc(DocKey::Odds {
                date: DAY,
                race_number: 3,
                venue: Some(ST),
            })
            .expect("read")
            .expect("odds"),
    )
    .expect("json");
    // Applied as usual: the latest, given without a venue.
    assert_eq!(prices(&doc), json!([{"horse_no": "A1", "win_odds": 2.2}]));
}

#[test]
fn a_document_as_of_a_point_has_the_status_of_that_point() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let events = [
        env(card(DAY, ST, 3, &["A1"])),
        env(odds_at(DAY, ST, 3, &[("A1", 2.5)])),
        at(status(DAY, Some(ST), 3, Open, None), "2026-11-25T11:00:00Z"),
        at(
            status(DAY, None, 3, Suspended, Some("reweigh")),
            "2026-11-25T11:30:00Z",
        ),
        at(
            result(DAY, ST, 3, vec![runner(Some(1), "A1")]),
            "2026-11-25T12:04:00Z",
        ),
    ];
    let mut b = store.batch().expect("batch");
    for (i, e) in events.iter().enumerate() {
        b.apply(i as u64 + 1, 0, e).expect("apply");
    }
    b.commit().expect("commit");
    let as_of = |key: DocKey<'_>, seq| -> Value {
        let d = store.doc_as_of(key, seq).expect("as of").expect("a doc");
        serde_json::from_slice(&d).expect("json")
    };
    let card = DocKey::Card {
        date: DAY,
        venue: Some(ST),
    };
    let odds = DocKey::Odds {
        date: DAY,
        race_number: 3,
        venue: Some(ST),
    };
    let race = |doc: Value| doc["races"][0].clone();
    assert_eq!(race(as_of(card, 2)).get("status"), None);
    let open = (
        json!("open"),
        json!("2026-11-25T11:00:00.000Z"),
        Value::Null,
    );
    assert_eq!(status_of(&race(as_of(card, 3))), open);
    assert_eq!(status_of(&as_of(odds, 3)), open);
    let suspended = (
        json!("suspended"),
        json!("2026-11-25T11:30:00.000Z"),
        json!("reweigh"),
    );
    assert_eq!(status_of(&race(as_of(card, 4))), suspended);
    assert_eq!(status_of(&as_of(odds, 4)), suspended);
    let finished = (
        json!("finished"),
        json!("2026-11-25T12:04:00.000Z"),
        Value::Null,
    );
    assert_eq!(status_of(&as_of(odds, 5)), finished);
}
