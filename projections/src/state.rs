//! The storage port of the folds: what a read model reads and writes through, so that
//! the same folds run over a sled batch, a loader's batch, the records as they stood at a
//! point of the log (`as_of`) and an in-memory map in tests; the source records' codec;
//! and the few facts every read model shares.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::kv::Kv;
use crate::kv::StoreError;
use crate::scan::{Item, Scan};

/// Read access to the read models' records: all a render needs, so that the same renders
/// run over the records as they are and as they stood at a point of the log (`as_of`).
pub trait Records {
    /// The value under `key`, including writes made earlier in this batch.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// The records whose keys start with `prefix`, including writes made earlier in this
    /// batch: the first `limit` in key order, or (`Scan::Backward`) the last, last first.
    /// A fold reads a record kept a key per item (a person's rides, a horse's form
    /// entries) this way; of the records as they stood at a point of the log (`as_of`),
    /// only a horse's form entries are read so.
    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError>;
    /// Whether `record`, one whose versions are kept (`keys::is_versioned`), was first
    /// made after the point these records stand at (`as_of`): it held nothing then, nor
    /// did what an event writes with it. Records as they are now were all made by now.
    fn made_after_point(&self, _record: &[u8]) -> Result<bool, StoreError> {
        Ok(false)
    }
}

/// The records as the tree holds them, no batch's writes over them: what a read that
/// assembles a document from records of its own reads.
impl Records for Kv {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(Kv::get(self, key)?.map(|v| v.to_vec()))
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        crate::scan::over_batch(self, &Writes::new(), (prefix, dir, limit))
    }
}

/// Read and write access to the read models, as a fold needs it.
pub trait State: Records {
    /// Sets `key`; visible to later `get`s of the batch.
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>);
    /// Removes `key`.
    fn delete(&mut self, key: Vec<u8>);
    /// Remembers `event_id` as applied; `false` if it was applied before, at any age.
    fn first_seen(&mut self, event_id: u128) -> Result<bool, StoreError>;
    /// The writes and removals of documents that follow are changes made at stream
    /// sequence `seq`: the change feed lists them there (a batch's does; a map in memory
    /// keeps no feed). The fold sets it before each event's writes.
    fn changes_at(&mut self, _seq: u64) {}
    /// Notes a change of the document under `key` at `seq` that no write of its own
    /// carries: one of several price moves rendered together (`odds.rs`).
    fn changed_at(&mut self, _seq: u64, _key: &[u8]) {}
}

/// The current odds of a race (as given for one venue, as given for every venue, or the
/// two merged): the latest win and place price of each runner and the stream sequence
/// that set each. A runner given only one of the two keeps its last other one.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceOdds {
    /// Sequence of the latest `OddsUpdated` folded in.
    pub seq: u64,
    /// Runner to `(win_odds, seq that set it)`.
    pub runners: BTreeMap<String, (f64, u64)>,
    /// Runner to `(place_odds, seq that set it)` (feed v1.2). Left out of the record
    /// while empty, so that a race given win prices only is stored as before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub place: BTreeMap<String, (f64, u64)>,
    /// The win prices' past that the market's moves are read from (`market.rs`).
    #[serde(default, skip_serializing_if = "crate::market::Trail::is_empty")]
    pub trail: crate::market::Trail,
}

impl RaceOdds {
    /// Folds in the prices of one `OddsUpdated` at stream sequence `seq`, given at
    /// `occurred_at` (its envelope's) and stored by JetStream at `published_ms`
    /// (milliseconds since the epoch; 0 where not known). A price cannot have been given
    /// after it was published: a later `occurred_at` counts as its publication, so that a
    /// move dated in the future by mistake does not carry the market's clock past the
    /// moves after it and freeze their 5- and 15-minute windows.
    pub(crate) fn apply(
        &mut self,
        seq: u64,
        (occurred_at, published_ms): (&str, i64),
        odds: &[racing_events::RunnerOdds],
    ) {
        self.seq = seq;
        let at = crate::market::millis(occurred_at).unwrap_or(self.trail.clock);
        let at = if published_ms > 0 {
            at.min(published_ms)
        } else {
            at
        };
        let wins = odds
            .iter()
            .filter_map(|r| Some((r.horse_no.clone(), r.win_odds?)));
        self.trail.apply(seq, at, wins);
        for r in odds {
            if let Some(win) = r.win_odds {
                set_price(&mut self.runners, &r.horse_no, (win, seq));
            }
            if let Some(place) = r.place_odds {
                set_price(&mut self.place, &r.horse_no, (place, seq));
            }
        }
    }

