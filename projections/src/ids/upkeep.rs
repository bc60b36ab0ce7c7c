//! The upkeep of the applied ids between batches, a bounded step at a time: merges of
//! runs, saves of the filter, and the removal of what they replaced.

use std::collections::HashSet;

use super::filter::FILTER_FORMAT;
use super::limits::{
    ATOMIC_MERGE, FAN_IN, FILTER_CHUNK_BYTES, RECORD_COST, SAVE_AFTER, UPKEEP_STEP,
};
use super::manifest::{encode_manifest, Run, SavedFilter};
use super::sorted_runs::Merge;
use super::AppliedIds;
use crate::keys;
use crate::kv::StoreError;
use crate::kv::{Bytes, Commit, Kv};

/// A save of the filter under way: its chunks written a step at a time, each as the
/// filter stands when it is written. Bits are only ever set, and each is set for an id
/// already in a committed run, so the saved chunks hold every id the filter held when the
/// save began, and only ids of runs on disk.
pub(super) struct FilterSave {
    generation: u64,
    /// The layers it saves: those there were when it began (a layer begun since holds
    /// ids of runs listed since, which it does not hold).
    layers: usize,
    /// The chunks written so far.
    written: usize,
    /// The runs whose every id the saved filter holds: those listed when the save began,
    /// and the outputs of merges of them alone.
    covered: HashSet<u64>,
}

impl AppliedIds {
    /// The upkeep between two batches, up to `step` ids' worth of it: first removing what
    /// is no longer listed, then a step of merging runs where runs of a size class are
    /// many, and a step of saving the filter, once the runs it does not hold have grown
    /// (beside a merge, up to half the step and before it).
    pub(crate) fn maintain(&mut self, kv: &Kv, step: u64) -> Result<(), StoreError> {
        let mut budget = step;
        self.remove_unlisted(kv, &mut budget)?;
        let merging = self.merge.is_some() || self.merge_sources().is_some();
        if budget > 0 && merging && (self.save.is_some() || self.unsaved() >= SAVE_AFTER) {
            // Beside a merge, a save under way or due takes up to half the step (at least a
            // chunk) first: a large merge takes every step for as long as it lasts (33 M
            // ids, 33 catch-up batches), and a save of a grown filter (224 MiB, seven times
            // one of 32) that waited for it left the runs it would hold unsaved: a restart
            // after a large fold read about half its ids from the runs.
            if self.save.is_none() {
                self.begin_save();
            }
            let mut share = budget / 2;
            let cost = self.save_step(kv, &mut share)?;
            budget = budget.saturating_sub(cost);
        }
        while budget > 0 {
            let mut merge = match self.merge.take() {
                Some(merge) => merge,
                None => match self.next_merge() {
                    Some(merge) => merge,
                    None => break,
                },
            };
            if merge.step(kv, &mut budget)? {
                self.finish(kv, merge)?;
            } else {
                self.merge = Some(merge);
            }
        }
        if budget > 0 && (self.save.is_some() || self.unsaved() >= SAVE_AFTER) {
            // With what the merges left. Begun only when a chunk is written, so that the
            // runs it holds are those listed then.
            if self.save.is_none() {
                self.begin_save();
            }
            self.save_step(kv, &mut budget)?;
        }
        Ok(())
    }

    /// Removes records no longer listed, a batch of up to `budget`'s worth at a time
    /// (at least one record).
    fn remove_unlisted(&mut self, kv: &Kv, budget: &mut u64) -> Result<(), StoreError> {
        while *budget > 0 {
            let Some(prefix) = self.unlisted.front() else {
                break;
            };
            let most = usize::try_from(*budget / RECORD_COST)
                .unwrap_or(REMOVALS)
                .clamp(1, REMOVALS);
            let n = remove_some(kv, prefix, most)?;
            if n == 0 {
                self.unlisted.pop_front();
                continue;
            }
            *budget = budget.saturating_sub(n * RECORD_COST);
        }
        Ok(())
    }

    /// Does all the upkeep that is due, in steps as large as a catch-up's: merges until
    /// no size class has [`FAN_IN`] runs, a save of the filter, the removals.
    pub(crate) fn settle(&mut self, kv: &Kv) -> Result<(), StoreError> {
        // A save begun beside a merge holds the runs listed then; one begun now holds
        // every run, so that the store's next opening reads none. The chunks written so
        // far are no longer listed: removed here, or as orphans at the next load.
        if let Some(save) = self.save.take() {
            self.unlisted
                .push_back(keys::number_prefix(keys::ID_FILTER_PREFIX, save.generation));
            self.begin_save();
        }
        while !self.is_settled() {
            self.maintain(kv, UPKEEP_STEP)?;
        }
        Ok(())
    }

    /// Whether no upkeep is under way or due.
    fn is_settled(&self) -> bool {
        self.merge.is_none()
            && self.merge_sources().is_none()
            && self.save.is_none()
            && self.unsaved() < SAVE_AFTER
            && self.unlisted.is_empty()
    }

