//! A horse's form as the fold keeps it: every race of the horse, newest first, each with
//! its served JSON already rendered, in one record per horse.
//!
//! A batch loads the record of each horse it touches once, replaces entries in memory
//! (a result adds or replaces the horse's entry for that race, an amendment that drops
//! the horse removes it), then writes it back and renders the form document from it once:
//! however many results of the batch name the horse, its form is read, written and
//! rendered once, and rendering copies the stored JSON without parsing it.
//!
//! Record layout: the entries one after the other, newest first, each as
//! `date`, `race_number` (one byte), `venue`, `name` (the result's name for the horse,
//! which names it when it has no profile) and `json`, every field but the race number
//! preceded by its length as a little-endian `u32`.

use std::cmp::Ordering;

use crate::docs::FormDoc;
use crate::StoreError;

/// A horse's form, loaded for a batch.
#[derive(Debug, Default)]
pub(crate) struct FormSource {
    /// The record as it was loaded; entries not replaced stay in it.
    loaded: Vec<u8>,
    /// Every entry, newest first.
    entries: Vec<Entry>,
    /// Whether an entry was added, replaced or removed since loading.
    changed: bool,
}

/// Where an entry's encoded bytes are.
#[derive(Debug)]
enum Entry {
    Loaded(std::ops::Range<usize>),
    New(Vec<u8>),
}

/// The fields of one encoded entry.
struct Fields<'a> {
    date: &'a [u8],
    race_number: u8,
    venue: &'a [u8],
    name: &'a [u8],
    json: &'a [u8],
}

fn put_field(out: &mut Vec<u8>, field: &[u8]) {
    out.extend_from_slice(&(field.len() as u32).to_le_bytes());
    out.extend_from_slice(field);
}

/// Reads a length-prefixed field at `*at`, moving `*at` past it.
fn field<'a>(bytes: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let len = u32::from_le_bytes(bytes.get(*at..*at + 4)?.try_into().ok()?) as usize;
    let value = bytes.get(*at + 4..*at + 4 + len)?;
    *at += 4 + len;
    Some(value)
}

/// Parses the entry that starts at `*at`, moving `*at` past it.
fn fields<'a>(bytes: &'a [u8], at: &mut usize) -> Option<Fields<'a>> {
    let date = field(bytes, at)?;
    let race_number = *bytes.get(*at)?;
    *at += 1;
    Some(Fields {
        date,
        race_number,
        venue: field(bytes, at)?,
        name: field(bytes, at)?,
        json: field(bytes, at)?,
    })
}

/// One change of a horse's form, as [`FormSource::replace`] takes it, encoded to be kept
/// (the form's history: `keys::form_change`): a byte saying whether an entry is given,
/// then the entry's fields (with an empty name and JSON when it is not).
pub fn change(date: &str, race_number: u8, venue: &str, entry: Option<(&str, &[u8])>) -> Vec<u8> {
    let (name, json) = entry.unwrap_or(("", b""));
    let mut out = Vec::with_capacity(23 + date.len() + venue.len() + name.len() + json.len());
    out.push(u8::from(entry.is_some()));
    put_field(&mut out, date.as_bytes());
    out.push(race_number);
    put_field(&mut out, venue.as_bytes());
    put_field(&mut out, name.as_bytes());
    put_field(&mut out, json);
    out
}

/// Newest first: date, then race number, descending; venue breaks a tie so the order
/// never depends on arrival.
fn newest_first(a: (&[u8], u8, &[u8]), b: (&[u8], u8, &[u8])) -> Ordering {
    b.cmp(&a)
}

impl FormSource {
    /// The form stored as `record`.
    pub fn decode(record: Vec<u8>) -> Result<FormSource, StoreError> {
        let mut entries = Vec::new();
        let mut at = 0;
        while at < record.len() {
            let start = at;
            fields(&record, &mut at)
                .ok_or_else(|| StoreError::Corrupt("a form record is truncated".into()))?;
            entries.push(Entry::Loaded(start..at));
        }
        Ok(FormSource {
            loaded: record,
            entries,
            changed: false,
        })
    }

    fn bytes<'a>(&'a self, entry: &'a Entry) -> &'a [u8] {
        match entry {
            Entry::Loaded(range) => self.loaded.get(range.clone()).unwrap_or_default(),
            Entry::New(bytes) => bytes,
        }
    }

    fn fields<'a>(&'a self, entry: &'a Entry) -> Fields<'a> {
        // Loaded entries were parsed by `decode`, new ones encoded by `replace`.
        fields(self.bytes(entry), &mut 0).unwrap_or(Fields {
            date: b"",
            race_number: 0,
            venue: b"",
            name: b"",
            json: b"",
        })
    }

