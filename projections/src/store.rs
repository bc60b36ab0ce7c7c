//! The sled store around the folds: one tree holds every read model and the checkpoint, so
//! a batch of changes and the stream sequence it reached commit in one atomic
//! `apply_batch`. A restart resumes after the checkpoint, and nothing is applied twice:
//! the `event_id`s applied are kept with them (`ids.rs`).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use racing_events::Envelope;
use serde::{Deserialize, Serialize};

use crate::docs::Doc;
use crate::feed::ChangedDocs;
use crate::fold::{Fold, Item, Outcome, RaceOdds, Records, Scan, State};
use crate::ids::{self, AppliedIdStats, AppliedIds, Seen};
use crate::journal::{self, OddsMove};
use crate::keys::{self, DocKey};
use crate::load::Held;
use crate::StoreError;

/// Version of the key layout and record formats; a store of another version is rebuilt.
/// 2: a record per horse's form, per batch's applied `event_id`s; no profile record.
/// 3: every document headed by its `ETag`.
/// 4: odds and scratchings per venue where given; odds documents per venue, with `venue`.
/// 5: the odds journal (every applied `OddsUpdated`), no records of ignored odds; applied
///    `event_id`s in sorted runs and a saved filter (`ids.rs`), not a record per batch;
///    the versions of source records and form changes (`history.rs`), the change feed.
/// 6: the full Hong Kong record (feed contract v1.1) in results and form entries: stored
///    results and form changes carry the new fields, and every form entry the race's name,
///    going and class and the runner's trainer; meetings by date, the horse-name index,
///    jockeys' and trainers' rides and documents. (Documents have carried their sequence
///    after the ETag since the history of #15, stored under 5: this bump rebuilds those too.)
/// 7: jockeys' and trainers' rides a record per person and season, beside a summary of
///    their figures by season, in place of one record of every ride of a career.
/// 8: the odds journal in chunks, a record per batch and date (`journal.rs`), in place of
///    a record per move.
/// 9: a horse's form record without its entries' JSON, which its form document holds
///    (`form.rs`): each touched form is written once a batch, not twice.
/// 10: the change feed a record per batch, holding the keys of the documents it changed, in
///    place of a record per document and batch; the changes of a horse's form a record per
///    batch (`form.rs`), in place of a record per change.
/// 11: the versions of a source record a record per batch (`batched.rs`), in place of a
///    record per version.
/// 12: the odds journal's chunks a record per batch and race, in place of per batch and
///    date; the change feed's record of a batch in parts of 64 documents; the horse-name
///    index (`search.rs`).
/// 13: a document without a venue that is the main meeting's an alias of it, not a copy.
/// 14: the versions of a record the values changes replaced, not a copy of every write;
///    the odds journal's chunks and the records of a batch's entries packed (zstd);
///    people's rides a record a ride and their figures a record a season; a horse's
///    names a record a horse and one a date; a horse's form a record per entry and the
///    versions those replaced (`form.rs`), its document's key holding only its head.
const SCHEMA: &[u8] = b"14";
const SCHEMA_KEY: &[u8] = b"meta\0schema";

/// How much of a refused payload a dead letter keeps for inspection; the whole message
/// stays in the stream at its sequence.
const EXCERPT_CHARS: usize = 512;

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
    /// ([`crate::Loader`]).
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

/// The read models on disk.
#[derive(Clone)]
pub struct Store {
    db: sled::Db,
    pub(crate) tree: sled::Tree,
    options: Options,
    /// The applied `event_id`s, loaded by the first batch: their filter, and the runs
    /// that hold them on disk.
    ids: Arc<Mutex<Option<AppliedIds>>>,
    /// Records the reads that page or look up read (see [`Store::records_read`]).
    reads: Arc<AtomicU64>,
    /// When such reads give up ([`Store::until`]).
    until: Option<Instant>,
}

