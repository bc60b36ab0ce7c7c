//! A horse's names as the fold keeps them: one small record a horse (its profile's name
//! and its latest date with a card or a result: `keys::horse_names`), one a name its cards
//! and results give it (how many give it: `keys::horse_name_count`), and one a year, of
//! each date of it that it has a card or a result on (what each gives it:
//! `keys::horse_names_in`), each date pointing to the horse's date before it with one. A
//! card or a result writes its year's record, the count of the name it gives and the
//! horse's record, whatever the size of its history or the number of its names; the dates
//! are a list, newest first, so that the newest name is found again when the latest race
//! is taken back. The races whose cards give a horse a name are the cards it is declared
//! on: the cards' form reads them here ([`cards_of`], [`newest_card_of`]).

use std::collections::{BTreeMap, BTreeSet};

use racing_events::{HorseProfile, RaceCard, RaceResult};
use serde::{Deserialize, Serialize};

use super::dated::{Dated, Given, Year};
use super::index;
use crate::encoding::{number, put_number};
use crate::facts::{Change, Facts, What};
use crate::keys;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::scan::Scan;
use crate::state::{read, Records, State};

/// A race's card or result: the names it gives its runners.
pub(crate) trait NamesRunners {
    /// `c` for a card, `r` for a result: each keeps the names it gave apart.
    const KIND: char;
    /// Its date, race number and venue.
    fn race(&self) -> (&str, i64, &str);
    /// Each runner's brand number and the name given it.
    fn runners(&self) -> Vec<(String, String)>;
}

impl NamesRunners for RaceCard {
    const KIND: char = 'c';
    fn race(&self) -> (&str, i64, &str) {
        (&self.date, self.race_number, &self.venue)
    }
    fn runners(&self) -> Vec<(String, String)> {
        let named = |r: &racing_events::CardRunner| (r.horse_no.clone(), r.horse_name.clone());
        self.runners.iter().map(named).collect()
    }
}

impl NamesRunners for RaceResult {
    const KIND: char = 'r';
    fn race(&self) -> (&str, i64, &str) {
        (&self.date, self.race_number, &self.venue)
    }
    fn runners(&self) -> Vec<(String, String)> {
        let named = |x: &racing_events::ResultRunner| (x.horse_no.clone(), x.horse_name.clone());
        self.runners.iter().map(named).collect()
    }
}

/// A race whose card gives a horse a name, which it is declared on: its date, race number
/// and venue.
pub(crate) type Carded = (String, u8, String);

/// The races whose cards `horse` is declared on, in date order, as the records of its names
/// of each date stand in `s`: where the cards each horse is declared on are kept, once
/// (`cards/entries.rs` reads them).
pub(crate) fn cards_of(s: &impl Records, horse: &str) -> Result<Vec<Carded>, StoreError> {
    let mut out = Vec::new();
    let prefix = keys::horse_names_dates(horse);
    for (key, stored) in s.scan(&prefix, Scan::Forward, usize::MAX)? {
        for (date, dated) in Year::entries(&key, &stored)? {
            carded(&key, date, dated, &mut out)?;
        }
    }
    Ok(out)
}

/// The date of the newest card `horse` is declared on, as the records of its names stand in
/// `s`: read from its newest date back, whose year mostly has one (a card comes before its
/// result).
pub(crate) fn newest_card_of(s: &impl Records, horse: &str) -> Result<Option<String>, StoreError> {
    let prefix = keys::horse_names_dates(horse);
    let mut limit = 1;
    loop {
        let years = s.scan(&prefix, Scan::Backward, limit)?;
        for (key, stored) in &years {
            for (date, dated) in Year::entries(key, stored)?.into_iter().rev() {
                let mut races = Vec::new();
                carded(key, date, dated, &mut races)?;
                if let Some((date, ..)) = races.pop() {
                    return Ok(Some(date));
                }
            }
        }
        if years.len() < limit {
            return Ok(None);
        }
        // Its newest year has results alone: the rest, at once.
        limit = usize::MAX;
    }
}

