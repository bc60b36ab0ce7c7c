//! The odds journal: every applied `OddsUpdated` as it went live, kept so that the odds
//! history, live resumes and documents as of a point are read back from it.
//!
//! A batch writes the moves of a race it applied as one record, a chunk
//! ([`keys::odds_chunk`]), under the date, the race number and the sequence of the chunk's
//! first move: one sled insert for up to [`CHUNK_MOVES`] moves, where a record per move
//! made a replay write the journal's last leaf again for every odds update (nine events in
//! ten of a racing log), and sled held every leaf so replaced until the batch ended. Chunks
//! are only ever added, never rewritten; a race's moves read in stream order across them,
//! without reading another race's (a race's history, its odds as of a point), and a date's
//! read in stream order by merging its races' (a live resume).
//!
//! A chunk is its moves one after the other, each `seq` (8 bytes, big-endian), race number
//! (1 byte), the length of its body (4 bytes, big-endian), then the body
//! ([`crate::docs::render_odds_move`]), stored packed (`compressed.rs`): a chunk of JSON moves
//! packs to a fraction of its size, and is written once. The store packs it where it
//! commits (`keys/kinds.rs`), on the thread that writes, not the fold's.

use std::collections::BTreeMap;

use crate::docs;
use crate::facts::{Change, Facts, What};
use crate::keys;
use crate::kv::StoreError;
use crate::kv::{Bytes, Kv, Range};
use crate::model::ReadModel;
use crate::state::{race_no, Reads, State};

mod counts;
use counts::{race_total, Count};

/// Most moves in one chunk: a read of a move or two past a point decodes no more.
const CHUNK_MOVES: usize = 128;
/// About the most bytes of moves in one chunk, before the store packs it. sled writes a
/// whole leaf again when one of its records changes, a leaf holds up to 16 records, and
/// one over a quarter of a segment (128 KiB) goes to a file of its own, created for that
/// write; a date's chunks follow one another, so its newest leaf is written with every
/// batch. Packed, moves take about an eighth of their bytes (a race's moves repeat its
/// runners and their prices), so sixteen chunks of 32 KiB stay well under that threshold,
/// and a race's moves of a replay's batch are one record, packed together.
const CHUNK_BYTES: usize = 32 << 10;
/// Bytes before each move's body.
const HEAD: usize = 8 + 1 + 4;

/// One applied odds update, as the odds journal keeps it.
#[derive(Debug, Clone)]
pub struct OddsMove {
    /// Its stream sequence.
    pub seq: u64,
    /// Its race.
    pub race_number: u8,
    /// `{date, venue, race_number, seq, published_at, occurred_at, odds}`, as it went live (see
    /// [`crate::docs::render_odds_move`]).
    pub body: Bytes,
}

/// The moves a batch applied, by date and race, until [`Pending::write`] writes them as
/// chunks.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    dates: BTreeMap<String, BTreeMap<u8, Open>>,
    /// How many moves of each race the journal holds, as the batch before left it: of the
    /// races of the dates it moved ([`Totals`]).
    totals: Totals,
}

/// How many moves of each race the journal holds, by date and race, as a batch leaves it:
/// of the dates it moved a race of. The next batch of its store takes a race's count from
/// here rather than from its last chunk's record: without it, a live batch of a few moves
/// would look that record up, with a backward scan of the race's counts, for each race it
/// moved (6 % of the projector's thread at 20,000 moves a second).
#[derive(Debug, Default)]
pub(crate) struct Totals(BTreeMap<String, BTreeMap<u8, u64>>);

/// A race's chunk in the making.
#[derive(Debug)]
struct Open {
    /// The sequence of its first move: its key.
    first: u64,
    /// The race's moves in the chunks before it.
    before: u64,
    moves: usize,
    bytes: Vec<u8>,
}

impl Open {
    fn starting_at(first: u64, before: u64) -> Open {
        Open {
            first,
            before,
            moves: 0,
            bytes: Vec::new(),
        }
    }