    /// Ids of the runs the saved filter does not hold.
    fn unsaved(&self) -> u64 {
        self.manifest
            .runs
            .iter()
            .filter(|r| !r.saved)
            .map(|r| r.ids)
            .sum()
    }

    /// A merge of the runs [`AppliedIds::merge_sources`] names, if any.
    fn next_merge(&mut self) -> Option<Merge> {
        let sources = self.merge_sources()?;
        let output = self.manifest.next_run;
        self.manifest.next_run += 1;
        let numbers: Vec<u64> = sources.iter().map(|r| r.number).collect();
        Some(Merge::new(output, &numbers))
    }

    /// The oldest [`FAN_IN`] runs of the smallest size class that has that many.
    fn merge_sources(&self) -> Option<Vec<Run>> {
        let class = |r: &Run| r.ids.max(1).ilog2() / FAN_IN.ilog2();
        let mut classes: Vec<u32> = self.manifest.runs.iter().map(class).collect();
        classes.sort_unstable();
        classes.dedup();
        let full = classes
            .into_iter()
            .find(|c| self.manifest.runs.iter().filter(|r| class(r) == *c).count() >= FAN_IN)?;
        Some(
            self.manifest
                .runs
                .iter()
                .filter(|r| class(r) == full)
                .take(FAN_IN)
                .copied()
                .collect(),
        )
    }

    /// Lists a merge's output instead of its sources, and removes their chunks.
    fn finish(&mut self, kv: &Kv, mut merge: Merge) -> Result<(), StoreError> {
        let mut manifest = self.manifest.clone();
        let sources: Vec<Run> = manifest
            .runs
            .iter()
            .filter(|r| merge.sources.iter().any(|s| s.run == r.number))
            .copied()
            .collect();
        let expected: u64 = sources.iter().map(|r| r.ids).sum();
        if sources.len() != merge.sources.len() || expected != merge.taken {
            return Err(StoreError::Corrupt(format!(
                "a merge of runs of applied ids read {} ids of {expected}",
                merge.taken
            )));
        }
        manifest
            .runs
            .retain(|r| !merge.sources.iter().any(|s| s.run == r.number));
        manifest.runs.push(Run {
            number: merge.output,
            ids: merge.written,
            seqs: sources
                .iter()
                .map(|r| r.seqs)
                .fold((u64::MAX, 0), |(a, b), (c, d)| (a.min(c), b.max(d))),
            saved: sources.iter().all(|r| r.saved),
        });
        manifest.runs.sort_by_key(|r| r.seqs.1);
        let mut batch = std::mem::take(&mut merge.pending);
        batch.put(keys::IDS_MANIFEST, encode_manifest(&manifest)?);
        let source_prefixes = || {
            merge
                .sources
                .iter()
                .map(|s| keys::number_prefix(keys::ID_RUN_PREFIX, s.run))
        };
        let mut sources_removed = false;
        if merge.written > ATOMIC_MERGE {
            // The output's chunks were written as it went: on disk before the manifest
            // names them.
            kv.flush_now()?;
        } else if let Some(chunks) = keys_under(kv, source_prefixes(), REMOVALS)? {
            // A small merge removes its sources' chunks in its one atomic batch: a write
            // for each source besides made a merge of a few ids a long wait under load.
            for chunk in chunks {
                batch.remove(chunk);
            }
            sources_removed = true;
        }
        kv.apply(batch)?;
        self.manifest = manifest;
        self.stats.merges += 1;
        if let Some(save) = &mut self.save {
            if merge.sources.iter().all(|s| save.covered.contains(&s.run)) {
                save.covered.insert(merge.output);
            }
        }
        // Unlisted now: removed over the next batches; what a crash leaves of them, at
        // the next load.
        if !sources_removed {
            self.unlisted.extend(source_prefixes());
        }
        Ok(())
    }

    /// Begins a save of the filter, as a new generation of chunks: the runs listed now are
    /// those it will hold.
    fn begin_save(&mut self) {
        let generation = self.manifest.next_filter;
        // Any manifest written from now on has the generation taken: a save cut short by
        // a crash leaves chunks no manifest names, removed at the next load.
        self.manifest.next_filter += 1;
        self.save = Some(FilterSave {
            generation,
            layers: self.filter.layers(),
            written: 0,
            covered: self.manifest.runs.iter().map(|r| r.number).collect(),
        });
    }

