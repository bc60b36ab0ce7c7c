//! A batch's own writes (`batch.rs`), found by hash: a fold reads and rewrites its batch's
//! records again and again (a person's record and head at each of their rides, a race's
//! documents at each event of it), and each of those found in a map in key order walked
//! it, comparing keys that share most of their bytes. Their keys are kept in order beside,
//! each once, for the scans and the commit, which read them in order.

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use crate::scan::{Layer, Written};
use crate::state::Writes;

/// The records a batch wrote (`Some`) or removed (`None`), by key.
#[derive(Default)]
pub(crate) struct WriteSet {
    values: HashMap<Vec<u8>, Option<Vec<u8>>, foldhash::fast::RandomState>,
    /// The keys of `values`, in order.
    keys: BTreeSet<Vec<u8>>,
}

impl WriteSet {
    /// What the batch wrote under `key`: `Some(None)` where it removed it, `None` where it
    /// did neither.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.values.get(key)
    }

    /// Sets `key` to `value` (`None`: removed).
    pub(crate) fn insert(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        if let Some(held) = self.values.get_mut(&key) {
            *held = value;
            return;
        }
        self.keys.insert(key.clone());
        self.values.insert(key, value);
    }

    /// Records written or removed.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The writes in key order, as a commit writes them.
    pub(crate) fn into_writes(self) -> Writes {
        let WriteSet { mut values, keys } = self;
        keys.into_iter()
            .filter_map(|key| {
                let value = values.remove(&key)?;
                Some((key, value))
            })
            .collect()
    }

    fn at<'w>(&'w self, key: &'w Vec<u8>) -> Option<Written<'w>> {
        self.values.get(key).map(|value| (key, value))
    }
}

impl Layer for WriteSet {
    fn forward<'w>(&'w self, from: &[u8]) -> Box<dyn Iterator<Item = Written<'w>> + 'w> {
        let keys = self
            .keys
            .range::<[u8], _>((Bound::Included(from), Bound::Unbounded));
        Box::new(keys.filter_map(|key| self.at(key)))
    }

    fn backward<'w>(&'w self, to: Bound<&[u8]>) -> Box<dyn Iterator<Item = Written<'w>> + 'w> {
        let keys = self.keys.range::<[u8], _>((Bound::Unbounded, to)).rev();
        Box::new(keys.filter_map(|key| self.at(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rewritten and removed keys read as the last write left them, each key once, in
    /// order, whether read by key, scanned from either end, or handed to the commit.
    #[test]
    fn writes_read_as_the_last_left_them_in_key_order() {
        let mut set = WriteSet::default();
        for (key, value) in [
            ("b", Some("1")),
            ("a", Some("2")),
            ("c", None),
            ("b", Some("3")),
            ("c", Some("4")),
            ("a", None),
        ] {
            set.insert(key.into(), value.map(Into::into));
        }
        let want: Writes = [("a", None), ("b", Some("3")), ("c", Some("4"))]
            .into_iter()
            .map(|(k, v)| {
                (
                    k.as_bytes().to_vec(),
                    v.map(|v: &str| v.as_bytes().to_vec()),
                )
            })
            .collect();
        assert_eq!(set.len(), 3);
        assert_eq!(set.get(b"b"), Some(&Some(b"3".to_vec())));
        assert_eq!(set.get(b"a"), Some(&None));
        assert_eq!(set.get(b"d"), None);
        let forward: Vec<_> = set
            .forward(b"b")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(
            forward,
            want.clone().into_iter().skip(1).collect::<Vec<_>>()
        );
        let backward: Vec<_> = set
            .backward(Bound::Excluded(b"c"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut first_two: Vec<_> = want.clone().into_iter().take(2).collect();
        first_two.reverse();
        assert_eq!(backward, first_two);
        assert_eq!(set.into_writes(), want);
    }
}
