//! Jockeys and trainers as pure folds: slugs, seasons, rides and places counted from
//! results, amendments and retractions, and records over seasons the same whatever the
//! batches.

use super::*;

/// The role named `role`.
fn role_of(role: &str) -> Role {
    Role::ALL
        .into_iter()
        .find(|r| r.name() == role)
        .expect("a role")
}

/// The record of a person as served, assembled from its head and records.
fn served(s: &MemState, role: Role, id: &str) -> Option<Vec<u8>> {
    crate::people::rides::served(s, role, id)
        .expect("read")
        .map(|v| crate::docs::unseal(&v).to_vec())
}

fn person(s: &MemState, role: &str, id: &str) -> Option<Value> {
    served(s, role_of(role), id).map(|v| serde_json::from_slice(&v).expect("json"))
}

fn list(s: &MemState, role: &str) -> Value {
    listed(s, role_of(role))
        .map(|body| serde_json::from_slice(&body).expect("json"))
        .unwrap_or(Value::Null)
}

/// The list of `role` as served, assembled from its head and rows; `None` without a head.
fn listed(s: &MemState, role: Role) -> Option<Vec<u8>> {
    let head = s.records.get(&crate::keys::people_doc(role.name()))?;
    let prefix = crate::keys::person_rows(role.name());
    let rows = s
        .records
        .range(prefix.clone()..)
        .take_while(|(k, _)| k.starts_with(&prefix))
        .map(Ok);
    let (_, rows) = crate::people::rides::list_rows(role, head, rows).expect("rows");
    Some(render_list(role, rows))
}

#[test]
fn slugs_are_lower_case_words_joined_by_one_dash() {
    assert_eq!(slug("Z Purton"), "z-purton");
    assert_eq!(slug("C S Shum"), "c-s-shum");
    assert_eq!(slug("  A. de Souza--Jr. "), "a-de-souza-jr");
    assert_eq!(slug("Ho Chak-yiu (3)"), "ho-chak-yiu-3");
    assert_eq!(slug("潘頓"), "");
    assert!(is_slug("z-purton") && is_slug("a1"));
    for bad in ["", "Z-purton", "-z", "z-", "z--p", "z p", "z_p", "é"] {
        assert!(!is_slug(bad), "{bad:?}");
    }
}

#[test]
fn seasons_run_september_to_august() {
    assert_eq!(season("2019-09-01").as_deref(), Some("2019/20"));
    assert_eq!(season("2020-08-31").as_deref(), Some("2019/20"));
    assert_eq!(season("2020-09-01").as_deref(), Some("2020/21"));
    assert_eq!(season("1999-12-31").as_deref(), Some("1999/00"));
}

#[test]
fn a_persons_seasons_are_newest_first_by_the_year_they_start() {
    // `999/00` sorts after `1999/00` as text; the year 1000 is the earliest a date can be.
    let s = fold_batch([
        result(
            "1000-03-01",
            ST,
            1,
            vec![ride(Some(1), "A1", "Z Purton", "J Size")],
        ),
        result(
            "1999-12-31",
            ST,
            1,
            vec![ride(Some(2), "A1", "Z Purton", "J Size")],
        ),
    ]);
    let z = person(&s, "jockey", "z-purton").expect("z-purton");
    let seasons: Vec<&serde_json::Value> = z["seasons"]
        .as_array()
        .expect("seasons")
        .iter()
        .map(|x| &x["season"])
        .collect();
    assert_eq!(seasons, [&json!("1999/00"), &json!("999/00")]);
}

/// Two races a season apart, the second with a dead heat and a runner pulled up.
fn two_seasons() -> [Event; 2] {
    [
        result(
            "2020-08-30",
            ST,
            1,
            vec![
                ride(Some(1), "A1", "Z Purton", "J Size"),
                ride(Some(2), "B2", "H Bowman", "J Size"),
            ],
        ),
        result(
            "2020-09-06",
            ST,
            2,
            vec![
                ride(Some(1), "C3", "H Bowman", "C S Shum"),
                ride(Some(1), "A1", "Z Purton", "J Size"),
                ride(Some(3), "D4", "H Bowman", "J Size"),
                ride(None, "E5", "Z Purton", "C S Shum"),
            ],
        ),
    ]
}

