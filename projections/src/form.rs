//! A horse's form as the fold keeps it: an entry per race the horse ran, holding the
//! result's name for the horse and the entry's served JSON, the entries of a year in one
//! record ([`keys::form_year`], [`Year`]), and a small record under the form document's
//! key holding the sequence at which the document last changed and the head of its JSON
//! ([`head`]). A new run writes its year's record and that head: bytes of a year's
//! entries, however long the form, and the fold reads the years of the entries it
//! replaces and the newest, never the whole form. The document is assembled when it is
//! read ([`assemble`]): the entries' JSON copied one after the other, not parsed, and its
//! `ETag` computed from the bytes assembled.
//!
//! An entry is named by its key of [`keys::form_entry`], which it is stored under within
//! its year's record. An entry replaced or removed keeps its version among the form's past
//! ([`keys::form_entry_past`], under the sequence of the event that set it; a removal leaves
//! an empty version): each entry's JSON is stored once, in its year or, once replaced, in
//! the past, and `as_of` reads a form from the two ([`as_of`]), whatever point it asks for.
//!
//! Entry layout: the sequence of the event that set it (8 bytes, big-endian), the length of
//! the name as a little-endian `u32`, the name, then the JSON.

use std::collections::BTreeMap;

use foldhash::HashMap;

use crate::docs::form::FormDoc;
use crate::docs::{ETAG_LEN, HEAD_LEN};
use crate::encoding::{part, put_part};
use crate::keys;
use crate::kv::StoreError;
use crate::scan::{Item, Scan};
use crate::state::{Records, State};

fn damaged(what: &str) -> StoreError {
    StoreError::Corrupt(format!("a form entry {what}"))
}

/// An entry's value: the sequence that set it, the name, the JSON.
fn encode(seq: u64, name: &str, json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + name.len() + json.len());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(json);
    out
}

/// The sequence, name and JSON of an entry's value; `None` when it is truncated.
fn decode(value: &[u8]) -> Option<(u64, &[u8], &[u8])> {
    let (seq, rest) = value.split_first_chunk::<8>()?;
    let (len, rest) = rest.split_first_chunk::<4>()?;
    let (name, json) = rest.split_at_checked(u32::from_le_bytes(*len) as usize)?;
    Some((u64::from_be_bytes(*seq), name, json))
}

/// A horse's entries of one year, as stored under [`keys::form_year`]: by the rest of each
/// entry's name after the horse's prefix ([`keys::form_entries_of`]: its date, race number
/// and venue), its value. Stored as parts ([`crate::encoding`]), name then value, in the
/// names' order. A horse runs some ten times a year, and sled takes some hundreds of bytes
/// of disk and of writes a record whatever its size (BENCHMARKS.md, "What was tried").
#[derive(Debug, Default)]
struct Year(BTreeMap<Vec<u8>, Vec<u8>>);

impl Year {
    /// The year stored as `record`; an error where it is damaged.
    fn decode(record: &[u8]) -> Result<Year, StoreError> {
        let mut year = BTreeMap::new();
        for found in year_entries(record) {
            let (name, value) = found?;
            year.insert(name.to_vec(), value.to_vec());
        }
        Ok(Year(year))
    }

    fn encode(&self) -> Vec<u8> {
        let size = self.0.iter().map(|(n, v)| n.len() + v.len() + 10).sum();
        let mut out = Vec::with_capacity(size);
        for (name, value) in &self.0 {
            put_part(&mut out, name);
            put_part(&mut out, value);
        }
        out
    }
}

/// The entries of a year's `record`, in order: the rest of each one's name and its value;
/// an error for a damaged one (cut short, out of order, or a value that is no entry's).
fn year_entries(record: &[u8]) -> impl Iterator<Item = Result<(&[u8], &[u8]), StoreError>> {
    let mut rest = record;
    let mut before: Option<&[u8]> = None;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let found = part(&mut rest)
            .zip(part(&mut rest))
            .filter(|(name, value)| before.is_none_or(|b| b < *name) && decode(value).is_some());
        match found {
            Some((name, value)) => {
                before = Some(name);
                Some(Ok((name, value)))
            }
            None => {
                rest = &[];
                Some(Err(damaged("year is damaged")))
            }
        }
    })
}