/// What a read whose cost grows with what it answers may spend: it counts each record it
/// reads in the store's count ([`Store::records_read`]) and gives up, with
/// [`StoreError::TooLong`], once the store's deadline ([`Store::until`]) has passed.
#[derive(Clone, Copy)]
pub(crate) struct Reads<'a> {
    count: &'a AtomicU64,
    until: Option<Instant>,
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

impl Store {
    /// Opens (or creates) the store in `dir`, with the default [`Options`].
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Store::open_with(dir, Options::default())
    }

    /// Opens (or creates) the store in `dir`.
    pub fn open_with(dir: &Path, options: Options) -> Result<Store, StoreError> {
        // (sled's high-throughput mode was tried: the replay was no faster for it than
        // with this cache alone; BENCHMARKS.md, "Performance (#17)".)
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(options.cache_bytes)
            .open()?;
        let tree = db.open_tree("read_models")?;
        match tree.get(SCHEMA_KEY)? {
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
            None => {
                tree.insert(SCHEMA_KEY, SCHEMA)?;
            }
        }
        Ok(Store {
            db,
            tree,
            options,
            ids: Arc::default(),
            reads: Arc::default(),
            until: None,
        })
    }

    /// The tree of the read models, for tests that look at records.
    #[cfg(test)]
    pub(crate) fn tree(&self) -> &sled::Tree {
        &self.tree
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
            .tree
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
        self.tree
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
        self.tree.insert(keys::STREAM, identity.as_bytes())?;
        Ok(())
    }

    /// A served document, as stored.
    pub fn doc(&self, key: DocKey<'_>) -> Result<Option<Doc>, StoreError> {
        self.doc_by_key(&key.key())
    }

    /// A served document by its tree key ([`DocKey::key`]).
    pub fn doc_by_key(&self, key: &[u8]) -> Result<Option<Doc>, StoreError> {
        let Some(mut stored) = self.tree.get(key)? else {
            return Ok(None);
        };
        if let Some((seq, venue)) = crate::docs::alias_of(&stored) {
            // The document without a venue is the main meeting's, stored under its venue.
            let target = crate::docs::alias_target(key, venue);
            let Some(found) = self.tree.get(&target)? else {
                return Err(StoreError::Corrupt(format!(
                    "document {} names a venue without one",
                    String::from_utf8_lossy(key)
                )));
            };
            stored = crate::docs::aliased(seq, found);
        } else if let Some(DocKey::Form(horse)) = DocKey::parse(key) {
            // A form's key holds its head; its entries are records of their own.
            stored = crate::form::read(&self.tree, horse, &stored)?;
        }
        Doc::new(stored).map(Some).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "document {} has no ETag",
                String::from_utf8_lossy(key)
            ))
        })
    }

    /// Reads the records of `keys`, so that the pages holding them are in sled's cache:
    /// a store just opened has none there, and each first read of a page waits to read
    /// it back from the log and decode it. Returns how many of the keys it holds.
    pub fn warm<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Result<usize, StoreError> {
        let mut held = 0;
        for key in keys {
            held += usize::from(self.tree.get(key)?.is_some());
        }
        Ok(held)
    }

    /// Up to `limit` moves of the odds journal of `date` after stream sequence `after`, in
    /// the order they went live: every move of the date, or (`race`) of one race number.
    pub fn odds_moves(
        &self,
        date: &str,
        after: u64,
        race: Option<u8>,
        limit: usize,
    ) -> Result<Vec<OddsMove>, StoreError> {
        let mut out = Vec::new();
        if limit > 0 {
            journal::each_move(&self.tree, self.reads(), date, after, race, |m| {
                out.push(m);
                out.len() < limit
            })?;
        }
        Ok(out)
    }

    /// How many moves of `date` (of `race` only, if given) the journal holds after `after`,
    /// counting no further than `cap`.
    pub fn count_odds_moves(
        &self,
        date: &str,
        after: u64,
        race: Option<u8>,
        cap: u64,
    ) -> Result<u64, StoreError> {
        let mut count = 0;
        if cap > 0 {
            journal::each_move(&self.tree, self.reads(), date, after, race, |_| {
                count += 1;
                count < cap
            })?;
        }
        Ok(count)
    }

    /// A served document as it was once the log up to `seq` had been applied (rendered
    /// from the versions of the records it is made from), or `None` where there was none
    /// then. Its `ETag` is that of the same bytes served then, so it never changes; its
    /// sequence ([`Doc::seq`]) is `seq`.
    pub fn doc_as_of(&self, key: DocKey<'_>, seq: u64) -> Result<Option<Doc>, StoreError> {
        let past = crate::history::AsOf {
            tree: &self.tree,
            reads: self.reads(),
            seq,
        };
        let Some(body) = crate::fold::render_doc(&past, key)? else {
            return Ok(None);
        };
        let form = matches!(key, DocKey::Form(_));
        Doc::new(crate::docs::seal(form, &body, seq).into())
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt("a sealed document".into()))
    }

    /// The current odds given for a race: for one venue's race, or (`None`) those given
    /// without a venue, for the race of that number at every venue.
    pub fn odds(
        &self,
        date: &str,
        race_number: u8,
        venue: Option<&str>,
    ) -> Result<Option<RaceOdds>, StoreError> {
        self.tree
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
        for item in self.tree.scan_prefix(&unnamed) {
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
        for item in self.tree.scan_prefix(&prefix) {
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
        for item in self.tree.range(start..).take(limit) {
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
        ids::read_all(&self.tree)
    }

    /// How the applied `event_id`s stand (loading them if no batch has yet).
    pub fn applied_id_stats(&self) -> Result<AppliedIdStats, StoreError> {
        self.with_ids(|ids| Ok(ids.stats()))
    }

    /// Loads the applied ids (their saved filter, and the runs it lacks), if no batch has
    /// yet: otherwise the first batch loads them, and what waits for that batch waits for
    /// them too (up to 0.7 s for ten million ids; a live update more than 100 ms).
    pub fn load_applied_ids(&self) -> Result<(), StoreError> {
        self.with_ids(|_| Ok(()))
    }

    /// Does all the upkeep of the applied ids that is due (merges of runs, a save of their
    /// filter, removals of what those replaced) at once, for a store about to be handed
    /// to a process that serves reads: a rebuild's, before its worker closes it. Left to
    /// the service, it took 108 to 234 ms before its first batches after the swap, writing
    /// under sled's process-wide lock that reads wait for (BENCHMARKS.md, "Fourteenth
    /// stop").
    pub fn settle_applied_ids(&self) -> Result<(), StoreError> {
        self.with_ids(|ids| ids.settle(&self.tree))
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
                &self.tree,
                self.options.id_filter_bytes,
                self.options.id_filter_most_bytes,
            )?),
        };
        f(ids)
    }

    /// Moves the checkpoint up to `seq`, applying nothing: for sequences the stream no
    /// longer holds (deleted), so that the store stands where the stream says it does.
    pub fn skip_to(&self, seq: u64) -> Result<(), StoreError> {
        let mut batch = self.batch()?;
        if seq > batch.checkpoint {
            batch.checkpoint = seq;
            batch.commit()?;
        }
        Ok(())
    }

    /// Whether the store holds no record a fold wrote: none but its own bookkeeping
    /// (`meta`).
    pub(crate) fn holds_nothing_folded(&self) -> Result<bool, StoreError> {
        let before = self.tree.range(..&b"meta\0"[..]).next().transpose()?;
        let after = self.tree.range(&b"meta\x01"[..]..).next().transpose()?;
        Ok(before.is_none() && after.is_none())
    }

    /// The upkeep of the applied ids that a batch does before it starts
    /// ([`Store::batch`]).
    pub(crate) fn upkeep(&self) -> Result<(), StoreError> {
        self.with_ids(|ids| ids.maintain(&self.tree, crate::ids::UPKEEP_STEP))
    }

    /// Starts a batch of changes on top of the committed state, after the upkeep of the
    /// applied ids that is due (a step of a merge of runs, a save of their filter).
    pub fn batch(&self) -> Result<Batch<'_>, StoreError> {
        self.batch_after(crate::ids::UPKEEP_STEP)
    }

    /// [`Store::batch`] for a batch someone waits for (a live update): the upkeep of the
    /// applied ids (merges, a save of their filter, removals) goes a short step before it,
    /// and on over the prompt batches that follow.
    pub fn prompt_batch(&self) -> Result<Batch<'_>, StoreError> {
        self.batch_after(crate::ids::PROMPT_UPKEEP_STEP)
    }

    fn batch_after(&self, upkeep_step: u64) -> Result<Batch<'_>, StoreError> {
        self.with_ids(|ids| ids.maintain(&self.tree, upkeep_step))?;
        Ok(Batch::new(self, self.checkpoint()?, None))
    }

    /// How many handles of this store there are, this one included (each clone is one).
    /// sled writes to a store's directory when its last handle drops (a flush, which
    /// can create files there): a directory is removed only once no handle is left.
    pub fn handles(&self) -> usize {
        Arc::strong_count(&self.ids)
    }

    /// Writes everything committed so far to disk.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.db.flush_async().await?;
        Ok(())
    }

    /// Every served document as `(key, bytes)`, in key order: what clients can read, for
    /// comparing two stores (one that crashed, one replayed cleanly) document by document.
    /// Stop at the first error: over a damaged store sled may yield it again and again.
    /// A document without a venue that is the main meeting's comes as that one, and a
    /// form whole.
    pub fn documents(
        &self,
    ) -> impl Iterator<Item = Result<(sled::IVec, sled::IVec), StoreError>> + '_ {
        // Every `DocKey` starts with its `doc` part and the key separator.
        self.tree.scan_prefix(DocKey::PREFIX).map(|item| {
            let (key, stored) = item?;
            if let Some(DocKey::Form(horse)) = DocKey::parse(&key) {
                let whole = crate::form::read(&self.tree, horse, &stored)?;
                return Ok((key, whole));
            }
            if crate::docs::alias_of(&stored).is_none() {
                return Ok((key, stored));
            }
            let doc = self.doc_by_key(&key)?.ok_or_else(|| {
                StoreError::Corrupt(format!("document {}", String::from_utf8_lossy(&key)))
            })?;
            Ok((key, doc.into_stored()))
        })
    }

    /// Every record of the read models (documents, the folds' own state, dead letters,
    /// checkpoints) as `(key, bytes)`, in key order: for checks that two stores hold the
    /// same state, not only the same documents. Stop at the first error, as for
    /// [`Store::documents`].
    pub fn records(&self) -> impl Iterator<Item = Result<(sled::IVec, sled::IVec), StoreError>> {
        self.tree.iter().map(|item| item.map_err(StoreError::from))
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
        for item in self.tree.iter() {
            if count % 4096 == 0 && !go_on() {
                return Ok(None);
            }
            let (key, value) = item?;
            if key.as_ref() == keys::CHECKPOINT || key.as_ref() == keys::ODDS_SEQ {
                decode_u64(&value)?;
            }
            if key.as_ref() == keys::IDS_MANIFEST {
                ids::check_manifest(&self.tree)?;
            }
            count += 1;
        }
        Ok(Some(count))
    }
}

