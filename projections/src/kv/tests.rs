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
