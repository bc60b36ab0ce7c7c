//! The sizes and budgets of the applied ids: a run's chunks, the merges' fan-in, the
//! upkeep's step before each batch, what a saved filter's chunk holds.

/// Ids in a chunk of a run (4 KiB). sled 0.34 writes a page larger than 128 KiB (a quarter
/// of its segment) to a file of its own, a new one at each rewrite: with chunks of 16 KiB
/// that took a large share of the CPU time, and memory grew with the ids. A leaf holds up
/// to 17 records, so chunks of 4 KiB keep every page inline.
pub(super) const CHUNK_IDS: usize = 256;

/// Runs of the same size class merged into one; the size classes are powers of it, so
/// an id is rewritten once per class it climbs (logarithmic), and at most
/// `FAN_IN - 1` runs of each class stand at once.
pub(super) const FAN_IN: usize = 8;

/// The upkeep between two batches, in ids' worth (merging an id; a record written or
/// removed costs [`RECORD_COST`]): 16 MiB read and written. This bounds the pause the
/// upkeep adds before a batch; a larger merge or save takes several steps.
pub(crate) const UPKEEP_STEP: u64 = 1 << 20;

/// [`UPKEEP_STEP`] before a prompt batch, one a live update waits for (256 KiB): a merge of
/// 524,288 ids in full steps held the batch after a step, and the one after its end, for
/// tens of milliseconds, and a live update in it, and every client's frame of it, would
/// wait as long. A merge of a million ids takes 64 such batches; live updates come far
/// slower than that.
pub(crate) const PROMPT_UPKEEP_STEP: u64 = if cfg!(test) { 64 } else { 1 << 14 };

/// A merge whose output is at most this many ids writes it, the new manifest and the
/// removal of its sources' chunks in one atomic batch; a larger one writes its chunks as
/// it goes, switches the manifest once they are flushed, and removes its sources' chunks
/// over the batches that follow.
pub(super) const ATOMIC_MERGE: u64 = if cfg!(test) { 512 } else { 1 << 16 };

/// Ids in runs that the saved filter does not hold after which the filter is saved again:
/// what a restart reads besides the saved filter stays below this (16 bytes an id). A
/// filter grown to 224 MiB (100 M ids) is then written again at 112 bytes an id, against
/// the thousands a replay writes for each event.
pub(super) const SAVE_AFTER: u64 = if cfg!(test) { 3_000 } else { 1 << 21 };

/// Ids of a large merge's output written out at a time, as the merge goes (256 KiB): a
/// step that wrote out 1 MiB took long enough under load to be a long wait for a live
/// update behind it.
pub(super) const MERGE_WRITE_IDS: u64 = if cfg!(test) { 128 } else { 1 << 14 };

/// Bytes of a chunk of the saved filter: small, as [`CHUNK_IDS`] is.
pub(super) const FILTER_CHUNK_BYTES: usize = 4096;

/// What writing or removing one record (a chunk of a run or of the filter, 4 KiB) costs
/// of a step's budget, in ids: as much as merging the ids of a chunk. A save of the
/// default filter (32 MiB, 8,192 chunks) and the removal of a large merge's sources then
/// go 64 records before a prompt batch: in one go, each held a batch far longer than a
/// live update may wait.
pub(super) const RECORD_COST: u64 = CHUNK_IDS as u64;