#[test]
fn a_person_counts_rides_places_and_seasons_from_results() {
    let s = fold_batch(two_seasons());
    // The second race had a dead heat: both count as wins. Purton rode twice in it (an
    // odd field, but counted as given).
    let z = person(&s, "jockey", "z-purton").expect("z-purton");
    assert_eq!(
        z,
        json!({
            "id": "z-purton", "name": "Z Purton", "rides": 3, "wins": 2, "seconds": 0,
            "thirds": 0, "win_pct": 66.7, "top3_pct": 66.7,
            "seasons": [
                {"season": "2020/21", "rides": 2, "wins": 1, "seconds": 0, "thirds": 0},
                {"season": "2019/20", "rides": 1, "wins": 1, "seconds": 0, "thirds": 0}
            ],
            "recent": [
                {"date": "2020-09-06", "venue": ST, "race_number": 2, "horse_no": "E5",
                 "horse_name": "NAME E5", "position": null, "status": "PU", "win_odds": 4.5},
                {"date": "2020-09-06", "venue": ST, "race_number": 2, "horse_no": "A1",
                 "horse_name": "NAME A1", "position": 1, "status": null, "win_odds": 4.5},
                {"date": "2020-08-30", "venue": ST, "race_number": 1, "horse_no": "A1",
                 "horse_name": "NAME A1", "position": 1, "status": null, "win_odds": 4.5}
            ]
        })
    );
    let size = person(&s, "trainer", "j-size").expect("j-size");
    assert_eq!(
        (
            &size["rides"],
            &size["wins"],
            &size["seconds"],
            &size["thirds"]
        ),
        (&json!(4), &json!(2), &json!(1), &json!(1))
    );
    assert_eq!(size["top3_pct"], json!(100.0));
    assert_eq!(
        list(&s, "jockey"),
        json!({"jockeys": [
            {"id": "h-bowman", "name": "H Bowman", "rides": 3},
            {"id": "z-purton", "name": "Z Purton", "rides": 3}
        ]})
    );
    assert_eq!(
        list(&s, "trainer"),
        json!({"trainers": [
            {"id": "c-s-shum", "name": "C S Shum", "rides": 2},
            {"id": "j-size", "name": "J Size", "rides": 4}
        ]})
    );
    // One event a batch or all in one: the same.
    let each = fold_each(two_seasons());
    assert_eq!(person(&each, "jockey", "z-purton"), Some(z));
}

#[test]
fn withdrawn_runners_and_those_that_took_no_part_are_no_rides() {
    let mut runners = Vec::new();
    for (i, status) in ["WV", "WV-A", "WX", "WX-A", "WXNR", "TNP", "DISQ"]
        .into_iter()
        .enumerate()
    {
        let mut r = ride(None, &format!("H{i}"), "Z Purton", "J Size");
        r.status = Some(status.into());
        runners.push(r);
    }
    let mut only_withdrawn = ride(None, "W9", "A Badel", "J Size");
    only_withdrawn.status = Some("WV".into());
    runners.push(only_withdrawn);
    let s = fold_each([result(DAY, HV, 1, runners)]);
    let z = person(&s, "jockey", "z-purton").expect("z-purton");
    assert_eq!((&z["rides"], &z["win_pct"]), (&json!(1), &json!(0.0)));
    assert_eq!(z["recent"][0]["status"], json!("DISQ"));
    assert_eq!(person(&s, "jockey", "a-badel"), None, "no ride, no record");
    assert_eq!(
        list(&s, "jockey"),
        json!({"jockeys": [{"id": "z-purton", "name": "Z Purton", "rides": 1}]})
    );
}

#[test]
fn an_amendment_moves_rides_and_places_and_a_retraction_removes_them() {
    let mut s = fold_each([
        result(
            DAY,
            HV,
            1,
            vec![
                ride(Some(1), "A1", "Z Purton", "J Size"),
                ride(Some(2), "B2", "H Bowman", "J Size"),
            ],
        ),
        result(DAY, HV, 2, vec![ride(Some(1), "C3", "H Bowman", "J Size")]),
    ]);
    assert_eq!(
        person(&s, "jockey", "z-purton").expect("z")["wins"],
        json!(1)
    );
    // Race 1 amended: A1 was ridden by Bowman and placed second; B2 won.
    fold_into(
        &mut s,
        [result(
            DAY,
            HV,
            1,
            vec![
                ride(Some(1), "B2", "H Bowman", "J Size"),
                ride(Some(2), "A1", "H Bowman", "J Size"),
            ],
        )],
    );
    assert_eq!(person(&s, "jockey", "z-purton"), None, "no ride left");
    let h = person(&s, "jockey", "h-bowman").expect("h-bowman");
    assert_eq!(
        (&h["rides"], &h["wins"], &h["seconds"], &h["win_pct"]),
        (&json!(3), &json!(2), &json!(1), &json!(66.7))
    );
    assert_eq!(
        list(&s, "jockey"),
        json!({"jockeys": [{"id": "h-bowman", "name": "H Bowman", "rides": 3}]})
    );
    // Race 1 retracted: only race 2 is left.
    fold_into(&mut s, [retraction(DAY, HV, 1, "void")]);
    let h = person(&s, "jockey", "h-bowman").expect("h-bowman");
    assert_eq!((&h["rides"], &h["wins"]), (&json!(1), &json!(1)));
    assert_eq!(
        person(&s, "trainer", "j-size").expect("j")["rides"],
        json!(1)
    );
    fold_into(&mut s, [retraction(DAY, HV, 2, "void")]);
    assert_eq!(person(&s, "jockey", "h-bowman"), None);
    assert_eq!(list(&s, "jockey"), Value::Null, "nobody left");
    assert_eq!(list(&s, "trainer"), Value::Null);
}

