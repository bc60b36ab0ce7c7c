//! The cards each horse is declared on ([`keys::analysis::card_entry`]), by which a result
//! finds the later cards whose form it changes (`form.rs`), and the date of each horse's
//! newest card, which tells whether it has a later one at all ([`NewestCards`]). Most
//! results' horses have none; the date is known from batch to batch rather than read back
//! from the store for each horse of each result.

use std::collections::{BTreeSet, HashMap};

use racing_events::RaceCard;

use crate::keys;
use crate::kv::StoreError;
use crate::scan::Scan;
use crate::state::{race_no, Records, State};

/// Keeps the cards each horse of `new` is declared on: those of `old` (the card it
/// replaced, if any) that `new` no longer names are dropped (`new` `None`: retracted).
/// `newest` follows what it writes.
pub(crate) fn index(
    s: &mut impl State,
    old: Option<&RaceCard>,
    new: Option<&RaceCard>,
    newest: &mut NewestCards,
) -> Result<(), StoreError> {
    let entry = |c: &RaceCard, horse: &str| -> Result<Vec<u8>, StoreError> {
        Ok(keys::analysis::card_entry(
            horse,
            &c.date,
            race_no(c.race_number)?,
            &c.venue,
        ))
    };
    let named: BTreeSet<&str> = new
        .iter()
        .flat_map(|c| c.runners.iter().map(|r| r.horse_no.as_str()))
        .collect();
    if let Some(old) = old {
        for r in old
            .runners
            .iter()
            .filter(|r| !named.contains(r.horse_no.as_str()))
        {
            s.delete(entry(old, &r.horse_no)?);
            newest.dropped(&r.horse_no, &old.date);
        }
    }
    if let Some(new) = new {
        for r in &new.runners {
            let key = entry(new, &r.horse_no)?;
            if s.get(&key)?.is_none() {
                s.put(key, Vec::new());
            }
            newest.declared(&r.horse_no, &new.date);
        }
    }
    Ok(())
}

/// The date of the newest card each horse is declared on (`None`: on none), of the horses
/// asked about, as the store stands after the writes of [`index`] the fold made since:
/// only [`index`] writes the cards a horse is declared on, and a batch hands this on to
/// the next batch of its store only once it is written whole ([`crate::fold::Kept`]).
#[derive(Debug, Default)]
pub(crate) struct NewestCards(HashMap<String, Option<String>>);

/// Most horses whose newest card a fold hands on to the next batch
/// ([`NewestCards::kept`]); past them it hands on none (about 60 bytes a horse).
const KEPT_HORSES: usize = 65_536;

impl NewestCards {
    /// The date of the newest card `horse` is declared on in `s` (`None`: none), read
    /// from `s` at the first ask.
    pub(crate) fn of(&mut self, s: &impl Records, horse: &str) -> Result<Option<&str>, StoreError> {
        if !self.0.contains_key(horse) {
            let prefix = keys::analysis::card_entries_of(horse);
            let date = match s.scan(&prefix, Scan::Backward, 1)?.first() {
                Some((key, _)) => Some(
                    keys::analysis::parse_card_entry(key)
                        .map(|(date, ..)| date.to_owned())
                        .ok_or_else(|| StoreError::Corrupt("a card entry's key".into()))?,
                ),
                None => None,
            };
            self.0.insert(horse.to_owned(), date);
        }
        Ok(self.0.get(horse).and_then(Option::as_deref))
    }

    /// `horse` declared on a card of `date`.
    fn declared(&mut self, horse: &str, date: &str) {
        if let Some(newest) = self.0.get_mut(horse) {
            if newest.as_deref().is_none_or(|newest| newest < date) {
                *newest = Some(date.to_owned());
            }
        }
    }

    /// `horse` no longer declared on a card of `date`: its newest card is read again at
    /// the next ask unless it is of a later date (another of the date may remain).
    fn dropped(&mut self, horse: &str, date: &str) {
        let later = |newest: &Option<String>| newest.as_deref() > Some(date);
        if !self.0.get(horse).is_some_and(later) {
            self.0.remove(horse);
        }
    }

    /// What the next batch of the store may start from, once this one is written: all
    /// of it, while it holds [`KEPT_HORSES`] horses at most.
    pub(crate) fn kept(self) -> NewestCards {
        match self.0.len() {
            n if n > KEPT_HORSES => NewestCards::default(),
            _ => self,
        }
    }
}
