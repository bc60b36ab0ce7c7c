//! A horse's form as the fold keeps it: a record per race the horse ran
//! ([`keys::form_entry`]), holding the result's name for the horse and the entry's served
//! JSON, and a small record under the form document's key holding the sequence at which
//! the document last changed and the head of its JSON ([`head`]). A new run writes its
//! entry and that head: bytes of one entry, however long the form, and the fold reads the
//! entries it replaces and the newest, never the whole form. The document is assembled
//! when it is read ([`assemble`]): the entries' JSON copied one after the other, not
//! parsed, and its `ETag` computed from the bytes assembled.
//!
//! An entry replaced or removed keeps its version among the form's past
//! ([`keys::form_entry_past`], under the sequence of the event that set it; a removal leaves
//! an empty version): each entry's JSON is stored once, in its entry or, once replaced, in
//! the past, and `as_of` reads a form from the two ([`as_of`]), whatever point it asks for.
//!
//! Entry layout: the sequence of the event that set it (8 bytes, big-endian), the length of
//! the name as a little-endian `u32`, the name, then the JSON.

use std::collections::BTreeMap;

use crate::docs::form::FormDoc;
use crate::docs::{ETAG_LEN, HEAD_LEN};
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

/// What [`replace`] did to an entry.
#[derive(Debug)]
pub(crate) enum Replaced {
    /// Nothing: the entry was given as it is, or one to remove was not there.
    Nothing,
    /// Set or removed it: its key, and the JSON it served before (`None`: there was no
    /// entry).
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
    let key = keys::form_entry(horse, date, n, venue);
    let past = |seq| keys::form_entry_past(&key, seq).unwrap_or_default();
    let was = match s.get(&key)? {
        Some(current) => {
            let (set, name, json) = decode(&current).ok_or_else(|| damaged("is truncated"))?;
            if entry.is_some_and(|(given, j)| (given.as_bytes(), j) == (name, json)) {
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
        Some((name, json)) => s.put(key.clone(), encode(seq, name, json)),
        None => {
            s.put(past(seq), Vec::new());
            s.delete(key.clone());
        }
    }
    Ok(Replaced::Was(key, was))
}

/// The horse's name (as the result gave it) and the JSON of an entry's value.
pub(crate) fn entry_parts(value: &[u8]) -> Result<(&[u8], &[u8]), StoreError> {
    decode(value)
        .map(|(_, name, json)| (name, json))
        .ok_or_else(|| damaged("is truncated"))
}

/// The JSON the entry under `key` serves now; `None` where there is none.
pub(crate) fn served(s: &impl Records, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
    s.get(key)?
        .map(|value| {
            decode(&value)
                .map(|(_, _, json)| json.to_vec())
                .ok_or_else(|| damaged("is truncated"))
        })
        .transpose()
}

/// The name the newest result gave `horse` (its newest entry's), reading that entry
/// alone; `None` where it has no entry.
pub(crate) fn newest_name(s: &impl Records, horse: &str) -> Result<Option<String>, StoreError> {
    let newest = s.scan(&keys::form_entries_of(horse), Scan::Backward, 1)?;
    newest
        .first()
        .map(|(_, value)| {
            decode(value)
                .map(|(_, name, _)| String::from_utf8_lossy(name).into_owned())
                .ok_or_else(|| damaged("is truncated"))
        })
        .transpose()
}

/// A horse's form: its entries' values, newest first.
#[derive(Debug, Default)]
pub(crate) struct FormSource {
    entries: Vec<Vec<u8>>,
}

impl FormSource {
    /// The form of `horse` as `s` holds it.
    pub fn load(s: &impl Records, horse: &str) -> Result<FormSource, StoreError> {
        let mut entries = Vec::new();
        let prefix = keys::form_entries_of(horse);
        // Read forwards, as `read` does: sled walks a range backwards more slowly.
        for (_, value) in s
            .scan(&prefix, Scan::Forward, usize::MAX)?
            .into_iter()
            .rev()
        {
            decode(&value).ok_or_else(|| damaged("is truncated"))?;
            entries.push(value);
        }
        Ok(FormSource { entries })
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
        let entries = records.scan(&keys::form_entries_of(horse), Scan::Forward, usize::MAX)?;
        let Some(now) = records.get(&key)? else {
            return Ok(None);
        };
        if now == head || tries == READS {
            return assemble(&head, entries.iter().rev().map(|(_, e)| &e[..]))
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
    let ask = (
        &keys::form_entries_of(horse)[..],
        Scan::Backward,
        usize::MAX,
    );
    let entries = crate::scan::over_map(records, ask);
    assemble(head, entries.iter().map(|(_, v)| &v[..]))
}

/// The horse whose form a record under `key` belongs to: an entry or a form document.
pub(crate) fn horse_of(key: &[u8]) -> Option<&str> {
    match crate::keys::doc::DocKey::parse(key) {
        Some(crate::keys::doc::DocKey::Form(horse)) => Some(horse),
        _ => keys::form_entry_horse(key),
    }
}

/// A horse's entries as they stood once the log up to `point` had been applied, as
/// `(key, value)` in key order: from its `entries` now and its `pasts` (each as stored,
/// in any order).
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
