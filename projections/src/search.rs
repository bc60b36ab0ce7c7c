//! Horses by name: every name each horse was given (by a profile, a card or a result),
//! one small record a horse (`keys::horse_names`), so that a search scans a few thousand
//! names and never a document. A horse that was renamed is found by each of its names
//! and listed under its newest.

use std::collections::BTreeMap;

use racing_events::{HorseProfile, RaceCard, RaceResult};
use serde::{Deserialize, Serialize};

use crate::fold::{Records, State};
use crate::keys;
use crate::store::Store;
use crate::StoreError;

/// The names of one horse, each by what gave it, so that an amendment or a retraction
/// takes back what it gave.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Names {
    /// The name its profile gives, and the sequence of that profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    profile: Option<(String, u64)>,
    /// By `date \0 race \0 venue \0 c|r` (a card or a result): the name it gives, and
    /// the sequence of the event.
    #[serde(default)]
    races: BTreeMap<String, (String, u64)>,
}

impl Names {
    /// Its newest name: its profile's or that of its latest-dated card or result,
    /// whichever the log gave later.
    fn newest(&self) -> Option<&str> {
        let raced = self
            .races
            .iter()
            .max_by(|(a, (_, x)), (b, (_, y))| (a.get(..10), x).cmp(&(b.get(..10), y)))
            .map(|(_, named)| named);
        match (&self.profile, raced) {
            (Some(p), Some(r)) => Some(if p.1 >= r.1 { &p.0 } else { &r.0 }),
            (Some((name, _)), None) | (None, Some((name, _))) => Some(name),
            (None, None) => None,
        }
    }

    /// Every name, the newest among them.
    fn all(&self) -> impl Iterator<Item = &str> {
        self.profile
            .iter()
            .chain(self.races.values())
            .map(|(name, _)| name.as_str())
    }
}

/// A horse a search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HorseMatch {
    /// Brand number: `/api/v1/horses/{horse_no}` and its form.
    pub horse_no: String,
    /// Its newest name: its latest profile's, or its latest-dated card's or result's,
    /// whichever came later.
    pub horse_name: String,
}

/// Where a name came from: a profile, or one race's card (`c`) or result (`r`).
enum Source<'a> {
    Profile,
    Race(&'a str, i64, &'a str, char),
}

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

/// The name records a batch touched, decoded until it renders, as forms and people
/// are: a horse's record holds the name of every race it ran, and was read, decoded,
/// encoded and written again for each of its runners' cards and results.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    names: BTreeMap<String, Names>,
}

