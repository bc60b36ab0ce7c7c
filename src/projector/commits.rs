//! The commits of the fold once the API answers: how much one may write, and how long
//! each took; and the commits' work kept off the runtime's workers.

use racing_projections::Batch;

/// Most records one commit writes once the API answers (after the first catch-up, and
/// in a rebuild beside the store in use): sled's `apply_batch` holds a process-wide write
/// lock for the whole commit, and every read of the read models, of any store, waits for
/// it (a catch-up's batch, written beside readers, closes the store's own gate as long),
/// and sled writes a whole leaf again for each record it writes: a commit of 2,048
/// records held it, and every read during a rebuild, for tens of milliseconds; one of a
/// 65,536-message catch-up batch, for seconds.
const SERVING_COMMIT_WRITES: usize = 512;

/// Most bytes (about) one commit writes once the API answers: a record of the odds journal
/// holds up to 128 moves, so 512 of them made a commit of megabytes, and reads during a
/// catch-up of odds updates waited long behind each.
const SERVING_COMMIT_BYTES: usize = 1 << 20;

/// Runs `commit` and records how long it took (`racing_commit_seconds`): readers of the
/// read models may wait that long for it.
pub(super) fn timed<T>(commit: impl FnOnce() -> T) -> T {
    let began = std::time::Instant::now();
    let done = commit();
    metrics::histogram!("racing_commit_seconds").record(began.elapsed());
    done
}

/// Whether `batch` has written what one commit may once the API answers: about
/// [`SERVING_COMMIT_WRITES`] records or [`SERVING_COMMIT_BYTES`] bytes.
pub(super) fn commit_due(batch: &Batch<'_>) -> bool {
    batch.writes() >= SERVING_COMMIT_WRITES || batch.bytes() >= SERVING_COMMIT_BYTES
}

/// Runs `work` (a commit: sled's writes, for milliseconds) with the runtime's other
/// tasks moved off this worker thread, so that requests queued behind the projector are
/// taken up by another worker meanwhile. (A current-thread runtime, as in some tests,
/// has no other worker: there it just runs.)
pub(super) fn off_the_workers<T>(work: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}
