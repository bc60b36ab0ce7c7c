//! The served documents as they are read: a document stored whole, a document without a
//! venue that is an alias of the main meeting's, a horse's form whole from its entries, or
//! a document rendered where it is read from the records the store holds
//! ([`DocKey::rendered_when_read`]); and any document as it was at a point of the log,
//! rendered from the versions of its records. Above the store and the read models whose
//! records it renders, so that neither needs the other to answer.

use crate::cards::{cards_headed, cards_of};
use crate::docs::{self, Doc};
use crate::facts::Day;
use crate::form::{self, FormSource};
use crate::forms::form_of;
use crate::history::AsOf;
use crate::keys::doc::DocKey;
use crate::kv::Bytes;
use crate::kv::StoreError;
use crate::odds::odds_of;
use crate::results::results_of;
use crate::state::Records;
use crate::store::Store;

impl Store {
    /// A served document, as stored.
    pub fn doc(&self, key: DocKey<'_>) -> Result<Option<Doc>, StoreError> {
        self.doc_by_key(&key.key())
    }

    /// A served document by its tree key ([`DocKey::key`]).
    pub fn doc_by_key(&self, key: &[u8]) -> Result<Option<Doc>, StoreError> {
        let Some(mut stored) = self.kv.get(key)? else {
            return Ok(None);
        };
        if let Some((seq, venue)) = docs::alias_of(&stored) {
            // The document without a venue is the main meeting's, stored under its venue.
            let target = docs::alias_target(key, venue);
            let Some(found) = self.kv.get(&target)? else {
                return Err(StoreError::Corrupt(format!(
                    "document {} names a venue without one",
                    String::from_utf8_lossy(key)
                )));
            };
            stored = match self.rendered(&target, found, seq)? {
                Rendered::Whole(whole) => whole,
                Rendered::Gone => return Ok(None),
                Rendered::Stored(found) => docs::aliased(seq, found),
            };
        } else if let Some(DocKey::Form(horse)) = DocKey::parse(key) {
            // A form's key holds its head; its entries are records of their own.
            match form::read(&self.kv, horse, stored.to_vec())? {
                Some(whole) => stored = whole.into(),
                None => return Ok(None),
            }
        } else {
            stored = match self.rendered(key, stored, 0)? {
                Rendered::Whole(whole) | Rendered::Stored(whole) => whole,
                Rendered::Gone => return Ok(None),
            };
        }
        Doc::new(stored).map(Some).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "document {} has no ETag",
                String::from_utf8_lossy(key)
            ))
        })
    }

    /// The document under `key` whole, `stored` being what its key holds: where that is
    /// the head of a document rendered when read ([`DocKey::rendered_when_read`]), its body
    /// rendered from the records as they are, at the later of the head's sequence and
    /// `seq`. The records are read again, with the head, where a commit lands between the
    /// reads (the body renders to another `ETag` than the head's): every commit that
    /// changes what the document answers writes its head.
    fn rendered(&self, key: &[u8], stored: Bytes, seq: u64) -> Result<Rendered, StoreError> {
        let doc_key = DocKey::parse(key).filter(|k| k.rendered_when_read());
        let Some(doc_key) = doc_key.filter(|_| stored.len() == docs::HEAD_LEN) else {
            return Ok(Rendered::Stored(stored));
        };
        let mut head = stored;
        for _ in 0..RENDER_READS {
            let body = render_headed(&self.kv, doc_key)?;
            let whole = body.and_then(|(b, held)| docs::with_body(&head, &b, held.as_ref(), seq));
            if let Some(whole) = whole {
                return Ok(Rendered::Whole(whole.into()));
            }
            match self.kv.get(key)? {
                Some(now) => head = now,
                None => return Ok(Rendered::Gone),
            }
        }
        Err(StoreError::Corrupt(format!(
            "document {}: its records render another ETag than its head's",
            String::from_utf8_lossy(key)
        )))
    }

    /// Every served document as `(key, bytes)`, in key order: what clients can read, for
    /// comparing two stores (one that crashed, one replayed cleanly) document by document.
    /// Stop at the first error: over a damaged store sled may yield it again and again.
    /// A document without a venue that is the main meeting's comes as that one, and a
    /// form whole.
    pub fn documents(&self) -> impl Iterator<Item = Result<(Bytes, Bytes), StoreError>> + '_ {
        // Every `DocKey` starts with its `doc` part and the key separator.
        self.kv
            .prefix(DocKey::PREFIX)
            .map(|item| {
                let (key, stored) = item?;
                if let Some(DocKey::Form(horse)) = DocKey::parse(&key) {
                    // `None`: removed since the scan read its head.
                    let whole = form::read(&self.kv, horse, stored.to_vec())?;
                    return Ok(whole.map(|whole| (key, whole.into())));
                }
                let rendered = DocKey::parse(&key).is_some_and(|k| k.rendered_when_read());
                if docs::alias_of(&stored).is_none() && !rendered {
                    return Ok(Some((key, stored)));
                }
                let doc = self.doc_by_key(&key)?.ok_or_else(|| {
                    StoreError::Corrupt(format!("document {}", String::from_utf8_lossy(&key)))
                })?;
                Ok(Some((key, doc.into_stored())))
            })
            .filter_map(Result::transpose)
    }

    /// A served document as it was once the log up to `seq` had been applied (rendered
    /// from the versions of the records it is made from), or `None` where there was none
    /// then. Its `ETag` is that of the same bytes served then, so it never changes; its
    /// sequence ([`Doc::seq`]) is `seq`.
    pub fn doc_as_of(&self, key: DocKey<'_>, seq: u64) -> Result<Option<Doc>, StoreError> {
        let past = AsOf::new(&self.kv, self.reads(), seq);
        let Some(body) = render_doc(&past, key)? else {
            return Ok(None);
        };
        let form = matches!(key, DocKey::Form(_));
        Doc::new(docs::seal(form, &body, seq).into())
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt("a sealed document".into()))
    }
}

