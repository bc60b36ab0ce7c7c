//! A key as the service holds it: its SHA-256 digest, never the key itself, bytes as hex,
//! and the stable id the digest gives a key.

use sha2::{Digest, Sha256};

/// The stable identity of a key for per-key limits and usage: the first 8 bytes of its
/// hash, the same on every replica. Never the key itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId(pub u64);

/// SHA-256 of a key.
pub fn hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Bytes as lower-case hex, as key records and the form secret store them.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// 32 bytes back from 64 hex digits; `None` for anything else.
pub fn unhex(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

pub(super) fn key_id(hash: &[u8; 32]) -> KeyId {
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    KeyId(u64::from_be_bytes(first))
}
