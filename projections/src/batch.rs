//! A batch of changes: the folds' writes over the committed records, rendered and written
//! with the checkpoint it reached in one atomic sled batch (sealed, then written, so that
//! a [`crate::load::Loader`] writes one while the next folds, in steps that a redo file keeps
//! atomic: `load_steps.rs`, or beside readers a record at a time: `kv.rs`); and the same
//! port over a map in memory, for tests.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use racing_events::Envelope;

use crate::feed::ChangedDocs;
use crate::fold::{Fold, Kept, Outcome};
use crate::history::{packing::Runs, Replaced};
use crate::ids::Seen;
use crate::key_filter::KeyFilter;
use crate::keys;
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::kv::{Commit, Kv};
use crate::loader_cache::Held;
use crate::read_cache::ReadCache;
use crate::scan::{Item, Scan};
use crate::state::{Records, State, Writes};
use crate::store::{DeadLetter, Store, EXCERPT_CHARS};
use crate::write_counts;
use crate::write_set::WriteSet;

impl Store {
    /// Moves the checkpoint up to `seq`, applying nothing: for sequences the stream no
    /// longer holds (deleted), so that the store stands where the stream says it does.
    pub fn skip_to(&self, seq: u64) -> Result<(), StoreError> {
        let mut batch = self.batch()?;
        if seq > batch.records.checkpoint {
            batch.records.checkpoint = seq;
            batch.commit()?;
        }
        Ok(())
    }

    /// Whether the store holds no record a fold wrote: none but its own bookkeeping
    /// (`meta`).
    pub(crate) fn holds_nothing_folded(&self) -> Result<bool, StoreError> {
        let before = self.kv.range(..&b"meta\0"[..]).next().transpose()?;
        let after = self.kv.range(&b"meta\x01"[..]..).next().transpose()?;
        Ok(before.is_none() && after.is_none())
    }

    /// The upkeep of the applied ids that a batch does before it starts
    /// ([`Store::batch`]).
    pub(crate) fn upkeep(&self) -> Result<(), StoreError> {
        self.with_ids(|ids| ids.maintain(&self.kv, crate::ids::limits::UPKEEP_STEP))
    }

    /// The upkeep of the applied ids that a prompt batch does before it starts
    /// ([`Store::prompt_batch`]).
    pub(crate) fn prompt_upkeep(&self) -> Result<(), StoreError> {
        self.with_ids(|ids| ids.maintain(&self.kv, crate::ids::limits::PROMPT_UPKEEP_STEP))
    }

    /// Starts a batch of changes on top of the committed state, after the upkeep of the
    /// applied ids that is due (a step of a merge of runs, a save of their filter).
    pub fn batch(&self) -> Result<Batch<'_>, StoreError> {
        self.batch_after(crate::ids::limits::UPKEEP_STEP)
    }

    /// [`Store::batch`] for a batch someone waits for (a live update): the upkeep of the
    /// applied ids (merges, a save of their filter, removals) goes a short step before it,
    /// and on over the prompt batches that follow.
    pub fn prompt_batch(&self) -> Result<Batch<'_>, StoreError> {
        self.batch_after(crate::ids::limits::PROMPT_UPKEEP_STEP)
    }

    fn batch_after(&self, upkeep_step: u64) -> Result<Batch<'_>, StoreError> {
        // A load's batch that a failed write of its steps left in part ([`crate::load_steps`])
        // is whole before a fold reads the store.
        crate::load_steps::finish(&self.kv, self.dir())?;
        self.with_ids(|ids| ids.maintain(&self.kv, upkeep_step))?;
        Ok(Batch::new(self, self.checkpoint()?, None))
    }
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
    /// `OddsUpdated` applied for a race already off, finished, abandoned or void.
    pub late_prices: u64,
}

/// Changes in progress: reads see the batch's own writes, and nothing reaches the tree
/// until [`Batch::commit`] writes it all, with the new checkpoint, atomically.
pub struct Batch<'a> {
    /// The fold in progress, beside the records it folds into rather than among them, so
    /// that each event's fold borrows them without the fold being moved out and back.
    fold: Fold,
    records: BatchRecords<'a>,
}

