//! The pure fold from events to read models. It sees the read models only through
//! [`State`], so the same code runs over an in-memory map in unit tests and over a sled
//! batch in the projector.
//!
//! Applying an event stores what it gives among the source records (`facts.rs`: a race's
//! odds held decoded through the batch and written once, at its render) and hands
//! what it changed to every read model (`model.rs`), in the order declared below. The
//! models whose documents carry a position render what the event touched right after it,
//! at its position, so that however the log is batched a store answers the same; price
//! moves wait and are rendered together, dated move by move (`odds.rs`). A batch's
//! [`Fold::render`] has the other models (journals, indexes) write what the batch touched,
//! once, and then every model what it held for itself through the batch. A model renders
//! every document a change affects, so an amendment leaves nothing stale. A retraction
//! also names the documents it may have left with nothing to show; those that no render
//! writes again are removed.

use racing_events::{Envelope, Event};

use crate::facts::{Change, Facts};
use crate::history::{Replaced, Versioned, Versions};
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::state::State;

/// What became of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its effects are in the read models.
    Applied,
    /// Its `event_id` was applied before; ignored.
    Duplicate,
}

/// When a read model renders what the changes touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Renders {
    /// After each event: its documents carry the position of the event that last changed
    /// them (`Racing-Seq`) and are listed in the change feed at each such position, so
    /// they are rendered at every event that touched them, however many events a batch
    /// holds. A store built one event a batch (live), many (a catch-up) or by a bulk load
    /// (a replay) then answers the same.
    EachEvent,
    /// Once a batch: what it writes carries positions of its own (the odds journal's
    /// moves, the race-day journal's events) or none (the name index, the meetings).
    EachBatch,
}

/// Declares the read models, in the order the fold calls them: a model that reads
/// another's output comes after it.
macro_rules! read_models {
    ($($(#[$doc:meta])* $name:ident: $model:ty, $renders:ident,)*) => {
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

            /// Renders, in the declared order, the models that render as `when` says.
            fn render<S: State>(
                &mut self,
                s: &mut S,
                (seq, facts): (u64, &Facts),
                when: Renders,
            ) -> Result<(), StoreError> {
                $(if Renders::$renders == when {
                    self.$name.render(s, seq, facts)?;
                })*
                Ok(())
            }

            /// Has every model write what it held through the batch.
            fn finish<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
                $(self.$name.finish(s)?;)*
                Ok(())
            }
        }
    };
}

read_models! {
    /// Horses' profiles (`profiles.rs`), written as each event is folded.
    profiles: crate::profiles::Profiles, EachEvent,
    /// Every odds move, in chunks by race (`journal.rs`).
    journal: crate::journal::Pending, EachBatch,
    /// Each race-day event as its live frame (`raceday.rs`).
    race_day: crate::raceday::RaceDay, EachBatch,
    /// The meetings of each date (`meetings.rs`).
    meetings: crate::meetings::Meetings, EachBatch,
    /// Every name each horse was given (`search/`).
    names: crate::search::names::Touched, EachBatch,
    /// Jockeys and trainers (`people/`).
    people: crate::people::rides::People, EachEvent,
    /// The results of each date and race (`results.rs`).
    results: crate::results::Results, EachEvent,
    /// The current odds of each race (`odds.rs`).
    odds: crate::odds::Odds, EachEvent,
    /// Horses' forms, named by their profiles (`forms.rs`).
    forms: crate::forms::Forms, EachEvent,
    /// The race cards of each date, with each runner's form as of its race's date, from
    /// the horses' forms and the people's rides (`cards.rs`).
    cards: crate::cards::Cards, EachEvent,
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
    /// The book after the last price move folded (`market.rs`).
    book: Option<crate::market::Book>,
}

/// What a batch's fold hands on to the next batch of the same store, as the store stands
/// once the batch is written: the models' decoded careers, days' counted rides, rendered
/// races' parts, people's newest rides, horses' newest cards, and the races' odds and
/// counts of odds moves. A catch-up while the API answers, and the live feed, commit in
/// batches of a few events, and each would otherwise read and render them again.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    cards: crate::cards::Kept,
    facts: crate::facts::Written,
    journal: crate::journal::Totals,
    people: crate::people::newest::Newest,
    results: crate::race_parts::Parts,
}

