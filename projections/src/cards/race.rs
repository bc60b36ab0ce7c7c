//! A race's part of its date's card documents: the records it is rendered from, as
//! stored, and its runners' people's strike rates; the part they render, or its digest,
//! which a fold keeps among its [`Parts`] while those stay the same.

use std::collections::BTreeSet;
use std::sync::Arc;

use racing_events::RaceCard;
use serde_json::value::RawValue;

use super::decoded::Decoded;
use super::form::strikes::People;
use crate::docs;
use crate::docs::cards::{StoredRaceForm, Strike};
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
    let Some(card) = decoded.card(&sources.card_key, sources.card.as_deref())? else {
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
/// from. `None` for a race without a card.
pub(super) fn digest(
    (digests, decoded, people): (&mut Parts<u128>, &mut Decoded, &mut People),
    s: &impl Records,
    race: (&str, u8, &str),
) -> Result<Option<u128>, StoreError> {
    let Some(read) = read((&mut *decoded, people), s, race)? else {
        return Ok(None);
    };
    digests.of(race, read.hash(), || read.digest(race, decoded).map(Some))
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
    /// The hash of its records and of its runners' strike rates: their rides and wins,
    /// which the rates are worked out from.
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
        let s = &self.sources;
        race_parts::hash([
            s.card.as_deref(),
            s.scratched_every.as_deref(),
            s.scratched_own.as_deref(),
            s.status_every.as_deref(),
            s.status_own.as_deref(),
            s.form.as_deref(),
            Some(&counts[..]),
        ])
    }

    /// Its part of the card documents (`race`: its date, number and venue).
    pub(super) fn render(
        &self,
        race: (&str, u8, &str),
        decoded: &mut Decoded,
    ) -> Result<Box<RawValue>, StoreError> {
        let shown = self.sources.shown(race, decoded)?;
        Ok(docs::cards::card_race(
            &self.card,
            |horse| shown.scratched.contains(horse),
            shown.status.as_ref(),
            shown.form.as_deref(),
            &self.strikes,
        ))
    }

    /// The digest of its part, worked out without rendering it
    /// ([`docs::cards::card_race_digest`]).
    pub(super) fn digest(
        &self,
        race: (&str, u8, &str),
        decoded: &mut Decoded,
    ) -> Result<u128, StoreError> {
        let shown = self.sources.shown(race, decoded)?;
        Ok(docs::cards::card_race_digest(
            &self.card,
            |horse| shown.scratched.contains(horse),
            shown.status.as_ref(),
            shown.form.as_deref(),
            &self.strikes,
        ))
    }
}

/// The records a race's part is rendered from, as stored.
struct Sources {
    /// The card's record key, and its record.
    card_key: Vec<u8>,
    card: Option<Vec<u8>>,
    /// Scratchings given for the race at every venue, and at its own.
    scratched_every: Option<Vec<u8>>,
    scratched_own: Option<Vec<u8>>,
    /// Statuses given for the race at every venue, and at its own.
    status_every: Option<Vec<u8>>,
    status_own: Option<Vec<u8>>,
    /// Its runners' form (`cards/form.rs`): its record key, and its record.
    form_key: Vec<u8>,
    form: Option<Vec<u8>>,
}

impl Sources {
    fn read(s: &impl Records, date: &str, n: u8, venue: &str) -> Result<Sources, StoreError> {
        let card_key = keys::card(date, n, venue);
        let form_key = keys::analysis::card_form(date, n, venue);
        Ok(Sources {
            card: s.get(&card_key)?,
            scratched_every: s.get(&keys::scratched(date, n, None))?,
            scratched_own: s.get(&keys::scratched(date, n, Some(venue)))?,
            status_every: s.get(&keys::status(date, n, None))?,
            status_own: s.get(&keys::status(date, n, Some(venue)))?,
            form: s.get(&form_key)?,
            card_key,
            form_key,
        })
    }

    /// What of the records a card shows, decoded: the race's scratchings at every venue
    /// and at its own, its status, and its runners' form (as `decoded` holds it, where
    /// its record is the one it was decoded from).
    fn shown(
        &self,
        (date, n, venue): (&str, u8, &str),
        decoded: &mut Decoded,
    ) -> Result<Shown, StoreError> {
        let record = |kind: &str| format!("{kind} of race {n} of {date} at {venue}");
        let mut scratched: BTreeSet<String> =
            decode(self.scratched_every.as_deref(), || record("scratchings"))?.unwrap_or_default();
        scratched.extend(
            decode::<BTreeSet<String>>(self.scratched_own.as_deref(), || record("scratchings"))?
                .unwrap_or_default(),
        );
        let status = status::merged(
            decode::<Status>(self.status_own.as_deref(), || record("status"))?,
            decode::<Status>(self.status_every.as_deref(), || record("status"))?,
        );
        let form = decoded.form(&self.form_key, self.form.as_deref())?;
        Ok(Shown {
            scratched,
            status,
            form,
        })
    }
}

/// What of a race's records its part shows, decoded ([`Sources::shown`]).
struct Shown {
    scratched: BTreeSet<String>,
    status: Option<Status>,
    form: Option<Arc<StoredRaceForm>>,
}
