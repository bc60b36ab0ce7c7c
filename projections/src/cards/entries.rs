//! The cards each horse is declared on, by which a result finds the later cards whose form
//! it changes (`form.rs`), and the date of each horse's newest card, which tells whether it
//! has a later one at all ([`NewestCards`]). Most results' horses have none; the date is
//! known from batch to batch rather than read back from the store for each horse of each
//! result.
//!
//! They are not written here: the records of a horse's names of each date hold the races
//! whose cards give it a name (`search/names.rs`), which are the cards it is declared on.
//! Those records are written once a batch, after the events' cards are rendered: the cards
//! declared and dropped since are held here until then.

use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;
use racing_events::RaceCard;

use crate::kv::StoreError;
use crate::search::names::{cards_of, latest_date_of, newest_card_of, Carded};
use crate::state::{race_no, Records};

/// The date of the newest card each horse is declared on (`None`: on none), of the horses
/// asked about, and the cards declared and dropped since the names' records were last
/// written.
#[derive(Debug, Default)]
pub(crate) struct NewestCards {
    newest: HashMap<String, Option<String>>,
    /// By horse, each race declared (`true`) or dropped (`false`) by the batch's events.
    /// What the names' records hold once the batch renders, so laying these over them
    /// after that changes nothing.
    pending: HashMap<String, BTreeMap<Carded, bool>>,
}

/// Most horses whose newest card a fold hands on to the next batch
/// ([`NewestCards::kept`]); past them it hands on none (about 60 bytes a horse).
const KEPT_HORSES: usize = 65_536;

impl NewestCards {
    /// Notes the cards each horse of `new` is declared on: those of `old` (the card it
    /// replaced, if any) that `new` no longer names are dropped (`new` `None`: retracted).
    pub(crate) fn index(
        &mut self,
        old: Option<&RaceCard>,
        new: Option<&RaceCard>,
    ) -> Result<(), StoreError> {
        let race = |c: &RaceCard| -> Result<Carded, StoreError> {
            Ok((c.date.clone(), race_no(c.race_number)?, c.venue.clone()))
        };
        let named: BTreeSet<&str> = new
            .iter()
            .flat_map(|c| c.runners.iter().map(|r| r.horse_no.as_str()))
            .collect();
        if let Some(old) = old {
            let race = race(old)?;
            for r in old
                .runners
                .iter()
                .filter(|r| !named.contains(r.horse_no.as_str()))
            {
                self.note(&r.horse_no, &race, false);
                self.dropped(&r.horse_no, &old.date);
            }
        }
        if let Some(new) = new {
            let race = race(new)?;
            for r in &new.runners {
                self.note(&r.horse_no, &race, true);
                self.declared(&r.horse_no, &new.date);
            }
        }
        Ok(())
    }

    /// Notes `horse` declared on `race`'s card (`declared`) or dropped from it.
    fn note(&mut self, horse: &str, race: &Carded, declared: bool) {
        let races = self.pending.entry(horse.to_owned()).or_default();
        races.insert(race.clone(), declared);
    }

    /// The races `horse` is declared on in `s`, with the batch's cards laid over them.
    pub(crate) fn cards(
        &self,
        s: &impl Records,
        horse: &str,
    ) -> Result<BTreeSet<Carded>, StoreError> {
        let mut races: BTreeSet<Carded> = cards_of(s, horse)?.into_iter().collect();
        for (race, declared) in self.pending.get(horse).into_iter().flatten() {
            if *declared {
                races.insert(race.clone());
            } else {
                races.remove(race);
            }
        }
        Ok(races)
    }

    /// The date of the newest card `horse` is declared on in `s` (`None`: none), with the
    /// batch's cards, read at the first ask.
    pub(crate) fn of(&mut self, s: &impl Records, horse: &str) -> Result<Option<&str>, StoreError> {
        if !self.newest.contains_key(horse) {
            let pending = self.pending.get(horse);
            let date = if pending.is_some_and(|races| races.values().any(|declared| !declared)) {
                // One dropped: the newest left is known from all of them alone.
                self.cards(s, horse)?.last().map(|(date, ..)| date.clone())
            } else {
                let declared = pending.and_then(|races| races.keys().last());
                let declared = declared.map(|(date, ..)| date.clone());
                match declared {
                    // No stored card is later than the batch's: its records end before.
                    Some(d) if latest_date_of(s, horse)?.is_none_or(|last| last <= d) => Some(d),
                    _ => newest_card_of(s, horse)?.max(declared),
                }
            };
            self.newest.insert(horse.to_owned(), date);
        }
        Ok(self.newest.get(horse).and_then(Option::as_deref))
    }

