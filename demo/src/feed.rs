//! What the demo generates: a feed of events in the order a feeder publishes them, and
//! the race of it the start-up banner shows.

use racing_events::{Envelope, Event};

/// A generated demo feed: events in the order a feeder would publish them.
#[derive(Debug, Clone)]
pub struct DemoFeed {
    /// Of a season: profiles first, then each meeting in date order: cards, scratchings,
    /// then each race's price moves before the off and its result (past meetings), or
    /// opening odds (today's meeting). The last meeting
    /// run shows a feeder's correction: its first result is published under the other
    /// racecourse, retracted there (`RaceRetracted`), then published right. Of a meeting
    /// that [`Calendar::next_meeting`] declares: that meeting's cards, scratchings and
    /// opening odds. Odds and scratchings name their venue.
    pub events: Vec<Envelope>,
    /// The date of the last meeting, `YYYY-MM-DD`: declared, not yet run.
    pub today: String,
    /// How many meetings the demo has declared, today's included.
    pub meetings: usize,
    /// How many horses have a profile.
    pub horses: usize,
}

/// A race of the feed's last run meeting, for the start-up banner's examples: the demo's
/// dates move with the day it is run on, so fixed dates in a README would not answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The meeting's date, `YYYY-MM-DD`.
    pub date: String,
    /// Its last race.
    pub race_number: i64,
    /// That race's winner (a horse with a profile and form).
    pub horse_no: String,
    /// The race's opening prices' place in the feed's events, from 1: their stream
    /// sequence in a stream that held nothing before the season (the only one demo mode
    /// publishes it into), so an `as_of` that shows the market as it opened.
    pub opening_seq: Option<u64>,
}

impl DemoFeed {
    /// The last race with a result, its winner, and where its market opened.
    pub fn example(&self) -> Option<Example> {
        let (date, race_number, horse_no) =
            self.events.iter().rev().find_map(|e| match &e.event {
                Event::RaceResultPublished(r) => Some((
                    r.date.clone(),
                    r.race_number,
                    r.runners
                        .iter()
                        .find(|x| x.position == Some(1))?
                        .horse_no
                        .clone(),
                )),
                _ => None,
            })?;
        let opening = self.events.iter().position(|e| {
            matches!(&e.event, Event::OddsUpdated(o) if o.date == date && o.race_number == race_number)
        });
        Some(Example {
            opening_seq: opening.map(|i| i as u64 + 1),
            date,
            race_number,
            horse_no,
        })
    }
}
