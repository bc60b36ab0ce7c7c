//! Read models of the racing service: pure folds from feed events to the documents the API
//! serves, and the sled store that holds them with the stream sequence they reached.

mod batch;
mod batched;
mod cards;
mod docs;
mod facts;
mod feed;
mod fold;
mod form;
mod held;
mod history;
mod ids;
mod journal;
mod keys;
mod load;
mod meetings;
mod model;
mod odds;
mod packed;
mod pages;
mod people;
mod profiles;
mod raceday;
mod results;
mod scan;
mod search;
mod state;
mod status;
mod store;
mod written;

pub use batch::{Batch, BatchStats, MemState, Sealed};
pub use docs::{
    answered, etag, published_at, render_odds_move, Doc, FormDoc, FormEntry, ETAG_LEN, HEAD_LEN,
};
pub use feed::{ChangeCursor, ChangePage};
pub use fold::{Fold, Outcome};
pub use history::history_by_event;
pub use ids::AppliedIdStats;
pub use journal::{journal_by_move, OddsMove};
pub use keys::{is_sealed, DocKey};
pub use load::Loader;
pub use meetings::MeetingRow;
pub use people::{is_slug, render_list, season, slug, PersonRow, Role};
pub use raceday::{DayEvent, DayKind};
pub use search::{HorseMatch, MAX_SEARCH_CHARS};
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
}

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// sled failed (disk full, I/O error). The batch did not commit; the caller should stop
    /// projecting and retry from the checkpoint, or report the store unusable.
    #[error("store: {0}")]
    Sled(#[from] sled::Error),
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
        // sled 0.34 says so only in the message of an `ErrorKind::Other` (config.rs).
        matches!(self, StoreError::Sled(sled::Error::Io(e))
            if e.to_string().starts_with("could not acquire lock on"))
    }

    /// Whether sled failed to read or write the store's files (a full disk, an I/O
    /// error): sled 0.34 then fails every later write of the store, until it is opened
    /// again.
    pub fn is_io(&self) -> bool {
        matches!(self, StoreError::Sled(sled::Error::Io(_)))
    }

    /// Whether the store itself is damaged rather than its disk failing: a file of it is
    /// missing (a blob that a page points at: sled opens such a store, and fails only on
    /// the records concerned), or sled found a page corrupt, or a record does not decode.
    /// A rebuild from the log mends it; opening it again would not.
    pub fn is_damage(&self) -> bool {
        match self {
            StoreError::Sled(sled::Error::Io(e)) => e.kind() == std::io::ErrorKind::NotFound,
            StoreError::Sled(sled::Error::Corruption { .. }) | StoreError::Corrupt(_) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod bounded_tests;
#[cfg(test)]
mod discovery_tests;
#[cfg(test)]
mod tally;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod error_tests {
    use super::StoreError;

    #[test]
    fn a_store_that_lost_a_blob_fails_as_damaged_not_as_a_failing_disk() {
        let temp = crate::tests::tempdir();
        let dir = temp.path();
        {
            let db = sled::open(dir).expect("a store");
            // Over sled's 128 KiB a page, kept in a blob file of its own.
            db.insert(b"large", vec![7u8; 300 << 10]).expect("insert");
            db.flush().expect("flush");
        }
        // sled writes its snapshot (where each page is) as it opens a store: from then on
        // the page is found through its blob, no longer by reading the log.
        drop(sled::open(dir).expect("opened again"));
        let blobs = std::fs::read_dir(dir.join("blobs")).expect("blob files");
        let mut lost = 0;
        for blob in blobs {
            std::fs::remove_file(blob.expect("a blob").path()).expect("removed");
            lost += 1;
        }
        assert!(lost > 0, "the large value was kept in a blob file");
        let read = sled::open(dir).and_then(|db| db.get(b"large"));
        let error = StoreError::from(read.expect_err("the lost blob fails the read"));
        assert!(error.is_damage(), "{error}");
        assert!(
            !StoreError::from(sled::Error::Io(std::io::ErrorKind::StorageFull.into())).is_damage()
        );
    }
}