fn decode_u64(v: &[u8]) -> Result<u64, StoreError> {
    v.try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::Corrupt("a sequence record is not 8 bytes".into()))
}

/// What a committed batch did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BatchStats {
    /// Events whose effects were applied.
    pub applied: u64,
    /// Events ignored because their `event_id` was applied before.
    pub duplicates: u64,
    /// Messages at or below the checkpoint, delivered again and skipped.
    pub replayed: u64,
    /// Messages refused and recorded as dead letters.
    pub dead_letters: u64,
    /// The checkpoint after the commit.
    pub checkpoint: u64,
    /// `event_id`s the filter of applied ids could not rule out, looked up on disk.
    pub id_run_lookups: u64,
    /// Of those, ids found in no run: the filter's false positives.
    pub id_false_positives: u64,
}

/// Changes in progress: reads see the batch's own writes, and nothing reaches the tree
/// until [`Batch::commit`] writes it all, with the new checkpoint, atomically.
pub struct Batch<'a> {
    store: &'a Store,
    /// What a [`crate::Loader`] holds of the store in memory, read before the tree.
    held: Option<&'a Held>,
    /// The checkpoint the batch started from.
    started: u64,
    checkpoint: u64,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Bytes of the keys and values put so far (a key put twice counts twice).
    bytes: usize,
    /// The `event_id`s this batch applied, in order, and as a set; they join the store's
    /// only once the batch has committed.
    new_ids: Vec<u128>,
    /// (foldhash: SipHash, the default, took a tenth of a replay's time hashing them.)
    new_id_set: HashSet<u128, foldhash::fast::RandomState>,
    fold: Fold,
    stats: BatchStats,
}

