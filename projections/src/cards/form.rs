//! The form on a race card, as of the race's date: each runner's figures, its days since
//! it last ran, its C, D and CD, its records at the course, over the distance and on each
//! going, and its jockey's and trainer's strike rates over the 14 days before. Only
//! results of dates before the race's count, whenever they were published: a backfill
//! of history fills a past card's form in, and a result of a later date never changes
//! it.
//!
//! The horses' part is kept a record a race ([`keys::analysis::card_form`]), versioned as
//! the source records are, so a card as of any point shows the form it showed then. It is
//! worked out whole when the race's card changes; a result changes it in the races after
//! it that share a horse (found by the cards each horse is declared on,
//! `cards/entries.rs`), where only its horses' runners are worked out again, over the
//! stored form ([`amend`]). What it reads of a horse's past is kept small beside each
//! horse (`cards/career.rs`). The strike rates are summed where the card is rendered,
//! from the rides of each of the 14 days before (`form/strikes.rs`): a result changes
//! them in the races of the 14 days after it that share a jockey or trainer, and writes
//! only its own date's rides for them ([`Resulted::races`] finds those races, whose cards
//! are rendered again).

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;
use racing_events::{CardRunner, RaceCard, RaceResult};

use super::career::{record, Career};
use super::decoded::Decoded;
use super::entries::NewestCards;
use crate::docs::cards::{GoingRecord, HorseForm, RaceForm};
use crate::facts::Day;
use crate::horse_runs::{dates_from, days_between, runs_of, Run};
use crate::keys;
use crate::kv::StoreError;
use crate::people::docs::{season_start, slug, Role};
use crate::state::{read, Records, State};

pub(super) mod strikes;

use strikes::STRIKE_DAYS;

/// How many races the figures show.
const FIGURES: usize = 6;

/// One venue's race: `(date, race number, venue)`.
pub(crate) type Race = (String, u8, String);

/// What a changed result changed that a card's form reads: each horse's run in it where
/// that changed, the rides and wins it changed of each jockey and trainer on each date,
/// and its date (both, where it moved).
#[derive(Debug, Default)]
pub(crate) struct Resulted {
    dates: BTreeSet<String>,
    /// By horse: its run before and after (either may be none), only where they differ.
    runs: BTreeMap<String, (Option<Run>, Option<Run>)>,
    /// By role, person and date: the rides and wins added (negative: taken away).
    rides: BTreeMap<(Role, String, String), (i64, i64)>,
}

impl Resulted {
    /// What replacing `old` by `new` (either may be none: a first result, a retraction)
    /// changed.
    pub(crate) fn of(old: Option<&RaceResult>, new: Option<&RaceResult>) -> Resulted {
        let mut runs: BTreeMap<String, (Option<Run>, Option<Run>)> = BTreeMap::new();
        for (result, after) in [(old, false), (new, true)] {
            let Some(r) = result else { continue };
            for x in &r.runners {
                let sides = runs.entry(x.horse_no.clone()).or_default();
                let side = if after { &mut sides.1 } else { &mut sides.0 };
                *side = Some(Run::of_result(r, x));
            }
        }
        runs.retain(|_, (before, after)| before != after);
        let mut rides: BTreeMap<(Role, String, String), (i64, i64)> = BTreeMap::new();
        for (result, by) in [(old, -1), (new, 1)] {
            let Some(r) = result else { continue };
            for x in r
                .runners
                .iter()
                .filter(|x| crate::horse_runs::took_part(x.status.as_deref()))
            {
                for (role, name) in [(Role::Jockey, &x.jockey), (Role::Trainer, &x.trainer)] {
                    let id = slug(name);
                    if id.is_empty() {
                        continue;
                    }
                    let c = rides.entry((role, id, r.date.clone())).or_default();
                    c.0 += by;
                    c.1 += by * i64::from(x.position == Some(1));
                }
            }
        }
        rides.retain(|_, changed| *changed != (0, 0));
        let dates = old
            .iter()
            .chain(new.iter())
            .map(|r| r.date.clone())
            .collect();
        Resulted { dates, runs, rides }
    }

    /// The rides and wins it added (negative: took away), by role, person and date.
    pub(crate) fn rides(&self) -> &BTreeMap<(Role, String, String), (i64, i64)> {
        &self.rides
    }

