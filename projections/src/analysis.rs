//! Records by condition: a horse's, a jockey's or a trainer's runs, wins, seconds, thirds
//! and places (the first three), strike rate and level-stake profit or loss, overall and
//! by venue, distance, going, class and draw, and for people by jockey and trainer
//! combination, over a range of dates and as of any point of the log. Worked out when
//! read: a horse's from its form entries; a person's from their days' records of rides
//! (a ride taken away since still listed, so that they list the races of any point:
//! `people/ride_days.rs`), each ride holding the run its horse's form entry records,
//! and where the results of a ride's date and venue changed after the point asked for,
//! from that form entry instead. Each is read as the records stood at the point, so an
//! answer `as_of` a point is the one that point would have given.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::form::YearsRead;
use crate::horse_runs::{percent, runs_of, Run};
use crate::keys;
use crate::kv::Kv;
use crate::kv::StoreError;
use crate::people::docs::{slug, Role};
use crate::people::ride_days::Day;
use crate::state::{Reads, Records};

/// Whose records: a horse's, or a jockey's or trainer's.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A horse, by brand number.
    Horse(&'a str),
    /// A jockey or a trainer, by id (the slug of the name).
    Person(Role, &'a str),
}

/// The dates counted, both included; `None`: from the first, to the last.
#[derive(Debug, Clone, Copy, Default)]
pub struct Span<'a> {
    /// The first date, `YYYY-MM-DD`.
    pub from: Option<&'a str>,
    /// The last date.
    pub to: Option<&'a str>,
}

impl Span<'_> {
    fn holds(&self, date: &str) -> bool {
        self.from.is_none_or(|from| date >= from) && self.to.is_none_or(|to| date <= to)
    }

    /// The keys under `prefix` (a prefix ending in its separator, followed by a date and
    /// the separator) whose date is within the span: from the first date's, up to past
    /// the last date's (a key goes on after its date with the separator, 0, below 1).
    fn keys_within(&self, prefix: &[u8]) -> std::ops::Range<Vec<u8>> {
        let with = |date: &str| [prefix, date.as_bytes()].concat();
        let start = self.from.map_or_else(|| prefix.to_vec(), with);
        let end = match self.to {
            Some(to) => [prefix, to.as_bytes(), &[1]].concat(),
            None => {
                // Past every key of the prefix: its last byte, the separator, one up.
                let mut end = prefix.to_vec();
                if let Some(last) = end.last_mut() {
                    *last += 1;
                }
                end
            }
        };
        // A span whose first date is after its last holds no key.
        if start > end {
            return end.clone()..end;
        }
        start..end
    }
}

