//! The horses' profiles: each document is the profile as the feed gave it, written when the
//! event is folded; no other record is kept.

use crate::doc_writes::put_doc;
use crate::docs;
use crate::facts::{Change, Facts, What};
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::state::State;

/// The profiles read model: nothing held between its changes and its render.
#[derive(Debug, Default)]
pub(crate) struct Profiles;

impl ReadModel for Profiles {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        if let What::Profile(p) = &change.what {
            let doc = docs::profile::render_profile(p);
            put_doc(s, DocKey::Profile(&p.horse_no), &doc, change.seq)?;
        }
        Ok(())
    }

    fn render<S: State>(&mut self, _: &mut S, _: u64, _: &Facts) -> Result<(), StoreError> {
        Ok(())
    }
}
