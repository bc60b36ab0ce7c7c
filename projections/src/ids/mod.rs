//! The applied `event_id`s of a store: on disk as immutable sorted runs (a committed
//! batch's ids, written in its atomic batch; `sorted_runs.rs`), merged a few at a time as they
//! accumulate, with a layered Bloom filter in memory in front of them (`filter.rs`: it
//! grows by a layer as the ids do, up to the most bytes it is given). A new id is almost
//! always ruled out by the filter alone; one it cannot rule out is looked up in each run.
//! The filter is saved in the tree now and then, so that a restart loads it and reads only
//! the ids of runs the saved filter does not hold, not every id.
//!
//! All that upkeep (merges, the filter's saves, removing what they replaced; `upkeep.rs`)
//! goes a bounded step before a batch, so that no batch, and no live update in it, waits for
//! more than a step of it.
//!
//! Why this layout: sled 0.34's memory grows with its number of keys and with records
//! rewritten in place. Here ids are few keys (a chunk of up to [`CHUNK_IDS`] sorted ids
//! each), and every chunk is written once, under a run number larger than any before it, so
//! at the end of the tree; a merge writes a new run and removes its sources, never
//! rewriting a chunk.

use std::collections::{HashSet, VecDeque};

use crate::keys;
use crate::kv::StoreError;
use crate::kv::{Commit, Kv};

mod filter;
pub(crate) mod limits;
mod manifest;
mod sorted_runs;
mod upkeep;

#[cfg(test)]
use filter::{hash, HASHES};
use filter::{Filter, FILTER_FORMAT};
use limits::CHUNK_IDS;
use manifest::{encode_manifest, read_manifest, Manifest, Run, SavedFilter};
use sorted_runs::{decode_chunk, encode_chunk, run_holds, Merge};
use upkeep::{remove_numbered, FilterSave};

/// How the applied `event_id`s of a store stand, since it was opened.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct AppliedIdStats {
    /// Applied ids.
    pub ids: u64,
    /// Sorted runs that hold them.
    pub runs: usize,
    /// Bytes of the filter in memory, all its layers.
    pub filter_bytes: usize,
    /// Layers of the filter: one more each time the newest holds as many ids as keep it
    /// within its share of the false positives, while the most bytes allow.
    pub filter_layers: usize,
    /// The share of the newest layer's bits set, estimated from its ids.
    pub filter_fill: f64,
    /// The share of new ids the filter lets through to a look-up in the runs, estimated
    /// from each layer's ids.
    pub filter_false_positive_rate: f64,
    /// Whether the filter is at the most bytes it may take with its newest layer full:
    /// from here, the share of new ids it lets through grows with every id.
    pub filter_capped: bool,
    /// Whether the filter was loaded as saved (else it was built from the runs).
    pub filter_loaded: bool,
    /// Ids read from runs when the store loaded its applied ids: those of runs that the
    /// saved filter did not hold (all of them when no filter was saved).
    pub read_at_load: u64,
    /// Ids the filter could not rule out, so looked up in the runs.
    pub run_lookups: u64,
    /// Of those, ids found in no run: the filter's false positives.
    pub false_positives: u64,
    /// Merges of runs completed.
    pub merges: u64,
    /// Times the filter was saved.
    pub filter_saves: u64,
    /// Records of an interrupted merge or filter save removed when loading.
    pub orphans_removed: u64,
}

impl AppliedIdStats {
    /// The share of new ids the filter lets through, at most, while it may grow.
    pub const FILTER_TARGET: f64 = filter::TARGET_FALSE_POSITIVES;
}

/// The applied ids of a store as loaded: the filter, and the manifest as committed.
pub(crate) struct AppliedIds {
    filter: Filter,
    manifest: Manifest,
    merge: Option<Merge>,
    save: Option<FilterSave>,
    /// Records no longer listed (the sources of a large merge, a replaced filter's
    /// chunks), under these prefixes, removed a step at a time; what a restart finds of
    /// them it removes as orphans.
    unlisted: VecDeque<Vec<u8>>,
    stats: AppliedIdStats,
}

impl AppliedIds {
    /// Loads the applied ids of `kv` with a filter whose first layer is of `first_bytes`,
    /// growing up to `most_bytes`: removes what an interrupted merge or filter save left,
    /// loads the saved filter and adds to it the ids of the runs it does not hold. With no
    /// usable saved filter (none saved yet, or one of another first size or format, or
    /// larger than `most_bytes`) it is built from every run, which reads every id once.
    pub(crate) fn load(
        kv: &Kv,
        first_bytes: usize,
        most_bytes: usize,
    ) -> Result<AppliedIds, StoreError> {
        let mut manifest = read_manifest(kv)?;
        let mut stats = AppliedIdStats::default();
        let listed: HashSet<u64> = manifest.runs.iter().map(|r| r.number).collect();
        stats.orphans_removed += remove_numbered(kv, keys::ID_RUN_PREFIX, |n| listed.contains(&n))?;
        let generation = manifest.filter.as_ref().map(|f| f.generation);
        stats.orphans_removed +=
            remove_numbered(kv, keys::ID_FILTER_PREFIX, |g| Some(g) == generation)?;
        manifest.next_run = manifest
            .runs
            .iter()
            .map(|r| r.number + 1)
            .fold(manifest.next_run, u64::max);

        let (first, most) = ((first_bytes / 8).max(1) as u64, (most_bytes / 8) as u64);
        let saved = manifest.filter.as_ref().filter(|f| {
            f.format == FILTER_FORMAT
                && f.layer_words().first() == Some(&first)
                && f.words <= most.max(first)
        });
        let loaded = match saved {
            Some(saved) => Some(read_filter(kv, saved, most_bytes)?),
            None => None,
        };
        stats.filter_loaded = loaded.is_some();
        let mut filter = match loaded {
            Some(filter) => filter,
            None => {
                // Nothing saved holds any id now: every run is read, and the filter is
                // saved as soon as that is worth it.
                manifest.filter = None;
                for run in &mut manifest.runs {
                    run.saved = false;
                }
                Filter::new(first_bytes, most_bytes)
            }
        };
        for run in manifest.runs.iter().filter(|r| !r.saved) {
            for item in kv.prefix(keys::number_prefix(keys::ID_RUN_PREFIX, run.number)) {
                let (_, chunk) = item?;
                for id in decode_chunk(&chunk)? {
                    filter.insert(id);
                    stats.read_at_load += 1;
                }
            }
        }
        Ok(AppliedIds {
            filter,
            manifest,
            merge: None,
            save: None,
            unlisted: VecDeque::new(),
            stats,
        })
    }