#[test]
fn recent_holds_the_twenty_newest_rides_and_the_newest_name() {
    let mut events = Vec::new();
    for day in 1..=25 {
        let date = format!("2026-10-{day:02}");
        let name = if day == 25 { "Z. Purton" } else { "Z Purton" };
        events.push(result(
            &date,
            ST,
            1,
            vec![ride(Some(4), "A1", name, "J Size")],
        ));
    }
    let s = fold_batch(events);
    let z = person(&s, "jockey", "z-purton").expect("z-purton");
    assert_eq!(z["name"], json!("Z. Purton"));
    assert_eq!(z["rides"], json!(25));
    let recent = z["recent"].as_array().expect("recent");
    assert_eq!(recent.len(), 20);
    assert_eq!(recent[0]["date"], json!("2026-10-25"));
    assert_eq!(recent[19]["date"], json!("2026-10-06"));
}

/// Races over three seasons and the days either side of their boundaries (2022/23 to
/// 2024/25): two races a date, four runners each, whose places and trainers turn with the
/// date. K Teetan rides only in race 1 of the first two dates, Purton is `Z. Purton` on
/// every third date, one race has a dead heat and one a runner withdrawn.
fn three_seasons() -> Vec<Event> {
    let dates = [
        "2022-09-04",
        "2022-10-09",
        "2022-12-18",
        "2023-02-05",
        "2023-04-30",
        "2023-06-11",
        "2023-07-16",
        "2023-08-31",
        "2023-09-01",
        "2023-11-12",
        "2024-01-21",
        "2024-05-05",
        "2024-08-31",
        "2024-09-01",
        "2024-10-06",
        "2025-02-09",
    ];
    let trainers = ["J Size", "C S Shum"];
    let mut events = Vec::new();
    for (d, date) in dates.into_iter().enumerate() {
        for race in 1..=2 {
            let fourth = if d < 2 && race == 1 {
                "K Teetan"
            } else {
                "C Y Ho"
            };
            let purton = if d % 3 == 1 { "Z. Purton" } else { "Z Purton" };
            let jockeys = [purton, "H Bowman", "A Badel", fourth];
            let runners = jockeys
                .iter()
                .enumerate()
                .map(|(i, jockey)| {
                    let place = (i + d + race as usize) % 4 + 1;
                    let mut r = ride(
                        Some(place as i64),
                        &format!("H{d}{race}{i}"),
                        jockey,
                        trainers[(i + d) % 2],
                    );
                    r.win_odds = Some(2.0 + (i + d) as f64);
                    if (d, race, place) == (5, 2, 2) {
                        r.position = Some(1);
                    }
                    if (d, race, i) == (9, 1, 2) {
                        (r.position, r.status) = (None, Some("WV".into()));
                    }
                    r
                })
                .collect();
            events.push(result(date, ST, race, runners));
        }
    }
    events
}

/// Folds the events into `s` in batches of `size`.
fn fold_in_batches(s: &mut MemState, events: Vec<Event>, size: usize) {
    let mut seq = s.seen.len() as u64;
    for batch in events.chunks(size) {
        let mut f = Fold::default();
        for e in batch {
            seq += 1;
            f.apply(s, seq, 0, &env(e.clone())).expect("apply");
        }
        f.render(s).expect("render");
    }
}

