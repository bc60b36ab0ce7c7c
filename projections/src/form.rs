//! A horse's form as the fold keeps it: every race of the horse, newest first, in one
//! record per horse beside the form document, which holds each entry's served JSON.
//!
//! A batch loads the record and the document of each horse it touches once, replaces
//! entries in memory (a result adds or replaces the horse's entry for that race, an
//! amendment that drops the horse removes it), then writes the record back and renders
//! the form document from it once: however many results of the batch name the horse, its
//! form is read, written and rendered once, and rendering copies the stored JSON without
//! parsing it.
//!
//! Record layout: the entries one after the other, newest first, each as `date`,
//! `race_number` (one byte), `venue`, `name` (the result's name for the horse, which names
//! it when it has no profile), every field but the race number preceded by its length as a
//! little-endian `u32`, then the length of the entry's JSON as one. The JSON itself is kept
//! once, in the document, which frames it ([`FormDoc`]): a record that held it too wrote
//! every touched form twice a batch, whole, and a long form is a hundred kilobytes.

use std::cmp::Ordering;
use std::ops::Range;

use crate::batched::PerBatch;
use crate::docs::FormDoc;
use crate::fold::State;
use crate::keys;
use crate::StoreError;

/// A horse's form, loaded for a batch.
#[derive(Debug, Default)]
pub(crate) struct FormSource {
    /// The record as it was loaded; entries not replaced stay in it.
    loaded: Vec<u8>,
    /// The stored form document loaded with it, which holds the JSON of those entries.
    doc: Vec<u8>,
    /// Every entry, newest first.
    entries: Vec<Entry>,
    /// Whether an entry was added, replaced or removed since loading.
    changed: bool,
}

/// Where an entry's encoded fields and its JSON are.
#[derive(Debug)]
enum Entry {
    /// In the loaded record and the loaded document.
    Loaded {
        fields: Range<usize>,
        json: Range<usize>,
    },
    New {
        fields: Vec<u8>,
        json: Vec<u8>,
    },
}

/// The fields of one entry.
struct Fields<'a> {
    date: &'a [u8],
    race_number: u8,
    venue: &'a [u8],
    name: &'a [u8],
}

fn put_field(out: &mut Vec<u8>, field: &[u8]) {
    out.extend_from_slice(&(field.len() as u32).to_le_bytes());
    out.extend_from_slice(field);
}

fn put_fields(out: &mut Vec<u8>, date: &str, race_number: u8, venue: &str, name: &str) {
    put_field(out, date.as_bytes());
    out.push(race_number);
    put_field(out, venue.as_bytes());
    put_field(out, name.as_bytes());
}

/// Reads a little-endian `u32` at `*at`, moving `*at` past it.
fn length(bytes: &[u8], at: &mut usize) -> Option<usize> {
    let len = u32::from_le_bytes(bytes.get(*at..*at + 4)?.try_into().ok()?) as usize;
    *at += 4;
    Some(len)
}

/// Reads a length-prefixed field at `*at`, moving `*at` past it.
fn field<'a>(bytes: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let mut end = *at;
    let len = length(bytes, &mut end)?;
    let value = bytes.get(end..end + len)?;
    *at = end + len;
    Some(value)
}

/// Parses the fields that start at `*at`, moving `*at` past them.
fn fields<'a>(bytes: &'a [u8], at: &mut usize) -> Option<Fields<'a>> {
    let date = field(bytes, at)?;
    let race_number = *bytes.get(*at)?;
    *at += 1;
    Some(Fields {
        date,
        race_number,
        venue: field(bytes, at)?,
        name: field(bytes, at)?,
    })
}

/// One change of a horse's form, as [`FormSource::replace`] takes it, encoded to be kept
/// (the form's history: `keys::form_change`): a byte saying whether an entry is given,
/// then the entry's fields and its JSON (with an empty name and JSON when it is not).
pub fn change(date: &str, race_number: u8, venue: &str, entry: Option<(&str, &[u8])>) -> Vec<u8> {
    let (name, json) = entry.unwrap_or(("", b""));
    let mut out = Vec::with_capacity(23 + date.len() + venue.len() + name.len() + json.len());
    out.push(u8::from(entry.is_some()));
    put_fields(&mut out, date, race_number, venue, name);
    put_field(&mut out, json);
    out
}

/// The changes of horses' forms a batch made, by horse, until [`Changes::write`] writes
/// each horse's as one record ([`keys::form_change`], `batched.rs`): the form's history,
/// which `as_of` answers read.
#[derive(Debug, Default)]
pub(crate) struct Changes(PerBatch<String>);

impl Changes {
    /// Adds a change of `horse`'s form by the event at `seq` (after any it holds).
    pub(crate) fn push(&mut self, horse: &str, seq: u64, change: &[u8]) {
        self.0.push(horse, seq, change);
    }