/// The runs of `subject` within `span`, oldest first, as `s` holds them (now, or as of
/// `point` of the log); `now` holds the records as they are, whose races of each person
/// list every race they were ever in a result of, by date, so that only the span's are
/// read (each counted in `reads`, which stops the read at its deadline). `None` where the
/// subject has no run at all (in any span) in `s`: nothing is known of it then.
///
/// A person's run is the one their ride's record holds, which is written with its
/// horse's form entry from the same result, where that result is as it was at the
/// point ([`Settled`]); otherwise (as of a point before a result of its date and venue
/// changed, or a ride taken away since) it is read from the horse's form entry as it was
/// then, one horse's year of entries at a time.
pub(crate) fn runs(
    s: &impl Records,
    now: &Kv,
    reads: Reads<'_>,
    subject: Subject<'_>,
    span: Span<'_>,
    point: Option<u64>,
) -> Result<Option<Vec<Run>>, StoreError> {
    let all = match subject {
        Subject::Horse(horse) => runs_of(s, horse)?,
        Subject::Person(role, id) => {
            let mut runs = Vec::new();
            let mut years = YearsRead::default();
            let prefix = keys::person_rides(role.name(), id);
            for day in now.range(span.keys_within(&prefix)) {
                let (key, value) = day?;
                if rides_after_point(s, &prefix, &key)? {
                    continue;
                }
                let day = Day::read(&key, Some(&value))?;
                let mut settled = Settled::default();
                for (ride, held) in day.listed(&key) {
                    reads.note()?;
                    let run = if !held.is_empty() && settled.of(now, reads, point, &ride)? {
                        Some(crate::people::ride_record::run_of(role, &ride, held)?)
                    } else {
                        person_run(s, &mut years, role, id, &ride)?
                    };
                    runs.extend(run);
                }
            }
            if runs.is_empty() {
                // A race stays listed once a result gave it (a retraction or an amendment
                // may have taken the ride away since, and `s` may be a point before it):
                // the first of the person's races that holds a ride of theirs says
                // whether they have any.
                for day in now.prefix(&prefix) {
                    let (key, value) = day?;
                    if rides_after_point(s, &prefix, &key)? {
                        continue;
                    }
                    let day = Day::read(&key, Some(&value))?;
                    for ride in day.names(&key) {
                        reads.note()?;
                        if person_run(s, &mut years, role, id, &ride)?.is_some() {
                            return Ok(Some(runs));
                        }
                    }
                }
                return Ok(None);
            }
            return Ok(Some(runs));
        }
    };
    if all.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        all.into_iter().filter(|r| span.holds(&r.date)).collect(),
    ))
}

/// Of one date's rides, the venues whose results are now as they were at a point of the
/// log: those whose results document has not changed since. The document shows every
/// field of the run a ride records (its race's distance, going and class, each runner's
/// position, status, odds, draw, jockey and trainer), so where it has not changed, no
/// ride of its races has either, and the ride's record holds the run as it was then.
#[derive(Default)]
struct Settled {
    venues: Vec<(String, bool)>,
}

impl Settled {
    /// Whether the results of the venue and date of `ride` ([`keys::person_ride`]) are as
    /// they were at `point` (`None`: now, as they are).
    fn of(
        &mut self,
        now: &Kv,
        reads: Reads<'_>,
        point: Option<u64>,
        ride: &[u8],
    ) -> Result<bool, StoreError> {
        let Some(point) = point else {
            return Ok(true);
        };
        let ((date, _, venue), _) = keys::parse_person_ride(ride)
            .ok_or_else(|| StoreError::Corrupt("a person's ride key".into()))?;
        if let Some((_, settled)) = self.venues.iter().find(|(v, _)| v == venue) {
            return Ok(*settled);
        }
        reads.note()?;
        let results = keys::doc::DocKey::Results {
            date,
            venue: Some(venue),
        }
        .key();
        // Read after the day's rides: a result changed after the point by a commit
        // between the two reads moved this document too, and shows here.
        let settled = now
            .get(results)?
            .and_then(crate::docs::Doc::new)
            .is_some_and(|doc| doc.seq() <= point);
        self.venues.push((venue.to_owned(), settled));
        Ok(settled)
    }
}

/// Whether every ride listed in a person's record of a date's rides, under `key` (its
/// date after `prefix`, then the separator), was given after the point `s` stands at: so
/// that none had a result then. A result of a date is written with the date's own record
/// (`facts.rs`), which the date's first card, result or price made: where that was made
/// after the point, so was every result of the date, and no horse's form entry as of the
/// point is of one of its races.
fn rides_after_point(s: &impl Records, prefix: &[u8], key: &[u8]) -> Result<bool, StoreError> {
    let date = key
        .get(prefix.len()..key.len().saturating_sub(1))
        .and_then(|date| std::str::from_utf8(date).ok())
        .ok_or_else(|| StoreError::Corrupt("a person's rides of a date: its key".into()))?;
    s.made_after_point(&keys::day(date))
}