impl Records for Batch<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(v) = self.writes.get(key) {
            return Ok(v.clone());
        }
        if let Some(held) = self.held {
            if let Some(v) = held.get(key) {
                return Ok(v);
            }
        }
        Ok(self.store.tree.get(key)?.map(|v| v.to_vec()))
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        let ask = (prefix, dir, limit);
        match self.held {
            Some(held) => held.scan(&self.store.tree, &self.writes, ask),
            None => crate::scan::over_batch(&self.store.tree, &self.writes, ask),
        }
    }
}

impl State for Batch<'_> {
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.bytes += key.len() + value.len();
        self.writes.insert(key, Some(value));
    }

    fn delete(&mut self, key: Vec<u8>) {
        self.writes.insert(key, None);
    }

    fn first_seen(&mut self, event_id: u128) -> Result<bool, StoreError> {
        if self.new_id_set.contains(&event_id) || self.held.is_some_and(|h| h.writing(event_id)) {
            return Ok(false);
        }
        let seen = self
            .store
            .with_ids(|ids| ids.contains(&self.store.tree, event_id))?;
        if seen != Seen::RuledOut {
            self.stats.id_run_lookups += 1;
        }
        match seen {
            Seen::InRun => return Ok(false),
            Seen::NotInRun => self.stats.id_false_positives += 1,
            Seen::RuledOut => {}
        }
        self.new_id_set.insert(event_id);
        self.new_ids.push(event_id);
        Ok(true)
    }
}

