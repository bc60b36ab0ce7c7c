//! A fresh store filled with records handed in key order (a compaction's copy,
//! [`crate::Store::copy_to`]; a snapshot's load, [`crate::load_snapshot`]), written a
//! group of a few thousand at a time, shuffled within the group. sled keeps a store as a
//! log of its tree's pages, rewritten as they change, and takes back the room of a part
//! of that log only once most of it is stale: the same records written in key order took
//! a sixth (the bench's replayed store) to a third (a store after amendments) more disk
//! (BENCHMARKS.md, "What was tried"; an earlier try that scattered them across the whole
//! store gained nothing). The store is the same map of keys to values either way.

use crate::kv::{Kv, StoreError};

/// How many records are held and written together, at most.
const GROUP: usize = 4096;
/// How many bytes of records are held, at most: a group of large records is written
/// sooner.
const GROUP_BYTES: usize = 4 << 20;

/// Records handed in key order ([`Filling::push`]), written to the store a group at a time.
pub(crate) struct Filling<'a> {
    kv: &'a Kv,
    held: Vec<(Vec<u8>, Vec<u8>)>,
    /// The bytes of the records held, keys and values.
    held_bytes: usize,
    /// The scatter's state (xorshift): the same order each time.
    state: u64,
}

impl<'a> Filling<'a> {
    /// Fills `kv`, which nothing else writes meanwhile.
    pub(crate) fn new(kv: &'a Kv) -> Filling<'a> {
        Filling {
            kv,
            held: Vec::new(),
            held_bytes: 0,
            state: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// The next record, in key order.
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.held.push((key.to_vec(), value.to_vec()));
        self.held_bytes += key.len() + value.len();
        if self.held.len() == GROUP || self.held_bytes >= GROUP_BYTES {
            self.write()?;
        }
        Ok(())
    }

    /// Writes what is held, after the last record.
    pub(crate) fn finish(mut self) -> Result<(), StoreError> {
        self.write()
    }

    /// Writes the records held, shuffled (Fisher-Yates).
    fn write(&mut self) -> Result<(), StoreError> {
        for i in (1..self.held.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            self.held.swap(i, j);
        }
        for (key, value) in self.held.drain(..) {
            self.kv.put(&key, &value)?;
        }
        self.held_bytes = 0;
        Ok(())
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_handed_is_written_the_last_group_too() {
        let temp = crate::tests::tempdir();
        let kv = Kv::open(temp.path(), 1 << 20).expect("a store");
        // Two groups and part of a third.
        let records: Vec<(Vec<u8>, Vec<u8>)> = (0..GROUP * 2 + 37)
            .map(|i| {
                (
                    format!("k{i:05}").into_bytes(),
                    format!("v{i}").into_bytes(),
                )
            })
            .collect();
        let mut filling = Filling::new(&kv);
        for (key, value) in &records {
            filling.push(key, value).expect("pushed");
        }
        filling.finish().expect("finished");
        let stored: Vec<(Vec<u8>, Vec<u8>)> = kv
            .stored()
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("read"))
            .collect();
        assert_eq!(stored, records);
    }

    #[test]
    fn large_records_are_written_before_their_bytes_pass_the_bound() {
        let temp = crate::tests::tempdir();
        let kv = Kv::open(temp.path(), 1 << 20).expect("a store");
        let large = vec![7u8; GROUP_BYTES / 2];
        let mut filling = Filling::new(&kv);
        for key in [b"a", b"b", b"c"] {
            filling.push(key, &large).expect("pushed");
        }
        // The first two reached the bound and were written; the third waits for more.
        assert_eq!(kv.stored().count(), 2);
        filling.finish().expect("finished");
        assert_eq!(kv.stored().count(), 3);
    }
}
