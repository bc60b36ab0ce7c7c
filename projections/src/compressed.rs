//! Values compressed in the application (zstd at level 1), one value at a time: the records
//! of versions, packed by `history/packing.rs` against the value after them or alone, and
//! the records of the kinds `keys::KINDS` marks (the odds journal's chunks among them),
//! each against its kind's dictionary (`dictionaries.rs`), packed by the store as a commit
//! hands them to sled and unpacked as they are read (`kv.rs`). sled's own compression would
//! compress a whole page again on every rewrite of a leaf.
//!
//! A packed value is a zstd frame that says its size. A value left as it was (too short to
//! gain, or no shorter packed) starts with a stream sequence or a count, big-endian, whose
//! first byte is 0 for any below 2^56 (2^24 for a count), with `{`, `[` or a document's
//! quoted `ETag`, or with a part's length (`encoding.rs`) and a date's first digit (a
//! person's day of rides): never the first bytes of a frame's magic number. Either is read
//! back.
//! (The store looks for a frame only in the records of the kinds it packs: a record of
//! random bytes, such as a chunk of event ids, may start as one does.)

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

/// What a value is packed with: a dictionary in zstd's own format (`dictionaries.rs`),
/// its entropy tables, which a frame then need not build, and text like the values',
/// which zstd finds their repeats in. A short value repeats little of itself, so that
/// alone it packs poorly; against a dictionary that holds its field names it packs as a
/// long one does. The dictionary a value was packed with is the one it is unpacked with:
/// it is part of the store's layout, and a change to one is a new `SCHEMA` (`schema.rs`).
pub type Dictionary = &'static [u8];

/// No dictionary: the tests' values packed alone.
#[cfg(test)]
pub const ALONE: Dictionary = b"";

/// One thread's contexts, by dictionary: each holds the tables of its level and its
/// dictionary, made once a thread, not once a value.
struct Contexts<C> {
    by_dictionary: Vec<(Dictionary, C)>,
}

impl<C> Contexts<C> {
    const fn new() -> Self {
        Contexts {
            by_dictionary: Vec::new(),
        }
    }

    /// The context of `dictionary`, made by `make` on first use. Found by its address, else
    /// by its bytes: a constant's bytes need not have one address wherever it is used, and
    /// a dictionary compared whole at each value (16 KiB) would cost as much as packing a
    /// short value.
    fn of(&mut self, dictionary: Dictionary, make: impl FnOnce() -> Option<C>) -> Option<&mut C> {
        let contexts = &self.by_dictionary;
        let at = (contexts
            .iter()
            .position(|(d, _)| std::ptr::eq(*d, dictionary)))
        .or_else(|| contexts.iter().position(|(d, _)| *d == dictionary));
        let at = match at {
            Some(at) => at,
            None => {
                self.by_dictionary.push((dictionary, make()?));
                self.by_dictionary.len() - 1
            }
        };
        Some(&mut self.by_dictionary[at].1)
    }
}

thread_local! {
    static COMPRESSORS: RefCell<Contexts<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(Contexts::new()) };
    static DECOMPRESSORS: RefCell<Contexts<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(Contexts::new()) };
}

/// `value` as it is to be stored: packed alone where that makes it shorter (the store
/// packs its records with [`packed`] where it commits them).
#[cfg(test)]
pub(crate) fn pack(value: Vec<u8>) -> Vec<u8> {
    packed(&value, ALONE).unwrap_or(value)
}

/// `value` packed with `dictionary`, where that makes it shorter; `None` where it is to be
/// kept as it is.
pub(crate) fn packed(value: &[u8], dictionary: Dictionary) -> Option<Vec<u8>> {
    if value.len() < SHORTEST {
        return None;
    }
    let packed = COMPRESSORS.with(|c| {
        let mut c = c.borrow_mut();
        let compressor = c.of(dictionary, || {
            zstd::bulk::Compressor::with_dictionary(LEVEL, dictionary).ok()
        })?;
        compressor.compress(value).ok()
    });
    // A value that does not pack (or a context that could not be made) is kept as it is.
    packed.filter(|packed| packed.len() < value.len())
}

thread_local! {
    /// One thread's contexts for values packed against another value ([`pack_against`]),
    /// which each job loads anew.
    static AGAINST: RefCell<Option<Against>> = const { RefCell::new(None) };
}

/// The first bytes of a zstd dictionary of zstd's own format (its magic number,
/// little-endian): a value that starts so would be read as one, not as text to refer to.
const DICTIONARY: [u8; 4] = [0x37, 0xa4, 0x30, 0xec];

/// `value` packed against `reference`, a value like it that the reader will hold when it
/// unpacks it ([`unpack_against`]): zstd finds `value`'s repeats of it, so a value that
/// differs from its reference in a few fields packs to little more than those fields.
/// With a checksum: unpacked against any other reference, it is damaged, not another
/// value. `None` where it is to be kept as it is (too short, or no shorter packed).
pub(crate) fn pack_against(value: &[u8], reference: &[u8]) -> Option<Vec<u8>> {
    if value.len() < SHORTEST {
        return None;
    }
    let reference = usable(reference);
    let packed = AGAINST.with(|a| {
        let mut a = a.borrow_mut();
        let (compressor, _) = against_contexts(&mut a)?;
        compressor.set_dictionary(LEVEL, reference).ok()?;
        compressor.compress(value).ok()
    });
    packed.filter(|packed| packed.len() < value.len())
}

