//! The importer against fixtures the team wrote in the datasets' format
//! (`tests/fixtures/hk/`): every column mapped, every way the files write a missing value
//! read as none, withdrawn runners with nothing to give, the same ids on a second import
//! and a new one for a corrected race, and each row it cannot map reported with its line.

use racing_events::{Event, RaceResult};

use super::*;

const RACES: &str = include_str!("../../tests/fixtures/hk/race-result-race.csv");
const RUNNERS: &str = include_str!("../../tests/fixtures/hk/race-result-horse.csv");
/// Every spelling of a missing value, in the layout of the public files.
const MISSING_RACES: &str = include_str!("../../tests/fixtures/hk/missing/race-result-race.csv");
const MISSING_RUNNERS: &str = include_str!("../../tests/fixtures/hk/missing/race-result-horse.csv");

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

/// Each problem as `file line: reason`.
fn said(problems: &[Problem]) -> Vec<String> {
    problems
        .iter()
        .map(|p| format!("{} {}: {}", p.file, p.line, p.reason))
        .collect()
}

/// The counts of values left out, as `(column, missing, unreadable)`.
fn left_out(imported: &Imported) -> Vec<(&str, u64, u64)> {
    imported
        .left_out
        .iter()
        .map(|(c, n)| (c.as_str(), n.missing, n.unreadable))
        .collect()
}

#[test]
fn each_race_becomes_one_result_with_every_column_the_contract_carries() {
    let imported = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    assert_eq!(imported.problems, vec![]);
    assert_eq!(imported.not_written, vec![]);
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
    // A withdrawn runner: its code, and `---` for each value it has none of (a margin of
    // none, in `lbw`).
    let withdrawn = &first.runners[4];
    assert_eq!(withdrawn.status.as_deref(), Some("WV"));
    assert_eq!(withdrawn.position, None);
    assert_eq!(
        (withdrawn.finish_time.as_ref(), withdrawn.win_odds),
        (None, None)
    );
    assert_eq!(withdrawn.lbw.as_deref(), Some("---"));
    assert_eq!((withdrawn.draw, withdrawn.actual_weight), (None, None));
    assert_eq!(withdrawn.jockey, "", "`---` is no jockey's name");
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
    // Empty cells of the short races' calls, and the pulled-up runner's `---` for a time,
    // are counted, not reported.
    assert_eq!(
        left_out(&imported),
        [
            ("finish_time", 1, 0),
            ("running_position_3", 1, 0),
            ("running_position_4", 5, 0),
            ("running_position_5", 8, 0),
            ("running_position_6", 12, 0)
        ]
    );
}

