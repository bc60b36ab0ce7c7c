//! The applied ids in a real sled store: duplicates found at any age, across runs and
//! merges, after a restart that reads only what the saved filter lacks, and after a merge
//! or a filter save cut short; the upkeep in short steps before live batches.

use fastbloom::BloomFilter;
use racing_events::{samples, Envelope};

use super::limits::{ATOMIC_MERGE, FAN_IN, FILTER_CHUNK_BYTES, PROMPT_UPKEEP_STEP, RECORD_COST};
use super::*;
use crate::fold::Outcome;
use crate::store::{Options, Store};
use crate::tests::{reopen, tempdir, try_reopen};

/// The `i`th id, spread over the id space as random ids are.
fn id(i: u64) -> u128 {
    u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
}

/// An odds move under `event_id` `id`.
fn event(id: u128) -> Envelope {
    let race = i64::try_from(id % 10).unwrap_or(0) + 1;
    let mut e = samples::envelope(samples::odds("2026-11-22", race, &[("A1", 2.5)]));
    e.event_id = uuid::Uuid::from_u128(id);
    e
}

/// Folds the events of `ids` into `store` as one batch after its checkpoint, and commits
/// it; the outcome of each.
fn fold(store: &Store, ids: impl IntoIterator<Item = u128>) -> Vec<Outcome> {
    fold_in(store, store.batch().expect("batch"), ids)
}

/// [`fold`] in a prompt batch (a live update's): its upkeep goes a short step.
fn fold_prompt(store: &Store, ids: impl IntoIterator<Item = u128>) -> Vec<Outcome> {
    fold_in(store, store.prompt_batch().expect("batch"), ids)
}

fn fold_in(
    store: &Store,
    mut batch: crate::batch::Batch<'_>,
    ids: impl IntoIterator<Item = u128>,
) -> Vec<Outcome> {
    let mut seq = store.checkpoint().expect("checkpoint");
    let outcomes = ids
        .into_iter()
        .map(|id| {
            seq += 1;
            batch
                .apply(seq, 0, &event(id))
                .expect("apply")
                .expect("after the checkpoint")
        })
        .collect();
    batch.commit().expect("commit");
    outcomes
}

/// A filter of 64 bits: it rules nothing out, so every id is looked up in the runs.
const NO_FILTER: Options = Options {
    id_filter_bytes: 8,
    id_filter_most_bytes: 8,
    cache_bytes: 16 << 20,
    replay_bytes: 16 << 20,
};

/// A filter of 64 KiB: hardly a false positive among the thousands of ids here.
const SMALL: Options = Options {
    id_filter_bytes: 64 * 1024,
    id_filter_most_bytes: 64 * 1024,
    cache_bytes: 16 << 20,
    replay_bytes: 16 << 20,
};

/// Whether the ids of `range`, folded again in one batch, are all found duplicates.
fn all_duplicates(store: &Store, range: std::ops::Range<u64>) -> bool {
    fold(store, range.map(id))
        .iter()
        .all(|o| *o == Outcome::Duplicate)
}

fn stats(store: &Store) -> AppliedIdStats {
    store.applied_id_stats().expect("stats")
}

/// Folds 4,000 ids into a store at `dir` in batches of 100 (with a [`SMALL`] filter), and
/// closes it; how its ids stood.
fn fold_4000(dir: &std::path::Path) -> AppliedIdStats {
    let store = Store::open_with(dir, SMALL).expect("open");
    for b in 0..40 {
        fold(&store, (b * 100..b * 100 + 100).map(id));
    }
    stats(&store)
}

