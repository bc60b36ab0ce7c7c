//! A document as JSON bytes, or as the hash of those bytes.

use std::io::{BufWriter, Write};

use serde::Serialize;
use xxhash_rust::xxh3::Xxh3;

pub(crate) fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    // The documents are strings, integers and finite floats: serialising cannot fail.
    serde_json::to_vec(v).unwrap_or_default()
}

/// A JSON object written field by field, as serde_json writes a struct: `{`, each field's
/// name and value, comma-separated, then `}` ([`Fields::end`]). For the documents written
/// at every price move, where the derived `Serialize` escapes every field's name at each
/// write; their tests compare the bytes with the derived `Serialize`'s.
pub(crate) struct Fields<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Fields<'a> {
        out.push(b'{');
        Fields { out, first: true }
    }

    /// Starts the field `name` (a name that needs no escaping): its value is written to
    /// what this returns.
    pub(crate) fn field(&mut self, name: &str) -> &mut Vec<u8> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    pub(crate) fn end(self) {
        self.out.push(b'}');
    }
}

/// Appends `items` as serde_json writes a sequence: `[`, each written by `put`,
/// comma-separated, then `]`.
pub(crate) fn put_list<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    mut put: impl FnMut(&mut Vec<u8>, T),
) {
    out.push(b'[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put(out, item);
    }
    out.push(b']');
}

/// Appends the strings of `items` as serde_json writes a sequence of them.
pub(crate) fn put_strs<'s>(out: &mut Vec<u8>, items: impl IntoIterator<Item = &'s str>) {
    put_list(out, items, put_str);
}

/// Appends `s` as serde_json writes a string: quoted, with `"`, `\\` and the control
/// characters escaped (a string with none, most of them, copied as it is).
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Writing to a vector cannot fail, nor can serialising a string.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// Appends `s` as serde_json writes an `Option<&str>`: `null` for none.
pub(crate) fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => put_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// Appends `n` as serde_json writes an integer.
pub(crate) fn put_u64(out: &mut Vec<u8>, n: u64) {
    // Writing to a vector cannot fail, nor can serialising an integer.
    let _ = serde_json::to_writer(&mut *out, &n);
}

/// Appends `v` as serde_json writes an `f64` (`null` where it is not finite).
pub(crate) fn put_f64(out: &mut Vec<u8>, v: f64) {
    // Writing to a vector cannot fail, nor can serialising a float.
    let _ = serde_json::to_writer(&mut *out, &v);
}

/// The 128-bit xxh3 of `to_json(v)`, hashed as serde writes it ([`hash_into`]).
#[cfg(test)]
fn hash_json<T: Serialize>(v: &T) -> u128 {
    let mut h = Xxh3::new();
    hash_into(&mut h, v);
    h.digest128()
}

/// Hands `h` the bytes of `to_json(v)` as serde writes them: no document's bytes are
/// gathered, copied or freed. serde writes a document in pieces of a few bytes, and a
/// part it holds as JSON (a `RawValue`) whole; the buffer hands the hash the small pieces
/// a KiB at a time, and a larger part straight on.
pub(crate) fn hash_into<T: Serialize>(h: &mut Xxh3, v: &T) {
    let mut out = BufWriter::with_capacity(1024, Hashing(h));
    // Writing to the hash cannot fail, nor can serialising a document (`to_json`).
    let _ = serde_json::to_writer(&mut out, v);
    let _ = out.flush();
}

/// A writer that hashes what it is given.
struct Hashing<'a>(&'a mut Xxh3);

impl Write for Hashing<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    #[test]
    fn a_document_hashes_as_its_bytes_do() {
        // Small pieces, a part larger than the buffer, escapes, and one just at its size.
        let big = format!("[{}]", vec!["\"runner\""; 4_000].join(","));
        let at_size = format!("\"{}\"", "x".repeat(1024 - 2));
        for part in [big.as_str(), at_size.as_str(), "{}", "[]"] {
            let raw = RawValue::from_string(part.to_owned()).expect("json");
            let doc = serde_json::json!({"date": "2026-11-01", "venue": "Sha \"Tin\"\n"});
            let whole = (&doc, &raw, vec![&raw, &raw], 7u8, None::<&str>);
            assert_eq!(
                hash_json(&whole),
                xxhash_rust::xxh3::xxh3_128(&to_json(&whole)),
                "a part of {} bytes",
                part.len()
            );
        }
    }
}