    /// Writes each horse's changes as one record, and forgets them.
    pub(crate) fn write(&mut self, s: &mut impl State) {
        for (horse, first, record) in self.0.drain() {
            s.put(keys::form_change(&horse, first), record);
        }
    }
}

/// Newest first: date, then race number, descending; venue breaks a tie so the order
/// never depends on arrival.
fn newest_first(a: (&[u8], u8, &[u8]), b: (&[u8], u8, &[u8])) -> Ordering {
    b.cmp(&a)
}

impl FormSource {
    /// The form stored as `record` beside the stored form document `doc` (each `None`
    /// where there is none). The record must name as many entries as the document frames,
    /// each as long as its JSON there.
    pub fn load(record: Option<Vec<u8>>, doc: Option<Vec<u8>>) -> Result<FormSource, StoreError> {
        let damaged = |what: &str| StoreError::Corrupt(format!("a form record {what}"));
        let mismatch = || damaged("does not match its form document");
        let (record, doc) = match (record, doc) {
            (None, None) => return Ok(FormSource::default()),
            (record, Some(doc)) => (record.unwrap_or_default(), doc),
            (Some(_), None) => return Err(damaged("has no form document")),
        };
        let body = crate::docs::unseal(&doc);
        let (json_at, ends) =
            FormDoc::frame(body).ok_or_else(|| damaged("has no form document"))?;
        let base = doc.len() - body.len() + json_at;
        let json = body.get(json_at..).unwrap_or_default();
        let mut entries = Vec::with_capacity(ends.len());
        let mut at = 0;
        let mut last_end = None;
        while at < record.len() {
            let start = at;
            fields(&record, &mut at).ok_or_else(|| damaged("is truncated"))?;
            let fields = start..at;
            let len = length(&record, &mut at).ok_or_else(|| damaged("is truncated"))?;
            let end = ends.get(entries.len()).copied().ok_or_else(mismatch)? as usize;
            let begin = end.checked_sub(len).ok_or_else(mismatch)?;
            // Entries follow one another in the array, a comma apart.
            let (before, separator) = match last_end {
                None => (begin.checked_sub(1).ok_or_else(mismatch)?, b'['),
                Some(last) => (last, b','),
            };
            if end > json.len() || before + 1 != begin || json.get(before) != Some(&separator) {
                return Err(mismatch());
            }
            last_end = Some(end);
            entries.push(Entry::Loaded {
                fields,
                json: base + begin..base + end,
            });
        }
        if entries.len() != ends.len() {
            return Err(mismatch());
        }
        Ok(FormSource {
            loaded: record,
            doc,
            entries,
            changed: false,
        })
    }

    fn fields<'a>(&'a self, entry: &'a Entry) -> Fields<'a> {
        let (bytes, at) = match entry {
            Entry::Loaded { fields, .. } => (&self.loaded[..], fields.start),
            Entry::New { fields, .. } => (&fields[..], 0),
        };
        // Loaded entries were parsed by `load`, new ones encoded by `replace`.
        let mut at = at;
        fields(bytes, &mut at).unwrap_or(Fields {
            date: b"",
            race_number: 0,
            venue: b"",
            name: b"",
        })
    }

