//! A load's batch written in steps: whole after a crash at any step, and a damaged redo
//! file refused rather than half applied.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::store::{Options, Store};
use crate::tests::{reopen, tempdir, try_reopen};

/// Records a store holds, bar its schema.
fn contents(kv: &Kv) -> BTreeMap<Vec<u8>, Vec<u8>> {
    kv.all()
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .filter(|r| !matches!(r, Ok((k, _)) if k.starts_with(b"meta\0schema")))
        .collect::<Result<_, _>>()
        .expect("the store reads back")
}

/// Redo files left in `dir`.
fn redo_files(dir: &Path) -> Vec<u64> {
    files_in(dir)
        .expect("the directory reads")
        .into_iter()
        .map(|(seq, _)| seq)
        .collect()
}

/// A store in `dir` holding 3,000 records at checkpoint 7, and a batch reaching 8 that
/// replaces 1,000 of them, removes 1,000 and adds 9,000: three steps and more.
fn store_and_batch(dir: &Path) -> (Store, Commit) {
    let store = Store::open(dir).expect("open");
    let mut before = Commit::default();
    for i in 0..3_000u32 {
        before.put(format!("rec\0{i:06}"), format!("before {i}"));
    }
    before.put(keys::CHECKPOINT, 7u64.to_be_bytes());
    store.kv.apply(before).expect("apply");
    let mut batch = Commit::default();
    for i in 0..1_000u32 {
        batch.put(format!("rec\0{i:06}"), format!("after {i}"));
        batch.remove(format!("rec\0{:06}", 1_000 + i));
    }
    for i in 3_000..12_000u32 {
        batch.put(format!("rec\0{i:06}"), vec![b'x'; (i % 300) as usize]);
    }
    batch.put(keys::CHECKPOINT, 8u64.to_be_bytes());
    assert!(batch.iter().count() > 2 * STEP_RECORDS);
    (store, batch)
}

/// The records of `batch` applied whole, atomically, over the same store: what the steps
/// must give.
fn applied_whole(batch: &Commit) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let dir = tempdir();
    let (store, _) = store_and_batch(dir.path());
    store.kv.apply(batch.clone()).expect("apply");
    contents(&store.kv)
}

#[test]
fn a_batch_written_in_steps_holds_what_one_atomic_write_holds_and_leaves_nothing_behind() {
    let dir = tempdir();
    let (store, batch) = store_and_batch(dir.path());
    let expected = applied_whole(&batch);
    write(&store.kv, dir.path(), 8, batch).expect("write in steps");
    assert_eq!(
        redo_files(dir.path()),
        [8],
        "the file stays until the load's end"
    );
    end(&store.kv, dir.path()).expect("end");
    assert_eq!(contents(&store.kv), expected);
    assert_eq!(store.checkpoint().expect("checkpoint"), 8);
    assert!(redo_files(dir.path()).is_empty());
}

#[test]
fn a_crash_at_any_step_leaves_the_batch_whole_once_the_store_is_opened_again() {
    let steps = 12_000_usize.div_ceil(STEP_RECORDS);
    for done in 0..=steps {
        let dir = tempdir();
        let (store, batch) = store_and_batch(dir.path());
        let expected = applied_whole(&batch);
        // What `write` does, the process dying after `done` steps of the records.
        let body = begin(&store.kv, dir.path(), 8, batch).expect("begin");
        let (written, _) =
            body.split(|key| key < format!("rec\0{:06}", done * STEP_RECORDS).as_bytes());
        store
            .kv
            .apply_in_steps(written, STEP_RECORDS)
            .expect("some steps");
        store.kv.flush_now().expect("flush");
        drop(store);

        let store = reopen(dir.path(), Options::default());
        assert_eq!(contents(&store.kv), expected, "after {done} steps");
        assert!(redo_files(dir.path()).is_empty(), "after {done} steps");
    }
}

#[test]
fn a_redo_file_that_does_not_read_back_as_written_is_damage_not_a_batch_in_part() {
    for (what, damage) in [
        (
            "a byte changed",
            (|b: &mut Vec<u8>| b[40] ^= 1) as fn(&mut Vec<u8>),
        ),
        ("cut short", |b: &mut Vec<u8>| b.truncate(b.len() / 2)),
        ("gone", |b: &mut Vec<u8>| b.clear()),
    ] {
        let dir = tempdir();
        let (store, batch) = store_and_batch(dir.path());
        begin(&store.kv, dir.path(), 8, batch).expect("begin");
        let file = file_of(dir.path(), 8);
        let mut bytes = std::fs::read(&file).expect("read");
        damage(&mut bytes);
        if bytes.is_empty() {
            std::fs::remove_file(&file).expect("remove");
        } else {
            std::fs::write(&file, bytes).expect("write");
        }
        store.kv.flush_now().expect("flush");
        drop(store);
        match try_reopen(dir.path(), Options::default()) {
            Err(e) => assert!(e.is_damage(), "{what}: {e}"),
            Ok(_) => panic!("{what}: opened"),
        }
    }
}