    /// Replaces the horse's entry for one race: removes any it had, then adds
    /// `name` and `json` if given.
    pub fn replace(
        &mut self,
        date: &str,
        race_number: u8,
        venue: &str,
        entry: Option<(&str, &[u8])>,
    ) {
        let key = (date.as_bytes(), race_number, venue.as_bytes());
        let older = |e: &Entry| {
            let f = self.fields(e);
            newest_first((f.date, f.race_number, f.venue), key) == Ordering::Greater
        };
        // Results mostly come newest last: the new entry goes first.
        let at = if self.entries.first().is_none_or(older) {
            0
        } else {
            self.entries.partition_point(|e| {
                let f = self.fields(e);
                newest_first((f.date, f.race_number, f.venue), key) == Ordering::Less
            })
        };
        if self.entries.get(at).is_some_and(|e| {
            let f = self.fields(e);
            (f.date, f.race_number, f.venue) == key
        }) {
            self.entries.remove(at);
            self.changed = true;
        }
        if let Some((name, json)) = entry {
            let mut bytes = Vec::with_capacity(22 + venue.len() + name.len() + json.len());
            put_field(&mut bytes, date.as_bytes());
            bytes.push(race_number);
            put_field(&mut bytes, venue.as_bytes());
            put_field(&mut bytes, name.as_bytes());
            put_field(&mut bytes, json);
            self.entries.insert(at, Entry::New(bytes));
            self.changed = true;
        }
    }

    /// The form of a horse as its `changes` (in the order they were made, each as
    /// [`change`] encodes it) leave it.
    pub fn from_changes<'a>(
        changes: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<FormSource, StoreError> {
        let mut form = FormSource::default();
        for c in changes {
            let damaged = || StoreError::Corrupt("a form change is truncated".into());
            let (present, entry) = c.split_first().ok_or_else(damaged)?;
            let f = fields(entry, &mut 0).ok_or_else(damaged)?;
            fn text(b: &[u8]) -> Result<&str, StoreError> {
                std::str::from_utf8(b)
                    .map_err(|_| StoreError::Corrupt("a form change is not text".into()))
            }
            let given = (*present == 1).then_some((text(f.name)?, f.json));
            form.replace(text(f.date)?, f.race_number, text(f.venue)?, given);
        }
        Ok(form)
    }

    /// Whether the horse has run in no race.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the record must be written back.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The name the newest result gave the horse.
    pub fn newest_name(&self) -> Option<String> {
        self.entries
            .first()
            .map(|e| String::from_utf8_lossy(self.fields(e).name).into_owned())
    }

    /// The record to store.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.entries.iter().map(|e| self.bytes(e).len()).sum());
        for e in &self.entries {
            out.extend_from_slice(self.bytes(e));
        }
        out
    }

    /// The form document of `horse_no`, named `horse_name`.
    pub fn render(&self, horse_no: &str, horse_name: &str) -> Vec<u8> {
        FormDoc::render(
            horse_no,
            horse_name,
            self.entries.iter().map(|e| self.fields(e).json),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(form: &FormSource) -> Vec<(String, u8, String, String)> {
        form.entries
            .iter()
            .map(|e| {
                let f = form.fields(e);
                (
                    String::from_utf8_lossy(f.date).into_owned(),
                    f.race_number,
                    String::from_utf8_lossy(f.venue).into_owned(),
                    String::from_utf8_lossy(f.json).into_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn entries_stay_newest_first_and_survive_a_round_trip() {
        let mut form = FormSource::default();
        form.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{1}")));
        form.replace("2026-11-01", 1, "Sha Tin", Some(("B", b"{2}")));
        form.replace("2026-10-01", 7, "Happy Valley", Some(("C", b"{3}")));
        form.replace("2026-10-01", 7, "Sha Tin", Some(("D", b"{4}")));
        let mut again = FormSource::decode(form.encode()).expect("decodes");
        assert!(!again.changed());
        again.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{5}")));
        again.replace("2026-10-01", 7, "Happy Valley", None);
        again.replace("2026-09-01", 1, "Sha Tin", None);
        assert!(again.changed());
        let got: Vec<(u8, String)> = order(&again)
            .into_iter()
            .map(|(_, n, _, json)| (n, json))
            .collect();
        assert_eq!(
            got,
            [(1, "{2}".into()), (7, "{4}".into()), (2, "{5}".into())]
        );
        assert_eq!(again.newest_name().as_deref(), Some("B"));
        let rendered = again.render("E271", "NAME");
        let json = FormDoc::body(&rendered, None).expect("framed");
        assert_eq!(
            String::from_utf8_lossy(&json),
            r#"{"horse_no":"E271","horse_name":"NAME","form":[{2},{4},{5}]}"#
        );
    }

    #[test]
    fn a_truncated_record_is_reported_damaged() {
        let mut form = FormSource::default();
        form.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{1}")));
        let mut record = form.encode();
        record.pop();
        assert!(FormSource::decode(record).is_err());
    }
}
