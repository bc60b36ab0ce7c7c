//! A race's part of its date's card documents: the records it is rendered from, as
//! stored, and its runners' people's strike rates; the part they render, or its digest,
//! which a fold keeps among its [`Parts`] while those stay the same.

use std::collections::BTreeSet;
use std::sync::Arc;

use racing_events::RaceCard;
use serde_json::value::RawValue;

use super::decoded::{Decoded, Hashed};
use super::form::strikes::People;
use crate::docs;
use crate::docs::cards::{Listing, Strike};
use crate::keys;
use crate::kv::StoreError;
use crate::people::docs::Role;
use crate::race_parts::{self, Parts};
use crate::state::{decode, Records};
use crate::status::{self, Status};

/// Race `n` of `date` at `venue` as its records stand in `s`, with the strike rates
/// `people` counts for the date; `None` for a race without a card. Its card as `decoded`
/// holds it, where its record is the one it was decoded from.
pub(super) fn read(
    (decoded, people): (&mut Decoded, &mut People),
    s: &impl Records,
    (date, n, venue): (&str, u8, &str),
) -> Result<Option<Race>, StoreError> {
    let sources = Sources::read(s, date, n, venue)?;
    let Some(card) = decoded.card(&sources.card_key, sources.card.as_ref())? else {
        return Ok(None);
    };
    let strikes: Vec<(Strike, Strike)> = card
        .runners
        .iter()
        .map(|r| {
            (
                people.strike(Role::Jockey, &r.jockey),
                people.strike(Role::Trainer, &r.trainer),
            )
        })
        .collect();
    Ok(Some(Race {
        sources,
        card,
        strikes,
    }))
}

/// The digest of race `n` of `date` at `venue`'s part ([`docs::cards::card_race_digest`])
/// as its records stand in `s`, with the strike rates `people` counts for the date: the one
/// `digests` keeps where the race's records and strike rates are those it was worked out
/// from, else worked out from the race's listing that `listings` keeps where its card,
/// scratchings and status are those it was worked out from. `None` for a race without a
/// card.
pub(super) fn digest(
    (digests, listings, decoded, people): (
        &mut Parts<u128>,
        &mut Parts<Listing>,
        &mut Decoded,
        &mut People,
    ),
    s: &impl Records,
    race: (&str, u8, &str),
) -> Result<Option<u128>, StoreError> {
    let Some(read) = read((&mut *decoded, people), s, race)? else {
        return Ok(None);
    };
    digests.of(race, read.hash(), || {
        let listing = listings.of(race, read.listing_hash(), || read.listing(race).map(Some))?;
        match listing {
            Some(listing) => read.digest(&listing, decoded).map(Some),
            None => Ok(None),
        }
    })
}

/// A race as its part is made from: its records, its card decoded, and its runners'
/// people's strike rates.
pub(super) struct Race {
    sources: Sources,
    card: Arc<RaceCard>,
    /// The jockey's and the trainer's of each of the card's runners, in its order.
    strikes: Vec<(Strike, Strike)>,
}

impl Race {
    /// The hash of its records (of their hashes) and of its runners' strike rates: their
    /// rides and wins, which the rates are worked out from.
    fn hash(&self) -> u128 {
        let mut counts = Vec::with_capacity(self.strikes.len() * 16);
        for strike in self
            .strikes
            .iter()
            .flat_map(|(jockey, trainer)| [jockey, trainer])
        {
            counts.extend_from_slice(&strike.rides.to_le_bytes());
            counts.extend_from_slice(&strike.wins.to_le_bytes());
        }
        let sources = self.sources.listed_from().into_iter();
        let hashes = sources.chain([self.sources.form.as_ref()]).map(hash_of);
        let hashes: Vec<Option<[u8; 16]>> = hashes.collect();
        let rest = [Some(&counts[..])];
        race_parts::hash(
            hashes
                .iter()
                .map(|h| h.as_ref().map(|h| &h[..]))
                .chain(rest),
        )
    }

    /// The hash of the records its listing is made from ([`Race::listing`]), of their
    /// hashes.
    fn listing_hash(&self) -> u128 {
        let hashes = self.sources.listed_from().map(hash_of);
        race_parts::hash(hashes.iter().map(|h| h.as_ref().map(|h| &h[..])))
    }

