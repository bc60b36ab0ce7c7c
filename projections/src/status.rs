//! The status of each race (feed v1.2): kept as given, for one venue's race or, without a
//! venue, for the race of that number at every venue of the date (as odds and scratchings
//! are). A venue's race stands at the later, by stream sequence, of its own status and the
//! one given for every venue. A result published for a race that has a status finishes it;
//! a race never given a status has none, result or not, so that what a v1 feeder's events
//! make stays byte for byte what it was. Price moves for a race already off are counted.

use std::collections::HashMap;

use racing_events::{OddsUpdated, RaceResult, RaceStatus, RaceStatusChanged};
use serde::{Deserialize, Serialize};

use crate::keys;
use crate::kv::Record;
use crate::kv::StoreError;
use crate::scan::Scan;
use crate::state::{race_no, read, write, Records, State};

/// A race's status as the event that set it gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Status {
    /// As the wire writes it ([`RaceStatus::as_str`]).
    pub(crate) status: String,
    /// The `occurred_at` of the event that set it.
    pub(crate) at: String,
    /// Why, where the feed said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// The stream sequence of the event that set it: of a venue's own status and the one
    /// given for every venue, the later stands.
    pub(crate) seq: u64,
}

impl Status {
    /// The `status`, `status_at` and `status_reason` a document gives a race with
    /// `status` (`None`: a race never given one, whose documents have none of the three).
    pub(crate) fn fields(status: Option<&Status>) -> [Option<&str>; 3] {
        match status {
            Some(s) => [Some(&s.status), Some(&s.at), s.reason.as_deref()],
            None => [None; 3],
        }
    }

    /// Whether a price move now comes late: the race is off, run, or will not be run.
    fn after_the_off(&self) -> bool {
        RaceStatus::parse(&self.status).is_some_and(RaceStatus::is_past_betting)
    }

    /// The later of two statuses of a race, by stream sequence.
    fn later(self, other: Status) -> Status {
        if other.seq > self.seq {
            other
        } else {
            self
        }
    }
}

/// Stores the status a `RaceStatusChanged` (at stream sequence `seq`, `occurred_at`)
/// gives its race.
pub(crate) fn set(
    s: &mut impl State,
    seq: u64,
    occurred_at: &str,
    x: &RaceStatusChanged,
) -> Result<(), StoreError> {
    let n = race_no(x.race_number)?;
    let status = x.status().ok_or_else(|| {
        StoreError::Corrupt(format!("an unvalidated event: status {:?}", x.status))
    })?;
    let record = Status {
        status: status.as_str().to_owned(),
        at: occurred_at.to_owned(),
        reason: x.reason.clone(),
        seq,
    };
    write(s, keys::status(&x.date, n, x.venue.as_deref()), &record);
    Ok(())
}

/// A result published (at `seq`, `occurred_at`): a race that has a status is `finished`
/// from then on, until a later status says otherwise. Whether its status changed.
pub(crate) fn finish(
    s: &mut impl State,
    seq: u64,
    occurred_at: &str,
    r: &RaceResult,
) -> Result<bool, StoreError> {
    let n = race_no(r.race_number)?;
    if of_race(s, &r.date, n, Some(&r.venue))?.is_none() {
        return Ok(false);
    }
    let record = Status {
        status: RaceStatus::Finished.as_str().to_owned(),
        at: occurred_at.to_owned(),
        reason: None,
        seq,
    };
    write(s, keys::status(&r.date, n, Some(&r.venue)), &record);
    Ok(true)
}

/// One venue's race retracted: the status given for it goes (the one given for every
/// venue stays, as odds and scratchings given so do). Whether there was one.
pub(crate) fn retract(
    s: &mut impl State,
    date: &str,
    n: u8,
    venue: &str,
) -> Result<bool, StoreError> {
    let key = keys::status(date, n, Some(venue));
    let had = s.get(&key)?.is_some();
    if had {
        s.delete(key);
    }
    Ok(had)
}

/// The status of race `n` of `date` at `venue`: the later of its own and the one given
/// for every venue; without a venue, the one given for every venue. `None` for a race
/// never given one.
pub(crate) fn of_race(
    s: &impl Records,
    date: &str,
    n: u8,
    venue: Option<&str>,
) -> Result<Option<Status>, StoreError> {
    let every: Option<Status> = read(s, &keys::status(date, n, None))?;
    let Some(venue) = venue else {
        return Ok(every);
    };
    let own: Option<Status> = read(s, &keys::status(date, n, Some(venue)))?;
    Ok(merged(own, every))
}

