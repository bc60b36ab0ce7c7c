//! The jockeys' and trainers' strike rates on a card's form: each person's rides and wins
//! over the 14 days before the race's date ([`STRIKE_DAYS`]), counted from the results of
//! those days as the records stand, where the card is rendered (in the fold, where it is
//! read, and as of a point of the log, from the versions then in force). Nothing but the
//! results is kept for them, so that a result writes no later race's record for them.
//!
//! Each day's counts are worked out once from its results ([`DayTally`]) and kept with the
//! hash of the records they were counted from ([`Days`]): a fold hands them on from batch
//! to batch, and reads them again only where those records changed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use racing_events::RaceResult;

use crate::docs::cards::Strike;
use crate::facts::Day;
use crate::horse_runs::{dates_from, percent, took_part};
use crate::keys;
use crate::kv::StoreError;
use crate::people::docs::{slug, Role};
use crate::race_parts;
use crate::state::{decode, Records};

/// The days before a race that its jockey's and trainer's strike rates span.
pub(crate) const STRIKE_DAYS: i64 = 14;

/// Most days whose counts a fold hands on to the next batch ([`Days::kept`]): a result
/// reaches the cards of the 14 days after it, and those count the 14 days before each.
const KEPT_DAYS: usize = 2_048;

/// A date's rides and wins by person, in each role ([`role_at`]): what its results count
/// (each runner that took part a ride of its jockey and of its trainer, a win where it
/// came first).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct DayTally(HashMap<String, [(u32, u32); 2], Hasher>);

impl DayTally {
    /// The counts of the results `results`.
    fn of<'a>(results: impl IntoIterator<Item = &'a RaceResult>) -> DayTally {
        let mut tally = HashMap::default();
        for result in results {
            for x in result
                .runners
                .iter()
                .filter(|x| took_part(x.status.as_deref()))
            {
                for (role, name) in [(Role::Jockey, &x.jockey), (Role::Trainer, &x.trainer)] {
                    let id = slug(name);
                    if id.is_empty() {
                        continue;
                    }
                    let roles: &mut [(u32, u32); 2] = tally.entry(id).or_default();
                    let counts = &mut roles[role_at(role)];
                    counts.0 += 1;
                    counts.1 += u32::from(x.position == Some(1));
                }
            }
        }
        DayTally(tally)
    }

    fn of_person(&self, role: Role, id: &str) -> (u32, u32) {
        self.0.get(id).map_or((0, 0), |roles| roles[role_at(role)])
    }
}

/// The strike rates of the dates rendered and the counts of the days they are summed
/// from, each day's kept with the hash of the records it was counted from (the day's
/// record and its results), and checked against them at its first use in a batch,
/// whatever wrote them, and again after a result of its date ([`Days::forget`]); a
/// date's strike rates kept while the counts of its 14 days are the same.
#[derive(Debug, Default)]
pub(crate) struct Days {
    counted: Counted,
    /// By date.
    people: HashMap<String, People, Hasher>,
}

/// A fast hash for maps keyed by dates and names (SipHash, the default, was a tenth of an
/// amendment's fold here).
type Hasher = foldhash::fast::RandomState;

#[derive(Debug, Default)]
struct Counted {
    kept: HashMap<String, (u128, Arc<DayTally>), Hasher>,
    /// The days checked since the batch began, and not changed since.
    checked: HashSet<String, Hasher>,
}

impl Days {
    /// What the next batch of the store may start from: the counts and strike rates, each
    /// while within [`KEPT_DAYS`].
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

    /// A result of `date` changed (published, amended or taken back): its counts are
    /// checked again at their next use.
    pub(crate) fn forget(&mut self, date: &str) {
        self.counted.checked.remove(date);
    }

    /// The strike rates of the races of `date`, as `s` holds the results of the 14 days
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
    /// The counts of `date` as `s` holds its results.
    fn tally(&mut self, s: &impl Records, date: &str) -> Result<Arc<DayTally>, StoreError> {
        if self.checked.contains(date) {
            if let Some((_, tally)) = self.kept.get(date) {
                return Ok(tally.clone());
            }
        }
        let day_record = s.get(&keys::day(date))?;
        let what = || format!("the day {date}");
        let day: Day = decode(day_record.as_deref(), what)?.unwrap_or_default();
        let mut records = Vec::new();
        for (venue, races) in &day.results {
            for &n in races {
                let key = keys::result(date, n, venue);
                let record = s.get(&key)?;
                records.push((key, record));
            }
        }
        let sources = race_parts::hash(
            std::iter::once(day_record.as_deref())
                .chain(records.iter().map(|(_, record)| record.as_deref())),
        );
        self.checked.insert(date.to_owned());
        if let Some((hash, tally)) = self.kept.get(date) {
            if *hash == sources {
                return Ok(tally.clone());
            }
        }
        let mut results = Vec::with_capacity(records.len());
        for (key, record) in &records {
            let what = || String::from_utf8_lossy(key).into_owned();
            results.extend(decode::<RaceResult>(record.as_deref(), what)?);
        }
        let tally = Arc::new(DayTally::of(&results));
        self.kept.insert(date.to_owned(), (sources, tally.clone()));
        Ok(tally)
    }
}

/// The strike rates of the jockeys and trainers of the races of a date: the counts of the
/// 14 days before it, each person's summed once however many runners they have.
#[derive(Debug)]
pub(crate) struct People {
    /// The 14 days before the date, and the counts of each, once read.
    days: Vec<String>,
    window: Vec<Option<Arc<DayTally>>>,
    /// By name as the cards give it, in each role ([`role_at`]): a date's cards are
    /// rendered at each event that changes one, and ask the same names again.
    strikes: HashMap<String, [Option<Strike>; 2], Hasher>,
}

/// Where a role's strike rate stands among a person's.
fn role_at(role: Role) -> usize {
    match role {
        Role::Jockey => 0,
        Role::Trainer => 1,
    }
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