/// The run of person `id` in `role` in the race their listed ride `key`
/// ([`keys::person_ride`]) names, as `s` holds it (its horse's year read through
/// `years`): `None` where `s` holds no ride of theirs there.
fn person_run(
    s: &impl Records,
    years: &mut YearsRead,
    role: Role,
    id: &str,
    key: &[u8],
) -> Result<Option<Run>, StoreError> {
    let ((date, n, venue), horse) = keys::parse_person_ride(key)
        .ok_or_else(|| StoreError::Corrupt("a person's ride key".into()))?;
    let entry = keys::form_entry(horse, date, n, venue);
    let Some(value) = years.entry(s, &entry)? else {
        return Ok(None);
    };
    let run = Run::of_entry(&entry, &value)?;
    let name = match role {
        Role::Jockey => &run.jockey,
        Role::Trainer => &run.trainer,
    };
    Ok((slug(name) == id).then_some(run))
}

/// Runs, wins, seconds, thirds, places and the level-stake profit or loss of some runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Figures {
    /// Races taken part in: withdrawals and `TNP` left out.
    pub runs: u32,
    /// Of them, won (dead heats for first included).
    pub wins: u32,
    /// Of them, finished second (dead heats included).
    pub seconds: u32,
    /// Of them, finished third (dead heats included).
    pub thirds: u32,
    /// Of them, finished first, second or third: `wins + seconds + thirds`.
    pub places: u32,
    /// Wins in percent of runs, 1 decimal place (0.0 without runs).
    pub strike_rate: f64,
    /// Places in percent of runs, 1 decimal place.
    pub place_rate: f64,
    /// Runs with recorded win odds: the bets of `level_stake`.
    pub bets: u32,
    /// The profit or loss, in units, of a 1-unit win bet on each of `bets` at its recorded
    /// (decimal) win odds: `win_odds - 1` for a win, `-1` otherwise; 2 decimal places.
    pub level_stake: f64,
}

impl Figures {
    fn count(&mut self, run: &Run) {
        if !run.took_part() {
            return;
        }
        self.runs += 1;
        self.wins += u32::from(run.won());
        self.seconds += u32::from(run.position == Some(2));
        self.thirds += u32::from(run.position == Some(3));
        self.places += u32::from(run.placed());
        if let Some(odds) = run.win_odds {
            self.bets += 1;
            self.level_stake += if run.won() { odds - 1.0 } else { -1.0 };
        }
    }

    fn finish(mut self) -> Figures {
        self.strike_rate = percent(self.wins, self.runs);
        self.place_rate = percent(self.places, self.runs);
        self.level_stake = (self.level_stake * 100.0).round() / 100.0;
        if self.level_stake == 0.0 {
            // Never `-0.0`.
            self.level_stake = 0.0;
        }
        self
    }
}

/// Declares a row of a breakdown: the figures of its runs, then the value of the
/// condition (of the type given). Each row type lists every field itself, so that its
/// schema is one plain object.
macro_rules! row {
    ($(#[$doc:meta])* $name:ident, $value:ty, $value_doc:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct $name {
            /// Races taken part in.
            pub runs: u32,
            /// Of them, won.
            pub wins: u32,
            /// Of them, second.
            pub seconds: u32,
            /// Of them, third.
            pub thirds: u32,
            /// Of them, first, second or third.
            pub places: u32,
            /// Wins in percent of runs, 1 decimal place.
            pub strike_rate: f64,
            /// Places in percent of runs, 1 decimal place.
            pub place_rate: f64,
            /// Runs with recorded win odds.
            pub bets: u32,
            /// The profit or loss, in units, of a 1-unit win bet on each of `bets`.
            pub level_stake: f64,
            #[doc = $value_doc]
            pub value: $value,
        }

        impl $name {
            fn new(value: $value, f: Figures) -> $name {
                let f = f.finish();
                $name {
                    runs: f.runs,
                    wins: f.wins,
                    seconds: f.seconds,
                    thirds: f.thirds,
                    places: f.places,
                    strike_rate: f.strike_rate,
                    place_rate: f.place_rate,
                    bets: f.bets,
                    level_stake: f.level_stake,
                    value,
                }
            }
        }
    };
}

