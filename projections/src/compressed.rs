//! Values compressed in the application (zstd at level 1), one value at a time: the odds
//! journal's chunks (`journal.rs`) and the records of a batch's entries
//! (`subject_entries.rs`), packed by the modules that write them, and the records of the
//! kinds `keys::KINDS` marks, packed by the store as a commit hands them to sled and
//! unpacked as they are read (`kv.rs`). sled's own compression would compress a whole page
//! again on every rewrite of a leaf.
//!
//! A packed value is a zstd frame that says its size. A value left as it was (too short to
//! gain, or no shorter packed) starts with a stream sequence, big-endian, whose first byte
//! is 0 for any sequence below 2^56, or (a record the store packs) with `{`, `[` or a
//! document's quoted `ETag`: never the first byte of a frame's magic number (0x28). Either
//! is read back.

use std::borrow::Cow;
use std::cell::RefCell;

/// A packed value that does not unpack: damaged.
#[derive(Debug)]
pub(crate) struct Damaged(pub(crate) String);

/// zstd's fastest level but one: chunks of JSON moves pack to a fifth of their size or
/// less; higher levels pack a few percent more for several times the time.
const LEVEL: i32 = 1;

/// Values shorter than this are kept as they are: the frame's own bytes (about 10) and the
/// call's time would cost more than the little that so few bytes gain.
const SHORTEST: usize = 256;

/// The first bytes of a zstd frame: its magic number, little-endian.
const FRAME: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The most bytes a packed value may say it holds: a value this crate packs is a chunk, a
/// batch's record of one subject or a record, far less; a frame that says more is damaged.
const LONGEST: u64 = 256 << 20;

thread_local! {
    // A context holds the tables of its level: made once a thread, not once a value.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// `value` as it is to be stored: packed where that makes it shorter.
pub(crate) fn pack(value: Vec<u8>) -> Vec<u8> {
    packed(&value).unwrap_or(value)
}

/// `value` packed, where that makes it shorter; `None` where it is to be kept as it is.
pub(crate) fn packed(value: &[u8]) -> Option<Vec<u8>> {
    if value.len() < SHORTEST {
        return None;
    }
    let packed = COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        let compressor = match c.as_mut() {
            Some(compressor) => compressor,
            None => c.insert(zstd::bulk::Compressor::new(LEVEL).ok()?),
        };
        compressor.compress(value).ok()
    });
    // A value that does not pack (or a context that could not be made) is kept as it is.
    packed.filter(|packed| packed.len() < value.len())
}

/// Whether a stored value is packed: it starts as a zstd frame does.
pub(crate) fn is_frame(stored: &[u8]) -> bool {
    stored.starts_with(&FRAME)
}

/// A stored value as it was before [`pack`]: borrowed where it was kept as it was.
pub(crate) fn unpack(stored: &[u8]) -> Result<Cow<'_, [u8]>, Damaged> {
    if !is_frame(stored) {
        return Ok(Cow::Borrowed(stored));
    }
    let damaged = Damaged;
    let size = zstd::zstd_safe::get_frame_content_size(stored)
        .ok()
        .flatten()
        .filter(|size| *size <= LONGEST)
        .ok_or_else(|| damaged("no size, or too large".into()))?;
    // (At most LONGEST, which fits a usize.)
    let size = size as usize;
    DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        let decompressor = match d.as_mut() {
            Some(decompressor) => decompressor,
            None => d.insert(zstd::bulk::Decompressor::new().map_err(|e| damaged(e.to_string()))?),
        };
        let value = decompressor
            .decompress(stored, size)
            .map_err(|e| damaged(e.to_string()))?;
        if value.len() != size {
            return Err(damaged("shorter than it says".into()));
        }
        Ok(Cow::Owned(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_back_as_it_was_packed_or_not() {
        let short = vec![0u8; 10];
        assert_eq!(pack(short.clone()), short, "too short to pack");
        let json: Vec<u8> = (0..200)
            .flat_map(|i| format!("{{\"horse_no\":\"H{i:03}\",\"win_odds\":3.5}}").into_bytes())
            .collect();
        let packed = pack(json.clone());
        assert!(
            packed.len() * 3 < json.len(),
            "{} of {}",
            packed.len(),
            json.len()
        );
        assert_eq!(unpack(&packed).expect("unpacks").as_ref(), json.as_slice());
        assert!(
            matches!(unpack(&json), Ok(Cow::Borrowed(_))),
            "kept as it was"
        );
        // Cut short, a packed value is damaged, not shorter.
        for cut in [4, packed.len() / 2, packed.len() - 1] {
            assert!(
                matches!(unpack(&packed[..cut]), Err(Damaged(_))),
                "cut at {cut}"
            );
        }
    }
}
