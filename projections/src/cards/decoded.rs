//! The cards and card forms a fold decoded, each kept with the hash of the bytes it was
//! decoded from. An amended result changes the form of the later races of its horses, and
//! the strike rates of the races of the 14 days after it that share one of its people; at
//! each such result, each of those races' card is read to amend its form or to render its
//! part, and the form it wrote is read to amend it at the next result and to render it. A
//! card is decoded here once while its record stays the same (a card the fold declares is
//! kept as the event gave it, which its record decodes back to), and a form is kept as
//! the fold encoded it, both as the runners' forms it amends and as the raw parts its
//! render copies, so that it is not parsed back; a runner's form that an amendment left
//! as it was keeps its raw part, not encoded again. A record is used only where its bytes
//! hash as those it was decoded from (as a race's part is, `race_parts.rs`), so it is
//! never stale, whatever wrote them.

use std::collections::BTreeSet;
use std::sync::Arc;

use foldhash::HashMap;
use racing_events::RaceCard;
use serde_json::value::RawValue;

use crate::docs::cards::{HorseForm, RaceForm, StoredRaceForm};
use crate::kv::StoreError;
use crate::state::{decode, Records};

/// Most races whose card and form a fold hands on to the next batch ([`Decoded::kept`]):
/// an amended result reaches the later races of its horses and the races of the 14 days
/// after it, some hundreds, and the results of a catch-up of amended seasons, committed
/// a few events at a time, reach every race of the seasons: past this, each commit's end
/// gives them all up (1,024 were fewer than six demo seasons' races: BENCHMARKS.md).
const KEPT: usize = 4_096;

/// A batch of this many events or more hands on nothing decoded: the next batch of a bulk
/// load is about races after its own, and what it held would stay through that batch too,
/// raising the replay's peak (BENCHMARKS.md, "What was tried").
const HANDED_ON_BELOW: usize = 4_096;

/// The cards and forms decoded, by the key of their record, each with the hash of its
/// bytes.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    cards: HashMap<Vec<u8>, (u128, Arc<RaceCard>)>,
    forms: HashMap<Vec<u8>, Form>,
}

/// A race's form record as a fold read or wrote it.
#[derive(Debug)]
struct Form {
    /// The hash of the record's bytes.
    hash: u128,
    /// Each runner's part of them, as a render copies it.
    raw: Arc<StoredRaceForm>,
    /// The runners' forms they encode, where the fold encoded them ([`Decoded::encode`]),
    /// until an amendment takes them ([`Decoded::amending`]).
    typed: Option<RaceForm>,
}

impl Decoded {
    /// What the next batch of the store may start from, after a batch of `events`: each
    /// kind kept while within [`KEPT`], nothing after a batch of [`HANDED_ON_BELOW`]
    /// events or more.
    pub(crate) fn kept(mut self, events: usize) -> Decoded {
        if events >= HANDED_ON_BELOW {
            return Decoded::default();
        }
        if self.cards.len() > KEPT {
            self.cards = HashMap::default();
        }
        if self.forms.len() > KEPT {
            self.forms = HashMap::default();
        }
        self
    }

    /// The card stored under `key` (`keys::card`) whose record is `record` (`None`: no
    /// card).
    pub(crate) fn card(
        &mut self,
        key: &[u8],
        record: Option<&Hashed>,
    ) -> Result<Option<Arc<RaceCard>>, StoreError> {
        kept_or_decoded(&mut self.cards, key, record)
    }

    /// The card stored under `key` as `s` holds it.
    pub(crate) fn card_in(
        &mut self,
        s: &impl Records,
        key: &[u8],
    ) -> Result<Option<Arc<RaceCard>>, StoreError> {
        let record = s.get(key)?.map(Hashed::of);
        self.card(key, record.as_ref())
    }

