//! Snapshots: a frozen view reads one moment while writes go on; a loaded snapshot
//! answers as the store it was taken from and goes on from its checkpoint; a damaged
//! snapshot, or one of another layout or stream, is refused.

use std::collections::BTreeMap;
use std::io::Write as _;

use racing_events::samples::{card, envelope, odds_at, profile, result, runner};
use racing_events::Envelope;
use sha2::{Digest as _, Sha256};

use super::*;
use crate::kv::Commit;
use crate::tests::{tempdir, TempDir};

fn records(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    store
        .records()
        .map(|r| {
            let (k, v) = r.expect("record");
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

fn log() -> Vec<Envelope> {
    let mut events = Vec::new();
    for n in 1..=6 {
        events.push(profile(&format!("H{n}"), &format!("HORSE {n}")));
    }
    events.push(card("2026-11-18", "Sha Tin", 1, &["H1", "H2", "H3"]));
    for round in 0..5u32 {
        let p = 2.0 + f64::from(round);
        events.push(odds_at(
            "2026-11-18",
            "Sha Tin",
            1,
            &[("H1", p), ("H2", p + 1.0)],
        ));
    }
    events.push(result(
        "2026-11-18",
        "Sha Tin",
        1,
        vec![runner(Some(1), "H2"), runner(Some(2), "H1")],
    ));
    events.push(card("2026-11-22", "Sha Tin", 2, &["H4", "H5", "H6"]));
    events.push(odds_at("2026-11-22", "Sha Tin", 2, &[("H4", 3.0)]));
    events.into_iter().map(envelope).collect()
}

/// Applies `events` as sequences `from`, `from + 1`, ..., a batch each.
fn apply(store: &Store, from: u64, events: &[Envelope]) {
    for (seq, e) in (from..).zip(events) {
        let mut b = store.batch().expect("batch");
        b.apply(seq, seq as i128 * 1_000_000_000, e).expect("apply");
        b.commit().expect("commit");
    }
}

fn built(events: &[Envelope]) -> (TempDir, Store) {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    store.set_stream("RACING@1").expect("stream");
    apply(&store, 1, events);
    (dir, store)
}

#[test]
fn a_frozen_view_reads_the_store_as_it_stood_while_writes_go_on() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut c = Commit::default();
    for n in 0..100u32 {
        c.put(format!("k{n:03}"), format!("v{n}"));
    }
    store.kv.apply(c).expect("apply");
    let at_freeze = records(&store);

    let mut view = store.kv.freeze().expect("a view");
    assert!(store.kv.freeze().is_none(), "one view at a time");
    let mut read: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut part = 0;
    loop {
        let got = view.next_part(7).expect("part");
        if got.is_empty() {
            break;
        }
        read.extend(got.into_iter().map(|(k, v)| (k.to_vec(), v.to_vec())));
        // Writes behind the view, ahead of it, of keys it has not met, and removals.
        let mut w = Commit::default();
        w.put(format!("k{:03}", part * 3), "changed behind or ahead");
        w.put(format!("k{:03}", 99 - part), "changed ahead");
        w.put(format!("k{:03}x", 50 + part), "new");
        w.remove(format!("k{:03}", 60 + part));
        store.kv.apply(w).expect("write");
        store.kv.put(b"k999", b"new at the end").expect("put");
        part += 1;
    }
    drop(view);
    assert!(part > 10, "read in parts: {part}");
    let read: BTreeMap<_, _> = read.into_iter().collect();
    assert_eq!(read, at_freeze, "the view is the store at its freeze");
    assert_ne!(records(&store), at_freeze, "the writes went on");
    assert!(store.kv.freeze().is_some(), "a dropped view frees the next");
}

#[test]
fn a_loaded_snapshot_answers_as_its_store_and_goes_on_from_its_checkpoint() {
    let events = log();
    let (first, rest) = events.split_at(9);
    let (_dir, store) = built(first);
    let files = tempdir();
    std::fs::create_dir_all(files.path()).expect("dir");
    let file = files.path().join("snap");
    let written = store.write_snapshot(&file, || true).expect("written");
    assert_eq!(written.head.checkpoint, 9);
    assert_eq!(written.head.stream, "RACING@1");
    assert_eq!(written.head.layout, layout());
    assert_eq!(written.records as usize, records(&store).len());
    assert_eq!(
        verify_snapshot(&file, &written.digest).expect("verified"),
        SnapshotSummary {
            digest: String::new(),
            ..written.clone()
        }
    );

    let loaded_dir = tempdir();
    let expected = Expected {
        digest: &written.digest,
        stream: "RACING@1",
    };
    let (loaded, summary) =
        load_snapshot(&file, expected, loaded_dir.path(), Options::default()).expect("loaded");
    assert_eq!(summary.records, written.records);
    assert_eq!(records(&loaded), records(&store));
    assert_eq!(loaded.checkpoint().expect("checkpoint"), 9);

    // Both go on from the checkpoint, and a redelivered event is still known applied.
    apply(&store, 10, rest);
    apply(&loaded, 10, rest);
    let mut again = loaded.batch().expect("batch");
    assert_eq!(
        again.apply(100, 0, &first[3]).expect("apply"),
        Some(crate::fold::Outcome::Duplicate),
        "an applied event_id is known to the loaded store"
    );
    drop(again);
    assert_eq!(records(&loaded), records(&store));
}

/// A snapshot file written by hand: `head`, then `records`, then the end and `count`.
fn by_hand(
    file: &std::path::Path,
    head: &SnapshotHead,
    records: &[(&[u8], &[u8])],
    count: u64,
) -> String {
    let mut z = zstd::Encoder::new(Vec::new(), 1).expect("encoder");
    z.write_all(MAGIC).expect("write");
    let json = serde_json::to_vec(head).expect("json");
    z.write_all(&(json.len() as u32).to_be_bytes())
        .expect("write");
    z.write_all(&json).expect("write");
    for (k, v) in records {
        z.write_all(&(k.len() as u32).to_be_bytes()).expect("write");
        z.write_all(&(v.len() as u32).to_be_bytes()).expect("write");
        z.write_all(k).expect("write");
        z.write_all(v).expect("write");
    }
    z.write_all(&END.to_be_bytes()).expect("write");
    z.write_all(&count.to_be_bytes()).expect("write");
    let bytes = z.finish().expect("finish");
    std::fs::write(file, &bytes).expect("file");
    hex(&Sha256::digest(&bytes))
}

#[test]
fn a_damaged_snapshot_or_one_of_another_layout_or_stream_is_refused() {
    let (_dir, store) = built(&log());
    let files = tempdir();
    std::fs::create_dir_all(files.path()).expect("dir");
    let file = files.path().join("snap");
    let written = store.write_snapshot(&file, || true).expect("written");
    let load = |file: &std::path::Path, digest: &str, stream: &str| {
        let dir = tempdir();
        let expected = Expected { digest, stream };
        load_snapshot(file, expected, dir.path(), Options::default()).map(|(_, s)| s)
    };

    // A byte changed: its digest is not the one recorded.
    let mut bytes = std::fs::read(&file).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    let changed = files.path().join("changed");
    std::fs::write(&changed, &bytes).expect("write");
    let refused = load(&changed, &written.digest, "RACING@1").expect_err("refused");
    assert!(matches!(refused, SnapshotError::Digest { .. }), "{refused}");

    // Another stream.
    let refused = load(&file, &written.digest, "RACING@2").expect_err("refused");
    assert!(matches!(refused, SnapshotError::Stream { .. }), "{refused}");

    // Another layout, with a digest that matches it.
    let older = SnapshotHead {
        layout: "16".into(),
        ..written.head.clone()
    };
    let other = files.path().join("other");
    let digest = by_hand(&other, &older, &[], 0);
    let refused = load(&other, &digest, "RACING@1").expect_err("refused");
    assert!(matches!(refused, SnapshotError::Layout { .. }), "{refused}");

    // Whole in its digest, but out of order, miscounted, or cut short.
    let head = written.head.clone();
    let out_of_order = by_hand(&other, &head, &[(b"b", b"1"), (b"a", b"2")], 2);
    let refused = load(&other, &out_of_order, "RACING@1").expect_err("refused");
    assert!(matches!(refused, SnapshotError::Damaged(_)), "{refused}");
    let miscounted = by_hand(&other, &head, &[(b"a", b"1")], 5);
    let refused = load(&other, &miscounted, "RACING@1").expect_err("refused");
    assert!(matches!(refused, SnapshotError::Damaged(_)), "{refused}");
    let whole = std::fs::read(&file).expect("read");
    let cut = &whole[..whole.len() - 9];
    std::fs::write(&other, cut).expect("write");
    let digest = hex(&Sha256::digest(cut));
    let refused = load(&other, &digest, "RACING@1").expect_err("refused");
    assert!(
        matches!(refused, SnapshotError::Damaged(_) | SnapshotError::Io(_)),
        "{refused}"
    );
}

#[test]
fn a_copy_holds_every_record_as_the_store_stood_and_goes_on_from_its_checkpoint() {
    let events = log();
    let (first, rest) = events.split_at(9);
    let (_dir, store) = built(first);
    let copy_dir = tempdir();
    let (copy, copied) = store
        .copy_to(copy_dir.path(), Options::default(), || true)
        .expect("copied");
    assert_eq!(copied.head.checkpoint, 9);
    assert_eq!(copied.head.stream, "RACING@1");
    assert_eq!(records(&copy), records(&store));
    assert_eq!(copied.records as usize, records(&store).len());
    let (counted, bytes) = store.record_bytes().expect("read through");
    assert_eq!((counted, bytes), (copied.records, copied.record_bytes));

    // The copy goes on from its checkpoint as the store does.
    apply(&store, 10, rest);
    apply(&copy, 10, rest);
    assert_eq!(records(&copy), records(&store));

    // A directory that holds read models is refused, and one told to stop stops.
    drop(copy);
    let refused = store
        .copy_to(copy_dir.path(), Options::default(), || true)
        .map(|(_, copied)| copied);
    assert!(
        matches!(refused, Err(SnapshotError::Damaged(_))),
        "{refused:?}"
    );
    let stopped = store
        .copy_to(tempdir().path(), Options::default(), || false)
        .map(|(_, copied)| copied);
    assert!(
        matches!(stopped, Err(SnapshotError::Damaged(_))),
        "{stopped:?}"
    );
}