/// The latest date `horse` has a card or a result on, as its names' records stand in `s`:
/// no card of its is later. One small record a horse, which a bulk load holds.
pub(crate) fn latest_date_of(s: &impl Records, horse: &str) -> Result<Option<String>, StoreError> {
    let head: Option<Head> = read(s, &keys::horse_names(horse))?;
    Ok(head.and_then(|head| head.last))
}

/// Adds to `out` the races of `date`'s record `stored` (of the year record under `key`)
/// whose cards give the horse a name (a race number past a card's is no card's).
fn carded(key: &[u8], date: &str, stored: &[u8], out: &mut Vec<Carded>) -> Result<(), StoreError> {
    for g in Dated::decode(key, stored)?.races {
        if let (Ok(n), 'c') = (u8::try_from(g.0), g.2) {
            out.push((date.to_owned(), n, g.1));
        }
    }
    Ok(())
}

/// A horse's own record: small, whatever the number of its races and names.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Head {
    /// The name its profile gives, and the sequence of that profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    profile: Option<(String, u64)>,
    /// The latest date it has a card or a result on: the head of the list of its dates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last: Option<String>,
}

impl Head {
    fn is_empty(&self) -> bool {
        self.profile.is_none() && self.last.is_none()
    }

    /// The name its profile gives, if any.
    fn profile_name(&self) -> Option<&String> {
        self.profile.as_ref().map(|(name, _)| name)
    }
}

/// How many of a horse's cards and results give one name, as loaded and as the batch
/// leaves it: a name leaves the horse when the last of them is taken back (unless its
/// profile gives it).
#[derive(Debug, Default, Clone, Copy)]
struct Count {
    was: u64,
    now: u64,
}

/// A count as stored ([`keys::horse_name_count`]): a number, none where it is nought.
fn decode_count(key: &[u8], stored: &[u8]) -> Result<u64, StoreError> {
    let mut rest = stored;
    match number(&mut rest) {
        Some(n) if rest.is_empty() => Ok(n),
        _ => Err(StoreError::Corrupt(format!(
            "{}: how many races give a horse a name",
            String::from_utf8_lossy(key)
        ))),
    }
}

/// One date's record of a horse as loaded (`was`) and as the batch leaves it (`now`).
#[derive(Debug, Default)]
struct Slot {
    was: Option<Dated>,
    now: Option<Dated>,
}

/// One touched horse: its record as loaded and as changed, the dates and the names the
/// batch read or changed, the records of the years of those dates as loaded, and its
/// newest name when loaded.
#[derive(Debug)]
struct Horse {
    was: Head,
    head: Head,
    dates: BTreeMap<String, Slot>,
    years: BTreeMap<String, Year>,
    counts: BTreeMap<String, Count>,
    had_newest: Option<String>,
}

/// What a horse's list of dates is when it points to a date without a record, or to a
/// later date than the one pointing: damaged, and rebuilt from the log.
fn broken(horse: &str) -> StoreError {
    StoreError::Corrupt(format!("the list of dates of horse {horse}'s names"))
}

impl Horse {
    fn load(s: &impl Records, horse: &str) -> Result<Horse, StoreError> {
        let head: Head = read(s, &keys::horse_names(horse))?.unwrap_or_default();
        let mut h = Horse {
            was: head.clone(),
            head,
            dates: BTreeMap::new(),
            years: BTreeMap::new(),
            counts: BTreeMap::new(),
            had_newest: None,
        };
        // As loaded, so that render writes it only if it changes.
        h.had_newest = h.newest(s, horse)?;
        Ok(h)
    }

