//! The keys of the served documents: each kind of document, its key in the tree, and the
//! document a key names.

use super::parts::{key, race, split_at_sep};

/// A served document, ready to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKey<'a> {
    /// Horse profile (docs/api.md, "Horse profile").
    Profile(&'a str),
    /// Horse form, framed so a `limit` can cut it without parsing (see `FormDoc`).
    Form(&'a str),
    /// All results of a date: one venue's, or the day's main meeting.
    Results {
        /// `YYYY-MM-DD`.
        date: &'a str,
        /// `None` for the meeting with the most races.
        venue: Option<&'a str>,
    },
    /// One race result.
    Race {
        /// `YYYY-MM-DD`.
        date: &'a str,
        /// 1 to 99.
        race_number: u8,
        /// `None` for the day's main meeting.
        venue: Option<&'a str>,
    },
    /// The current odds of a race.
    Odds {
        /// `YYYY-MM-DD`.
        date: &'a str,
        /// 1 to 99.
        race_number: u8,
        /// `None` for the race at the day's main meeting, or where no venue of the race
        /// is known.
        venue: Option<&'a str>,
    },
    /// The race card of a date.
    Card {
        /// `YYYY-MM-DD`.
        date: &'a str,
        /// `None` for the meeting with the most races.
        venue: Option<&'a str>,
    },
}

impl<'a> DocKey<'a> {
    /// What every document's key starts with.
    pub const PREFIX: &'static [u8] = b"doc\0";

    /// The document a tree key ([`DocKey::key`]) names.
    pub fn parse(key: &'a [u8]) -> Option<DocKey<'a>> {
        let rest = key.strip_prefix(Self::PREFIX)?;
        let (kind, rest) = split_at_sep(rest)?;
        let text = |b: &'a [u8]| std::str::from_utf8(b).ok();
        // A date is 10 bytes and a race number 2 digits, each followed by the separator;
        // the venue is the rest, empty for none.
        let dated =
            || -> Option<(&'a str, &'a [u8])> { Some((text(rest.get(..10)?)?, rest.get(11..)?)) };
        let raced = |rest: &'a [u8]| -> Option<(u8, &'a [u8])> {
            Some((text(rest.get(..2)?)?.parse().ok()?, rest.get(3..)?))
        };
        let venue = |b: &'a [u8]| -> Option<Option<&'a str>> {
            Some(Some(text(b)?).filter(|v| !v.is_empty()))
        };
        Some(match kind {
            b"profile" => DocKey::Profile(text(rest)?),
            b"form" => DocKey::Form(text(rest)?),
            b"results" => {
                let (date, rest) = dated()?;
                DocKey::Results {
                    date,
                    venue: venue(rest)?,
                }
            }
            b"cards" => {
                let (date, rest) = dated()?;
                DocKey::Card {
                    date,
                    venue: venue(rest)?,
                }
            }
            b"race" => {
                let (date, rest) = dated()?;
                let (race_number, rest) = raced(rest)?;
                DocKey::Race {
                    date,
                    race_number,
                    venue: venue(rest)?,
                }
            }
            b"odds" => {
                let (date, rest) = dated()?;
                let (race_number, rest) = raced(rest)?;
                DocKey::Odds {
                    date,
                    race_number,
                    venue: venue(rest)?,
                }
            }
            _ => return None,
        })
    }

    /// Whether the store keeps only the head of this document (its `ETag` and the
    /// sequence it last changed at), its body rendered from the source records when it
    /// is read: a date's results, a race's and a date's cards, which hold nothing but
    /// what the results, cards, scratchings, statuses and forms hold (a copy each would
    /// be every such fact written again at every change of it). A profile is its fact; a
    /// form is assembled from its entries; a race's odds are read on every move and every
    /// live snapshot, and kept whole. A card's head holds, in place of the `ETag`, the tag
    /// of a digest of what the card is made of, which the fold works out from its races'
    /// digests without rendering them (`docs/cards.rs`, `card_digests`): it changes exactly
    /// where the card's bytes do, and the `ETag` served is that of the bytes rendered.
    pub fn rendered_when_read(&self) -> bool {
        matches!(
            self,
            DocKey::Results { .. } | DocKey::Race { .. } | DocKey::Card { .. }
        )
    }

    /// Whether rendering this document as of a point (`Store::doc_as_of`) reads an
    /// amount bounded by its answer, whatever the log's length: a profile is one record's
    /// value then, found among its versions by one range read and at most a run of them
    /// unpacked (`history/packing.rs`); a date's results, or a race's, are its day's
    /// record and a result for each race they list, each found so (the same reads as
    /// their render now, which the request's thread runs). A card reads each race's form
    /// and its people's rides of 14 days, a form every entry of a horse, a race's odds
    /// its moves up to the point, records by condition every ride: they grow with the
    /// data.
    pub fn as_of_is_bounded(&self) -> bool {
        matches!(
            self,
            DocKey::Profile(_) | DocKey::Results { .. } | DocKey::Race { .. }
        )
    }

    /// The tree key of the document.
    pub fn key(&self) -> Vec<u8> {
        match self {
            DocKey::Profile(h) => key(&[b"doc", b"profile", h.as_bytes()]),
            DocKey::Form(h) => key(&[b"doc", b"form", h.as_bytes()]),
            DocKey::Results { date, venue: v } => key(&[
                b"doc",
                b"results",
                date.as_bytes(),
                v.unwrap_or("").as_bytes(),
            ]),
            DocKey::Race {
                date,
                race_number,
                venue: v,
            } => key(&[
                b"doc",
                b"race",
                date.as_bytes(),
                &race(*race_number),
                v.unwrap_or("").as_bytes(),
            ]),
            DocKey::Odds {
                date,
                race_number,
                venue: v,
            } => key(&[
                b"doc",
                b"odds",
                date.as_bytes(),
                &race(*race_number),
                v.unwrap_or("").as_bytes(),
            ]),
            DocKey::Card { date, venue: v } => key(&[
                b"doc",
                b"cards",
                date.as_bytes(),
                v.unwrap_or("").as_bytes(),
            ]),
        }
    }
}