row! {
    /// One row of a breakdown by a named condition: a venue, a going, a class, a jockey
    /// or a trainer.
    Row, String, "The racecourse, going, class, or the person's name as the newest run of the row gives it."
}

row! {
    /// One row of a breakdown by a numbered condition: a distance or a draw.
    NumberRow, i64, "The distance in metres, or the barrier draw."
}

/// The records of a horse, a jockey or a trainer, as served.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Analysis, examples(json!({
    "subject": "jockey", "id": "z-purton", "name": "Z Purton",
    "from": "2026-09-01", "to": null,
    "overall": {"runs": 120, "wins": 30, "seconds": 19, "thirds": 14, "places": 63,
                "strike_rate": 25.0, "place_rate": 52.5, "bets": 120, "level_stake": -8.4},
    "by_venue": [{"runs": 80, "wins": 22, "seconds": 13, "thirds": 9, "places": 44,
                  "strike_rate": 27.5, "place_rate": 55.0, "bets": 80, "level_stake": 3.1,
                  "value": "Sha Tin"}],
    "by_distance": [], "by_going": [], "by_class": [], "by_draw": [],
    "by_trainer": [{"runs": 12, "wins": 4, "seconds": 2, "thirds": 1, "places": 7,
                    "strike_rate": 33.3, "place_rate": 58.3, "bets": 12, "level_stake": 6.2,
                    "value": "C S Shum"}]
}))))]
pub struct AnalysisDoc {
    /// `horse`, `jockey` or `trainer`.
    pub subject: &'static str,
    /// The horse's brand number, or the person's id.
    pub id: String,
    /// The name as the newest run counted gives it; `null` where none is counted.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub name: Option<String>,
    /// The first date counted, as asked; `null`: from the first run.
    #[cfg_attr(feature = "openapi", schema(required = true, format = Date))]
    pub from: Option<String>,
    /// The last date counted, as asked; `null`: to the last run.
    #[cfg_attr(feature = "openapi", schema(required = true, format = Date))]
    pub to: Option<String>,
    /// Every run counted.
    pub overall: Figures,
    /// By racecourse, in name order.
    pub by_venue: Vec<Row>,
    /// By race distance in metres, shortest first.
    pub by_distance: Vec<NumberRow>,
    /// By going, in name order (runs whose result gave none left out).
    pub by_going: Vec<Row>,
    /// By race class, in name order (runs whose result gave none left out).
    pub by_class: Vec<Row>,
    /// By barrier draw, lowest first (runs whose result gave none left out).
    pub by_draw: Vec<NumberRow>,
    /// For a trainer and a horse: by jockey, most runs first, then by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub by_jockey: Option<Vec<Row>>,
    /// For a jockey and a horse: by trainer, most runs first, then by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub by_trainer: Option<Vec<Row>>,
}

