//! Which keys a layer of records in memory holds, as a set of their hashes: a read that
//! the layer cannot answer is ruled out by one hash and one probe.
//!
//! A batch's reads go through layers before the tree: its own writes (found by hash,
//! `write_set.rs`), then the writes of the loader's batch being written, then those it
//! still holds (`loader_cache.rs`). Each of the loader's is a `BTreeMap` kept in key order
//! for the scans, and a read that misses one walked it, comparing the key against a dozen
//! or more others that share most of their bytes (a person's rides, a horse's names). In
//! a replay most reads miss them: a profile of the bench's replay found these walks a
//! large share of the fold's thread (BENCHMARKS.md, "What was tried").
//!
//! A hash held means the key may be there (two keys can share a hash, and a layer may keep
//! the hashes of keys it lost): the layer is then read as before. A hash not held means it
//! is not.

use std::collections::HashSet;
use std::hash::BuildHasher as _;

/// The hash of a key, as [`KeyFilter`] keeps it: [`KeyFilter::hash`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct KeyHash(u64);

/// The hashes of the keys a layer holds. Keys only join it: a layer that loses keys keeps
/// their hashes until it is filtered anew.
#[derive(Default)]
pub(crate) struct KeyFilter {
    hashes: HashSet<KeyHash, foldhash::fast::RandomState>,
}

/// The hashes are the same for every layer and every run: a key is hashed once a read.
const KEYS: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x5eed_6e75);

impl KeyFilter {
    /// The hash of `key`.
    pub(crate) fn hash(key: &[u8]) -> KeyHash {
        KeyHash(KEYS.hash_one(key))
    }

    /// The filter of a layer holding `keys`.
    pub(crate) fn of<'k>(keys: impl ExactSizeIterator<Item = &'k Vec<u8>>) -> KeyFilter {
        let mut hashes = HashSet::with_capacity_and_hasher(keys.len(), Default::default());
        hashes.extend(keys.map(|key| KeyFilter::hash(key)));
        KeyFilter { hashes }
    }

    /// Notes that the layer holds the key of `hash`.
    pub(crate) fn insert(&mut self, hash: KeyHash) {
        self.hashes.insert(hash);
    }

    /// Whether the layer may hold the key of `hash`: `false` where it surely does not.
    pub(crate) fn may_hold(&self, hash: KeyHash) -> bool {
        self.hashes.contains(&hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_held_is_never_ruled_out_and_others_mostly_are() {
        let held: Vec<Vec<u8>> = (0..10_000)
            .map(|n| format!("person-rides/jockey/z-purton/{n:08}").into_bytes())
            .collect();
        let filter = KeyFilter::of(held.iter());
        assert!(held.iter().all(|k| filter.may_hold(KeyFilter::hash(k))));
        let ruled_out = (10_000..20_000)
            .map(|n| format!("person-rides/jockey/z-purton/{n:08}").into_bytes())
            .filter(|k| !filter.may_hold(KeyFilter::hash(k)))
            .count();
        assert_eq!(ruled_out, 10_000);

        let mut grown = KeyFilter::default();
        assert!(!grown.may_hold(KeyFilter::hash(&held[0])));
        grown.insert(KeyFilter::hash(&held[0]));
        assert!(grown.may_hold(KeyFilter::hash(&held[0])));
    }
}
