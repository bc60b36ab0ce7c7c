//! The change feed: each document written or removed, at the position of the event whose
//! fold did it, in parts of up to [`CHANGE_ROWS`] rows ([`keys::change`]), and read a page
//! at a time from a cursor that may stand among the changes of one position. The rows
//! depend on the events alone, not on how many of them a batch folded: a store built by
//! a replay lists what one built live lists. A page reads the parts it returns and at
//! most one more, however many documents one position changed.

use crate::keys;
use crate::keys::doc::DocKey;
use crate::kv::Commit;
use crate::kv::StoreError;
use crate::store::Store;

/// Most rows in one part of the change feed: a page reads the parts it returns, not every
/// change of a position, and a batch writes one record per this many rows, not one per
/// row or per position (each an insert of its own in sled's tree).
const CHANGE_ROWS: usize = 64;

/// Where a page of the change feed starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeCursor {
    /// After every change up to this stream sequence.
    After(u64),
    /// Among the changes made at `seq`, after the first `done` of them (in the order a
    /// page lists them).
    Inside {
        /// The stream sequence of the changes.
        seq: u64,
        /// How many of its changes came before.
        done: u32,
    },
}

/// A page of the change feed, as [`Store::change_page`] reads it.
pub struct ChangePage {
    /// Each changed document's key ([`crate::keys::doc::DocKey::parse`] reads it) with the sequence
    /// of the event that changed it.
    pub rows: Vec<(u64, Vec<u8>)>,
    /// Where the following page starts, among one position's changes where the page ended
    /// among them; `None` when nothing follows it yet.
    pub next: Option<ChangeCursor>,
}

impl Store {
    /// A page of the change feed: at most `limit` (at least one) of the documents changed
    /// after `from`, in sequence order, then in key order within a position; `next` is
    /// where the following page starts, inside a position's changes where this one ends
    /// inside them.
    pub fn change_page(&self, from: ChangeCursor, limit: usize) -> Result<ChangePage, StoreError> {
        let limit = limit.max(1);
        // A row is `(seq, its index among that seq's rows)`; the parts before `start`
        // hold only rows before the cursor, the first part read may hold some.
        let start = match from {
            ChangeCursor::After(seq) => keys::changes_after(seq),
            ChangeCursor::Inside { seq, done } => keys::change(seq, done),
        };
        let before_start = |seq: u64, index: u32| match from {
            ChangeCursor::After(s) => seq <= s,
            ChangeCursor::Inside { seq: s, done } => seq < s || (seq == s && index < done),
        };
        let mut rows: Vec<(u64, Vec<u8>)> = Vec::new();
        // The last row's sequence, and how many of that sequence's changes it ends.
        let mut last: Option<(u64, u32)> = None;
        for item in self.kv.range(start..) {
            let (key, record) = item?;
            if keys::parse_change(&key).is_none() {
                break;
            }
            self.reads().note()?;
            for (seq, index, doc) in decode(&record)? {
                if before_start(seq, index) {
                    continue;
                }
                if let Some((at, done)) = last.filter(|_| rows.len() >= limit) {
                    let next = if at == seq {
                        ChangeCursor::Inside { seq: at, done }
                    } else {
                        ChangeCursor::After(at)
                    };
                    return Ok(ChangePage {
                        rows,
                        next: Some(next),
                    });
                }
                rows.push((seq, doc.to_vec()));
                last = Some((seq, index.saturating_add(1)));
            }
        }
        Ok(ChangePage { rows, next: None })
    }
}

/// The change feed's rows of a batch in the making: each document key written or removed,
/// with the sequence of the event that did it.
#[derive(Default)]
pub(crate) struct ChangedDocs {
    rows: Vec<(u64, Vec<u8>)>,
}

impl ChangedDocs {
    /// Notes a write or removal of `key` by the event at `seq`, if `key` is a document's.
    pub(crate) fn note(&mut self, seq: u64, key: &[u8]) {
        if key.starts_with(DocKey::PREFIX) {
            self.rows.push((seq, key.to_vec()));
        }
    }

    /// Writes the rows into `batch`, in order of sequence then key, each change of a
    /// document at one sequence once: a part each [`CHANGE_ROWS`] rows, under the
    /// sequence of its last row and that row's index among the rows of its sequence, so
    /// that a page from any row reads from the part that holds it. A part starts with the
    /// index of its first row among those of its sequence (4 bytes, big-endian); each row
    /// is its sequence (8 bytes), the key's length (4 bytes) and the key.
    pub(crate) fn write(mut self, batch: &mut Commit) {
        self.rows.sort_unstable();
        self.rows.dedup();
        // The index of the next row among the rows of its sequence.
        let mut index = 0u32;
        let mut at = None;
        for part in self.rows.chunks(CHANGE_ROWS) {
            let mut record = Vec::with_capacity(4 + part.len() * 64);
            for (i, (seq, doc)) in part.iter().enumerate() {
                if at != Some(*seq) {
                    at = Some(*seq);
                    index = 0;
                }
                if i == 0 {
                    record.extend_from_slice(&index.to_be_bytes());
                }
                record.extend_from_slice(&seq.to_be_bytes());
                // A document's key is a few dozen bytes; one of 4 GiB cannot be made.
                record.extend_from_slice(&(doc.len() as u32).to_be_bytes());
                record.extend_from_slice(doc);
                index = index.saturating_add(1);
            }
            if let Some((seq, _)) = part.last() {
                batch.put(keys::change(*seq, index.saturating_sub(1)), record);
            }
        }
    }
}