impl Fold {
    /// A fold for a batch that starts where the one that kept `kept` ended.
    pub(crate) fn resumed(kept: Kept) -> Fold {
        let mut fold = Fold {
            facts: Facts::resumed(kept.facts),
            ..Fold::default()
        };
        fold.models.cards = crate::cards::Cards::resumed(kept.cards);
        fold.models.journal = crate::journal::Pending::resumed(kept.journal);
        fold.models.people = crate::people::rides::People::resumed(kept.people);
        fold.models.results = crate::results::Results::resumed(kept.results);
        fold
    }

    /// What the next batch may start from, once this one has rendered ([`Fold::render`]).
    pub(crate) fn keep(self) -> Kept {
        Kept {
            cards: self.models.cards.keep(),
            facts: self.facts.keep(),
            journal: self.models.journal.keep(),
            people: self.models.people.keep(),
            results: self.models.results.keep(),
        }
    }

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
        // A price move of a race and venue the batch holds prices of changes those prices
        // only: it waits to be rendered with the moves around it (`odds.rs`). Any other
        // event may change what they render from: they are rendered first.
        let only_prices = matches!(&env.event, Event::OddsUpdated(o) if self.facts.holds_odds(o));
        if !only_prices {
            self.render_moves(s)?;
        }
        self.seq = seq;
        s.changes_at(seq);
        let mut s = Versioned {
            s,
            seq,
            versions: &mut self.versions,
        };
        // Kept and served as every instant is: UTC, `Z`, milliseconds, whatever offset and
        // precision the feeder wrote (validation let only a real instant through).
        let occurred_at =
            racing_events::Instant::of(&env.occurred_at).unwrap_or_else(|| env.occurred_at.clone());
        let change = self
            .facts
            .apply(&mut s, seq, published, &occurred_at, &env.event)?;
        self.models.apply(&mut s, &change)?;
        self.book = change.book;
        if !only_prices {
            // The documents this event changed are written now, at its position; what
            // they are rendered from (a card's form) is versioned as the event's.
            self.models
                .render(&mut s, (seq, &self.facts), Renders::EachEvent)?;
        }
        Ok(Outcome::Applied)
    }

    /// Renders the price moves that wait ([`crate::odds::Odds::render_moves`]).
    fn render_moves<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
        if self.models.odds.holds_moves() {
            self.models.odds.render_moves(s, &self.facts)?;
        }
        Ok(())
    }

    /// Writes what the events folded since the last render changed and was not written
    /// as each was folded: the writes of the read models that render once a batch
    /// ([`Renders::EachBatch`]), then what each model held for itself
    /// ([`ReadModel::finish`]), then the versions of source records they replaced, last:
    /// they are packed against the values the batch leaves.
    pub fn render<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
        self.render_models(s)?;
        self.versions.write(s)
    }

    /// [`Fold::render`], but the versions of source records handed over to be packed where
    /// the batch is written, not here ([`crate::history::Replaced`]).
    pub(crate) fn render_handing_over(
        &mut self,
        s: &mut impl State,
    ) -> Result<Replaced, StoreError> {
        self.render_models(s)?;
        self.versions.hand_over()
    }

    fn render_models<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
        self.render_moves(s)?;
        s.changes_at(self.seq);
        self.facts.write(s)?;
        self.models
            .render(s, (self.seq, &self.facts), Renders::EachBatch)?;
        self.models.finish(s)
    }

    /// The price moves the batch applied for races already off, finished, abandoned or
    /// void.
    pub(crate) fn late_prices(&self) -> u64 {
        self.facts.late_prices()
    }

    /// The book of the race of the last price move folded, after it; `None` where the
    /// last event folded was no price move.
    pub(crate) fn book(&self) -> Option<&crate::market::Book> {
        self.book.as_ref()
    }

    /// Bytes of the odds moves held for the journal, not yet written.
    pub(crate) fn journal_bytes(&self) -> usize {
        self.models.journal.bytes()
    }
}
