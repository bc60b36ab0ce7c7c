//! What a [`crate::load::Loader`] holds in memory of the store it loads, read by its batches
//! before the tree: the records of the batch being written, and those of the race days,
//! the horses and the people that the replay is at.
//!
//! From an empty store, a record that the loader does not hold is known not to exist, so
//! long as it holds every record of that record's kind and date. What it lets go of is
//! chosen by the record's scope ([`crate::keys::scope`]):
//! - a record that no fold reads back (versions, journals, the name index) is held only
//!   while its batch is written;
//! - a race date's records are let go once neither the batch being written nor the one
//!   before it wrote any of them: the log has moved past the day, and its races are
//!   settled. A fold that reads one later (a correction) reads it from the tree. A record
//!   of a year's races (a horse's names) goes the same way, once past the year;
//! - the records of horses, people and names are held for the whole load, and so is each
//!   horse's newest record of its names, which its next run reads.
//!
//! So what is held follows the days being replayed, not the length of the log. Past the
//! budget, every date but those of the batch being written goes, then everything else,
//! and from then on the folds read what they lack from the tree.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::key_filter::{KeyFilter, KeyHash};
use crate::keys::scope::{date_after, newest_of, scope, Scope, NEWEST_READ_AGAIN};
use crate::kv::Kv;
use crate::kv::StoreError;
use crate::scan::{Ask, Item, Layer, Scan};
use crate::state::Writes;

/// Bytes counted for each record held beside its key and value: the map's node, the two
/// vectors' heads, and the hash its layer's [`KeyFilter`] keeps (with the filter's room
/// to grow, and the hashes of records let go that it may still keep).
const RECORD_OVERHEAD: usize = 120;

/// What a [`crate::load::Loader`] holds of the store, read by its batches before the tree.
#[derive(Default)]
pub struct Held {
    /// The records of the batch being written, shared with the thread that writes them.
    writing: Arc<Writes>,
    /// Their keys, by hash: most reads are of records written before.
    writing_keys: KeyFilter,
    /// Those of the batches written before it that are still held.
    written: Writes,
    /// Their keys, by hash, and those of records let go since it was made: most reads
    /// find no record there (a replay reads many a record before it exists), and those
    /// would otherwise walk the largest layer for nothing.
    written_keys: KeyFilter,
    /// How many keys of `written_keys` have gone from `written`: past as many as are held,
    /// the filter is made anew.
    written_gone: usize,
    /// The race dates (`YYYY-MM-DD`, or a year's `YYYY`) of which the batch being written
    /// wrote records.
    writing_dates: BTreeSet<Vec<u8>>,
    /// The race dates (and years) let go: a record of one that is not in `writing` is read
    /// from the tree.
    let_go: BTreeSet<Vec<u8>>,
    /// Whether, apart from the dates let go and the records no fold reads, the two hold
    /// every record of the store that a fold reads: the load began on an empty store, and
    /// the budget was never passed with only lasting records left.
    pub(crate) whole: bool,
    /// About the bytes held.
    pub(crate) bytes: usize,
    /// The `event_id`s applied by the batch being written, which join the store's applied
    /// ids once it is.
    pub(crate) writing_ids: HashSet<u128, foldhash::fast::RandomState>,
    /// Reads the tree answered: of records let go, or of everything once not `whole`.
    read_back: AtomicU64,
}

impl Held {
    /// Nothing held yet; `whole` where the store holds nothing a fold wrote.
    pub(crate) fn new(whole: bool) -> Held {
        Held {
            whole,
            ..Held::default()
        }
    }

