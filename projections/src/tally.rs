//! A [`State`] over a [`MemState`] that keeps the key and size of every `put`: how the
//! tests that bound what a fold writes measure it.

use crate::state::{Item, Records, Scan, State};
use crate::{MemState, StoreError};

/// Folds into `s` through it, keeping each `put`'s key and bytes (key and value).
pub(crate) struct Tally<'a> {
    s: &'a mut MemState,
    puts: Vec<(Vec<u8>, usize)>,
}

impl<'a> Tally<'a> {
    pub(crate) fn new(s: &'a mut MemState) -> Tally<'a> {
        Tally {
            s,
            puts: Vec::new(),
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
}

impl Records for Tally<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.s.get(key)
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        self.s.scan(prefix, dir, limit)
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
}