/// What a batch's fold reads and writes: the committed records, and over them the
/// batch's own writes, applied ids and change feed.
pub(crate) struct BatchRecords<'a> {
    store: &'a Store,
    /// The store, for the folds' reads of the tree ([`Kv::for_folds`]).
    kv: Kv,
    /// What a [`crate::load::Loader`] holds of the store in memory, read before the tree.
    held: Option<&'a Held>,
    /// The checkpoint the batch started from.
    started: u64,
    checkpoint: u64,
    /// What the folds wrote or removed, read before anything else.
    writes: WriteSet,
    /// Bytes of the keys and values put so far (a key put twice counts twice).
    bytes: usize,
    /// The `event_id`s this batch applied, in order, and as a set; they join the store's
    /// only once the batch has committed.
    new_ids: Vec<u128>,
    /// (foldhash: SipHash, the default, took a large share of a replay's time hashing
    /// them.)
    new_id_set: HashSet<u128, foldhash::fast::RandomState>,
    stats: BatchStats,
    /// Each document written or removed, at the position of the event whose fold did it:
    /// the change feed's rows ([`ChangedDocs`]).
    changed_docs: ChangedDocs,
    /// Where the writes of documents are changes ([`State::changes_at`]).
    position: u64,
    /// The records read from the tree, as [`Records::get`] gave them.
    read: RefCell<ReadCache>,
}

/// What a batch hands on to the next batch of its store: the fold's [`Kept`] and the
/// records read from the tree, as the batch's commit leaves them.
#[derive(Default)]
struct Handed {
    kept: Kept,
    read: ReadCache,
}

impl Records for BatchRecords<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(v) = self.writes.get(key) {
            return Ok(v.clone());
        }
        if let Some(held) = self.held {
            if let Some(v) = held.get(key, KeyFilter::hash(key)) {
                return Ok(v);
            }
        }
        if let Some(v) = self.read.borrow().get(key) {
            return Ok(v);
        }
        let v = self.kv.get(key)?;
        self.read.borrow_mut().keep(key, v.as_deref());
        Ok(v.map(|v| v.to_vec()))
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        let ask = (prefix, dir, limit);
        match self.held {
            Some(held) => held.scan(&self.kv, &self.writes, ask),
            None => crate::scan::over_batch(&self.kv, &self.writes, ask),
        }
    }
}

impl State for BatchRecords<'_> {
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.bytes += key.len() + value.len();
        self.changed_docs.note(self.position, &key);
        self.writes.insert(key, Some(value));
    }

    fn delete(&mut self, key: Vec<u8>) {
        self.changed_docs.note(self.position, &key);
        self.writes.insert(key, None);
    }

    fn first_seen(&mut self, event_id: u128) -> Result<bool, StoreError> {
        if self.new_id_set.contains(&event_id) || self.held.is_some_and(|h| h.writing(event_id)) {
            return Ok(false);
        }
        let seen = self
            .store
            .with_ids(|ids| ids.contains(&self.kv, event_id))?;
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

    fn changes_at(&mut self, seq: u64) {
        self.position = seq;
    }

    fn changed_at(&mut self, seq: u64, key: &[u8]) {
        self.changed_docs.note(seq, key);
    }
}

