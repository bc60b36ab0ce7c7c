//! The meetings of each date, for clients that discover which dates have racing: one
//! record a date (`keys::meetings`), rendered from the date's day record whenever a card,
//! a result or a retraction changes it, and read by a range scan of dates.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::facts::{Change, Facts, What};
use crate::keys;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::state::{Records, State};
use crate::store::Store;

/// One meeting: a venue's racing on a date, as the meetings endpoint lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({
    "date": "2026-11-18", "venue": "Happy Valley", "races": 9, "card": true, "results": 9
}))))]
pub struct MeetingRow {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub date: String,
    /// Racecourse.
    pub venue: String,
    /// How many races are known for the meeting: those with a card or a result.
    pub races: usize,
    /// Whether a race card of the meeting exists.
    pub card: bool,
    /// How many of its races have a result.
    pub results: usize,
}

/// The part of a date's day record (`facts.rs`) this read model is made from (the day
/// record has more, which is ignored).
#[derive(Default, Deserialize)]
struct DayRaces {
    #[serde(default)]
    cards: BTreeMap<String, BTreeSet<u8>>,
    #[serde(default)]
    results: BTreeMap<String, BTreeSet<u8>>,
}

/// The meetings of `date` from its day record as `s` holds it, in venue order.
pub(crate) fn meetings_of(s: &impl Records, date: &str) -> Result<Vec<MeetingRow>, StoreError> {
    let day: DayRaces = match s.get(&keys::day(date))? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| StoreError::Corrupt(format!("day {date}: {e}")))?,
        None => DayRaces::default(),
    };
    let venues: BTreeSet<&String> = day.cards.keys().chain(day.results.keys()).collect();
    Ok(venues
        .into_iter()
        .filter_map(|venue| {
            let cards = day.cards.get(venue);
            let results = day.results.get(venue);
            let races: BTreeSet<u8> = cards
                .into_iter()
                .chain(results)
                .flatten()
                .copied()
                .collect();
            (!races.is_empty()).then(|| MeetingRow {
                date: date.to_owned(),
                venue: venue.clone(),
                races: races.len(),
                card: cards.is_some_and(|c| !c.is_empty()),
                results: results.map_or(0, BTreeSet::len),
            })
        })
        .collect())
}

/// The dates whose meetings a batch may have changed: those of its cards, scratchings,
/// results, statuses and retractions of races listed.
#[derive(Debug, Default)]
pub(crate) struct Meetings {
    dates: BTreeSet<String>,
}

impl ReadModel for Meetings {
    fn apply<S: State>(&mut self, _: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        let touched = match &change.what {
            What::Card { .. } | What::Scratched(_) | What::Result { .. } => true,
            What::Retracted(r) => r.carded || r.resulted,
            _ => change.status_changed,
        };
        if let Some(date) = change.what.date().filter(|_| touched) {
            if !self.dates.contains(date) {
                self.dates.insert(date.to_owned());
            }
        }
        Ok(())
    }

    fn render<S: State>(&mut self, s: &mut S, _: u64, _: &Facts) -> Result<(), StoreError> {
        for date in std::mem::take(&mut self.dates) {
            render(s, &date)?;
        }
        Ok(())
    }
}

/// Writes the meetings record of `date` again (removes it when the date has none); a
/// record that would not change is not written.
fn render(s: &mut impl State, date: &str) -> Result<(), StoreError> {
    let rows = meetings_of(s, date)?;
    let key = keys::meetings(date);
    let stored = s.get(&key)?;
    if rows.is_empty() {
        if stored.is_some() {
            s.delete(key);
        }
        return Ok(());
    }
    // Plain data: serialising it cannot fail.
    let bytes = serde_json::to_vec(&rows).unwrap_or_default();
    if stored.as_deref() != Some(bytes.as_slice()) {
        s.put(key, bytes);
    }
    Ok(())
}

impl Store {
    /// The meetings from `from` to `to` (`YYYY-MM-DD`, both included), in date order,
    /// then venue order: one range scan of the meetings records.
    pub fn meetings(&self, from: &str, to: &str) -> Result<Vec<MeetingRow>, StoreError> {
        let mut rows = Vec::new();
        for item in self.kv.range(keys::meetings(from)..=keys::meetings(to)) {
            let (key, value) = item?;
            let day: Vec<MeetingRow> = serde_json::from_slice(&value).map_err(|e| {
                StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(&key)))
            })?;
            rows.extend(day);
        }
        Ok(rows)
    }

    /// The first date from `from` to `to` with a meeting: one seek, however many dates
    /// without one come first.
    pub fn first_meeting_date(&self, from: &str, to: &str) -> Result<Option<String>, StoreError> {
        let Some(item) = self
            .kv
            .range(keys::meetings(from)..=keys::meetings(to))
            .next()
        else {
            return Ok(None);
        };
        let (key, value) = item?;
        let day: Vec<MeetingRow> = serde_json::from_slice(&value)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(&key))))?;
        Ok(day.into_iter().next().map(|row| row.date))
    }
}
