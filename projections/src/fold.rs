//! The pure fold from events to read models. It sees the read models only through
//! [`State`], so the same code runs over an in-memory map in unit tests and over a sled
//! batch in the projector.
//!
//! Applying an event stores what it gives among the source records (`facts.rs`) and hands
//! what it changed to every read model (`model.rs`), in the order declared below; a
//! batch's [`Fold::render`] then has each model write what the batch touched, once, however
//! many events of the batch touched it. That keeps replay fast and makes an amendment
//! rewrite every document it affects, leaving nothing stale. A retraction also names the
//! documents it may have left with nothing to show; those that no render writes again are
//! removed.

use racing_events::Envelope;

use crate::docs;
use crate::facts::{Change, Day, Facts};
use crate::form::{form_of, FormSource};
use crate::history::{Versioned, Versions};
use crate::keys::DocKey;
use crate::model::ReadModel;
use crate::state::{Records, State};
use crate::StoreError;

/// What became of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its effects are in the read models.
    Applied,
    /// Its `event_id` was applied before; ignored.
    Duplicate,
}

/// Declares the read models, in the order the fold calls them: a model that reads
/// another's output comes after it.
macro_rules! read_models {
    ($($(#[$doc:meta])* $name:ident: $model:ty,)*) => {
        /// Every read model, each holding what the batch being folded touched of it.
        #[derive(Debug, Default)]
        struct Models {
            $($(#[$doc])* $name: $model,)*
        }

        impl Models {
            fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
                $(self.$name.apply(s, change)?;)*
                Ok(())
            }

            fn render<S: State>(&mut self, s: &mut S, seq: u64) -> Result<(), StoreError> {
                $(self.$name.render(s, seq)?;)*
                Ok(())
            }
        }
    };
}

read_models! {
    /// Horses' profiles (`profiles.rs`).
    profiles: crate::profiles::Profiles,
    /// Every odds move, in chunks by race (`journal.rs`).
    journal: crate::journal::Pending,
    /// Each race-day event as its live frame (`raceday.rs`).
    race_day: crate::raceday::RaceDay,
    /// The meetings of each date (`meetings.rs`).
    meetings: crate::meetings::Meetings,
    /// Every name each horse was given (`search/`).
    names: crate::search::Touched,
    /// Jockeys and trainers (`people/`).
    people: crate::people::People,
    /// The results of each date and race (`results.rs`).
    results: crate::results::Results,
    /// The race cards of each date (`cards.rs`).
    cards: crate::cards::Cards,
    /// The current odds of each race (`odds.rs`).
    odds: crate::odds::Odds,
    /// Horses' forms, named by their profiles (`form/model.rs`).
    forms: crate::form::Forms,
}

/// An in-progress batch: what it changed of the source records and of each read model,
/// until it renders.
#[derive(Debug, Default)]
pub struct Fold {
    /// The stream sequence of the last event folded.
    seq: u64,
    facts: Facts,
    /// The versions of source records the batch made, written a record per record at
    /// render.
    versions: Versions,
    models: Models,
}

impl Fold {
    /// Folds one valid event in. `seq` is its stream sequence, `published` when JetStream
    /// stored it (nanoseconds since the epoch), which an odds move keeps.
    pub fn apply<S: State>(
        &mut self,
        s: &mut S,
        seq: u64,
        published: i128,
        env: &Envelope,
    ) -> Result<Outcome, StoreError> {
        if !s.first_seen(env.event_id.as_u128())? {
            return Ok(Outcome::Duplicate);
        }
        self.seq = seq;
        let mut s = Versioned {
            s,
            seq,
            versions: &mut self.versions,
        };
        let change = self
            .facts
            .apply(&mut s, seq, published, &env.occurred_at, &env.event)?;
        self.models.apply(&mut s, &change)?;
        Ok(Outcome::Applied)
    }

    /// Writes what the events folded since the last render changed: the versions of
    /// source records they replaced, the source records held until now, then each read
    /// model's writes.
    pub fn render<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
        self.versions.write(s)?;
        self.facts.write(s)?;
        self.models.render(s, self.seq)
    }

    /// The price moves the batch applied for races already off, finished, abandoned or
    /// void.
    pub(crate) fn late_prices(&self) -> u64 {
        self.facts.late_prices()
    }

    /// Bytes of the odds moves held for the journal, not yet written.
    pub(crate) fn journal_bytes(&self) -> usize {
        self.models.journal.bytes()
    }
}

/// The document under `key` as rendered from the records of `s` by the read model that
/// serves it: its body (for a form, the framed record), or `None` where there is none.
/// With the records as they stood at a point of the log, the document as it was served
/// then.
fn render_doc(s: &impl Records, key: DocKey<'_>) -> Result<Option<Vec<u8>>, StoreError> {
    let venue_of = |v: &Option<String>| v.as_deref().map(str::to_owned);
    Ok(match key {
        DocKey::Profile(_) => s
            .get(&key.key())?
            .map(|stored| docs::unseal(&stored).to_vec()),
        DocKey::Form(horse) => form_of(s, horse, &FormSource::load(s, horse)?)?,
        DocKey::Results { date, venue } => crate::results::results_of(s, date)?
            .days
            .into_iter()
            .find(|(v, _)| venue_of(v).as_deref() == venue)
            .map(|(_, doc)| doc),
        DocKey::Race {
            date,
            race_number,
            venue,
        } => crate::results::results_of(s, date)?
            .races
            .into_iter()
            .find(|(n, v, _)| *n == race_number && venue_of(v).as_deref() == venue)
            .map(|(_, _, doc)| doc),
        DocKey::Card { date, venue } => crate::cards::cards_of(s, date)?
            .into_iter()
            .find(|(v, _)| v.as_deref() == venue)
            .map(|(_, doc)| doc),
        DocKey::Odds {
            date,
            race_number,
            venue,
        } => {
            let day = Day::read(s, date)?;
            crate::odds::odds_of(s, date, &day, race_number)?
                .into_iter()
                .find(|(v, _)| v.as_deref() == venue)
                .map(|(_, doc)| doc)
        }
    })
}

impl crate::Store {
    /// A served document as it was once the log up to `seq` had been applied (rendered
    /// from the versions of the records it is made from), or `None` where there was none
    /// then. Its `ETag` is that of the same bytes served then, so it never changes; its
    /// sequence ([`crate::Doc::seq`]) is `seq`.
    pub fn doc_as_of(
        &self,
        key: crate::DocKey<'_>,
        seq: u64,
    ) -> Result<Option<crate::Doc>, StoreError> {
        let past = crate::history::AsOf {
            kv: &self.kv,
            reads: self.reads(),
            seq,
        };
        let Some(body) = render_doc(&past, key)? else {
            return Ok(None);
        };
        let form = matches!(key, crate::DocKey::Form(_));
        crate::Doc::new(crate::docs::seal(form, &body, seq).into())
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt("a sealed document".into()))
    }
}