#[test]
fn every_spelling_of_a_missing_value_is_none_counted_and_never_reported() {
    let imported =
        hk_results(MISSING_RACES.as_bytes(), MISSING_RUNNERS.as_bytes()).expect("imported");
    assert_eq!(said(&imported.not_written), Vec::<String>::new());
    // The one row with no placing is left out of its race, which is written.
    assert_eq!(
        said(&imported.problems),
        ["runners 15: no finishing_position (`NA`): runner left out of race 2015-083"]
    );
    let results = results(&imported);
    assert_eq!(results.len(), 3);

    // `N/A`, `NaN`, `-` where a number is due, `---`, `NA` and an empty cell: none.
    let second = &results[0].runners[1];
    assert_eq!(second.horse_no, "P102");
    assert_eq!(
        (second.actual_weight, second.declared_weight, second.draw),
        (None, None, None)
    );
    assert_eq!(second.win_odds, None);
    assert_eq!(second.finish_time.as_deref(), Some("1:09.88"));
    assert_eq!(second.lbw.as_deref(), Some("1/2"));
    assert_eq!(second.running_positions.as_deref(), Some(&[1, 1, 2][..]));
    let third = &results[0].runners[2];
    assert_eq!((third.jockey.as_str(), third.trainer.as_str()), ("", ""));
    assert_eq!((third.finish_time.as_ref(), third.win_odds), (None, None));
    assert_eq!((third.declared_weight, third.draw), (None, None));
    assert_eq!(third.actual_weight, Some(128));
    // Each withdrawn code, with each spelling for every value it has none of.
    let withdrawn: Vec<&ResultRunner> = results[0].runners[3..]
        .iter()
        .chain(&results[1].runners[2..])
        .collect();
    let codes: Vec<&str> = withdrawn
        .iter()
        .filter_map(|r| r.status.as_deref())
        .collect();
    assert_eq!(codes, ["WV", "WV-A", "WX", "WX-A", "WXNR", "TNP"]);
    for r in withdrawn {
        let code = r.status.as_deref().unwrap_or_default();
        assert_eq!(
            (r.position, r.finish_time.as_ref(), r.win_odds, r.draw),
            (None, None, None, None),
            "{code}"
        );
        assert_eq!(
            (
                r.actual_weight,
                r.declared_weight,
                r.running_positions.as_ref()
            ),
            (None, None, None),
            "{code}"
        );
        assert_eq!(r.jockey, "", "{code}");
        // `---` is a margin of none; the other spellings give none.
        let lbw = if code == "WV-A" { Some("---") } else { None };
        assert_eq!(r.lbw.as_deref(), lbw, "{code}");
    }
    // A short race's calls, `NA` and `nan` after the last.
    assert_eq!(
        results[1].runners[1].running_positions.as_deref(),
        Some(&[1, 1, 1, 1, 2][..])
    );
    // A race with no class and no name given.
    let third_race = results[2];
    assert_eq!(
        (third_race.class.as_ref(), third_race.race_name.as_str()),
        (None, "")
    );
    assert_eq!(third_race.runners.len(), 2);
    assert_eq!(
        third_race.runners[0].finish_time.as_deref(),
        Some("0:57.20")
    );

    // Counted by kind, for the runners that ran (a withdrawn one has none to give).
    assert_eq!(
        left_out(&imported),
        [
            ("actual_weight", 1, 0),
            ("declared_horse_weight", 2, 0),
            ("draw", 2, 0),
            ("finish_time", 1, 0),
            ("jockey", 1, 0),
            ("race_class", 1, 0),
            ("race_name", 1, 0),
            ("running_position_4", 5, 0),
            ("running_position_5", 5, 0),
            ("running_position_6", 7, 0),
            ("trainer", 1, 0),
            ("win_odds", 2, 0),
        ]
    );
    assert_eq!(
        imported.summary(),
        "written: 3 races, 13 runners\n\
         not written: 0 races, 0 runner rows of no race\n\
         left out: actual_weight 1 missing, declared_horse_weight 2 missing, draw 2 missing, \
         finish_time 1 missing, jockey 1 missing, race_class 1 missing, race_name 1 missing, \
         running_position_4 5 missing, running_position_5 5 missing, running_position_6 7 \
         missing, trainer 1 missing, win_odds 2 missing"
    );
}

#[test]
fn a_withdrawn_runner_needs_no_time_odds_or_draw_and_a_runner_that_ran_needs_them_readable() {
    let races = "race_id,race_date,race_course,race_number,race_class,race_distance,track_condition,race_name\n\
        R1,2016-09-11,Sha Tin,1,Class 4,1200,GOOD,A\n\
        R2,2016-09-11,Sha Tin,2,Class 4,1200,GOOD,B\n\
        R3,2016-09-11,Sha Tin,3,Class 4,1200,GOOD,C\n";
    let runners = "race_id,finishing_position,horse_name,horse_id,jockey,trainer,actual_weight,declared_horse_weight,draw,length_behind_winner,finish_time,win_odds\n\
        R1,1,A,A1,J,T,133,1100,1,-,1.09.45,3.5\n\
        R1,WV-A,B,B1,J,T,NA,NA,0,NA,soon,evens\n\
        R2,1,C,C1,J,T,133,1100,1,-,1.09.45,3.5\n\
        R2,2,D,D1,J,T,133,1100,2,1,soon,3.5\n\
        R3,1,E,E1,J,T,133,1100,1,-,1.09.45,3.5\n\
        R3,2,F,F1,J,T,133,1100,2,1,1.09.55,evens\n";
    let imported = hk_results(races.as_bytes(), runners.as_bytes()).expect("imported");
    assert_eq!(results(&imported).len(), 1);
    assert_eq!(
        said(&imported.not_written),
        [
            "races 3: race R2 not written: runners line 5: finish_time `soon` is not m.ss.cc",
            "races 4: race R3 not written: runners line 7: win_odds `evens` is not decimal \
             odds of 1.0 or more",
        ]
    );
    // The withdrawn runner's values that are there but wrong are left out, and said.
    assert_eq!(
        said(&imported.problems),
        [
            "runners 3: finish_time `soon` is not m.ss.cc: left out",
            "runners 3: win_odds `evens` is not decimal odds of 1.0 or more: left out",
            "runners 3: draw `0` is not a whole number from 1 to 99: left out",
        ]
    );
    assert_eq!(
        left_out(&imported),
        [("draw", 0, 1), ("finish_time", 0, 1), ("win_odds", 0, 1)]
    );
}