/// A stored value as it was before [`pack_against`] packed it against `reference`:
/// borrowed where it was kept as it was.
pub(crate) fn unpack_against<'a>(
    stored: &'a [u8],
    reference: &[u8],
) -> Result<Cow<'a, [u8]>, Damaged> {
    if !is_frame(stored) {
        return Ok(Cow::Borrowed(stored));
    }
    let size = frame_size(stored)?;
    let reference = usable(reference);
    AGAINST.with(|a| {
        let mut a = a.borrow_mut();
        let (_, decompressor) = against_contexts(&mut a)
            .ok_or_else(|| Damaged("no context to unpack it with".into()))?;
        decompressor
            .set_dictionary(reference)
            .map_err(|e| Damaged(e.to_string()))?;
        let value = decompressor
            .decompress(stored, size)
            .map_err(|e| Damaged(format!("against its reference: {e}")))?;
        if value.len() != size {
            return Err(Damaged("shorter than it says".into()));
        }
        Ok(Cow::Owned(value))
    })
}

/// `reference` as zstd is to refer to it: as text, so none where zstd would read it as a
/// dictionary of its own format.
fn usable(reference: &[u8]) -> &[u8] {
    if reference.starts_with(&DICTIONARY) {
        &[]
    } else {
        reference
    }
}

/// A thread's contexts for [`pack_against`] and [`unpack_against`].
type Against = (
    zstd::bulk::Compressor<'static>,
    zstd::bulk::Decompressor<'static>,
);

/// The thread's contexts for [`pack_against`], made on first use: frames with a checksum.
fn against_contexts(held: &mut Option<Against>) -> Option<&mut Against> {
    if held.is_none() {
        let mut compressor = zstd::bulk::Compressor::new(LEVEL).ok()?;
        compressor.include_checksum(true).ok()?;
        *held = Some((compressor, zstd::bulk::Decompressor::new().ok()?));
    }
    held.as_mut()
}

/// The size a frame says it holds, at most [`LONGEST`].
fn frame_size(stored: &[u8]) -> Result<usize, Damaged> {
    let size = zstd::zstd_safe::get_frame_content_size(stored)
        .ok()
        .flatten()
        .filter(|size| *size <= LONGEST)
        .ok_or_else(|| Damaged("no size, or too large".into()))?;
    // (At most LONGEST, which fits a usize.)
    Ok(size as usize)
}

/// Whether a stored value is packed: it starts as a zstd frame does.
pub(crate) fn is_frame(stored: &[u8]) -> bool {
    stored.starts_with(&FRAME)
}

/// A stored value as it was before [`pack`]: borrowed where it was kept as it was.
#[cfg(test)]
pub(crate) fn unpack(stored: &[u8]) -> Result<Cow<'_, [u8]>, Damaged> {
    unpack_with(stored, ALONE)
}

/// A stored value as it was before it was packed with `dictionary` ([`packed`]):
/// borrowed where it was kept as it was.
pub(crate) fn unpack_with(stored: &[u8], dictionary: Dictionary) -> Result<Cow<'_, [u8]>, Damaged> {
    if !is_frame(stored) {
        return Ok(Cow::Borrowed(stored));
    }
    let damaged = Damaged;
    let size = frame_size(stored)?;
    DECOMPRESSORS.with(|d| {
        let mut d = d.borrow_mut();
        let decompressor = d
            .of(dictionary, || {
                zstd::bulk::Decompressor::with_dictionary(dictionary).ok()
            })
            .ok_or_else(|| damaged("no context to unpack it with".into()))?;
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

    #[test]
    fn a_value_packed_against_another_reads_back_only_against_it() {
        let runners = |last: &str| -> Vec<u8> {
            (0..30)
                .map(|i| format!("{{\"horse_no\":\"H{i:03}\",\"strike\":{i}.5}}"))
                .chain([last.to_owned()])
                .collect::<String>()
                .into_bytes()
        };
        let (before, after) = (runners("{\"a\":1}"), runners("{\"a\":2}"));
        let alone = packed(&before, ALONE).expect("packs alone");
        let against = pack_against(&before, &after).expect("packs against the other");
        assert!(
            against.len() * 2 < alone.len(),
            "{} against the other, {} alone",
            against.len(),
            alone.len()
        );
        let back = unpack_against(&against, &after).expect("unpacks");
        assert_eq!(back.as_ref(), before.as_slice());
        // Against another reference, or none, it is damaged, not another value.
        let other = String::from_utf8(after.clone())
            .expect("text")
            .replace("H00", "X00");
        assert!(unpack_against(&against, other.as_bytes()).is_err());
        assert!(unpack_against(&against, b"").is_err());
        // Against nothing, it packs as alone does and reads back so.
        let without = pack_against(&before, b"").expect("packs");
        assert_eq!(
            unpack_against(&without, b"").expect("unpacks").as_ref(),
            before.as_slice()
        );
        // A reference that zstd would take for a dictionary of its own is not used.
        let mut framed = DICTIONARY.to_vec();
        framed.extend_from_slice(&after);
        let against = pack_against(&before, &framed).expect("packs");
        assert_eq!(
            unpack_against(&against, &framed).expect("unpacks").as_ref(),
            before.as_slice()
        );
    }
}
