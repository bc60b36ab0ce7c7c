//! Horses by name: every name each horse was given (by a profile, a card or a result),
//! one small record a horse (`keys::horse_names`), and an index of them
//! ([`keys::name_index`]): an entry for each place a name can be read from to its end, in
//! lower case, holding the horse's newest name, those of whole names apart. A search reads
//! the entries of whole names that start with its text, and where they are fewer than it
//! lists, those of the other places that do: the entries of the horses it finds, and no
//! other horse's. A horse that was renamed is found by each of its names and listed under
//! its newest.

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
    /// Each touched horse's names, and what its index entries were made from when loaded.
    names: BTreeMap<String, (Names, Indexed)>,
}

/// What a horse's index entries are made from: its names, and its newest. A card or a
/// result that names a horse as it was named changes neither, and no entry is made.
#[derive(Debug, PartialEq)]
struct Indexed {
    names: std::collections::BTreeSet<String>,
    newest: Option<String>,
}

impl Indexed {
    fn of(names: &Names) -> Indexed {
        Indexed {
            names: names.all().map(str::to_owned).collect(),
            newest: names.newest().map(str::to_owned),
        }
    }
}

/// A horse's entries in the name index: key, and the horse's newest name.
type Entries = BTreeMap<Vec<u8>, Vec<u8>>;

/// Most characters of a search's text.
pub const MAX_SEARCH_CHARS: usize = 50;

/// Most characters of a name an index entry keeps: a search's text, in lower case, is no
/// longer (a character's lower case is at most two), and finds a name by the entry that
/// starts where it does.
const INDEXED_CHARS: usize = 2 * MAX_SEARCH_CHARS;

/// The index entries of a horse's names: one for each character each name can be read
/// from to its end (lower case, at most [`INDEXED_CHARS`] of it), those from its first
/// apart, each holding the horse's newest name.
fn entries(horse: &str, names: &Indexed) -> Entries {
    let mut out = Entries::new();
    let Some(newest) = &names.newest else {
        return out;
    };
    for name in &names.names {
        let lower = name.to_lowercase();
        for (at, _) in lower.char_indices() {
            let text: String = lower[at..].chars().take(INDEXED_CHARS).collect();
            let key = keys::name_index(at == 0, &text, horse);
            out.insert(key, newest.as_bytes().to_vec());
        }
    }
    out
}

impl Touched {
    /// The names of `horse`, loaded into the batch on first use.
    fn names(&mut self, s: &impl Records, horse: &str) -> Result<&mut Names, StoreError> {
        use std::collections::btree_map::Entry;
        Ok(match self.names.entry(horse.to_owned()) {
            Entry::Occupied(e) => &mut e.into_mut().0,
            Entry::Vacant(e) => {
                let names: Names =
                    crate::fold::read(s, &keys::horse_names(horse))?.unwrap_or_default();
                let had = Indexed::of(&names);
                &mut e.insert((names, had)).0
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

    /// Writes each touched horse's names, or removes the record of one left with none, and
    /// the index entries its names no longer have, have anew or list under another newest
    /// name.
    pub(crate) fn render(&mut self, s: &mut impl State) -> Result<(), StoreError> {
        for (horse, (names, had)) in std::mem::take(&mut self.names) {
            let has = Indexed::of(&names);
            if has != had {
                let (had, has) = (entries(&horse, &had), entries(&horse, &has));
                for key in had.keys().filter(|k| !has.contains_key(*k)) {
                    s.delete(key.clone());
                }
                for (key, value) in has {
                    if had.get(&key) != Some(&value) {
                        s.put(key, value);
                    }
                }
            }
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

impl Store {
    /// The horses one of whose names contains `text` (at most [`MAX_SEARCH_CHARS`]
    /// characters), whatever the case: those with a name that starts with it first, then
    /// alphabetical by newest name (then brand number); at most `limit`. Reads the index
    /// entries of the names that start with it, and where those are fewer than `limit`,
    /// of the names that contain it further on: as many as there are places in those
    /// names where it starts.
    pub fn find_horses(&self, text: &str, limit: usize) -> Result<Vec<HorseMatch>, StoreError> {
        let text = text.to_lowercase();
        let scan = |whole| {
            self.tree
                .scan_prefix(keys::name_index_of(whole, &text))
                .map(|item| {
                    self.reads().note()?;
                    item.map_err(StoreError::from)
                })
        };
        find_in(scan(true), || scan(false), limit)
    }
}

/// [`Store::find_horses`] over the index entries (`(key, value)`) that start with the
/// text: those of whole names (`starting`), then, if they find fewer horses than `limit`,
/// the others (`inner`).
pub(crate) fn find_in<K: AsRef<[u8]>, V: AsRef<[u8]>, I>(
    starting: impl Iterator<Item = Result<(K, V), StoreError>>,
    inner: impl FnOnce() -> I,
    limit: usize,
) -> Result<Vec<HorseMatch>, StoreError>
where
    I: Iterator<Item = Result<(K, V), StoreError>>,
{
    // By horse: whether a name starts with the text, and its newest name.
    let mut found: BTreeMap<String, (bool, String)> = BTreeMap::new();
    for row in starting {
        note(&mut found, row, true)?;
    }
    // Those that start with the text come first: with `limit` of them, no other is listed.
    if found.len() < limit {
        for row in inner() {
            note(&mut found, row, false)?;
        }
    }
    let mut all: Vec<(bool, String, HorseMatch)> = found
        .into_iter()
        .map(|(horse_no, (starts, newest))| {
            (
                !starts,
                newest.to_lowercase(),
                HorseMatch {
                    horse_no,
                    horse_name: newest,
                },
            )
        })
        .collect();
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

/// Notes the horse of an index entry in `found`, with its newest name and whether the
/// entry is of a name that starts with the text (`starts`).
fn note<K: AsRef<[u8]>, V: AsRef<[u8]>>(
    found: &mut BTreeMap<String, (bool, String)>,
    row: Result<(K, V), StoreError>,
    starts: bool,
) -> Result<(), StoreError> {
    let (key, value) = row?;
    let corrupt = || StoreError::Corrupt("an entry of the horse-name index".into());
    let horse = keys::parse_name_index(key.as_ref()).ok_or_else(corrupt)?;
    let newest = std::str::from_utf8(value.as_ref()).map_err(|_| corrupt())?;
    found
        .entry(horse.to_owned())
        .or_insert_with(|| (starts, newest.to_owned()));
    Ok(())
}
