use crate::kv::{Commit, Kv, StoreError};

#[test]
fn records_of_a_packed_kind_are_stored_packed_and_read_as_written() {
    let temp = crate::tests::tempdir();
    let kv = Kv::open(temp.path(), 1 << 20).expect("a store");
    let card: Vec<u8> = (0..100)
        .flat_map(|i| format!("{{\"horse_no\":\"H{i:03}\",\"draw\":{i}}}").into_bytes())
        .collect();
    let (card_key, short_key) = (b"card\0x".to_vec(), b"card\0y".to_vec());
    // Of a kind stored as it is, a value that starts as a zstd frame does (a chunk of
    // random ids could) is not taken for a packed one.
    let framed = crate::compressed::pack(card.clone());
    let as_is_key = b"seen\0x".to_vec();
    let mut commit = Commit::default();
    commit.put(&card_key, &card);
    commit.put(&short_key, b"{}");
    commit.put(&as_is_key, &framed);
    commit.pack();
    kv.apply(commit).expect("applied");

    let stored: Vec<_> = kv.stored().map(|r| r.expect("read")).collect();
    let stored_card = &stored.iter().find(|(k, _)| k == &card_key).expect("card").1;
    assert!(crate::compressed::is_frame(stored_card));
    assert!(stored_card.len() * 4 < card.len(), "{}", stored_card.len());
    for (key, value) in [
        (&card_key, &card[..]),
        (&short_key, b"{}"),
        (&as_is_key, &framed),
    ] {
        assert_eq!(kv.get(key).expect("get").as_deref(), Some(value));
        let ranged = kv.prefix(key).next().expect("found").expect("read");
        assert_eq!(ranged.1.as_ref(), value);
        let back = kv.range(key.as_slice()..).next_back().expect("found");
        assert_eq!(
            back.expect("read").1.as_ref(),
            &framed[..],
            "the last is as_is_key"
        );
    }
    let read: Vec<_> = kv.all().map(|r| r.expect("read").1.to_vec()).collect();
    assert_eq!(read, [card.clone(), b"{}".to_vec(), framed.clone()]);
}

#[test]
fn a_store_that_lost_a_blob_fails_as_damaged_not_as_a_failing_disk() {
    let temp = crate::tests::tempdir();
    let dir = temp.path();
    {
        let db = sled::open(dir).expect("a store");
        // Over sled's 128 KiB a page, kept in a blob file of its own.
        db.insert(b"large", vec![7u8; 300 << 10]).expect("insert");
        db.flush().expect("flush");
    }
    // sled lets go of a dropped store's file lock only once its background threads
    // finish, a moment later in this same process: the lock is waited for.
    let open = || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            match sled::open(dir) {
                Err(e) if super::held_elsewhere(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                opened => return opened,
            }
        }
    };
    // sled writes its snapshot (where each page is) as it opens a store: from then on
    // the page is found through its blob, no longer by reading the log.
    drop(open().expect("opened again"));
    let blobs = std::fs::read_dir(dir.join("blobs")).expect("blob files");
    let mut lost = 0;
    for blob in blobs {
        std::fs::remove_file(blob.expect("a blob").path()).expect("removed");
        lost += 1;
    }
    assert!(lost > 0, "the large value was kept in a blob file");
    let read = open().and_then(|db| db.get(b"large"));
    let error = StoreError::from(read.expect_err("the lost blob fails the read"));
    assert!(error.is_damage(), "{error}");
    assert!(!StoreError::from(sled::Error::Io(std::io::ErrorKind::StorageFull.into())).is_damage());
}

/// A commit of `keys` keys (`k000`, `k001`, ...), each set to `value` (as 8 bytes), and a
/// removal of `gone`.
fn every_key_set_to(keys: usize, value: u64) -> Commit {
    let mut commit = Commit::default();
    for i in 0..keys {
        commit.put(format!("k{i:03}"), value.to_be_bytes());
    }
    commit.remove(b"gone");
    commit
}

