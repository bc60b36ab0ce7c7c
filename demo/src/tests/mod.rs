//! The demo's unit tests: one season read by many tests, and what they share to read it.

mod calendar;
mod live;
mod season;
mod simulator;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use jiff::civil::Date;
use racing_events::{Envelope, Event, OddsUpdated, RaceCard, RaceResult, ResultRunner};

use crate::{season, season_and_calendar, DemoFeed, Simulator};

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

fn simulator(seed: u64) -> Simulator {
    Simulator::new(feed(), seed)
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
                .map(move |r| ((o.race_number, r.horse_no.as_str()), r.win_odds))
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