    /// Keeps `card`, just written under `key` (`keys::card`) as `s` holds it, as if
    /// decoded from its record: the record is `card` encoded (`facts.rs`), which decodes
    /// back to it, so that the card a fold declares is not decoded back from the bytes it
    /// encoded.
    pub(crate) fn written_card(
        &mut self,
        s: &impl Records,
        key: &[u8],
        card: &RaceCard,
    ) -> Result<(), StoreError> {
        if let Some(bytes) = s.get(key)? {
            self.cards
                .insert(key.to_vec(), (hash(&bytes), Arc::new(card.clone())));
        }
        Ok(())
    }

    /// The form stored under `key` (`keys::analysis::card_form`) whose record is `record`,
    /// as its render copies it.
    pub(crate) fn form(
        &mut self,
        key: &[u8],
        record: Option<&Hashed>,
    ) -> Result<Option<Arc<StoredRaceForm>>, StoreError> {
        let Some(Hashed { bytes, hash: h }) = record else {
            return Ok(None);
        };
        if let Some(form) = self.forms.get(key).filter(|form| form.hash == *h) {
            return Ok(Some(form.raw.clone()));
        }
        let what = || String::from_utf8_lossy(key).into_owned();
        let Some(raw) = decode::<StoredRaceForm>(Some(bytes), what)? else {
            return Ok(None);
        };
        let raw = Arc::new(raw);
        let form = Form {
            hash: *h,
            raw: raw.clone(),
            typed: None,
        };
        self.forms.insert(key.to_vec(), form);
        Ok(Some(raw))
    }

    /// The form of the record `bytes` stored under `key`, to amend: as the fold encoded it
    /// where these are the bytes it wrote (taken: [`Decoded::encode_amended`] keeps it
    /// again), else decoded.
    pub(crate) fn amending(
        &mut self,
        key: &[u8],
        bytes: &[u8],
    ) -> Result<Amending, serde_json::Error> {
        if let Some(form) = self.forms.get_mut(key).filter(|f| f.hash == hash(bytes)) {
            if let Some(forms) = form.typed.take() {
                return Ok(Amending {
                    forms,
                    parts: Some(form.raw.clone()),
                });
            }
        }
        Ok(Amending {
            forms: serde_json::from_slice(bytes)?,
            parts: None,
        })
    }

    /// The record of `amended`, the form to store under `key`, kept as [`Decoded::encode`]
    /// keeps a form: a runner not among `redone` (those whose form the amendment
    /// changed) keeps its part, where the fold had encoded the form it started from.
    pub(crate) fn encode_amended(
        &mut self,
        key: &[u8],
        amended: Amending,
        redone: &BTreeSet<&str>,
    ) -> Vec<u8> {
        let (json, raw) = encode(&amended.forms, |horse, _| {
            let parts = amended.parts.as_deref()?;
            (!redone.contains(horse)).then(|| parts.get(horse))?
        });
        self.keep(key, json, raw, amended.forms)
    }

    /// The record of `forms`, the form to store under `key`: the bytes `serde_json::to_vec`
    /// gives, and each runner's part of them kept for [`Decoded::form`], and the forms for
    /// [`Decoded::amending`]. A runner's form the same as in the form last kept under `key`
    /// keeps its part.
    pub(crate) fn encode(&mut self, key: &[u8], forms: RaceForm) -> Vec<u8> {
        let before = self
            .forms
            .get(key)
            .and_then(|form| Some((form.typed.as_ref()?, &*form.raw)));
        let (json, raw) = encode(&forms, |horse, form| {
            let (forms, parts) = before?;
            (forms.get(horse) == Some(form)).then(|| parts.get(horse))?
        });
        self.keep(key, json, raw, forms)
    }

    /// Keeps `forms`, encoded as `json` with the runners' parts `raw`, under `key`.
    fn keep(&mut self, key: &[u8], json: Vec<u8>, raw: StoredRaceForm, forms: RaceForm) -> Vec<u8> {
        let form = Form {
            hash: hash(&json),
            raw: Arc::new(raw),
            typed: Some(forms),
        };
        self.forms.insert(key.to_vec(), form);
        json
    }
}

/// A race's form an amendment starts from ([`Decoded::amending`]): the runners' forms,
/// to change in place, and their parts where the fold encoded them.
pub(crate) struct Amending {
    pub(crate) forms: RaceForm,
    parts: Option<Arc<StoredRaceForm>>,
}

