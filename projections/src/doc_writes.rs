//! How a read model writes the documents it renders: sealed with their `ETag` and the
//! sequence they reflect, not written again where they would answer the same, the one
//! without a venue as an alias of the venue's it copies, and those a retraction may have
//! left with nothing to show removed unless rendered again.

use std::collections::BTreeSet;

use crate::docs;
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::state::State;

/// Documents of one kind, by venue (`None`: the one that answers without a venue), each
/// as its bytes or, for one rendered when read, the tag its head holds ([`Body`]).
pub(crate) type ByVenue<D = Vec<u8>> = Vec<(Option<String>, D)>;

/// A document as a render hands it to be stored: its bytes, or, for a document rendered
/// when read ([`DocKey::rendered_when_read`]), the tag its head holds alone, which is all
/// the store keeps of it besides its sequence: a card's, the tag of its digest, worked out
/// without rendering it. Two bodies are equal where they answer the same.
pub(crate) trait Body: PartialEq {
    /// What the store keeps of the document under `key` at `seq`.
    fn sealed(&self, key: &[u8], seq: u64) -> Vec<u8>;
}

impl Body for Vec<u8> {
    fn sealed(&self, key: &[u8], seq: u64) -> Vec<u8> {
        match DocKey::parse(key) {
            Some(doc_key) => sealed(doc_key, self, seq),
            None => docs::seal(false, self, seq),
        }
    }
}

impl Body for docs::Tag {
    fn sealed(&self, key: &[u8], seq: u64) -> Vec<u8> {
        debug_assert!(
            DocKey::parse(key).is_some_and(|k| k.rendered_when_read()),
            "a document stored whole was given by its tag alone"
        );
        docs::tagged(self, seq)
    }
}

/// Stores a document with its `ETag`, made once here rather than on every GET, and `seq`,
/// the stream sequence it reflects; a document rendered the same as it is stored is not
/// written again (its sequence stays that of its last change), so that only what answers
/// differently is written, and counted as changed. Whether it was written. (A form is
/// stored otherwise: `forms.rs`.)
pub(crate) fn put_doc(
    s: &mut impl State,
    key: DocKey<'_>,
    doc: &[u8],
    seq: u64,
) -> Result<bool, StoreError> {
    put_sealed(s, key.key(), sealed(key, doc, seq))
}

/// What the store keeps of the document under `key`, `doc` rendered at `seq`: the head
/// alone for a document rendered when read, else the document sealed.
fn sealed(key: DocKey<'_>, doc: &[u8], seq: u64) -> Vec<u8> {
    if key.rendered_when_read() {
        docs::head(doc, seq)
    } else {
        docs::seal(false, doc, seq)
    }
}

/// Stores `sealed` (a document as [`docs::seal`] makes it) under `key` unless what is
/// stored there answers the same. Whether it was written.
pub(crate) fn put_sealed(
    s: &mut impl State,
    key: Vec<u8>,
    sealed: Vec<u8>,
) -> Result<bool, StoreError> {
    let same = s
        .get(&key)?
        .is_some_and(|stored| docs::same_answer(&stored, &sealed));
    if !same {
        s.put(key, sealed);
    }
    Ok(!same)
}

/// The keys a read model's documents may have left with nothing to show (a retraction
/// names them), and the writes of its render, which keep those they write again.
#[derive(Debug, Default)]
pub(crate) struct Stale {
    keys: BTreeSet<Vec<u8>>,
}

impl Stale {
    /// Notes a document that is removed at the next render unless it is rendered again.
    pub(crate) fn note(&mut self, key: DocKey<'_>) {
        self.keys.insert(key.key());
    }

    /// Starts a render that writes documents reflecting `seq`.
    pub(crate) fn rendering(&mut self, seq: u64) -> Rendering {
        Rendering {
            stale: std::mem::take(&mut self.keys),
            seq,
        }
    }
}

/// Writes the documents of a render, and keeps the keys a retraction named that no render
/// has written again: [`Rendering::finish`] removes those.
pub(crate) struct Rendering {
    stale: BTreeSet<Vec<u8>>,
    /// The sequence of the last event folded: what the documents written reflect.
    seq: u64,
}

impl Rendering {
    fn put_key(
        &mut self,
        s: &mut impl State,
        key: Vec<u8>,
        doc: &impl Body,
    ) -> Result<bool, StoreError> {
        if !self.stale.is_empty() {
            self.stale.remove(&key);
        }
        let sealed = doc.sealed(&key, self.seq);
        put_sealed(s, key, sealed)
    }

    /// Stores the documents of one kind by venue (`key` gives each one's tree key): each
    /// venue's, then the one without a venue as an alias of the venue's it is a copy of
    /// (the day's main meeting's), written again whenever that answer changes, so that the
    /// change feed names it. Where it is no venue's (odds given for every venue of a race
    /// no venue of which is known), it is a document of its own.
    pub(crate) fn put_venues(
        &mut self,
        s: &mut impl State,
        docs: &ByVenue<impl Body>,
        key: impl Fn(Option<&str>) -> Vec<u8>,
    ) -> Result<(), StoreError> {
        let mut changed = BTreeSet::new();
        for (venue, doc) in docs {
            if let Some(v) = venue {
                if self.put_key(s, key(Some(v)), doc)? {
                    changed.insert(v.as_str());
                }
            }
        }
        for (_, doc) in docs.iter().filter(|(venue, _)| venue.is_none()) {
            let unnamed = key(None);
            // Each venue's document names its venue: only the one it copies is the same.
            let copied = docs
                .iter()
                .find_map(|(v, d)| v.as_deref().filter(|_| d == doc));
            let Some(venue) = copied else {
                self.put_key(s, unnamed, doc)?;
                continue;
            };
            if !self.stale.is_empty() {
                self.stale.remove(&unnamed);
            }
            let same = s
                .get(&unnamed)?
                .as_deref()
                .and_then(docs::alias_of)
                .is_some_and(|(_, was)| was == venue.as_bytes());
            if !same || changed.contains(venue) {
                s.put(unnamed, docs::alias(self.seq, venue));
            }
        }
        Ok(())
    }

    /// Removes the documents named stale that this render did not write again.
    pub(crate) fn finish(self, s: &mut impl State) {
        for key in self.stale {
            s.delete(key);
        }
    }
}