#[test]
fn duplicates_are_found_in_every_run_before_and_after_merges() {
    let dir = tempdir();
    let store = Store::open_with(dir.path(), NO_FILTER).expect("open");
    for b in 0..100 {
        let fresh = b * 5..b * 5 + 5;
        // Five new ids, one of them twice; then ids of the batch before and of one
        // further back (merged by now, for most).
        let mut ids: Vec<u128> = fresh.clone().map(id).collect();
        ids.push(id(fresh.start + 2));
        if b > 0 {
            ids.extend([id(fresh.start - 1), id((b * 37 % b) * 5)]);
        }
        let outcomes = fold(&store, ids);
        assert_eq!(outcomes[..5], [Outcome::Applied; 5], "batch {b}");
        assert!(
            outcomes[5..].iter().all(|o| *o == Outcome::Duplicate),
            "batch {b}: {outcomes:?}"
        );
    }
    let before = stats(&store);
    assert_eq!(before.ids, 500);
    assert!(before.merges >= 12, "{before:?}");
    assert!(before.runs < 20, "{before:?}");
    assert!(
        all_duplicates(&store, 0..500),
        "every id applied before is a duplicate"
    );
    assert!(
        fold(&store, (500..600).map(id))
            .iter()
            .all(|o| *o == Outcome::Applied),
        "no new id is taken for one applied"
    );
    assert_eq!(
        store.applied_event_ids().expect("ids"),
        (0..600).map(id).collect()
    );
}

#[test]
fn a_prompt_batch_merges_a_short_step_and_the_next_ones_finish_the_merge() {
    let dir = tempdir();
    let store = Store::open_with(dir.path(), SMALL).expect("open");
    // As many runs of one size class as make a merge due before the next batch.
    let per_run = 100;
    for r in 0..FAN_IN as u64 {
        fold(&store, (r * per_run..(r + 1) * per_run).map(id));
    }
    let ids = FAN_IN as u64 * per_run;
    let before = stats(&store);
    assert_eq!((before.ids, before.merges), (ids, 0), "{before:?}");
    // Each prompt batch (empty here) merges PROMPT_UPKEEP_STEP ids further, no more.
    let mut prompt_batches = 0;
    while stats(&store).merges == 0 {
        store
            .prompt_batch()
            .expect("batch")
            .commit()
            .expect("commit");
        prompt_batches += 1;
        assert!(prompt_batches <= 2 * ids, "the merge never finished");
    }
    assert!(
        prompt_batches >= ids / PROMPT_UPKEEP_STEP,
        "{prompt_batches} prompt batches merged {ids} ids"
    );
    let after = stats(&store);
    assert_eq!((after.ids, after.runs), (ids, 1), "{after:?}");
    // The sources of a merge that large (a chunk each) are removed over the prompt
    // batches that follow, a chunk each (a step is less than a chunk's worth here).
    let run_chunks = || store.kv.prefix(keys::ID_RUN_PREFIX).count();
    let output = (ids as usize).div_ceil(CHUNK_IDS);
    assert!(ids > ATOMIC_MERGE && PROMPT_UPKEEP_STEP < RECORD_COST);
    assert_eq!(run_chunks(), output + FAN_IN, "the sources, unlisted");
    for left in (0..FAN_IN).rev() {
        store
            .prompt_batch()
            .expect("batch")
            .commit()
            .expect("commit");
        assert_eq!(run_chunks(), output + left);
    }
    assert!(
        all_duplicates(&store, 0..ids),
        "every id applied before is a duplicate"
    );
    // A batch that no one waits for merges in one go what is due; a merge that small
    // removes its sources' chunks in the batch that switches to its output.
    let other = tempdir();
    let store = Store::open_with(other.path(), SMALL).expect("open");
    let per_run = ATOMIC_MERGE / FAN_IN as u64;
    for r in 0..FAN_IN as u64 {
        fold(&store, (r * per_run..(r + 1) * per_run).map(id));
    }
    store.batch().expect("batch").commit().expect("commit");
    assert_eq!(stats(&store).merges, 1);
    let ids = FAN_IN as u64 * per_run;
    assert_eq!(
        store.kv.prefix(keys::ID_RUN_PREFIX).count(),
        (ids as usize).div_ceil(CHUNK_IDS),
        "the output's chunks alone"
    );
    assert_eq!(
        store.applied_event_ids().expect("ids"),
        (0..ids).map(id).collect()
    );
}