/// A venue's race's status from its `own` and the one given for `every` venue: the later.
pub(crate) fn merged(own: Option<Status>, every: Option<Status>) -> Option<Status> {
    match (own, every) {
        (Some(own), Some(every)) => Some(own.later(every)),
        (own, every) => own.or(every),
    }
}

/// A race's status as the live socket's snapshot gives it: for one venue's race, or
/// without a venue for the race of that number at every venue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaceStatusRow {
    /// Race within the meeting.
    pub race_number: u8,
    /// The racecourse; `None` for the status given for every venue.
    pub venue: Option<String>,
    /// As the wire writes it (`open`, `off`, ...).
    pub status: String,
    /// The `occurred_at` of the event that set it.
    pub at: String,
    /// Why, where the feed said.
    pub reason: Option<String>,
}

/// The statuses of `records`, status records in key order (a prefix scan of
/// [`keys::statuses`]), as [`crate::store::Store::race_statuses`] gives them.
pub(crate) fn rows(
    records: impl Iterator<Item = Result<Record, StoreError>>,
) -> Result<Vec<RaceStatusRow>, StoreError> {
    let mut rows: Vec<RaceStatusRow> = Vec::new();
    let mut every: Option<(u8, Status)> = None;
    for item in records {
        let (key, value) = item?;
        let corrupt = || StoreError::Corrupt(String::from_utf8_lossy(&key).into_owned());
        let (n, venue) = keys::parse_status(&key).ok_or_else(corrupt)?;
        let venue = venue.map(str::to_owned);
        let own: Status = serde_json::from_slice(&value).map_err(|_| corrupt())?;
        let given = match &venue {
            None => {
                every = Some((n, own.clone()));
                own
            }
            Some(_) => match &every {
                Some((m, all)) if *m == n => own.later(all.clone()),
                _ => own,
            },
        };
        rows.push(RaceStatusRow {
            race_number: n,
            venue,
            status: given.status,
            at: given.at,
            reason: given.reason,
        });
    }
    Ok(rows)
}

/// The most venues' statuses of one race read to tell whether odds given without a venue
/// come late: far more venues than race on one date.
const MOST_VENUES: usize = 256;

/// Whether odds given for race `n` of `date` (at `venue`, or without one: at every venue)
/// come after the race is off. Odds without a venue come late where the race is off at any
/// venue: at one with a status of its own, or at any other, by the one given for all.
fn late(s: &impl Records, date: &str, n: u8, venue: Option<&str>) -> Result<bool, StoreError> {
    if venue.is_some() {
        return Ok(of_race(s, date, n, venue)?.is_some_and(|st| st.after_the_off()));
    }
    let prefix = keys::status(date, n, None);
    let every: Option<Status> = read(s, &prefix)?;
    if every.as_ref().is_some_and(Status::after_the_off) {
        return Ok(true);
    }
    for (key, value) in s.scan(&prefix, Scan::Forward, MOST_VENUES)? {
        if key.len() == prefix.len() {
            continue;
        }
        let own: Status = serde_json::from_slice(&value)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(&key))))?;
        let standing = match &every {
            Some(every) => own.later(every.clone()),
            None => own,
        };
        if standing.after_the_off() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The price moves of a batch that came after their race was off, counted for the
/// projector's metric; each race's answer is kept until a status of the batch changes.
#[derive(Debug, Default)]
pub(crate) struct LatePrices {
    /// Whether odds for `(date, race, venue)` come late, as found so far.
    known: HashMap<(String, u8, Option<String>), bool>,
    count: u64,
}

impl LatePrices {
    /// Counts `o` if it comes after its race is off.
    pub(crate) fn note(&mut self, s: &impl Records, o: &OddsUpdated) -> Result<(), StoreError> {
        let n = race_no(o.race_number)?;
        let race = (o.date.clone(), n, o.venue.clone());
        let late = match self.known.get(&race) {
            Some(&late) => late,
            None => {
                let late = late(s, &o.date, n, o.venue.as_deref())?;
                self.known.insert(race, late);
                late
            }
        };
        self.count += u64::from(late);
        Ok(())
    }

    /// A status changed: every answer kept may be stale.
    pub(crate) fn forget(&mut self) {
        self.known.clear();
    }

    /// The late moves counted.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }
}
