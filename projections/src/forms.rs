//! The forms as a read model: a result replaces the entry of each horse it names (or
//! named, before an amendment), a retraction removes them, a profile renames the form;
//! each touched horse's form head is stored again once a batch where its document
//! changed, from the entries the batch replaced and the newest, however long the form.

use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;
use serde::Deserialize;

use crate::docs;
use crate::docs::form::{FormDoc, FormEntry};
use crate::facts::{Change, Facts, What};
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::state::{race_no, Records, State};

use crate::form::{self, FormSource, Replaced};

/// The horses whose forms a batch touched, each with the JSON that the entries the batch
/// replaced served before it (`None`: there was none), by the entry's name.
#[derive(Debug, Default)]
pub(crate) struct Forms {
    horses: BTreeMap<String, BTreeMap<Vec<u8>, Option<Vec<u8>>>>,
    /// The name each horse's profile document gave, with the hash of the document's
    /// bytes it was read from: a form is rendered at each of its horse's results, and
    /// its profile changes far less often.
    profile_names: HashMap<String, (u128, String)>,
}

impl Forms {
    /// The entries `horse`'s form had replaced in the batch so far.
    fn touch(&mut self, horse: &str) -> &mut BTreeMap<Vec<u8>, Option<Vec<u8>>> {
        self.horses.entry(horse.to_owned()).or_default()
    }

    /// Replaces `horse`'s form entry for one race (`date`, number, venue), by the change
    /// at `seq`.
    fn replace(
        &mut self,
        s: &mut impl State,
        horse: &str,
        race: (&str, u8, &str),
        entry: Option<(&str, &[u8])>,
        seq: u64,
    ) -> Result<(), StoreError> {
        let replaced = form::replace(s, horse, race, entry, seq)?;
        let before = self.touch(horse);
        if let Replaced::Was(key, was) = replaced {
            // What the entry served before the batch: the first replacement's.
            before.entry(key).or_insert(was);
        }
        Ok(())
    }

    /// The name `horse`'s profile document gives it as `s` holds it (`None`: it has no
    /// profile), decoded again only where the document's bytes changed.
    fn profile_name(
        &mut self,
        s: &impl Records,
        horse: &str,
    ) -> Result<Option<String>, StoreError> {
        let key = DocKey::Profile(horse).key();
        let Some(stored) = s.get(&key)? else {
            return Ok(None);
        };
        let hash = xxhash_rust::xxh3::xxh3_128(&stored);
        if let Some((was, name)) = self.profile_names.get(horse) {
            if *was == hash {
                return Ok(Some(name.clone()));
            }
        }
        let name = name_in_profile(&key, &stored)?;
        self.profile_names
            .insert(horse.to_owned(), (hash, name.clone()));
        Ok(Some(name))
    }
}

impl ReadModel for Forms {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        let seq = change.seq;
        match &change.what {
            // The profile's name heads the form document.
            What::Profile(p) => {
                self.touch(&p.horse_no);
            }
            What::Result { old, new: r } => {
                let race = (r.date.as_str(), race_no(r.race_number)?, r.venue.as_str());
                // An amendment may drop a runner: every horse of the old and the new
                // result has its entry for this race replaced (or removed).
                let mut horses: BTreeSet<&str> =
                    r.runners.iter().map(|x| x.horse_no.as_str()).collect();
                if let Some(old) = old {
                    horses.extend(old.runners.iter().map(|x| x.horse_no.as_str()));
                }
                for horse in horses {
                    let runner = r.runners.iter().find(|x| x.horse_no == horse);
                    let json = runner.map(|x| FormEntry::from_result(r, x).json());
                    let entry = runner
                        .zip(json.as_deref())
                        .map(|(x, j)| (x.horse_name.as_str(), j));
                    self.replace(s, horse, race, entry, seq)?;
                }
            }
            What::Retracted(r) => {
                let race = (r.date, r.race_number, r.venue);
                for runner in r.result.iter().flat_map(|x| &x.runners) {
                    self.replace(s, &runner.horse_no, race, None, seq)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn render<S: State>(&mut self, s: &mut S, seq: u64, _: &Facts) -> Result<(), StoreError> {
        for (horse, before) in std::mem::take(&mut self.horses) {
            let key = DocKey::Form(&horse).key();
            let records: &S = s;
            let name = match self.profile_name(records, &horse)? {
                Some(name) => Some(name),
                None => form::newest_name(records, &horse)?,
            };
            let Some(name) = name else {
                // Appears nowhere any more (an amendment removed its only race).
                s.delete(key);
                continue;
            };
            // A form's entries are records of their own: its key holds the rest. The
            // document is what it was unless its head or an entry the batch replaced
            // serves other JSON; the rest of its entries the batch did not touch.
            let json = FormDoc::head(&horse, &name);
            let mut same = s
                .get(&key)?
                .is_some_and(|stored| form::head_json(&stored) == Some(&json[..]));
            for (entry, was) in &before {
                if !same {
                    break;
                }
                same = form::served(s, entry)? == *was;
            }
            if !same {
                s.put(key, form::head(seq, &json));
            }
        }
        Ok(())
    }
}

/// The name of a horse, read from its profile document.
#[derive(Deserialize)]
struct Named {
    horse_name: String,
}

/// The form document of `horse` from its entries `form`, named by its profile or else
/// its newest result; `None` when the horse appears nowhere.
pub(crate) fn form_of(
    s: &impl Records,
    horse: &str,
    form: &FormSource,
) -> Result<Option<Vec<u8>>, StoreError> {
    let name = name_of(s, horse, || Ok(form.newest_name()))?;
    Ok(name.map(|name| form.render(horse, &name)))
}

/// The name a form of `horse` goes by: its profile's, or else `newest` (its newest
/// result's); `None` when the horse appears nowhere.
fn name_of(
    s: &impl Records,
    horse: &str,
    newest: impl FnOnce() -> Result<Option<String>, StoreError>,
) -> Result<Option<String>, StoreError> {
    let key = DocKey::Profile(horse).key();
    match s.get(&key)? {
        Some(stored) => name_in_profile(&key, &stored).map(Some),
        None => newest(),
    }
}

/// The name the profile document `stored` under `key` gives its horse.
fn name_in_profile(key: &[u8], stored: &[u8]) -> Result<String, StoreError> {
    let profile: Named = serde_json::from_slice(docs::unseal(stored))
        .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(key))))?;
    Ok(profile.horse_name)
}
