//! Horses by name: every name each horse was given (by a profile, a card or a result),
//! kept by `names.rs` in records that a card or a result adds to without rewriting the
//! horse's history, and an index of them ([`keys::name_index`]): an entry for each place a
//! name can be read from to its end, in lower case, those of whole names apart, and the
//! horse's newest name in a record of its own ([`keys::horse_newest`]). An entry is
//! written when its name is given and removed when the name is taken back; a new newest
//! name rewrites the one record, not the entries of every name the horse had before. A
//! search reads the entries of whole names that start with its text, and where they are
//! fewer than it lists, those of the other places that do, then the newest name of each
//! horse they name: the records of the horses it finds, and no other horse's. A horse that
//! was renamed is found by each of its names and listed under its newest.

pub(crate) mod names;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::keys;
use crate::kv::StoreError;
use crate::state::State;
use crate::store::Store;

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

/// Most characters of a search's text.
pub const MAX_SEARCH_CHARS: usize = 50;

/// Most characters of a name an index entry keeps: a search's text, in lower case, is no
/// longer (a character's lower case is at most two), and finds a name by the entry that
/// starts where it does.
const INDEXED_CHARS: usize = 2 * MAX_SEARCH_CHARS;

/// What a horse's index entries are made from: its names, and its newest. A card or a
/// result that names a horse as it was named changes neither, and no entry is made.
#[derive(Debug, Default, PartialEq)]
struct Indexed {
    names: BTreeSet<String>,
    newest: Option<String>,
}

impl Indexed {
    /// The entries of the names that `had` gave `horse` and `self` no longer gives taken
    /// back, those of the names `self` gives anew written, and its newest name written
    /// where it changed: a horse's other entries stay as they are.
    fn replace(&self, s: &mut impl State, horse: &str, had: &Indexed) {
        if self == had {
            return;
        }
        let indexed = |i: &Indexed| {
            if i.newest.is_some() {
                i.names.clone()
            } else {
                BTreeSet::new()
            }
        };
        let (had_names, has_names) = (indexed(had), indexed(self));
        if had_names != has_names {
            let (had, has) = (entries(horse, &had_names), entries(horse, &has_names));
            for key in had.difference(&has) {
                s.delete(key.clone());
            }
            for key in has.difference(&had) {
                s.put(key.clone(), Vec::new());
            }
        }
        if self.newest != had.newest {
            let key = keys::horse_newest(horse);
            match &self.newest {
                Some(newest) => s.put(key, newest.as_bytes().to_vec()),
                None => s.delete(key),
            }
        }
    }
}

/// The keys of a horse's entries in the name index.
type Entries = BTreeSet<Vec<u8>>;

/// The index entries of a horse's names: one for each character each name can be read
/// from to its end (lower case, at most [`INDEXED_CHARS`] of it), those from its first
/// apart.
fn entries(horse: &str, names: &BTreeSet<String>) -> Entries {
    let mut out = Entries::new();
    for name in names {
        let lower = name.to_lowercase();
        for (at, _) in lower.char_indices() {
            let text: String = lower[at..].chars().take(INDEXED_CHARS).collect();
            out.insert(keys::name_index(at == 0, &text, horse));
        }
    }
    out
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
            self.kv
                .prefix(keys::name_index_of(whole, &text))
                .map(|item| {
                    self.reads().note()?;
                    item
                })
        };
        let newest = |horse: &str| {
            self.reads().note()?;
            Ok(self.kv.get(keys::horse_newest(horse))?.map(|v| v.to_vec()))
        };
        find_in(scan(true), || scan(false), newest, limit)
    }
}

/// [`Store::find_horses`] over the index entries (`(key, value)`) that start with the
/// text: those of whole names (`starting`), then, if they find fewer horses than `limit`,
/// the others (`inner`); each horse found listed under its newest name (`newest`).
pub(crate) fn find_in<K: AsRef<[u8]>, V, I>(
    starting: impl Iterator<Item = Result<(K, V), StoreError>>,
    inner: impl FnOnce() -> I,
    newest: impl Fn(&str) -> Result<Option<Vec<u8>>, StoreError>,
    limit: usize,
) -> Result<Vec<HorseMatch>, StoreError>
where
    I: Iterator<Item = Result<(K, V), StoreError>>,
{
    // By horse: whether a name starts with the text.
    let mut found: BTreeMap<String, bool> = BTreeMap::new();
    for row in starting {
        note(&mut found, row, true)?;
    }
    // Those that start with the text come first: with `limit` of them, no other is listed.
    if found.len() < limit {
        for row in inner() {
            note(&mut found, row, false)?;
        }
    }
    let corrupt = || StoreError::Corrupt("a horse's newest name".into());
    let mut all: Vec<(bool, String, HorseMatch)> = Vec::with_capacity(found.len());
    for (horse_no, starts) in found {
        let name = newest(&horse_no)?.ok_or_else(corrupt)?;
        let name = String::from_utf8(name).map_err(|_| corrupt())?;
        all.push((
            !starts,
            name.to_lowercase(),
            HorseMatch {
                horse_no,
                horse_name: name,
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

/// Notes the horse of an index entry in `found`, with whether the entry is of a name that
/// starts with the text (`starts`).
fn note<K: AsRef<[u8]>, V>(
    found: &mut BTreeMap<String, bool>,
    row: Result<(K, V), StoreError>,
    starts: bool,
) -> Result<(), StoreError> {
    let (key, _) = row?;
    let corrupt = || StoreError::Corrupt("an entry of the horse-name index".into());
    let horse = keys::parse_name_index(key.as_ref()).ok_or_else(corrupt)?;
    found.entry(horse.to_owned()).or_insert(starts);
    Ok(())
}
