//! The demo's unit tests: one season read by many tests, and what they share to read it.

mod calendar;
mod live;
mod market;
mod raceday;
mod season;
mod simulator;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use jiff::civil::Date;
use racing_events::{Envelope, Event, Lbw, OddsUpdated, RaceCard, RaceResult, ResultRunner};

use crate::feed::DemoFeed;
use crate::season::{season, season_and_calendar};
use crate::simulator::Simulator;

const TODAY: &str = "2026-11-21";

fn today() -> Date {
    Date::constant(2026, 11, 21)
}

/// One season shared by the tests that only read it: generating is the slow part.
fn feed() -> &'static DemoFeed {
    static FEED: OnceLock<DemoFeed> = OnceLock::new();
    FEED.get_or_init(|| season(42, today()))
}

/// The results that stand: not the one published under the wrong venue and retracted.
fn results() -> impl Iterator<Item = &'static RaceResult> {
    let retracted: BTreeSet<(&str, &str, i64)> = feed()
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::RaceRetracted(r) => Some((r.date.as_str(), r.venue.as_str(), r.race_number)),
            _ => None,
        })
        .collect();
    feed()
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::RaceResultPublished(r) => Some(r),
            _ => None,
        })
        .filter(move |r| !retracted.contains(&(r.date.as_str(), r.venue.as_str(), r.race_number)))
}

fn cards() -> impl Iterator<Item = &'static RaceCard> {
    feed().events.iter().filter_map(|e| match &e.event {
        Event::RaceCardDeclared(c) => Some(c),
        _ => None,
    })
}

fn withdrawn(r: &ResultRunner) -> bool {
    r.status
        .as_deref()
        .is_some_and(|s| s.starts_with("WV") || s.starts_with("WX"))
}

const NOW: &str = "2026-11-21T12:30:00+08:00";

/// [`NOW`], when the tests' demo starts: after today's races have opened.
fn now() -> jiff::Zoned {
    let hong_kong = crate::calendar::hong_kong();
    NOW.parse::<jiff::Timestamp>()
        .expect("an RFC 3339 time")
        .to_zoned(hong_kong)
}

fn simulator(seed: u64) -> Simulator {
    Simulator::new(feed(), seed)
}

/// Today's declared events, then the simulator's day as the live demo runs it, each race
/// trading for `race_secs` (see `live.rs`, whose test checks that the run publishes
/// exactly these).
fn race_day(seed: u64, race_secs: u64) -> Vec<Envelope> {
    let mut events: Vec<Envelope> = feed()
        .events
        .iter()
        .filter(|e| raceday::date_of(&e.event) == Some(TODAY))
        .cloned()
        .collect();
    let mut sim = simulator(seed);
    for race in 0..sim.races() {
        for second in 0..race_secs {
            events.extend(sim.trade(race, second, race_secs, NOW));
        }
        events.extend(sim.off(race, NOW));
        events.extend(sim.finish(race, NOW));
    }
    events
}

fn today_card(number: i64) -> &'static RaceCard {
    cards()
        .filter(|c| c.date == TODAY && c.race_number == number)
        .last()
        .expect("the simulator only reports races declared today")
}

fn scratched_today() -> BTreeSet<(i64, &'static str)> {
    feed()
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::RunnerScratched(s) if s.date == TODAY => {
                Some((s.race_number, s.horse_no.as_str()))
            }
            _ => None,
        })
        .collect()
}

fn opening_odds() -> BTreeMap<(i64, &'static str), f64> {
    feed()
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::OddsUpdated(o) if o.date == TODAY => Some(o),
            _ => None,
        })
        .flat_map(|o| {
            o.odds
                .iter()
                .filter_map(move |r| Some(((o.race_number, r.horse_no.as_str()), r.win_odds?)))
        })
        .collect()
}

fn assert_contract(env: &Envelope) {
    assert_eq!(env.event.validate(), Ok(()), "{}", env.to_json());
    let parsed = Envelope::decode(&env.subject(), env.to_json().as_bytes());
    assert_eq!(parsed.as_ref(), Ok(env), "{}", env.to_json());
}

fn odds_of(env: &Envelope) -> &OddsUpdated {
    match &env.event {
        Event::OddsUpdated(o) => o,
        other => panic!("expected OddsUpdated, got {other:?}"),
    }
}

fn result_of(env: &Envelope) -> &RaceResult {
    match &env.event {
        Event::RaceResultPublished(r) => r,
        other => panic!("expected RaceResultPublished, got {other:?}"),
    }
}

/// Hundredths of a second in `m:ss.cc`.
fn hundredths(time: &str) -> i64 {
    let (m, rest) = time.split_once(':').expect("m:ss.cc");
    let (s, c) = rest.split_once('.').expect("ss.cc");
    let n = |t: &str| t.parse::<i64>().expect("digits");
    n(m) * 6000 + n(s) * 100 + n(c)
}

/// The full Hong Kong record of a result agrees with the race as it was run: the class
/// is given; a finisher's last call is its position and its lengths behind match its time
/// behind the winner at 0.16 s a length; weights carried are HK's 113 to 133 lb, body
/// weights 1,050 to 1,200 lb; draws number the field.
fn assert_record(r: &RaceResult, field: usize) {
    let json = || format!("{r:?}");
    assert!(
        r.class.as_deref().is_some_and(|c| !c.is_empty()),
        "{}",
        json()
    );
    let calls = crate::running::calls(r.distance);
    let winner = r
        .runners
        .iter()
        .find(|x| x.position == Some(1))
        .and_then(|x| x.finish_time.as_deref())
        .map(hundredths)
        .expect("a winner with a time");
    let mut draws = BTreeSet::new();
    for x in &r.runners {
        assert!(
            x.actual_weight.is_some_and(|w| (113..=133).contains(&w)),
            "{}",
            json()
        );
        let draw = x.draw.expect("a draw");
        assert!((1..=field as i64).contains(&draw), "{}", json());
        assert!(draws.insert(draw), "draws are distinct: {}", json());
        let lbw = x.lbw.as_deref().expect("lbw");
        assert_eq!(Lbw::parse(lbw).map(|l| l.as_str()), Some(lbw));
        match (x.position, &x.finish_time) {
            (Some(position), Some(time)) => {
                let calls_run = x.running_positions.as_deref().expect("calls");
                assert_eq!(calls_run.len(), calls, "{}", json());
                assert_eq!(calls_run.last(), Some(&position), "{}", json());
                assert!(calls_run.iter().all(|&p| (1..=field as i64).contains(&p)));
                let weight = x.declared_weight.expect("a starter's body weight");
                assert!((1050..=1200).contains(&weight), "{}", json());
                let behind = (hundredths(time) - winner) as f64 / 16.0;
                let lengths = Lbw::parse(lbw).and_then(|l| l.lengths()).expect("a margin");
                if position == 1 {
                    assert_eq!(lbw, "-");
                } else if lengths < 0.4 {
                    assert!(["NOSE", "SH", "HD", "N"].contains(&lbw), "{lbw}");
                    assert!(behind < 0.4, "{lbw} for {behind} lengths");
                } else {
                    assert!(
                        (lengths - behind).abs() <= 0.125 + 1e-9,
                        "{lbw} for {behind} lengths"
                    );
                }
            }
            _ => {
                assert_eq!(lbw, "---", "{}", json());
                let early = x.running_positions.as_deref().unwrap_or_default();
                assert!(early.len() < calls, "{}", json());
            }
        }
    }
}