    /// Writes the chunk of `race_number` of `date` through `s`, with its count.
    fn write(self, s: &mut impl State, date: &str, race_number: u8) {
        s.put(
            keys::odds_chunk_count(date, race_number, self.first),
            Count {
                before: self.before,
                moves: self.moves as u64,
            }
            .encode(),
        );
        s.put(keys::odds_chunk(date, race_number, self.first), self.bytes);
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
    /// Adds a move (in stream order) to its race's chunk, writing the chunk out through
    /// `s` first if it is full.
    fn push(
        &mut self,
        s: &mut impl State,
        date: &str,
        seq: u64,
        race_number: u8,
        body: &[u8],
    ) -> Result<(), StoreError> {
        let len = u32::try_from(body.len())
            .map_err(|_| StoreError::Corrupt("an odds move over 4 GiB".into()))?;
        // (A date already held is looked up without a copy of it: nine events in ten are
        // odds moves.)
        let races = match self.dates.get_mut(date) {
            Some(races) => races,
            None => self.dates.entry(date.to_owned()).or_default(),
        };
        let open = match races.entry(race_number) {
            std::collections::btree_map::Entry::Occupied(open) => open.into_mut(),
            std::collections::btree_map::Entry::Vacant(vacant) => {
                let known = self.totals.0.get(date).and_then(|t| t.get(&race_number));
                let before = match known {
                    Some(&total) => total,
                    None => race_total(s, date, race_number)?,
                };
                vacant.insert(Open::starting_at(seq, before))
            }
        };
        if open.full_for(body.len()) {
            let before = open.before + open.moves as u64;
            let done = std::mem::replace(open, Open::starting_at(seq, before));
            done.write(s, date, race_number);
        }
        open.append(seq, race_number, len, body);
        Ok(())
    }

    /// A batch's, after the one that left `totals`.
    pub(crate) fn resumed(totals: Totals) -> Pending {
        Pending {
            dates: BTreeMap::new(),
            totals,
        }
    }

    /// What the next batch may start from, once this one has rendered.
    pub(crate) fn keep(self) -> Totals {
        self.totals
    }

    /// Bytes of the moves not yet written.
    pub(crate) fn bytes(&self) -> usize {
        self.dates
            .values()
            .flat_map(BTreeMap::values)
            .map(|open| open.bytes.len())
            .sum()
    }
}

impl ReadModel for Pending {
    /// Keeps an odds move as it went live; a retraction leaves it there.
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        let What::Odds(o) = &change.what else {
            return Ok(());
        };
        let n = race_no(o.race_number)?;
        let published = docs::odds::published_at(change.published);
        let book = change.book.clone().unwrap_or_default();
        let body = docs::odds::render_odds_move(&docs::odds::OddsMoveDoc {
            date: &o.date,
            venue: o.venue.as_deref(),
            race_number: n,
            seq: change.seq,
            published_at: &published,
            occurred_at: change.occurred_at,
            odds: &o.odds,
            market: &book,
        });
        self.push(s, &o.date, change.seq, n, &body)
    }

    /// Writes every race's open chunk, and keeps the totals of the dates moved (those
    /// the batch before kept where this one moved none).
    fn render<S: State>(&mut self, s: &mut S, _: u64, _: &Facts) -> Result<(), StoreError> {
        if self.dates.is_empty() {
            return Ok(());
        }
        let mut totals = BTreeMap::new();
        for (date, races) in std::mem::take(&mut self.dates) {
            let mut known = self.totals.0.remove(&date).unwrap_or_default();
            for (race_number, open) in races {
                known.insert(race_number, open.before + open.moves as u64);
                open.write(s, &date, race_number);
            }
            totals.insert(date, known);
        }
        self.totals = Totals(totals);
        Ok(())
    }
}

/// How many moves of race `race_number` of `date` came after stream sequence `after`:
/// the race's total less the moves up to `after`, which are the count before the chunk
/// that holds `after` and that chunk's moves at or below it. Two look-ups of counts and
/// one chunk read, however long the race's journal.
fn count_race_after(
    kv: &Kv,
    reads: Reads<'_>,
    date: &str,
    race_number: u8,
    after: u64,
) -> Result<u64, StoreError> {
    let prefix = keys::odds_race_counts(date, race_number);
    let Some(last) = kv.prefix(&prefix).next_back() else {
        return Ok(0);
    };
    reads.note()?;
    let total = Count::decode(&last?.1)?.through();
    let upto = keys::odds_chunk_count(date, race_number, after);
    let Some(holding) = kv.range(prefix.as_slice()..=upto.as_slice()).next_back() else {
        // Every chunk starts after `after`.
        return Ok(total);
    };
    reads.note()?;
    let (key, value) = holding?;
    let count = Count::decode(&value)?;
    let first = key
        .get(prefix.len()..)
        .and_then(|f| <[u8; 8]>::try_from(f).ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| StoreError::Corrupt("an odds journal chunk's count key".into()))?;
    let mut within = 0;
    if let Some(chunk) = kv.get(keys::odds_chunk(date, race_number, first))? {
        reads.note()?;
        for m in moves(&chunk) {
            if m?.seq > after {
                break;
            }
            within += 1;
        }
    }
    Ok(total.saturating_sub(count.before + within))
}

/// The moves of one chunk as the store reads it (unpacked: `keys/kinds.rs`), in order,
/// each an error where the chunk does not decode. Its moves' bodies are slices of the
/// chunk, not copies.
pub(crate) fn moves(chunk: &Bytes) -> ChunkMoves {
    ChunkMoves {
        chunk: chunk.clone(),
        at: 0,
    }
}