/// A row of the change feed as stored: its sequence, its index among the rows of that
/// sequence, and the document's key.
type Row<'a> = (u64, u32, &'a [u8]);

/// The rows of a stored part.
fn decode(record: &[u8]) -> Result<Vec<Row<'_>>, StoreError> {
    let damaged = || StoreError::Corrupt("a change feed record".into());
    let (first, mut rest) = record.split_first_chunk::<4>().ok_or_else(damaged)?;
    let mut index = u32::from_be_bytes(*first);
    let mut at = None;
    let mut rows = Vec::new();
    while !rest.is_empty() {
        let (seq, after) = rest.split_first_chunk::<8>().ok_or_else(damaged)?;
        let (len, after) = after.split_first_chunk::<4>().ok_or_else(damaged)?;
        let seq = u64::from_be_bytes(*seq);
        let len = u32::from_be_bytes(*len) as usize;
        let doc = after.get(..len).ok_or_else(damaged)?;
        if at.is_some_and(|a| a != seq) {
            index = 0;
        }
        at = Some(seq);
        rows.push((seq, index, doc));
        index = index.saturating_add(1);
        rest = &after[len..];
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::tempdir;

    /// Rows of many positions, some with more than a part's rows, written in two batches:
    /// every page from every row, of every size, is the list from that row on.
    #[test]
    fn a_page_from_any_row_goes_on_from_that_row() {
        let dir = tempdir();
        let store = Store::open(dir.path()).expect("open");
        let doc = |n: usize| [DocKey::PREFIX, format!("k{n:04}").as_bytes()].concat();
        let batches: [&[(u64, usize)]; 2] = [&[(3, 2), (5, 150), (6, 3)], &[(9, 70), (10, 1)]];
        let mut all = Vec::new();
        for batch in batches {
            let mut changed = ChangedDocs::default();
            for &(seq, rows) in batch {
                // Noted out of order and twice: written in order, once.
                for n in (0..rows).rev().chain([0]) {
                    changed.note(seq, &doc(n));
                }
                changed.note(seq, b"not a document");
                all.extend((0..rows).map(|n| (seq, doc(n))));
            }
            let mut commit = Commit::default();
            changed.write(&mut commit);
            store.kv.apply(commit).expect("write");
        }
        let whole = store
            .change_page(ChangeCursor::After(0), 10_000)
            .expect("page");
        assert_eq!(whole.rows, all);
        assert_eq!(whole.next, None);
        // Each row's cursor: after the rows of the positions before it and the first
        // ones of its own.
        let mut cursors = vec![(ChangeCursor::After(0), 0)];
        for (i, (seq, _)) in all.iter().enumerate() {
            let done = all[..=i].iter().filter(|(s, _)| s == seq).count() as u32;
            let last_of_seq = all.get(i + 1).is_none_or(|(s, _)| s != seq);
            let cursor = if last_of_seq {
                ChangeCursor::After(*seq)
            } else {
                ChangeCursor::Inside { seq: *seq, done }
            };
            cursors.push((cursor, i + 1));
        }
        for (cursor, from) in cursors {
            for limit in [1, 7, 64, 65, 200] {
                let before = store.records_read();
                let page = store.change_page(cursor, limit).expect("page");
                let want = &all[from..(from + limit).min(all.len())];
                assert_eq!(page.rows, want, "{limit} from {cursor:?}");
                let parts = limit.div_ceil(CHANGE_ROWS) as u64 + 2;
                assert!(
                    store.records_read() - before <= parts,
                    "{limit} from {cursor:?}"
                );
                let next = cursors_at(&all, from + want.len());
                assert_eq!(page.next, next, "{limit} from {cursor:?}");
            }
        }
    }

    /// The cursor a page that ends before row `i` (not the first) gives: `None` at the
    /// end.
    fn cursors_at(all: &[(u64, Vec<u8>)], i: usize) -> Option<ChangeCursor> {
        let (seq, _) = all.get(i.checked_sub(1)?).filter(|_| i < all.len())?;
        if all[i].0 == *seq {
            let done = all[..i].iter().filter(|(s, _)| s == seq).count() as u32;
            Some(ChangeCursor::Inside { seq: *seq, done })
        } else {
            Some(ChangeCursor::After(*seq))
        }
    }
}
