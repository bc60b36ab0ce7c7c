//! Results, single races and forms as documents: their order, names, amendments, dead
//! heats, and a date of two meetings.

use super::*;

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
        let body = FormDoc::body(&stored, limit).expect("framed");
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

#[test]
fn a_race_the_main_meeting_does_not_run_answers_from_the_first_venue_that_runs_it() {
    // Sha Tin runs the most races; race 3 is run at Happy Valley and at Zhuhai alone.
    let s = fold_each(
        [
            card(DAY, ST, 1, &["A1"]),
            card(DAY, ST, 2, &["B2"]),
            card(DAY, "Zhuhai", 3, &["Z3"]),
            card(DAY, HV, 3, &["C3"]),
            odds_at(DAY, "Zhuhai", 3, &[("Z3", 3.0)]),
            odds_at(DAY, HV, 3, &[("C3", 4.0)]),
            result(DAY, "Zhuhai", 3, vec![runner(Some(1), "Z3")]),
            result(DAY, HV, 3, vec![runner(Some(1), "C3")]),
            result(DAY, ST, 1, vec![runner(Some(1), "A1")]),
            result(DAY, ST, 2, vec![runner(Some(1), "B2")]),
        ]
        .map(env),
    );
    let race = |venue| DocKey::Race {
        date: DAY,
        race_number: 3,
        venue,
    };
    let odds = |venue| DocKey::Odds {
        date: DAY,
        race_number: 3,
        venue,
    };
    assert_eq!(horses(&doc(&s, race(None)), "runners"), ["C3"]);
    assert_eq!(doc(&s, race(None)), doc(&s, race(Some(HV))));
    assert_eq!(doc(&s, odds(None)), doc(&s, odds(Some(HV))));
    assert_ne!(doc(&s, odds(None)), doc(&s, odds(Some("Zhuhai"))));
}

/// The records of a card and a result are the events' own encoded, and a fold renders
/// their documents from the events as given, not from the records decoded back: the same
/// bytes only where each decodes back to the event, awkward values and all.
#[test]
fn a_card_and_a_result_render_as_their_records_decoded_back() {
    let date = "2026-11-21";
    let mut declared = card(date, "Sha Tin", 3, &["E271", "F1"]);
    if let Event::RaceCardDeclared(c) = &mut declared {
        c.race_name = "THE \"QUOTED\" CUP \u{9999}\u{6e2f} \\ \u{1f40e}".into();
        c.runners[0].horse_name = "NAME\tTAB".into();
    }
    let mut first = runner(Some(1), "E271");
    first.win_odds = Some(0.1 + 0.2);
    first.lbw = Some("1-1/4".into());
    first.running_positions = Some(vec![3, 2, 1]);
    (first.actual_weight, first.declared_weight, first.draw) = (Some(133), Some(1198), Some(4));
    let mut second = runner(None, "F1");
    second.win_odds = Some(1.000_000_000_000_000_2);
    let mut published = result(date, "Sha Tin", 3, vec![first, second]);
    if let Event::RaceResultPublished(r) = &mut published {
        r.class = Some("Class 2".into());
        r.race_name = "THE \"QUOTED\" CUP \u{9999}\u{6e2f} \\ \u{1f40e}".into();
    }
    let s = fold_each([env(declared), env(published)]);
    let body = |key: DocKey<'_>| {
        let served = s.doc(key).unwrap_or_else(|| panic!("no document {key:?}"));
        served.into_owned()
    };
    let venue = |docs: crate::doc_writes::ByVenue| {
        docs.into_iter()
            .find_map(|(v, doc)| (v.as_deref() == Some("Sha Tin")).then_some(doc))
            .expect("Sha Tin's")
    };
    let results = crate::results::results_of(&s, date, &mut Default::default()).expect("results");
    let results_doc = DocKey::Results {
        date,
        venue: Some("Sha Tin"),
    };
    assert_eq!(venue(results.days), body(results_doc));
    let cards = crate::cards::cards_of(&s, date).expect("cards");
    let cards_doc = DocKey::Card {
        date,
        venue: Some("Sha Tin"),
    };
    assert_eq!(venue(cards), body(cards_doc));
}