#[test]
fn importing_the_same_races_again_gives_the_same_events() {
    let once = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    let again = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    let ids = |i: &Imported| i.events.iter().map(|e| e.to_json()).collect::<Vec<_>>();
    assert_eq!(ids(&once), ids(&again));
    // UUID v5 of the race id and the SHA-256 of the data, as docs/feeding.md says.
    let first = &once.events[0];
    let payload = first.to_json();
    let data = payload
        .split_once(r#""data":"#)
        .and_then(|(_, data)| data.strip_suffix('}'))
        .expect("the payload ends with its data");
    let mut name = b"race:2016-001:".to_vec();
    name.extend_from_slice(&Sha256::digest(data.as_bytes()));
    assert_eq!(first.event_id, Uuid::new_v5(&HK_RESULTS_NAMESPACE, &name));
    assert_eq!(first.event_id.get_version_num(), 5);
}

#[test]
fn a_corrected_race_is_a_new_event_and_every_other_race_the_same_event() {
    let once = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    // One runner's time corrected, in the first race.
    let corrected = RUNNERS.replace("1.09.66", "1.09.67");
    assert_ne!(corrected, RUNNERS);
    let again = hk_results(RACES.as_bytes(), corrected.as_bytes()).expect("imported");
    let ids = |i: &Imported| i.events.iter().map(|e| e.event_id).collect::<Vec<_>>();
    let (before, after) = (ids(&once), ids(&again));
    assert_ne!(before[0], after[0]);
    assert_eq!(before[1..], after[1..]);
    assert_eq!(
        results(&again)[0].runners[1].finish_time.as_deref(),
        Some("1:09.67")
    );
}

#[test]
fn a_runners_file_without_horse_number_reads_as_one_with_it() {
    let column = RUNNERS
        .lines()
        .next()
        .and_then(|h| h.split(',').position(|c| c == "horse_number"))
        .expect("the fixture has the column");
    let without: String = RUNNERS
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            [&cells[..column], &cells[column + 1..]].concat().join(",") + "\n"
        })
        .collect();
    assert!(!without.contains("horse_number"));
    let with = hk_results(RACES.as_bytes(), RUNNERS.as_bytes()).expect("imported");
    let imported = hk_results(RACES.as_bytes(), without.as_bytes()).expect("imported");
    let json = |i: &Imported| i.events.iter().map(|e| e.to_json()).collect::<Vec<_>>();
    assert_eq!(json(&imported), json(&with));
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
    // Each race not written on one line, with its reason.
    assert_eq!(
        said(&imported.not_written),
        [
            "races 2: race R1 not written: runners line 3: horse_id `B 2` is not a brand number",
            "races 3: race R2 not written: race_date `2016-09-31` is not a YYYY-MM-DD calendar date",
            "races 4: race R3 not written: runners line 5: win_odds `0.5` is not decimal odds of 1.0 or more",
            "races 5: race_id R1 again (first on line 2): race not written twice",
            "runners 6: race_id `R9` is in no row of the races file: runner not written",
        ]
    );
    // The values of the race written that were there but wrong.
    assert_eq!(
        said(&imported.problems),
        [
            "runners 7: length_behind_winner `1 1/4` is not lengths behind: left out",
            "runners 7: actual_weight `200` is not a whole number from 90 to 160: left out",
        ]
    );
    // R4 is written, without the values left out.
    let written = results(&imported);
    assert_eq!(written.len(), 1);
    let runner = &written[0].runners[0];
    assert_eq!((runner.actual_weight, runner.lbw.as_ref()), (None, None));
    assert_eq!(runner.finish_time.as_deref(), Some("1:09.45"));
    assert_eq!(
        imported.summary(),
        "written: 1 race, 1 runner\n\
         not written: 4 races, 1 runner row of no race\n\
         left out: actual_weight 1 unreadable, length_behind_winner 1 unreadable"
    );
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
