//! The store around the folds: one ordered map (`kv.rs`) holds every read model and the
//! checkpoint, so a batch of changes and the stream sequence it reached commit in one
//! atomic write. A restart resumes after the checkpoint, and nothing is applied twice:
//! the `event_id`s applied are kept with them (`ids.rs`).

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::docs::Doc;
use crate::ids::{self, AppliedIdStats, AppliedIds};
use crate::keys;
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::kv::{Bytes, Kv};
use crate::schema::{SCHEMA, SCHEMA_KEY};
use crate::state::{RaceOdds, Reads};

/// How much of a refused payload a dead letter keeps for inspection; the whole message
/// stays in the stream at its sequence.
pub(crate) const EXCERPT_CHARS: usize = 512;

/// An event that was refused, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// Stream sequence of the message.
    pub seq: u64,
    /// Subject it was published on.
    pub subject: String,
    /// The rule it broke.
    pub reason: String,
    /// The start of the payload, lossily decoded.
    pub excerpt: String,
}

/// How a store is set up; [`Options::default`] is what [`Store::open`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Bytes of the first layer of the Bloom filter held in memory in front of the applied
    /// `event_id`s: it rules out all but about 0.5% of new ids up to 0.72 ids a byte (24 M
    /// for the default 32 MiB); each id it does not rule out is looked up on disk, in each
    /// run of ids. Past that a new layer twice the size of the newest takes the next ids,
    /// and all of them together rule out all but about 1%. A store saved with a filter
    /// whose first layer was of another size builds its filter again from every id, once.
    pub id_filter_bytes: usize,
    /// Most bytes of all the filter's layers together (at least the first's): past what
    /// they hold within 1% (about 290 M ids for the defaults), the newest layer lets
    /// through more new ids with every id.
    pub id_filter_most_bytes: usize,
    /// Bytes of sled's cache of the tree's pages. Every write of a commit walks the
    /// tree down to its leaf, and a page no longer in the cache is read back from the log
    /// and decoded: while the store is built, a cache smaller than the pages a batch
    /// touches spends most of the commit doing that.
    pub cache_bytes: u64,
    /// Most bytes of records a replay into an empty store holds in memory while it loads
    /// ([`crate::load::Loader`]), 2 GiB by default; 0: the replay commits batch after batch, with
    /// no loader.
    pub replay_bytes: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            id_filter_bytes: 32 << 20,
            id_filter_most_bytes: 512 << 20,
            cache_bytes: 256 << 20,
            replay_bytes: 2 << 30,
        }
    }
}

/// What one batch of a store hands on to the next ([`Store::hand_on`]).
pub(crate) type Handed = Box<dyn std::any::Any + Send>;

/// What `slot` holds, taken, where it was handed on at `checkpoint`.
fn taken(slot: &Mutex<Option<(u64, Handed)>>, checkpoint: u64) -> Option<Handed> {
    match slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some((at, handed)) if at == checkpoint => Some(handed),
        _ => None,
    }
}

/// The read models on disk.
#[derive(Clone)]
pub struct Store {
    /// Every read model and the checkpoint, in one ordered map.
    pub(crate) kv: Kv,
    options: Options,
    /// The applied `event_id`s, loaded by the first batch: their filter, and the runs
    /// that hold them on disk.
    ids: Arc<Mutex<Option<AppliedIds>>>,
    /// Records the reads that page or look up read (see [`Store::records_read`]).
    reads: Arc<AtomicU64>,
    /// When such reads give up ([`Store::until`]).
    until: Option<Instant>,
    /// Its directory: sled's files, and a bulk load's redo file while it writes a batch
    /// in steps (`load_steps.rs`).
    dir: Arc<Path>,
    /// What the last batch sealed handed on to the next, and the checkpoint it ended at
    /// ([`Store::hand_on`]).
    handed: Arc<Mutex<Option<(u64, Handed)>>>,
    /// What the last batch written handed on to the next batch's write, and the
    /// checkpoint it ended at ([`Store::hand_on_to_write`]).
    handed_to_write: Arc<Mutex<Option<(u64, Handed)>>>,
}

