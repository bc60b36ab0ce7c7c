//! A snapshot of the read models: every record of a store in key order, as it stood at
//! one checkpoint, in one compressed file that a new replica loads instead of replaying
//! the whole log.
//!
//! The file is a zstd stream of: a magic line, a head (JSON: the layout version, the
//! checkpoint, the stream's identity), the records (each a key's and a value's length,
//! then both), an end mark and the count of records. Its SHA-256 digest, of the file's
//! bytes as written, is returned beside it: whoever keeps the file keeps the digest
//! apart from it, and a load is given the digest it expects and checks it before it
//! hands over the store.
//!
//! A snapshot is written from a live store without stopping its writes: it reads a
//! frozen view ([`crate::kv::Kv::freeze`]), so its records are all of one moment,
//! between two commits.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::keys;
use crate::kv::Bytes;
use crate::kv::StoreError;
use crate::schema::{SCHEMA, SCHEMA_KEY};
use crate::store::{Options, Store};

/// The first bytes of a snapshot once decompressed, with the format's version.
const MAGIC: &[u8] = b"racing-snapshot 1\n";
/// The length that marks the end of the records, where a key's would be.
const END: u32 = u32::MAX;
/// Records read from the frozen view at a time: writes wait while a part is read.
const PART: usize = 2048;
/// zstd's level: a snapshot is written once and read by every replica that starts.
const LEVEL: i32 = 3;
/// The longest a key or a value may be: sled keeps nothing near it, so a longer length
/// is a damaged file rather than an allocation to make.
const MOST_BYTES: u32 = 1 << 30;

/// What a snapshot says of itself, first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotHead {
    /// The store's layout version (`Store`'s schema): a store of another one is rebuilt.
    pub layout: String,
    /// The last stream sequence whose effects its records hold.
    pub checkpoint: u64,
    /// The stream the records were built from (its name and creation time).
    pub stream: String,
}

/// A snapshot as written or read through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// Its head.
    pub head: SnapshotHead,
    /// The records it holds.
    pub records: u64,
    /// The bytes of the records, keys and values, uncompressed.
    pub record_bytes: u64,
    /// The bytes of the file.
    pub bytes: u64,
    /// The SHA-256 of the file, in hex.
    pub digest: String,
}

/// Why a snapshot was refused or could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading or writing the file failed.
    #[error("snapshot file: {0}")]
    Io(#[from] io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The file's digest is not the one expected: it was damaged or changed.
    #[error("its digest is {found}, not the {expected} recorded for it")]
    Digest {
        /// The file's.
        found: String,
        /// The one recorded.
        expected: String,
    },
    /// The file is not a whole snapshot of this format.
    #[error("damaged: {0}")]
    Damaged(String),
    /// Its records are of another layout than this version's.
    #[error("of layout {found}, where this version's is {expected}")]
    Layout {
        /// The snapshot's.
        found: String,
        /// This version's.
        expected: String,
    },
    /// Its records were built from another stream.
    #[error("built from stream {found}, not {expected}")]
    Stream {
        /// The snapshot's.
        found: String,
        /// The one the service reads.
        expected: String,
    },
    /// Another snapshot of the same store is being written.
    #[error("another snapshot of this store is being written")]
    Busy,
}

/// What a snapshot must be to be loaded.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// Its file's SHA-256, in hex.
    pub digest: &'a str,
    /// The stream the service reads.
    pub stream: &'a str,
}

/// This version's layout, as a snapshot's head names it.
pub fn layout() -> &'static str {
    std::str::from_utf8(SCHEMA).unwrap_or("?")
}