#[test]
fn a_reopened_store_loads_its_saved_filter_and_reads_only_the_runs_it_lacks() {
    let dir = tempdir();
    let folded = fold_4000(dir.path());
    assert!(folded.filter_saves >= 1, "{folded:?}");
    assert_eq!(folded.ids, 4000);
    let store = reopen(dir.path(), SMALL);
    let reopened = stats(&store);
    assert!(reopened.filter_loaded, "{reopened:?}");
    assert!(
        reopened.read_at_load > 0 && reopened.read_at_load < 2000,
        "read {} ids of 4,000 at load",
        reopened.read_at_load
    );
    // The saved filter and the ids added to it give no false negative: every id, saved
    // in it or not, merged since or not, is a duplicate.
    assert!(all_duplicates(&store, 0..4000));
    assert!(stats(&store).run_lookups >= 4000);
}

/// Chunks of the [`SMALL`] filter.
const SMALL_CHUNKS: usize = 64 * 1024 / FILTER_CHUNK_BYTES;

/// Folds 3,000 ids into `store` (a [`SMALL`] filter), the last hundred in a prompt
/// batch, so that the next prompt batch begins a save of the filter.
fn fold_until_a_save_is_due(store: &Store) {
    for b in 0..29 {
        fold(store, (b * 100..b * 100 + 100).map(id));
    }
    fold_prompt(store, (2900..3000).map(id));
    assert_eq!(stats(store).filter_saves, 0);
}

#[test]
fn a_filter_save_goes_a_chunk_a_prompt_batch_and_holds_the_runs_listed_when_it_began() {
    let dir = tempdir();
    let mut next = 3000;
    {
        let store = Store::open_with(dir.path(), SMALL).expect("open");
        fold_until_a_save_is_due(&store);
        // A new id in each prompt batch while the save goes on: their runs are not in it.
        let mut batches = 0;
        while stats(&store).filter_saves == 0 {
            assert_eq!(fold_prompt(&store, [id(next)]), [Outcome::Applied]);
            next += 1;
            batches += 1;
            assert!(batches <= 100, "the save never finished");
        }
        assert_eq!(batches, SMALL_CHUNKS, "a chunk a prompt batch");
        assert_eq!(
            store.kv.prefix(keys::ID_FILTER_PREFIX).count(),
            SMALL_CHUNKS
        );
    }
    let store = reopen(dir.path(), SMALL);
    let reopened = stats(&store);
    assert!(reopened.filter_loaded, "{reopened:?}");
    assert_eq!(
        reopened.read_at_load,
        next - 3000,
        "the ids applied while the save went on, alone"
    );
    assert!(all_duplicates(&store, 0..next));
}

#[test]
fn a_filter_save_cut_short_between_prompt_batches_is_removed_at_the_next_load() {
    let dir = tempdir();
    {
        let store = Store::open_with(dir.path(), SMALL).expect("open");
        fold_until_a_save_is_due(&store);
        for n in 0..3 {
            fold_prompt(&store, [id(3000 + n)]);
        }
        assert_eq!(stats(&store).filter_saves, 0);
        assert_eq!(store.kv.prefix(keys::ID_FILTER_PREFIX).count(), 3);
    }
    let store = reopen(dir.path(), SMALL);
    let reopened = stats(&store);
    assert_eq!(reopened.orphans_removed, 3, "{reopened:?}");
    assert!(!reopened.filter_loaded);
    assert_eq!(reopened.read_at_load, 3003);
    assert_eq!(store.kv.prefix(keys::ID_FILTER_PREFIX).count(), 0);
    assert!(all_duplicates(&store, 0..3003));
}

