//! The odds journal: every applied `OddsUpdated` as it went live, kept so that the odds
//! history, live resumes and documents as of a point are read back from it.
//!
//! A batch writes the moves of a date it applied as one record, a chunk
//! ([`keys::odds_chunk`]), under the sequence of the chunk's first move: one sled insert
//! for up to [`CHUNK_MOVES`] moves, where a record per move made a replay write the
//! journal's last leaf again for every odds update (nine events in ten of a racing log),
//! and sled held every leaf so replaced until the batch ended. Chunks are only ever added,
//! never rewritten; a date's moves read in stream order across them.
//!
//! A chunk is its moves one after the other, each `seq` (8 bytes, big-endian), race number
//! (1 byte), the length of its body (4 bytes, big-endian), then the body
//! ([`crate::render_odds_move`]).

use std::collections::BTreeMap;

use crate::fold::State;
use crate::keys;
use crate::StoreError;

/// Most moves in one chunk: a read of a move or two past a point decodes no more.
const CHUNK_MOVES: usize = 128;
/// About the most bytes of moves in one chunk. sled writes a whole leaf again when one of
/// its records changes, and a leaf holds up to 16 records; a leaf over a quarter of a
/// segment (128 KiB) goes to a file of its own, created for that write. A date's chunks
/// follow one another, so its newest leaf is written with every batch: at 64 KiB a chunk
/// (about 115 moves) it was a leaf of up to a megabyte and a new file each time; at 7 KiB
/// (about 12 moves), sixteen chunks stay under the threshold (BENCHMARKS.md, sixth stop).
const CHUNK_BYTES: usize = 7 << 10;
/// Bytes before each move's body.
const HEAD: usize = 8 + 1 + 4;

/// One applied odds update, as the odds journal keeps it.
#[derive(Debug, Clone)]
pub struct OddsMove {
    /// Its stream sequence.
    pub seq: u64,
    /// Its race.
    pub race_number: u8,
    /// `{date, venue, race_number, seq, published_at, odds}`, as it went live (see
    /// [`crate::render_odds_move`]).
    pub body: sled::IVec,
}

/// The moves a batch applied, by date, until [`Pending::write`] writes them as chunks.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    dates: BTreeMap<String, Open>,
}

/// A date's chunk in the making.
#[derive(Debug)]
struct Open {
    /// The sequence of its first move: its key.
    first: u64,
    moves: usize,
    bytes: Vec<u8>,
}

impl Open {
    fn starting_at(first: u64) -> Open {
        Open {
            first,
            moves: 0,
            bytes: Vec::new(),
        }
    }

    fn append(&mut self, seq: u64, race_number: u8, len: u32, body: &[u8]) {
        self.bytes.extend_from_slice(&seq.to_be_bytes());
        self.bytes.push(race_number);
        self.bytes.extend_from_slice(&len.to_be_bytes());
        self.bytes.extend_from_slice(body);
        self.moves += 1;
    }

    /// Whether a move of `len` bytes would take it past a chunk's size.
    fn full_for(&self, len: usize) -> bool {
        self.moves >= CHUNK_MOVES || self.bytes.len() + HEAD + len > CHUNK_BYTES
    }
}

impl Pending {
    /// Adds a move (in stream order) to its date's chunk, writing the chunk out through
    /// `s` first if it is full.
    pub(crate) fn push(
        &mut self,
        s: &mut impl State,
        date: &str,
        seq: u64,
        race_number: u8,
        body: &[u8],
    ) -> Result<(), StoreError> {
        let len = u32::try_from(body.len())
            .map_err(|_| StoreError::Corrupt("an odds move over 4 GiB".into()))?;
        match self.dates.get_mut(date) {
            Some(open) => {
                if open.full_for(body.len()) {
                    let done = std::mem::replace(open, Open::starting_at(seq));
                    s.put(keys::odds_chunk(date, done.first), done.bytes);
                }
                open.append(seq, race_number, len, body);
            }
            None => {
                let mut open = Open::starting_at(seq);
                open.append(seq, race_number, len, body);
                self.dates.insert(date.to_owned(), open);
            }
        }
        Ok(())
    }

    /// Bytes of the moves not yet written.
    pub(crate) fn bytes(&self) -> usize {
        self.dates.values().map(|open| open.bytes.len()).sum()
    }

    /// Writes every date's open chunk.
    pub(crate) fn write(&mut self, s: &mut impl State) {
        for (date, open) in std::mem::take(&mut self.dates) {
            s.put(keys::odds_chunk(&date, open.first), open.bytes);
        }
    }
}

/// The moves of one chunk, in order; an error for a chunk that does not decode.
pub(crate) fn moves(chunk: &sled::IVec) -> impl Iterator<Item = Result<OddsMove, StoreError>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= chunk.len() {
            return None;
        }
        let corrupt = || StoreError::Corrupt("an odds journal chunk".into());
        let next = (|| {
            let head = chunk.get(at..at + HEAD).ok_or_else(corrupt)?;
            let seq = u64::from_be_bytes(head[..8].try_into().map_err(|_| corrupt())?);
            let race_number = head[8];
            let len = u32::from_be_bytes(head[9..].try_into().map_err(|_| corrupt())?);
            let len = usize::try_from(len).map_err(|_| corrupt())?;
            let start = at + HEAD;
            if chunk.len() - start < len {
                return Err(corrupt());
            }
            at = start + len;
            Ok(OddsMove {
                seq,
                race_number,
                body: chunk.subslice(start, len),
            })
        })();
        if next.is_err() {
            // Nothing after a move that does not decode can be found.
            at = chunk.len();
        }
        Some(next)
    })
}

/// Every move of `date` after stream sequence `after`, in the order they went live, of
/// `race` only if given; `visit` says whether to go on.
pub(crate) fn each_move(
    tree: &sled::Tree,
    date: &str,
    after: u64,
    race: Option<u8>,
    mut visit: impl FnMut(OddsMove) -> bool,
) -> Result<(), StoreError> {
    let prefix = keys::odds_moves_of(date);
    let first = keys::odds_chunk(date, after.saturating_add(1));
    // The chunk holding the first move past `after` may start before it.
    let from = match tree.range(prefix.as_slice()..=first.as_slice()).next_back() {
        Some(found) => found?.0.to_vec(),
        None => first,
    };
    for item in tree.range(from..) {
        let (key, chunk) = item?;
        if !key.starts_with(&prefix) {
            break;
        }
        for m in moves(&chunk) {
            let m = m?;
            if m.seq > after && race.is_none_or(|n| n == m.race_number) && !visit(m) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// `records` as a store holds them with the odds journal's chunks taken apart: a record
/// per move, under its date, sequence and race number. Two stores that applied the same
/// moves hold the same, however their batches fell: for checks that compare them.
pub fn journal_by_move(
    records: BTreeMap<Vec<u8>, Vec<u8>>,
) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, StoreError> {
    let mut out = BTreeMap::new();
    for (key, value) in records {
        let Some(date) = key
            .strip_prefix(b"oj\0".as_slice())
            .and_then(|rest| rest.len().checked_sub(8).map(|end| &key[..3 + end]))
        else {
            out.insert(key, value);
            continue;
        };
        for m in moves(&sled::IVec::from(value)) {
            let m = m?;
            let mut by_move = date.to_vec();
            by_move.extend_from_slice(&m.seq.to_be_bytes());
            by_move.push(m.race_number);
            out.insert(by_move, m.body.to_vec());
        }
    }
    Ok(out)
}