fn value_of(kv: &Kv, key: &str) -> u64 {
    let value = kv.get(key).expect("read").expect("a record");
    u64::from_be_bytes(value.as_ref().try_into().expect("8 bytes"))
}

#[test]
fn a_commit_written_beside_readers_is_read_whole_and_leaves_no_record_of_itself() {
    let temp = crate::tests::tempdir();
    let kv = Kv::open(temp.path(), 1 << 20).expect("a store");
    kv.put(b"gone", b"here").expect("put");
    kv.apply_beside_readers(every_key_set_to(3, 7))
        .expect("applied");
    let records: Vec<_> = kv.all().map(|r| r.expect("read").0).collect();
    assert_eq!(records, [&b"k000"[..], b"k001", b"k002"]);
    assert_eq!(value_of(&kv, "k002"), 7);
    // A fold's handle reads while the gate is closed: it does not wait there.
    let _closed = kv.gate.write().expect("the gate");
    assert_eq!(value_of(&kv.for_folds(), "k001"), 7);
}

#[test]
fn a_commit_that_a_crash_cut_short_beside_readers_is_written_whole_when_the_store_opens() {
    let temp = crate::tests::tempdir();
    let commit = every_key_set_to(5, 9);
    {
        let kv = Kv::open(temp.path(), 1 << 20).expect("a store");
        kv.put(b"gone", b"here").expect("put");
        kv.put(b"k004", &1u64.to_be_bytes()).expect("put");
        // What `apply_beside_readers` writes first, then two of its writes: the crash.
        kv.put(crate::keys::BESIDE_READERS, &commit.encoded())
            .expect("put");
        kv.put(b"k000", &9u64.to_be_bytes()).expect("put");
        kv.put(b"k001", &9u64.to_be_bytes()).expect("put");
        kv.flush_now().expect("flushed");
    }
    let kv = Kv::open(temp.path(), 1 << 20).expect("the store again");
    let records: Vec<_> = kv.all().map(|r| r.expect("read")).collect();
    assert_eq!(records.len(), 5, "{records:?}");
    for i in 0..5 {
        assert_eq!(value_of(&kv, &format!("k{i:03}")), 9);
    }
    // A damaged record of a commit's writes is said so, not taken for fewer writes.
    let encoded = commit.encoded();
    let cut = Commit::decoded(&encoded[..encoded.len() - 3]);
    assert!(
        matches!(cut, Err(StoreError::Corrupt(_))),
        "{:?}",
        cut.err()
    );
    assert_eq!(
        Commit::decoded(&encoded).expect("decoded").encoded(),
        encoded
    );
}

#[test]
fn a_reader_never_sees_part_of_a_commit_written_beside_readers() {
    // Each commit sets every key to its number, the first key first: a reader that read
    // the last key after the first would find it older were the commit not whole to it.
    let temp = crate::tests::tempdir();
    let kv = Kv::open(temp.path(), 1 << 20).expect("a store");
    const KEYS: usize = 200;
    const COMMITS: u64 = 300;
    kv.apply_beside_readers(every_key_set_to(KEYS, 0))
        .expect("applied");
    let reader = kv.clone();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writing = std::sync::Arc::clone(&done);
    let last = format!("k{:03}", KEYS - 1);
    let read_last = last.clone();
    let reads = std::thread::spawn(move || {
        let mut reads = 0u64;
        while !writing.load(std::sync::atomic::Ordering::Relaxed) {
            let first = value_of(&reader, "k000");
            let then = value_of(&reader, &read_last);
            assert!(then >= first, "read {first} then {then}");
            reads += 1;
        }
        reads
    });
    for n in 1..=COMMITS {
        kv.apply_beside_readers(every_key_set_to(KEYS, n))
            .expect("applied");
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let reads = reads.join().expect("the reader");
    assert!(reads > 0);
    assert_eq!(value_of(&kv, &last), COMMITS);
}
