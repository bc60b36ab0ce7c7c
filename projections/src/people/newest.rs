//! A person's newest rides, which their record shows and whose tag its head holds
//! (`rides.rs`): read back from the end of their days ([`newest_rides`]), or, where a
//! write of their days follows one the fold saw, known from the newest rides that write
//! left and the days this one wrote ([`Newest::after_write`]). Reading them back takes
//! one to several scans of the store; most results of a person read none.
//!
//! Only the people's model writes their days, a person's at a time, and a batch hands
//! what it knows on to the next batch of its store only once it is written whole
//! ([`crate::fold::Kept`]), so what it knows is what the store holds.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::docs::{Role, RECENT};
use super::ride_days::{Day, Written};
use crate::keys;
use crate::kv::StoreError;
use crate::scan::{Item, Scan};
use crate::state::Records;

/// People's newest rides as the writes of the fold left them, each as [`newest_rides`]
/// reads them back.
#[derive(Debug, Default)]
pub(crate) struct Newest(HashMap<(Role, String), Vec<Item>>);

/// The newest rides a fold hands on to the next batch ([`Newest::kept`]) of at most this
/// many people; past them it hands on none, so that what a replay of a long log holds
/// between its batches stays small (20 rides of about 150 bytes a person).
const KEPT_PEOPLE: usize = 8_192;

impl Newest {
    /// The newest rides of `person` once their `days` are written (each day the write
    /// changed, as it leaves it): from those the last write of theirs left, where they
    /// tell ([`merged`]), else read back from `s`, which holds the write.
    pub(super) fn after_write(
        &mut self,
        s: &impl Records,
        person: (Role, String),
        days: Vec<Written>,
    ) -> Result<&[Item], StoreError> {
        let mut entry = self.0.entry(person);
        // Taken out to be merged, not copied: each is replaced below.
        let before = match &mut entry {
            Entry::Occupied(held) => Some(std::mem::take(held.get_mut())),
            Entry::Vacant(_) => None,
        };
        let rides = match before.and_then(|before| merged(before, days)) {
            Some(rides) => rides,
            None => {
                let (role, id) = entry.key();
                match newest_rides(s, *role, id) {
                    Ok(rides) => rides,
                    Err(e) => {
                        // What was taken out is no longer known.
                        if let Entry::Occupied(held) = entry {
                            held.remove();
                        }
                        return Err(e);
                    }
                }
            }
        };
        let held = entry.or_default();
        *held = rides;
        Ok(held)
    }

    /// Forgets `person`, whom a write left without a ride.
    pub(super) fn forget(&mut self, person: &(Role, String)) {
        self.0.remove(person);
    }

    /// What the next batch of the store may start from, once this one is written: all
    /// of it, while it holds [`KEPT_PEOPLE`] people at most.
    pub(super) fn kept(self) -> Newest {
        match self.0.len() {
            n if n > KEPT_PEOPLE => Newest::default(),
            _ => self,
        }
    }
}

/// A person's newest rides after a write, from `before` (their newest rides before it, as
/// [`newest_rides`] reads them) and `days` (the days it wrote of them): the rides of
/// `before` on other days and every ride of `days`, newest first, [`RECENT`] at most.
/// `None` where rides older than all of `before`, which it does not hold, may be among
/// them: where it held [`RECENT`] rides and the write took some away, or gave rides older
/// than its oldest.
fn merged(before: Vec<Item>, days: Vec<Written>) -> Option<Vec<Item>> {
    // Every ride neither in `before` nor on a day written is older than `before`'s
    // oldest.
    let every_ride_known = before.len() < RECENT;
    let oldest = before.last().map(|(key, _)| key.clone());
    let on_a_day_written = |ride: &[u8]| days.iter().any(|(day, _)| ride.starts_with(day));
    let mut rides: Vec<Item> = before
        .into_iter()
        .filter(|(key, _)| !on_a_day_written(key))
        .collect();
    rides.extend(days.into_iter().flat_map(|(_, items)| items));
    rides.sort_unstable_by(|a, b| b.0.cmp(&a.0));
    rides.truncate(RECENT);
    let none_older_missed = rides.len() == RECENT
        && oldest
            .zip(rides.last())
            .is_some_and(|(oldest, last)| last.0 >= oldest);
    (every_ride_known || none_older_missed).then_some(rides)
}

