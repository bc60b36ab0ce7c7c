//! A snapshot's file on this disk, written or fetched and removed when dropped, and why
//! one was not written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use racing_projections::SnapshotSummary;

/// A snapshot's file written, removed when dropped.
pub struct Written {
    pub(super) file: RemoveOnDrop,
    /// What it holds.
    pub summary: SnapshotSummary,
    /// Bytes the store it was written from took on its disk.
    pub store_bytes: u64,
    /// How long writing it took.
    pub took: Duration,
}

/// Why a snapshot's file was not written.
#[derive(Debug)]
pub enum NotWritten {
    /// The disk beside the read models lacks room for it: why.
    NoRoom(String),
    /// Writing it failed.
    Failed(anyhow::Error),
}

/// A fetched snapshot's file, removed on drop.
pub struct Fetched {
    pub(super) file: RemoveOnDrop,
}

impl Fetched {
    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.file.0
    }
}

pub(super) struct RemoveOnDrop(pub(super) PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
