//! Today's race day as the feed reports it: each race opened, priced to win and place, a
//! late scratching or two, off, finished and its result, and now and then a race abandoned.

use racing_events::RaceStatus;

use super::*;

/// Seconds of trading of each race: enough for a late scratching to fall inside it.
const RACE_SECS: u64 = 30;

pub(super) fn date_of(event: &Event) -> Option<&str> {
    match event {
        Event::RaceCardDeclared(c) => Some(&c.date),
        Event::RunnerScratched(s) => Some(&s.date),
        Event::OddsUpdated(o) => Some(&o.date),
        Event::RaceStatusChanged(s) => Some(&s.date),
        Event::RaceResultPublished(r) => Some(&r.date),
        Event::RaceRetracted(r) => Some(&r.date),
        _ => None,
    }
}

fn race_of(event: &Event) -> Option<i64> {
    match event {
        Event::RaceCardDeclared(c) => Some(c.race_number),
        Event::RunnerScratched(s) => Some(s.race_number),
        Event::OddsUpdated(o) => Some(o.race_number),
        Event::RaceStatusChanged(s) => Some(s.race_number),
        Event::RaceResultPublished(r) => Some(r.race_number),
        Event::RaceRetracted(r) => Some(r.race_number),
        _ => None,
    }
}

fn status_of(event: &Event) -> Option<(RaceStatus, Option<&str>)> {
    match event {
        Event::RaceStatusChanged(s) => Some((s.status()?, s.reason.as_deref())),
        _ => None,
    }
}

/// Race `number`'s events of a day, in the order they went out.
fn of_race(day: &[Envelope], number: i64) -> Vec<&Event> {
    day.iter()
        .map(|e| &e.event)
        .filter(|e| race_of(e) == Some(number))
        .collect()
}

/// What a race's day came to: its late scratchings and whether it was abandoned.
#[derive(Debug, Default)]
struct Seen {
    late: Vec<String>,
    abandoned: bool,
}

/// Checks one race's events in stream order against the race day the contract describes,
/// and says what the race's day held.
fn check_race(events: &[&Event]) -> Seen {
    let text = || format!("{events:#?}");
    let card = events.iter().find_map(|e| match e {
        Event::RaceCardDeclared(c) => Some(c),
        _ => None,
    });
    let mut field = card.expect("a declared race").runners.len();
    let mut seen = Seen::default();
    let mut opened = false;
    let mut last_status = None;
    let mut ended = false;
    for (i, event) in events.iter().enumerate() {
        assert!(!ended, "nothing after the race's last event: {}", text());
        match event {
            Event::RaceStatusChanged(_) => {
                let (status, reason) = status_of(event).expect("a known status");
                match status {
                    RaceStatus::Open => opened = true,
                    RaceStatus::Suspended => {
                        assert!(reason.is_some_and(|r| !r.is_empty()), "{}", text());
                    }
                    RaceStatus::Off => assert_eq!(last_status, Some(RaceStatus::Open)),
                    RaceStatus::Finished => assert_eq!(last_status, Some(RaceStatus::Off)),
                    RaceStatus::Abandoned => {
                        assert!(reason.is_some_and(|r| !r.is_empty()), "{}", text());
                        seen.abandoned = true;
                        ended = true;
                    }
                    RaceStatus::Void => panic!("the demo voids no race: {}", text()),
                }
                last_status = Some(status);
            }
            Event::RunnerScratched(s) => {
                field -= 1;
                if opened {
                    // On the day: betting suspended for it, then open again.
                    let before = events.get(i.wrapping_sub(1)).and_then(|e| status_of(e));
                    let (status, reason) = before.expect("a status before a late scratching");
                    assert_eq!(status, RaceStatus::Suspended, "{}", text());
                    assert!(reason.is_some_and(|r| r.contains(&s.horse_no)));
                    let after = events.get(i + 1).and_then(|e| status_of(e));
                    assert_eq!(after.map(|(s, _)| s), Some(RaceStatus::Open), "{}", text());
                    seen.late.push(s.horse_no.clone());
                }
            }
            Event::OddsUpdated(o) => {
                assert_eq!(last_status, Some(RaceStatus::Open), "{}", text());
                // No more runners than the field left; each place price on the board's
                // tenths, between evens and its win price (how it goes with the win
                // prices: `market.rs`).
                assert!(o.odds.len() <= field, "{}", text());
                for r in &o.odds {
                    let win = r.win_odds.expect("a win price");
                    let place = r.place_odds.expect("a place price beside it");
                    assert!(place >= 1.0 && place <= win, "{win} / {place}");
                    assert_eq!((place * 10.0).round() / 10.0, place);
                }
            }
            Event::RaceResultPublished(r) => {
                assert_eq!(last_status, Some(RaceStatus::Finished), "{}", text());
                for horse in &seen.late {
                    let line = r.runners.iter().find(|x| &x.horse_no == horse);
                    let line = line.expect("a late scratching listed");
                    assert_eq!((line.status.as_deref(), line.position), (Some("WX"), None));
                }
                ended = true;
            }
            _ => {}
        }
    }
    assert!(
        ended,
        "each race ends with its result or abandoned: {}",
        text()
    );
    seen
}

