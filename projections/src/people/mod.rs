//! Jockeys and trainers: each one's rides, kept by the fold from the results, and the
//! documents made from them, their record and the list of them all.
//!
//! A person is known by the slug of their name (their `id`). Their rides of a date are
//! one record (`keys::person_rides_on`, `ride_days.rs`), keyed so that a person's rides
//! read oldest first, and each season's figures are one small record
//! (`keys::person_season`) that a result changes by what it adds and takes away: a
//! result replaces its race's rides of everyone in it,
//! before and after (an amendment that changes a jockey takes the ride from one and gives
//! it to the other), and a retraction takes them away. What a result writes is then what
//! it changes, whatever a person's history. A person's record is assembled when it is
//! read, from a bounded read of their newest rides and their seasons' figures; a batch
//! writes its head (its `ETag` and sequence) and the person's row in the list of their
//! role, which is assembled from its rows when it is read (`rides.rs`). What is served
//! and how it is counted is in `docs.rs`.

pub(crate) mod docs;
mod known;
pub(crate) mod newest;
pub(crate) mod ride_days;
pub(crate) mod ride_record;
pub(crate) mod rides;
#[cfg(test)]
mod tests;

use docs::{render_list, PersonRow, Role};
use rides::served;

use crate::docs::{seal, Doc};
use crate::keys;
use crate::kv::StoreError;
use crate::store::Store;

/// The key of the record of the jockey or trainer `id`: a cache of documents holds the
/// record by it, and [`crate::batch::Batch::commit_noting`] names it when a batch changes the
/// record.
pub fn record_key(role: Role, id: &str) -> Vec<u8> {
    keys::person_doc(role.name(), id)
}

/// The key of the list of every jockey (or trainer), as [`record_key`] for a record.
pub fn list_key(role: Role) -> Vec<u8> {
    keys::people_doc(role.name())
}

impl Store {
    /// The record of the jockey or trainer `id`, assembled from its head and records
    /// ([`served`]) and sealed with its `ETag`.
    pub fn person(&self, role: Role, id: &str) -> Result<Option<Doc>, StoreError> {
        let Some(stored) = served(&self.kv, role, id)? else {
            return Ok(None);
        };
        Doc::new(stored.into())
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt(format!("the record of {} {id}", role.name())))
    }

    /// The list of every jockey (or trainer), assembled from its rows and sealed with its
    /// `ETag`; `None` before the first ride.
    pub fn people(&self, role: Role) -> Result<Option<Doc>, StoreError> {
        let Some((seq, rows)) = self.people_rows(role)? else {
            return Ok(None);
        };
        let sealed = seal(false, &render_list(role, rows), seq);
        Doc::new(sealed.into())
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt(format!("the list of {}s", role.name())))
    }

    /// The rows of the list of every jockey (or trainer), in no order, and the sequence
    /// at which the list last changed; `None` before the first ride.
    pub fn people_rows(&self, role: Role) -> Result<Option<(u64, Vec<PersonRow>)>, StoreError> {
        let Some(head) = self.kv.get(keys::people_doc(role.name()))? else {
            return Ok(None);
        };
        let rows = self.kv.prefix(keys::person_rows(role.name()));
        rides::list_rows(role, &head, rows).map(Some)
    }
}
