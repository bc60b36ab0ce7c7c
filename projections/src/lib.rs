//! Read models of the racing service: pure folds from feed events to the documents the API
//! serves, and the sled store that holds them with the stream sequence they reached.

mod analysis;
mod batch;
mod cards;
mod compressed;
mod doc_writes;
mod docs;
mod documents;
mod facts;
mod feed;
mod fold;
mod form;
mod history;
mod horse_runs;
mod ids;
mod journal;
mod keys;
mod kv;
mod load;
mod load_steps;
mod loader_cache;
mod market;
mod meetings;
mod model;
mod odds;
mod pages;
mod people;
mod profiles;
mod race_parts;
mod raceday;
mod results;
mod scan;
mod search;
mod snapshot;
mod state;
mod status;
mod store;
mod subject_entries;

pub use analysis::{changes_analyses, Span, Subject};
pub use batch::{Batch, BatchStats, MemState, Sealed};
pub use docs::{
    answered, etag, published_at, render_odds_move, Doc, FormDoc, FormEntry, OddsMoveDoc, ETAG_LEN,
    HEAD_LEN,
};
pub use feed::{ChangeCursor, ChangePage};
pub use fold::{Fold, Outcome};
pub use history::history_by_event;
pub use horse_runs::took_part;
pub use ids::AppliedIdStats;
pub use journal::{journal_by_move, OddsMove};
pub use keys::{is_sealed, DocKey};
pub use kv::Bytes;
pub use load::Loader;
pub use market::Book;
pub use meetings::MeetingRow;
pub use people::{is_slug, list_key, record_key, render_list, season, slug, PersonRow, Role};
pub use raceday::{DayEvent, DayKind};
pub use search::{HorseMatch, MAX_SEARCH_CHARS};
pub use snapshot::{
    layout, load_snapshot, snapshot_head, verify_snapshot, Expected, SnapshotError, SnapshotHead,
    SnapshotSummary,
};
pub use state::{Item, RaceOdds, Records, Scan, State};
pub use status::RaceStatusRow;
pub use store::{DeadLetter, Options, Store};

/// The OpenAPI schema of each document the API serves, derived from the type that renders
/// it (the form's, whose JSON `FormDoc` writes itself, is checked against rendered forms by
/// the API's tests), each under the name the API description gives it.
#[cfg(feature = "openapi")]
pub mod openapi {
    /// A horse's profile.
    pub type Profile = crate::docs::ProfileDoc<'static>;
    /// A horse's form.
    pub type Form = crate::docs::FormJson;
    /// The results of a date.
    pub type ResultsByDate = crate::docs::ResultsDoc<'static>;
    /// The result of one race.
    pub type RaceResult = crate::docs::SingleRace<'static>;
    /// The race card of a date.
    pub type RaceCard = crate::docs::CardDoc<'static>;
    /// One race of a date's card, as the card lists it.
    pub type CardRace = crate::docs::CardRace<'static>;
    /// The current odds of a race.
    pub type RaceOdds = crate::docs::OddsDoc<'static>;
    /// A page of a race's odds history.
    pub type OddsHistory = crate::pages::OddsHistory<'static>;
    /// A jockey's or a trainer's record.
    pub type PersonRecord = crate::people::PersonDoc;
    /// Every jockey.
    pub type JockeyList = crate::people::JockeyList;
    /// Every trainer.
    pub type TrainerList = crate::people::TrainerList;
    /// The records of a horse, a jockey or a trainer by condition.
    pub type Analysis = crate::analysis::AnalysisDoc;
}

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// sled failed (disk full, I/O error). The batch did not commit; the caller should stop
    /// projecting and retry from the checkpoint, or report the store unusable.
    #[error("store: {0}")]
    Sled(#[from] kv::Error),
    /// A record could not be decoded: the store is damaged or from an incompatible
    /// version. Rebuild the read models from the log.
    #[error("store record damaged: {0}")]
    Corrupt(String),
    /// The store was written by an older version of this crate, in an older layout (its
    /// schema version is given). Nothing is damaged: discard it and rebuild the read
    /// models from the log.
    #[error("read models of schema {0}, older than this version's")]
    OlderSchema(u32),
    /// A read ran past the deadline of its store ([`Store::until`]) and stopped. Nothing
    /// is wrong: the caller should answer that it is busy, or ask for less.
    #[error("the read ran past its deadline")]
    TooLong,
}

impl StoreError {
    /// Whether the store could not be opened because another process holds it open: sled
    /// locks a store's files for the process that opens it. Not damage: the store is
    /// that process's, and nothing may move it or write to it.
    pub fn is_held_elsewhere(&self) -> bool {
        matches!(self, StoreError::Sled(e) if kv::held_elsewhere(e))
    }

    /// Whether sled failed to read or write the store's files (a full disk, an I/O
    /// error): sled 0.34 then fails every later write of the store, until it is opened
    /// again.
    pub fn is_io(&self) -> bool {
        matches!(self, StoreError::Sled(e) if kv::is_io(e))
    }

    /// Whether the store itself is damaged rather than its disk failing: a file of it is
    /// missing (a blob that a page points at: sled opens such a store, and fails only on
    /// the records concerned), or sled found a page corrupt, or a record does not decode.
    /// A rebuild from the log mends it; opening it again would not.
    pub fn is_damage(&self) -> bool {
        match self {
            StoreError::Sled(e) => kv::is_damage(e),
            StoreError::Corrupt(_) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod bounded_tests;
#[cfg(test)]
mod counting_state;
#[cfg(test)]
mod discovery_tests;
#[cfg(test)]
mod tests;