impl<'a> Batch<'a> {
    /// A batch of `store` from `checkpoint`, reading through `held` where given.
    pub(crate) fn new(store: &'a Store, checkpoint: u64, held: Option<&'a Held>) -> Batch<'a> {
        Batch {
            store,
            held,
            started: checkpoint,
            checkpoint,
            writes: BTreeMap::new(),
            bytes: 0,
            new_ids: Vec::new(),
            new_id_set: HashSet::default(),
            fold: Fold::default(),
            stats: BatchStats::default(),
        }
    }

    /// Whether message `seq` is already in the store (a redelivery to skip).
    fn stale(&mut self, seq: u64) -> bool {
        if seq <= self.checkpoint {
            self.stats.replayed += 1;
            return true;
        }
        self.checkpoint = seq;
        false
    }

    /// Folds in a valid event that came at stream sequence `seq`, stored by JetStream at
    /// `published` (nanoseconds since the epoch).
    pub fn apply(
        &mut self,
        seq: u64,
        published: i128,
        env: &Envelope,
    ) -> Result<Option<Outcome>, StoreError> {
        if self.stale(seq) {
            return Ok(None);
        }
        let mut fold = std::mem::take(&mut self.fold);
        let result = fold.apply(self, seq, published, env);
        self.fold = fold;
        let outcome = result?;
        match outcome {
            Outcome::Applied => self.stats.applied += 1,
            Outcome::Duplicate => self.stats.duplicates += 1,
        }
        Ok(Some(outcome))
    }

    /// Records a refused message; nothing of it is applied.
    pub fn dead_letter(&mut self, seq: u64, subject: &str, reason: &str, payload: &[u8]) {
        if self.stale(seq) {
            return;
        }
        let letter = DeadLetter {
            seq,
            subject: subject.chars().take(256).collect(),
            reason: reason.to_owned(),
            excerpt: String::from_utf8_lossy(payload)
                .chars()
                .take(EXCERPT_CHARS)
                .collect(),
        };
        self.put(
            keys::dead(seq),
            serde_json::to_vec(&letter).unwrap_or_default(),
        );
        self.stats.dead_letters += 1;
    }

    /// Messages taken into the batch so far (applied, duplicate or refused).
    pub fn len(&self) -> u64 {
        self.stats.applied + self.stats.duplicates + self.stats.dead_letters
    }

    /// Whether the batch has taken no message.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records the batch has written or removed so far: about what its commit will
    /// write (renders add the documents they touch), and so about how long the commit
    /// will hold sled's write lock, which every read of any store in the process waits
    /// for while it is held.
    pub fn writes(&self) -> usize {
        self.writes.len()
    }

    /// About the bytes the batch's commit will write, before renders: the records put so
    /// far and the odds moves its journal holds. A record of the journal holds many moves
    /// (`journal.rs`), so that a commit's time follows its bytes as much as its records.
    pub fn bytes(&self) -> usize {
        self.bytes + self.fold.journal_bytes()
    }

    /// Renders the touched documents and commits every change with the new checkpoint in
    /// one atomic write.
    pub fn commit(self) -> Result<BatchStats, StoreError> {
        self.commit_noting(|_| {})
    }

    /// [`Batch::commit`], calling `changed` with the key of each document the batch
    /// writes or removes (before the write), for caches of documents to forget.
    pub fn commit_noting(self, changed: impl FnMut(&[u8])) -> Result<BatchStats, StoreError> {
        self.seal(changed)?.write()
    }

    /// Renders the touched documents and makes the atomic write of every change with the
    /// new checkpoint, without writing it yet: [`crate::Loader::write`] writes it on a
    /// thread of its own. `changed` is called as by [`Batch::commit_noting`].
    pub fn seal(mut self, mut changed: impl FnMut(&[u8])) -> Result<Sealed, StoreError> {
        let mut fold = std::mem::take(&mut self.fold);
        fold.render(&mut self)?;
        let mut batch = sled::Batch::default();
        let mut docs = ChangedDocs::default();
        let writes = std::mem::take(&mut self.writes);
        for (k, v) in &writes {
            if k.starts_with(DocKey::PREFIX) {
                changed(k);
                // Only documents that now answer differently are written (`put_doc`).
                docs.push(k, &mut batch, self.checkpoint);
            }
            match v {
                Some(v) => batch.insert(k.as_slice(), v.as_slice()),
                None => batch.remove(k.as_slice()),
            }
        }
        docs.write(&mut batch, self.checkpoint);
        batch.insert(keys::CHECKPOINT, &self.checkpoint.to_be_bytes());
        self.stats.checkpoint = self.checkpoint;
        Ok(Sealed {
            store: self.store.clone(),
            batch,
            seqs: (self.started + 1, self.checkpoint),
            new_ids: std::mem::take(&mut self.new_ids),
            stats: self.stats,
            writes,
        })
    }
}