#[test]
fn a_settled_store_leaves_no_upkeep_to_the_batches_after_it() {
    let dir = tempdir();
    let settled = {
        let store = Store::open_with(dir.path(), SMALL).expect("open");
        // Prompt batches of 100 new ids merge 64 a batch: merges fall behind, and a
        // save of the filter comes due.
        for b in 0..40 {
            fold_prompt(&store, (b * 100..b * 100 + 100).map(id));
        }
        let behind = stats(&store);
        assert!(behind.runs >= FAN_IN, "{behind:?}");
        assert_eq!(behind.filter_saves, 0, "{behind:?}");
        store.settle_applied_ids().expect("settle");
        let settled = stats(&store);
        assert!(settled.runs < behind.runs, "{settled:?}");
        assert_eq!(settled.filter_saves, 1, "{settled:?}");
        for _ in 0..10 {
            store
                .prompt_batch()
                .expect("batch")
                .commit()
                .expect("commit");
        }
        assert_eq!(stats(&store), settled, "no upkeep was left");
        settled
    };
    // Nothing unlisted is left on disk, and the saved filter holds every run.
    let store = reopen(dir.path(), SMALL);
    let reopened = stats(&store);
    assert_eq!(
        (reopened.orphans_removed, reopened.read_at_load),
        (0, 0),
        "{reopened:?}"
    );
    assert_eq!((reopened.ids, reopened.runs), (settled.ids, settled.runs));
    assert!(all_duplicates(&store, 0..4000));
}

#[test]
fn a_store_opened_with_another_filter_size_builds_its_filter_from_every_run() {
    let dir = tempdir();
    fold_4000(dir.path());
    let larger = Options {
        id_filter_bytes: 128 * 1024,
        ..SMALL
    };
    let store = reopen(dir.path(), larger);
    let reopened = stats(&store);
    assert!(!reopened.filter_loaded);
    assert_eq!(reopened.read_at_load, 4000);
    assert_eq!(reopened.filter_bytes, 128 * 1024);
    assert!(all_duplicates(&store, 0..4000));
}

/// Chunks of output a merge of 1,600 ids writes out before it is done: those past
/// [`ATOMIC_MERGE`] ids (each source of 200 ids is one chunk).
const OUTPUT: usize = (ATOMIC_MERGE as usize / CHUNK_IDS) + 1;

#[test]
fn a_merge_or_filter_save_cut_short_leaves_orphans_that_are_removed_and_loses_no_id() {
    let dir = tempdir();
    {
        let store = reopen(dir.path(), NO_FILTER);
        for b in 0..8 {
            fold(&store, (b * 200..b * 200 + 200).map(id));
        }
        // Eight runs of a size: a merge is due. It writes its first chunks of output, and
        // the process dies before the manifest names the output.
        store
            .with_ids(|ids| ids.merge_partly(&store.kv, ATOMIC_MERGE + CHUNK_IDS as u64 + 10))
            .expect("a part of the merge");
        // And a filter save that died before its manifest.
        store.kv.put(&keys::id_filter(7, 0), &[0; 64]).expect("put");
        let chunks = store.kv.prefix(keys::ID_RUN_PREFIX).count();
        assert_eq!(
            chunks,
            8 + OUTPUT,
            "the sources' chunks and some of the output"
        );
    }
    let store = reopen(dir.path(), NO_FILTER);
    let reopened = stats(&store);
    assert_eq!(reopened.orphans_removed, OUTPUT as u64 + 1, "{reopened:?}");
    assert_eq!((reopened.runs, reopened.ids), (8, 1600));
    assert_eq!(store.kv.prefix(keys::ID_RUN_PREFIX).count(), 8);
    assert_eq!(store.kv.prefix(keys::ID_FILTER_PREFIX).count(), 0);
    assert_eq!(
        store.applied_event_ids().expect("ids"),
        (0..1600).map(id).collect()
    );
    // The next batch merges them again, whole this time; nothing is lost either way.
    assert_eq!(fold(&store, [id(1600)]), [Outcome::Applied]);
    let merged = stats(&store);
    assert_eq!((merged.merges, merged.runs, merged.ids), (1, 2, 1601));
    assert!(all_duplicates(&store, 0..1601));
}

