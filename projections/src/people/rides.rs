//! The fold of jockeys' and trainers' rides: a record a person and date holding their
//! rides of it ([`super::ride_days`]), and each season's figures changed by what a
//! result adds or takes away, so that what a result writes is what it changes, not a
//! person's history. A person's record is assembled when it is read, from the figures of
//! their seasons and their newest rides, read back from the end of their days
//! ([`served`]); what a batch writes of it is its head: a tag of what the record is made
//! of, which changes exactly when the record does, and the sequence it last changed at.
//! Each touched person's row in the list of their role is written once a batch, and the
//! list assembled from its rows. A day's record lists a ride taken away since as well,
//! for the person's records by condition as of any point (`analysis.rs`).
//!
//! A result costs the same whatever a person's history: the tag is taken from the
//! record's parts ([`tag_of`]), the figures of all their seasons standing in it as one
//! digest that a [`Tally`] keeps beside their totals, changed by the seasons a result
//! changes. Their seasons are read and their record rendered (with its `ETag`, of its
//! bytes) only when the record is read. Their newest rides, which the tag holds too, come
//! from those the write before it left and the days the result wrote, and are read back
//! only where those do not tell (`newest.rs`).

use std::collections::{BTreeMap, BTreeSet};

use racing_events::RaceResult;

use serde::{Deserialize, Serialize};

use super::docs::{
    is_ride, render_person, season, slug, Counts, JockeyList, PersonRow, Ride, Role, Summary,
    TrainerList,
};
use super::known::Known;
use super::newest::{newest_rides, Newest};
use super::ride_days::{name_in_day, write_days, Given};
use super::ride_record::{decode, encode};
use crate::docs::{etag, same_answer, seal, unseal, ETAG_LEN, HEAD_LEN};
use crate::facts::{self, What};
use crate::keys;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::scan::{Item, Scan};
use crate::state::{race_no, Records, State};

/// A change of a person's figures in one season: what a batch's rides counted in, less
/// what they counted out.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Change {
    rides: i64,
    wins: i64,
    seconds: i64,
    thirds: i64,
}

impl Change {
    /// `ride` counted in (`by` 1) or out (`by` -1).
    fn count(&mut self, ride: &Ride, by: i64) {
        self.rides += by;
        match ride.position {
            Some(1) => self.wins += by,
            Some(2) => self.seconds += by,
            Some(3) => self.thirds += by,
            _ => {}
        }
    }

    /// `c` so changed; `None` where it would count out more than `c` holds.
    fn of(self, c: Counts) -> Option<Counts> {
        let at = |n: u32, by: i64| u32::try_from(i64::from(n).checked_add(by)?).ok();
        Some(Counts {
            rides: at(c.rides, self.rides)?,
            wins: at(c.wins, self.wins)?,
            seconds: at(c.seconds, self.seconds)?,
            thirds: at(c.thirds, self.thirds)?,
        })
    }
}

/// What a batch has changed of people, held until it renders.
#[derive(Debug, Default)]
pub(crate) struct People {
    /// Everyone a result of the batch gave or took a ride, with what it changed of them.
    touched: BTreeMap<(Role, String), Touched>,
    /// The newest rides of the people written, by this batch and those before it that
    /// handed them on ([`People::keep`]).
    newest: Newest,
    /// Their tallies and seasons' figures the batch has read or written.
    tallies: Known<Tally>,
    seasons: Known<Counts>,
}

/// What a batch changed of one person.
#[derive(Debug, Default)]
struct Touched {
    /// The change of their figures in each season it touched (none where only a ride's
    /// odds or horse's name changed: the tag of their record is taken again all the
    /// same).
    seasons: BTreeMap<String, Change>,
    /// The rides given (`Some`) and taken away (`None`), by the key of their day, then
    /// their name in it.
    days: BTreeMap<Vec<u8>, BTreeMap<Vec<u8>, Given>>,
}

impl People {
    /// A model for a batch that starts where the one that kept `newest` ended.
    pub(crate) fn resumed(newest: Newest) -> People {
        People {
            newest,
            ..People::default()
        }
    }

