//! A [`State`] over a [`MemState`] that keeps the key and size of every `put`, and the key
//! of every record read: how the tests that bound what a fold writes and reads measure it.

use std::cell::RefCell;

use crate::batch::MemState;
use crate::kv::StoreError;
use crate::scan::{Item, Scan};
use crate::state::{Records, State};

/// Folds into `s` through it, keeping each `put`'s key and bytes (key and value), and the
/// key of each record read (found by a `get` or a `scan`).
pub(crate) struct Tally<'a> {
    s: &'a mut MemState,
    puts: Vec<(Vec<u8>, usize)>,
    read: RefCell<Vec<Vec<u8>>>,
}

impl<'a> Tally<'a> {
    pub(crate) fn new(s: &'a mut MemState) -> Tally<'a> {
        Tally {
            s,
            puts: Vec::new(),
            read: RefCell::default(),
        }
    }

    /// The bytes put under the keys `select` takes.
    pub(crate) fn bytes(&self, select: impl Fn(&[u8]) -> bool) -> usize {
        self.puts
            .iter()
            .filter(|(key, _)| select(key))
            .map(|(_, bytes)| bytes)
            .sum()
    }

    /// How many of the puts were of keys `select` takes.
    pub(crate) fn count(&self, select: impl Fn(&[u8]) -> bool) -> usize {
        self.puts.iter().filter(|(key, _)| select(key)).count()
    }

    /// Each put's key and bytes, in order.
    pub(crate) fn puts(&self) -> &[(Vec<u8>, usize)] {
        &self.puts
    }

    /// The key of each record read, in order.
    pub(crate) fn read(&self) -> Vec<Vec<u8>> {
        self.read.borrow().clone()
    }
}

impl Records for Tally<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let found = self.s.get(key)?;
        if found.is_some() {
            self.read.borrow_mut().push(key.to_vec());
        }
        Ok(found)
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        let found = self.s.scan(prefix, dir, limit)?;
        let keys = found.iter().map(|(key, _)| key.clone());
        self.read.borrow_mut().extend(keys);
        Ok(found)
    }
}

impl State for Tally<'_> {
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.puts.push((key.clone(), key.len() + value.len()));
        self.s.put(key, value);
    }

    fn delete(&mut self, key: Vec<u8>) {
        self.s.delete(key);
    }

    fn first_seen(&mut self, event_id: u128) -> Result<bool, StoreError> {
        self.s.first_seen(event_id)
    }

    fn changes_at(&mut self, seq: u64) {
        self.s.changes_at(seq);
    }

    fn changed_at(&mut self, seq: u64, key: &[u8]) {
        self.s.changed_at(seq, key);
    }
}
