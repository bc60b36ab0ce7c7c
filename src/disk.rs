//! Room left on the disk that holds the read models: the projector commits a batch only
//! with room to spare for it, since sled 0.34 fails every later write of a store once one
//! write has failed (a full disk), until the store is opened again; and a snapshot's file,
//! written or fetched beside the store, never takes the store's room.

use std::path::Path;

/// Bytes left free beside any commit: sled writes its log a segment (512 KiB) at a time,
/// and cleans old segments by writing their pages again, besides each commit's own
/// writes. A margin chosen, not measured: a few segments and the pointer files.
pub const SPARE_BYTES: u64 = 8 << 20;
/// What a commit may write to sled's log for each byte a batch estimates
/// ([`racing_projections::Batch::bytes`], before its documents are rendered): sled
/// writes each leaf a record lands in again whole, and the rendered documents besides. A
/// margin chosen, not measured.
pub const WRITE_FACTOR: u64 = 4;

/// Bytes a snapshot's file (written, or fetched and loaded) leaves free beside the read
/// models: the projector's own [`SPARE_BYTES`] and its commits while the file is made or
/// loaded. A margin chosen, not measured.
pub const SNAPSHOT_SPARE_BYTES: u64 = 64 << 20;

/// Bytes free to this process on the file system that holds `path`.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    let stats = rustix::fs::statvfs(path)?;
    Ok(stats.f_bavail.saturating_mul(stats.f_frsize))
}

/// Whether the disk of `path` has room for a commit of a batch that estimates
/// `batch_bytes`: `Err` says why not, for the projector's readiness.
pub fn room_for(path: &Path, batch_bytes: usize) -> Result<(), String> {
    let need = SPARE_BYTES.saturating_add(WRITE_FACTOR.saturating_mul(batch_bytes as u64));
    match free_bytes(path) {
        Ok(free) if free >= need => Ok(()),
        Ok(free) => Err(format!(
            "no space left on the disk of {}: {} KiB free, {} KiB wanted for the next commit",
            path.display(),
            free >> 10,
            need >> 10
        )),
        Err(e) => Err(format!(
            "the free space of the disk of {} cannot be read: {e}",
            path.display()
        )),
    }
}

/// Whether the disk of `path` has room for `bytes` of `what` (a snapshot's file, a
/// store loaded from one) besides [`SNAPSHOT_SPARE_BYTES`] for the read models: `Err` says
/// why not.
pub fn room_beside_store(path: &Path, bytes: u64, what: &str) -> Result<(), String> {
    let need = bytes.saturating_add(SNAPSHOT_SPARE_BYTES);
    match free_bytes(path) {
        Ok(free) if free >= need => Ok(()),
        Ok(free) => Err(format!(
            "no room on the disk of {} for {what}: {} MiB free, {} MiB wanted with the \
             {} MiB kept for the read models",
            path.display(),
            free >> 20,
            need.div_ceil(1 << 20),
            SNAPSHOT_SPARE_BYTES >> 20
        )),
        Err(e) => Err(format!(
            "the free space of the disk of {} cannot be read: {e}",
            path.display()
        )),
    }
}

/// Bytes the files under `dir` take on their disk (blocks allocated, so a sparse file
/// counts what it holds); what cannot be read counts nothing.
pub fn dir_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&entry.path()),
            Ok(m) => m.blocks().saturating_mul(512),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_with_room_takes_a_commit_and_a_commit_larger_than_the_disk_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let free = free_bytes(dir.path()).expect("statvfs");
        if free > SPARE_BYTES * 2 {
            assert!(room_for(dir.path(), 0).is_ok());
        }
        let refused = room_for(dir.path(), usize::MAX).expect_err("more than any disk");
        assert!(refused.contains("no space left"), "{refused}");
    }

    #[test]
    fn a_snapshot_larger_than_the_disk_less_the_store_s_spare_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let free = free_bytes(dir.path()).expect("statvfs");
        let refused = room_beside_store(
            dir.path(),
            free.saturating_sub(SNAPSHOT_SPARE_BYTES / 2),
            "a file",
        )
        .expect_err("the spare is the store's");
        assert!(refused.contains("kept for the read models"), "{refused}");
        std::fs::write(dir.path().join("f"), vec![1; 10_000]).expect("a file");
        assert!(dir_bytes(dir.path()) >= 10_000);
    }
}