/// The moves of one chunk ([`moves`]).
pub(crate) struct ChunkMoves {
    chunk: Bytes,
    at: usize,
}

impl Iterator for ChunkMoves {
    type Item = Result<OddsMove, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let chunk = &self.chunk;
        let at = self.at;
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
            Ok((
                start + len,
                OddsMove {
                    seq,
                    race_number,
                    body: chunk.subslice(start, len),
                },
            ))
        })();
        Some(match next {
            Ok((end, m)) => {
                self.at = end;
                Ok(m)
            }
            Err(e) => {
                // Nothing after a move that does not decode can be found.
                self.at = chunk.len();
                Err(e)
            }
        })
    }
}

/// The moves of one race of a date after a stream sequence, in the order they went live:
/// its chunks from the one holding the first such move, each read once as it is reached.
struct RaceMoves<'a> {
    chunks: Range,
    prefix: Vec<u8>,
    after: u64,
    current: Option<ChunkMoves>,
    reads: Reads<'a>,
    done: bool,
}

impl<'a> RaceMoves<'a> {
    fn new(
        kv: &Kv,
        reads: Reads<'a>,
        date: &str,
        race_number: u8,
        after: u64,
    ) -> Result<RaceMoves<'a>, StoreError> {
        let prefix = keys::odds_race_moves(date, race_number);
        let first = keys::odds_chunk(date, race_number, after.saturating_add(1));
        // The chunk holding the first move past `after` may start before it.
        let from = match kv.range(prefix.as_slice()..=first.as_slice()).next_back() {
            Some(found) => found?.0.to_vec(),
            None => first,
        };
        Ok(RaceMoves {
            chunks: kv.range(from..),
            prefix,
            after,
            current: None,
            reads,
            done: false,
        })
    }
}

impl Iterator for RaceMoves<'_> {
    type Item = Result<OddsMove, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(current) = &mut self.current {
                match current.next() {
                    Some(Ok(m)) if m.seq <= self.after => continue,
                    Some(next) => return Some(next),
                    None => self.current = None,
                }
            }
            if self.done {
                return None;
            }
            match self.chunks.next()? {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok((key, _)) if !key.starts_with(&self.prefix) => {
                    self.done = true;
                    return None;
                }
                Ok((_, chunk)) => {
                    if let Err(e) = self.reads.note() {
                        self.done = true;
                        return Some(Err(e));
                    }
                    self.current = Some(moves(&chunk));
                }
            }
        }
    }
}

/// The race numbers of `date` with moves in the journal, in order: one look-up a race.
fn races_of(kv: &Kv, reads: Reads<'_>, date: &str) -> Result<Vec<u8>, StoreError> {
    let prefix = keys::odds_moves_of(date);
    let mut races = Vec::new();
    let mut from = prefix.clone();
    while let Some(found) = kv.range(from.as_slice()..).next() {
        let (key, _) = found?;
        reads.note()?;
        let Some(&race_number) = key.strip_prefix(prefix.as_slice()).and_then(|r| r.first()) else {
            break;
        };
        races.push(race_number);
        let Some(next) = race_number.checked_add(1) else {
            break;
        };
        from = keys::odds_race_moves(date, next);
    }
    Ok(races)
}

/// Every move of `date` after stream sequence `after`, in the order they went live, of
/// `race` only if given; `visit` says whether to go on. One race's moves are read from its
/// own chunks; a date's, from each race's, merged by sequence. `reads` counts the chunks
/// and races looked up, and stops the read at its deadline.
pub(crate) fn each_move(
    kv: &Kv,
    reads: Reads<'_>,
    date: &str,
    after: u64,
    race: Option<u8>,
    mut visit: impl FnMut(OddsMove) -> bool,
) -> Result<(), StoreError> {
    if let Some(race_number) = race {
        for m in RaceMoves::new(kv, reads, date, race_number, after)? {
            if !visit(m?) {
                break;
            }
        }
        return Ok(());
    }
    let mut races = Vec::new();
    let mut heads = Vec::new();
    for race_number in races_of(kv, reads, date)? {
        let mut race = RaceMoves::new(kv, reads, date, race_number, after)?;
        heads.push(race.next().transpose()?);
        races.push(race);
    }
    // A date has at most 99 races: the earliest head is found by looking at each.
    while let Some((i, _)) = heads
        .iter()
        .enumerate()
        .filter_map(|(i, head)| head.as_ref().map(|m| (i, m.seq)))
        .min_by_key(|&(_, seq)| seq)
    {
        let next = races[i].next().transpose()?;
        let Some(m) = std::mem::replace(&mut heads[i], next) else {
            break;
        };
        if !visit(m) {
            break;
        }
    }
    Ok(())
}