impl Store {
    /// Opens (or creates) the store in `dir`, with the default [`Options`].
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Store::open_with(dir, Options::default())
    }

    /// [`Store::open_with`], waiting up to `patience` for a store that is being let go
    /// of: sled lets go of a dropped store's files only once its threads end, a moment
    /// later (in this process, or in one that is exiting). Where it is still held after
    /// that, the error says so ([`StoreError::is_held_elsewhere`]).
    pub fn open_once_let_go(
        dir: &Path,
        options: Options,
        patience: std::time::Duration,
    ) -> Result<Store, StoreError> {
        let deadline = Instant::now() + patience;
        loop {
            match Store::open_with(dir, options) {
                Err(e) if e.is_held_elsewhere() && Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                opened => return opened,
            }
        }
    }

    /// Opens (or creates) the store in `dir`.
    pub fn open_with(dir: &Path, options: Options) -> Result<Store, StoreError> {
        let kv = Kv::open(dir, options.cache_bytes)?;
        match kv.get(SCHEMA_KEY)? {
            Some(v) if v.as_ref() != SCHEMA => {
                let found = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|v| v.parse::<u32>().ok());
                let current = std::str::from_utf8(SCHEMA)
                    .ok()
                    .and_then(|v| v.parse().ok());
                return Err(match (found, current) {
                    (Some(found), Some(current)) if found < current => {
                        StoreError::OlderSchema(found)
                    }
                    _ => StoreError::Corrupt(format!(
                        "schema {} where {} is expected",
                        String::from_utf8_lossy(&v),
                        String::from_utf8_lossy(SCHEMA)
                    )),
                });
            }
            Some(_) => {}
            None => kv.put(SCHEMA_KEY, SCHEMA)?,
        }
        // A load's batch that a crash cut short is whole before anything reads.
        crate::load_steps::open(&kv, dir)?;
        Ok(Store {
            kv,
            options,
            ids: Arc::default(),
            reads: Arc::default(),
            until: None,
            dir: dir.into(),
            handed: Arc::default(),
            handed_to_write: Arc::default(),
        })
    }

    /// Keeps what a batch that ended at `checkpoint` hands on to the batch that starts
    /// there (the fold's, `fold.rs`: typed there, as the store is below the fold).
    pub(crate) fn hand_on(&self, checkpoint: u64, handed: Handed) {
        *self.handed.lock().unwrap_or_else(|p| p.into_inner()) = Some((checkpoint, handed));
    }

    /// What the last batch handed on, for a batch that starts at `checkpoint`: nothing
    /// where it ended elsewhere (its write failed, and the fold starts again from the
    /// store's checkpoint) or nothing was handed on. Taken, so that no two batches share
    /// it.
    pub(crate) fn handed(&self, checkpoint: u64) -> Option<Handed> {
        taken(&self.handed, checkpoint)
    }

    /// Keeps what the write of a batch that ended at `checkpoint` hands on to the write of
    /// the batch that starts there (the packing's runs of versions, `batch.rs`): after it
    /// is written, as batches are written in the order of the log.
    pub(crate) fn hand_on_to_write(&self, checkpoint: u64, handed: Handed) {
        *self
            .handed_to_write
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some((checkpoint, handed));
    }

    /// What the last batch written handed on, for the write of a batch that starts at
    /// `checkpoint`, as [`Store::handed`] answers.
    pub(crate) fn handed_to_write(&self, checkpoint: u64) -> Option<Handed> {
        taken(&self.handed_to_write, checkpoint)
    }

    /// Its directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many records the reads whose cost is bounded by what they answer have read
    /// from the tree since the store was opened: the search's index entries, the odds
    /// journal's chunks, the change feed's records. For the tests and the benchmark that
    /// hold each request's work to what it returns.
    pub fn records_read(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// This store, for reads that give up at `deadline`: a search, a page of odds history
    /// or of the change feed, a document as of a point, each fails with
    /// [`StoreError::TooLong`] once it has passed, so that a request that reads more
    /// than its time allows stops reading.
    pub fn until(&self, deadline: Instant) -> Store {
        Store {
            until: Some(deadline),
            ..self.clone()
        }
    }

    /// The count and deadline of the reads whose cost grows with what they answer.
    pub(crate) fn reads(&self) -> Reads<'_> {
        Reads {
            count: &self.reads,
            until: self.until,
        }
    }

    /// The options the store was opened with.
    pub fn options(&self) -> Options {
        self.options
    }

    fn read_u64(&self, key: &[u8]) -> Result<u64, StoreError> {
        Ok(self
            .kv
            .get(key)?
            .map(|v| decode_u64(&v))
            .transpose()?
            .unwrap_or(0))
    }

    /// The last stream sequence whose effects are stored; 0 for an empty store.
    pub fn checkpoint(&self) -> Result<u64, StoreError> {
        self.read_u64(keys::CHECKPOINT)
    }

    /// The stream the read models were built from, as [`Store::set_stream`] recorded it.
    pub fn stream(&self) -> Result<Option<String>, StoreError> {
        self.kv
            .get(keys::STREAM)?
            .map(|v| {
                String::from_utf8(v.to_vec())
                    .map_err(|_| StoreError::Corrupt("the stream's identity".into()))
            })
            .transpose()
    }

    /// Records the stream the read models are built from (its name and creation time):
    /// a checkpoint means something only in the stream it counts messages of.
    pub fn set_stream(&self, identity: &str) -> Result<(), StoreError> {
        self.kv.put(keys::STREAM, identity.as_bytes())
    }

    /// Reads the records of `keys`, so that the pages holding them are in sled's cache:
    /// a store just opened has none there, and each first read of a page waits to read
    /// it back from the log and decode it. Returns how many of the keys it holds.
    pub fn warm<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Result<usize, StoreError> {
        let mut held = 0;
        for key in keys {
            held += usize::from(self.kv.get(key)?.is_some());
        }
        Ok(held)
    }

    /// The current odds given for a race: for one venue's race, or (`None`) those given
    /// without a venue, for the race of that number at every venue.
    pub fn odds(
        &self,
        date: &str,
        race_number: u8,
        venue: Option<&str>,
    ) -> Result<Option<RaceOdds>, StoreError> {
        self.kv
            .get(keys::odds(date, race_number, venue))?
            .map(|v| serde_json::from_slice(&v).map_err(|e| StoreError::Corrupt(e.to_string())))
            .transpose()
    }

    /// The odds documents of a race, as a `snapshot` sends them: one for each venue of
    /// the race with odds, or, where no venue of it is known, the one without a venue
    /// (`venue` null). Empty when the race has no odds.
    pub fn odds_docs(&self, date: &str, race_number: u8) -> Result<Vec<Doc>, StoreError> {
        let unnamed = DocKey::Odds {
            date,
            race_number,
            venue: None,
        }
        .key();
        // Every venue's key is the unnamed one's with the venue after it.
        let mut venues = Vec::new();
        let mut only = None;
        for item in self.kv.prefix(&unnamed) {
            let (key, stored) = item?;
            if crate::docs::alias_of(&stored).is_some() {
                // The main meeting's, listed under its venue.
                continue;
            }
            let doc = Doc::new(stored).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "document {} has no ETag",
                    String::from_utf8_lossy(&key)
                ))
            })?;
            if key.len() == unnamed.len() {
                only = Some(doc);
            } else {
                venues.push(doc);
            }
        }
        if venues.is_empty() {
            venues.extend(only);
        }
        Ok(venues)
    }

    /// The stream sequence of the latest odds update in the store; 0 for none.
    pub fn latest_odds_seq(&self) -> Result<u64, StoreError> {
        self.read_u64(keys::ODDS_SEQ)
    }

    /// The races (of `date`, or of every date) whose odds changed after stream sequence
    /// `after`, at any venue, as `(date, race_number)` in date and race order.
    pub fn odds_changed_since(
        &self,
        date: Option<&str>,
        after: u64,
    ) -> Result<Vec<(String, u8)>, StoreError> {
        let mut prefix = keys::ODDS_PREFIX.to_vec();
        if let Some(d) = date {
            prefix.extend_from_slice(d.as_bytes());
            prefix.push(0);
        }
        let mut out: Vec<(String, u8)> = Vec::new();
        for item in self.kv.prefix(&prefix) {
            let (k, v) = item?;
            let race: RaceOdds =
                serde_json::from_slice(&v).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if race.seq <= after {
                continue;
            }
            let Some((d, n, _)) = keys::parse_odds(&k) else {
                return Err(StoreError::Corrupt("odds record key".into()));
            };
            // A race's records (for every venue, for each venue) follow one another.
            if out
                .last()
                .is_none_or(|(date, race)| (date.as_str(), *race) != (d, n))
            {
                out.push((d.to_owned(), n));
            }
        }
        Ok(out)
    }

    /// Dead letters from sequence `from` on, oldest first, at most `limit`.
    pub fn dead_letters(&self, from: u64, limit: usize) -> Result<Vec<DeadLetter>, StoreError> {
        let start = keys::dead(from);
        let mut out = Vec::new();
        for item in self.kv.range(start..).take(limit) {
            let (k, v) = item?;
            if !k.starts_with(keys::DEAD_PREFIX) {
                break;
            }
            out.push(serde_json::from_slice(&v).map_err(|e| StoreError::Corrupt(e.to_string()))?);
        }
        Ok(out)
    }

    /// Every `event_id` applied so far, read from the tree: every id, for checks and
    /// tests (the store itself never holds them all).
    pub fn applied_event_ids(&self) -> Result<HashSet<u128>, StoreError> {
        ids::read_all(&self.kv)
    }

    /// How the applied `event_id`s stand (loading them if no batch has yet).
    pub fn applied_id_stats(&self) -> Result<AppliedIdStats, StoreError> {
        self.with_ids(|ids| Ok(ids.stats()))
    }

    /// Loads the applied ids (their saved filter, and the runs it lacks), if no batch has
    /// yet: otherwise the first batch loads them, and what waits for that batch waits for
    /// them too (for a store of many ids, a long wait for a live update).
    pub fn load_applied_ids(&self) -> Result<(), StoreError> {
        self.with_ids(|_| Ok(()))
    }

    /// Does all the upkeep of the applied ids that is due (merges of runs, a save of their
    /// filter, removals of what those replaced) at once, for a store about to be handed to
    /// a process that serves reads: a rebuild's, before its worker closes it. Left to the
    /// service, it held the first batches after the swap for a long while, writing under
    /// sled's process-wide lock that reads wait for.
    pub fn settle_applied_ids(&self) -> Result<(), StoreError> {
        self.with_ids(|ids| ids.settle(&self.kv))
    }

    /// Runs `f` on the applied ids, loading them on first use.
    pub(crate) fn with_ids<T>(
        &self,
        f: impl FnOnce(&mut AppliedIds) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        let ids = match &mut *ids {
            Some(ids) => ids,
            empty => empty.insert(AppliedIds::load(
                &self.kv,
                self.options.id_filter_bytes,
                self.options.id_filter_most_bytes,
            )?),
        };
        f(ids)
    }

    /// How many handles of this store there are, this one included (each clone is one).
    /// sled writes to a store's directory when its last handle drops (a flush, which
    /// can create files there): a directory is removed only once no handle is left.
    pub fn handles(&self) -> usize {
        Arc::strong_count(&self.ids)
    }

    /// Writes everything committed so far to disk.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.kv.flush().await
    }

    /// The statuses given for the races of `date` (of race `race` only, if given), in
    /// race order: for each race, the one given for every venue first, if any, then each
    /// venue's own (the later of it and the one for every venue, as the documents give
    /// it). One prefix scan of the status records.
    pub fn race_statuses(
        &self,
        date: &str,
        race: Option<u8>,
    ) -> Result<Vec<crate::status::RaceStatusRow>, StoreError> {
        crate::status::rows(self.kv.prefix(keys::statuses(date, race)))
    }

    /// Every record of the read models (documents, the folds' own state, dead letters,
    /// checkpoints) as `(key, bytes)`, in key order, each as it is read (unpacked where the
    /// store packed it): for checks that two stores hold the
    /// same state, not only the same documents. Stop at the first error, as for
    /// [`Store::documents`].
    pub fn records(&self) -> impl Iterator<Item = Result<(Bytes, Bytes), StoreError>> {
        self.kv.all()
    }

    /// Every record as [`Store::records`] gives it, but as it is stored: packed where the
    /// store packs its kind ([`crate::KINDS`]). What the store's bytes on disk are made of.
    pub fn stored_records(&self) -> impl Iterator<Item = Result<(Bytes, Bytes), StoreError>> {
        self.kv.stored()
    }

    /// Reads every record once and decodes the sequence records: a check at start-up
    /// that the store is whole, since sled opens some damaged stores (a lost blob, a
    /// zeroed page) and fails only on reading the records concerned. Returns how many
    /// records there are; one pass over the store.
    ///
    /// `go_on` is asked every few thousand records; the check stops early, with `None`,
    /// once it says no (the service stopping).
    pub fn verify(&self, go_on: impl Fn() -> bool) -> Result<Option<u64>, StoreError> {
        let mut count = 0;
        for item in self.kv.stored() {
            if count % 4096 == 0 && !go_on() {
                return Ok(None);
            }
            let (key, value) = item?;
            if key.as_ref() == keys::CHECKPOINT || key.as_ref() == keys::ODDS_SEQ {
                decode_u64(&value)?;
            }
            if key.as_ref() == keys::IDS_MANIFEST {
                ids::check_manifest(&self.kv)?;
            }
            count += 1;
        }
        Ok(Some(count))
    }
}

pub(crate) fn decode_u64(v: &[u8]) -> Result<u64, StoreError> {
    v.try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::Corrupt("a sequence record is not 8 bytes".into()))
}
