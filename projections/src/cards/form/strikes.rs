//! The jockeys' and trainers' strike rates on a card's form: each person's rides and wins
//! over the 14 days before the race's date ([`STRIKE_DAYS`]), summed where the card is
//! rendered (in the fold, where it is read, and as of a point of the log) from each date's
//! rides and wins by person ([`DayTally`], a record a date: [`keys::analysis::day_rides`],
//! versioned as the source records are). A result changes its date's record alone, and
//! writes no later race's record for them.
//!
//! A date's record is changed by what each result adds or takes away ([`Days::count`]),
//! so that it is what its results count (`DayTally::of`, which the tests hold it to).
//! The fold keeps each date's record it read or wrote decoded, with the hash of its bytes,
//! and a date's strike rates while its 14 days' records are the same; it hands them on
//! from batch to batch, and reads a record again at its first use in a batch.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::docs::cards::Strike;
use crate::horse_runs::{dates_from, percent};
use crate::keys;
use crate::kv::StoreError;
use crate::people::docs::{slug, Role};
use crate::race_parts;
use crate::state::{decode, Records, State};

/// The days before a race that its jockey's and trainer's strike rates span.
pub(crate) const STRIKE_DAYS: i64 = 14;

/// Most days whose records, and dates whose strike rates, a fold hands on to the next
/// batch ([`Days::kept`]): a result reaches the cards of the 14 days after it, and those
/// count the 14 days before each.
const KEPT_DAYS: usize = 2_048;

/// A fast hash for maps keyed by dates and names (SipHash, the default, was a tenth of an
/// amendment's fold here).
type Hasher = foldhash::fast::RandomState;

/// A date's rides and wins by person (the slug of their name), in each role
/// ([`role_at`]): what its results count, each runner that took part a ride of its
/// jockey and of its trainer, a win where it came first. A person with neither is not
/// listed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct DayTally(BTreeMap<String, [(u32, u32); 2]>);

impl DayTally {
    /// The counts of the results `results`, counted afresh.
    #[cfg(test)]
    pub(crate) fn of<'a>(
        results: impl IntoIterator<Item = &'a racing_events::RaceResult>,
    ) -> DayTally {
        let mut tally = DayTally::default();
        for result in results {
            let took_part = result
                .runners
                .iter()
                .filter(|x| crate::horse_runs::took_part(x.status.as_deref()));
            for x in took_part {
                for (role, name) in [(Role::Jockey, &x.jockey), (Role::Trainer, &x.trainer)] {
                    tally.add(role, &slug(name), 1, i64::from(x.position == Some(1)));
                }
            }
        }
        tally
    }

    /// Counts `rides` and `wins` (either may be negative: a result amended or taken
    /// back) for person `id` in `role`.
    fn add(&mut self, role: Role, id: &str, rides: i64, wins: i64) {
        if id.is_empty() {
            return;
        }
        let by = |n: u32, d: i64| u32::try_from((i64::from(n) + d).max(0)).unwrap_or(0);
        let roles = self.0.entry(id.to_owned()).or_default();
        let counts = &mut roles[role_at(role)];
        *counts = (by(counts.0, rides), by(counts.1, wins));
        if roles.iter().all(|&(rides, _)| rides == 0) {
            self.0.remove(id);
        }
    }

    fn of_person(&self, role: Role, id: &str) -> (u32, u32) {
        self.0.get(id).map_or((0, 0), |roles| roles[role_at(role)])
    }
}

/// Where a role's counts stand among a person's.
fn role_at(role: Role) -> usize {
    match role {
        Role::Jockey => 0,
        Role::Trainer => 1,
    }
}

/// The strike rates of the dates rendered and the days' records they are summed from.
#[derive(Debug, Default)]
pub(crate) struct Days {
    counted: Counted,
    /// By date.
    people: HashMap<String, People, Hasher>,
}

/// Each date's record as read or written, decoded, with the hash of its bytes.
#[derive(Debug, Default)]
struct Counted {
    kept: HashMap<String, (u128, Arc<DayTally>), Hasher>,
    /// The dates whose record was read or written since the batch began.
    checked: HashSet<String, Hasher>,
}

impl Days {
    /// What the next batch of the store may start from: the records and strike rates,
    /// each while within [`KEPT_DAYS`].
    pub(crate) fn kept(mut self) -> Days {
        if self.counted.kept.len() > KEPT_DAYS {
            self.counted.kept = HashMap::default();
        }
        if self.people.len() > KEPT_DAYS {
            self.people = HashMap::default();
        }
        self.counted.checked.clear();
        self
    }