    /// The record under `key` (whose [`KeyFilter::hash`] is `hash`) as the loader knows it:
    /// `Some(None)` where it knows there is none, `None` where the tree must say.
    pub(crate) fn get(&self, key: &[u8], hash: KeyHash) -> Option<Option<Vec<u8>>> {
        let writing = self
            .writing_keys
            .may_hold(hash)
            .then(|| self.writing.get(key));
        let written = || {
            self.written_keys
                .may_hold(hash)
                .then(|| self.written.get(key))
                .flatten()
        };
        let held = writing.flatten().or_else(written);
        match held {
            Some(v) => Some(v.clone()),
            None if self.knows(scope(key)) => Some(None),
            None => {
                self.read_back.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Whether every record of `scope` that the store holds is held.
    fn knows(&self, scope: Scope<'_>) -> bool {
        self.whole
            && match scope {
                Scope::Lasting => true,
                Scope::Dated(date) => !self.let_go.contains(date),
                Scope::ByDate => self.let_go.is_empty(),
                Scope::Unread | Scope::Mixed => false,
            }
    }

    /// The scan `ask` of the tree as it will be once the loader's writes are written, and
    /// then `writes`.
    pub(crate) fn scan(
        &self,
        kv: &Kv,
        writes: &dyn Layer,
        ask: Ask<'_>,
    ) -> Result<Vec<Item>, StoreError> {
        let layers: [&dyn Layer; 3] = [writes, &*self.writing, &self.written];
        let (prefix, dir, limit) = ask;
        let scope = scope(prefix);
        if self.knows(scope) {
            return crate::scan::over_layers(kv, &layers, true, ask);
        }
        if let (true, Scope::ByDate, Scan::Backward) = (self.whole, scope, dir) {
            // Newest first: the records of dates after the newest let go are all held, so
            // a scan that finds its `limit` among them is whole. A kind's dates are all
            // days or all years (`keys::scope`), and one is let go with its own length.
            let found = crate::scan::over_layers(kv, &layers, true, ask)?;
            let first = found.first().and_then(|(key, _)| date_after(prefix, key));
            let newest_gone = first.and_then(|date| {
                let mut gone = self.let_go.iter().rev();
                gone.find(|gone| gone.len() == date.len())
            });
            let after = |(key, _): &&Item| {
                date_after(prefix, key).is_some_and(|date| {
                    newest_gone.is_none_or(|gone| date.len() == gone.len() && date > gone)
                })
            };
            if found.len() == limit && found.iter().all(|item| after(&item)) {
                return Ok(found);
            }
        }
        self.read_back.fetch_add(1, Ordering::Relaxed);
        crate::scan::over_layers(kv, &layers, false, ask)
    }

    /// The records held.
    pub(crate) fn records(&self) -> usize {
        self.writing.len() + self.written.len()
    }

    /// Reads that the tree answered so far.
    pub(crate) fn read_back(&self) -> u64 {
        self.read_back.load(Ordering::Relaxed)
    }

    /// Whether `event_id` was applied by the batch being written.
    pub(crate) fn writing(&self, event_id: u128) -> bool {
        self.writing_ids.contains(&event_id)
    }

    /// Holds `writes`, of the batch whose write starts, and its applied `ids`; the batch
    /// written before it joins those written, and what is settled or past `budget` goes.
    pub(crate) fn add(&mut self, writes: Arc<Writes>, ids: &[u128], budget: usize) {
        let previous = std::mem::replace(&mut self.writing, writes);
        self.writing_keys = KeyFilter::of(self.writing.keys());
        self.writing_ids = ids.iter().copied().collect();
        if budget == 0 && !self.whole {
            // Only the batch being written is held (`Loader::beside_reads`): the one
            // before is in the tree.
            self.bytes = size(&self.writing);
            return;
        }
        // Its write is done, and with it the writer's share.
        let previous = Arc::try_unwrap(previous).unwrap_or_else(|shared| (*shared).clone());
        let previous_dates = std::mem::replace(&mut self.writing_dates, dates(&self.writing));
        for (key, value) in previous {
            match scope(&key) {
                Scope::Unread => {}
                Scope::Dated(date) if self.let_go.contains(date) => {
                    // (A horse's newest names may be held past their date.)
                    if self.written.remove(&key).is_some() {
                        self.written_gone += 1;
                    }
                }
                _ => {
                    self.written_keys.insert(KeyFilter::hash(&key));
                    self.written.insert(key, value);
                }
            }
        }
        // The dates that neither batch wrote are settled.
        let recent: BTreeSet<Vec<u8>> =
            previous_dates.union(&self.writing_dates).cloned().collect();
        self.let_go_of(|date| !recent.contains(date));
        if self.bytes > budget {
            self.let_go_of(|_| true);
        }
        if self.bytes > budget && !self.written.is_empty() {
            // The records written are in the tree; only the batch being written must stay.
            self.written = BTreeMap::new();
            self.written_keys = KeyFilter::default();
            self.written_gone = 0;
            self.whole = false;
            self.bytes = size(&self.writing);
        }
    }

    /// Lets go of the records written of every date that `settled` names, and counts
    /// the bytes still held.
    fn let_go_of(&mut self, settled: impl Fn(&[u8]) -> bool) {
        let mut bytes = size(&self.writing);
        let newest = newest_read_again(&self.written);
        let let_go = &mut self.let_go;
        let before = self.written.len();
        self.written.retain(|key, value| match scope(key) {
            Scope::Dated(date) if settled(date) && !newest.contains(key) => {
                if !let_go.contains(date) {
                    let_go.insert(date.to_vec());
                }
                false
            }
            _ => {
                bytes += record_size(key, value);
                true
            }
        });
        self.bytes = bytes;
        self.written_gone += before - self.written.len();
        if self.written_gone > self.written.len() {
            self.written_keys = KeyFilter::of(self.written.keys());
            self.written_gone = 0;
        }
    }
}

/// The keys in `written` of each horse's newest names ([`NEWEST_READ_AGAIN`]): the last
/// of each horse's, as they follow one another in date order.
fn newest_read_again(written: &Writes) -> HashSet<Vec<u8>> {
    let mut newest = HashSet::new();
    let mut last: Option<&Vec<u8>> = None;
    let from = std::ops::Bound::Included(NEWEST_READ_AGAIN);
    let kind = written.range::<[u8], _>((from, std::ops::Bound::Unbounded));
    for key in kind
        .map(|(k, _)| k)
        .take_while(|k| k.starts_with(NEWEST_READ_AGAIN))
    {
        if let Some(before) = last.filter(|before| newest_of(before) != newest_of(key)) {
            newest.insert(before.clone());
        }
        last = Some(key);
    }
    newest.extend(last.cloned());
    newest
}

/// The race dates of which `writes` holds records.
fn dates(writes: &Writes) -> BTreeSet<Vec<u8>> {
    let mut dates = BTreeSet::new();
    for key in writes.keys() {
        if let Scope::Dated(date) = scope(key) {
            if !dates.contains(date) {
                dates.insert(date.to_vec());
            }
        }
    }
    dates
}

fn record_size(key: &[u8], value: &Option<Vec<u8>>) -> usize {
    key.len() + value.as_ref().map_or(0, Vec::len) + RECORD_OVERHEAD
}

fn size(writes: &Writes) -> usize {
    writes.iter().map(|(k, v)| record_size(k, v)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys;

    /// The career of horse `n`.
    fn career(n: u32) -> Vec<u8> {
        keys::analysis::horse_career(&format!("H{n:04}"))
    }

    /// A day's batch: the cards of twenty races of `date` and the career of horse `n`.
    fn batch(date: &str, n: u32) -> Arc<Writes> {
        let mut writes = Writes::new();
        for race in 1..=20 {
            let card = keys::card(date, race, "Sha Tin");
            writes.insert(card, Some(date.as_bytes().to_vec()));
        }
        writes.insert(career(n), Some(n.to_le_bytes().to_vec()));
        Arc::new(writes)
    }

    /// What `held` knows of the record under `key`.
    fn get(held: &Held, key: &[u8]) -> Option<Option<Vec<u8>>> {
        held.get(key, KeyFilter::hash(key))
    }

    /// Beside readers (`Loader::beside_reads`: nothing whole, a budget of nothing), only
    /// the batch being written is held: its records are found, and those of the batch
    /// before it, written, are left to the tree.
    #[test]
    fn beside_readers_only_the_batch_being_written_is_held() {
        let mut held = Held::new(false);
        held.add(batch("2026-02-01", 1), &[], 0);
        held.add(batch("2026-02-02", 2), &[], 0);
        assert_eq!(held.records(), 20 + 1);
        let card = |day| keys::card(day, 20, "Sha Tin");
        assert_eq!(
            get(&held, &card("2026-02-02")),
            Some(Some(b"2026-02-02".to_vec()))
        );
        assert_eq!(
            get(&held, &career(2)),
            Some(Some(2u32.to_le_bytes().to_vec()))
        );
        assert_eq!(get(&held, &card("2026-02-01")), None);
        assert_eq!(get(&held, &career(1)), None);
    }

    /// However many records have gone from those held since their keys' filter was made
    /// (here many more than are held), each record held is found, each one let go is left
    /// to the tree, and a record never written is known not to exist.
    #[test]
    fn records_held_are_found_after_others_are_let_go() {
        let mut held = Held::new(true);
        let days: Vec<String> = (1..=28).map(|d| format!("2026-02-{d:02}")).collect();
        for (n, day) in (0u32..).zip(&days) {
            held.add(batch(day, n), &[], usize::MAX);
        }
        // The last two days' cards and every career are held; the other days are let go.
        assert_eq!(held.records(), 2 * 20 + 28);
        for n in 0..28u32 {
            let found = get(&held, &career(n));
            assert_eq!(found, Some(Some(n.to_le_bytes().to_vec())), "horse {n}");
        }
        for (day, answer) in [
            (0, None),
            (25, None),
            (26, Some(Some(&days[26]))),
            (27, Some(Some(&days[27]))),
        ] {
            let card = keys::card(&days[day], 20, "Sha Tin");
            let answer = answer.map(|a| a.map(|d| d.as_bytes().to_vec()));
            assert_eq!(get(&held, &card), answer, "{}", days[day]);
        }
        assert_eq!(get(&held, &career(9_999)), Some(None));
    }
}