    /// The odds of a venue's race: those given for it, and those given for every venue, each
    /// runner at its latest price; borrowed where only one of them is known, so that a
    /// render of such a race's documents copies none of its prices.
    pub(crate) fn merged<'a>(
        every: Option<&'a RaceOdds>,
        own: Option<&'a RaceOdds>,
    ) -> Option<Cow<'a, RaceOdds>> {
        let (base, over) = match (every, own) {
            (None, None) => return None,
            (Some(one), None) | (None, Some(one)) => return Some(Cow::Borrowed(one)),
            (Some(every), Some(own)) => (every, own),
        };
        let mut view = base.clone();
        view.seq = base.seq.max(over.seq);
        view.trail = base.trail.merged(&over.trail);
        for (prices, over) in [
            (&mut view.runners, &over.runners),
            (&mut view.place, &over.place),
        ] {
            for (horse, &(price, seq)) in over {
                let slot = prices.entry(horse.clone()).or_insert((price, seq));
                if seq > slot.1 {
                    *slot = (price, seq);
                }
            }
        }
        Some(Cow::Owned(view))
    }

    /// The book of the race's current prices, over the runners not `scratched`.
    pub(crate) fn book(&self, scratched: &BTreeSet<String>) -> crate::market::Book {
        let running = |h: &&String| !scratched.contains(*h);
        crate::market::book(
            self.runners
                .iter()
                .filter(|(h, _)| running(h))
                .map(|(h, &(p, _))| (h, p)),
            self.place
                .iter()
                .filter(|(h, _)| running(h))
                .map(|(_, &(p, _))| p),
        )
    }
}

/// Sets a runner's price, copying its number only for a runner not priced before.
fn set_price(prices: &mut BTreeMap<String, (f64, u64)>, horse_no: &str, price: (f64, u64)) {
    match prices.get_mut(horse_no) {
        Some(slot) => *slot = price,
        None => {
            prices.insert(horse_no.to_owned(), price);
        }
    }
}

/// The record under `key`, decoded, if there is one.
pub(crate) fn read<T: DeserializeOwned>(
    s: &impl Records,
    key: &[u8],
) -> Result<Option<T>, StoreError> {
    decode(s.get(key)?.as_deref(), || {
        String::from_utf8_lossy(key).into_owned()
    })
}

/// A source record as [`read`] gives it, from its stored `bytes`; `what` names it in the
/// error of a record that does not decode.
pub(crate) fn decode<T: DeserializeOwned>(
    bytes: Option<&[u8]>,
    what: impl FnOnce() -> String,
) -> Result<Option<T>, StoreError> {
    bytes
        .map(|bytes| {
            serde_json::from_slice(bytes)
                .map_err(|e| StoreError::Corrupt(format!("{}: {e}", what())))
        })
        .transpose()
}

/// Stores a source record, as JSON.
pub(crate) fn write<T: Serialize>(s: &mut impl State, key: Vec<u8>, value: &T) {
    // Source records are plain data: serialising them cannot fail.
    s.put(key, serde_json::to_vec(value).unwrap_or_default());
}

/// The race number of an event: validated before an event reaches a fold, so one out of
/// its range means the fold was handed an event that skipped validation.
pub(crate) fn race_no(n: i64) -> Result<u8, StoreError> {
    racing_events::RaceNumber::try_from(n)
        .map(racing_events::RaceNumber::get)
        .map_err(|problem| {
            StoreError::Corrupt(format!("an unvalidated event: race_number {problem}"))
        })
}

/// What a read whose cost grows with what it answers may spend: it counts each record it
/// reads in the store's count ([`crate::store::Store::records_read`]) and gives up, with
/// [`StoreError::TooLong`], once the store's deadline ([`crate::store::Store::until`]) has passed.
#[derive(Clone, Copy)]
pub(crate) struct Reads<'a> {
    pub(crate) count: &'a AtomicU64,
    pub(crate) until: Option<Instant>,
}

impl Reads<'_> {
    /// Notes one record read; an error once past the deadline.
    pub(crate) fn note(self) -> Result<(), StoreError> {
        self.count.fetch_add(1, Ordering::Relaxed);
        match self.until {
            Some(until) if Instant::now() >= until => Err(StoreError::TooLong),
            _ => Ok(()),
        }
    }
}

/// The records a batch wrote (`Some`) or removed (`None`), by key.
pub(crate) type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;
