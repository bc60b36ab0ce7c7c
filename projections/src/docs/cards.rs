//! The race-card documents: a date's card, its scratched runners left out.

use racing_events::{CardRunner, RaceCard};
use serde::Serialize;

use super::{main_meeting, to_json, venues, Meeting, Rendered};
use crate::status::Status;

/// The race card of a date: races in ascending race number,
/// scratched runners removed.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RaceCard, examples(json!({
    "date": "2026-11-21", "venue": "Sha Tin",
    "races": [{
        "race_number": 1, "race_name": "THE SHA TIN TROPHY", "distance": 1600,
        "class": "Group 3",
        "runners": [
            {"horse_no": "E271", "horse_name": "GOLDEN SIXTY", "jockey": "Z Purton",
             "trainer": "F C Lor", "draw": 4, "weight": 133},
            {"horse_no": "CA206", "horse_name": "ROMANTIC WARRIOR",
             "jockey": "J McDonald", "trainer": "C S Shum", "draw": 7, "weight": 126}
        ]
    }]
}))))]
pub struct CardDoc<'a> {
    /// Meeting date, `YYYY-MM-DD`; for `/racecards/today`, the day it is in the service's
    /// time zone.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse.
    venue: &'a str,
    /// Only on a date with more than one meeting: every venue of the day.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// The meeting's races, ascending race number.
    races: &'a [CardRace<'a>],
}

/// One race of a race card.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardRace<'a> {
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: i64,
    /// Race name.
    race_name: &'a str,
    /// Race distance in metres.
    distance: i64,
    /// Race class, carried as a string (`Class 4`, `Group 1`, `Griffin`).
    class: &'a str,
    /// The race's status: left out for a race never given one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = super::RaceStatusName, required = false))]
    status: Option<&'a str>,
    /// When the race took its status (the `occurred_at` of the event that gave it, or of
    /// the result that finished it); left out with `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = String, format = DateTime, required = false)
    )]
    status_at: Option<&'a str>,
    /// Why, where the feed said; left out where it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    status_reason: Option<&'a str>,
    /// Declared runners, scratched ones removed.
    runners: Vec<CardRunnerDoc<'a>>,
}

/// A declared runner of a race card.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = CardRunner))]
pub struct CardRunnerDoc<'a> {
    /// Brand number.
    horse_no: &'a str,
    /// Registered name.
    horse_name: &'a str,
    /// Declared jockey.
    jockey: &'a str,
    /// Trainer.
    trainer: &'a str,
    /// Barrier draw, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    draw: i64,
    /// Weight carried, in pounds.
    weight: i64,
}

impl<'a> CardRunnerDoc<'a> {
    fn new(r: &'a CardRunner) -> Self {
        CardRunnerDoc {
            horse_no: &r.horse_no,
            horse_name: &r.horse_name,
            jockey: &r.jockey,
            trainer: &r.trainer,
            draw: r.draw,
            weight: r.weight,
        }
    }
}

/// Renders the race-card documents of a date, without the scratched runners, each race
/// with its status where it has one.
pub(crate) fn render_cards<'s>(
    date: &str,
    meetings: &[Meeting<RaceCard>],
    scratched: impl Fn(&RaceCard, &str) -> bool,
    status: impl Fn(&RaceCard) -> Option<&'s Status>,
) -> Rendered {
    let listed = venues(meetings);
    let main = main_meeting(meetings);
    let mut out = Rendered {
        days: Vec::new(),
        races: Vec::new(),
    };
    for (i, m) in meetings.iter().enumerate() {
        let races: Vec<CardRace<'_>> = m
            .races
            .iter()
            .map(|c| {
                let [status, status_at, status_reason] = Status::fields(status(c));
                CardRace {
                    race_number: c.race_number,
                    race_name: &c.race_name,
                    distance: c.distance,
                    class: &c.class,
                    status,
                    status_at,
                    status_reason,
                    runners: c
                        .runners
                        .iter()
                        .filter(|r| !scratched(c, &r.horse_no))
                        .map(CardRunnerDoc::new)
                        .collect(),
                }
            })
            .collect();
        let day = to_json(&CardDoc {
            date,
            venue: &m.venue,
            meetings: listed.as_deref(),
            races: &races,
        });
        if i == main {
            out.days.push((None, day.clone()));
        }
        out.days.push((Some(m.venue.clone()), day));
    }
    out
}
