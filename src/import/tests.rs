//! The importer against fixtures the team wrote in the datasets' format
//! (`tests/fixtures/hk/`): every column mapped, the same ids on a second import, and
//! each row it cannot map reported with its line.

use racing_events::{Event, RaceResult};

use super::*;

const RACES: &str = include_str!("../../tests/fixtures/hk/race-result-race.csv");
const RUNNERS: &str = include_str!("../../tests/fixtures/hk/race-result-horse.csv");

fn results(imported: &Imported) -> Vec<&RaceResult> {
    imported
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::RaceResultPublished(r) => Some(r),
            _ => None,
        })
        .collect()
}

#[test]
fn each_race_becomes_one_result_with_every_column_the_contract_carries() {
    let imported = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    assert_eq!(imported.problems, vec![]);
    assert_eq!((imported.races, imported.runners), (3, 13));
    let results = results(&imported);
    assert_eq!(results.len(), 3);
    let first = results[0];
    assert_eq!(
        (first.date.as_str(), first.venue.as_str(), first.race_number),
        ("2016-09-11", "Sha Tin", 1)
    );
    assert_eq!(first.race_name, "LANTERN HANDICAP");
    assert_eq!(first.distance, 1200);
    assert_eq!(first.going, "GOOD TO FIRM");
    assert_eq!(first.class.as_deref(), Some("Class 4"));
    let winner = &first.runners[0];
    assert_eq!(winner.position, Some(1));
    assert_eq!(winner.horse_no, "T101");
    assert_eq!(winner.horse_name, "MORNING TIDE");
    assert_eq!(winner.jockey, "A Lam");
    assert_eq!(winner.trainer, "B Chan");
    assert_eq!(winner.finish_time.as_deref(), Some("1:09.45"));
    assert_eq!(winner.win_odds, Some(3.5));
    assert_eq!(winner.lbw.as_deref(), Some("-"));
    assert_eq!(winner.running_positions.as_deref(), Some(&[3, 2, 1][..]));
    assert_eq!(
        (winner.actual_weight, winner.declared_weight, winner.draw),
        (Some(133), Some(1102), Some(4))
    );
    assert_eq!(winner.status, None);
    // A dead heat for third, written `3 DH`.
    for r in &first.runners[2..4] {
        assert_eq!((r.position, r.dead_heat), (Some(3), true), "{}", r.horse_no);
    }
    // A withdrawn runner: its code, and `---` for each value it has none of.
    let withdrawn = &first.runners[4];
    assert_eq!(withdrawn.status.as_deref(), Some("WV"));
    assert_eq!(withdrawn.position, None);
    assert_eq!(
        (withdrawn.finish_time.as_ref(), withdrawn.win_odds),
        (None, None)
    );
    assert_eq!(withdrawn.lbw.as_deref(), Some("---"));
    assert_eq!((withdrawn.draw, withdrawn.actual_weight), (None, None));
    // Pulled up: a code and its odds, no placing and no time.
    let pulled_up = &results[1].runners[3];
    assert_eq!(
        (pulled_up.status.as_deref(), pulled_up.win_odds),
        (Some("PU"), Some(19.0))
    );
    // The fifth call, where the race has one.
    assert_eq!(
        results[2].runners[3].running_positions.as_deref(),
        Some(&[8, 8, 8, 8, 4][..])
    );
    assert_eq!(results[2].venue, "Happy Valley");
    // Every event passes the service's own validation, dated at the meeting.
    for e in &imported.events {
        Envelope::parse(e.to_json().as_bytes()).expect("valid");
        assert!(e.occurred_at.ends_with("T00:00:00+08:00"));
    }
}

#[test]
fn importing_the_same_races_again_gives_the_same_events() {
    let once = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    let again = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    let ids = |i: &Imported| i.events.iter().map(|e| e.to_json()).collect::<Vec<_>>();
    assert_eq!(ids(&once), ids(&again));
    let first = once.events[0].event_id;
    assert_eq!(first, Uuid::new_v5(&HK_RESULTS_NAMESPACE, b"race:2016-001"));
    assert_eq!(first.get_version_num(), 5);
}

#[test]
fn rows_that_cannot_be_mapped_are_reported_with_their_line_never_dropped() {
    let races = "race_id,race_date,race_course,race_number,race_class,race_distance,track_condition,race_name\n\
        R1,2016-09-11,Sha Tin,1,Class 4,1200,GOOD,A\n\
        R2,2016-09-31,Sha Tin,2,Class 4,1200,GOOD,B\n\
        R3,2016-09-11,Sha Tin,3,Class 4,1200,GOOD,C\n\
        R1,2016-09-11,Sha Tin,1,Class 4,1200,GOOD,A\n\
        R4,2016-09-11,Sha Tin,4,Class 4,1200,GOOD,D\n";
    let runners = "race_id,finishing_position,horse_name,horse_id,jockey,trainer,actual_weight,declared_horse_weight,draw,length_behind_winner,finish_time,win_odds,horse_number,running_position_1\n\
        R1,1,A,A1,J,T,133,1100,1,-,1.09.45,3.5,1,x\n\
        R1,2,B,B 2,J,T,133,1100,2,1,1.09.55,3.5,2,1\n\
        R2,1,C,C1,J,T,133,1100,3,-,1.09.45,3.5,1,1\n\
        R3,1,D,D1,J,T,200,1100,4,1 1/4,1.09.45,0.5,1,1\n\
        R9,1,E,E1,J,T,133,1100,5,-,1.09.45,3.5,1,1\n\
        R4,1,F,F1,J,T,200,1100,6,1 1/4,1:09.45,2.5,1,2\n";
    let imported = hk_results(races.as_bytes(), runners.as_bytes()).expect("imported");
    let said: Vec<String> = imported
        .problems
        .iter()
        .map(|p| format!("{} {}: {}", p.file, p.line, p.reason))
        .collect();
    let expected = [
        "races 2: race R1 not written: runner lines 3 cannot be mapped",
        "races 3: race R2 not written: race_date `2016-09-31` is not a YYYY-MM-DD calendar date",
        "races 4: race R3 not written: runner lines 5 cannot be mapped",
        "races 5: race_id R1 again (first on line 2): race not written twice",
        "runners 2: running_position_1 `x` is not a whole number from 1 to 99: left out",
        "runners 3: horse_id `B 2` is not a brand number: its race is not written",
        "runners 5: win_odds `0.5` is not decimal odds of 1.0 or more: its race is not written",
        "runners 6: race_id `R9` is in no row of the races file: runner not written",
        "runners 7: actual_weight `200` is not a whole number from 90 to 160: left out",
        "runners 7: length_behind_winner `1 1/4` is not lengths behind: left out",
    ];
    assert_eq!(said, expected);
    // R4 is written, without the values left out.
    let written = results(&imported);
    assert_eq!(written.len(), 1);
    let runner = &written[0].runners[0];
    assert_eq!((runner.actual_weight, runner.lbw.as_ref()), (None, None));
    assert_eq!(runner.finish_time.as_deref(), Some("1:09.45"));
}

#[test]
fn a_file_without_a_column_the_importer_reads_is_an_error_naming_it() {
    let err = hk_results("race_id,race_date\n".as_bytes(), RUNNERS.as_bytes())
        .expect_err("columns missing");
    let text = err.to_string();
    assert!(
        text.starts_with("the races file has no column race_course, race_number"),
        "{text}"
    );
}