    fn json<'a>(&'a self, entry: &'a Entry) -> &'a [u8] {
        match entry {
            Entry::Loaded { json, .. } => self.doc.get(json.clone()).unwrap_or_default(),
            Entry::New { json, .. } => json,
        }
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
            let mut fields = Vec::with_capacity(13 + date.len() + venue.len() + name.len());
            put_fields(&mut fields, date, race_number, venue, name);
            self.entries.insert(
                at,
                Entry::New {
                    fields,
                    json: json.to_vec(),
                },
            );
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
            let mut at = 0;
            let f = fields(entry, &mut at).ok_or_else(damaged)?;
            let json = field(entry, &mut at).ok_or_else(damaged)?;
            fn text(b: &[u8]) -> Result<&str, StoreError> {
                std::str::from_utf8(b)
                    .map_err(|_| StoreError::Corrupt("a form change is not text".into()))
            }
            let given = (*present == 1).then_some((text(f.name)?, json));
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

    /// The record to store, beside the document [`FormSource::render`] makes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for e in &self.entries {
            let fields = match e {
                Entry::Loaded { fields, .. } => self.loaded.get(fields.clone()).unwrap_or_default(),
                Entry::New { fields, .. } => fields,
            };
            out.extend_from_slice(fields);
            out.extend_from_slice(&(self.json(e).len() as u32).to_le_bytes());
        }
        out
    }

    /// The form document of `horse_no`, named `horse_name`.
    pub fn render(&self, horse_no: &str, horse_name: &str) -> Vec<u8> {
        FormDoc::render(
            horse_no,
            horse_name,
            self.entries.iter().map(|e| self.json(e)),
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
                    String::from_utf8_lossy(form.json(e)).into_owned(),
                )
            })
            .collect()
    }

    /// The record and the stored document of `form`, as the fold writes them.
    fn stored(form: &FormSource) -> (Vec<u8>, Vec<u8>) {
        let doc = crate::docs::seal(true, &form.render("E271", "NAME"), 7);
        (form.encode(), doc)
    }

    #[test]
    fn entries_stay_newest_first_and_survive_a_round_trip() {
        let mut form = FormSource::default();
        form.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{1}")));
        form.replace("2026-11-01", 1, "Sha Tin", Some(("B", b"{2}")));
        form.replace("2026-10-01", 7, "Happy Valley", Some(("C", b"{3}")));
        form.replace("2026-10-01", 7, "Sha Tin", Some(("D", b"{4}")));
        let (record, doc) = stored(&form);
        let mut again = FormSource::load(Some(record), Some(doc)).expect("loads");
        assert!(!again.changed());
        assert_eq!(order(&again), order(&form));
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
        // Loaded again from what it leaves, under another name: the same entries.
        let (record, _) = stored(&again);
        let doc = crate::docs::seal(true, &again.render("E271", "OTHER \"NAME\""), 8);
        let third = FormSource::load(Some(record), Some(doc)).expect("loads");
        assert_eq!(order(&third), order(&again));
    }

    #[test]
    fn the_record_keeps_each_entrys_json_only_in_the_document() {
        let mut form = FormSource::default();
        let json = br#"{"date":"2026-10-01","jockey":"Z Purton"}"#;
        form.replace("2026-10-01", 2, "Sha Tin", Some(("A", json)));
        let (record, doc) = stored(&form);
        let holds = |bytes: &[u8]| bytes.windows(json.len()).any(|w| w == json);
        assert!(!holds(&record), "the record holds the JSON");
        assert!(holds(&doc));
    }

    #[test]
    fn a_batchs_changes_of_a_form_are_one_record_read_back_in_order() {
        let mut changes = Changes::default();
        let first = change("2026-10-01", 2, "Sha Tin", Some(("A", b"{1}")));
        let second = change("2026-10-01", 2, "Sha Tin", None);
        let other = change("2026-10-01", 3, "Sha Tin", Some(("B", b"{2}")));
        changes.push("E271", 40, &first);
        changes.push("K307", 41, &other);
        changes.push("E271", 45, &second);
        let mut s = crate::MemState::default();
        changes.write(&mut s);
        assert!(changes.0.is_empty(), "forgotten once written");
        let record = s
            .records
            .get(&keys::form_change("E271", 40))
            .expect("one record, under the first change")
            .clone();
        let read: Vec<(u64, Vec<u8>)> = crate::batched::entries(&record)
            .map(|c| c.map(|(seq, c)| (seq, c.to_vec())))
            .collect::<Result<_, _>>()
            .expect("decodes");
        assert_eq!(read, [(40, first.clone()), (45, second.clone())]);
        // Taken apart, a record per change, as a store of a batch each would hold them.
        let by_event = crate::history_by_event(s.records).expect("decodes");
        let keys: Vec<Vec<u8>> = by_event.keys().cloned().collect();
        assert_eq!(
            keys,
            [
                keys::form_change("E271", 40),
                keys::form_change("E271", 45),
                keys::form_change("K307", 41)
            ]
        );
        // Cut anywhere inside a change, a record is damaged, not shorter.
        for cut in 1..record.len() {
            if cut == 12 + first.len() {
                continue; // between the two changes: a record of one
            }
            assert!(
                crate::batched::entries(&record[..cut]).any(|c| c.is_err()),
                "cut at {cut} of {}",
                record.len()
            );
        }
    }

    #[test]
    fn a_truncated_record_is_reported_damaged() {
        let mut form = FormSource::default();
        form.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{1}")));
        let (mut record, doc) = stored(&form);
        record.pop();
        assert!(FormSource::load(Some(record), Some(doc)).is_err());
    }

    #[test]
    fn a_record_that_does_not_match_its_document_is_reported_damaged() {
        let mut one = FormSource::default();
        one.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{1}")));
        let mut two = FormSource::default();
        two.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{11}")));
        two.replace("2026-10-02", 1, "Sha Tin", Some(("A", b"{2}")));
        let (record_one, doc_one) = stored(&one);
        let (record_two, doc_two) = stored(&two);
        // Fewer entries than the document frames, more, and a JSON of another length.
        assert!(FormSource::load(Some(record_one.clone()), Some(doc_two.clone())).is_err());
        assert!(FormSource::load(Some(record_two), Some(doc_one.clone())).is_err());
        let mut longer = FormSource::default();
        longer.replace("2026-10-01", 2, "Sha Tin", Some(("A", b"{11}")));
        assert!(FormSource::load(Some(longer.encode()), Some(doc_one.clone())).is_err());
        // A record without its document, and a document framing entries without a record.
        assert!(FormSource::load(Some(record_one), None).is_err());
        assert!(FormSource::load(None, Some(doc_one)).is_err());
        // Neither: a horse with no race.
        assert!(FormSource::load(None, None).expect("empty").is_empty());
    }
}
