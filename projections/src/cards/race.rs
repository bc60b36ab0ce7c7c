//! A race's part of its date's card documents: the records it is rendered from, as
//! stored, and its runners' people's strike rates, and the part they render, kept among a
//! fold's [`Parts`] while those stay the same.

use std::collections::BTreeSet;
use std::sync::Arc;

use racing_events::RaceCard;
use serde_json::value::RawValue;

use super::decoded::Decoded;
use super::form::strikes::People;
use crate::docs;
use crate::docs::cards::Strike;
use crate::keys;
use crate::kv::StoreError;
use crate::people::docs::Role;
use crate::race_parts::{self, Parts};
use crate::state::{decode, Records};
use crate::status::{self, Status};

/// The part of race `n` of `date` at `venue` as its records stand in `s`, with the strike
/// rates `people` counts for the date; `None` for a race without a card. Its card and form
/// as `decoded` holds them, where their records are those they were decoded from.
pub(super) fn part(
    (parts, decoded, people): (&mut Parts, &mut Decoded, &mut People),
    s: &impl Records,
    date: &str,
    n: u8,
    venue: &str,
) -> Result<Option<Arc<RawValue>>, StoreError> {
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
    parts.of((date, n, venue), sources.hash(&strikes), || {
        sources.render((date, n, venue), decoded, (&card, &strikes))
    })
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

    /// The hash of the records and of the runners' strike rates `strikes` (their rides
    /// and wins, which the rates are worked out from).
    fn hash(&self, strikes: &[(Strike, Strike)]) -> u128 {
        let mut counts = Vec::with_capacity(strikes.len() * 16);
        for strike in strikes
            .iter()
            .flat_map(|(jockey, trainer)| [jockey, trainer])
        {
            counts.extend_from_slice(&strike.rides.to_le_bytes());
            counts.extend_from_slice(&strike.wins.to_le_bytes());
        }
        race_parts::hash([
            self.card.as_deref(),
            self.scratched_every.as_deref(),
            self.scratched_own.as_deref(),
            self.status_every.as_deref(),
            self.status_own.as_deref(),
            self.form.as_deref(),
            Some(&counts[..]),
        ])
    }

    /// The race's part, rendered from the records, their card `card` as decoded, and the
    /// runners' strike rates `strikes`.
    fn render(
        &self,
        (date, n, venue): (&str, u8, &str),
        decoded: &mut Decoded,
        (card, strikes): (&RaceCard, &[(Strike, Strike)]),
    ) -> Result<Option<Box<RawValue>>, StoreError> {
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
        Ok(Some(docs::cards::card_race(
            card,
            |horse| scratched.contains(horse),
            status.as_ref(),
            form.as_deref(),
            strikes,
        )))
    }
}