    /// What the next batch of the store may start from, once this one has rendered: the
    /// newest rides of the people it and the batches before it wrote ([`Newest::kept`]).
    pub(crate) fn keep(self) -> Newest {
        debug_assert!(self.touched.is_empty());
        self.newest.kept()
    }

    /// One race's result replaced: `old` (the result stored before, if any) by `new`
    /// (`None`: retracted). The rides `old` gave are taken away and those of `new` given,
    /// so a ride that moved from one person to another leaves the first.
    fn replace(
        &mut self,
        old: Option<&RaceResult>,
        new: Option<&RaceResult>,
    ) -> Result<(), StoreError> {
        let given = new.map(|r| (r, 1));
        for (result, by) in old.map(|r| (r, -1)).into_iter().chain(given) {
            let race = (
                result.date.as_str(),
                race_no(result.race_number)?,
                result.venue.as_str(),
            );
            let season = season(&result.date).unwrap_or_default();
            for runner in result.runners.iter().filter(|r| is_ride(r)) {
                for role in Role::ALL {
                    let name = role.of(runner);
                    let id = slug(name);
                    if id.is_empty() {
                        continue;
                    }
                    let ride = Ride::new(result, runner, role);
                    let day = keys::person_rides_on(role.name(), &id, race.0);
                    let key = keys::person_ride(role.name(), &id, race, &runner.horse_no);
                    let name = name_in_day(&key, &day);
                    let touched = self.touched.entry((role, id)).or_default();
                    let seasons = &mut touched.seasons;
                    seasons.entry(season.clone()).or_default().count(&ride, by);
                    let rides = touched.days.entry(day).or_default();
                    let (held, given) = rides.entry(name).or_default();
                    *held = (by > 0).then(|| encode(&ride));
                    *given |= by > 0;
                }
            }
        }
        Ok(())
    }

    /// Writes the rides and the figures the batch changed, then each touched person's
    /// tally and the head of their record, and the lists of their roles; `seq` is what
    /// the records reflect.
    fn write(&mut self, s: &mut impl State, seq: u64) -> Result<(), StoreError> {
        // The roles whose lists changed (a row written or removed), and who left them.
        let mut lists = BTreeSet::new();
        let mut left = BTreeSet::new();
        for ((role, id), touched) in std::mem::take(&mut self.touched) {
            let days = write_days(s, touched.days)?;
            let tally_key = keys::person_tally(role.name(), &id);
            let stored = self.tallies.get(s, &tally_key)?;
            let mut tally = stored.unwrap_or_default();
            for (season, change) in touched.seasons {
                let key = keys::person_season(role.name(), &id, &season);
                let (old, new) = count(s, &mut self.seasons, key, change)?;
                tally.replace(&season, old, new).ok_or_else(|| {
                    let key = String::from_utf8_lossy(&tally_key);
                    StoreError::Corrupt(format!("{key}: fewer rides than a result takes away"))
                })?;
            }
            let doc = keys::person_doc(role.name(), &id);
            let row = keys::person_row(role.name(), &id);
            let person = (role, id);
            if tally.totals.rides == 0 {
                self.newest.forget(&person);
                if stored.is_some() {
                    self.tallies.set(&tally_key, None);
                    s.delete(tally_key);
                }
                if s.get(&doc)?.is_some() {
                    s.delete(doc);
                }
                if s.get(&row)?.is_some() {
                    s.delete(row);
                    lists.insert(role);
                } else if holds_whole_list(s, role)? {
                    // A store written before the rows were kept may list them there.
                    lists.insert(role);
                }
                left.insert(person);
                continue;
            }
            if stored != Some(tally) {
                self.tallies.set(&tally_key, Some(tally));
                // Plain data: serialising it cannot fail.
                s.put(tally_key, serde_json::to_vec(&tally).unwrap_or_default());
            }
            let (role, id) = person.clone();
            let newest = self.newest.after_write(s, person, days)?;
            put_head(s, doc, tag_of(&id, tally.seasons, newest), seq)?;
            let name = match newest.first() {
                Some((key, value)) => decode(key, value)?.name,
                None => String::new(),
            };
            let rides = tally.totals.rides;
            // Plain data: serialising it cannot fail.
            let value = serde_json::to_vec(&PersonRow { id, name, rides }).unwrap_or_default();
            if s.get(&row)?.as_ref() != Some(&value) {
                s.put(row, value);
                lists.insert(role);
            }
        }
        for role in lists {
            let key = keys::people_doc(role.name());
            if let Some(stored) = s.get(&key)? {
                let gone = |id: &str| left.contains(&(role, id.to_owned()));
                keep_rows_of_whole_list(s, role, &stored, gone)?;
            }
            if s.scan(&keys::person_rows(role.name()), Scan::Forward, 1)?
                .is_empty()
            {
                s.delete(key);
            } else {
                // A row a person, read and written on its own: a result writes the rows
                // of its people and this head, however many people the list holds.
                s.put(key, seal(false, &[], seq));
            }
        }
        Ok(())
    }
}

