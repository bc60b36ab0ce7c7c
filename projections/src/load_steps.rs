//! A bulk load's batch written in steps, and still whole after a crash.
//!
//! sled 0.34 pins one epoch of its memory reclamation and the log's recovery point for the
//! whole of an atomic batch: nothing a batch replaces is freed before its end. A replay's
//! batch of 65,536 events writes hundreds of thousands of records; written a few thousand
//! records at a time rather than as one atomic batch each, the bench's log replayed faster,
//! sled's writer no longer the bound. So a [`crate::load::Loader`] writes each batch in steps,
//! and keeps it atomic with its checkpoint through a redo file beside the store:
//!
//! 1. every record of the batch but the checkpoint, in the file `load-steps-<checkpoint>`
//!    of the store's directory, with a checksum, synced to disk;
//! 2. the checkpoint and a marker that names that checkpoint, in one atomic write;
//! 3. the records, [`STEP_RECORDS`] to an atomic write;
//! 4. the store flushed, then the file of the batch before removed.
//!
//! After a crash between 2 and 4, the marker names a file whose records are written again
//! ([`finish`]) before anything reads the store: when it is opened, when a load starts
//! and before any other batch. Writing them again is harmless: they are the values the
//! batch gave. The load's end ([`end`]) removes the marker, then the file.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use crate::keys;
use crate::kv::StoreError;
use crate::kv::{self, Commit, Kv};

/// Records to an atomic write of sled's in a step. On the bench's log, 1,024 loaded as
/// fast but wrote more bytes; 16,384 wrote a little less but took longer.
pub(crate) const STEP_RECORDS: usize = 4096;

/// The first bytes of a redo file: what it is, and its layout's version.
const MAGIC: &[u8; 16] = b"racing-steps-v1\n";

/// The name of the redo file of the batch that reaches `checkpoint`.
fn file_of(dir: &Path, checkpoint: u64) -> PathBuf {
    dir.join(format!("load-steps-{checkpoint}"))
}

/// The redo files in `dir`, with their checkpoints.
fn files_in(dir: &Path) -> Result<Vec<(u64, PathBuf)>, StoreError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(kv::io_error)? {
        let entry = entry.map_err(kv::io_error)?;
        let name = entry.file_name();
        let seq = name
            .to_str()
            .and_then(|n| n.strip_prefix("load-steps-"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(seq) = seq {
            files.push((seq, entry.path()));
        }
    }
    Ok(files)
}

/// Writes `commit`, whose checkpoint is `checkpoint`, in steps ([the module](self)).
pub(crate) fn write(
    kv: &Kv,
    dir: &Path,
    checkpoint: u64,
    commit: Commit,
) -> Result<(), StoreError> {
    let body = begin(kv, dir, checkpoint, commit)?;
    kv.apply_in_steps(body, STEP_RECORDS)?;
    kv.flush_now()?;
    remove_files(dir, |seq| seq != checkpoint)
}

/// The first two steps of [`write`]: the redo file saved, then the checkpoint and the
/// marker written. Returns the records left to write.
fn begin(kv: &Kv, dir: &Path, checkpoint: u64, commit: Commit) -> Result<Commit, StoreError> {
    let (mut head, body) = commit.split(|key| key == keys::CHECKPOINT);
    save(&file_of(dir, checkpoint), checkpoint, &body)?;
    head.put(keys::LOAD_STEPS, checkpoint.to_be_bytes());
    kv.apply(head)?;
    Ok(body)
}

/// Writes again the records of the batch whose steps a crash may have cut short, if the
/// marker names one ([the module](self)).
pub(crate) fn finish(kv: &Kv, dir: &Path) -> Result<(), StoreError> {
    let Some(marker) = kv.get(keys::LOAD_STEPS)? else {
        return Ok(());
    };
    let checkpoint = <[u8; 8]>::try_from(marker.as_ref())
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::Corrupt("the marker of a load's steps".into()))?;
    let body = load(&file_of(dir, checkpoint), checkpoint)?;
    kv.apply_in_steps(body, STEP_RECORDS)?;
    kv.flush_now()?;
    end(kv, dir)
}

/// What opening a store does: [`finish`], and any redo file that a crash after the marker's
/// removal left removed.
pub(crate) fn open(kv: &Kv, dir: &Path) -> Result<(), StoreError> {
    finish(kv, dir)?;
    remove_files(dir, |_| true)
}

/// Ends a load's steps: the marker removed and flushed, then every redo file.
pub(crate) fn end(kv: &Kv, dir: &Path) -> Result<(), StoreError> {
    if kv.get(keys::LOAD_STEPS)?.is_some() {
        let mut commit = Commit::default();
        commit.remove(keys::LOAD_STEPS);
        kv.apply(commit)?;
        kv.flush_now()?;
    }
    remove_files(dir, |_| true)
}