impl<'a> Batch<'a> {
    /// A batch of `store` from `checkpoint`, reading through `held` where given.
    pub(crate) fn new(store: &'a Store, checkpoint: u64, held: Option<&'a Held>) -> Batch<'a> {
        let handed = store
            .handed(checkpoint)
            .and_then(|handed| handed.downcast::<Handed>().ok())
            .map(|handed| *handed)
            .unwrap_or_default();
        Batch {
            fold: Fold::resumed(handed.kept),
            records: BatchRecords {
                store,
                kv: store.kv.for_folds(),
                held,
                started: checkpoint,
                checkpoint,
                writes: WriteSet::default(),
                bytes: 0,
                new_ids: Vec::new(),
                new_id_set: HashSet::default(),
                stats: BatchStats::default(),
                changed_docs: ChangedDocs::default(),
                position: checkpoint,
                read: RefCell::new(handed.read),
            },
        }
    }

    /// What the batch's fold reads and writes: for tests that read and write a batch's
    /// records as a fold does.
    #[cfg(test)]
    pub(crate) fn records(&mut self) -> &mut BatchRecords<'a> {
        &mut self.records
    }

    /// Whether message `seq` is already in the store (a redelivery to skip).
    fn stale(&mut self, seq: u64) -> bool {
        let r = &mut self.records;
        if seq <= r.checkpoint {
            r.stats.replayed += 1;
            return true;
        }
        r.checkpoint = seq;
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
        let outcome = self.fold.apply(&mut self.records, seq, published, env)?;
        let stats = &mut self.records.stats;
        match outcome {
            Outcome::Applied => stats.applied += 1,
            Outcome::Duplicate => stats.duplicates += 1,
        }
        Ok(Some(outcome))
    }

    /// The book of the race of the price move just applied, after it (what its `odds`
    /// frame carries); `None` after any other event.
    pub fn book(&self) -> Option<&crate::market::Book> {
        self.fold.book()
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
        self.records.put(
            keys::dead(seq),
            serde_json::to_vec(&letter).unwrap_or_default(),
        );
        self.records.stats.dead_letters += 1;
    }

    /// Messages taken into the batch so far (applied, duplicate or refused).
    pub fn len(&self) -> u64 {
        let stats = &self.records.stats;
        stats.applied + stats.duplicates + stats.dead_letters
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
        self.records.writes.len()
    }

    /// About the bytes the batch's commit will write, before renders: the records put so
    /// far and the odds moves its journal holds. A record of the journal holds many moves
    /// (`journal.rs`), so that a commit's time follows its bytes as much as its records.
    pub fn bytes(&self) -> usize {
        self.records.bytes + self.fold.journal_bytes()
    }

    /// Renders the touched documents and commits every change with the new checkpoint in
    /// one atomic write.
    pub fn commit(self) -> Result<BatchStats, StoreError> {
        self.commit_noting(|_| {})
    }

    /// [`Batch::commit`], calling `changed` with the key of each document the batch
    /// writes or removes (before the write), for caches of documents to forget: a
    /// `DocKey`'s, or the head of a jockey's or trainer's record or of their list.
    pub fn commit_noting(self, changed: impl FnMut(&[u8])) -> Result<BatchStats, StoreError> {
        self.seal(changed)?.write()
    }

    /// Renders the touched documents and hands over every change with the new checkpoint,
    /// to be made one atomic write where it is written: [`crate::load::Loader::write`]
    /// writes it on a thread of its own. `changed` is called as by [`Batch::commit_noting`].
    pub fn seal(self, mut changed: impl FnMut(&[u8])) -> Result<Sealed, StoreError> {
        let Batch {
            mut fold,
            records: mut r,
        } = self;
        let versions = fold.render_handing_over(&mut r)?;
        r.stats.late_prices = fold.late_prices();
        let writes = r.writes.into_writes();
        let mut read = r.read.into_inner();
        read.written(&writes);
        let kept = fold.keep();
        r.store
            .hand_on(r.checkpoint, Box::new(Handed { kept, read }));
        for k in writes.keys() {
            // Documents, and people's records and lists, which the change feed does not
            // list.
            if k.starts_with(DocKey::PREFIX) || keys::is_sealed(k) {
                changed(k);
            }
        }
        r.stats.checkpoint = r.checkpoint;
        Ok(Sealed {
            store: r.store.clone(),
            writes: Arc::new(writes),
            versions,
            changed_docs: r.changed_docs,
            seqs: (r.started + 1, r.checkpoint),
            new_ids: r.new_ids,
            stats: r.stats,
        })
    }
}

/// A batch rendered, whose atomic write with its checkpoint is ready
/// ([`Batch::seal`]): the write itself is made where it is written, so that a
/// [`crate::load::Loader`]'s thread that writes it makes it, not the one that folds.
pub struct Sealed {
    store: Store,
    /// Every record the folds wrote or removed (not the change feed's nor the applied
    /// ids'), shared with a [`crate::load::Loader`] that holds them while it writes.
    pub(crate) writes: Arc<Writes>,
    /// The values its changes of source records replaced, packed where it is written.
    versions: Replaced,
    /// The change feed's rows of the documents written.
    changed_docs: ChangedDocs,
    /// The stream sequences of the batch's messages.
    seqs: (u64, u64),
    /// The `event_id`s it applied, in order.
    new_ids: Vec<u128>,
    stats: BatchStats,
}

