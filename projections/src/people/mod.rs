//! Jockeys and trainers: each one's rides, kept by the fold from the results, and the
//! documents made from them, their record and the list of them all.
//!
//! A person is known by the slug of their name (their `id`). Each ride is a record of its
//! own (`keys::person_ride`), keyed so that a person's rides read oldest first, and each
//! season's figures are one small record (`keys::person_season`) that a result changes by
//! what it adds and takes away: a result replaces its race's rides of everyone in it,
//! before and after (an amendment that changes a jockey takes the ride from one and gives
//! it to the other), and a retraction takes them away. What a result writes is then what
//! it changes, whatever a person's history. Each touched person's document is rendered
//! once a batch from a bounded read, their newest rides and their seasons' figures, and
//! stored ready to send, and so is their row in the list of their role, which is
//! assembled from its rows when it is read (`rides.rs`); what is served and how it is
//! counted is in `docs.rs`.

mod docs;
mod rides;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use docs::render_from_results;
pub use docs::{is_slug, render_list, season, slug, PersonRow, Role};
#[cfg(feature = "openapi")]
pub use docs::{JockeyList, PersonDoc, TrainerList};
#[cfg(test)]
pub(crate) use rides::assemble_list;
pub(crate) use rides::People;

use crate::docs::Doc;
use crate::keys;
use crate::store::Store;
use crate::StoreError;

impl Store {
    /// The record of the jockey or trainer `id`, as stored.
    pub fn person(&self, role: Role, id: &str) -> Result<Option<Doc>, StoreError> {
        self.sealed(&keys::person_doc(role.name(), id))
    }

    /// The list of every jockey (or trainer), assembled from its rows; `None` before the
    /// first ride.
    pub fn people(&self, role: Role) -> Result<Option<Doc>, StoreError> {
        let key = keys::people_doc(role.name());
        let Some(head) = self.kv.get(&key)? else {
            return Ok(None);
        };
        let rows = self.kv.prefix(keys::person_rows(role.name()));
        let list = rides::assemble_list(role, &head, rows)?;
        Doc::new(list.into()).map(Some).ok_or_else(|| {
            StoreError::Corrupt(format!("{} has no ETag", String::from_utf8_lossy(&key)))
        })
    }

    fn sealed(&self, key: &[u8]) -> Result<Option<Doc>, StoreError> {
        let Some(stored) = self.kv.get(key)? else {
            return Ok(None);
        };
        Doc::new(stored).map(Some).ok_or_else(|| {
            StoreError::Corrupt(format!("{} has no ETag", String::from_utf8_lossy(key)))
        })
    }
}
