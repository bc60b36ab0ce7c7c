//! The results documents: a date's results and each race's, rendered from the feed's results.

use std::collections::BTreeSet;

use racing_events::{RaceResult, ResultRunner};
use serde::Serialize;
use serde_json::value::RawValue;

use super::json::to_json;
use super::lengths::lbw_lengths;
use super::meeting::{main_meeting, venues, Meeting, Rendered};

/// All results of a date: races in ascending race number.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ResultsByDate, examples(json!({
    "date": "2026-11-18", "venue": "Happy Valley",
    "races": [{
        "race_number": 1, "race_name": "KITE HANDICAP", "distance": 1200, "going": "GOOD",
        "runners": [
            {"position": 1, "horse_no": "E271", "horse_name": "GOLDEN SIXTY",
             "jockey": "Z Purton", "trainer": "F C Lor", "finish_time": "1:09.45",
             "win_odds": 3.5, "status": null, "dead_heat": true, "lbw": "-",
             "lbw_lengths": 0.0, "running_positions": [3, 2, 1], "actual_weight": 133,
             "declared_weight": 1198, "draw": 4},
            {"position": null, "horse_no": "H123", "horse_name": "LUCKY STAR",
             "jockey": "K Teetan", "trainer": "J Size", "finish_time": null,
             "win_odds": 45.0, "status": "PU", "dead_heat": false, "lbw": "---",
             "lbw_lengths": null, "running_positions": [9, 12], "actual_weight": 118,
             "declared_weight": 1087, "draw": 11}
        ],
        "class": "Class 3"
    }]
}))))]
pub struct ResultsDoc<'a> {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse of this meeting.
    venue: &'a str,
    /// Only on a date with more than one meeting: every venue of the day, so a client
    /// can ask for the others with `?venue=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// The meeting's races, ascending race number: each as [`result_race`] rendered it.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<ResultRace>))]
    races: &'a [&'a RawValue],
}

/// One race of the results of a date.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResultRace<'a> {
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: i64,
    /// e.g. `KITE HANDICAP`.
    race_name: &'a str,
    /// Race distance in metres.
    distance: i64,
    /// Track condition, e.g. `GOOD`, `GOOD TO FIRM`.
    going: &'a str,
    /// Placed runners by position, then the rest as the feed listed them.
    runners: Vec<ResultRunnerDoc<'a>>,
    /// Race class, e.g. `Class 4`, `Group 1`. Left out where the result gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    class: Option<&'a str>,
}

/// The result of one race, with the meeting's date and venue: its fields after those of
/// [`RaceHead`] are those of [`ResultRace`], in the same order, which is how
/// [`render_results`] writes it. (The type gives the schema, and a test holds the bytes
/// written to it.)
#[cfg_attr(not(any(test, feature = "openapi")), allow(dead_code))]
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RaceResult, examples(json!({
    "date": "2026-11-18", "venue": "Happy Valley", "race_number": 1,
    "race_name": "KITE HANDICAP", "distance": 1200, "going": "GOOD",
    "runners": [
        {"position": 1, "horse_no": "E271", "horse_name": "GOLDEN SIXTY",
         "jockey": "Z Purton", "trainer": "F C Lor", "finish_time": "1:09.45",
         "win_odds": 3.5, "status": null, "dead_heat": true},
        {"position": 1, "horse_no": "CA206", "horse_name": "ROMANTIC WARRIOR",
         "jockey": "J McDonald", "trainer": "C S Shum", "finish_time": "1:09.45",
         "win_odds": 2.1, "status": null, "dead_heat": true, "lbw": "-",
         "lbw_lengths": 0.0, "running_positions": [5, 4, 1], "actual_weight": 126,
         "declared_weight": 1120, "draw": 7}
    ],
    "class": "Class 3"
}))))]
pub struct SingleRace<'a> {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse.
    venue: &'a str,
    /// Only on a date with more than one meeting: every venue of the day.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: i64,
    /// Race name.
    race_name: &'a str,
    /// Race distance in metres.
    distance: i64,
    /// Track condition.
    going: &'a str,
    /// Placed runners by position, then the rest as the feed listed them.
    runners: &'a [ResultRunnerDoc<'a>],
    /// Race class, e.g. `Class 4`, `Group 1`. Left out where the result gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    class: Option<&'a str>,
}

