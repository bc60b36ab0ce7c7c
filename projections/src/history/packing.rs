//! How a batch's record of a source record's versions is stored (`history.rs`): packed
//! against the value the batch left the record with, in runs ended by a record packed
//! alone, so that an `as_of` read unpacks a run at most; and read back.

use std::collections::HashMap;

use crate::keys;
use crate::kv::StoreError;
use crate::subject_entries;

/// The most records of a source record's versions in a row that are packed against the
/// value after their batch ([`pack_versions`]): the next is packed alone, so that an
/// `as_of` read unpacks at most this many to reach the one it asks for.
pub(super) const RUN: u8 = 16;

/// The first byte of a record of versions packed against the value after its batch
/// ([`pack_versions`]).
const AGAINST_AFTER: u8 = 1;

/// Whether `record`'s versions are packed against the value after their batch: all but
/// a race's odds, whose versions keep no value (only when they changed), so that the
/// value after a batch is not the first one the next replaced.
pub(super) fn packed_against_value(record: &[u8]) -> bool {
    !record.starts_with(keys::ODDS_PREFIX)
}

/// A batch's record of `record`'s versions `replaced` as stored, in one of three forms:
/// - [`AGAINST_AFTER`], then `replaced` packed against `after`, the value the batch left
///   the record with, where that makes it shorter and `runs` has it in a run of fewer
///   than [`RUN`] such records. Most changes of a record alter a few of its fields, so
///   that each version but one of a card's form, rewritten at every result of its
///   runners and riders, packs to the few fields it differs in. The value after a batch
///   is the first one the next batch replaced, or the record's value now after the last
///   ([`unpack_versions`]);
/// - packed alone (a zstd frame, [`pack_alone`]), where the run is as long as it may
///   be, or `runs` does not know the record;
/// - as it is, where packing makes it no shorter: its first byte is the high byte of its
///   first entry's sequence, 0 below 2^56, which tells it from the others.
pub(super) fn pack_versions(
    runs: &mut Runs,
    record: &[u8],
    replaced: Vec<u8>,
    after: &[u8],
) -> Vec<u8> {
    let Some(packed) = crate::compressed::pack_against(&replaced, after) else {
        return replaced;
    };
    if !runs.go_on(record) {
        return pack_alone(replaced);
    }
    let mut stored = Vec::with_capacity(1 + packed.len());
    stored.push(AGAINST_AFTER);
    stored.extend_from_slice(&packed);
    stored
}

/// A batch's record of versions packed alone where that makes it shorter: a zstd frame
/// with a checksum, as [`crate::compressed::pack_against`] packs against nothing.
pub(super) fn pack_alone(replaced: Vec<u8>) -> Vec<u8> {
    crate::compressed::pack_against(&replaced, &[]).unwrap_or(replaced)
}

/// Whether a stored record of versions is packed against the value after its batch
/// ([`pack_versions`]): it needs the next record, or the record's value now, to unpack.
pub(super) fn against_after(stored: &[u8]) -> bool {
    stored.first() == Some(&AGAINST_AFTER)
}

/// Where the newest record of a source record's versions stands in a run of records
/// packed against the value after them (0: packed alone), for the records of versions
/// packed lately: handed from a batch's write to the next's, in the order batches are
/// written ([`crate::store::Store::hand_on_to_write`]). A record it
/// does not know (the first batch after a start, or after a failed write, or one
/// unchanged for long) has its next record packed alone: it costs bytes, never an
/// answer, as a reader reads on to the first record packed alone however far it is.
#[derive(Debug, Default)]
pub(crate) struct Runs {
    /// Records whose versions were packed since `older` was started, and before.
    pub(super) newer: HashMap<Vec<u8>, u8, foldhash::fast::RandomState>,
    pub(super) older: HashMap<Vec<u8>, u8, foldhash::fast::RandomState>,
}

/// How many records [`Runs`] knows in each of its two generations: what they hold stays
/// bounded however long the log, and a record whose versions are packed again within a
/// generation is not forgotten.
pub(super) const RUNS_KNOWN: usize = 1 << 15;

impl Runs {
    /// Whether `record`'s next record of versions goes on its run, packed against the
    /// value after it; noted either way (where not, it is packed alone and starts one).
    pub(super) fn go_on(&mut self, record: &[u8]) -> bool {
        let known = (self.newer.remove(record)).or_else(|| self.older.remove(record));
        let place = known.map_or(RUN, |place| place + 1);
        let place = if place < RUN { place } else { 0 };
        if self.newer.len() >= RUNS_KNOWN {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(record.to_vec(), place);
        place > 0
    }
}

/// A record's records of versions `stored`, the last of them the newest read, unpacked
/// ([`pack_versions`]): from the last, each packed against the value after its batch
/// against the first value the one after it replaced, or `now` (the record's value now)
/// where it is the newest.
pub(crate) fn unpack_versions(
    stored: &[impl AsRef<[u8]>],
    now: Option<&[u8]>,
) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut after = now.unwrap_or_default().to_vec();
    let mut unpacked = Vec::with_capacity(stored.len());
    for batch in stored.iter().rev() {
        let batch = batch.as_ref();
        let batch = match batch.split_first() {
            Some((_, packed)) if against_after(batch) => {
                crate::compressed::unpack_against(packed, &after)?
            }
            _ => crate::compressed::unpack_against(batch, &[])?,
        }
        .into_owned();
        if let Some(first) = subject_entries::entries(&batch).next() {
            after = first?.1.to_vec();
        }
        unpacked.push(batch);
    }
    unpacked.reverse();
    Ok(unpacked)
}