/// The entries of a horse's year records `years` (each `(key, record)`, in key order), as
/// `(name, value)` in the names' order: the form, oldest first.
pub(crate) fn entries_in(years: &[Item]) -> Result<Vec<Item>, StoreError> {
    let mut entries = Vec::new();
    for (key, record) in years {
        for found in year_entries(record) {
            let (rest, value) = found?;
            entries.push((keys::form_entry_of_year(key, rest), value.to_vec()));
        }
    }
    Ok(entries)
}

/// The values of the entries of a horse's year records `years` (each `(key, record)`, in
/// key order), oldest first: what a form document is assembled from, read in place.
fn values_in(years: &[Item]) -> Result<Vec<&[u8]>, StoreError> {
    let mut values = Vec::new();
    for (_, record) in years {
        for found in year_entries(record) {
            values.push(found?.1);
        }
    }
    Ok(values)
}

/// The year records that hold `entries` (`(name, value)`, as [`entries_in`] gives them),
/// in key order.
pub(crate) fn years_of(entries: Vec<Item>) -> Result<Vec<Item>, StoreError> {
    let mut years: BTreeMap<Vec<u8>, Year> = BTreeMap::new();
    for (name, value) in entries {
        let (key, rest) =
            keys::form_entry_in_year(&name).ok_or_else(|| damaged("name is damaged"))?;
        let year = years.entry(key.to_vec()).or_default();
        year.0.insert(rest.to_vec(), value);
    }
    Ok(years.into_iter().map(|(k, y)| (k, y.encode())).collect())
}

/// The form of `horse` as `s` holds it: its entries as `(name, value)`, oldest first.
pub(crate) fn entries(s: &impl Records, horse: &str) -> Result<Vec<Item>, StoreError> {
    // Forwards: sled walks a range backwards a good deal more slowly.
    entries_in(&s.scan(&keys::form_entries_of(horse), Scan::Forward, usize::MAX)?)
}

/// The value of the entry named `name` ([`keys::form_entry`]) as `s` holds it; `None`
/// where there is none.
pub(crate) fn entry(s: &impl Records, name: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
    YearsRead::default().entry(s, name)
}

/// The year records read by reads of entries that follow one another in date order (a
/// person's rides, some of them of the same horse in a year, which a year's record holds
/// together): each read once while its year lasts, those of the year before let go when
/// the reads reach the next, and at most [`YEARS_HELD`] held.
#[derive(Debug, Default)]
pub(crate) struct YearsRead {
    /// The year of the records held (`YYYY`).
    year: Vec<u8>,
    held: HashMap<Vec<u8>, Option<Vec<u8>>>,
}

/// Most year records a [`YearsRead`] holds: a few kilobytes each, more than the horses a
/// person rides or trains in a year.
const YEARS_HELD: usize = 2_048;

impl YearsRead {
    /// The value of the entry named `name` as `s` holds it; `None` where there is none.
    pub(crate) fn entry(
        &mut self,
        s: &impl Records,
        name: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let (key, rest) =
            keys::form_entry_in_year(name).ok_or_else(|| damaged("name is damaged"))?;
        let year = keys::form_year_year(key);
        if year != self.year.as_slice()
            || (self.held.len() >= YEARS_HELD && !self.held.contains_key(key))
        {
            // The reads come in date order: no later one is of an earlier year.
            self.held.clear();
            self.year = year.to_vec();
        }
        let record = match self.held.get(key) {
            Some(record) => record,
            None => {
                let record = s.get(key)?;
                self.held.entry(key.to_vec()).or_insert(record)
            }
        };
        for found in record.iter().flat_map(|r| year_entries(r)) {
            let (found, value) = found?;
            if found == rest {
                return Ok(Some(value.to_vec()));
            }
        }
        Ok(None)
    }
}

/// What [`replace`] did to an entry.
#[derive(Debug)]
pub(crate) enum Replaced {
    /// Nothing: the entry was given as it is, or one to remove was not there.
    Nothing,
    /// Set or removed it: its name ([`keys::form_entry`]), and the JSON it served before
    /// (`None`: there was no entry).
    Was(Vec<u8>, Option<Vec<u8>>),
}

