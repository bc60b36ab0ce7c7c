//! The counts beside the odds journal's chunks: how many moves of a race came before
//! each chunk and how many it holds, so that the moves after any point are counted from
//! a few look-ups (what a live resume weighs before it replays), not by reading them.
//! What a count is and how the fold finds a race's total; the count of the moves after a
//! point, which reads chunks too, is the journal's ([`crate::store::Store::count_odds_moves`]).

use crate::keys;
use crate::kv::StoreError;
use crate::scan::Scan;
use crate::state::State;

/// What the count beside a chunk says: the race's moves in the chunks before it, and the
/// moves it holds. Two big-endian `u64`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Count {
    pub(super) before: u64,
    pub(super) moves: u64,
}

impl Count {
    /// The record's value.
    pub(super) fn encode(self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(16);
        bytes.extend_from_slice(&self.before.to_be_bytes());
        bytes.extend_from_slice(&self.moves.to_be_bytes());
        bytes
    }

    /// A record's value read back; an error for one of another length.
    pub(super) fn decode(bytes: &[u8]) -> Result<Count, StoreError> {
        let corrupt = || StoreError::Corrupt("an odds journal chunk's count".into());
        let word = |at: usize| {
            bytes
                .get(at..at + 8)
                .and_then(|w| w.try_into().ok())
                .map(u64::from_be_bytes)
                .ok_or_else(corrupt)
        };
        if bytes.len() != 16 {
            return Err(corrupt());
        }
        Ok(Count {
            before: word(0)?,
            moves: word(8)?,
        })
    }

    /// The race's moves up to and including this chunk's.
    pub(super) fn through(self) -> u64 {
        self.before.saturating_add(self.moves)
    }
}

/// How many moves of race `race_number` of `date` the journal holds, as the fold sees it
/// (the batch's own chunks written so far included): its last chunk's count.
pub(super) fn race_total(s: &impl State, date: &str, race_number: u8) -> Result<u64, StoreError> {
    let last = s.scan(
        &keys::odds_race_counts(date, race_number),
        Scan::Backward,
        1,
    )?;
    match last.first() {
        Some((_, value)) => Ok(Count::decode(value)?.through()),
        None => Ok(0),
    }
}