impl Touched {
    /// The names of `horse`, loaded into the batch on first use.
    fn names(&mut self, s: &impl Records, horse: &str) -> Result<&mut Names, StoreError> {
        use std::collections::btree_map::Entry;
        Ok(match self.names.entry(horse.to_owned()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                e.insert(crate::fold::read(s, &keys::horse_names(horse))?.unwrap_or_default())
            }
        })
    }

    /// Sets (`Some`) or takes back (`None`) the name `source` gives `horse`; `seq` is
    /// the event's sequence.
    fn name(
        &mut self,
        s: &impl Records,
        horse: &str,
        source: Source<'_>,
        given: Option<&str>,
        seq: u64,
    ) -> Result<(), StoreError> {
        let names = self.names(s, horse)?;
        let given = given.map(|n| (n.to_owned(), seq));
        match source {
            Source::Profile => names.profile = given,
            Source::Race(date, n, venue, kind) => {
                let race = format!("{date}\0{n:02}\0{venue}\0{kind}");
                match given {
                    Some(g) => names.races.insert(race, g),
                    None => names.races.remove(&race),
                };
            }
        }
        Ok(())
    }

    /// Notes the name a profile gives its horse.
    pub(crate) fn note_profile(
        &mut self,
        s: &impl Records,
        p: &HorseProfile,
        seq: u64,
    ) -> Result<(), StoreError> {
        self.name(s, &p.horse_no, Source::Profile, Some(&p.horse_name), seq)
    }

    /// A card or a result in place of `old` (`None`: new), or (`new` `None`) retracted:
    /// the names each gives its runners.
    pub(crate) fn note_race<R: NamesRunners>(
        &mut self,
        s: &impl Records,
        old: Option<&R>,
        new: Option<&R>,
        seq: u64,
    ) -> Result<(), StoreError> {
        let Some((date, n, venue)) = new.or(old).map(NamesRunners::race) else {
            return Ok(());
        };
        let runners = |r: Option<&R>| r.map(NamesRunners::runners).unwrap_or_default();
        let source = || Source::Race(date, n, venue, R::KIND);
        self.replace(s, runners(old), runners(new), source, seq)
    }

    /// The names of one race's runners: those only in `old` taken back, those in `new`
    /// set.
    fn replace<'a>(
        &mut self,
        s: &impl Records,
        old: Vec<(String, String)>,
        new: Vec<(String, String)>,
        source: impl Fn() -> Source<'a>,
        seq: u64,
    ) -> Result<(), StoreError> {
        for (horse, _) in &old {
            if !new.iter().any(|(h, _)| h == horse) {
                self.name(s, horse, source(), None, seq)?;
            }
        }
        for (horse, given) in &new {
            self.name(s, horse, source(), Some(given), seq)?;
        }
        Ok(())
    }

    /// Writes each touched horse's names, or removes the record of one left with none.
    pub(crate) fn render(&mut self, s: &mut impl State) -> Result<(), StoreError> {
        for (horse, names) in std::mem::take(&mut self.names) {
            let key = keys::horse_names(&horse);
            if names.profile.is_none() && names.races.is_empty() {
                if s.get(&key)?.is_some() {
                    s.delete(key);
                }
            } else {
                // Plain data: serialising it cannot fail.
                s.put(key, serde_json::to_vec(&names).unwrap_or_default());
            }
        }
        Ok(())
    }
}

/// Whether `text` (already lower case) is in `name`, and at its start.
fn found(name: &str, text: &str) -> Option<bool> {
    let name = name.to_lowercase();
    name.find(text).map(|at| at == 0)
}

impl Store {
    /// The horses one of whose names contains `text`, whatever the case: those with a
    /// name that starts with it first, then alphabetical by newest name (then brand
    /// number); at most `limit`. One scan of the name records.
    pub fn find_horses(&self, text: &str, limit: usize) -> Result<Vec<HorseMatch>, StoreError> {
        let rows = self
            .tree
            .scan_prefix(keys::HORSE_NAMES_PREFIX)
            .map(|item| item.map_err(StoreError::from));
        find_in(rows, text, limit)
    }
}

/// [`Store::find_horses`] over the records `rows` (the name records, `(key, value)`).
pub(crate) fn find_in<K: AsRef<[u8]>, V: AsRef<[u8]>>(
    rows: impl Iterator<Item = Result<(K, V), StoreError>>,
    text: &str,
    limit: usize,
) -> Result<Vec<HorseMatch>, StoreError> {
    let text = text.to_lowercase();
    let mut all: Vec<(bool, String, HorseMatch)> = Vec::new();
    for row in rows {
        let (key, value) = row?;
        let Some(horse) = key
            .as_ref()
            .strip_prefix(keys::HORSE_NAMES_PREFIX)
            .and_then(|h| std::str::from_utf8(h).ok())
        else {
            continue;
        };
        let names: Names = serde_json::from_slice(value.as_ref())
            .map_err(|e| StoreError::Corrupt(format!("names of {horse}: {e}")))?;
        let Some(starts) = names
            .all()
            .filter_map(|n| found(n, &text))
            .reduce(|a, b| a || b)
        else {
            continue;
        };
        let newest = names.newest().unwrap_or_default().to_owned();
        all.push((
            !starts,
            newest.to_lowercase(),
            HorseMatch {
                horse_no: horse.to_owned(),
                horse_name: newest,
            },
        ));
    }
    all.sort_by(|a, b| {
        (a.0, &a.1, &a.2.horse_name, &a.2.horse_no).cmp(&(
            b.0,
            &b.1,
            &b.2.horse_name,
            &b.2.horse_no,
        ))
    });
    Ok(all.into_iter().take(limit).map(|(_, _, m)| m).collect())
}