impl ReadModel for People {
    fn apply<S: State>(&mut self, _: &mut S, change: &facts::Change<'_>) -> Result<(), StoreError> {
        match &change.what {
            What::Result { old, new } => self.replace(old.as_ref(), Some(new)),
            What::Retracted(r) => self.replace(r.result.as_ref(), None),
            _ => Ok(()),
        }
    }

    fn render<S: State>(
        &mut self,
        s: &mut S,
        seq: u64,
        _: &facts::Facts,
    ) -> Result<(), StoreError> {
        self.write(s, seq)
    }
}

/// Changes the figures of one season of a person, under `key`, by `change` (`known`: the
/// seasons' figures held); a season left without a ride is removed. The figures before
/// and after (none: no ride).
fn count(
    s: &mut impl State,
    known: &mut Known<Counts>,
    key: Vec<u8>,
    change: Change,
) -> Result<(Counts, Counts), StoreError> {
    if change == Change::default() {
        return Ok((Counts::default(), Counts::default()));
    }
    let stored = known.get(s, &key)?.unwrap_or_default();
    let counts = change.of(stored).ok_or_else(|| {
        let key = String::from_utf8_lossy(&key);
        StoreError::Corrupt(format!("{key}: fewer rides than a result takes away"))
    })?;
    known.set(&key, (counts.rides > 0).then_some(counts));
    if counts.rides == 0 {
        s.delete(key);
    } else {
        // Plain data: serialising it cannot fail.
        s.put(key, serde_json::to_vec(&counts).unwrap_or_default());
    }
    Ok((stored, counts))
}

/// What a person's record is made of beyond their newest rides, kept as a result changes
/// their seasons: the figures of all their seasons added up, and a digest of them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Tally {
    /// Every season's figures added up: `rides` 0 where no ride is left.
    totals: Counts,
    /// The sum of each season's [`season_digest`], so that a season's change replaces
    /// its part without the others being read.
    seasons: u128,
}

impl Tally {
    /// One season's figures changed from `old` to `new` (no ride: none kept); `None`
    /// where that would count out more than the totals hold.
    fn replace(&mut self, season: &str, old: Counts, new: Counts) -> Option<()> {
        let part = |c: Counts| match c.rides {
            0 => 0,
            _ => season_digest(season, c),
        };
        self.seasons = self.seasons.wrapping_sub(part(old)).wrapping_add(part(new));
        let by = |n: u32, o: u32| i64::from(n) - i64::from(o);
        let change = Change {
            rides: by(new.rides, old.rides),
            wins: by(new.wins, old.wins),
            seconds: by(new.seconds, old.seconds),
            thirds: by(new.thirds, old.thirds),
        };
        self.totals = change.of(self.totals)?;
        Some(())
    }
}

/// One season's figures, hashed: their part of a [`Tally`]'s digest.
fn season_digest(season: &str, c: Counts) -> u128 {
    let mut bytes = Vec::with_capacity(season.len() + 17);
    bytes.extend_from_slice(season.as_bytes());
    bytes.push(0);
    for n in [c.rides, c.wins, c.seconds, c.thirds] {
        bytes.extend_from_slice(&n.to_be_bytes());
    }
    xxhash_rust::xxh3::xxh3_128(&bytes)
}