/// Removes the redo files whose checkpoints `which` picks.
fn remove_files(dir: &Path, which: impl Fn(u64) -> bool) -> Result<(), StoreError> {
    for (seq, path) in files_in(dir)? {
        if which(seq) {
            std::fs::remove_file(&path).map_err(kv::io_error)?;
        }
    }
    Ok(())
}

/// Writes `body`'s records to `path`, synced: [`MAGIC`], then a zstd frame (level 1) of
/// the checkpoint (8 bytes, big-endian) and each record as its key's length (4 bytes,
/// big-endian), the key, a byte (1: a value follows, 0: the record is removed) and the
/// value's length and the value; then the XXH3-64 of what the frame holds (8 bytes,
/// big-endian). Compressed, the file costs a replay a fifth of the bytes it would.
fn save(path: &Path, checkpoint: u64, body: &Commit) -> Result<(), StoreError> {
    let mut file = BufWriter::with_capacity(1 << 20, File::create(path).map_err(kv::io_error)?);
    file.write_all(MAGIC).map_err(kv::io_error)?;
    let mut out = Hashed {
        out: zstd::stream::write::Encoder::new(file, 1).map_err(kv::io_error)?,
        hash: Xxh3::new(),
    };
    out.put(&checkpoint.to_be_bytes())?;
    for (key, value) in body.iter() {
        out.put(&len(key)?)?;
        out.put(key)?;
        match value {
            Some(value) => {
                out.put(&[1])?;
                out.put(&len(value)?)?;
                out.put(value)?;
            }
            None => out.put(&[0])?,
        }
    }
    let sum = out.hash.digest();
    let mut file = out.out.finish().map_err(kv::io_error)?;
    file.write_all(&sum.to_be_bytes()).map_err(kv::io_error)?;
    let file = file
        .into_inner()
        .map_err(|e| kv::io_error(e.into_error()))?;
    file.sync_all().map_err(kv::io_error)?;
    // The file's name, too, is on disk before the marker that names it.
    if let Some(parent) = path.parent() {
        File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(kv::io_error)?;
    }
    Ok(())
}

/// Reads back what [`save`] wrote for `checkpoint`.
fn load(path: &Path, checkpoint: u64) -> Result<Commit, StoreError> {
    let damaged = |what: &str| {
        StoreError::Corrupt(format!(
            "the redo file of a load's steps, {}: {what}",
            path.display()
        ))
    };
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| damaged(&e.to_string()))?;
    let (frame, sum) = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or_else(|| damaged("not a redo file"))?
        .split_last_chunk::<8>()
        .ok_or_else(|| damaged("too short"))?;
    let content = zstd::stream::decode_all(frame).map_err(|e| damaged(&e.to_string()))?;
    if xxhash_rust::xxh3::xxh3_64(&content) != u64::from_be_bytes(*sum) {
        return Err(damaged("its checksum does not match"));
    }
    let (seq, mut rest) = content
        .split_first_chunk::<8>()
        .ok_or_else(|| damaged("too short"))?;
    if u64::from_be_bytes(*seq) != checkpoint {
        return Err(damaged("of another batch"));
    }
    let mut body = Commit::default();
    let take = |rest: &mut &[u8]| -> Result<Vec<u8>, StoreError> {
        let (n, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| damaged("cut short"))?;
        let n = u32::from_be_bytes(*n) as usize;
        let (taken, tail) = tail
            .split_at_checked(n)
            .ok_or_else(|| damaged("cut short"))?;
        *rest = tail;
        Ok(taken.to_vec())
    };
    while !rest.is_empty() {
        let key = take(&mut rest)?;
        let (&kind, tail) = rest.split_first().ok_or_else(|| damaged("cut short"))?;
        rest = tail;
        match kind {
            1 => body.put(key, take(&mut rest)?),
            0 => body.remove(key),
            _ => return Err(damaged("a record of unknown kind")),
        }
    }
    Ok(body)
}

/// The length of a key or value, as the redo file writes it.
fn len(bytes: &[u8]) -> Result<[u8; 4], StoreError> {
    u32::try_from(bytes.len())
        .map(u32::to_be_bytes)
        .map_err(|_| StoreError::Corrupt("a record over 4 GiB".into()))
}

/// A writer that hashes what it writes.
struct Hashed<W> {
    out: W,
    hash: Xxh3,
}

impl<W: Write> Hashed<W> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.hash.update(bytes);
        self.out.write_all(bytes).map_err(kv::io_error)
    }
}

#[cfg(test)]
mod tests;
