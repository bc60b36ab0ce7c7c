//! The cache of documents on its own, and the store directories on disk: which is in use,
//! and what a start removes or moves aside.

use super::*;

fn doc(text: &str) -> Arc<[u8]> {
    text.as_bytes().into()
}

#[test]
fn a_cached_document_is_forgotten_when_a_commit_changes_it() {
    let cache = DocCache::<Arc<[u8]>>::default();
    let seen = cache.version();
    cache.offer(b"doc\0a".to_vec(), &doc("old"), seen);
    cache.offer(b"doc\0b".to_vec(), &doc("other"), seen);
    assert_eq!(cache.get(b"doc\0a").as_deref(), Some(&b"old"[..]));
    cache.forget(&[b"doc\0a".to_vec()]);
    assert!(cache.get(b"doc\0a").is_none());
    assert!(cache.get(b"doc\0b").is_some(), "unchanged documents stay");
    cache.forget_all();
    assert!(cache.get(b"doc\0b").is_none());
}

#[test]
fn a_document_read_before_a_commit_is_not_kept_after_it() {
    let cache = DocCache::<Arc<[u8]>>::default();
    // A reader took the version, then read the store; a commit came in between.
    let seen = cache.version();
    cache.forget(&[b"doc\0a".to_vec()]);
    cache.offer(b"doc\0a".to_vec(), &doc("read before the commit"), seen);
    assert!(cache.get(b"doc\0a").is_none());
}

#[test]
fn the_cache_stays_within_its_bytes() {
    let cache = DocCache::<Arc<[u8]>>::default();
    let big: Arc<[u8]> = vec![b'x'; 1024 * 1024].into();
    for i in 0..200u32 {
        cache.offer(format!("doc\0{i}").into_bytes(), &big, cache.version());
    }
    let held: usize = cache
        .shards
        .iter()
        .map(|s| s.read().unwrap_or_else(|p| p.into_inner()).bytes)
        .sum();
    assert!(held <= DOC_CACHE_BYTES, "{held} bytes held");
    assert!(held > 0);
}

#[test]
fn a_cache_of_no_bytes_keeps_nothing_and_none_keeps_a_document_over_a_shards_share() {
    let none = DocCache::<Arc<[u8]>>::holding(0);
    none.offer(b"doc\0a".to_vec(), &doc("x"), none.version());
    assert!(none.get(b"doc\0a").is_none());
    let small = DocCache::<Arc<[u8]>>::holding(DOC_CACHE_SHARDS * 64);
    let big: Arc<[u8]> = vec![b'x'; 64].into();
    small.offer(b"doc\0big".to_vec(), &big, small.version());
    assert!(small.get(b"doc\0big").is_none(), "over a shard's share");
    small.offer(b"doc\0a".to_vec(), &doc("x"), small.version());
    assert!(small.get(b"doc\0a").is_some());
}

#[test]
fn the_keys_read_lately_are_bounded_and_the_newest_stay() {
    let mut lately = ReadLately::default();
    let key = |i: usize| format!("doc\0{i}").into_bytes();
    lately.note(&key(0));
    for i in 1..READ_LATELY_KEYS {
        lately.note(&key(i));
    }
    // The first key read again: the newest now.
    lately.note(&key(0));
    assert_eq!(lately.keys().count(), READ_LATELY_KEYS);
    lately.note(&key(READ_LATELY_KEYS));
    let kept: HashSet<Vec<u8>> = lately.keys().cloned().collect();
    assert!(kept.len() <= READ_LATELY_KEYS / 2 + 1, "{}", kept.len());
    assert!(kept.contains(&key(0)) && kept.contains(&key(READ_LATELY_KEYS)));
    assert!(kept.contains(&key(READ_LATELY_KEYS - 1)));
    assert!(!kept.contains(&key(1)), "the oldest go");
}

#[test]
fn the_pointer_names_the_store_in_use_and_stale_ones_go() {
    let data = tempfile::tempdir().expect("temp dir");
    let data = data.path();
    assert_eq!(active_dir(data).expect("default"), data.join("read-models"));

    let first = data.join("read-models");
    let next = new_generation(data);
    let damaged = data.join("read-models.damaged-1");
    for dir in [&first, &next, &damaged] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    write_pointer(
        data,
        next.file_name().and_then(|n| n.to_str()).expect("name"),
    )
    .expect("pointer");
    assert_eq!(active_dir(data).expect("pointer"), next);

    remove_stale(data, &next);
    assert!(!first.exists(), "the replaced store is removed");
    assert!(next.exists() && damaged.exists());
}

#[test]
fn a_store_marked_damaged_that_a_stop_left_in_place_is_moved_aside_not_removed() {
    let data = tempfile::tempdir().expect("temp dir");
    let data = data.path();
    let first = data.join("read-models");
    let next = new_generation(data);
    for dir in [&first, &next] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    std::fs::write(first.join("db"), b"records").expect("a record file");
    let models = ReadModels::new(
        Store::open(&data.join("scratch")).expect("a store"),
        data,
        0,
    );
    models.mark_damaged(0);
    assert!(
        first.join(DAMAGED_MARK).exists(),
        "marked in the store in use"
    );
    write_pointer(
        data,
        next.file_name().and_then(|n| n.to_str()).expect("name"),
    )
    .expect("pointer");
    remove_stale(data, &next);
    assert!(!first.exists());
    let aside = std::fs::read_dir(data)
        .expect("the data directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().contains("read-models.damaged-"))
        .expect("moved aside");
    assert_eq!(
        std::fs::read(aside.join("db")).ok(),
        Some(b"records".to_vec())
    );
}

#[test]
fn a_pointer_outside_the_data_directory_is_refused() {
    let data = tempfile::tempdir().expect("temp dir");
    for name in [
        "../etc",
        "/tmp",
        "read-models.gen-",
        "read-models.gen-1/..",
        "x",
    ] {
        std::fs::write(data.path().join(POINTER), name).expect("write");
        assert!(active_dir(data.path()).is_err(), "{name}");
    }
}