#[test]
fn a_save_of_the_filter_begins_and_goes_on_beside_a_large_merge() {
    let dir = tempdir();
    let store = Store::open_with(dir.path(), SMALL).expect("open");
    // Eight runs of 400 ids: a merge of 3,200 is due, and a save (3,200 ids unsaved).
    for r in 0..FAN_IN as u64 {
        fold(&store, (r * 400..(r + 1) * 400).map(id));
    }
    let due = stats(&store);
    assert_eq!((due.runs, due.merges, due.filter_saves), (FAN_IN, 0, 0));
    // Steps of eight chunks' worth: the merge takes several, and so does the save.
    let step = || {
        store
            .with_ids(|ids| ids.maintain(&store.kv, 8 * RECORD_COST))
            .expect("a step")
    };
    step();
    assert_eq!(stats(&store).merges, 0, "the merge is under way");
    assert!(
        store.kv.prefix(keys::ID_FILTER_PREFIX).count() > 0,
        "and so is the save"
    );
    let mut steps = 1;
    while stats(&store).filter_saves == 0 || stats(&store).merges == 0 {
        step();
        steps += 1;
        assert!(
            steps <= 2 * SMALL_CHUNKS,
            "the save or the merge never finished"
        );
    }
    // The merge's sources were all in the save: so is its output, not read at the next
    // load.
    drop(store);
    let store = reopen(dir.path(), SMALL);
    let reopened = stats(&store);
    assert!(reopened.filter_loaded, "{reopened:?}");
    assert_eq!(
        (reopened.runs, reopened.read_at_load),
        (1, 0),
        "{reopened:?}"
    );
    assert!(all_duplicates(&store, 0..3_200));
}

/// A filter whose first layer is of 1 KiB (within its share up to about 740 ids), which
/// may grow to 1 MiB.
const GROWING: Options = Options {
    id_filter_bytes: 1024,
    id_filter_most_bytes: 1 << 20,
    cache_bytes: 16 << 20,
    replay_bytes: 16 << 20,
};

/// Folds the ids from `from` to `to` into `store` in batches of 1,000.
fn fold_range(store: &Store, from: u64, to: u64) {
    for b in (from..to).step_by(1000) {
        fold(store, (b..to.min(b + 1000)).map(id));
    }
}

/// The share of `n` ids never applied, from `from` on, that the filter let through to a
/// look-up in the runs (none of them found there).
fn measured_false_positives(store: &Store, from: u64, n: u64) -> f64 {
    let before = stats(store);
    for i in from..from + n {
        let seen = store
            .with_ids(|ids| ids.contains(&store.kv, id(i)))
            .expect("look-up");
        assert_ne!(seen, Seen::InRun, "id {i} was never applied");
    }
    let after = stats(store);
    assert_eq!(
        after.run_lookups - before.run_lookups,
        after.false_positives - before.false_positives
    );
    (after.false_positives - before.false_positives) as f64 / n as f64
}

#[test]
fn the_filter_grows_a_layer_at_a_time_and_its_false_positives_stay_bounded() {
    let dir = tempdir();
    let store = Store::open_with(dir.path(), GROWING).expect("open");
    let mut applied = 0;
    // Ids never applied, to look up: far past those applied.
    let mut probe = 1 << 40;
    let mut layers = 0;
    // 3, 10 and 40 times what the first layer holds within its share: one filter of
    // 1 KiB would let through 40%, 98% and all of new ids.
    for count in [2_000, 8_000, 30_000] {
        fold_range(&store, applied, count);
        applied = count;
        let measured = measured_false_positives(&store, probe, 10_000);
        probe += 10_000;
        let now = stats(&store);
        assert!(now.filter_layers > layers, "{count} ids: {now:?}");
        layers = now.filter_layers;
        assert!(
            now.filter_false_positive_rate <= filter::TARGET_FALSE_POSITIVES,
            "{count} ids: {now:?}"
        );
        // And what look-ups meet: under 2% of 10,000 new ids (1% and sampling noise).
        assert!(
            measured < 0.02,
            "{count} ids: {measured} of new ids looked up"
        );
        assert!(!now.filter_capped, "{now:?}");
    }
    assert!(stats(&store).filter_bytes <= 1 << 20);
    assert!(all_duplicates(&store, 0..applied), "no false negative");
}

