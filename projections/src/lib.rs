//! Read models of the racing service: pure folds from feed events to the documents the API
//! serves, and the sled store that holds them with the stream sequence they reached.

mod analysis;
mod batch;
mod cards;
mod compressed;
mod dictionaries;
mod doc_writes;
mod docs;
mod documents;
mod encoding;
mod facts;
mod feed;
mod filling;
mod fold;
mod form;
mod forms;
mod history;
mod horse_runs;
mod ids;
mod journal;
mod key_filter;
mod keys;
mod kv;
mod load;
mod load_steps;
mod loader_cache;
mod market;
mod meetings;
mod model;
mod odds;
#[cfg(feature = "openapi")]
pub mod openapi;
mod pages;
mod people;
mod profiles;
mod race_parts;
mod raceday;
mod read_cache;
mod reader;
mod results;
mod scan;
mod schema;
mod search;
mod snapshot;
mod state;
mod status;
mod store;
mod subject_entries;
mod write_counts;
mod write_set;

pub use analysis::{changes_analyses, Span, Subject};
pub use batch::{Batch, BatchStats, MemState, Sealed};
pub use dictionaries::file_name as dictionary_file;
pub use docs::form::{FormDoc, FormEntry};
pub use docs::odds::{published_at, render_odds_move, OddsMoveDoc};
pub use docs::{answered, etag, Doc, ETAG_LEN, HEAD_LEN};
pub use feed::{ChangeCursor, ChangePage};
pub use fold::{Fold, Outcome};
pub use history::history_by_event;
pub use horse_runs::took_part;
pub use ids::AppliedIdStats;
pub use journal::{journal_by_move, OddsMove};
pub use keys::doc::DocKey;
pub use keys::is_sealed;
pub use keys::kinds::{kind_of, Packed, KINDS, OTHER};
pub use kv::{Bytes, StoreError};
pub use load::{Loader, Written};
pub use market::Book;
pub use meetings::MeetingRow;
pub use people::docs::{is_slug, render_list, season, slug, PersonRow, Role};
pub use people::{list_key, record_key};
pub use raceday::{DayEvent, DayKind};
pub use reader::Reader;
pub use scan::{Item, Scan};
pub use search::index::{MAX_SEARCH_CHARS, MIN_SEARCH_CHARS};
pub use search::HorseMatch;
pub use snapshot::{
    layout, load_snapshot, snapshot_head, verify_snapshot, Copied, Expected, SnapshotError,
    SnapshotHead, SnapshotSummary,
};
pub use state::{RaceOdds, Records, State};
pub use status::RaceStatusRow;
pub use store::{DeadLetter, Options, Store};
pub use write_counts::{written, KindWritten};

#[cfg(test)]
mod bounded_tests;
#[cfg(test)]
mod counting_state;
#[cfg(test)]
mod discovery_tests;
#[cfg(test)]
mod tests;