impl Sealed {
    /// Writes the batch, with its applied ids as a new run, atomically.
    ///
    /// The applied ids' lock is not held while sled writes, so that a batch folding
    /// meanwhile (over a [`crate::load::Loader`]) may look ids up: its own and this batch's
    /// ids it finds in memory, and the run this one adds joins the ids once written.
    pub(crate) fn write(self) -> Result<BatchStats, StoreError> {
        self.write_as(|store, batch| store.kv.apply(batch))
    }

    /// [`Sealed::write`] beside readers that the loader's folds do not wait for
    /// ([`Kv::apply_beside_readers`]): a catch-up's way while the API answers.
    pub(crate) fn write_beside_readers(self) -> Result<BatchStats, StoreError> {
        self.write_as(|store, batch| store.kv.apply_beside_readers(batch))
    }

    /// [`Sealed::write`] in steps ([`crate::load_steps`]): atomic with its checkpoint still,
    /// through a redo file; a bulk load's way.
    pub(crate) fn write_in_steps(self) -> Result<BatchStats, StoreError> {
        let checkpoint = self.stats.checkpoint;
        self.write_as(|store, batch| {
            crate::load_steps::write(&store.kv, store.dir(), checkpoint, batch)
        })
    }

    fn write_as(
        self,
        apply: impl FnOnce(&Store, Commit) -> Result<(), StoreError>,
    ) -> Result<BatchStats, StoreError> {
        let Sealed {
            store,
            writes,
            versions,
            changed_docs,
            seqs,
            mut new_ids,
            stats,
        } = self;
        let mut batch: Commit = writes
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
            .collect();
        // Packed in the order the batches are written, by the runs the last write left.
        let runs = store.handed_to_write(seqs.0 - 1);
        let mut runs = runs
            .and_then(|r| r.downcast::<Runs>().ok())
            .unwrap_or_default();
        versions.write(&mut runs, &writes, &mut batch);
        // Only documents that now answer differently were written (`put_doc`).
        changed_docs.write(&mut batch);
        batch.put(keys::CHECKPOINT, stats.checkpoint.to_be_bytes());
        batch.pack();
        if new_ids.is_empty() {
            write_counts::count(&batch);
            apply(&store, batch)?;
            store.hand_on_to_write(stats.checkpoint, runs);
            return Ok(stats);
        }
        // The batch's ids, as a new run, commit with it.
        let staged = store.with_ids(|ids| ids.stage(&mut batch, &mut new_ids, seqs))?;
        write_counts::count(&batch);
        apply(&store, batch)?;
        store.hand_on_to_write(stats.checkpoint, runs);
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
    /// A served document, as the fold left it (without its `ETag`); one rendered when
    /// read ([`DocKey::rendered_when_read`]) rendered from the records, as a store renders
    /// it (`None` where its records render another `ETag` than the head the fold wrote).
    pub fn doc(&self, key: DocKey<'_>) -> Option<std::borrow::Cow<'_, [u8]>> {
        if let DocKey::Form(_) = key {
            return self
                .forms
                .get(&key.key())
                .map(|v| crate::docs::unseal(v).into());
        }
        let mut stored_key = key.key();
        let mut stored = self.records.get(&stored_key)?;
        if let Some((_, venue)) = crate::docs::alias_of(stored) {
            stored_key = crate::docs::alias_target(&stored_key, venue);
            stored = self.records.get(&stored_key)?;
        }
        let target = DocKey::parse(&stored_key).filter(|k| k.rendered_when_read());
        match target.filter(|_| stored.len() == crate::docs::HEAD_LEN) {
            Some(target) => {
                let (body, held) = crate::documents::render_headed(self, target).ok()??;
                crate::docs::with_body(stored, &body, held.as_ref(), 0)?;
                Some(body.into())
            }
            None => Some(crate::docs::unseal(stored).into()),
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