    /// Whether `id` was applied: the filter rules most new ids out; any other is looked up
    /// in each run, newest first.
    pub(crate) fn contains(&mut self, kv: &Kv, id: u128) -> Result<Seen, StoreError> {
        if !self.filter.contains(id) {
            return Ok(Seen::RuledOut);
        }
        self.stats.run_lookups += 1;
        for run in self.manifest.runs.iter().rev() {
            if run_holds(kv, run.number, id)? {
                return Ok(Seen::InRun);
            }
        }
        self.stats.false_positives += 1;
        Ok(Seen::NotInRun)
    }

    /// Adds to `batch` a new run of `ids` (ids no run holds, sorted here) applied by the
    /// batches of stream sequences `seqs`, and the manifest that lists it. Returns that
    /// manifest, for [`AppliedIds::committed`] once `batch` is applied.
    pub(crate) fn stage(
        &self,
        batch: &mut Commit,
        ids: &mut [u128],
        seqs: (u64, u64),
    ) -> Result<Staged, StoreError> {
        ids.sort_unstable();
        let mut manifest = self.manifest.clone();
        let number = manifest.next_run;
        for chunk in ids.chunks(CHUNK_IDS) {
            if let Some(first) = chunk.first() {
                batch.put(keys::id_run(number, *first), encode_chunk(chunk));
            }
        }
        manifest.next_run += 1;
        manifest.runs.push(Run {
            number,
            ids: ids.len() as u64,
            seqs,
            saved: false,
        });
        batch.put(keys::IDS_MANIFEST, encode_manifest(&manifest)?);
        Ok(Staged { manifest })
    }

    /// Takes in a run staged by [`AppliedIds::stage`] whose batch was applied.
    pub(crate) fn committed(&mut self, staged: Staged, ids: &[u128]) {
        for id in ids {
            self.filter.insert(*id);
        }
        self.manifest = staged.manifest;
    }

    /// What the ids stand at.
    pub(crate) fn stats(&self) -> AppliedIdStats {
        AppliedIdStats {
            ids: self.manifest.runs.iter().map(|r| r.ids).sum(),
            runs: self.manifest.runs.len(),
            filter_bytes: self.filter.words() * 8,
            filter_layers: self.filter.layers(),
            filter_fill: self.filter.fill(),
            filter_false_positive_rate: self.filter.false_positive_rate(),
            filter_capped: self.filter.capped(),
            ..self.stats
        }
    }
}

/// What a look-up of an id in the applied ids found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// The filter ruled it out: a new id, found without a disk read.
    RuledOut,
    /// A run holds it: applied before.
    InRun,
    /// The filter could not rule it out, and no run holds it: a new id, and one of the
    /// filter's false positives.
    NotInRun,
}

/// A run staged into a batch, with the manifest that lists it.
pub(crate) struct Staged {
    manifest: Manifest,
}

/// The saved filter, read back, to grow up to `most_bytes`.
fn read_filter(kv: &Kv, saved: &SavedFilter, most_bytes: usize) -> Result<Filter, StoreError> {
    let mut words = Vec::with_capacity(usize::try_from(saved.words).unwrap_or(0));
    for item in kv.prefix(keys::number_prefix(
        keys::ID_FILTER_PREFIX,
        saved.generation,
    )) {
        let (_, chunk) = item?;
        if !chunk.len().is_multiple_of(8) {
            return Err(StoreError::Corrupt("a chunk of the saved filter".into()));
        }
        words.extend(chunk.chunks_exact(8).map(|b| {
            let mut w = [0; 8];
            w.copy_from_slice(b);
            u64::from_le_bytes(w)
        }));
    }
    let read = words.len();
    if read as u64 != saved.words {
        return Err(StoreError::Corrupt(format!(
            "the saved filter holds {read} words of {}",
            saved.words
        )));
    }
    Filter::from_saved(words, &saved.layer_words(), saved.hashes, most_bytes).ok_or_else(|| {
        StoreError::Corrupt(format!(
            "the saved filter's {read} words are not its layers' {:?}",
            saved.layer_words()
        ))
    })
}

/// Every applied id, read from every run the manifest lists.
pub(crate) fn read_all(kv: &Kv) -> Result<HashSet<u128>, StoreError> {
    let manifest = read_manifest(kv)?;
    let mut ids = HashSet::new();
    for run in &manifest.runs {
        for item in kv.prefix(keys::number_prefix(keys::ID_RUN_PREFIX, run.number)) {
            let (_, chunk) = item?;
            ids.extend(decode_chunk(&chunk)?);
        }
    }
    Ok(ids)
}

/// Checks that the manifest reads back, for a store's check of every record.
pub(crate) fn check_manifest(kv: &Kv) -> Result<(), StoreError> {
    read_manifest(kv).map(drop)
}

#[cfg(test)]
mod tests;