    /// How many of its cards and results give `name`, loaded on first use.
    fn count(
        &mut self,
        s: &impl Records,
        horse: &str,
        name: &str,
    ) -> Result<&mut Count, StoreError> {
        use std::collections::btree_map::Entry;
        Ok(match self.counts.entry(name.to_owned()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let key = keys::horse_name_count(horse, name);
                let was = match s.get(&key)? {
                    Some(stored) => decode_count(&key, &stored)?,
                    None => 0,
                };
                e.insert(Count { was, now: was })
            }
        })
    }

    /// The record of `date`, loaded on first use (with its year's).
    fn slot(&mut self, s: &impl Records, horse: &str, date: &str) -> Result<&mut Slot, StoreError> {
        use std::collections::btree_map::Entry;
        Ok(match self.dates.entry(date.to_owned()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let year = match self.years.entry(keys::year_of(date).to_owned()) {
                    Entry::Occupied(y) => y.into_mut(),
                    Entry::Vacant(y) => y.insert(Year::read(s, horse, date)?),
                };
                let was = year.dated(&keys::horse_names_in(horse, date), date)?;
                e.insert(Slot {
                    now: was.clone(),
                    was,
                })
            }
        })
    }

    /// The record of `date`, one of the list's: there must be one.
    fn listed(
        &mut self,
        s: &impl Records,
        horse: &str,
        date: &str,
    ) -> Result<&mut Dated, StoreError> {
        self.slot(s, horse, date)?
            .now
            .as_mut()
            .ok_or_else(|| broken(horse))
    }

    /// Its newest name: its profile's or that of its latest-dated card or result (the
    /// later event of a date), whichever the log gave later.
    fn newest(&mut self, s: &impl Records, horse: &str) -> Result<Option<String>, StoreError> {
        let raced = match self.head.last.clone() {
            Some(date) => self
                .listed(s, horse, &date)?
                .races
                .iter()
                .max_by(|a, b| (a.4, a.race()).cmp(&(b.4, b.race())))
                .map(|g| (g.3.clone(), g.4)),
            None => None,
        };
        Ok(match (&self.head.profile, raced) {
            (Some(p), Some(r)) => Some(if p.1 >= r.1 { p.0.clone() } else { r.0 }),
            (Some((name, _)), None) => Some(name.clone()),
            (None, raced) => raced.map(|(name, _)| name),
        })
    }

    /// Sets (`Some`) or takes back (`None`) the name one race's card or result gives.
    fn give(
        &mut self,
        s: &impl Records,
        horse: &str,
        (date, race): (&str, (i64, &str, char)),
        given: Option<&str>,
        seq: u64,
    ) -> Result<(), StoreError> {
        let slot = &mut self.slot(s, horse, date)?.now;
        let listed = slot.is_some();
        let dated = slot.get_or_insert_with(Dated::default);
        let at = dated.races.binary_search_by(|g| g.race().cmp(&race));
        let gone = match at {
            Ok(i) => Some(dated.races.remove(i).3),
            Err(_) => None,
        };
        if let Some(name) = given {
            let (n, venue, kind) = race;
            let i = at.unwrap_or_else(|i| i);
            let g = Given(n, venue.to_owned(), kind, name.to_owned(), seq);
            dated.races.insert(i, g);
        }
        let prev = dated.prev.clone();
        let empty = dated.races.is_empty();
        if empty {
            *slot = None;
        }
        if let Some(name) = gone {
            let count = self.count(s, horse, &name)?;
            count.now = count.now.saturating_sub(1);
        }
        if let Some(name) = given {
            self.count(s, horse, name)?.now += 1;
        }
        match (listed, empty) {
            (false, false) => self.link(s, horse, date),
            (true, true) => self.unlink(s, horse, date, prev),
            _ => Ok(()),
        }
    }

    /// The date in the list after which `date` goes (`None`: it is the latest), and the
    /// one before it, going back from the latest: a card or a result is for a horse's
    /// next race far more often than for an earlier one.
    fn place(
        &mut self,
        s: &impl Records,
        horse: &str,
        date: &str,
    ) -> Result<(Option<String>, Option<String>), StoreError> {
        let mut after = None;
        let mut at = self.head.last.clone();
        while let Some(d) = at.take() {
            if d.as_str() <= date {
                at = Some(d);
                break;
            }
            let prev = self.listed(s, horse, &d)?.prev.clone();
            // Each date's previous is earlier: the walk ends.
            if prev.as_deref().is_some_and(|p| p >= d.as_str()) {
                return Err(broken(horse));
            }
            after = Some(d);
            at = prev;
        }
        Ok((after, at))
    }

    /// Puts the newly given `date` in the list.
    fn link(&mut self, s: &impl Records, horse: &str, date: &str) -> Result<(), StoreError> {
        let (after, before) = self.place(s, horse, date)?;
        if before.as_deref() == Some(date) {
            return Err(broken(horse));
        }
        self.listed(s, horse, date)?.prev = before;
        self.point(s, horse, after, Some(date.to_owned()))
    }

    /// Takes `date`, left with nothing and whose previous was `prev`, out of the list.
    fn unlink(
        &mut self,
        s: &impl Records,
        horse: &str,
        date: &str,
        prev: Option<String>,
    ) -> Result<(), StoreError> {
        let (after, at) = self.place(s, horse, date)?;
        if at.as_deref() != Some(date) {
            return Err(broken(horse));
        }
        self.point(s, horse, after, prev)
    }

    /// Makes the date `after` (`None`: the head) point back to `to`.
    fn point(
        &mut self,
        s: &impl Records,
        horse: &str,
        after: Option<String>,
        to: Option<String>,
    ) -> Result<(), StoreError> {
        match after {
            Some(d) => self.listed(s, horse, &d)?.prev = to,
            None => self.head.last = to,
        }
        Ok(())
    }

    /// The names it came to have and those it no longer has: those its profile gives and
    /// those a card or a result gives, as loaded and as the batch leaves them.
    fn renamed(
        &mut self,
        s: &impl Records,
        horse: &str,
    ) -> Result<(BTreeSet<String>, BTreeSet<String>), StoreError> {
        let profiles = [self.was.profile_name(), self.head.profile_name()];
        for name in profiles.into_iter().flatten().cloned().collect::<Vec<_>>() {
            self.count(s, horse, &name)?;
        }
        let (mut came, mut gone) = (BTreeSet::new(), BTreeSet::new());
        for (name, count) in &self.counts {
            let had = count.was > 0 || self.was.profile_name() == Some(name);
            let has = count.now > 0 || self.head.profile_name() == Some(name);
            match (had, has) {
                (false, true) => came.insert(name.clone()),
                (true, false) => gone.insert(name.clone()),
                _ => false,
            };
        }
        Ok((came, gone))
    }

    /// The names it had as loaded and still has: read only when a name came or went.
    fn kept(
        &self,
        s: &impl Records,
        horse: &str,
        gone: &BTreeSet<String>,
    ) -> Result<BTreeSet<String>, StoreError> {
        let prefix = keys::horse_name_counts(horse);
        let mut had = BTreeSet::new();
        for (key, _) in s.scan(&prefix, Scan::Forward, usize::MAX)? {
            let name = key.get(prefix.len()..).unwrap_or_default();
            had.insert(String::from_utf8_lossy(name).into_owned());
        }
        had.extend(self.was.profile_name().cloned());
        Ok(&had - gone)
    }

    /// Writes what changed: its index entries and newest name, the counts of its names,
    /// the date records, and the horse's record (removed when it is left with no name).
    fn write(mut self, s: &mut impl State, horse: &str) -> Result<(), StoreError> {
        let (came, gone) = self.renamed(&*s, horse)?;
        if !came.is_empty() || !gone.is_empty() {
            // Read before the counts below are written: the names as loaded.
            let kept = self.kept(&*s, horse, &gone)?;
            index::rename(s, horse, &gone, &came, &kept);
        }
        let newest = self.newest(&*s, horse)?;
        index::set_newest(s, horse, &self.had_newest, &newest);
        for (name, count) in &self.counts {
            if count.now == count.was {
                continue;
            }
            let key = keys::horse_name_count(horse, name);
            if count.now == 0 {
                s.delete(key);
            } else {
                let mut value = Vec::new();
                put_number(&mut value, count.now);
                s.put(key, value);
            }
        }
        // Each year with a date that changed is written again whole, once.
        let mut changed = BTreeSet::new();
        for (date, slot) in self.dates {
            if slot.now == slot.was {
                continue;
            }
            let year = keys::year_of(&date);
            let Some(record) = self.years.get_mut(year) else {
                return Err(broken(horse));
            };
            changed.insert(year.to_owned());
            match slot.now {
                Some(dated) => record.0.insert(date, dated.encode()),
                None => record.0.remove(&date),
            };
        }
        let written = self
            .years
            .iter()
            .filter(|(year, _)| changed.contains(*year));
        for (year, record) in written {
            let key = keys::horse_names_in(horse, year);
            if record.0.is_empty() {
                s.delete(key);
            } else {
                s.put(key, record.encode());
            }
        }
        if self.head != self.was {
            let key = keys::horse_names(horse);
            if self.head.is_empty() {
                s.delete(key);
            } else {
                s.put(key, serde_json::to_vec(&self.head).unwrap_or_default());
            }
        }
        Ok(())
    }
}