/// A record's bytes with their hash, worked out once for each use of them: the caches
/// here and a race's part (`race.rs`) each check a record by its hash.
#[derive(Debug)]
pub(crate) struct Hashed {
    pub(crate) bytes: Vec<u8>,
    pub(crate) hash: u128,
}

impl Hashed {
    pub(crate) fn of(bytes: Vec<u8>) -> Hashed {
        Hashed {
            hash: hash(&bytes),
            bytes,
        }
    }
}

/// The value under `key` in `kept` where it was decoded from bytes that hash as
/// `record`'s do, else `record` decoded (and kept).
fn kept_or_decoded<T: serde::de::DeserializeOwned>(
    kept: &mut HashMap<Vec<u8>, (u128, Arc<T>)>,
    key: &[u8],
    record: Option<&Hashed>,
) -> Result<Option<Arc<T>>, StoreError> {
    let Some(Hashed { bytes, hash: h }) = record else {
        return Ok(None);
    };
    if let Some((was, value)) = kept.get(key) {
        if was == h {
            return Ok(Some(value.clone()));
        }
    }
    let what = || String::from_utf8_lossy(key).into_owned();
    let Some(value) = decode::<T>(Some(bytes), what)? else {
        return Ok(None);
    };
    let value = Arc::new(value);
    kept.insert(key.to_vec(), (*h, value.clone()));
    Ok(Some(value))
}

