//! Documents assembled at read, kept in memory by their key with the head they were
//! assembled under, so that a document read again costs the read of its head: a record
//! of a jockey or a trainer is rendered from tens of records (`people/`), several times
//! the cost of a document stored whole.
//!
//! An entry is good while the head stored under its key is the one it was assembled
//! under: a batch that changes what a document answers writes its head, with the
//! document's new `ETag` and sequence, in the same atomic write as the records it is
//! assembled from. So nothing here is ever stale; what it holds is bounded in bytes.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::docs::HEAD_LEN;
use crate::kv::Bytes;

/// Most bytes of documents kept: a jockey's record of forty seasons is 6 KB, so about
/// seven hundred of them.
const BUDGET: usize = 4 << 20;

/// Documents assembled at read, by key ([`Assembled::get`]).
#[derive(Default)]
pub(crate) struct Assembled {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// Each document as stored whole (its head, then its bytes), by key.
    docs: HashMap<Vec<u8>, Bytes>,
    /// Their bytes.
    bytes: usize,
}

impl Assembled {
    /// The document under `key` as assembled before, if it was assembled under `head`
    /// (the head stored now).
    pub(crate) fn get(&self, key: &[u8], head: &[u8]) -> Option<Bytes> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let doc = held.docs.get(key)?;
        (head.len() == HEAD_LEN && doc.get(..HEAD_LEN) == Some(head)).then(|| doc.clone())
    }

    /// Keeps `doc`, assembled under the head it starts with, in place of any document
    /// kept under `key`; others are let go, any of them, while the documents kept are
    /// over the budget.
    pub(crate) fn put(&self, key: Vec<u8>, doc: Bytes) {
        if doc.len() > BUDGET {
            return;
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.bytes += key.len() + doc.len();
        if let Some(old) = held.docs.insert(key.clone(), doc) {
            held.bytes -= key.len() + old.len();
        }
        while held.bytes > BUDGET {
            let Some(other) = held.docs.keys().find(|k| **k != key).cloned() else {
                break;
            };
            if let Some(old) = held.docs.remove(&other) {
                held.bytes -= other.len() + old.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(tag: u8, body: &[u8]) -> Bytes {
        let mut stored = vec![tag; HEAD_LEN];
        stored.extend_from_slice(body);
        stored.into()
    }

    #[test]
    fn a_document_is_served_only_under_the_head_it_was_assembled_under() {
        let kept = Assembled::default();
        kept.put(b"k".to_vec(), doc(1, b"one"));
        let hit = kept.get(b"k", &[1; HEAD_LEN]).expect("kept");
        assert_eq!(&hit[HEAD_LEN..], b"one");
        assert!(kept.get(b"k", &[2; HEAD_LEN]).is_none(), "another head");
        assert!(kept.get(b"other", &[1; HEAD_LEN]).is_none());
        kept.put(b"k".to_vec(), doc(2, b"two"));
        assert!(kept.get(b"k", &[1; HEAD_LEN]).is_none());
        let hit = kept.get(b"k", &[2; HEAD_LEN]).expect("kept");
        assert_eq!(&hit[HEAD_LEN..], b"two");
    }

    #[test]
    fn what_is_kept_stays_within_the_budget() {
        let kept = Assembled::default();
        let body = vec![b'x'; 64 * 1024];
        for i in 0..200u32 {
            kept.put(i.to_be_bytes().to_vec(), doc(1, &body));
            let held = kept.held.lock().expect("lock");
            assert!(held.bytes <= BUDGET, "{} bytes kept", held.bytes);
            let counted: usize = held.docs.iter().map(|(k, v)| k.len() + v.len()).sum();
            assert_eq!(held.bytes, counted);
        }
        // The last one put is kept.
        assert!(kept.get(&199u32.to_be_bytes(), &[1; HEAD_LEN]).is_some());
    }
}