/// The digest of the figures of all of a person's seasons, as their [`Tally`] keeps it.
fn digest(summary: &Summary) -> u128 {
    summary.iter().fold(0u128, |sum, (season, c)| {
        sum.wrapping_add(season_digest(season, *c))
    })
}

/// The tag of the record of `id` whose seasons' digest is `seasons` and whose newest
/// rides are `newest` (as stored, newest first), in the form of an `ETag`: the record is
/// all theirs (its totals and its seasons come from the figures, its name and `recent`
/// from the rides), so the tag changes exactly when the record does, without the record
/// being rendered.
fn tag_of(id: &str, seasons: u128, newest: &[Item]) -> [u8; ETAG_LEN] {
    let mut bytes = Vec::with_capacity(256 * newest.len() + id.len() + 17);
    bytes.extend_from_slice(id.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(&seasons.to_be_bytes());
    for (key, value) in newest {
        for part in [key, value] {
            let len = u32::try_from(part.len()).unwrap_or(u32::MAX);
            bytes.extend_from_slice(&len.to_be_bytes());
            bytes.extend_from_slice(part);
        }
    }
    etag(&bytes)
}

/// The record of the jockey or trainer `id` as served, sealed with its `ETag` and the
/// sequence it last changed at ([`crate::docs::seal`]), assembled from its head, the
/// figures of their seasons and their newest rides; `None` without a ride. A store
/// written before the heads were kept holds the record whole under the head's key until a
/// result changes it, and it is served as stored.
pub(crate) fn served(
    s: &impl Records,
    role: Role,
    id: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    let key = keys::person_doc(role.name(), id);
    let mut tries = 0;
    loop {
        let Some(head) = s.get(&key)? else {
            return Ok(None);
        };
        if head.len() > HEAD_LEN {
            return Ok(Some(head));
        }
        let seq = head
            .get(ETAG_LEN..HEAD_LEN)
            .and_then(|seq| seq.try_into().ok())
            .map(u64::from_be_bytes)
            .ok_or_else(|| {
                StoreError::Corrupt(format!("{} is truncated", String::from_utf8_lossy(&key)))
            })?;
        let summary = figures(s, role, id)?;
        let newest = newest_rides(s, role, id)?;
        let tag = tag_of(id, digest(&summary), &newest);
        // The reads of a store are not isolated from its commits: one that lands between
        // them gives a record that is neither the one before it nor the one after, and
        // a tag other than its head's. Such a record is read again, a few times at most;
        // past them it is served as read. Either way with the `ETag` of its bytes.
        tries += 1;
        if head.get(..ETAG_LEN) == Some(&tag[..]) || tries == READS {
            let rides = newest
                .iter()
                .map(|(key, value)| decode(key, value))
                .collect::<Result<Vec<_>, _>>()?;
            let doc = render_person(id, &summary, &rides);
            return Ok(Some(seal(false, &doc, seq)));
        }
    }
}

/// Most reads of a person's record while commits land between the reads of its parts.
const READS: usize = 3;

/// Whether the head and the row written of `(role, id)` in `s` are what their figures
/// and rides, read back whole, make: the tag [`served`] takes of them, and the name of
/// their newest ride. A person without a ride has neither.
#[cfg(test)]
pub(super) fn written_as_read_back(
    s: &impl Records,
    role: Role,
    id: &str,
) -> Result<bool, StoreError> {
    let head = s.get(&keys::person_doc(role.name(), id))?;
    let row: Option<PersonRow> = crate::state::read(s, &keys::person_row(role.name(), id))?;
    let newest = newest_rides(s, role, id)?;
    let (Some(head), Some(row)) = (&head, row) else {
        return Ok(head.is_none() && newest.is_empty());
    };
    let name = match newest.first() {
        Some((key, value)) => decode(key, value)?.name,
        None => String::new(),
    };
    let tag = tag_of(id, digest(&figures(s, role, id)?), &newest);
    Ok(head.get(..ETAG_LEN) == Some(&tag[..]) && row.name == name)
}

/// The figures of every season of `(role, id)`, by season.
fn figures(s: &impl Records, role: Role, id: &str) -> Result<Summary, StoreError> {
    let prefix = keys::person_seasons(role.name(), id);
    let mut summary = Summary::new();
    for (key, value) in s.scan(&prefix, Scan::Forward, usize::MAX)? {
        let season = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
        let counts = serde_json::from_slice(&value).map_err(|e| corrupt(&key, e))?;
        summary.insert(season, counts);
    }
    Ok(summary)
}

/// Whether the head of `role`'s list holds the whole list, as in a store written before
/// the rows were kept.
fn holds_whole_list(s: &impl State, role: Role) -> Result<bool, StoreError> {
    let head = s.get(&keys::people_doc(role.name()))?;
    Ok(head.is_some_and(|stored| !unseal(&stored).is_empty()))
}

/// Where the head of `role`'s list (`stored`) holds the whole list, as a store written
/// before the rows were kept does: writes a row for each person of it who has none yet
/// and has not `gone` from it in this batch, so that the list read from the rows is whole
/// once the head no longer holds it.
fn keep_rows_of_whole_list(
    s: &mut impl State,
    role: Role,
    stored: &[u8],
    gone: impl Fn(&str) -> bool,
) -> Result<(), StoreError> {
    let body = unseal(stored);
    if body.is_empty() {
        return Ok(());
    }
    let rows = whole_list_rows(role, body)?;
    for row in rows {
        let row_key = keys::person_row(role.name(), &row.id);
        if !gone(&row.id) && s.get(&row_key)?.is_none() {
            // Plain data: serialising it cannot fail.
            s.put(row_key, serde_json::to_vec(&row).unwrap_or_default());
        }
    }
    Ok(())
}

/// The rows of a list stored whole (`body`), as a store written before the rows were
/// kept holds it under the head.
fn whole_list_rows(role: Role, body: &[u8]) -> Result<Vec<PersonRow>, StoreError> {
    match role {
        Role::Jockey => serde_json::from_slice::<JockeyList>(body).map(|l| l.jockeys),
        Role::Trainer => serde_json::from_slice::<TrainerList>(body).map(|l| l.trainers),
    }
    .map_err(|e| corrupt(&keys::people_doc(role.name()), e))
}

/// The list of `role`: the sequence its `head` (as stored) holds, and its rows, read from
/// `rows` (as stored, in key order) or, in a store written before the rows were kept,
/// from the whole list under the head.
pub(crate) fn list_rows<K: AsRef<[u8]>, V: AsRef<[u8]>>(
    role: Role,
    head: &[u8],
    rows: impl IntoIterator<Item = Result<(K, V), StoreError>>,
) -> Result<(u64, Vec<PersonRow>), StoreError> {
    let seq = head
        .get(ETAG_LEN..HEAD_LEN)
        .and_then(|seq| seq.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| {
            let key = keys::people_doc(role.name());
            StoreError::Corrupt(format!("{} is truncated", String::from_utf8_lossy(&key)))
        })?;
    let body = unseal(head);
    if !body.is_empty() {
        return Ok((seq, whole_list_rows(role, body)?));
    }
    let rows = rows
        .into_iter()
        .map(|item| {
            let (key, value) = item?;
            serde_json::from_slice::<PersonRow>(value.as_ref())
                .map_err(|e| corrupt(key.as_ref(), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((seq, rows))
}

fn corrupt(key: &[u8], e: serde_json::Error) -> StoreError {
    StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(key)))
}

/// Stores the head of a record whose tag is `tag`: the tag and `seq`, without the
/// record itself ([`served`] assembles it), unless the record stored answers the same
/// (its sequence then stays that of its last change). Written whole, a record would grow
/// by a row each season a person rides in, and each of their results would write it
/// again.
fn put_head(
    s: &mut impl State,
    key: Vec<u8>,
    tag: [u8; ETAG_LEN],
    seq: u64,
) -> Result<(), StoreError> {
    let head = [&tag[..], &seq.to_be_bytes()].concat();
    if !s
        .get(&key)?
        .is_some_and(|stored| same_answer(&stored, &head))
    {
        s.put(key, head);
    }
    Ok(())
}
