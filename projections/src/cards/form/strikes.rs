//! The jockeys' and trainers' strike rates on a card's form: each person's rides and wins
//! over the 14 days before the race's date ([`STRIKE_DAYS`]), from their recent days or,
//! where those do not reach back so far, from their rides of the dates with results;
//! worked out once a date in each render.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use crate::docs::cards::Strike;
use crate::facts::Day;
use crate::horse_runs::{dates_from, percent};
use crate::kv::StoreError;
use crate::people::docs::{slug, Role};
use crate::state::Records;

/// The days before a race that its jockey's and trainer's strike rates span.
pub(crate) const STRIKE_DAYS: i64 = 14;

/// What a person's strike rate is counted from (the cards' `Pasts`, `form.rs`).
pub(crate) trait Tallies {
    /// The rides and wins of `person` (a role and an id) from the first day of `span` to
    /// its last, where their recent days reach back so far.
    fn between(
        &mut self,
        s: &impl Records,
        person: (Role, &str),
        span: (&str, &str),
    ) -> Result<Option<(u32, u32)>, StoreError>;

    /// Their rides and wins on `dates`.
    fn on(
        &mut self,
        s: &impl Records,
        person: (Role, &str),
        dates: &[String],
    ) -> Result<(u32, u32), StoreError>;
}

/// The strike rates of the jockeys and trainers of the races of each date a render works
/// forms out for (`form.rs`'s `refresh` and `amend`): nothing they are counted from
/// (people's recent days and rides, the dates with results) changes while the cards
/// render an event, and the races of a date share their people and their window of days.
#[derive(Debug, Default)]
pub(crate) struct Windows(HashMap<String, People>);

impl Windows {
    /// Those of the races of `date`.
    pub(super) fn of(&mut self, date: &str) -> &mut People {
        match self.0.entry(date.to_owned()) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => new.insert(People::of(date)),
        }
    }
}

/// The strike rates of a date's jockeys and trainers over the 14 days before it, each
/// worked out once however many runners they have: from their recent days, or where
/// those do not reach back so far, from their rides of the dates with results.
#[derive(Debug)]
pub(super) struct People {
    /// The 14 days before the date.
    window: Vec<String>,
    /// Its first and last days, where it has any.
    span: Option<(String, String)>,
    /// Those of them with results, once needed.
    dates: Option<Vec<String>>,
    /// By person, in each role ([`role_at`]).
    strikes: HashMap<String, [Option<Strike>; 2]>,
}

/// Where a role's strike rate stands among a person's.
fn role_at(role: Role) -> usize {
    match role {
        Role::Jockey => 0,
        Role::Trainer => 1,
    }
}

impl People {
    fn of(date: &str) -> People {
        let window = dates_from(date, -STRIKE_DAYS);
        let span = window
            .iter()
            .min()
            .cloned()
            .zip(window.iter().max().cloned());
        People {
            window,
            span,
            dates: None,
            strikes: HashMap::new(),
        }
    }

    /// The dates of the window with results.
    fn dates(&mut self, s: &impl Records) -> Result<&[String], StoreError> {
        if self.dates.is_none() {
            let mut dates = Vec::new();
            for day in &self.window {
                if !Day::read(s, day)?.results.is_empty() {
                    dates.push(day.clone());
                }
            }
            self.dates = Some(dates);
        }
        Ok(self.dates.as_deref().unwrap_or_default())
    }

    /// The strike rate of `name` in `role`.
    pub(super) fn strike(
        &mut self,
        s: &impl Records,
        role: Role,
        name: &str,
        tallies: &mut impl Tallies,
    ) -> Result<Strike, StoreError> {
        let id = slug(name);
        if id.is_empty() {
            return Ok(Strike::default());
        }
        if let Some(strike) = self.strikes.get(&id).and_then(|roles| roles[role_at(role)]) {
            return Ok(strike);
        }
        let counted = match &self.span {
            Some((first, last)) => tallies.between(s, (role, &id), (first, last))?,
            None => None,
        };
        let (rides, wins) = match counted {
            Some(counted) => counted,
            None => tallies.on(s, (role, &id), self.dates(s)?)?,
        };
        let strike = Strike {
            rides,
            wins,
            strike_rate: percent(wins, rides),
        };
        self.strikes.entry(id).or_default()[role_at(role)] = Some(strike);
        Ok(strike)
    }
}
