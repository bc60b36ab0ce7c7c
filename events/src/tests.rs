//! Decoding and validation against the feed contract, rule by rule.

use super::*;

const ID: &str = "7f1c0e4e-5d8a-4f0e-9a57-3a1f4f6f2b10";

fn result_json(runners: &str) -> String {
    format!(
        r#"{{"event_id":"{ID}","type":"RaceResultPublished","occurred_at":"2026-11-21T13:05:41Z",
        "data":{{"date":"2026-11-21","venue":"Sha Tin","race_number":3,"race_name":"TEST HANDICAP",
        "distance":1200,"going":"GOOD","runners":[{runners}]}}}}"#
    )
}

/// A result runner; `status` is `null` unless `extra` gives one.
fn runner(pos: &str, horse: &str, extra: &str) -> String {
    let status = if extra.contains("\"status\"") {
        ""
    } else {
        r#","status":null"#
    };
    format!(
        r#"{{"position":{pos},"horse_no":"{horse}","horse_name":"N {horse}","jockey":"J","trainer":"T",
        "finish_time":"1:09.45","win_odds":3.5{status}{extra}}}"#
    )
}

fn reason(subject: &str, payload: &str) -> String {
    match Envelope::decode(subject, payload.as_bytes()) {
        Ok(_) => "accepted".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_valid_result_round_trips_through_the_wire_format() {
    let json = result_json(&format!(
        "{},{}",
        runner("1", "E271", ""),
        runner("null", "CA206", r#","status":"PU""#).replace("\"1:09.45\"", "null")
    ));
    let env = Envelope::decode("racing.results.2026-11-21.3", json.as_bytes()).expect("valid");
    assert_eq!(env.event_id.to_string(), ID);
    let again = Envelope::decode(&env.subject(), env.to_json().as_bytes()).expect("round trip");
    assert_eq!(again, env);
}

#[test]
fn unknown_fields_are_ignored() {
    let json = result_json(&runner("1", "E271", r#","rating":88"#)).replace(
        r#""going":"GOOD""#,
        r#""going":"GOOD","prize":{"hkd":1000}"#,
    );
    assert_eq!(reason("racing.results.2026-11-21.3", &json), "accepted");
}

#[test]
fn dead_heats_must_be_flagged_on_every_sharer() {
    let both = format!(
        "{},{}",
        runner("1", "A1", r#","dead_heat":true"#),
        runner("1", "A2", r#","dead_heat":true"#)
    );
    assert_eq!(
        reason("racing.results.2026-11-21.3", &result_json(&both)),
        "accepted"
    );
    let unflagged = format!("{},{}", runner("1", "A1", ""), runner("1", "A2", ""));
    assert!(
        reason("racing.results.2026-11-21.3", &result_json(&unflagged))
            .contains("shares its position")
    );
    let lonely = runner("1", "A1", r#","dead_heat":true"#);
    assert!(reason("racing.results.2026-11-21.3", &result_json(&lonely))
        .contains("no other runner shares"));
}

#[test]
fn each_rule_of_the_contract_is_enforced_with_a_reason() {
    let s = "racing.results.2026-11-21.3";
    let cases = [
        (result_json(&runner("1", "-bad", "")), "runners[0].horse_no"),
        (
            result_json(&runner("1", "E1", "")).replace("1:09.45", "1:60.00"),
            "finish_time",
        ),
        (
            result_json(&runner("1", "E1", "")).replace("3.5", "0.9"),
            "win_odds",
        ),
        (
            result_json(&runner("1", "E1", r#","status":"pu""#)),
            "status",
        ),
        (result_json(&runner("null", "E1", "")), "position is null"),
        (
            result_json(&format!("{0},{0}", runner("1", "E1", ""))),
            "more than once",
        ),
        (result_json("").replace("1200", "99"), "distance"),
        (result_json("").replace("\"Sha Tin\"", "7"), "data:"),
        (
            result_json("").replace("RaceResultPublished", "RaceAbandoned"),
            "unknown event type",
        ),
        (result_json("").replace(ID, "not-a-uuid"), "event_id"),
        (
            result_json("").replace("2026-11-21T13:05:41Z", "yesterday"),
            "occurred_at",
        ),
        ("[1,2]".to_string(), "envelope"),
        ("{\"event_id\":".to_string(), "envelope"),
    ];
    for (json, expect) in cases {
        let got = reason(s, &json);
        assert!(got.contains(expect), "expected `{expect}` in `{got}`");
    }
}

#[test]
fn the_subject_must_repeat_the_payload() {
    let json = result_json(&runner("1", "E1", ""));
    assert!(reason("racing.results.2026-11-21.4", &json)
        .contains("expected `racing.results.2026-11-21.3`"));
    assert!(reason("racing.cards.2026-11-21.3", &json).contains("does not match"));
}

#[test]
fn impossible_dates_are_refused() {
    for d in [
        "2026-02-29",
        "2026-13-01",
        "2026-00-10",
        "2026-1-01",
        "26-01-01",
        "2026-04-31",
        "２０２６-01-01",
    ] {
        assert!(Date::parse(d).is_none(), "{d}");
    }
    for d in ["2024-02-29", "2000-02-29", "2026-12-31"] {
        assert!(Date::parse(d).is_some(), "{d}");
    }
    assert!(Date::parse("1900-02-29").is_none());
}

#[test]
fn profile_counts_are_consistent() {
    let json = format!(
        r#"{{"event_id":"{ID}","type":"HorseProfileUpdated","occurred_at":"2026-11-21T00:00:00+08:00",
        "data":{{"horse_no":"E271","horse_name":"GOLDEN SIXTY","country_of_origin":"AUS","colour":"Bay",
        "sex":"Gelding","age":8,"trainer":"F C Lor","owner":"Stanley Chan","total_stakes":100,
        "starts":10,"wins":11,"places":3}}}}"#
    );
    assert!(reason("racing.horses.E271", &json).contains("wins is more than starts"));
    assert_eq!(
        reason(
            "racing.horses.E271",
            &json.replace("\"wins\":11", "\"wins\":9")
        ),
        "accepted"
    );
}

#[test]
fn oversized_payloads_are_refused_before_parsing() {
    let big = "x".repeat(MAX_PAYLOAD_BYTES + 1);
    assert!(reason("racing.horses.E1", &big).contains("over the 1 MiB limit"));
}

#[test]
fn horse_numbers_are_safe_subject_tokens() {
    assert!(is_horse_no("E271") && is_horse_no("CA206") && is_horse_no("x_1-2"));
    for bad in ["", "_E1", "E.1", "E 1", "E>", &"A".repeat(33)] {
        assert!(!is_horse_no(bad), "{bad}");
    }
}

#[test]
fn prices_survive_a_round_trip_exactly() {
    // Without serde_json's float_roundtrip these came back as a neighbouring double.
    for price in ["1.0666666666666667", "5e44", "12.1", "3.3000000000000003"] {
        let json = result_json(&runner("1", "E1", "").replace("3.5", price));
        let envelope = Envelope::decode("racing.results.2026-11-21.3", json.as_bytes())
            .expect("a valid result");
        let Event::RaceResultPublished(result) = &envelope.event else {
            panic!("a result")
        };
        let expected: f64 = price.parse().expect("a float literal");
        assert_eq!(result.runners[0].win_odds, Some(expected), "{price}");
    }
}

#[test]
fn reasons_quote_outside_text_only_in_part() {
    let huge = "9".repeat(200_000);
    let json = result_json(&runner("1", "E1", "")).replace("1200", &format!("\"{huge}\""));
    let why = reason("racing.results.2026-11-21.3", &json);
    assert!(
        why.chars().count() <= 512,
        "{} characters",
        why.chars().count()
    );
    let broken = format!("{{\"event_id\":\"{huge}");
    assert!(
        reason("racing.results.2026-11-21.3", &broken)
            .chars()
            .count()
            <= 512
    );
}

#[test]
fn only_objects_are_read_as_objects() {
    // Well-typed arrays that serde would otherwise read by position.
    let s = "racing.results.2026-11-21.3";
    let good = result_json(&runner("1", "E1", ""));
    assert_eq!(reason(s, &good), "accepted");
    let envelope = format!(
        r#"["{ID}","RaceResultPublished","2026-11-21T13:05:41Z",{}]"#,
        &good[good.find(r#""data":"#).map_or(0, |i| i + 7)..good.len() - 1]
    );
    assert!(
        reason(s, &envelope).contains("envelope: invalid type: sequence, expected a JSON object")
    );
    let data = good.replace(
        r#"{"date":"2026-11-21","venue":"Sha Tin","race_number":3,"race_name":"TEST HANDICAP",
        "distance":1200,"going":"GOOD","runners":"#,
        r#"["2026-11-21","Sha Tin",3,"TEST HANDICAP",1200,"GOOD","#,
    );
    assert!(data.ends_with("]}}"), "{data}");
    let data = format!("{}]]}}", &data[..data.len() - 3]);
    assert!(reason(s, &data).contains("data: invalid type: sequence, expected a JSON object"));
    let listed = result_json(r#"[1,"E1","N E1","J","T","1:09.45",3.5,false,null]"#);
    assert!(reason(s, &listed).contains("data: invalid type: sequence, expected a JSON object"));
    let odds = format!(
        r#"{{"event_id":"{ID}","type":"OddsUpdated","occurred_at":"2026-11-21T13:05:41Z",
        "data":{{"date":"2026-11-21","race_number":3,"odds":[["E1",3.5]]}}}}"#
    );
    assert!(reason("racing.odds.2026-11-21.3", &odds).contains("expected a JSON object"));
    let fixed = odds.replace(r#"["E1",3.5]"#, r#"{"horse_no":"E1","win_odds":3.5}"#);
    assert_eq!(reason("racing.odds.2026-11-21.3", &fixed), "accepted");
}

#[test]
fn a_result_runner_may_leave_out_dead_heat_only() {
    let s = "racing.results.2026-11-21.3";
    let full = runner("1", "E1", "");
    assert_eq!(reason(s, &result_json(&full)), "accepted");
    for field in [
        r#""position":1,"#,
        r#""finish_time":"1:09.45","#,
        r#","status":null"#,
    ] {
        let json = result_json(&full.replace(field, ""));
        assert!(
            reason(s, &json).contains("missing field"),
            "without {field}: {json}"
        );
    }
    let no_odds = full.replace(r#","win_odds":3.5"#, "");
    assert!(reason(s, &result_json(&no_odds)).contains("missing field `win_odds`"));
    let nulls = runner("null", "E1", r#","status":"PU""#)
        .replace(r#""1:09.45""#, "null")
        .replace("3.5", "null");
    assert_eq!(reason(s, &result_json(&nulls)), "accepted");
}

#[test]
fn occurred_at_is_rfc_3339_and_nothing_looser() {
    let s = "racing.results.2026-11-21.3";
    let at = |t: &str| reason(s, &result_json("").replace("2026-11-21T13:05:41Z", t));
    for good in [
        "2026-11-21T13:05:41Z",
        "2026-11-21t13:05:41z",
        "2026-11-21T13:05:41.123456789Z",
        "2026-11-21T21:05:41+08:00",
        "2026-11-21T08:05:41-05:00",
    ] {
        assert_eq!(at(good), "accepted", "{good}");
    }
    for bad in [
        "2026-11-21T13:05Z",
        "2026-11-21 13:05:41Z",
        "2026-11-21T13Z",
        "20261121T130541Z",
        "2026-11-21T13:05:41+0800",
        "2026-11-21T13:05:41+08:00[Asia/Hong_Kong]",
        "2026-11-21T13:05:41",
        "2026-11-21T13:05:41.Z",
        "2026-02-30T13:05:41Z",
        "2026-11-21T25:05:41Z",
    ] {
        assert!(
            at(bad).contains("occurred_at is not an RFC 3339"),
            "{bad}: {}",
            at(bad)
        );
    }
}

#[test]
fn every_range_of_the_contract_holds_at_both_ends() {
    use crate::samples::{card, profile, result, runner};
    let refused = |e: &Event, field: &str| match e.validate() {
        Err(why) => why.to_string().contains(field),
        Ok(()) => false,
    };
    let cases = [
        ("race_number", 1, 99),
        ("distance", 100, 10_000),
        ("draw", 1, 99),
        ("weight", 50, 200),
        ("age", 0, 40),
        ("total_stakes", 0, i64::MAX),
        ("position", 1, 99),
    ];
    let set = |e: &mut Event, field: &str, v: i64| match (e, field) {
        (Event::RaceCardDeclared(c), "race_number") => c.race_number = v,
        (Event::RaceCardDeclared(c), "distance") => c.distance = v,
        (Event::RaceCardDeclared(c), "draw") => c.runners[0].draw = v,
        (Event::RaceCardDeclared(c), "weight") => c.runners[0].weight = v,
        (Event::HorseProfileUpdated(p), "age") => p.age = v,
        (Event::HorseProfileUpdated(p), "total_stakes") => p.total_stakes = v,
        (Event::RaceResultPublished(r), "position") => r.runners[0].position = Some(v),
        (e, field) => panic!("no {field} on {}", e.type_name()),
    };
    for (field, lo, hi) in cases {
        let base = match field {
            "age" | "total_stakes" => profile("E271", "GOLDEN SIXTY"),
            "position" => result("2026-11-21", "Sha Tin", 3, vec![runner(Some(1), "E1")]),
            _ => card("2026-11-21", "Sha Tin", 3, &["E1", "E2"]),
        };
        for (value, ok) in [
            (lo - 1, false),
            (lo, true),
            (hi, true),
            (hi.wrapping_add(1), false),
        ] {
            if value == i64::MIN {
                continue; // i64::MAX + 1 wrapped: there is no value above the top.
            }
            let mut event = base.clone();
            set(&mut event, field, value);
            if ok {
                assert_eq!(event.validate(), Ok(()), "{field} = {value}");
            } else {
                assert!(
                    refused(&event, field),
                    "{field} = {value}: {:?}",
                    event.validate()
                );
            }
        }
    }
}

fn retraction_json(venue: &str, reason: &str) -> String {
    format!(
        r#"{{"event_id":"{ID}","type":"RaceRetracted","occurred_at":"2026-11-21T13:05:41Z",
        "data":{{"date":"2026-11-21","venue":{venue},"race_number":3,"reason":{reason}}}}}"#
    )
}

#[test]
fn a_retraction_goes_on_the_results_subject_and_round_trips() {
    let json = retraction_json(r#""Sha Tin""#, r#""published under the wrong venue""#);
    let env = Envelope::decode("racing.results.2026-11-21.3", json.as_bytes()).expect("valid");
    let Event::RaceRetracted(r) = &env.event else {
        panic!("a retraction, got {:?}", env.event)
    };
    assert_eq!(
        (r.venue.as_str(), r.race_number, r.reason.as_str()),
        ("Sha Tin", 3, "published under the wrong venue")
    );
    assert_eq!(env.event.type_name(), "RaceRetracted");
    let again = Envelope::decode(&env.subject(), env.to_json().as_bytes()).expect("round trip");
    assert_eq!(again, env);
    assert!(reason("racing.cards.2026-11-21.3", &json).contains("does not match"));
    assert!(reason("racing.results.2026-11-21.4", &json).contains("does not match"));
}

#[test]
fn a_retraction_names_its_venue_and_a_reason_of_1_to_200_characters() {
    let s = "racing.results.2026-11-21.3";
    let quoted = |text: &str| format!("\"{text}\"");
    // Characters, not bytes: 200 two-byte letters are within the rule.
    for ok in ["x".to_owned(), "é".repeat(200), "a".repeat(200)] {
        let json = retraction_json(r#""Sha Tin""#, &quoted(&ok));
        assert_eq!(reason(s, &json), "accepted", "{} characters", ok.len());
    }
    let cases = [
        (
            retraction_json(r#""Sha Tin""#, r#""""#),
            "reason must not be empty",
        ),
        (
            retraction_json(r#""Sha Tin""#, r#""   ""#),
            "reason must not be empty",
        ),
        (
            retraction_json(r#""Sha Tin""#, &quoted(&"é".repeat(201))),
            "reason must be 1 to 200 characters, got 201",
        ),
        (retraction_json(r#""Sha Tin""#, "null"), "data:"),
        (
            retraction_json(r#""Sha Tin""#, r#""x""#).replace(r#","reason":"x""#, ""),
            "missing field `reason`",
        ),
        (
            retraction_json(r#""""#, r#""x""#),
            "venue must not be empty",
        ),
        (
            retraction_json(r#""Sha Tin""#, r#""x""#).replace(r#","venue":"Sha Tin""#, ""),
            "missing field `venue`",
        ),
        (
            retraction_json(r#""Sha Tin""#, r#""x""#).replace("2026-11-21\",", "2026-02-30\","),
            "date",
        ),
    ];
    for (json, expect) in cases {
        let got = reason(s, &json);
        assert!(got.contains(expect), "expected `{expect}` in `{got}`");
    }
    let mut zero = samples::retraction("2026-11-21", "Sha Tin", 3, "void");
    if let Event::RaceRetracted(r) = &mut zero {
        r.race_number = 0;
    }
    assert!(zero
        .validate()
        .is_err_and(|e| e.to_string().contains("race_number")));
}

#[test]
fn odds_and_scratchings_may_name_a_venue_which_is_then_checked() {
    let odds = |venue: &str| {
        format!(
            r#"{{"event_id":"{ID}","type":"OddsUpdated","occurred_at":"2026-11-21T13:05:41Z",
            "data":{{"date":"2026-11-21",{venue}"race_number":3,"odds":[{{"horse_no":"E1","win_odds":3.5}}]}}}}"#
        )
    };
    let scratch = |venue: &str| {
        format!(
            r#"{{"event_id":"{ID}","type":"RunnerScratched","occurred_at":"2026-11-21T13:05:41Z",
            "data":{{"date":"2026-11-21",{venue}"race_number":3,"horse_no":"E1"}}}}"#
        )
    };
    let venue_of = |subject: &str, json: &str| match Envelope::decode(subject, json.as_bytes())
        .map(|e| e.event)
    {
        Ok(Event::OddsUpdated(o)) => o.venue,
        Ok(Event::RunnerScratched(s)) => s.venue,
        other => panic!("{other:?}"),
    };
    for (subject, event) in [
        ("racing.odds.2026-11-21.3", &odds as &dyn Fn(&str) -> String),
        ("racing.cards.2026-11-21.3", &scratch),
    ] {
        // A v1 feeder names none; `null` is the same as leaving it out.
        assert_eq!(venue_of(subject, &event("")), None);
        assert_eq!(venue_of(subject, &event(r#""venue":null,"#)), None);
        assert_eq!(
            venue_of(subject, &event(r#""venue":"Happy Valley","#)).as_deref(),
            Some("Happy Valley")
        );
        assert!(reason(subject, &event(r#""venue":"","#)).contains("venue must not be empty"));
        assert!(reason(subject, &event(r#""venue":" ","#)).contains("venue must not be empty"));
        assert!(reason(subject, &event(r#""venue":7,"#)).contains("data:"));
    }
    // Without a venue the wire format is a v1 event's, byte for byte.
    let v1 = Envelope::decode("racing.odds.2026-11-21.3", odds("").as_bytes()).expect("valid");
    assert!(!v1.to_json().contains("venue"), "{}", v1.to_json());
    let at = samples::envelope(samples::odds_at("2026-11-21", "Sha Tin", 3, &[("E1", 2.0)]));
    let again = Envelope::decode(&at.subject(), at.to_json().as_bytes()).expect("round trip");
    assert_eq!(again, at);
}

#[test]
fn the_full_record_of_a_v1_1_result_and_profile_round_trips() {
    let json = result_json(&runner(
        "1",
        "E271",
        r#","lbw":"1-1/4","running_positions":[3,2,1],"actual_weight":133,"declared_weight":1198,"draw":4"#,
    ))
    .replace(r#""going":"GOOD""#, r#""going":"GOOD","class":"Class 2""#);
    let env = Envelope::decode("racing.results.2026-11-21.3", json.as_bytes()).expect("valid");
    let Event::RaceResultPublished(r) = &env.event else {
        panic!("a result");
    };
    assert_eq!(r.class.as_deref(), Some("Class 2"));
    let x = &r.runners[0];
    assert_eq!(x.lbw.as_deref(), Some("1-1/4"));
    assert_eq!(x.running_positions.as_deref(), Some(&[3, 2, 1][..]));
    assert_eq!(
        (x.actual_weight, x.declared_weight, x.draw),
        (Some(133), Some(1198), Some(4))
    );
    let again = Envelope::decode(&env.subject(), env.to_json().as_bytes()).expect("round trip");
    assert_eq!(again, env);
    // A v1 result writes none of the new fields.
    let v1 = Envelope::decode(
        "racing.results.2026-11-21.3",
        result_json(&runner("1", "E271", "")).as_bytes(),
    )
    .expect("v1");
    for field in ["lbw", "running_positions", "weight", "draw", "class"] {
        assert!(!v1.to_json().contains(field), "{field}");
    }
}

#[test]
fn each_rule_of_the_full_record_keeps_valid_values_and_refuses_others() {
    use crate::samples::{profile, result, runner};
    type Set = fn(&mut Event);
    fn first(e: &mut Event) -> &mut ResultRunner {
        match e {
            Event::RaceResultPublished(r) => &mut r.runners[0],
            _ => unreachable!("a result"),
        }
    }
    fn horse(e: &mut Event) -> &mut HorseProfile {
        match e {
            Event::HorseProfileUpdated(p) => p,
            _ => unreachable!("a profile"),
        }
    }
    // (field named in the reason, a valid change, an invalid change)
    let cases: [(&str, Set, Set); 16] = [
        (
            "lbw",
            |e| first(e).lbw = Some("10-3/4".into()),
            |e| first(e).lbw = Some("1 1/4".into()),
        ),
        (
            "lbw",
            |e| first(e).lbw = Some("---".into()),
            |e| first(e).lbw = Some("123456789".into()),
        ),
        (
            "running_positions",
            |e| first(e).running_positions = Some(vec![1, 2, 3, 4, 5, 6]),
            |e| first(e).running_positions = Some(vec![1, 2, 3, 4, 5, 6, 7]),
        ),
        (
            "running_positions",
            |e| first(e).running_positions = Some(vec![99]),
            |e| first(e).running_positions = Some(vec![]),
        ),
        (
            "running_positions[1]",
            |e| first(e).running_positions = Some(vec![1, 1]),
            |e| first(e).running_positions = Some(vec![1, 0]),
        ),
        (
            "actual_weight",
            |e| first(e).actual_weight = Some(90),
            |e| first(e).actual_weight = Some(161),
        ),
        (
            "declared_weight",
            |e| first(e).declared_weight = Some(1500),
            |e| first(e).declared_weight = Some(699),
        ),
        (
            "draw",
            |e| first(e).draw = Some(99),
            |e| first(e).draw = Some(0),
        ),
        (
            "sire",
            |e| horse(e).sire = Some("Z".repeat(64)),
            |e| horse(e).sire = Some("Z".repeat(65)),
        ),
        (
            "dam",
            |e| horse(e).dam = Some("Dam".into()),
            |e| horse(e).dam = Some(String::new()),
        ),
        (
            "dam_sire",
            |e| horse(e).dam_sire = Some("Galileo".into()),
            |e| horse(e).dam_sire = Some("  ".into()),
        ),
        (
            "import_type",
            |e| horse(e).import_type = Some("PPG".into()),
            |e| horse(e).import_type = Some("pp".into()),
        ),
        (
            "import_type",
            |e| horse(e).import_type = Some("ABCDEFGH".into()),
            |e| horse(e).import_type = Some("ABCDEFGHI".into()),
        ),
        (
            "current_rating",
            |e| horse(e).current_rating = Some(200),
            |e| horse(e).current_rating = Some(201),
        ),
        (
            "season_start_rating",
            |e| horse(e).season_start_rating = Some(0),
            |e| horse(e).season_start_rating = Some(-1),
        ),
        (
            "season_stakes",
            |e| horse(e).season_stakes = Some(0),
            |e| horse(e).season_stakes = Some(-1),
        ),
    ];
    for (field, valid, invalid) in cases {
        let base = match field {
            "sire"
            | "dam"
            | "dam_sire"
            | "import_type"
            | "current_rating"
            | "season_start_rating"
            | "season_stakes" => profile("E271", "GOLDEN SIXTY"),
            _ => result("2026-11-21", "Sha Tin", 3, vec![runner(Some(1), "E1")]),
        };
        let mut good = base.clone();
        valid(&mut good);
        assert_eq!(good.validate(), Ok(()), "{field}: {good:?}");
        let mut bad = base.clone();
        invalid(&mut bad);
        let why = bad.validate().expect_err(field).to_string();
        let path = match &bad {
            Event::RaceResultPublished(_) => format!("runners[0].{field} "),
            _ => format!("{field} "),
        };
        assert!(why.starts_with(&path), "{field}: {why}");
    }
}

#[test]
fn a_bad_value_of_the_full_record_is_a_dead_letter_with_its_reason() {
    let json = result_json(&runner("1", "E271", r#","lbw":"1¼""#));
    assert_eq!(
        reason("racing.results.2026-11-21.3", &json),
        "runners[0].lbw must be 1 to 8 characters of 0-9 A-Z - /, such as -, SH, 3/4 or 1-1/4"
    );
    let json = result_json(&runner("1", "E271", r#","declared_weight":"1100""#));
    assert!(
        reason("racing.results.2026-11-21.3", &json).starts_with("data: invalid type"),
        "a weight must be a number"
    );
}

fn status_json(subject_date: &str, data: &str) -> String {
    format!(
        r#"{{"event_id":"{ID}","type":"RaceStatusChanged","occurred_at":"2026-11-21T13:05:41Z",
        "data":{{"date":"{subject_date}","race_number":3{data}}}}}"#
    )
}

#[test]
fn a_race_status_goes_on_the_status_subject_and_round_trips() {
    let s = "racing.status.2026-11-21.3";
    for status in RaceStatus::ALL {
        let json = status_json("2026-11-21", &format!(r#","status":"{status}""#));
        assert_eq!(reason(s, &json), "accepted", "{status}");
        let e = Envelope::decode(s, json.as_bytes()).expect("valid");
        assert_eq!(e.subject(), s);
        let Event::RaceStatusChanged(changed) = &e.event else {
            panic!("{e:?}")
        };
        assert_eq!(changed.status(), Some(status));
        assert_eq!(Envelope::parse(e.to_json().as_bytes()), Ok(e.clone()));
    }
    let with = status_json(
        "2026-11-21",
        r#","venue":"Sha Tin","status":"suspended","reason":"reweigh""#,
    );
    assert_eq!(reason(s, &with), "accepted");
    // On another kind's subject it is refused like any event.
    assert!(reason("racing.odds.2026-11-21.3", &with).contains("expected `racing.status"));
}

#[test]
fn a_bad_race_status_is_a_dead_letter_naming_its_field() {
    let s = "racing.status.2026-11-21.3";
    let refused = |data: &str| reason(s, &status_json("2026-11-21", data));
    assert!(refused(r#","status":"running""#)
        .starts_with("status must be one of open, suspended, off, finished, abandoned, void"));
    assert!(refused(r#","status":"OPEN""#).starts_with("status must be one of"));
    assert!(refused("").contains("missing field `status`"));
    assert!(refused(r#","status":"off","reason":"""#).starts_with("reason must not be empty"));
    let long = "x".repeat(201);
    assert!(refused(&format!(r#","status":"off","reason":"{long}""#))
        .starts_with("reason must be 1 to 200 characters, got 201"));
    assert!(refused(r#","status":"off","venue":"""#).starts_with("venue must not be empty"));
    assert!(reason(s, &status_json("2026-02-30", r#","status":"off""#)).contains("date"));
}

#[test]
fn an_odds_entry_gives_a_win_price_a_place_price_or_both() {
    let s = "racing.odds.2026-11-21.3";
    let odds = |entry: &str| {
        format!(
            r#"{{"event_id":"{ID}","type":"OddsUpdated","occurred_at":"2026-11-21T13:05:41Z",
            "data":{{"date":"2026-11-21","race_number":3,"odds":[{{"horse_no":"E1"{entry}}}]}}}}"#
        )
    };
    let entry = |json: &str| match Envelope::decode(s, json.as_bytes()).map(|e| e.event) {
        Ok(Event::OddsUpdated(o)) => (o.odds[0].win_odds, o.odds[0].place_odds),
        other => panic!("{other:?}"),
    };
    assert_eq!(entry(&odds(r#","win_odds":3.5"#)), (Some(3.5), None));
    assert_eq!(entry(&odds(r#","place_odds":1.4"#)), (None, Some(1.4)));
    assert_eq!(
        entry(&odds(r#","win_odds":3.5,"place_odds":1.4"#)),
        (Some(3.5), Some(1.4))
    );
    assert_eq!(
        reason(s, &odds("")),
        "odds[0] must give win_odds, place_odds or both"
    );
    assert_eq!(
        reason(s, &odds(r#","win_odds":null"#)),
        "odds[0] must give win_odds, place_odds or both"
    );
    assert!(reason(s, &odds(r#","win_odds":3.5,"place_odds":0.9"#))
        .starts_with("odds[0].place_odds must be finite decimal odds of at least 1.0"));
    assert!(reason(s, &odds(r#","place_odds":"2""#)).contains("data:"));
    // A v1 entry serialises as it did: no place price written.
    let v1 = Envelope::decode(s, odds(r#","win_odds":3.5"#).as_bytes()).expect("valid");
    assert!(v1.to_json().contains(r#"{"horse_no":"E1","win_odds":3.5}"#));
}

#[test]
fn a_check_lists_every_problem_of_a_payload_the_first_being_the_refusal() {
    let runners = [
        runner("0", "E271", r#","draw":0"#),
        runner("2", "E271", r#","lbw":"far""#),
    ]
    .join(",");
    let payload = result_json(&runners).replace(ID, "not-a-uuid");
    let problems: Vec<String> = Envelope::check(payload.as_bytes())
        .err()
        .unwrap_or_default()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        problems,
        [
            "event_id is not a UUID",
            "runners[0].position must be from 1 to 99, got 0",
            "runners[0].draw must be from 1 to 99, got 0",
            "runners[1].lbw must be 1 to 8 characters of 0-9 A-Z - /, such as -, SH, 3/4 or 1-1/4",
            "runners lists horse E271 more than once",
        ]
    );
    let refusal = Envelope::parse(payload.as_bytes())
        .err()
        .map(|e| e.to_string());
    assert_eq!(problems.first(), refusal.as_ref());
    // Every refused sample: the first problem is the reason it is refused with.
    for sample in samples::refused() {
        let all = Envelope::check(sample.payload.as_bytes()).err();
        let first = Envelope::parse(sample.payload.as_bytes()).err();
        assert_eq!(
            all.as_ref().and_then(|p| p.first()),
            first.as_ref(),
            "{}",
            sample.rule
        );
    }
}
