//! People's figures that a batch has read or written, held decoded (`rides.rs`): a
//! result reads the tally and the season's figures of each of its jockeys and trainers,
//! and each later result of the batch that has one of them reads theirs again. Decoded
//! from their JSON at each read, they took about 4 % of the fold's instructions
//! (BENCHMARKS.md, "What was tried"). Every write of them goes through here as well as
//! to the batch, so that what is held is what the batch's records hold; a batch's model
//! starts with nothing held.

use std::collections::HashMap;

use serde::de::DeserializeOwned;

use crate::kv::StoreError;
use crate::state::{read, Records};

/// Records of one kind, decoded, by key: `None` where there is none.
#[derive(Debug)]
pub(super) struct Known<T> {
    by_key: HashMap<Vec<u8>, Option<T>, foldhash::fast::RandomState>,
}

impl<T> Default for Known<T> {
    fn default() -> Self {
        Known {
            by_key: HashMap::default(),
        }
    }
}

impl<T: DeserializeOwned + Copy> Known<T> {
    /// The record under `key`: as held, or read from `s` (and held from then on).
    pub(super) fn get(&mut self, s: &impl Records, key: &[u8]) -> Result<Option<T>, StoreError> {
        if let Some(held) = self.by_key.get(key) {
            return Ok(*held);
        }
        let stored = read(s, key)?;
        self.by_key.insert(key.to_vec(), stored);
        Ok(stored)
    }

    /// Holds `value` as the record under `key`, which the batch has just written (`None`:
    /// removed).
    pub(super) fn set(&mut self, key: &[u8], value: Option<T>) {
        self.by_key.insert(key.to_vec(), value);
    }
}