/// The analysis of `runs` (oldest first) of `subject` over `span`.
pub(crate) fn analyse(runs: &[Run], subject: Subject<'_>, span: Span<'_>) -> AnalysisDoc {
    let mut overall = Figures::default();
    let mut venue: BTreeMap<&str, Figures> = BTreeMap::new();
    let mut distance: BTreeMap<i64, Figures> = BTreeMap::new();
    let mut going: BTreeMap<&str, Figures> = BTreeMap::new();
    let mut class: BTreeMap<&str, Figures> = BTreeMap::new();
    let mut draw: BTreeMap<i64, Figures> = BTreeMap::new();
    // By the person's id: the newest name given and the figures.
    let mut jockey: BTreeMap<String, (&str, Figures)> = BTreeMap::new();
    let mut trainer: BTreeMap<String, (&str, Figures)> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.took_part()) {
        overall.count(run);
        venue.entry(&run.venue).or_default().count(run);
        distance.entry(run.distance).or_default().count(run);
        if !run.going.is_empty() {
            going.entry(&run.going).or_default().count(run);
        }
        if let Some(c) = run.class.as_deref() {
            class.entry(c).or_default().count(run);
        }
        if let Some(d) = run.draw {
            draw.entry(d).or_default().count(run);
        }
        for (by, name) in [(&mut jockey, &run.jockey), (&mut trainer, &run.trainer)] {
            let row = by.entry(slug(name)).or_insert((name, Figures::default()));
            row.0 = name;
            row.1.count(run);
        }
    }
    let people = |m: BTreeMap<String, (&str, Figures)>| -> Vec<Row> {
        let mut out: Vec<Row> = m
            .into_values()
            .map(|(name, f)| Row::new(name.to_owned(), f))
            .collect();
        out.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.value.cmp(&b.value)));
        out
    };
    let newest = runs.iter().rev().find(|r| r.took_part());
    let (kind, id, name, by_jockey, by_trainer) = match subject {
        Subject::Horse(h) => (
            "horse",
            h,
            newest.map(|r| r.horse_name.clone()),
            Some(people(jockey)),
            Some(people(trainer)),
        ),
        Subject::Person(Role::Jockey, id) => (
            "jockey",
            id,
            newest.map(|r| r.jockey.clone()),
            None,
            Some(people(trainer)),
        ),
        Subject::Person(Role::Trainer, id) => (
            "trainer",
            id,
            newest.map(|r| r.trainer.clone()),
            Some(people(jockey)),
            None,
        ),
    };
    AnalysisDoc {
        subject: kind,
        id: id.to_owned(),
        name,
        from: span.from.map(str::to_owned),
        to: span.to.map(str::to_owned),
        overall: overall.finish(),
        by_venue: named(venue),
        by_distance: numbered(distance),
        by_going: named(going),
        by_class: named(class),
        by_draw: numbered(draw),
        by_jockey,
        by_trainer,
    }
}

/// The rows of a breakdown by a named condition, in name order.
fn named(by: BTreeMap<&str, Figures>) -> Vec<Row> {
    by.into_iter()
        .map(|(k, f)| Row::new(k.to_owned(), f))
        .collect()
}

/// The rows of a breakdown by a numbered condition, lowest first.
fn numbered(by: BTreeMap<i64, Figures>) -> Vec<NumberRow> {
    by.into_iter().map(|(k, f)| NumberRow::new(k, f)).collect()
}

impl crate::store::Store {
    /// The records of `subject` over `span`, sealed with their `ETag` at the sequence
    /// they reflect: as they are (the checkpoint), or (`as_of`) as they were once the log
    /// up to that sequence had been applied; `None` where the subject has no run (then).
    pub fn analysis(
        &self,
        subject: Subject<'_>,
        span: Span<'_>,
        as_of: Option<u64>,
    ) -> Result<Option<crate::docs::Doc>, StoreError> {
        let (runs, seq) = match as_of {
            None => {
                let seq = self.checkpoint()?;
                (
                    runs(&self.kv, &self.kv, self.reads(), subject, span, None)?,
                    seq,
                )
            }
            Some(seq) => {
                let past = crate::history::AsOf::new(&self.kv, self.reads(), seq);
                (
                    runs(&past, &self.kv, self.reads(), subject, span, Some(seq))?,
                    seq,
                )
            }
        };
        let Some(runs) = runs else {
            return Ok(None);
        };
        let body = crate::docs::json::to_json(&analyse(&runs, subject, span));
        crate::docs::Doc::new(crate::docs::seal(false, &body, seq).into())
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt("a sealed document".into()))
    }
}

/// Whether a change of the record under `key` may change an analysis: a horse's form,
/// whose head is written whenever one of its entries changes (every run an analysis
/// counts is a form entry).
pub fn changes_analyses(key: &[u8]) -> bool {
    key.starts_with(&crate::keys::doc::DocKey::Form("").key())
}

#[cfg(test)]
mod tests;
