//! The read models at start-up: opened, or made anew when they are damaged, of an older
//! layout or built from another stream, and then read whole once in the background, with
//! a rebuild from the log for a store that fails that check.

use std::sync::Arc;

use anyhow::Context as _;
use async_nats::jetstream;
use racing_projections::Store;
use tokio_util::sync::CancellationToken;

use crate::nats;
use crate::read_models::{ReadModels, LET_GO_PATIENCE};
use crate::rebuild::Rebuilder;

/// Opens the read models, or, when they are damaged, starts an empty store that the
/// projector rebuilds from the log: a clear log line instead of a crash loop (the damaged
/// copy is moved aside for inspection). Read models of an older version's layout, or
/// built from another stream than this one (re-created: NATS's volumes wiped, a new
/// cluster), are removed and rebuilt the same way, with a log line that says why; the
/// reason is returned too, for `racing status`. The store records the stream it is built
/// from. Read models another process holds open are not damage: start-up waits for them
/// for [`LET_GO_PATIENCE`], then fails saying so, and touches nothing.
pub(super) async fn open_store(
    dir: &std::path::Path,
    stream: &jetstream::stream::Info,
    options: racing_projections::Options,
) -> anyhow::Result<(Store, Option<String>)> {
    let identity = nats::stream::stream_identity(stream);
    let last = stream.state.last_sequence;
    let fresh = |dir: &std::path::Path| {
        let store = Store::open_with(dir, options)
            .with_context(|| format!("creating fresh read models in {}", dir.display()))?;
        store.set_stream(&identity)?;
        anyhow::Ok(store)
    };
    // sled panics opening some damaged stores: that is a failure to open like any
    // other. (Others open and fail only on reading the records concerned: the check of
    // every record runs after start-up, in `verify_in_background`.)
    let open = || {
        std::panic::catch_unwind(|| {
            let store = Store::open_with(dir, options)?;
            let checkpoint = store.checkpoint()?;
            let built_from = store.stream()?;
            Ok::<_, racing_projections::StoreError>((store, checkpoint, built_from))
        })
    };
    // A store another process holds may be let go of in a moment: the service before
    // this one, still stopping in a restart (or, in one process, sled's threads of a
    // store just dropped). It is waited for, for a while.
    let patience = std::time::Instant::now() + LET_GO_PATIENCE;
    let mut opened = open();
    while matches!(&opened, Ok(Err(e)) if e.is_held_elsewhere())
        && std::time::Instant::now() < patience
    {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        opened = open();
    }
    let replaced = |why: String| -> anyhow::Result<(Store, Option<String>)> {
        tracing::warn!(store = %dir.display(), "{why}; removing them and rebuilding from the log");
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("removing the read models in {}", dir.display()))?;
        Ok((
            fresh(dir)?,
            Some(format!("rebuilt from the log at start-up: {why}")),
        ))
    };
    // Every arm that removes or moves the directory first drops the store opened from
    // it: sled writes into a store's directory as its last handle goes (a final flush,
    // blobs by path), which must land neither in a directory being removed nor in the
    // fresh store made in the same place.
    let problem = match opened {
        Ok(Ok((store, _, Some(from)))) if from != identity => {
            drop(store);
            return replaced(format!(
                "the read models were built from stream {from}, and the stream is now {identity} (made again)"
            ));
        }
        Ok(Ok((store, cp, built_from))) if cp <= last => {
            if built_from.is_none() {
                // A store from before streams were recorded, or an empty one.
                store.set_stream(&identity)?;
            }
            return Ok((store, None));
        }
        Ok(Err(racing_projections::StoreError::OlderSchema(found))) => {
            // An upgrade, not damage: the log rebuilds them in this version's layout.
            return replaced(format!("read models of an older version (schema {found})"));
        }
        Ok(Ok((store, cp, _))) => {
            drop(store);
            format!("its checkpoint {cp} is past the stream's end {last}")
        }
        Ok(Err(e)) if e.is_held_elsewhere() => {
            // Another service on the same data directory: its store, not a damaged one,
            // and moving it aside would pull it from under that service.
            anyhow::bail!(
                "the read models in {} are still open in another process after {} s \
                 (another `racing serve` on the same data directory?): {e}",
                dir.display(),
                LET_GO_PATIENCE.as_secs()
            );
        }
        Ok(Err(e)) => e.to_string(),
        Err(_) => "sled panicked opening it".to_owned(),
    };
    let aside = crate::read_models::damaged_aside(dir.parent().unwrap_or(dir));
    tracing::error!(
        store = %dir.display(),
        moved_to = %aside.display(),
        problem,
        "read models unusable; rebuilding them from the log"
    );
    std::fs::rename(dir, &aside)
        .with_context(|| format!("moving the damaged read models to {}", aside.display()))?;
    Ok((
        fresh(dir)?,
        Some(format!(
            "rebuilt from the log at start-up: the read models were damaged ({problem})"
        )),
    ))
}

