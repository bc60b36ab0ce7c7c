//! The builders of small, valid events: one a event type, with plausible defaults for
//! everything a test does not care about.

use crate::envelope::Envelope;
use crate::event::{
    CardRunner, Event, HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceRetracted,
    RaceStatusChanged, ResultRunner, RunnerOdds, RunnerScratched,
};
use crate::values::RaceStatus;

/// Wraps an event with a fresh id.
pub fn envelope(event: Event) -> Envelope {
    Envelope::new(event, "2026-11-21T12:00:00Z")
}

/// A whole profile of a five-year-old gelding with ten starts.
pub fn profile(horse_no: &str, name: &str) -> Event {
    Event::HorseProfileUpdated(Box::new(HorseProfile {
        horse_no: horse_no.into(),
        horse_name: name.into(),
        country_of_origin: "NZ".into(),
        colour: "Bay".into(),
        sex: "Gelding".into(),
        age: 5,
        trainer: "J Size".into(),
        owner: "The Syndicate".into(),
        total_stakes: 1_250_000,
        starts: 10,
        wins: 2,
        places: 3,
        seconds: None,
        thirds: None,
        sire: None,
        dam: None,
        dam_sire: None,
        import_type: None,
        current_rating: None,
        season_start_rating: None,
        season_stakes: None,
    }))
}

/// A horse profile with every field of the full Hong Kong record: seconds and thirds,
/// pedigree, import type, ratings and the season's stakes.
pub fn recorded_profile(horse_no: &str, name: &str) -> Event {
    let mut event = profile(horse_no, name);
    if let Event::HorseProfileUpdated(p) = &mut event {
        p.seconds = Some(1);
        p.thirds = Some(0);
        p.sire = Some("Street Cry".into());
        p.dam = Some("Clinque".into());
        p.dam_sire = Some("Casual Lies".into());
        p.import_type = Some("PPG".into());
        p.current_rating = Some(126);
        p.season_start_rating = Some(131);
        p.season_stakes = Some(12_500_000);
    }
    event
}

/// A result runner named `NAME {horse_no}`; with no position it pulled up (`PU`).
pub fn runner(position: Option<i64>, horse_no: &str) -> ResultRunner {
    ResultRunner {
        position,
        horse_no: horse_no.into(),
        horse_name: format!("NAME {horse_no}"),
        jockey: "Z Purton".into(),
        trainer: "J Size".into(),
        finish_time: position.map(|p| format!("1:09.{:02}", 40 + p)),
        win_odds: Some(4.5),
        dead_heat: false,
        status: if position.is_none() {
            Some("PU".into())
        } else {
            None
        },
        lbw: None,
        running_positions: None,
        actual_weight: None,
        declared_weight: None,
        draw: None,
    }
}

/// A 1200 m result on good ground.
pub fn result(date: &str, venue: &str, race: i64, runners: Vec<ResultRunner>) -> Event {
    Event::RaceResultPublished(RaceResult {
        date: date.into(),
        venue: venue.into(),
        race_number: race,
        race_name: format!("RACE {race} HANDICAP"),
        distance: 1200,
        going: "GOOD".into(),
        runners,
        class: None,
    })
}

/// A Class 4 card over 1650 m, draws in the order given.
pub fn card(date: &str, venue: &str, race: i64, horses: &[&str]) -> Event {
    Event::RaceCardDeclared(RaceCard {
        date: date.into(),
        venue: venue.into(),
        race_number: race,
        race_name: format!("RACE {race} HANDICAP"),
        distance: 1650,
        class: "Class 4".into(),
        runners: horses
            .iter()
            .enumerate()
            .map(|(i, h)| CardRunner {
                horse_no: (*h).into(),
                horse_name: format!("NAME {h}"),
                jockey: "H Bowman".into(),
                trainer: "C S Shum".into(),
                draw: i as i64 + 1,
                weight: 126,
            })
            .collect(),
    })
}

/// A runner withdrawn from race `race` at every venue of the date (no `venue`, as a v1
/// feeder sends it).
pub fn scratch(date: &str, race: i64, horse_no: &str) -> Event {
    scratched(date, None, race, horse_no)
}

/// A runner withdrawn from one venue's race.
pub fn scratch_at(date: &str, venue: &str, race: i64, horse_no: &str) -> Event {
    scratched(date, Some(venue), race, horse_no)
}

fn scratched(date: &str, venue: Option<&str>, race: i64, horse_no: &str) -> Event {
    Event::RunnerScratched(RunnerScratched {
        date: date.into(),
        venue: venue.map(Into::into),
        race_number: race,
        horse_no: horse_no.into(),
    })
}

/// New prices for some runners of race `race` at every venue of the date (no `venue`, as
/// a v1 feeder sends them).
pub fn odds(date: &str, race: i64, prices: &[(&str, f64)]) -> Event {
    priced(date, None, race, prices)
}

/// New prices for some runners of one venue's race.
pub fn odds_at(date: &str, venue: &str, race: i64, prices: &[(&str, f64)]) -> Event {
    priced(date, Some(venue), race, prices)
}

fn priced(date: &str, venue: Option<&str>, race: i64, prices: &[(&str, f64)]) -> Event {
    let win_only: Vec<(&str, Option<f64>, Option<f64>)> =
        prices.iter().map(|&(h, o)| (h, Some(o), None)).collect();
    odds_with_place(date, venue, race, &win_only)
}

/// New win and place prices for some runners of one venue's race (`(horse, win, place)`).
pub fn odds_with_place(
    date: &str,
    venue: Option<&str>,
    race: i64,
    prices: &[(&str, Option<f64>, Option<f64>)],
) -> Event {
    Event::OddsUpdated(OddsUpdated {
        date: date.into(),
        venue: venue.map(Into::into),
        race_number: race,
        odds: prices
            .iter()
            .map(|(h, win, place)| RunnerOdds {
                horse_no: (*h).into(),
                win_odds: *win,
                place_odds: *place,
            })
            .collect(),
    })
}

/// A race's status set, at one venue or (`venue` `None`) at every venue of the date.
pub fn status(
    date: &str,
    venue: Option<&str>,
    race: i64,
    status: RaceStatus,
    reason: Option<&str>,
) -> Event {
    Event::RaceStatusChanged(RaceStatusChanged {
        date: date.into(),
        venue: venue.map(Into::into),
        race_number: race,
        status: status.as_str().into(),
        reason: reason.map(Into::into),
    })
}

/// One venue's race withdrawn from the read models.
pub fn retraction(date: &str, venue: &str, race: i64, reason: &str) -> Event {
    Event::RaceRetracted(RaceRetracted {
        date: date.into(),
        venue: venue.into(),
        race_number: race,
        reason: reason.into(),
    })
}
