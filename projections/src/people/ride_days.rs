//! A jockey's or a trainer's rides of one date, kept as one record
//! ([`crate::keys::person_rides_on`]) rather than a record a ride: sled spends about as
//! much on each record as a ride's own bytes, and a person rides a few to a dozen times a
//! meeting. The record holds each ride as its name (what [`crate::keys::person_ride`]
//! adds to the date's key: the race, the venue and the horse) and its value, in the order
//! of their names, so that a person's rides read as they did a record each: oldest first,
//! their names and values the same bytes ([`Day::items`]).
//!
//! A ride a result gave once and took away since (an amendment gave it to another
//! jockey, a retraction took the race) stays listed, its value empty (a ride's value
//! never is): the races a person was ever in a result of, which their records by
//! condition read as of any point of the log ([`Day::names`]).
//!
//! Each ride is two parts, each its length then its bytes (`encoding.rs`).

use std::collections::BTreeMap;

use crate::encoding::{part, put_part};
use crate::kv::StoreError;
use crate::scan::Item;
use crate::state::State;

/// The rides of one person on one date: each ride's name after the date's key, and its
/// value (empty: a ride taken away, still listed).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Day {
    rides: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Day {
    /// The day of a stored record under `key`; empty where there is none.
    pub(crate) fn read(key: &[u8], stored: Option<&[u8]>) -> Result<Day, StoreError> {
        let mut rides = BTreeMap::new();
        let Some(mut rest) = stored else {
            return Ok(Day { rides });
        };
        let corrupt = || {
            StoreError::Corrupt(format!(
                "{}: a day's rides cut short",
                String::from_utf8_lossy(key)
            ))
        };
        while !rest.is_empty() {
            let name = part(&mut rest).ok_or_else(corrupt)?;
            let value = part(&mut rest).ok_or_else(corrupt)?;
            rides.insert(name.to_vec(), value.to_vec());
        }
        Ok(Day { rides })
    }

    /// Gives the ride named `name` the value `value`, or (`None`) takes it away, where
    /// it stays listed if it was given (`given`: by the batch now written).
    pub(super) fn set(&mut self, name: Vec<u8>, value: Option<Vec<u8>>, given: bool) {
        match value {
            Some(value) => {
                self.rides.insert(name, value);
            }
            None if given || self.rides.contains_key(&name) => {
                self.rides.insert(name, Vec::new());
            }
            None => {}
        }
    }

    /// Whether it lists no ride, not even one taken away.
    pub(super) fn is_empty(&self) -> bool {
        self.rides.is_empty()
    }

    /// The record of the day.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, value) in &self.rides {
            put_part(&mut out, name);
            put_part(&mut out, value);
        }
        out
    }

    /// Its rides as a record a ride would hold them, under the day's `key`: each ride's
    /// key ([`crate::keys::person_ride`]) and value, oldest first; none taken away.
    pub(super) fn items(self, key: &[u8]) -> impl DoubleEndedIterator<Item = Item> + '_ {
        self.rides
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(move |(name, value)| (ride_key(key, &name), value))
    }

    /// Its rides' values, in the order of their names; none taken away.
    #[cfg(test)]
    pub(crate) fn values(&self) -> impl Iterator<Item = &[u8]> {
        self.rides
            .values()
            .filter(|value| !value.is_empty())
            .map(Vec::as_slice)
    }

    /// Every ride it lists, taken away since or not, oldest first: its key
    /// ([`crate::keys::person_ride`]) and its value (empty: taken away).
    pub(crate) fn listed<'d>(
        &'d self,
        key: &'d [u8],
    ) -> impl Iterator<Item = (Vec<u8>, &'d [u8])> + 'd {
        self.rides
            .iter()
            .map(move |(name, value)| (ride_key(key, name), value.as_slice()))
    }

    /// The key ([`crate::keys::person_ride`]) of every ride it lists, taken away since or
    /// not, oldest first.
    pub(crate) fn names<'d>(&'d self, key: &'d [u8]) -> impl Iterator<Item = Vec<u8>> + 'd {
        self.listed(key).map(|(ride, _)| ride)
    }
}

