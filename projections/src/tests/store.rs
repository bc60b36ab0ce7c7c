//! The fold through a sled store: batches committed with their checkpoint, redeliveries
//! and duplicate event ids skipped, warming, a later amendment.

use super::*;

#[test]
fn a_duplicate_event_id_is_ignored_at_any_age() {
    let first = env(result(
        "2026-11-01",
        "Sha Tin",
        1,
        vec![runner(Some(1), "A1")],
    ));
    let mut again = env(result(
        "2026-11-01",
        "Sha Tin",
        1,
        vec![runner(Some(1), "Z9")],
    ));
    again.event_id = first.event_id;
    let mut s = MemState::default();
    let mut f = Fold::default();
    assert_eq!(
        f.apply(&mut s, 1, 0, &first).expect("apply"),
        Outcome::Applied
    );
    for seq in 2..50 {
        f.apply(&mut s, seq, 0, &env(profile(&format!("H{seq}"), "FILLER")))
            .expect("apply");
    }
    assert_eq!(
        f.apply(&mut s, 50, 0, &again).expect("apply"),
        Outcome::Duplicate
    );
    f.render(&mut s).expect("render");
    let race = doc(
        &s,
        DocKey::Race {
            date: "2026-11-01",
            race_number: 1,
            venue: None,
        },
    );
    assert_eq!(horses(&race, "runners"), ["A1"]);
}

#[test]
fn warming_a_store_reads_the_keys_it_holds_and_passes_over_the_rest() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(1, 0, &env(odds("2026-11-21", 3, &[("A1", 3.5)])))
        .expect("apply");
    b.commit().expect("commit");
    let held: Vec<Vec<u8>> = store
        .documents()
        .map(|d| d.expect("a document").0.to_vec())
        .collect();
    assert!(!held.is_empty(), "the batch wrote documents");
    let missing = DocKey::Profile("Z999").key();
    let keys = held.iter().chain([&missing]).map(Vec::as_slice);
    assert_eq!(store.warm(keys).expect("warm"), held.len());
}

#[test]
fn the_store_commits_batches_with_their_checkpoint_and_skips_redeliveries() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    assert_eq!(store.checkpoint().expect("checkpoint"), 0);

    let mut b = store.batch().expect("batch");
    b.apply(1, 0, &env(profile("E271", "GOLDEN SIXTY")))
        .expect("apply");
    b.dead_letter(
        2,
        "racing.horses.X",
        "envelope: expected value",
        b"not json",
    );
    let stats = b.commit().expect("commit");
    assert_eq!(
        (stats.applied, stats.dead_letters, stats.checkpoint),
        (1, 1, 2)
    );

    // A batch that is dropped without commit leaves nothing behind.
    let mut b = store.batch().expect("batch");
    b.apply(3, 0, &env(profile("B1", "UNCOMMITTED")))
        .expect("apply");
    drop(b);
    assert!(store.doc(DocKey::Profile("B1")).expect("read").is_none());
    assert_eq!(store.checkpoint().expect("checkpoint"), 2);

    // Messages at or below the checkpoint are skipped, not applied twice.
    let mut b = store.batch().expect("batch");
    assert_eq!(
        b.apply(1, 0, &env(profile("E271", "CHANGED")))
            .expect("apply"),
        None
    );
    b.apply(3, 0, &env(profile("B1", "BEAUTY ONE")))
        .expect("apply");
    let stats = b.commit().expect("commit");
    assert_eq!((stats.applied, stats.replayed, stats.checkpoint), (1, 1, 3));
    let p: Value = serde_json::from_slice(
        &store
            .doc(DocKey::Profile("E271"))
            .expect("read")
            .expect("doc"),
    )
    .expect("json");
    assert_eq!(p["horse_name"], "GOLDEN SIXTY");

    let dead = store.dead_letters(0, 10).expect("dead letters");
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].seq, 2);
    assert_eq!(dead[0].excerpt, "not json");
}