impl Store {
    /// Writes a snapshot of every record to `file`, as the store stood when it started:
    /// the store's writes go on meanwhile. `go_on` is asked between parts; the write
    /// stops with an error once it says no.
    pub fn write_snapshot(
        &self,
        file: &Path,
        go_on: impl Fn() -> bool,
    ) -> Result<SnapshotSummary, SnapshotError> {
        let view = self.kv.freeze().ok_or(SnapshotError::Busy)?;
        let head = head_of(&view)?;
        let out = Hashing::new(BufWriter::new(std::fs::File::create(file)?));
        let mut z = zstd::Encoder::new(out, LEVEL)?;
        z.write_all(MAGIC)?;
        let head_json = serde_json::to_vec(&head).map_err(io::Error::other)?;
        z.write_all(&(head_json.len() as u32).to_be_bytes())?;
        z.write_all(&head_json)?;
        let (records, record_bytes) = read_through(view, go_on, |key, value| {
            z.write_all(&(key.len() as u32).to_be_bytes())?;
            z.write_all(&(value.len() as u32).to_be_bytes())?;
            z.write_all(key)?;
            z.write_all(value)?;
            Ok(())
        })?;
        z.write_all(&END.to_be_bytes())?;
        z.write_all(&records.to_be_bytes())?;
        let mut out = z.finish()?;
        out.flush()?;
        out.inner.get_ref().sync_all()?;
        let (bytes, digest) = out.finish();
        Ok(SnapshotSummary {
            head,
            records,
            record_bytes,
            bytes,
            digest,
        })
    }
}

/// A store copied whole ([`Store::copy_to`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// What a snapshot of the store at that moment would say of itself.
    pub head: SnapshotHead,
    /// The records read from the store (the copy may hold fewer: each run of a source
    /// record's versions merged into one).
    pub records: u64,
    /// The bytes of the records read, keys and values, as stored.
    pub record_bytes: u64,
}

impl Store {
    /// Copies every record into a new store at `dir` (which must not hold one), as the
    /// store stood when the copy started: its writes go on meanwhile, as for a snapshot.
    /// sled rewrites pages and gives no room back, so a store long in use grows to several
    /// times its records on disk; its copy holds each run of a source record's versions as
    /// one record (`history/merge.rs`), and is written a group of records at a time out of
    /// key order, which leaves sled less to hold (`filling.rs`). `go_on` is asked between
    /// parts; the copy stops with an error once it says no, and a copy cut short is
    /// removed whole by whoever made its directory. The copy is flushed before it is
    /// returned.
    pub fn copy_to(
        &self,
        dir: &Path,
        options: Options,
        go_on: impl Fn() -> bool,
    ) -> Result<(Store, Copied), SnapshotError> {
        let view = self.kv.freeze().ok_or(SnapshotError::Busy)?;
        let head = head_of(&view)?;
        let copy = empty_store(dir, options)?;
        let mut filling = crate::filling::Filling::new(&copy.kv);
        let mut merging = crate::history::merge::Merging::new(|key: &[u8], value: &[u8]| {
            Ok::<_, SnapshotError>(filling.push(key, value)?)
        });
        let (records, record_bytes) =
            read_through(view, go_on, |key, value| merging.push(key, value))?;
        merging.finish()?;
        filling.finish()?;
        copy.kv.flush_now()?;
        let copied = Copied {
            head,
            records,
            record_bytes,
        };
        Ok((copy, copied))
    }

    /// How many records the store holds and their bytes, keys and values as stored (what
    /// a copy of it would write), read through; its writes go on meanwhile.
    pub fn record_bytes(&self) -> Result<(u64, u64), StoreError> {
        self.kv.stored().try_fold((0, 0), |(records, bytes), item| {
            let (key, value) = item?;
            Ok((records + 1, bytes + (key.len() + value.len()) as u64))
        })
    }
}

/// Hands each record of `view` to `each`, in key order, asking `go_on` between parts (an
/// error once it says no); the view is let go at the end. Returns how many records there
/// were and their bytes, keys and values.
fn read_through(
    mut view: crate::kv::FrozenView,
    go_on: impl Fn() -> bool,
    mut each: impl FnMut(&[u8], &[u8]) -> Result<(), SnapshotError>,
) -> Result<(u64, u64), SnapshotError> {
    let (mut records, mut record_bytes) = (0u64, 0u64);
    loop {
        if !go_on() {
            return Err(SnapshotError::Damaged("stopped before its end".into()));
        }
        let part = view.next_part(PART)?;
        if part.is_empty() {
            return Ok((records, record_bytes));
        }
        for (key, value) in part {
            each(&key, &value)?;
            records += 1;
            record_bytes += (key.len() + value.len()) as u64;
        }
    }
}

