//! The documents the API serves, as the read models render them (at the events that
//! change them, and when read where only their head is stored). The field order and
//! presence are the contract (`docs/api.md`); the handlers send these bytes as they are. With the `openapi` feature each type that renders
//! a document also derives its schema, from the same fields and their doc comments, so the
//! API's description cannot drift from what it serves.

use std::borrow::Cow;

use crate::kv::Bytes;

/// Bytes of the strong `ETag` that heads every stored document.
pub const ETAG_LEN: usize = 34;

/// What a stored document's head holds ahead of its sequence: its `ETag`, or for a card the
/// tag of its digest ([`tag`]), in the same form.
pub(crate) type Tag = [u8; ETAG_LEN];

/// Bytes ahead of every stored document: its `ETag`, then the stream sequence its
/// content was last changed at (big-endian).
pub const HEAD_LEN: usize = ETAG_LEN + 8;

/// The strong `ETag` of the bytes `sent` as the header carries it: their 128-bit xxh3 in
/// hex, quoted. Stored ahead of each document when it is rendered, so that a GET sends
/// it without hashing the body again.
pub fn etag(sent: &[u8]) -> [u8; ETAG_LEN] {
    quoted(xxhash_rust::xxh3::xxh3_128(sent))
}

/// A digest of what a document is made of, in the form of an `ETag`: what the head of a
/// card holds (`cards.rs`), which the fold works out without rendering the card.
pub(crate) fn tag(digest: u128) -> Tag {
    quoted(digest)
}

/// A 128-bit hash as an `ETag`: in hex, quoted.
fn quoted(hash: u128) -> [u8; ETAG_LEN] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = hash.to_be_bytes();
    let mut tag = [b'"'; ETAG_LEN];
    for (i, byte) in hash.iter().enumerate() {
        tag[1 + 2 * i] = HEX[usize::from(byte >> 4)];
        tag[2 + 2 * i] = HEX[usize::from(byte & 0xf)];
    }
    tag
}

pub(crate) mod cards;
pub(crate) mod form;
pub(crate) mod json;
mod lengths;
pub(crate) mod meeting;
pub(crate) mod odds;
pub(crate) mod profile;
pub(crate) mod results;
#[cfg(feature = "openapi")]
mod status;
#[cfg(test)]
mod tests;

use form::FormDoc;

/// A stored document as read: its `ETag`, the sequence it was last changed at and its
/// bytes, sharing the store's buffer. Dereferences to the bytes (for a form, the framed
/// record of [`FormDoc`]).
#[derive(Debug, Clone)]
pub struct Doc {
    stored: Bytes,
}

impl Doc {
    /// The stored value, checked to hold its head; `None` when it is too short to.
    pub(crate) fn new(stored: Bytes) -> Option<Doc> {
        (stored.len() >= HEAD_LEN).then_some(Doc { stored })
    }

    /// The `ETag` of the whole document, quoted.
    pub fn etag(&self) -> &[u8] {
        &self.stored[..ETAG_LEN]
    }

    /// The stream sequence of the document's content: the log up to here had been
    /// applied when it last changed, and it has answered the same since. A WebSocket
    /// `since` of it resumes right after what the document holds.
    pub fn seq(&self) -> u64 {
        let mut seq = [0; 8];
        seq.copy_from_slice(&self.stored[ETAG_LEN..HEAD_LEN]);
        u64::from_be_bytes(seq)
    }

    /// The stored value whole: the `ETag` in its first [`ETAG_LEN`] bytes, the sequence,
    /// then the document from [`HEAD_LEN`], for sending from the store's own buffer.
    pub fn into_stored(self) -> Bytes {
        self.stored
    }
}

impl std::ops::Deref for Doc {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.stored[HEAD_LEN..]
    }
}

/// A document's stored value: the `ETag` of what a GET of it sends, `seq` (the stream
/// sequence it reflects), then `doc` (which, for a form, is the framed record, and a GET
/// sends its JSON).
pub(crate) fn seal(form: bool, doc: &[u8], seq: u64) -> Vec<u8> {
    let sent = if form {
        FormDoc::body(doc, None).unwrap_or_default()
    } else {
        Cow::Borrowed(doc)
    };
    let mut stored = Vec::with_capacity(HEAD_LEN + doc.len());
    stored.extend_from_slice(&etag(&sent));
    stored.extend_from_slice(&seq.to_be_bytes());
    stored.extend_from_slice(doc);
    stored
}

/// The document of a stored value (the bytes after its head).
pub(crate) fn unseal(stored: &[u8]) -> &[u8] {
    stored.get(HEAD_LEN..).unwrap_or_default()
}

/// The first byte of a stored alias ([`alias`]); a sealed document starts with its
/// `ETag`'s quote.
const ALIAS: u8 = b'@';