/// One runner of a race result (with `status` and `dead_heat`, then the runner's
/// record where the feed gave it: a field not given is left out).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ResultRunner))]
pub struct ResultRunnerDoc<'a> {
    /// Finishing position from 1 (shared in a dead heat); `null` for no placing.
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1))]
    position: Option<i64>,
    /// Brand number.
    horse_no: &'a str,
    /// Registered name.
    horse_name: &'a str,
    /// Jockey who rode.
    jockey: &'a str,
    /// Trainer.
    trainer: &'a str,
    /// Finishing time, `m:ss.cc`; `null` where there is none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    finish_time: Option<&'a str>,
    /// Final decimal win odds, stake included; `null` where there are none.
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1))]
    win_odds: Option<f64>,
    /// `null` for a normal finisher, otherwise the official code (`PU`, `WV-A`, ...).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    status: Option<&'a str>,
    /// Whether the position is shared with another runner.
    dead_heat: bool,
    /// Lengths behind the winner as officially written: `-` for the winner, `NOSE`, `SH`
    /// (short head), `HD` (head), `N` (neck), lengths with an optional fraction (`3/4`,
    /// `1-1/4`, `10-3/4`), or a code with no margin (`ML`, `DIST`, `---`). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, pattern = "^[0-9A-Z/-]{1,8}$")
    )]
    lbw: Option<&'a str>,
    /// `lbw` as a number of lengths behind the winner: `-` is 0, `1-1/4` is 1.25; `NOSE`,
    /// `SH`, `HD`, `N` are 0.05, 0.1, 0.2, 0.3. `null` where `lbw` is no number of lengths
    /// (`ML`, `DIST`, `---`). Present exactly when `lbw` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, required = false, minimum = 0))]
    lbw_lengths: Option<Option<f64>>,
    /// The runner's position at each call of the race, in order (1 to 6 positions of 1 to
    /// 99); the last is at the finish. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>, required = false, nullable = false, min_items = 1, max_items = 6))]
    running_positions: Option<&'a [i64]>,
    /// Weight carried, in pounds (90 to 160). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 90, maximum = 160)
    )]
    actual_weight: Option<i64>,
    /// The horse's own body weight declared before the race, in pounds (700 to 1500).
    /// Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 700, maximum = 1500)
    )]
    declared_weight: Option<i64>,
    /// Barrier draw, 1 to 99. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 1, maximum = 99)
    )]
    draw: Option<i64>,
}

/// What heads a race's result document: the meeting's.
#[derive(Serialize)]
struct RaceHead<'a> {
    date: &'a str,
    venue: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    meetings: Option<&'a [String]>,
}

/// Renders one race of a date's results: the race as the results document lists it.
pub(crate) fn result_race(r: &RaceResult) -> Box<RawValue> {
    // A race is strings, integers and finite floats: serialising it cannot fail.
    serde_json::value::to_raw_value(&result_race_doc(r)).unwrap_or_default()
}

fn result_race_doc(r: &RaceResult) -> ResultRace<'_> {
    let mut runners: Vec<&ResultRunner> = r.runners.iter().collect();
    // Placed runners by position, then the rest as the feed listed them (stable sort).
    runners.sort_by_key(|x| x.position.unwrap_or(i64::MAX));
    ResultRace {
        race_number: r.race_number,
        race_name: &r.race_name,
        distance: r.distance,
        going: &r.going,
        runners: runners
            .into_iter()
            .map(|x| ResultRunnerDoc {
                position: x.position,
                horse_no: &x.horse_no,
                horse_name: &x.horse_name,
                jockey: &x.jockey,
                trainer: &x.trainer,
                finish_time: x.finish_time.as_deref(),
                win_odds: x.win_odds,
                status: x.status.as_deref(),
                dead_heat: x.dead_heat,
                lbw: x.lbw.as_deref(),
                lbw_lengths: lbw_lengths(x.lbw.as_deref()),
                running_positions: x.running_positions.as_deref(),
                actual_weight: x.actual_weight,
                declared_weight: x.declared_weight,
                draw: x.draw,
            })
            .collect(),
        class: r.class.as_deref(),
    }
}

