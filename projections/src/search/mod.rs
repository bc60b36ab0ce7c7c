//! Horses by name: every name each horse was given (by a profile, a card or a result),
//! kept by `names.rs` in records that a card or a result adds to without rewriting the
//! horse's history, and an index of them ([`keys::name_index`]): an entry for each place a
//! name can be read from to its end, in lower case, those of whole names apart (but its
//! last character alone, shorter than any search), and the horse's newest name in a record
//! of its own ([`keys::horse_newest`]). An entry is written when its name is given and
//! removed when the name is taken back; a new newest name rewrites the one record, not the
//! entries of every name the horse had before. A search reads the entries of whole names that start with its text, and where they are
//! fewer than it lists, those of the other places that do, then the newest name of each
//! horse they name: the records of the horses it finds, and no other horse's. A horse that
//! was renamed is found by each of its names and listed under its newest.

mod dated;
pub(crate) mod index;
pub(crate) mod names;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::keys;
use crate::kv::StoreError;
use crate::store::Store;
use index::MIN_SEARCH_CHARS;

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

impl Store {
    /// The horses one of whose names contains `text` ([`MIN_SEARCH_CHARS`] to
    /// `MAX_SEARCH_CHARS` characters; a shorter one finds none), whatever the case: those
    /// with a name that starts with it first, then alphabetical by newest name (then brand
    /// number); at most `limit`. Reads the index entries of the names that start with it,
    /// and where those are fewer than `limit`, of the names that contain it further on: as
    /// many as there are places in those names where it starts.
    pub fn find_horses(&self, text: &str, limit: usize) -> Result<Vec<HorseMatch>, StoreError> {
        if text.chars().count() < MIN_SEARCH_CHARS {
            return Ok(Vec::new());
        }
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