    /// The races whose form the change may change: the later cards of its horses, and
    /// the cards of the next 14 days with one of its people.
    pub(crate) fn races(
        &self,
        s: &impl Records,
        newest: &mut NewestCards,
        decoded: &mut Decoded,
    ) -> Result<BTreeSet<Race>, StoreError> {
        let mut races = BTreeSet::new();
        let Some(first) = self.dates.first() else {
            return Ok(races);
        };
        for horse in self.runs.keys() {
            // The newest card first: where it is not later, none is.
            let later = newest
                .of(s, horse)?
                .is_some_and(|date| date > first.as_str());
            if !later {
                continue;
            }
            let cards = newest.cards(s, horse)?;
            races.extend(cards.into_iter().filter(|(date, ..)| date > first));
        }
        if self.rides.is_empty() {
            return Ok(races);
        }
        let people: BTreeSet<(Role, &str)> = self
            .rides
            .keys()
            .map(|(role, id, _)| (*role, id.as_str()))
            .collect();
        let after: BTreeSet<String> = self
            .dates
            .iter()
            .flat_map(|d| dates_from(d, STRIKE_DAYS))
            .collect();
        for date in after {
            for (venue, numbers) in Day::read(s, &date)?.cards {
                for n in numbers {
                    let Some(card) = decoded.card_in(s, &keys::card(&date, n, &venue))? else {
                        continue;
                    };
                    let shares = card.runners.iter().any(|r| {
                        people.contains(&(Role::Jockey, slug(&r.jockey).as_str()))
                            || people.contains(&(Role::Trainer, slug(&r.trainer).as_str()))
                    });
                    if shares {
                        races.insert((date.clone(), n, venue.clone()));
                    }
                }
            }
        }
        Ok(races)
    }
}

/// What the results of an event changed of the form of the races after them: the
/// horses whose runs changed, and the races whose form may show them or the people whose
/// rides changed ([`Resulted::races`]).
#[derive(Debug, Default)]
pub(crate) struct Amended {
    races: BTreeSet<Race>,
    horses: BTreeSet<String>,
}

impl Amended {
    /// Adds what `resulted` changed; `newest` knows the newest card of each horse, and
    /// `decoded` the cards the fold decoded.
    pub(crate) fn add(
        &mut self,
        s: &impl Records,
        resulted: Resulted,
        (newest, decoded): (&mut NewestCards, &mut Decoded),
    ) -> Result<(), StoreError> {
        self.races.extend(resulted.races(s, newest, decoded)?);
        self.horses.extend(resulted.runs.into_keys());
        Ok(())
    }

    /// The races whose form may have changed, less those in `whole` (worked out whole).
    pub(crate) fn races<'a>(&'a self, whole: &'a BTreeSet<Race>) -> impl Iterator<Item = &'a Race> {
        self.races.iter().filter(|race| !whole.contains(*race))
    }
}

/// Keeps in `pasts` the careers of the horses of a changed result, as `resulted` says of
/// them; the horses' form entries are already changed.
pub(crate) fn keep_careers(
    s: &mut impl State,
    resulted: &Resulted,
    pasts: &mut Pasts,
) -> Result<(), StoreError> {
    for (horse, (before, after)) in &resulted.runs {
        let career = pasts.career(s, horse)?;
        let mut exact = true;
        if let Some(run) = before {
            exact &= career.remove(run);
        }
        if let Some(run) = after {
            career.add(run);
        }
        if !exact {
            *career = Career::of(&runs_of(s, horse)?);
        }
        pasts.changed_careers.insert(horse.clone());
    }
    Ok(())
}

/// The careers a batch has read, decoded once: it reads a horse's at each of its cards and
/// results, and [`keep_careers`] changes them here. Written once at the batch's end
/// ([`Pasts::write`]), and then handed on to the next batch of the store
/// ([`Pasts::kept`]): only this model writes careers, and every result that changes a
/// horse's runs passes through [`keep_careers`], so what they hold is what the store holds
/// after the batch. A catch-up while the API answers commits in batches of a few events;
/// each read the same careers again.
#[derive(Debug, Default)]
pub(crate) struct Pasts {
    careers: HashMap<String, Career>,
    changed_careers: BTreeSet<String>,
    /// The races' cards and forms decoded (`decoded.rs`).
    pub(super) decoded: Decoded,
}

/// Most careers a fold hands on to the next batch ([`Pasts::kept`]); past them it starts
/// the next afresh, so that what a replay of a long log holds between its batches stays
/// small.
const KEPT_CAREERS: usize = 8_192;

impl Pasts {
    /// What the next batch of the store starts from, once [`Pasts::write`] has written
    /// the changes of the batch of `events`: each kind kept while within its bound.
    pub(crate) fn kept(mut self, events: usize) -> Pasts {
        debug_assert!(self.changed_careers.is_empty());
        if self.careers.len() > KEPT_CAREERS {
            self.careers = HashMap::default();
        }
        self.decoded = self.decoded.kept(events);
        self
    }

    /// Writes the careers the batch changed, each once.
    pub(crate) fn write(&mut self, s: &mut impl State) -> Result<(), StoreError> {
        for horse in std::mem::take(&mut self.changed_careers) {
            let key = keys::analysis::horse_career(&horse);
            match self.careers.get(&horse) {
                Some(career) if *career != Career::default() => {
                    // Plain data: serialising it cannot fail.
                    s.put(key, serde_json::to_vec(career).unwrap_or_default());
                }
                _ if s.get(&key)?.is_some() => s.delete(key),
                _ => {}
            }
        }
        Ok(())
    }

    /// The career of `horse` as `s` holds it, decoded at its first read.
    fn career(&mut self, s: &impl Records, horse: &str) -> Result<&mut Career, StoreError> {
        Ok(match self.careers.entry(horse.to_owned()) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                new.insert(read(s, &keys::analysis::horse_career(horse))?.unwrap_or_default())
            }
        })
    }
}