/// The [`RECENT`] newest rides of `(role, id)`, newest first, each as a record a ride
/// would be ([`Day::items`]): read back from their newest day, then the day before it,
/// then as many days more as the days before the newest say the rest needs (the newest
/// may be a meeting under way), and so on until the rides or the days run out. A bulk
/// load answers such a read from memory where every day it reads is held
/// ([`crate::loader_cache`]), so it reads no more days than the rides need, as far as
/// they tell.
pub(super) fn newest_rides(
    s: &impl Records,
    role: Role,
    id: &str,
) -> Result<Vec<Item>, StoreError> {
    let prefix = keys::person_rides(role.name(), id);
    let mut days = 1;
    loop {
        let read = s.scan(&prefix, Scan::Backward, days)?;
        let whole = read.len() < days;
        let mut rides = Vec::with_capacity(RECENT);
        let mut newest = 0;
        for (n, (key, value)) in read.into_iter().enumerate() {
            let day = Day::read(&key, Some(&value))?;
            rides.extend(day.items(&key).rev().take(RECENT - rides.len()));
            if rides.len() == RECENT {
                return Ok(rides);
            }
            if n == 0 {
                newest = rides.len();
            }
        }
        if whole {
            return Ok(rides);
        }
        // At the rate of the whole days read, those before the newest (a day may list
        // only rides taken away since: one ride a day at least is assumed).
        let before = (rides.len() - newest).max(days - 1);
        let more = match days - 1 {
            0 => 1,
            older => ((RECENT - rides.len()) * older).div_ceil(before.max(1)),
        };
        days += more;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Purton's ride in race `n` of day `d` of September 2024.
    fn ride(d: u32, n: u8) -> Item {
        let date = format!("2024-09-{d:02}");
        let key = keys::person_ride("jockey", "z-purton", (&date, n, "ST"), "A1");
        (key, vec![n])
    }

    /// Purton's day `d` as a write leaves it, with his rides in `races`.
    fn day(d: u32, races: &[u8]) -> Written {
        let date = format!("2024-09-{d:02}");
        let key = keys::person_rides_on("jockey", "z-purton", &date);
        (key, races.iter().map(|n| ride(d, *n)).collect())
    }

    /// His twenty newest rides: races 1 and 2 of days 11 to 20, newest first.
    fn twenty() -> Vec<Item> {
        (11..=20)
            .rev()
            .flat_map(|d| [ride(d, 2), ride(d, 1)])
            .collect()
    }

    #[test]
    fn a_writes_newest_rides_are_known_from_those_before_it_only_where_they_tell() {
        let before = twenty();
        assert_eq!(before.len(), RECENT);
        let after = merged(before.clone(), vec![day(21, &[1])]).expect("a new day");
        assert_eq!(after[0], ride(21, 1));
        assert_eq!(after[1..], before[..RECENT - 1]);

        let mut amended = day(20, &[1, 2]);
        amended.1[0].1 = b"amended".to_vec();
        let after = merged(before.clone(), vec![amended.clone()]).expect("a day rewritten");
        assert_eq!(after[1], amended.1[0], "the ride as written, not as it was");
        assert_eq!(after[2..], before[2..], "each ride once");

        let older = merged(before.clone(), vec![day(5, &[1])]);
        assert_eq!(
            older,
            Some(before.clone()),
            "a ride older than all: not among them"
        );

        // A ride taken away: the twentieth newest may be on a day none of them is on.
        assert_eq!(merged(before.clone(), vec![day(20, &[1])]), None);
        // Even with an older ride given in the same write: days 6 to 10 may hold newer.
        assert_eq!(
            merged(before.clone(), vec![day(20, &[1]), day(5, &[1, 2])]),
            None
        );

        // Fewer than twenty are all of them: what a write takes away is known.
        let few = before[..5].to_vec();
        let after = merged(few.clone(), vec![day(20, &[])]).expect("all known");
        assert_eq!(after, few[2..]);
    }
}