/// The document under `key` as rendered from the records of `s` by the read model that
/// serves it: its body (for a form, the framed record), or `None` where there is none.
/// With the records as they stood at a point of the log, the document as it was served
/// then.
pub(crate) fn render_doc(s: &impl Records, key: DocKey<'_>) -> Result<Option<Vec<u8>>, StoreError> {
    let venue_of = |v: &Option<String>| v.as_deref().map(str::to_owned);
    Ok(match key {
        DocKey::Profile(_) => s
            .get(&key.key())?
            .map(|stored| docs::unseal(&stored).to_vec()),
        DocKey::Form(horse) => form_of(s, horse, &FormSource::load(s, horse)?)?,
        DocKey::Results { date, venue } => results_of(s, date, &mut Default::default())?
            .days
            .into_iter()
            .find(|(v, _)| venue_of(v).as_deref() == venue)
            .map(|(_, doc)| doc),
        DocKey::Race {
            date,
            race_number,
            venue,
        } => results_of(s, date, &mut Default::default())?
            .races
            .into_iter()
            .find(|(n, v, _)| *n == race_number && venue_of(v).as_deref() == venue)
            .map(|(_, _, doc)| doc),
        DocKey::Card { date, venue } => cards_of(s, date)?
            .into_iter()
            .find(|(v, _)| v.as_deref() == venue)
            .map(|(_, doc)| doc),
        DocKey::Odds {
            date,
            race_number,
            venue,
        } => {
            let shape = Day::read(s, date)?.shape();
            odds_of(s, (date, None), &shape, race_number)?
                .into_iter()
                .find(|(v, _)| v.as_deref() == venue)
                .map(|(_, doc)| doc)
        }
    })
}

/// A document's body, and what its head holds where that is not the body's `ETag`.
pub(crate) type Headed = (Vec<u8>, Option<docs::Tag>);

/// The document under `key` as [`render_doc`] renders it, with what its head holds where
/// that is not its `ETag`: the tag of a card's digest ([`DocKey::rendered_when_read`]),
/// worked out only here, for a card read as it is now (one as of a point has no head).
pub(crate) fn render_headed(
    s: &impl Records,
    key: DocKey<'_>,
) -> Result<Option<Headed>, StoreError> {
    let DocKey::Card { date, venue } = key else {
        return Ok(render_doc(s, key)?.map(|body| (body, None)));
    };
    Ok(cards_headed(s, date)?
        .into_iter()
        .find(|(v, _)| v.as_deref() == venue)
        .map(|(_, (doc, tag))| (doc, Some(tag))))
}

/// Most renders of a document read when commits land between the reads of its records.
const RENDER_READS: usize = 3;

/// A document's key's value, made whole ([`Store::rendered`], private to this module).
enum Rendered {
    /// Rendered from its records, with its head.
    Whole(Bytes),
    /// Stored whole: as it is.
    Stored(Bytes),
    /// Removed while it was read.
    Gone,
}