#[test]
fn a_grown_filter_is_saved_with_its_layers_and_loaded_as_saved() {
    let dir = tempdir();
    let grown = {
        let store = Store::open_with(dir.path(), GROWING).expect("open");
        fold_range(&store, 0, 4_000);
        store.settle_applied_ids().expect("settle");
        stats(&store)
    };
    assert!(grown.filter_layers >= 3, "{grown:?}");
    assert!(grown.filter_saves >= 1, "{grown:?}");
    let store = reopen(dir.path(), GROWING);
    let reopened = stats(&store);
    assert!(reopened.filter_loaded, "{reopened:?}");
    assert_eq!(
        (reopened.filter_layers, reopened.filter_bytes),
        (grown.filter_layers, grown.filter_bytes)
    );
    // Each layer's ids estimated from its bits: about as many as were inserted.
    let estimated = reopened.filter_false_positive_rate;
    assert!(
        (estimated - grown.filter_false_positive_rate).abs() < 0.002,
        "{estimated} after the restart, {grown:?} before"
    );
    assert!(measured_false_positives(&store, 1 << 40, 10_000) < 0.02);
    assert!(all_duplicates(&store, 0..4_000));
    // A release that knew one layer alone sees a filter of another size in it.
    let manifest = read_manifest(&store.kv).expect("manifest");
    let saved = manifest.filter.expect("a saved filter");
    assert_eq!(saved.words, grown.filter_bytes as u64 / 8);
    assert_eq!(saved.layer_words().len(), grown.filter_layers);
}

#[test]
fn a_filter_that_may_not_grow_says_so_as_its_false_positives_climb() {
    let dir = tempdir();
    let capped = Options {
        id_filter_most_bytes: 1024,
        ..GROWING
    };
    let store = Store::open_with(dir.path(), capped).expect("open");
    fold_range(&store, 0, 500);
    let within = stats(&store);
    assert_eq!(within.filter_layers, 1);
    assert!(!within.filter_capped, "{within:?}");
    fold_range(&store, 500, 3_000);
    let past = stats(&store);
    assert_eq!((past.filter_layers, past.filter_bytes), (1, 1024));
    assert!(past.filter_capped, "{past:?}");
    assert!(
        past.filter_false_positive_rate > 0.3,
        "3,000 ids in 1 KiB: {past:?}"
    );
    assert!(measured_false_positives(&store, 1 << 40, 2_000) > 0.3);
}

#[test]
fn a_store_of_the_per_batch_id_records_is_of_an_older_schema() {
    let dir = tempdir();
    {
        let store = Store::open(dir.path()).expect("open");
        store
            .kv
            .put(b"meta\0schema", b"4")
            .expect("the schema of a store with a record of ids per batch");
    }
    // Opened again as `reopen` does: the dropped store's lock may still be held a moment.
    let opened = try_reopen(dir.path(), Options::default()).err();
    assert!(
        matches!(opened, Some(crate::kv::StoreError::OlderSchema(4))),
        "{opened:?}"
    );
}

#[test]
fn saved_filter_format_is_stable() {
    // A saved filter is loaded only if its bits mean what they meant when it was saved:
    // if this changes (another `fastbloom`, another hash), so must FILTER_FORMAT.
    let mut filter = BloomFilter::with_num_bits(64 * 64).hashes(HASHES);
    for i in 0..100 {
        filter.insert_hash(hash(id(i)));
    }
    let bits: Vec<u8> = filter
        .as_slice()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    assert_eq!(xxhash_rust::xxh3::xxh3_64(&bits), 0x27ba_3974_c39d_b77c);
}