/// Reads every record of the store in use once, on a blocking thread while the service
/// runs: sled opens some damaged stores (a lost blob, a zeroed or garbage page) and fails,
/// or panics, only on reading the records concerned. Such a store is rebuilt from the log
/// and swapped out (then kept aside for inspection); `/readyz` says so meanwhile. Reading
/// a large store takes seconds, which start-up does not wait for.
///
/// The check stops early when `shutdown` is cancelled, and the task it returns ends only
/// once the check has let go of the store: the service awaits it before it stops, so that
/// no store outlives its run (sled flushes a store as the last handle drops, which must
/// not happen once the service, or a test, has moved on).
///
/// It also stops once a rebuild has swapped the store out: the check is of the store in
/// use, and it lets go of a replaced one at once.
pub(super) fn verify_in_background(
    read_models: Arc<ReadModels>,
    rebuilder: Arc<Rebuilder>,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let store = read_models.load_full();
    let models = read_models.clone();
    tokio::spawn(async move {
        let checked = ReadModels::address(&store);
        let stop = shutdown.clone();
        let read = tokio::task::spawn_blocking(move || {
            let in_use = || Arc::ptr_eq(&store, &read_models.load());
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                store.verify(|| !stop.is_cancelled() && in_use())
            }));
            drop(store);
            read
        })
        .await;
        let problem = match read {
            Ok(Ok(Ok(Some(records)))) => {
                tracing::info!(
                    records,
                    "read models verified: every record of the store reads back whole"
                );
                return;
            }
            // Stopped: the service stops, or the store was swapped out.
            Ok(Ok(Ok(None))) => return,
            Ok(Ok(Err(e))) => e.to_string(),
            Ok(Err(_)) => "sled panicked reading it".to_owned(),
            Err(e) => format!("the check did not finish: {e}"),
        };
        if shutdown.is_cancelled() {
            return;
        }
        repair(&models, &rebuilder, checked, problem);
    })
}

/// Marks the store at `address` ([`ReadModels::address`]) damaged, for `problem`, and
/// starts the rebuild from the log that replaces it; the damaged store is then moved
/// aside to `read-models.damaged-<time>`.
pub(super) fn repair(models: &ReadModels, rebuilder: &Rebuilder, address: usize, problem: String) {
    // Marked and begun before the line is logged: whoever reads it finds `/readyz` already
    // saying so, not a last "ready" from before.
    models.mark_damaged(address);
    let begun = rebuilder.repair(problem.clone());
    tracing::error!(
        problem,
        "read models damaged; rebuilding them from the log, then moving them aside to read-models.damaged-<time>"
    );
    if let Err(running) = begun {
        tracing::warn!(
            started_at = running.started_at.as_deref().unwrap_or("?"),
            "a rebuild was already under way; it replaces the damaged store"
        );
    }
}