/// Replaces `horse`'s entry for one race (`date`, number, venue) by the event at `seq`:
/// removes any it had, keeping it among the form's past, then adds `name` and `json` if
/// given. An entry given again as it is changes nothing.
pub(crate) fn replace(
    s: &mut impl State,
    horse: &str,
    (date, n, venue): (&str, u8, &str),
    entry: Option<(&str, &[u8])>,
    seq: u64,
) -> Result<Replaced, StoreError> {
    let name = keys::form_entry(horse, date, n, venue);
    let key = keys::form_year(horse, date);
    let rest = keys::form_entry_in_year(&name)
        .map(|(_, rest)| rest.to_vec())
        .ok_or_else(|| damaged("name is damaged"))?;
    let past = |seq| keys::form_entry_past(&name, seq).unwrap_or_default();
    let mut year = match s.get(&key)? {
        Some(record) => Year::decode(&record)?,
        None => Year::default(),
    };
    let was = match year.0.remove(&rest) {
        Some(current) => {
            let (set, given, json) = decode(&current).ok_or_else(|| damaged("is truncated"))?;
            if entry.is_some_and(|(name, j)| (name.as_bytes(), j) == (given, json)) {
                return Ok(Replaced::Nothing);
            }
            let was = json.to_vec();
            s.put(past(set), current);
            Some(was)
        }
        None if entry.is_none() => return Ok(Replaced::Nothing),
        None => None,
    };
    match entry {
        Some((given, json)) => {
            year.0.insert(rest, encode(seq, given, json));
        }
        None => s.put(past(seq), Vec::new()),
    }
    if year.0.is_empty() {
        s.delete(key);
    } else {
        s.put(key, year.encode());
    }
    Ok(Replaced::Was(name, was))
}

/// The horse's name (as the result gave it) and the JSON of an entry's value.
pub(crate) fn entry_parts(value: &[u8]) -> Result<(&[u8], &[u8]), StoreError> {
    decode(value)
        .map(|(_, name, json)| (name, json))
        .ok_or_else(|| damaged("is truncated"))
}

/// The JSON the entry named `name` serves now; `None` where there is none.
pub(crate) fn served(s: &impl Records, name: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(entry(s, name)?.map(|value| json(&value).to_vec()))
}

/// The name the newest result gave `horse` (its newest entry's), reading its newest year
/// alone; `None` where it has no entry.
pub(crate) fn newest_name(s: &impl Records, horse: &str) -> Result<Option<String>, StoreError> {
    let newest = s.scan(&keys::form_entries_of(horse), Scan::Backward, 1)?;
    let Some((_, record)) = newest.first() else {
        return Ok(None);
    };
    let Some(last) = year_entries(record).last() else {
        return Ok(None);
    };
    let (_, value) = last?;
    let (_, name, _) = decode(value).ok_or_else(|| damaged("is truncated"))?;
    Ok(Some(String::from_utf8_lossy(name).into_owned()))
}

/// A horse's form: its entries' values, newest first.
#[derive(Debug, Default)]
pub(crate) struct FormSource {
    entries: Vec<Vec<u8>>,
}

impl FormSource {
    /// The form of `horse` as `s` holds it.
    pub fn load(s: &impl Records, horse: &str) -> Result<FormSource, StoreError> {
        let entries = entries(s, horse)?.into_iter().rev().map(|(_, v)| v);
        Ok(FormSource {
            entries: entries.collect(),
        })
    }

    /// The name the newest result gave the horse.
    pub fn newest_name(&self) -> Option<String> {
        let (_, name, _) = decode(self.entries.first()?)?;
        Some(String::from_utf8_lossy(name).into_owned())
    }

    /// The form document of `horse_no`, named `horse_name`.
    pub fn render(&self, horse_no: &str, horse_name: &str) -> Vec<u8> {
        FormDoc::render(horse_no, horse_name, self.entries.iter().map(|e| json(e)))
    }
}

/// An entry's JSON (loaded entries were decoded once already).
fn json(value: &[u8]) -> &[u8] {
    decode(value).map_or(&[][..], |(_, _, json)| json)
}

/// What is stored under a form document's key: room for an `ETag` (zeros: [`assemble`]
/// computes it from the document it makes, so that storing a form reads none of its
/// entries), the sequence at which the document last changed, and the head of its JSON
/// (`json`, [`FormDoc::head`]); its entries are records of their own.
pub(crate) fn head(seq: u64, json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD_LEN + json.len());
    out.extend_from_slice(&[0; ETAG_LEN]);
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(json);
    out
}

/// The JSON head of the form whose [`head`] record is `stored`; `None` when it is damaged.
pub(crate) fn head_json(stored: &[u8]) -> Option<&[u8]> {
    stored.get(HEAD_LEN..)
}