fn hash(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// `forms` as `serde_json::to_vec` writes it (a map's entries in order, each key a JSON
/// string, no spaces), assembled from each runner's form written alone, which is kept as
/// its raw part; a runner's part taken from `kept` where it gives one (the part encoded
/// before for the same form).
fn encode<'a>(
    forms: &RaceForm,
    kept: impl Fn(&str, &HorseForm) -> Option<&'a Box<RawValue>>,
) -> (Vec<u8>, StoredRaceForm) {
    let mut json = Vec::with_capacity(512 * forms.len() + 2);
    // In key order: the map is built at once from them.
    let mut stored = Vec::with_capacity(forms.len());
    json.push(b'{');
    for (i, (horse, form)) in forms.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        // Plain data: serialising it cannot fail.
        let key = serde_json::to_vec(horse).unwrap_or_default();
        json.extend_from_slice(&key);
        json.push(b':');
        let raw = match kept(horse, form) {
            Some(raw) => raw.clone(),
            None => serde_json::value::to_raw_value(form).unwrap_or_default(),
        };
        json.extend_from_slice(raw.get().as_bytes());
        stored.push((horse.clone(), raw));
    }
    json.push(b'}');
    (json, stored.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each runner's raw part, as text, to compare.
    fn parts(stored: &StoredRaceForm) -> Vec<(&str, &str)> {
        stored.iter().map(|(k, v)| (k.as_str(), v.get())).collect()
    }

    /// Asserts that `json`, kept under `key`, is `forms` as serde_json writes it, and that
    /// the parts kept of it are those serde_json parses.
    fn assert_encoded_as_serde(decoded: &mut Decoded, key: &[u8], json: &[u8], forms: &RaceForm) {
        let expected = serde_json::to_vec(forms).expect("encoded");
        assert_eq!(
            String::from_utf8_lossy(json),
            String::from_utf8_lossy(&expected)
        );
        let kept = decoded
            .form(key, Some(&Hashed::of(json.to_vec())))
            .expect("kept");
        let parsed: StoredRaceForm = serde_json::from_slice(json).expect("parsed");
        assert_eq!(parts(&kept.expect("a form")), parts(&parsed));
    }

    fn forms() -> RaceForm {
        let mut forms = RaceForm::new();
        let mut form = HorseForm {
            figures: "12/3\"x".into(),
            runs: 7,
            c: true,
            ..HorseForm::default()
        };
        forms.insert("A007".into(), form.clone());
        form.days_since_run = Some(14);
        forms.insert("B1\"\\é\u{1}".into(), form);
        forms
    }

    #[test]
    fn a_form_is_encoded_as_serde_json_encodes_it_and_its_parts_as_it_parses_them() {
        for forms in [RaceForm::new(), forms()] {
            let (json, stored) = encode(&forms, |_, _| None);
            let expected = serde_json::to_vec(&forms).expect("encoded");
            assert_eq!(
                String::from_utf8_lossy(&json),
                String::from_utf8_lossy(&expected)
            );
            let parsed: StoredRaceForm = serde_json::from_slice(&json).expect("parsed");
            assert_eq!(parts(&stored), parts(&parsed));
        }
    }

    #[test]
    fn a_record_is_decoded_again_when_its_bytes_change() {
        let key = crate::keys::analysis::card_form("2026-11-01", 1, "Sha Tin");
        let mut decoded = Decoded::default();
        let (json, _) = encode(&forms(), |_, _| None);
        let first = decoded
            .form(&key, Some(&Hashed::of(json.clone())))
            .expect("decoded");
        let again = decoded
            .form(&key, Some(&Hashed::of(json.clone())))
            .expect("kept");
        assert!(Arc::ptr_eq(
            first.as_ref().expect("a form"),
            again.as_ref().expect("a form")
        ));
        let other = decoded
            .form(&key, Some(&Hashed::of(b"{}".to_vec())))
            .expect("decoded");
        assert_eq!(other.map(|f| f.len()), Some(0));
        assert!(decoded.form(&key, None).expect("none").is_none());
        let bad = decoded.form(&key, Some(&Hashed::of(b"{".to_vec())));
        assert!(matches!(bad, Err(StoreError::Corrupt(_))), "{bad:?}");
        // What `encode` kept is what a render reads back of the same bytes.
        let encoded = decoded.encode(&key, forms());
        assert_eq!(encoded, json);
        let kept = decoded
            .form(&key, Some(&Hashed::of(json.clone())))
            .expect("kept");
        let parsed: StoredRaceForm = serde_json::from_slice(&json).expect("parsed");
        assert_eq!(parts(&kept.expect("a form")), parts(&parsed));
    }

    #[test]
    fn a_form_encoded_again_keeps_the_parts_of_the_runners_whose_form_is_the_same() {
        let key = crate::keys::analysis::card_form("2026-11-01", 1, "Sha Tin");
        let mut decoded = Decoded::default();
        decoded.encode(&key, forms());
        let mut changed = forms();
        if let Some(form) = changed.get_mut("A007") {
            form.runs += 1;
        }
        changed.insert("C3".into(), HorseForm::default());
        let json = decoded.encode(&key, changed.clone());
        assert_encoded_as_serde(&mut decoded, &key, &json, &changed);
    }

    #[test]
    fn an_amended_form_keeps_the_parts_of_the_runners_it_did_not_redo() {
        let key = crate::keys::analysis::card_form("2026-11-01", 1, "Sha Tin");
        let mut decoded = Decoded::default();
        let first = decoded.encode(&key, forms());
        // Of other bytes, or a record not encoded by the fold, the form is decoded.
        let empty = decoded.amending(&key, b"{}").expect("decoded");
        assert!(empty.forms.is_empty() && empty.parts.is_none());
        assert!(decoded.amending(&key, b"{").is_err());
        // Of the bytes it wrote, the form it encoded, taken.
        let mut amending = decoded.amending(&key, &first).expect("forms");
        assert_eq!(amending.forms, forms());
        assert!(amending.parts.is_some());
        assert!(decoded
            .amending(&key, &first)
            .expect("decoded")
            .parts
            .is_none());
        // One runner redone, one added, one left as it was.
        if let Some(form) = amending.forms.get_mut("A007") {
            form.runs += 1;
            form.cd = true;
        }
        amending.forms.insert("C3".into(), HorseForm::default());
        let forms = amending.forms.clone();
        let redone = BTreeSet::from(["A007", "C3"]);
        let json = decoded.encode_amended(&key, amending, &redone);
        assert_encoded_as_serde(&mut decoded, &key, &json, &forms);
        // Kept again, to amend at the next result.
        assert_eq!(decoded.amending(&key, &json).expect("forms").forms, forms);
    }
}
