//! The forms as a read model: a result replaces the entry of each horse it names (or
//! named, before an amendment), a retraction removes them, a profile renames the form;
//! each touched horse's form document is rendered once a batch.

use std::collections::BTreeSet;

use serde::Deserialize;

use crate::docs::{self, FormEntry};
use crate::facts::{Change, What};
use crate::keys::DocKey;
use crate::model::ReadModel;
use crate::state::{race_no, Records, State};
use crate::written::put_sealed;
use crate::StoreError;

use super::FormSource;

/// The horses whose forms a batch touched.
#[derive(Debug, Default)]
pub(crate) struct Forms {
    horses: BTreeSet<String>,
}

impl Forms {
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
        if !self.horses.contains(horse) {
            self.horses.insert(horse.to_owned());
        }
        super::replace(s, horse, race, entry, seq)
    }
}

impl ReadModel for Forms {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        let seq = change.seq;
        match &change.what {
            // The profile's name heads the form document.
            What::Profile(p) => {
                self.horses.insert(p.horse_no.clone());
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

    fn render<S: State>(&mut self, s: &mut S, seq: u64) -> Result<(), StoreError> {
        for horse in std::mem::take(&mut self.horses) {
            let key = DocKey::Form(&horse).key();
            match form_of(s, &horse, &FormSource::load(s, &horse)?)? {
                Some(doc) => {
                    // A form's entries are records of their own: its key holds the rest.
                    let sealed = super::head(&docs::seal(true, &doc, seq));
                    put_sealed(s, key, sealed)?;
                }
                // Appears nowhere any more (an amendment removed its only race).
                None => s.delete(key),
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
    let key = DocKey::Profile(horse).key();
    let profile: Option<Named> =
        match s.get(&key)? {
            Some(stored) => Some(serde_json::from_slice(docs::unseal(&stored)).map_err(|e| {
                StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(&key)))
            })?),
            None => None,
        };
    Ok(profile
        .map(|p| p.horse_name)
        .or_else(|| form.newest_name())
        .map(|name| form.render(horse, &name)))
}