/// The stored document (`ETag`, sequence, framed document) whose [`head`] is `head` and
/// whose entries' values are `entries`, newest first, its `ETag` that of the JSON sent;
/// `None` when `head` is damaged.
pub(crate) fn assemble<'a>(
    head: &[u8],
    entries: impl ExactSizeIterator<Item = &'a [u8]>,
) -> Option<Vec<u8>> {
    let (sealed, start) = head.split_at_checked(HEAD_LEN)?;
    let mut out = sealed.to_vec();
    out.extend(FormDoc::framed(start, entries.map(json)));
    let tag = crate::docs::etag(&FormDoc::body(out.get(HEAD_LEN..)?, None)?);
    out.get_mut(..ETAG_LEN)?.copy_from_slice(&tag);
    Some(out)
}

/// The form document of `horse` as `records` hold it, whole (as [`assemble`] makes it),
/// from what its key holds (`head`) and its entries; `None` where a commit removed it
/// after `head` was read (an amendment took its only race).
///
/// The reads of a store are not isolated from its commits: one that lands between the
/// head's read and the entries' (or amid the entries') gives a form that is neither the
/// one before it nor the one after. Every commit that changes what a form serves writes
/// its head again, with the commit's sequence, so a head read again after the entries
/// and found the same says that none did; otherwise the form is read again, a few times
/// at most, then served as read (its `ETag` is that of what it sends in any case).
pub(crate) fn read(
    records: &impl Records,
    horse: &str,
    mut head: Vec<u8>,
) -> Result<Option<Vec<u8>>, StoreError> {
    let key = crate::keys::doc::DocKey::Form(horse).key();
    let mut tries = 0;
    loop {
        tries += 1;
        // Forwards: sled walks a range backwards a good deal more slowly.
        let years = records.scan(&keys::form_entries_of(horse), Scan::Forward, usize::MAX)?;
        let values = values_in(&years)?;
        let Some(now) = records.get(&key)? else {
            return Ok(None);
        };
        if now == head || tries == READS {
            return assemble(&head, values.into_iter().rev())
                .map(Some)
                .ok_or_else(|| StoreError::Corrupt(format!("the form document of {horse}")));
        }
        head = now;
    }
}

/// Most reads of a form while commits land between the reads of its parts.
const READS: usize = 3;

/// The form document of `horse` in `records`, whole; `None` where it has none.
pub(crate) fn read_in(records: &BTreeMap<Vec<u8>, Vec<u8>>, horse: &str) -> Option<Vec<u8>> {
    let head = records.get(&crate::keys::doc::DocKey::Form(horse).key())?;
    let ask = (&keys::form_entries_of(horse)[..], Scan::Forward, usize::MAX);
    let years = crate::scan::over_map(records, ask);
    assemble(head, values_in(&years).ok()?.into_iter().rev())
}

/// The horse whose form a record under `key` belongs to: a year of entries or a form
/// document.
pub(crate) fn horse_of(key: &[u8]) -> Option<&str> {
    match crate::keys::doc::DocKey::parse(key) {
        Some(crate::keys::doc::DocKey::Form(horse)) => Some(horse),
        _ => keys::form_entry_horse(key),
    }
}

/// A horse's entries as they stood once the log up to `point` had been applied, as
/// `(name, value)` in the names' order: from its `entries` now (as [`entries_in`] gives
/// them) and its `pasts` (each as stored), each in any order.
pub(crate) fn as_of(
    point: u64,
    entries: impl IntoIterator<Item = Result<(Vec<u8>, Vec<u8>), StoreError>>,
    pasts: impl IntoIterator<Item = Result<(Vec<u8>, Vec<u8>), StoreError>>,
) -> Result<Vec<Item>, StoreError> {
    // By entry: the latest version set at or before the point (empty: removed).
    let mut then: BTreeMap<Vec<u8>, (u64, Vec<u8>)> = BTreeMap::new();
    let mut keep = |key: Vec<u8>, seq: u64, value: Vec<u8>| {
        if seq <= point && then.get(&key).is_none_or(|(at, _)| *at < seq) {
            then.insert(key, (seq, value));
        }
    };
    for item in entries {
        let (key, value) = item?;
        let (seq, _, _) = decode(&value).ok_or_else(|| damaged("is truncated"))?;
        keep(key, seq, value);
    }
    for item in pasts {
        let (key, value) = item?;
        let (entry, seq) =
            keys::parse_form_entry_past(&key).ok_or_else(|| damaged("version's key"))?;
        keep(entry, seq, value);
    }
    Ok(then
        .into_iter()
        .filter(|(_, (_, value))| !value.is_empty())
        .map(|(key, (_, value))| (key, value))
        .collect())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bytes_tests;