    /// `horse` declared on a card of `date`.
    fn declared(&mut self, horse: &str, date: &str) {
        if let Some(newest) = self.newest.get_mut(horse) {
            if newest.as_deref().is_none_or(|newest| newest < date) {
                *newest = Some(date.to_owned());
            }
        }
    }

    /// `horse` no longer declared on a card of `date`: its newest card is read again at
    /// the next ask unless it is of a later date (another of the date may remain).
    fn dropped(&mut self, horse: &str, date: &str) {
        let later = |newest: &Option<String>| newest.as_deref() > Some(date);
        if !self.newest.get(horse).is_some_and(later) {
            self.newest.remove(horse);
        }
    }

    /// The batch's names' records are written: they hold its cards.
    pub(crate) fn written(&mut self) {
        self.pending = HashMap::default();
    }

    /// What the next batch of the store may start from, once this one is written: the
    /// newest cards, while they are of [`KEPT_HORSES`] horses at most.
    pub(crate) fn kept(self) -> NewestCards {
        let newest = match self.newest.len() {
            n if n > KEPT_HORSES => HashMap::default(),
            _ => self.newest,
        };
        NewestCards {
            newest,
            pending: HashMap::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use racing_events::samples::{card, result, runner};
    use racing_events::{Event, RaceCard};

    use super::*;
    use crate::batch::MemState;
    use crate::tests::fold_batch;

    const ST: &str = "Sha Tin";

    fn declared(event: &Event) -> &RaceCard {
        match event {
            Event::RaceCardDeclared(c) => c,
            other => panic!("a card, not {other:?}"),
        }
    }

    fn race(date: &str, n: u8) -> Carded {
        (date.into(), n, ST.into())
    }

    #[test]
    fn the_cards_of_a_horse_are_the_stored_ones_with_the_batchs_laid_over() {
        let mut s = MemState::default();
        // The horse's newest date has a result and no card: read back past it.
        let stored = [
            card("2026-11-01", ST, 1, &["A1", "B2"]),
            card("2026-11-08", ST, 2, &["A1"]),
            result("2026-11-22", ST, 4, vec![runner(Some(1), "A1")]),
        ];
        fold_batch(&mut s, 0, &stored);
        let mut newest = NewestCards::default();
        assert_eq!(newest.of(&s, "A1").expect("read"), Some("2026-11-08"));
        let all = BTreeSet::from([race("2026-11-01", 1), race("2026-11-08", 2)]);
        assert_eq!(newest.cards(&s, "A1").expect("read"), all);
        assert_eq!(newest.of(&s, "C3").expect("read"), None);

        // Declared in the batch on a card earlier than a stored one: the stored one.
        let mut earlier = NewestCards::default();
        let before = card("2026-11-04", ST, 5, &["A1"]);
        earlier.index(None, Some(declared(&before))).expect("index");
        assert_eq!(earlier.of(&s, "A1").expect("read"), Some("2026-11-08"));

        // Declared on a later card in the batch, not yet in the names' records.
        let later = card("2026-11-15", ST, 3, &["A1", "C3"]);
        newest.index(None, Some(declared(&later))).expect("index");
        assert_eq!(newest.of(&s, "A1").expect("read"), Some("2026-11-15"));
        assert_eq!(newest.of(&s, "C3").expect("read"), Some("2026-11-15"));
        assert!(newest
            .cards(&s, "A1")
            .expect("read")
            .contains(&race("2026-11-15", 3)));

        // Then dropped from it and from the stored card of the 8th: its newest is the 1st,
        // though the records still hold both.
        let without = card("2026-11-15", ST, 3, &["C3"]);
        newest
            .index(Some(declared(&later)), Some(declared(&without)))
            .expect("index");
        let replaced = card("2026-11-08", ST, 2, &["B2"]);
        newest
            .index(Some(declared(&stored[1])), Some(declared(&replaced)))
            .expect("index");
        assert_eq!(newest.of(&s, "A1").expect("read"), Some("2026-11-01"));
        let first = BTreeSet::from([race("2026-11-01", 1)]);
        assert_eq!(newest.cards(&s, "A1").expect("read"), first);
        // Asked anew, as a batch that starts on the same records would.
        let mut anew = NewestCards {
            pending: std::mem::take(&mut newest.pending),
            ..NewestCards::default()
        };
        assert_eq!(anew.of(&s, "A1").expect("read"), Some("2026-11-01"));
        assert_eq!(anew.of(&s, "B2").expect("read"), Some("2026-11-08"));

        // Once the records hold the batch's cards, laying them over again changes nothing.
        fold_batch(&mut s, stored.len(), &[later, without, replaced]);
        assert_eq!(anew.cards(&s, "A1").expect("read"), first);
        anew.written();
        assert_eq!(anew.cards(&s, "A1").expect("read"), first);
        assert_eq!(anew.kept().of(&s, "A1").expect("read"), Some("2026-11-01"));
    }
}