/// What a snapshot of the store `view` holds says of itself; only before the view's
/// first part is read.
fn head_of(view: &crate::kv::FrozenView) -> Result<SnapshotHead, StoreError> {
    Ok(SnapshotHead {
        layout: layout().to_owned(),
        checkpoint: view
            .get(keys::CHECKPOINT)?
            .map(|v| crate::store::decode_u64(&v))
            .transpose()?
            .unwrap_or(0),
        stream: view
            .get(keys::STREAM)?
            .map(|v| String::from_utf8_lossy(&v).into_owned())
            .unwrap_or_default(),
    })
}

/// A new store at `dir`, refused where `dir` already holds read models.
fn empty_store(dir: &Path, options: Options) -> Result<Store, SnapshotError> {
    let store = Store::open_with(dir, options)?;
    if store
        .kv
        .all()
        .next()
        .is_some_and(|r| r.is_ok_and(|(k, _)| k.as_ref() != SCHEMA_KEY))
    {
        return Err(SnapshotError::Damaged(format!(
            "{} already holds read models",
            dir.display()
        )));
    }
    Ok(store)
}

/// Reads the snapshot `file` through without loading it: its digest, its format, its
/// head and the count of its records (`racing snapshot verify`).
pub fn verify_snapshot(
    file: &Path,
    expected_digest: &str,
) -> Result<SnapshotSummary, SnapshotError> {
    check_digest(file, expected_digest)?;
    read(file, |_| Ok(()))
}

/// Loads the snapshot `file` into a new store at `dir` (which must not hold one), as a
/// bulk load. The file's digest is checked first, and its layout and stream before a
/// record is written: a refused snapshot leaves nothing behind but `dir`, which the
/// caller removes. The store is flushed before it is returned.
pub fn load_snapshot(
    file: &Path,
    expected: Expected<'_>,
    dir: &Path,
    options: Options,
) -> Result<(Store, SnapshotSummary), SnapshotError> {
    check_digest(file, expected.digest)?;
    let head = read_head(&mut decoder(file)?)?;
    if head.stream != expected.stream {
        return Err(SnapshotError::Stream {
            found: head.stream,
            expected: expected.stream.to_owned(),
        });
    }
    let store = empty_store(dir, options)?;
    // An insert a record (the fastest way into sled there is: the bench's store loads so
    // in well under the time it takes in batches), a group of a few thousand at a time out
    // of key order, as a compaction's copy is written (`filling.rs`). Nothing reads the store before the load
    // ends, and a load cut short is removed whole by whoever made its directory.
    let mut filling = crate::filling::Filling::new(&store.kv);
    let summary = read(file, |(key, value)| filling.push(key, value))?;
    filling.finish()?;
    if store.checkpoint()? != summary.head.checkpoint {
        return Err(SnapshotError::Damaged(format!(
            "its head says checkpoint {}, its records {}",
            summary.head.checkpoint,
            store.checkpoint()?
        )));
    }
    store.kv.flush_now()?;
    Ok((store, summary))
}

/// Reads a snapshot's head alone.
pub fn snapshot_head(file: &Path) -> Result<SnapshotHead, SnapshotError> {
    read_head(&mut decoder(file)?)
}

fn check_digest(file: &Path, expected: &str) -> Result<(), SnapshotError> {
    let mut hash = Sha256::new();
    let mut f = BufReader::new(std::fs::File::open(file)?);
    io::copy(&mut f, &mut hash)?;
    let found = hex(&hash.finalize());
    if !found.eq_ignore_ascii_case(expected) {
        return Err(SnapshotError::Digest {
            found,
            expected: expected.to_owned(),
        });
    }
    Ok(())
}