/// The records a batch wrote (`Some`) or removed (`None`), by key.
pub(crate) type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// A batch rendered, whose atomic write with its checkpoint is ready
/// ([`Batch::seal`]).
pub struct Sealed {
    store: Store,
    batch: sled::Batch,
    /// The stream sequences of the batch's messages.
    seqs: (u64, u64),
    /// The `event_id`s it applied, in order.
    new_ids: Vec<u128>,
    stats: BatchStats,
    /// Every record the folds wrote or removed (not the change feed's nor the applied
    /// ids'), for a [`crate::Loader`] to hold while it writes.
    pub(crate) writes: Writes,
}

impl Sealed {
    /// Writes the batch, with its applied ids as a new run, atomically.
    ///
    /// The applied ids' lock is not held while sled writes, so that a batch folding
    /// meanwhile (over a [`crate::Loader`]) may look ids up: its own and this batch's
    /// ids it finds in memory, and the run this one adds joins the ids once written.
    pub(crate) fn write(self) -> Result<BatchStats, StoreError> {
        let Sealed {
            store,
            mut batch,
            seqs,
            mut new_ids,
            stats,
            writes: _,
        } = self;
        if new_ids.is_empty() {
            store.tree.apply_batch(batch)?;
            return Ok(stats);
        }
        // The batch's ids, as a new run, commit with it.
        let staged = store.with_ids(|ids| ids.stage(&mut batch, &mut new_ids, seqs))?;
        store.tree.apply_batch(batch)?;
        store.with_ids(|ids| {
            ids.committed(staged, &new_ids);
            Ok(())
        })?;
        Ok(stats)
    }