/// The horses whose names a batch touched, their records loaded on first use and written
/// once when it renders.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    horses: BTreeMap<String, Horse>,
}

impl Touched {
    /// The records of `horse`, loaded into the batch on first use.
    fn horse(&mut self, s: &impl Records, horse: &str) -> Result<&mut Horse, StoreError> {
        use std::collections::btree_map::Entry;
        Ok(match self.horses.entry(horse.to_owned()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Horse::load(s, horse)?),
        })
    }

    /// Notes the name a profile gives its horse.
    fn note_profile(
        &mut self,
        s: &impl Records,
        p: &HorseProfile,
        seq: u64,
    ) -> Result<(), StoreError> {
        let horse = self.horse(s, &p.horse_no)?;
        horse.head.profile = Some((p.horse_name.clone(), seq));
        Ok(())
    }

    /// A card or a result in place of `old` (`None`: new), or (`new` `None`) retracted:
    /// the names each gives its runners.
    fn note_race<R: NamesRunners>(
        &mut self,
        s: &impl Records,
        old: Option<&R>,
        new: Option<&R>,
        seq: u64,
    ) -> Result<(), StoreError> {
        let Some((date, n, venue)) = new.or(old).map(NamesRunners::race) else {
            return Ok(());
        };
        let race = (date, (n, venue, R::KIND));
        let runners = |r: Option<&R>| r.map(NamesRunners::runners).unwrap_or_default();
        let (old, new) = (runners(old), runners(new));
        // Those only in `old` taken back, those in `new` set.
        for (horse, _) in &old {
            if !new.iter().any(|(h, _)| h == horse) {
                self.horse(s, horse)?.give(s, horse, race, None, seq)?;
            }
        }
        for (horse, given) in &new {
            self.horse(s, horse)?
                .give(s, horse, race, Some(given), seq)?;
        }
        Ok(())
    }
}

impl ReadModel for Touched {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        let seq = change.seq;
        match &change.what {
            What::Profile(p) => self.note_profile(s, p, seq),
            What::Card { old, new } => self.note_race(s, old.as_ref(), Some(*new), seq),
            What::Result { old, new } => self.note_race(s, old.as_ref(), Some(*new), seq),
            What::Retracted(r) => {
                self.note_race(s, r.card.as_ref(), None, seq)?;
                self.note_race(s, r.result.as_ref(), None, seq)
            }
            _ => Ok(()),
        }
    }

    /// Writes each touched horse's records that changed, and the index entries its names
    /// no longer have, have anew or list under another newest name.
    fn render<S: State>(&mut self, s: &mut S, _: u64, _: &Facts) -> Result<(), StoreError> {
        for (horse, h) in std::mem::take(&mut self.horses) {
            h.write(s, &horse)?;
        }
        Ok(())
    }
}