#[test]
fn applied_event_ids_outlive_batches_and_restarts_but_not_a_dropped_batch() {
    let dir = tempdir();
    let first = env(profile("E271", "GOLDEN SIXTY"));
    let dropped = env(profile("B1", "BEAUTY ONE"));
    {
        let store = Store::open(dir.path()).expect("open");
        let mut b = store.batch().expect("batch");
        b.apply(1, 0, &first).expect("apply");
        b.commit().expect("commit");
        let mut b = store.batch().expect("batch");
        assert_eq!(
            b.apply(2, 0, &dropped).expect("apply"),
            Some(Outcome::Applied)
        );
        drop(b);
        let mut b = store.batch().expect("batch");
        assert_eq!(
            b.apply(2, 0, &first).expect("apply"),
            Some(Outcome::Duplicate)
        );
        assert_eq!(
            b.apply(3, 0, &dropped).expect("apply"),
            Some(Outcome::Applied)
        );
        assert_eq!(
            b.apply(4, 0, &dropped).expect("apply"),
            Some(Outcome::Duplicate)
        );
        b.commit().expect("commit");
    }
    let store = reopen(dir.path(), Options::default());
    let ids = store.applied_event_ids().expect("ids");
    assert_eq!(ids.len(), 2);
    let mut b = store.batch().expect("batch");
    assert_eq!(
        b.apply(5, 0, &first).expect("apply"),
        Some(Outcome::Duplicate)
    );
    assert_eq!(
        b.apply(6, 0, &dropped).expect("apply"),
        Some(Outcome::Duplicate)
    );
}

#[test]
fn an_amendment_in_a_later_batch_leaves_no_stale_form_in_the_store() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(
        1,
        0,
        &env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        )),
    )
    .expect("apply");
    b.apply(
        2,
        0,
        &env(result(
            "2026-10-01",
            "Sha Tin",
            1,
            vec![runner(Some(3), "B2")],
        )),
    )
    .expect("apply");
    b.commit().expect("commit");
    let mut b = store.batch().expect("batch");
    b.apply(
        3,
        0,
        &env(result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![runner(Some(1), "B2"), runner(Some(2), "C3")],
        )),
    )
    .expect("apply");
    b.commit().expect("commit");
    let form = |h: &str| -> Option<Value> {
        store.doc(DocKey::Form(h)).expect("read").map(|d| {
            serde_json::from_slice(&FormDoc::body(&d, None).expect("framed")).expect("json")
        })
    };
    assert!(form("A1").is_none(), "A1 ran in no race any more");
    let b2 = form("B2").expect("B2");
    let positions: Vec<i64> = b2["form"]
        .as_array()
        .expect("form")
        .iter()
        .map(|e| e["position"].as_i64().unwrap_or_default())
        .collect();
    assert_eq!(positions, [1, 3]);
    assert_eq!(form("C3").expect("C3")["form"][0]["position"], 2);
}

/// What a batch read from the tree is handed on to the batches after it (`read_cache.rs`'s
/// `ReadCache`): each reads it as the commits before it left it, a record written or
/// removed since included, and a batch that does not commit hands nothing on.
#[test]
fn a_record_read_by_one_batch_is_read_by_the_next_as_the_commits_between_left_it() {
    use crate::state::{Records, State};
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    // A kind the store packs, long enough to be packed: read back unpacked.
    let key = b"card\0read-again".to_vec();
    let (one, two) = (vec![b'1'; 1_000], vec![b'2'; 1_000]);
    let read = |store: &Store| {
        store
            .batch()
            .expect("batch")
            .records()
            .get(&key)
            .expect("read")
    };
    let mut b = store.batch().expect("batch");
    b.records().put(key.clone(), one.clone());
    b.commit().expect("commit");
    // Read from the tree, then handed on, twice.
    for _ in 0..2 {
        let mut b = store.batch().expect("batch");
        assert_eq!(b.records().get(&key).expect("read"), Some(one.clone()));
        b.commit().expect("commit");
    }
    let mut b = store.batch().expect("batch");
    assert_eq!(b.records().get(&key).expect("read"), Some(one.clone()));
    b.records().put(key.clone(), two.clone());
    b.commit().expect("commit");
    let mut b = store.batch().expect("batch");
    assert_eq!(b.records().get(&key).expect("read"), Some(two.clone()));
    b.records().delete(key.clone());
    b.commit().expect("commit");
    let mut b = store.batch().expect("batch");
    assert_eq!(b.records().get(&key).expect("read"), None);
    b.records().put(key.clone(), one.clone());
    // Dropped: the next batch reads the tree, where nothing is.
    drop(b);
    assert_eq!(read(&store), None);
    let mut b = store.batch().expect("batch");
    b.records().put(key.clone(), two.clone());
    b.commit().expect("commit");
    assert_eq!(read(&store), Some(two.clone()));
    // A store opened again reads the tree.
    drop(store);
    let store = reopen(dir.path(), Options::default());
    assert_eq!(read(&store), Some(two));
}