    /// The store it writes to.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// What the batch did; its checkpoint.
    pub(crate) fn stats(&self) -> BatchStats {
        self.stats
    }

    /// The `event_id`s it applied.
    pub(crate) fn ids(&self) -> &[u128] {
        &self.new_ids
    }
}

/// An in-memory [`State`] for folding without a disk: unit tests, and checks that compare
/// a store with a clean replay.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct MemState {
    /// The records the fold wrote, as a store holds them.
    pub records: BTreeMap<Vec<u8>, Vec<u8>>,
    /// The `event_id`s applied (a store keeps them in sorted runs on disk).
    pub seen: HashSet<u128>,
    /// Each form document whole, as a store assembles it when it is read (`form.rs`), by
    /// its key: kept up to date with the records, so that [`MemState::doc`] can lend it.
    forms: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Records for MemState {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.records.get(key).cloned())
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        Ok(crate::scan::over_map(&self.records, (prefix, dir, limit)))
    }
}

impl State for MemState {
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.records.insert(key.clone(), value);
        self.assemble_form(&key);
    }

    fn delete(&mut self, key: Vec<u8>) {
        self.records.remove(key.as_slice());
        self.assemble_form(&key);
    }

    fn first_seen(&mut self, event_id: u128) -> Result<bool, StoreError> {
        Ok(self.seen.insert(event_id))
    }
}

impl MemState {
    /// A served document, as the fold left it (without its `ETag`).
    pub fn doc(&self, key: DocKey<'_>) -> Option<&[u8]> {
        if let DocKey::Form(_) = key {
            return self.forms.get(&key.key()).map(|v| crate::docs::unseal(v));
        }
        let key = key.key();
        let stored = self.records.get(&key)?;
        match crate::docs::alias_of(stored) {
            Some((_, venue)) => self
                .records
                .get(&crate::docs::alias_target(&key, venue))
                .map(|v| crate::docs::unseal(v)),
            None => Some(crate::docs::unseal(stored)),
        }
    }

    /// Assembles again the form document that a record under `key` is part of, if any.
    fn assemble_form(&mut self, key: &[u8]) {
        if let Some(horse) = crate::form::horse_of(key) {
            let doc = DocKey::Form(horse).key();
            match crate::form::read_in(&self.records, horse) {
                Some(whole) => self.forms.insert(doc, whole),
                None => self.forms.remove(&doc),
            };
        }
    }
}