/// Works the form of `race` out again and writes it where it changed: whether it did.
/// A race with no card any more has none.
pub(crate) fn refresh(
    s: &mut impl State,
    (date, n, venue): &Race,
    pasts: &mut Pasts,
) -> Result<bool, StoreError> {
    let key = keys::analysis::card_form(date, *n, venue);
    let Some(card) = pasts.decoded.card_in(s, &keys::card(date, *n, venue))? else {
        let had = s.get(&key)?.is_some();
        if had {
            s.delete(key);
        }
        return Ok(had);
    };
    let mut forms = RaceForm::new();
    for runner in &card.runners {
        forms.insert(
            runner.horse_no.clone(),
            horse_form(s, &card, runner, pasts)?,
        );
    }
    let json = pasts.decoded.encode(&key, forms);
    if s.get(&key)?.as_deref() == Some(&json[..]) {
        return Ok(false);
    }
    s.put(key, json);
    Ok(true)
}

/// Works out again what `amended` changed of the form of `race` (the runners of its
/// horses) over the form stored for it, and writes it where it changed: whether it did.
/// The stored form is what [`refresh`] gave for the store before the event, since every
/// change to anything else it reads (the card, the runs of other horses) worked it out
/// again; so the form amended is the form [`refresh`] would give now, at a fraction of the
/// reads. Where no form is stored for the card's runners, it is worked out whole.
pub(crate) fn amend(
    s: &mut impl State,
    race: &Race,
    amended: &Amended,
    pasts: &mut Pasts,
) -> Result<bool, StoreError> {
    let (date, n, venue) = race;
    let key = keys::analysis::card_form(date, *n, venue);
    let card = pasts.decoded.card_in(s, &keys::card(date, *n, venue))?;
    let stored = s.get(&key)?;
    let (Some(card), Some(stored)) = (card, stored) else {
        return refresh(s, race, pasts);
    };
    if !card
        .runners
        .iter()
        .any(|r| amended.horses.contains(&r.horse_no))
    {
        // Only its people's rides changed: its strike rates are counted where it is
        // rendered.
        return Ok(false);
    }
    let mut amending = pasts.decoded.amending(&key, &stored).map_err(|e| {
        StoreError::Corrupt(format!("the form of race {n} of {date} at {venue}: {e}"))
    })?;
    let forms = &mut amending.forms;
    if forms.len() != card.runners.len()
        || card
            .runners
            .iter()
            .any(|r| !forms.contains_key(&r.horse_no))
    {
        return refresh(s, race, pasts);
    }
    // The runners whose form this changed.
    let mut redone = BTreeSet::new();
    for runner in &card.runners {
        let Some(form) = forms.get_mut(&runner.horse_no) else {
            continue;
        };
        if amended.horses.contains(&runner.horse_no) {
            let now = horse_form(s, &card, runner, pasts)?;
            if now != *form {
                *form = now;
                redone.insert(runner.horse_no.as_str());
            }
        }
    }
    let json = pasts.decoded.encode_amended(&key, amending, &redone);
    if json == stored {
        return Ok(false);
    }
    s.put(key, json);
    Ok(true)
}

/// The horse's part of the form of `runner` of `card` as of the card's date: from the
/// horse's career where every run it counts is earlier, else from its entries of earlier
/// dates.
fn horse_form(
    s: &impl Records,
    card: &RaceCard,
    runner: &CardRunner,
    pasts: &mut Pasts,
) -> Result<HorseForm, StoreError> {
    let career = match pasts.career(s, &runner.horse_no)?.as_of(&card.date) {
        Some(career) => career,
        None => {
            let runs: Vec<Run> = runs_of(s, &runner.horse_no)?
                .into_iter()
                .filter(|r| r.date < card.date)
                .collect();
            Cow::Owned(Career::of(&runs))
        }
    };
    let course = record(career.course.get(&card.venue));
    let distance = record(career.distance.get(&card.distance));
    Ok(HorseForm {
        figures: figures(&career),
        runs: career.runs,
        days_since_run: career
            .last_ran
            .as_deref()
            .and_then(|last| days_between(last, &card.date)),
        c: course.wins > 0,
        d: distance.wins > 0,
        cd: career
            .wins_at
            .iter()
            .any(|(v, d, wins)| *v == card.venue && *d == card.distance && *wins > 0),
        course,
        distance,
        going: career
            .going
            .iter()
            .map(|(going, &[runs, wins, places])| GoingRecord {
                going: going.clone(),
                runs,
                wins,
                places,
            })
            .collect(),
    })
}

/// The form figures of a career: its last six entries, newest last, a `/` between
/// seasons.
fn figures(career: &Career) -> String {
    let mut out = String::with_capacity(FIGURES * 2);
    let mut season_of_last: Option<u32> = None;
    let shown = &career.last[career.last.len().saturating_sub(FIGURES)..];
    for kept in shown {
        let this = season_start(&kept.0 .0);
        if season_of_last.is_some() && this != season_of_last {
            out.push('/');
        }
        season_of_last = this;
        out.push(kept.figure());
    }
    out
}

#[cfg(test)]
mod tests;