    /// Writes the save's next chunks in one batch, up to `budget`'s worth (at least one,
    /// at most [`REMOVALS`]), and returns what they cost; once all are written, switches
    /// the manifest to the new generation (every run it covers marked saved) and leaves
    /// the previous generation to be removed.
    fn save_step(&mut self, kv: &Kv, budget: &mut u64) -> Result<u64, StoreError> {
        let Some(save) = self.save.as_mut() else {
            return Ok(0);
        };
        let layers: Vec<u64> = self
            .filter
            .layer_words()
            .into_iter()
            .take(save.layers)
            .collect();
        let words = usize::try_from(layers.iter().sum::<u64>()).unwrap_or(usize::MAX);
        let per_chunk = FILTER_CHUNK_BYTES / 8;
        let chunks = words.div_ceil(per_chunk);
        let most = usize::try_from(*budget / RECORD_COST)
            .unwrap_or(REMOVALS)
            .clamp(1, REMOVALS);
        let mut batch = Commit::default();
        let end = chunks.min(save.written.saturating_add(most));
        for n in save.written..end {
            let chunk = self.filter.chunk(save.layers, n * per_chunk, per_chunk);
            let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
            let n = u32::try_from(n)
                .map_err(|_| StoreError::Corrupt("a filter of too many chunks".into()))?;
            batch.put(keys::id_filter(save.generation, n), bytes);
        }
        kv.apply(batch)?;
        let cost = (end - save.written) as u64 * RECORD_COST;
        *budget = budget.saturating_sub(cost);
        save.written = end;
        if save.written < chunks {
            return Ok(cost);
        }
        let Some(save) = self.save.take() else {
            return Ok(cost);
        };
        let mut manifest = self.manifest.clone();
        let replaced = manifest.filter.replace(SavedFilter {
            generation: save.generation,
            format: FILTER_FORMAT.to_owned(),
            words: words as u64,
            hashes: self.filter.hashes(),
            layers: if layers.len() > 1 { layers } else { Vec::new() },
        });
        for run in &mut manifest.runs {
            run.saved = save.covered.contains(&run.number);
        }
        // The chunks on disk before the manifest names them.
        kv.flush_now()?;
        kv.put(keys::IDS_MANIFEST, &encode_manifest(&manifest)?)?;
        self.manifest = manifest;
        if let Some(replaced) = replaced {
            self.unlisted.push_back(keys::number_prefix(
                keys::ID_FILTER_PREFIX,
                replaced.generation,
            ));
        }
        self.stats.filter_saves += 1;
        Ok(cost)
    }

    /// Runs a merge step by step with `budget` ids a step, for tests that stop it part way.
    #[cfg(test)]
    pub(crate) fn merge_partly(&mut self, kv: &Kv, mut budget: u64) -> Result<bool, StoreError> {
        let Some(mut merge) = self.merge.take().or_else(|| self.next_merge()) else {
            return Ok(false);
        };
        if merge.step(kv, &mut budget)? {
            self.finish(kv, merge)?;
        } else {
            self.merge = Some(merge);
        }
        Ok(true)
    }
}

/// Removes every record under `prefix` (numbered: runs, filter generations) whose number
/// `keep` refuses, going from one number to the next without reading the records between;
/// returns how many it removed.
pub(super) fn remove_numbered(
    kv: &Kv,
    prefix: &[u8],
    keep: impl Fn(u64) -> bool,
) -> Result<u64, StoreError> {
    let mut removed = 0;
    let mut from = prefix.to_vec();
    while let Some(item) = kv.range(from.as_slice()..).next() {
        let (key, _) = item?;
        if !key.starts_with(prefix) {
            break;
        }
        let number = keys::numbered(prefix, &key)
            .ok_or_else(|| StoreError::Corrupt("a record of applied event ids".into()))?;
        if !keep(number) {
            removed += remove_prefix(kv, &keys::number_prefix(prefix, number))?;
        }
        let Some(next) = number.checked_add(1) else {
            break;
        };
        from = prefix.to_vec();
        from.extend_from_slice(&next.to_be_bytes());
    }
    Ok(removed)
}

/// Records removed (or a filter's chunks written) in one batch: sled keeps every page a
/// batch replaces until the batch ends, and a batch removing a run of 33 M ids took
/// gigabytes.
const REMOVALS: usize = 1024;

/// The keys of the records under `prefixes`, if there are at most `most` of them.
fn keys_under(
    kv: &Kv,
    prefixes: impl Iterator<Item = Vec<u8>>,
    most: usize,
) -> Result<Option<Vec<Bytes>>, StoreError> {
    let mut keys = Vec::new();
    for prefix in prefixes {
        for key in kv.prefix(&prefix).keys() {
            if keys.len() == most {
                return Ok(None);
            }
            keys.push(key?);
        }
    }
    Ok(Some(keys))
}

/// Removes every record under `prefix`, [`REMOVALS`] at a time; how many it removed.
fn remove_prefix(kv: &Kv, prefix: &[u8]) -> Result<u64, StoreError> {
    let mut removed = 0;
    loop {
        match remove_some(kv, prefix, REMOVALS)? {
            0 => return Ok(removed),
            n => removed += n,
        }
    }
}

/// Removes up to `most` records under `prefix`, in one batch; how many it removed.
fn remove_some(kv: &Kv, prefix: &[u8], most: usize) -> Result<u64, StoreError> {
    let mut batch = Commit::default();
    let mut n = 0;
    for key in kv.prefix(prefix).keys().take(most) {
        batch.remove(key?);
        n += 1;
    }
    if n > 0 {
        kv.apply(batch)?;
    }
    Ok(n)
}