#[test]
fn each_race_opens_before_its_prices_and_goes_off_then_finishes_before_its_result() {
    let day = race_day(1, RACE_SECS);
    for env in &day {
        assert_contract(env);
    }
    let races = simulator(1).races() as i64;
    let mut late = 0;
    for number in 1..=races {
        let events = of_race(&day, number);
        let statuses: Vec<RaceStatus> = events
            .iter()
            .filter_map(|e| status_of(e))
            .map(|(s, _)| s)
            .collect();
        let first_price = events
            .iter()
            .position(|e| matches!(e, Event::OddsUpdated(_)));
        let first_open = events
            .iter()
            .position(|e| status_of(e).is_some_and(|(s, _)| s == RaceStatus::Open));
        assert!(first_open < first_price, "race {number}: open first");
        assert!(first_price.is_some(), "race {number} is priced");
        let seen = check_race(&events);
        late += seen.late.len();
        if !seen.abandoned {
            let ends = &statuses[statuses.len() - 2..];
            assert_eq!(
                ends,
                [RaceStatus::Off, RaceStatus::Finished],
                "race {number}"
            );
        }
    }
    assert!((1..=2).contains(&late), "{late} late scratchings");
}

#[test]
fn a_late_scratching_suspends_betting_and_takes_the_runner_out_of_the_prices() {
    let day = race_day(2, RACE_SECS);
    let late: Vec<(i64, &str)> = day
        .iter()
        .skip_while(|e| !matches!(e.event, Event::OddsUpdated(_)))
        .filter_map(|e| match &e.event {
            Event::RunnerScratched(s) => Some((s.race_number, s.horse_no.as_str())),
            _ => None,
        })
        .collect();
    assert!(!late.is_empty());
    for (number, horse) in late {
        let events = of_race(&day, number);
        let out = events
            .iter()
            .position(|e| matches!(e, Event::RunnerScratched(s) if s.horse_no == horse))
            .expect("the scratching");
        let priced_after = events[out..].iter().any(|e| match e {
            Event::OddsUpdated(o) => o.odds.iter().any(|r| r.horse_no == horse),
            _ => false,
        });
        assert!(!priced_after, "{horse} priced after its scratching");
        check_race(&events);
    }
}

#[test]
fn a_day_that_abandons_a_race_publishes_no_result_for_it() {
    // Which days abandon a race is the seed's to say: find one among a few, and one that
    // does not.
    let mut abandoned = Vec::new();
    let mut whole = 0;
    for seed in 1..=12 {
        let day = race_day(seed, RACE_SECS);
        day.iter().for_each(assert_contract);
        let races = simulator(seed).races() as i64;
        let mut gone = Vec::new();
        for number in 1..=races {
            let events = of_race(&day, number);
            if check_race(&events).abandoned {
                let result = events
                    .iter()
                    .any(|e| matches!(e, Event::RaceResultPublished(_)));
                assert!(
                    !result,
                    "seed {seed}: race {number} abandoned with a result"
                );
                let off = events
                    .iter()
                    .any(|e| status_of(e).is_some_and(|(s, _)| s == RaceStatus::Off));
                assert!(!off, "seed {seed}: race {number} abandoned after the off");
                gone.push(number);
            }
        }
        assert!(gone.len() <= 1, "seed {seed}: {gone:?}");
        if gone.is_empty() {
            whole += 1;
        }
        abandoned.extend(gone);
    }
    assert!(!abandoned.is_empty() && whole > 0, "{abandoned:?}, {whole}");
}

#[test]
fn the_same_seed_runs_the_same_race_day() {
    let json = |seed| {
        race_day(seed, RACE_SECS)
            .iter()
            .map(Envelope::to_json)
            .collect::<Vec<_>>()
    };
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
}