/// Checks every jockey's and trainer's record and the lists against what rendering each
/// one from all their rides in the stored results at once gives, byte for byte, and that
/// nobody without a ride keeps a record.
fn assert_people_as_rendered_from_all_rides(s: &MemState) {
    let results: Vec<RaceResult> = s
        .records
        .iter()
        .filter(|(k, _)| k.starts_with(b"res\0"))
        .map(|(_, v)| serde_json::from_slice(v).expect("result"))
        .collect();
    for role in Role::ALL {
        let mut ids: std::collections::BTreeSet<String> = results
            .iter()
            .flat_map(|r| &r.runners)
            .map(|r| slug(role.of(r)))
            .collect();
        let prefix = crate::keys::person_doc(role.name(), "");
        ids.extend(
            s.records
                .keys()
                .filter_map(|k| k.strip_prefix(prefix.as_slice()))
                .map(|id| String::from_utf8_lossy(id).into_owned()),
        );
        let (mut rows, mut seasons) = (Vec::new(), 0);
        for id in ids {
            let served = served(s, role, &id);
            let expected = crate::people::docs::render_from_results(role, &id, &results);
            assert_eq!(
                served.as_deref().map(String::from_utf8_lossy),
                expected.as_deref().map(String::from_utf8_lossy),
                "{} {id}",
                role.name()
            );
            let prefix = crate::keys::person_seasons(role.name(), &id);
            let summary = s.records.keys().any(|k| k.starts_with(&prefix));
            assert_eq!(summary, expected.is_some(), "summary of {id}");
            if let Some(doc) = expected {
                let doc: Value = serde_json::from_slice(&doc).expect("json");
                seasons += doc["seasons"].as_array().expect("seasons").len();
                rows.push(PersonRow {
                    id,
                    name: doc["name"].as_str().expect("name").to_owned(),
                    rides: doc["rides"].as_u64().expect("rides") as u32,
                });
            }
        }
        let season_records = crate::keys::person_season(role.name(), "", "");
        let season_records = &season_records[..season_records.len() - 2];
        assert_eq!(
            s.records
                .keys()
                .filter(|k| k.starts_with(season_records))
                .count(),
            seasons,
            "a record for each season of each {}'s record",
            role.name()
        );
        let list = listed(s, role);
        let expected = (!rows.is_empty()).then(|| render_list(role, rows));
        assert_eq!(list, expected, "the list of {}s", role.name());
    }
}

#[test]
fn records_over_seasons_are_those_of_all_rides_at_once_through_amendments_and_retractions() {
    for size in [1, 5, 64] {
        let mut s = MemState::default();
        fold_in_batches(&mut s, three_seasons(), size);
        assert_people_as_rendered_from_all_rides(&s);
        let z = person(&s, "jockey", "z-purton").expect("z-purton");
        let seasons: Vec<&Value> = z["seasons"]
            .as_array()
            .expect("seasons")
            .iter()
            .map(|x| &x["season"])
            .collect();
        assert_eq!(
            seasons,
            [&json!("2024/25"), &json!("2023/24"), &json!("2022/23")]
        );
        // Six rides in the newest season, ten in the one before: recent goes back two.
        assert_eq!(z["recent"][19]["date"], json!("2023-07-16"));
        assert_eq!(z["name"], json!("Z Purton"));

        // In one batch, amendments and a retraction in the oldest and the middle season,
        // and a new race in which Purton's name is spelled otherwise: in the oldest, Badel
        // takes Purton's ride (the race amended twice over); in the middle, the race of
        // its first day loses all its runners but one, Purton's horse under C Y Ho.
        let mut amended = vec![
            ride(Some(1), "H111", "H Bowman", "J Size"),
            ride(Some(2), "H110", "A Badel", "C S Shum"),
        ];
        let again = result("2022-10-09", ST, 1, amended.clone());
        amended.swap(0, 1);
        (amended[0].position, amended[1].position) = (Some(1), Some(2));
        fold_in_batches(
            &mut s,
            vec![
                again,
                result("2022-10-09", ST, 1, amended),
                retraction("2023-02-05", ST, 2, "void"),
                result(
                    "2023-09-01",
                    ST,
                    1,
                    vec![ride(Some(3), "H810", "C Y Ho", "J Size")],
                ),
                result(
                    "2025-03-02",
                    ST,
                    1,
                    vec![ride(Some(2), "H1610", "Z. Purton", "J Size")],
                ),
            ],
            size,
        );
        assert_people_as_rendered_from_all_rides(&s);
        let z = person(&s, "jockey", "z-purton").expect("z-purton");
        assert_eq!(z["name"], json!("Z. Purton"));

        // Teetan's two races retracted: he has no ride left, nor record, nor row.
        assert!(person(&s, "jockey", "k-teetan").is_some());
        fold_in_batches(
            &mut s,
            vec![
                retraction("2022-09-04", ST, 1, "void"),
                retraction("2022-10-09", ST, 1, "void"),
            ],
            size,
        );
        assert_people_as_rendered_from_all_rides(&s);
        assert_eq!(person(&s, "jockey", "k-teetan"), None);
        let teetan = crate::keys::person_seasons("jockey", "k-teetan");
        assert!(!s.records.keys().any(|k| k.starts_with(&teetan)));
    }
}