    /// Counts in the records of their dates the rides and wins a changed result added or
    /// took away (`rides`: by role, person and date), and writes those records.
    pub(crate) fn count(
        &mut self,
        s: &mut impl State,
        rides: &BTreeMap<(Role, String, String), (i64, i64)>,
    ) -> Result<(), StoreError> {
        let mut changed: BTreeMap<&str, DayTally> = BTreeMap::new();
        for ((role, id, date), &(rides, wins)) in rides {
            let tally = match changed.entry(date.as_str()) {
                std::collections::btree_map::Entry::Occupied(known) => known.into_mut(),
                std::collections::btree_map::Entry::Vacant(new) => {
                    new.insert(DayTally::clone(&*self.counted.tally(s, date)?))
                }
            };
            tally.add(*role, id, rides, wins);
        }
        for (date, tally) in changed {
            let key = keys::analysis::day_rides(date);
            let bytes = if tally.0.is_empty() {
                s.delete(key);
                None
            } else {
                // Plain data: serialising it cannot fail.
                let bytes = serde_json::to_vec(&tally).unwrap_or_default();
                s.put(key, bytes.clone());
                Some(bytes)
            };
            let hash = race_parts::hash([bytes.as_deref()]);
            self.counted.keep(date, hash, Arc::new(tally));
        }
        Ok(())
    }

    /// The strike rates of the races of `date`, as `s` holds the records of the 14 days
    /// before it.
    pub(crate) fn people(
        &mut self,
        s: &impl Records,
        date: &str,
    ) -> Result<&mut People, StoreError> {
        if !self.people.contains_key(date) {
            self.people.insert(date.to_owned(), People::new(date));
        }
        let people = self
            .people
            .get_mut(date)
            .ok_or_else(|| StoreError::Corrupt(format!("the strike rates of {date}")))?;
        let mut same = true;
        for (day, kept) in people.days.iter().zip(&mut people.window) {
            let tally = self.counted.tally(s, day)?;
            if !kept.as_ref().is_some_and(|kept| Arc::ptr_eq(kept, &tally)) {
                *kept = Some(tally);
                same = false;
            }
        }
        if !same {
            people.strikes.clear();
        }
        Ok(people)
    }
}

impl Counted {
    /// The record of `date` as `s` holds it.
    fn tally(&mut self, s: &impl Records, date: &str) -> Result<Arc<DayTally>, StoreError> {
        if self.checked.contains(date) {
            if let Some((_, tally)) = self.kept.get(date) {
                return Ok(tally.clone());
            }
        }
        let key = keys::analysis::day_rides(date);
        let bytes = s.get(&key)?;
        let hash = race_parts::hash([bytes.as_deref()]);
        if let Some((kept, tally)) = self.kept.get(date) {
            if *kept == hash {
                let tally = tally.clone();
                self.checked.insert(date.to_owned());
                return Ok(tally);
            }
        }
        let what = || format!("the rides of {date}");
        let tally = Arc::new(decode::<DayTally>(bytes.as_deref(), what)?.unwrap_or_default());
        self.keep(date, hash, tally.clone());
        Ok(tally)
    }

    fn keep(&mut self, date: &str, hash: u128, tally: Arc<DayTally>) {
        self.checked.insert(date.to_owned());
        self.kept.insert(date.to_owned(), (hash, tally));
    }
}

/// The strike rates of the jockeys and trainers of the races of a date: the counts of the
/// 14 days before it, each person's summed once however many runners they have.
#[derive(Debug)]
pub(crate) struct People {
    /// The 14 days before the date, and the record of each, once read.
    days: Vec<String>,
    window: Vec<Option<Arc<DayTally>>>,
    /// By name as the cards give it, in each role ([`role_at`]): a date's cards are
    /// rendered at each event that changes one, and ask the same names again.
    strikes: HashMap<String, [Option<Strike>; 2], Hasher>,
}

impl People {
    fn new(date: &str) -> People {
        let days = dates_from(date, -STRIKE_DAYS);
        People {
            window: vec![None; days.len()],
            days,
            strikes: HashMap::default(),
        }
    }

    /// The strike rate of `name` in `role`.
    pub(crate) fn strike(&mut self, role: Role, name: &str) -> Strike {
        if let Some(strike) = self
            .strikes
            .get(name)
            .and_then(|roles| roles[role_at(role)])
        {
            return strike;
        }
        let id = slug(name);
        let (rides, wins) = if id.is_empty() {
            (0, 0)
        } else {
            self.window.iter().flatten().fold((0, 0), |(r, w), day| {
                let (rides, wins) = day.of_person(role, &id);
                (r + rides, w + wins)
            })
        };
        let strike = Strike {
            rides,
            wins,
            strike_rate: percent(wins, rides),
        };
        self.strikes.entry(name.to_owned()).or_default()[role_at(role)] = Some(strike);
        strike
    }
}
