//! A document as JSON bytes.

use serde::Serialize;

pub(crate) fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    // The documents are strings, integers and finite floats: serialising cannot fail.
    serde_json::to_vec(v).unwrap_or_default()
}
