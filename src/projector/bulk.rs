//! The fold outside the live loop: messages folded into a store in commits that never
//! hold its readers long, for a rebuild beside the store in use, and into a bulk load's
//! batches.

use async_nats::jetstream;
use racing_projections::{Batch, BatchStats, Loader, Store};

use super::batch::{Taken, Whose};
use super::commits::{commit_due, timed};
use super::decoded::{decode, Decoded};

/// Folds `messages` into `store` and commits them with the checkpoint they reach, as the
/// projector does but with no odds going live (for a rebuild, beside the store in use):
/// in commits of the size [`commit_due`] allows, so that the rebuild never holds the
/// readers of the store in use long. Returns what it did and how
/// many messages the stream held past the last one.
pub fn fold_messages(
    store: &Store,
    messages: Vec<jetstream::Message>,
) -> anyhow::Result<(BatchStats, u64)> {
    fold_decoded(store, messages.into_iter().map(decode), commit_due)
}

/// [`fold_messages`] of messages already decoded, committing whenever `due` says a batch
/// has written enough, and at the end.
pub(crate) fn fold_decoded(
    store: &Store,
    messages: impl IntoIterator<Item = anyhow::Result<Decoded>>,
    due: impl Fn(&Batch<'_>) -> bool,
) -> anyhow::Result<(BatchStats, u64)> {
    // Where the store stands if no message is new to it (all delivered again).
    let mut done = BatchStats {
        checkpoint: store.checkpoint()?,
        ..BatchStats::default()
    };
    let mut add = |stats: BatchStats| {
        done.applied += stats.applied;
        done.duplicates += stats.duplicates;
        done.replayed += stats.replayed;
        done.dead_letters += stats.dead_letters;
        done.late_prices += stats.late_prices;
        done.checkpoint = done.checkpoint.max(stats.checkpoint);
    };
    let mut batch = Taken::new(store, Whose::Rebuild, false)?;
    let mut pending = 0;
    for m in messages {
        batch.take(m?)?;
        pending = batch.pending;
        if due(&batch.batch) {
            add(timed(|| batch.batch.commit())?);
            // After the commit: a batch starts from the checkpoint it reached.
            batch = Taken::new(store, Whose::Rebuild, false)?;
        }
    }
    if !batch.batch.is_empty() {
        add(timed(|| batch.batch.commit())?);
    }
    Ok((done, pending))
}

/// Folds `messages` into one batch of `loader`'s and has it written, once the write before
/// it is done ([`Loader::write`]). Returns the checkpoint the batch reaches once written,
/// and how many messages the stream held past the last one.
pub(crate) fn load_decoded(
    loader: &mut Loader,
    messages: impl IntoIterator<Item = anyhow::Result<Decoded>>,
) -> anyhow::Result<(u64, u64)> {
    let mut batch = Taken::over(loader.batch(), Whose::Rebuild);
    for m in messages {
        batch.take(m?)?;
    }
    let pending = batch.pending;
    if !batch.batch.is_empty() {
        let sealed = timed(|| batch.batch.seal(|_| {}))?;
        loader.write(sealed)?;
    }
    Ok((loader.checkpoint(), pending))
}