fn decoder(file: &Path) -> Result<impl Read, SnapshotError> {
    let f = BufReader::new(std::fs::File::open(file)?);
    Ok(BufReader::new(zstd::Decoder::with_buffer(f)?))
}

fn read_head(r: &mut impl Read) -> Result<SnapshotHead, SnapshotError> {
    let mut magic = vec![0; MAGIC.len()];
    r.read_exact(&mut magic).map_err(damaged)?;
    if magic != MAGIC {
        return Err(SnapshotError::Damaged(
            "not a snapshot of this format".into(),
        ));
    }
    let len = read_u32(r)?;
    if len > MOST_BYTES {
        return Err(SnapshotError::Damaged("its head's length".into()));
    }
    let mut json = vec![0; len as usize];
    r.read_exact(&mut json).map_err(damaged)?;
    let head: SnapshotHead = serde_json::from_slice(&json)
        .map_err(|e| SnapshotError::Damaged(format!("its head: {e}")))?;
    if head.layout != layout() {
        return Err(SnapshotError::Layout {
            found: head.layout,
            expected: layout().to_owned(),
        });
    }
    Ok(head)
}

/// Reads the snapshot `file` through, handing each record to `each` in order; checks
/// that keys ascend, that the end mark and count are there, and that nothing follows.
fn read(
    file: &Path,
    mut each: impl FnMut((&[u8], &[u8])) -> Result<(), StoreError>,
) -> Result<SnapshotSummary, SnapshotError> {
    let bytes = std::fs::metadata(file)?.len();
    let mut r = decoder(file)?;
    let head = read_head(&mut r)?;
    let (mut records, mut record_bytes) = (0u64, 0u64);
    let mut last: Option<Bytes> = None;
    let (mut key, mut value) = (Vec::new(), Vec::new());
    loop {
        let key_len = read_u32(&mut r)?;
        if key_len == END {
            break;
        }
        let value_len = read_u32(&mut r)?;
        if key_len > MOST_BYTES || value_len > MOST_BYTES {
            return Err(SnapshotError::Damaged(format!("record {records}'s length")));
        }
        key.resize(key_len as usize, 0);
        value.resize(value_len as usize, 0);
        r.read_exact(&mut key).map_err(damaged)?;
        r.read_exact(&mut value).map_err(damaged)?;
        if last.as_deref().is_some_and(|last| last >= key.as_slice()) {
            return Err(SnapshotError::Damaged(format!(
                "record {records} out of order"
            )));
        }
        each((&key, &value))?;
        last = Some(key.as_slice().into());
        records += 1;
        record_bytes += u64::from(key_len) + u64::from(value_len);
    }
    let mut count = [0; 8];
    r.read_exact(&mut count).map_err(damaged)?;
    if u64::from_be_bytes(count) != records {
        return Err(SnapshotError::Damaged(format!(
            "it counts {} records and holds {records}",
            u64::from_be_bytes(count)
        )));
    }
    if r.read(&mut [0])? != 0 {
        return Err(SnapshotError::Damaged("bytes after its end".into()));
    }
    Ok(SnapshotSummary {
        head,
        records,
        record_bytes,
        bytes,
        digest: String::new(),
    })
}

fn read_u32(r: &mut impl Read) -> Result<u32, SnapshotError> {
    let mut b = [0; 4];
    r.read_exact(&mut b).map_err(damaged)?;
    Ok(u32::from_be_bytes(b))
}

/// A file that ends early is damaged, not a failing disk.
fn damaged(e: io::Error) -> SnapshotError {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => SnapshotError::Damaged("it ends early".into()),
        _ => SnapshotError::Io(e),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A writer that hashes and counts what goes through it.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
    bytes: u64,
}

impl<W: Write> Hashing<W> {
    fn new(inner: W) -> Hashing<W> {
        Hashing {
            inner,
            hash: Sha256::new(),
            bytes: 0,
        }
    }

    fn finish(self) -> (u64, String) {
        (self.bytes, hex(&self.hash.finalize()))
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests;
