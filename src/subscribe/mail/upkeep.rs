//! Every mail directory kept bounded: the outbox's messages removed after
//! [`OUTBOX_KEEP`], the set-aside records after [`SET_ASIDE_KEEP`] and past
//! [`MAX_SET_ASIDE`], and the half-written files a crash left removed at start.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How long the outbox keeps a message before removing it.
pub(super) const OUTBOX_KEEP: Duration = Duration::from_secs(24 * 3600);

/// How long a set-aside record is kept under `mail/failed` before it is removed.
pub(super) const SET_ASIDE_KEEP: Duration = Duration::from_secs(30 * 24 * 3600);

/// Most set-aside records kept; past it the oldest go.
pub(super) const MAX_SET_ASIDE: usize = 10_000;

/// How often the sender prunes the set-aside records and the outbox.
pub(super) const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Removes the outbox's messages older than [`OUTBOX_KEEP`], now and then every hour,
/// until `shutdown`.
pub(super) async fn prune_outbox(dir: &Path, shutdown: CancellationToken) {
    loop {
        prune_older_than(dir, OUTBOX_KEEP);
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(PRUNE_EVERY) => {}
        }
    }
}

/// Removes the temporary files of `dir` that a crash inside [`crate::files::write_private`]
/// left: never renamed into place, each may hold a whole message, a key with it.
pub(super) fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(Result::ok).map(|e| e.path()) {
        if path.extension().is_some_and(|x| x == "tmp") {
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    tracing::warn!(path = %path.display(), "a message left half written removed")
                }
                Err(e) => {
                    tracing::error!(error = %e, path = %path.display(), "removing a message left half written")
                }
            }
        }
    }
}

/// Removes the set-aside records of `failed` older than [`SET_ASIDE_KEEP`], then the
/// oldest beyond [`MAX_SET_ASIDE`] (their names begin with the time they were written).
pub(super) fn prune_set_aside(failed: &Path) {
    prune_older_than(failed, SET_ASIDE_KEEP);
    let mut records = files(failed);
    if records.len() <= MAX_SET_ASIDE {
        return;
    }
    records.sort();
    let beyond = records.len() - MAX_SET_ASIDE;
    for path in &records[..beyond] {
        if let Err(e) = std::fs::remove_file(path) {
            tracing::warn!(error = %e, path = %path.display(), "removing an old set-aside record");
        }
    }
    tracing::info!(
        removed = beyond,
        kept = MAX_SET_ASIDE,
        "the oldest set-aside records removed"
    );
}

/// Removes the files of `dir` last written more than `keep` ago.
pub(super) fn prune_older_than(dir: &Path, keep: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > keep);
        if old {
            if let Err(e) = std::fs::remove_file(entry.path()) {
                tracing::warn!(error = %e, path = %entry.path().display(), "removing an old message");
            }
        }
    }
}

/// The `.json` files of `dir`.
pub(super) fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}
