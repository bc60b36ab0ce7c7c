//! The read API: everything the service's readers (the HTTP handlers, the live sessions,
//! the webhooks' scanner) may ask of the read models, in one place, and nothing that
//! writes. The store's reads are written beside the read models they read (`meetings.rs`,
//! `journal.rs`, `feed.rs`, ...); a [`Reader`] is the door to them, so that what a handler
//! may ask is read here, and a handler that holds one cannot start a batch, move the
//! checkpoint or load a snapshot.

use std::time::Instant;

use crate::analysis::{Span, Subject};
use crate::docs::Doc;
use crate::feed::{ChangeCursor, ChangePage};
use crate::journal::OddsMove;
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::meetings::MeetingRow;
use crate::people::docs::{PersonRow, Role};
use crate::raceday::DayEvent;
use crate::search::HorseMatch;
use crate::status::RaceStatusRow;
use crate::store::Store;

/// The reads of one store, and none of its writes.
#[derive(Clone)]
pub struct Reader {
    store: Store,
}

impl Reader {
    /// The reads of `store`.
    pub fn of(store: &Store) -> Reader {
        Reader {
            store: store.clone(),
        }
    }

    /// These reads, giving up at `deadline` where their cost grows with what they answer
    /// (a search, a page of odds history or of the change feed, a document as of a point):
    /// [`StoreError::TooLong`] once it has passed.
    pub fn until(&self, deadline: Instant) -> Reader {
        Reader {
            store: self.store.until(deadline),
        }
    }
}

/// Each read, by its name on [`Store`], where its documentation lives.
macro_rules! reads {
    ($($(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $answer:ty;)*) => {
        impl Reader {
            $(
                $(#[$doc])*
                pub fn $name(&self $(, $arg: $ty)*) -> $answer {
                    self.store.$name($($arg),*)
                }
            )*
        }
    };
}

reads! {
    /// The stream sequence every document answers as of ([`Store::checkpoint`]).
    fn checkpoint(&self) -> Result<u64, StoreError>;
    /// The stream the read models were built from ([`Store::stream`]).
    fn stream(&self) -> Result<Option<String>, StoreError>;
    /// A document by its stored key ([`Store::doc_by_key`]).
    fn doc_by_key(&self, key: &[u8]) -> Result<Option<Doc>, StoreError>;
    /// A document as it stood at position `seq` ([`Store::doc_as_of`]).
    fn doc_as_of(&self, key: DocKey<'_>, seq: u64) -> Result<Option<Doc>, StoreError>;
    /// A page of the change feed ([`Store::change_page`]).
    fn change_page(&self, from: ChangeCursor, limit: usize) -> Result<ChangePage, StoreError>;
    /// A horse's, a jockey's or a trainer's records by condition ([`Store::analysis`]).
    fn analysis(
        &self,
        subject: Subject<'_>,
        span: Span<'_>,
        as_of: Option<u64>
    ) -> Result<Option<Doc>, StoreError>;
    /// A page of a race's odds moves ([`Store::odds_history`]).
    fn odds_history(
        &self,
        date: &str,
        race_number: u8,
        venue: Option<&str>,
        after: u64,
        limit: usize
    ) -> Result<Option<Vec<u8>>, StoreError>;
    /// The odds moves of a date after a position ([`Store::odds_moves`]).
    fn odds_moves(
        &self,
        date: &str,
        after: u64,
        race: Option<u8>,
        limit: usize
    ) -> Result<Vec<OddsMove>, StoreError>;
    /// How many odds moves of a date follow a position ([`Store::count_odds_moves`]).
    fn count_odds_moves(&self, date: &str, after: u64, race: Option<u8>) -> Result<u64, StoreError>;
    /// A date's race-day events after a position ([`Store::race_day`]).
    fn race_day(&self, date: &str, after: u64, limit: usize) -> Result<Vec<DayEvent>, StoreError>;
    /// Every date's race-day events after a position ([`Store::race_day_after`]).
    fn race_day_after(&self, after: u64, limit: usize) -> Result<Vec<(String, DayEvent)>, StoreError>;
    /// The statuses of a date's races ([`Store::race_statuses`]).
    fn race_statuses(&self, date: &str, race: Option<u8>) -> Result<Vec<RaceStatusRow>, StoreError>;
    /// A race's odds documents, one a venue and the one without ([`Store::odds_docs`]).
    fn odds_docs(&self, date: &str, race_number: u8) -> Result<Vec<Doc>, StoreError>;
    /// The races whose odds changed after a position ([`Store::odds_changed_since`]).
    fn odds_changed_since(&self, date: Option<&str>, after: u64) -> Result<Vec<(String, u8)>, StoreError>;
    /// The meetings of the dates from `from` to `to` ([`Store::meetings`]).
    fn meetings(&self, from: &str, to: &str) -> Result<Vec<MeetingRow>, StoreError>;
    /// The first date with a meeting from `from` to `to` ([`Store::first_meeting_date`]).
    fn first_meeting_date(&self, from: &str, to: &str) -> Result<Option<String>, StoreError>;
    /// Horses by part of a name ([`Store::find_horses`]).
    fn find_horses(&self, text: &str, limit: usize) -> Result<Vec<HorseMatch>, StoreError>;
    /// The list of jockeys or of trainers ([`Store::people`]).
    fn people(&self, role: Role) -> Result<Option<Doc>, StoreError>;
    /// The rows of that list ([`Store::people_rows`]).
    fn people_rows(&self, role: Role) -> Result<Option<(u64, Vec<PersonRow>)>, StoreError>;
}