/// What the key of a document without a venue holds where that document is a venue's
/// (the day's main meeting's): the venue, and the sequence at which this answer last
/// changed, by the alias or by the venue's document. One copy of each document is
/// stored; the key without a venue names it.
pub(crate) fn alias(seq: u64, venue: &str) -> Vec<u8> {
    let mut stored = Vec::with_capacity(9 + venue.len());
    stored.push(ALIAS);
    stored.extend_from_slice(&seq.to_be_bytes());
    stored.extend_from_slice(venue.as_bytes());
    stored
}

/// The sequence and venue of a stored alias ([`alias`]); `None` for a sealed document.
pub(crate) fn alias_of(stored: &[u8]) -> Option<(u64, &[u8])> {
    let rest = stored.strip_prefix(&[ALIAS])?;
    let (seq, venue) = rest.split_first_chunk::<8>()?;
    Some((u64::from_be_bytes(*seq), venue))
}

/// The key of the document an alias stored under `key` names: the key without a venue
/// ends with the empty venue, so the venue's key is it with the venue after it.
pub(crate) fn alias_target(key: &[u8], venue: &[u8]) -> Vec<u8> {
    [key, venue].concat()
}

/// The stored document an alias (of sequence `seq`) answers with, from its venue's
/// stored document: the same `ETag` and bytes, and the later of the two sequences.
pub(crate) fn aliased(seq: u64, target: Bytes) -> Bytes {
    let Some(head) = target.get(ETAG_LEN..HEAD_LEN) else {
        return target;
    };
    if head >= &seq.to_be_bytes()[..] {
        return target;
    }
    let mut stored = target.to_vec();
    stored[ETAG_LEN..HEAD_LEN].copy_from_slice(&seq.to_be_bytes());
    stored.into()
}

/// What a stored document answers, its `ETag` and its bytes, without the sequence it was
/// sealed at: the same for two stores that hold the same document, however each batched
/// the log. An alias answers as the venue it names.
pub fn answered(stored: &[u8]) -> Vec<u8> {
    if let Some((_, venue)) = alias_of(stored) {
        return [&[ALIAS], venue].concat();
    }
    [
        stored.get(..ETAG_LEN).unwrap_or_default(),
        stored.get(HEAD_LEN..).unwrap_or_default(),
    ]
    .concat()
}

/// Whether two stored values answer the same: the same `ETag` and document, whatever
/// sequence each was sealed at; where either is a head alone ([`head`]), the same `ETag`.
pub(crate) fn same_answer(a: &[u8], b: &[u8]) -> bool {
    let (a_body, b_body) = (a.get(HEAD_LEN..), b.get(HEAD_LEN..));
    let headed = |body: Option<&[u8]>| body.is_some_and(|b| !b.is_empty());
    a.get(..ETAG_LEN) == b.get(..ETAG_LEN)
        && (!headed(a_body) || !headed(b_body) || a_body == b_body)
}

/// What the store keeps of a document rendered when it is read
/// ([`crate::keys::DocKey::rendered_when_read`]): the head [`seal`] writes, its `ETag` and `seq`,
/// without the bytes.
pub(crate) fn head(doc: &[u8], seq: u64) -> Vec<u8> {
    tagged(&etag(doc), seq)
}

/// The head of a document rendered when read that holds `tag`: its `ETag`, or for a card
/// the tag of its digest ([`crate::keys::DocKey::rendered_when_read`]).
pub(crate) fn tagged(tag: &Tag, seq: u64) -> Vec<u8> {
    let mut stored = Vec::with_capacity(HEAD_LEN);
    stored.extend_from_slice(tag);
    stored.extend_from_slice(&seq.to_be_bytes());
    stored
}

/// A document rendered when read, whole: its `ETag`, the sequence the later of its
/// stored head's and `seq` (an alias's), `doc` after them. `held` is what its head holds
/// where that is not its `ETag` (the tag of its digest, [`tag`]). `None` where `doc` is not
/// the one the head was made of (the head holds another tag): a commit came between the
/// reads.
pub(crate) fn with_body(head: &[u8], doc: &[u8], held: Option<&Tag>, seq: u64) -> Option<Vec<u8>> {
    let (stored, at) = head.split_at_checked(ETAG_LEN)?;
    let at: [u8; 8] = at.try_into().ok()?;
    let tag = etag(doc);
    if stored != held.unwrap_or(&tag) {
        return None;
    }
    let mut whole = Vec::with_capacity(HEAD_LEN + doc.len());
    whole.extend_from_slice(&tag);
    whole.extend_from_slice(&u64::from_be_bytes(at).max(seq).to_be_bytes());
    whole.extend_from_slice(doc);
    Some(whole)
}
