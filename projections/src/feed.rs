//! The change feed: the keys of the documents each batch changed, kept in parts of
//! [`CHANGE_ROWS`] ([`keys::change`]), and read a page at a time from a cursor that may
//! stand inside a batch. A page reads the parts it returns and at most one more, however
//! many documents the batch changed (a replay's batches change hundreds of thousands).

use crate::keys;
use crate::kv::Commit;
use crate::store::Store;
use crate::StoreError;

/// Most document keys in one part of a batch's change record: a page of one change reads
/// one part, not the batch, and a batch of a replay writes one record per this many
/// documents, not one per document (each an insert of its own in sled's tree).
const CHANGE_ROWS: u32 = 64;

/// Where a page of the change feed starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeCursor {
    /// After every change of the batches up to this stream sequence.
    After(u64),
    /// Inside the batch that committed at `seq`, after the first `done` of its changes (in
    /// the order a page lists them).
    Inside {
        /// The batch's stream sequence.
        seq: u64,
        /// How many of its changes came before.
        done: u32,
    },
}

/// A page of the change feed, as [`Store::change_page`] reads it.
pub struct ChangePage {
    /// Each changed document's key ([`crate::DocKey::parse`] reads it) with the sequence
    /// its batch reached.
    pub rows: Vec<(u64, Vec<u8>)>,
    /// Where the following page starts, inside a batch where the page ended inside one;
    /// `None` when nothing follows it yet.
    pub next: Option<ChangeCursor>,
}

impl Store {
    /// A page of the change feed: at most `limit` (at least one) of the documents changed
    /// after `from`, in sequence order, then in key order within a batch; `next` is where
    /// the following page starts, inside a batch where this one ends inside it.
    pub fn change_page(&self, from: ChangeCursor, limit: usize) -> Result<ChangePage, StoreError> {
        let limit = limit.max(1);
        let (start, mut resume) = match from {
            ChangeCursor::After(seq) => (keys::changes_after(seq), None),
            ChangeCursor::Inside { seq, done } => {
                let part = done / CHANGE_ROWS;
                (
                    keys::change(seq, part),
                    Some((seq, part, done % CHANGE_ROWS)),
                )
            }
        };
        let mut rows: Vec<(u64, Vec<u8>)> = Vec::new();
        // The last row's batch, and how many of that batch's changes it ends.
        let mut last = None;
        for item in self.kv.range(start..) {
            let (key, record) = item?;
            let Some((seq, part)) = keys::parse_change(&key) else {
                break;
            };
            self.reads().note()?;
            let skip = match resume.take() {
                Some((s, p, skip)) if (s, p) == (seq, part) => skip as usize,
                _ => 0,
            };
            for (i, doc) in decode(&record)?.into_iter().enumerate().skip(skip) {
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
                // A batch's parts are numbered from 0, each full but its last.
                let done = part
                    .saturating_mul(CHANGE_ROWS)
                    .saturating_add(i as u32 + 1);
                last = Some((seq, done));
            }
        }
        Ok(ChangePage { rows, next: None })
    }
}

/// The change record of a batch in the making: the keys of the documents it changed, in
/// key order, each after its length (4 bytes, big-endian), a part ([`keys::change`]) each
/// [`CHANGE_ROWS`] of them.
#[derive(Default)]
pub(crate) struct ChangedDocs {
    part: u32,
    rows: u32,
    bytes: Vec<u8>,
}

impl ChangedDocs {
    /// Adds a document's key, writing the part it fills into `batch`, the batch that
    /// commits at `seq`.
    pub(crate) fn push(&mut self, doc: &[u8], batch: &mut Commit, seq: u64) {
        // A document's key is a few dozen bytes; one of 4 GiB cannot be made.
        self.bytes
            .extend_from_slice(&(doc.len() as u32).to_be_bytes());
        self.bytes.extend_from_slice(doc);
        self.rows += 1;
        if self.rows == CHANGE_ROWS {
            self.write(batch, seq);
        }
    }

    /// Writes the part in the making, if it holds any key.
    pub(crate) fn write(&mut self, batch: &mut Commit, seq: u64) {
        if self.rows == 0 {
            return;
        }
        batch.put(
            keys::change(seq, self.part),
            std::mem::take(&mut self.bytes),
        );
        self.part += 1;
        self.rows = 0;
    }
}

/// The document keys of a stored part.
fn decode(mut record: &[u8]) -> Result<Vec<&[u8]>, StoreError> {
    let damaged = || StoreError::Corrupt("a change feed record".into());
    let mut docs = Vec::new();
    while !record.is_empty() {
        let (len, rest) = record.split_first_chunk::<4>().ok_or_else(damaged)?;
        let len = u32::from_be_bytes(*len) as usize;
        let doc = rest.get(..len).ok_or_else(damaged)?;
        docs.push(doc);
        record = &rest[len..];
    }
    Ok(docs)
}