    /// Its part of the card documents (`race`: its date, number and venue).
    pub(super) fn render(
        &self,
        race: (&str, u8, &str),
        decoded: &mut Decoded,
    ) -> Result<Box<RawValue>, StoreError> {
        let (scratched, status) = self.sources.listed(race)?;
        let form = decoded.form(&self.sources.form_key, self.sources.form.as_ref())?;
        Ok(docs::cards::card_race(
            &self.card,
            |horse| scratched.contains(horse),
            status.as_ref(),
            form.as_deref(),
            &self.strikes,
        ))
    }

    /// What its part shows besides its runners' forms ([`docs::cards::card_race_listing`]).
    pub(super) fn listing(&self, race: (&str, u8, &str)) -> Result<Listing, StoreError> {
        let (scratched, status) = self.sources.listed(race)?;
        Ok(docs::cards::card_race_listing(
            &self.card,
            |horse| scratched.contains(horse),
            status.as_ref(),
        ))
    }

    /// The digest of its part, worked out without rendering it from its `listing` and its
    /// runners' forms and strike rates ([`docs::cards::card_race_digest`]).
    pub(super) fn digest(
        &self,
        listing: &Listing,
        decoded: &mut Decoded,
    ) -> Result<u128, StoreError> {
        let form = decoded.form(&self.sources.form_key, self.sources.form.as_ref())?;
        Ok(docs::cards::card_race_digest(
            &self.card,
            listing,
            form.as_deref(),
            &self.strikes,
        ))
    }
}

/// A record's hash ([`Hashed`]) as bytes, to hash with others.
fn hash_of(record: Option<&Hashed>) -> Option<[u8; 16]> {
    record.map(|r| r.hash.to_le_bytes())
}

/// A record's bytes.
fn bytes(record: &Option<Hashed>) -> Option<&[u8]> {
    record.as_ref().map(|r| &r.bytes[..])
}

/// The records a race's part is rendered from, as stored, each hashed once.
struct Sources {
    /// The card's record key, and its record.
    card_key: Vec<u8>,
    card: Option<Hashed>,
    /// Scratchings given for the race at every venue, and at its own.
    scratched_every: Option<Hashed>,
    scratched_own: Option<Hashed>,
    /// Statuses given for the race at every venue, and at its own.
    status_every: Option<Hashed>,
    status_own: Option<Hashed>,
    /// Its runners' form (`cards/form.rs`): its record key, and its record.
    form_key: Vec<u8>,
    form: Option<Hashed>,
}

impl Sources {
    fn read(s: &impl Records, date: &str, n: u8, venue: &str) -> Result<Sources, StoreError> {
        let card_key = keys::card(date, n, venue);
        let form_key = keys::analysis::card_form(date, n, venue);
        let get = |key: &[u8]| Ok::<_, StoreError>(s.get(key)?.map(Hashed::of));
        Ok(Sources {
            card: get(&card_key)?,
            scratched_every: get(&keys::scratched(date, n, None))?,
            scratched_own: get(&keys::scratched(date, n, Some(venue)))?,
            status_every: get(&keys::status(date, n, None))?,
            status_own: get(&keys::status(date, n, Some(venue)))?,
            form: get(&form_key)?,
            card_key,
            form_key,
        })
    }

    /// The records of the race's card, scratchings and statuses: what it lists
    /// ([`Sources::listed`]) is made from them alone.
    fn listed_from(&self) -> [Option<&Hashed>; 5] {
        [
            self.card.as_ref(),
            self.scratched_every.as_ref(),
            self.scratched_own.as_ref(),
            self.status_every.as_ref(),
            self.status_own.as_ref(),
        ]
    }

    /// The race's scratched runners (at every venue and at its own) and its status, as
    /// its records give them.
    fn listed(
        &self,
        (date, n, venue): (&str, u8, &str),
    ) -> Result<(BTreeSet<String>, Option<Status>), StoreError> {
        let record = |kind: &str| format!("{kind} of race {n} of {date} at {venue}");
        let mut scratched: BTreeSet<String> =
            decode(bytes(&self.scratched_every), || record("scratchings"))?.unwrap_or_default();
        scratched.extend(
            decode::<BTreeSet<String>>(bytes(&self.scratched_own), || record("scratchings"))?
                .unwrap_or_default(),
        );
        let status = status::merged(
            decode::<Status>(bytes(&self.status_own), || record("status"))?,
            decode::<Status>(bytes(&self.status_every), || record("status"))?,
        );
        Ok((scratched, status))
    }
}