/// `records` as a store holds them with the odds journal's chunks taken apart: a record
/// per move, under its date, sequence and race number, and the chunks' counts left out.
/// Two stores that applied the same moves hold the same, however their batches fell: for
/// checks that compare them.
pub fn journal_by_move(
    records: BTreeMap<Vec<u8>, Vec<u8>>,
) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, StoreError> {
    let mut out = BTreeMap::new();
    for (key, value) in records {
        // A chunk's count depends on how the batches fell, as its chunks do.
        if key.starts_with(b"on\0") {
            continue;
        }
        let Some(date) = key
            .strip_prefix(b"oj\0".as_slice())
            // A chunk's key ends with its race number (1 byte) and first sequence (8).
            .and_then(|rest| rest.len().checked_sub(9).map(|end| &key[..3 + end]))
        else {
            out.insert(key, value);
            continue;
        };
        for m in moves(&Bytes::from(value)) {
            let m = m?;
            let mut by_move = date.to_vec();
            by_move.extend_from_slice(&m.seq.to_be_bytes());
            by_move.push(m.race_number);
            out.insert(by_move, m.body.to_vec());
        }
    }
    Ok(out)
}

impl crate::store::Store {
    /// Up to `limit` moves of the odds journal of `date` after stream sequence `after`, in
    /// the order they went live: every move of the date, or (`race`) of one race number.
    pub fn odds_moves(
        &self,
        date: &str,
        after: u64,
        race: Option<u8>,
        limit: usize,
    ) -> Result<Vec<OddsMove>, StoreError> {
        let mut out = Vec::new();
        if limit > 0 {
            each_move(&self.kv, self.reads(), date, after, race, |m| {
                out.push(m);
                out.len() < limit
            })?;
        }
        Ok(out)
    }

    /// How many moves of `date` (of `race` only, if given) the journal holds after `after`:
    /// from the counts kept beside its chunks, a few look-ups a race however long the
    /// journal (a read that lands while a commit does may count a move of it or not).
    pub fn count_odds_moves(
        &self,
        date: &str,
        after: u64,
        race: Option<u8>,
    ) -> Result<u64, StoreError> {
        let races = match race {
            Some(n) => vec![n],
            None => races_of(&self.kv, self.reads(), date)?,
        };
        let mut count = 0;
        for race_number in races {
            count += count_race_after(&self.kv, self.reads(), date, race_number, after)?;
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use racing_events::samples::{envelope, odds_at};

    use crate::store::Store;
    use crate::tests::tempdir;

    #[test]
    fn a_races_moves_are_stored_packed_and_read_back_in_order_from_any_point() {
        const DAY: &str = "2026-11-25";
        const MOVES: u64 = 600;
        let dir = tempdir();
        let store = Store::open(dir.path()).expect("open");
        let horses: Vec<String> = (1..=14).map(|i| format!("K{i:03}")).collect();
        for hundred in 0..MOVES / 100 {
            let mut b = store.batch().expect("batch");
            for i in 0..100 {
                let seq = hundred * 100 + i + 1;
                let prices: Vec<(&str, f64)> = horses
                    .iter()
                    .enumerate()
                    .map(|(h, horse)| (horse.as_str(), 2.0 + ((seq + h as u64) % 40) as f64 / 4.0))
                    .collect();
                let e = envelope(odds_at(DAY, "Sha Tin", 1, &prices));
                b.apply(seq, 0, &e).expect("apply");
            }
            b.commit().expect("commit");
        }
        // As sled holds them: the store packs them where it commits.
        let stored: usize = store
            .kv
            .stored()
            .map(|r| r.expect("read"))
            .filter(|(k, _)| k.starts_with(b"oj\0"))
            .map(|(k, v)| k.len() + v.len())
            .sum();
        let moves_from = |after: u64| {
            let mut seqs = Vec::new();
            let mut bytes = 0;
            super::each_move(&store.kv, store.reads(), DAY, after, Some(1), |m| {
                seqs.push(m.seq);
                bytes += super::HEAD + m.body.len();
                true
            })
            .expect("the journal reads");
            (seqs, bytes)
        };
        let (seqs, moved) = moves_from(0);
        assert_eq!(seqs, (1..=MOVES).collect::<Vec<_>>());
        assert!(
            stored * 4 <= moved,
            "{stored} bytes stored for {moved} bytes of moves"
        );
        // From inside a chunk, and from the last move.
        let (seqs, _) = moves_from(345);
        assert_eq!(seqs, (346..=MOVES).collect::<Vec<_>>());
        assert!(moves_from(MOVES).0.is_empty());
    }
}