/// A ride's record as a batch leaves it (`None`: taken away), and whether the batch gave
/// it at all: a ride once given stays listed.
pub(super) type Given = (Option<Vec<u8>>, bool);

/// A day of a person's rides as a write leaves it: its key, and its rides as records a
/// ride would be ([`Day::items`]), oldest first.
pub(super) type Written = (Vec<u8>, Vec<Item>);

/// Writes a person's days as a batch changed them (`days`: by each day's key, its rides
/// given and taken away, by their names), and gives back each day as it leaves it: its
/// key and its rides as records a ride would be ([`Day::items`]), oldest first.
pub(super) fn write_days(
    s: &mut impl State,
    days: BTreeMap<Vec<u8>, BTreeMap<Vec<u8>, Given>>,
) -> Result<Vec<Written>, StoreError> {
    let mut written = Vec::with_capacity(days.len());
    for (key, rides) in days {
        let stored = s.get(&key)?;
        let mut day = Day::read(&key, stored.as_deref())?;
        for (name, (ride, given)) in rides {
            day.set(name, ride, given);
        }
        if day.is_empty() {
            // Only rides taken away that were never stored: nothing to list. (A ride
            // once given stays listed, so a stored day never empties.)
            continue;
        }
        let value = day.encode();
        if stored.as_ref() != Some(&value) {
            s.put(key.clone(), value);
        }
        let items = day.items(&key).collect();
        written.push((key, items));
    }
    Ok(written)
}

/// The key of the ride `name` of the day under `day`.
fn ride_key(day: &[u8], name: &[u8]) -> Vec<u8> {
    [day, name].concat()
}

/// What a ride's key ([`crate::keys::person_ride`]) adds to the key of its person's day
/// ([`crate::keys::person_rides_on`]): its name within the day.
pub(super) fn name_in_day(ride: &[u8], day: &[u8]) -> Vec<u8> {
    ride.get(day.len()..).unwrap_or_default().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys;

    #[test]
    fn a_day_reads_back_as_written_short_and_long_parts_alike() {
        let key = keys::person_rides_on("jockey", "z-purton", "2026-11-22");
        let mut day = Day::read(&key, None).expect("none");
        assert!(day.is_empty());
        let ride = |race: u8, horse: &str| {
            let ride = keys::person_ride("jockey", "z-purton", ("2026-11-22", race, "ST"), horse);
            name_in_day(&ride, &key)
        };
        day.set(ride(3, "A01"), Some(b"[\"three\"]".to_vec()), true);
        day.set(ride(1, "B02"), Some(vec![b'x'; 300]), true);
        // Given and taken away: listed, no ride.
        day.set(ride(2, "C03"), Some(b"[]".to_vec()), true);
        day.set(ride(2, "C03"), None, false);
        // Taken away in the batch that gave it.
        day.set(ride(4, "D04"), None, true);
        // Neither given nor held: nothing.
        day.set(ride(5, "E05"), None, false);
        let stored = day.encode();
        let read = Day::read(&key, Some(&stored)).expect("read");
        assert_eq!(read, day);
        let names: Vec<_> = read.names(&key).collect();
        let listed: Vec<_> = names
            .iter()
            .filter_map(|k| keys::parse_person_ride(k))
            .collect();
        assert_eq!(
            listed
                .iter()
                .map(|((_, n, _), h)| (*n, *h))
                .collect::<Vec<_>>(),
            [(1, "B02"), (2, "C03"), (3, "A01"), (4, "D04")]
        );
        assert_eq!(read.values().count(), 2);
        let items: Vec<Item> = read.items(&key).collect();
        assert_eq!(items.len(), 2);
        assert_eq!(
            keys::parse_person_ride(&items[0].0),
            Some((("2026-11-22", 1, "ST"), "B02")),
            "oldest first, each under its ride's key"
        );
        assert_eq!(items[0].1.len(), 300);
        assert_eq!(items[1].1, b"[\"three\"]");
        assert!(
            Day::read(&key, Some(&stored[..stored.len() - 1])).is_err(),
            "a record cut short is corrupt"
        );
    }
}
