//! A retracted race: what it takes away, and what it leaves.

use super::*;

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
        prices(&odds(Some(HV)).expect("HV odds")),
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
    // The history the read models keep (the odds journal and its counts, the versions of
    // the records and the form changes, for `as_of`, the race-day journal of what went
    // live and its order, and the races each person was in a result of, for their records
    // as of any point: their days' rides, each taken away) holds the race as it was;
    // nothing else does.
    let history = |k: &[u8], v: &[u8]| {
        let listed_only = || {
            let day = crate::people::ride_days::Day::read(k, Some(v)).expect("a day");
            day.names(k).count() > 0 && day.values().count() == 0
        };
        ["oj\0", "on\0", "h\0", "fc\0", "rd\0", "rdo\0"]
            .iter()
            .any(|p| k.starts_with(p.as_bytes()))
            || (k.starts_with(b"ppl\0ride\0") && listed_only())
    };
    let left: Vec<String> = s
        .records
        .iter()
        .filter(|(k, v)| !history(k, v))
        .map(|(k, _)| k)
        .map(|k| String::from_utf8_lossy(k).replace('\0', "/"))
        .collect();
    // Only the latest odds sequence: the odds events were applied, and stay in the log's
    // history, the odds journal (one move, at sequence 3).
    assert_eq!(left, ["meta/odds_seq"]);
    let journal: Vec<Vec<u8>> = crate::journal::journal_by_move(s.records.clone())
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
    assert_eq!(read_models(&after), read_models(&before));
    // The race-day journal keeps each retraction as it went live, and nothing else.
    let journal = |s: &MemState| s.records.keys().filter(|k| k.starts_with(b"rd\0")).count();
    assert_eq!(journal(&after), journal(&before) + 3);

    // Retracting twice is retracting once.
    let mut once = events.clone();
    once.push(env(retraction(DAY, HV, 3, "void")));
    let mut twice = once.clone();
    twice.push(env(retraction(DAY, HV, 3, "void, again")));
    assert_eq!(
        read_models(&fold_each(once)),
        read_models(&fold_each(twice))
    );
}

/// Every record but the race-day journal's and its order's, which keep each applied event
/// as it went live, a retraction of nothing too.
fn read_models(s: &MemState) -> Vec<(&Vec<u8>, &Vec<u8>)> {
    s.records
        .iter()
        .filter(|(k, _)| !k.starts_with(b"rd\0") && !k.starts_with(b"rdo\0"))
        .collect()
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