/// Assembles the results documents of a date, of the day and of each race, from its
/// meetings' races (each its number and its part as [`result_race`] rendered it).
/// `meetings` are in venue order, races in ascending race number.
pub(crate) fn render_results<R: AsRef<RawValue>>(
    date: &str,
    meetings: &[Meeting<(u8, R)>],
) -> Rendered {
    let listed = venues(meetings);
    let main = main_meeting(meetings);
    let mut out = Rendered {
        days: Vec::new(),
        races: Vec::new(),
    };
    // The race numbers the main meeting does not run that another venue's race already
    // answers without a venue: the first venue's, in alphabetical order, as the odds'.
    let mut elsewhere = BTreeSet::new();
    for (i, m) in meetings.iter().enumerate() {
        let races: Vec<&RawValue> = m.races.iter().map(|(_, r)| r.as_ref()).collect();
        let day = to_json(&ResultsDoc {
            date,
            venue: &m.venue,
            meetings: listed.as_deref(),
            races: &races,
        });
        let head = to_json(&RaceHead {
            date,
            venue: &m.venue,
            meetings: listed.as_deref(),
        });
        for (n, race) in &m.races {
            let single = single_race(&head, race.as_ref());
            let main_runs = || meetings[main].races.iter().any(|(other, _)| other == n);
            if i == main || (!main_runs() && elsewhere.insert(*n)) {
                out.races.push((*n, None, single.clone()));
            }
            out.races.push((*n, Some(m.venue.clone()), single));
        }
        if i == main {
            out.days.push((None, day.clone()));
        }
        out.days.push((Some(m.venue.clone()), day));
    }
    out
}

/// A race's result document ([`SingleRace`]): the fields of its `head` (a [`RaceHead`]
/// object), then those of its `race` (a [`ResultRace`] object), in one object.
fn single_race(head: &[u8], race: &RawValue) -> Vec<u8> {
    let race = race.get().as_bytes();
    let mut doc = Vec::with_capacity(head.len() + race.len());
    doc.extend_from_slice(head.strip_suffix(b"}").unwrap_or(head));
    doc.push(b',');
    doc.extend_from_slice(race.strip_prefix(b"{").unwrap_or(race));
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result as the demo's results are: placed runners, one without a placing.
    fn result() -> RaceResult {
        serde_json::from_value(serde_json::json!({
            "date": "2026-11-18", "venue": "Happy Valley", "race_number": 3,
            "race_name": "KITE HANDICAP", "distance": 1200, "going": "GOOD",
            "class": "Class 3",
            "runners": [
                {"position": null, "horse_no": "H123", "horse_name": "LUCKY STAR",
                 "jockey": "K Teetan", "trainer": "J Size", "finish_time": null,
                 "win_odds": 45.0, "status": "PU", "lbw": "---"},
                {"position": 1, "horse_no": "E271", "horse_name": "GOLDEN SIXTY",
                 "jockey": "Z Purton", "trainer": "F C Lor", "finish_time": "1:09.45",
                 "win_odds": 3.5, "status": null, "lbw": "-", "running_positions": [3, 2, 1]}
            ]
        }))
        .expect("a result")
    }

    #[test]
    fn a_race_document_is_written_as_its_type_serialises() {
        let r = result();
        let race = result_race_doc(&r);
        let venues = ["Happy Valley".to_owned(), "Sha Tin".to_owned()];
        for meetings in [None, Some(&venues[..])] {
            let head = to_json(&RaceHead {
                date: &r.date,
                venue: &r.venue,
                meetings,
            });
            let expected = to_json(&SingleRace {
                date: &r.date,
                venue: &r.venue,
                meetings,
                race_number: race.race_number,
                race_name: race.race_name,
                distance: race.distance,
                going: race.going,
                runners: &race.runners,
                class: race.class,
            });
            let written = single_race(&head, &result_race(&r));
            assert_eq!(
                String::from_utf8_lossy(&written),
                String::from_utf8_lossy(&expected)
            );
        }
    }
}
