//! The sorted runs of applied ids on disk: a chunk's codec, a look-up of an id in a run,
//! and a k-way merge of runs into a new one, a step at a time.

use std::ops::Bound;

use super::limits::{ATOMIC_MERGE, CHUNK_IDS, MERGE_WRITE_IDS};
use crate::keys;
use crate::kv::StoreError;
use crate::kv::{Commit, Kv};

/// A k-way merge of sorted runs into a new one, in steps.
pub(super) struct Merge {
    pub(super) output: u64,
    pub(super) sources: Vec<Cursor>,
    /// Output ids of the chunk in progress.
    out: Vec<u128>,
    /// Output chunks not yet written to the tree.
    pub(super) pending: Commit,
    pending_ids: u64,
    /// Ids taken from the sources, and written to the output (fewer if two sources shared
    /// one, which they never should).
    pub(super) taken: u64,
    pub(super) written: u64,
    last: Option<u128>,
}

impl Merge {
    pub(super) fn new(output: u64, sources: &[u64]) -> Merge {
        Merge {
            output,
            sources: sources.iter().map(|r| Cursor::new(*r)).collect(),
            out: Vec::with_capacity(CHUNK_IDS),
            pending: Commit::default(),
            pending_ids: 0,
            taken: 0,
            written: 0,
            last: None,
        }
    }

    /// Merges up to `budget` ids (taking them off it); whether the merge is complete.
    pub(super) fn step(&mut self, kv: &Kv, budget: &mut u64) -> Result<bool, StoreError> {
        while *budget > 0 {
            let mut least: Option<(u128, usize)> = None;
            for (i, source) in self.sources.iter_mut().enumerate() {
                if let Some(id) = source.peek(kv)? {
                    if least.is_none_or(|(l, _)| id < l) {
                        least = Some((id, i));
                    }
                }
            }
            let Some((id, i)) = least else {
                self.write_chunk(kv)?;
                return Ok(true);
            };
            if let Some(source) = self.sources.get_mut(i) {
                source.pos += 1;
            }
            *budget -= 1;
            self.taken += 1;
            // Runs hold no id in common; if two did, the output holds it once.
            if self.last.replace(id) == Some(id) {
                continue;
            }
            self.out.push(id);
            if self.out.len() == CHUNK_IDS {
                self.write_chunk(kv)?;
            }
        }
        Ok(false)
    }

    /// Adds the output chunk in progress to the pending batch, and writes that out once
    /// the output has outgrown one atomic batch.
    fn write_chunk(&mut self, kv: &Kv) -> Result<(), StoreError> {
        if let Some(first) = self.out.first() {
            self.pending
                .put(keys::id_run(self.output, *first), encode_chunk(&self.out));
            self.written += self.out.len() as u64;
            self.pending_ids += self.out.len() as u64;
            self.out.clear();
        }
        if self.written > ATOMIC_MERGE && self.pending_ids >= MERGE_WRITE_IDS {
            kv.apply(std::mem::take(&mut self.pending))?;
            self.pending_ids = 0;
        }
        Ok(())
    }
}

/// Where a merge stands in one of its sources.
pub(super) struct Cursor {
    pub(super) run: u64,
    /// The ids of the chunk being merged, and how many of them are.
    ids: Vec<u128>,
    pos: usize,
    /// The key of the chunk in `ids`.
    read: Option<Vec<u8>>,
    done: bool,
}

impl Cursor {
    fn new(run: u64) -> Cursor {
        Cursor {
            run,
            ids: Vec::new(),
            pos: 0,
            read: None,
            done: false,
        }
    }

    /// The source's next id, reading its next chunk when needed; `None` past its end.
    fn peek(&mut self, kv: &Kv) -> Result<Option<u128>, StoreError> {
        while self.pos == self.ids.len() && !self.done {
            let from = match &self.read {
                Some(key) => Bound::Excluded(key.clone()),
                None => Bound::Included(keys::id_run(self.run, 0)),
            };
            let to = Bound::Included(keys::id_run(self.run, u128::MAX));
            match kv.range((from, to)).next() {
                Some(item) => {
                    let (key, chunk) = item?;
                    self.ids = decode_chunk(&chunk)?;
                    self.pos = 0;
                    self.read = Some(key.to_vec());
                }
                None => self.done = true,
            }
        }
        Ok(self.ids.get(self.pos).copied())
    }
}

/// Whether run `run` holds `id`: a binary search in the one chunk that would.
pub(super) fn run_holds(kv: &Kv, run: u64, id: u128) -> Result<bool, StoreError> {
    let Some(item) = kv
        .range(keys::id_run(run, 0)..=keys::id_run(run, id))
        .next_back()
    else {
        return Ok(false);
    };
    let (_, chunk) = item?;
    if !chunk.len().is_multiple_of(16) {
        return Err(chunk_damaged());
    }
    let n = chunk.len() / 16;
    let at = |i: usize| -> u128 {
        chunk
            .get(i * 16..i * 16 + 16)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u128::from_be_bytes)
    };
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match at(mid).cmp(&id) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(true),
        }
    }
    Ok(false)
}

fn chunk_damaged() -> StoreError {
    StoreError::Corrupt("a chunk of applied event ids is not a whole number of ids".into())
}

pub(super) fn encode_chunk(ids: &[u128]) -> Vec<u8> {
    ids.iter().flat_map(|id| id.to_be_bytes()).collect()
}

pub(super) fn decode_chunk(chunk: &[u8]) -> Result<Vec<u128>, StoreError> {
    if !chunk.len().is_multiple_of(16) {
        return Err(chunk_damaged());
    }
    Ok(chunk
        .chunks_exact(16)
        .map(|b| {
            let mut id = [0; 16];
            id.copy_from_slice(b);
            u128::from_be_bytes(id)
        })
        .collect())
}
