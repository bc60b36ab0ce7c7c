//! The odds journal: every applied move kept in order, read back from any point in its
//! chunks, and each race's count of moves handed on from batch to batch.

use super::*;

#[test]
fn the_odds_journal_keeps_every_applied_move_in_order_and_no_duplicate() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let first = env(odds("2026-11-21", 2, &[("B2", 8.0), ("A1", 3.5)]));
    // 2026-11-21T12:00:00Z, as JetStream would have stamped it.
    let noon: i128 = 1_795_262_400_000_000_000;
    let mut b = store.batch().expect("batch");
    b.apply(1, noon, &first).expect("apply");
    b.apply(
        2,
        noon + 1_000_000_000,
        &env(odds_at("2026-11-21", "Sha Tin", 3, &[("C3", 2.0)])),
    )
    .expect("apply");
    b.apply(3, noon, &first).expect("apply");
    b.apply(4, noon, &env(profile("E271", "NOT ODDS")))
        .expect("apply");
    b.apply(5, noon, &env(odds("2026-11-22", 1, &[("D4", 5.0)])))
        .expect("apply");
    b.commit().expect("commit");
    let mut b = store.batch().expect("batch");
    b.apply(6, noon, &env(odds("2026-11-21", 2, &[("A1", 3.1)])))
        .expect("apply");
    // A retraction takes the race out of the read models; its moves stay in the journal.
    b.apply(
        7,
        noon,
        &env(retraction("2026-11-21", "Sha Tin", 3, "wrong venue")),
    )
    .expect("apply");
    b.commit().expect("commit");

    let moves = store
        .odds_moves("2026-11-21", 0, None, 100)
        .expect("journal");
    let seqs: Vec<(u64, u8)> = moves.iter().map(|m| (m.seq, m.race_number)).collect();
    assert_eq!(
        seqs,
        [(1, 2), (2, 3), (6, 2)],
        "the duplicate at 3 is not a move"
    );
    assert_eq!(
        std::str::from_utf8(&moves[0].body).expect("utf8"),
        r#"{"date":"2026-11-21","venue":null,"race_number":2,"seq":1,"published_at":"2026-11-21T12:00:00.000Z","occurred_at":"2026-11-21T12:00:00.000Z","odds":[{"horse_no":"B2","win_odds":8.0},{"horse_no":"A1","win_odds":3.5}],"market":{"win_book_pct":41.07,"favourites":["A1"]}}"#
    );
    let second: Value = serde_json::from_slice(&moves[1].body).expect("json");
    assert_eq!(second["venue"], "Sha Tin");
    assert_eq!(second["published_at"], "2026-11-21T12:00:01.000Z");

    let race_2: Vec<u64> = store
        .odds_moves("2026-11-21", 1, Some(2), 100)
        .expect("journal")
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(race_2, [6], "after 1, race 2 only");
    assert_eq!(
        store
            .odds_moves("2026-11-21", 0, None, 2)
            .expect("journal")
            .len(),
        2
    );
    assert_eq!(
        store
            .count_odds_moves("2026-11-21", 0, None)
            .expect("count"),
        3
    );
    assert_eq!(
        store
            .count_odds_moves("2026-11-21", 0, Some(2))
            .expect("count"),
        2
    );
    assert_eq!(
        store
            .count_odds_moves("2026-11-21", 1, None)
            .expect("count"),
        2
    );
    assert_eq!(
        store
            .count_odds_moves("2026-11-20", 0, None)
            .expect("count"),
        0,
        "a date with no moves"
    );
    assert_eq!(
        store
            .odds_moves("2026-11-22", 0, None, 100)
            .expect("journal")
            .len(),
        1,
        "each date its own"
    );
}

/// A batch's first move of a race starts the race's new chunk from the count of moves the
/// batch before it left, not from the count records: here taken out of the store between
/// the two batches, the new chunk still counts every move before it.
#[test]
fn a_batch_counts_a_race_s_moves_on_from_the_batch_before_it() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let day = "2026-11-21";
    let mut b = store.batch().expect("batch");
    for seq in 1..=5 {
        b.apply(seq, 0, &env(odds(day, 1, &[("A1", 2.0 + seq as f64)])))
            .expect("apply");
    }
    b.commit().expect("commit");
    let mut gone = crate::kv::Commit::default();
    for item in store.kv.prefix(keys::odds_race_counts(day, 1)) {
        gone.remove(item.expect("count").0);
    }
    store.kv.apply(gone).expect("remove the counts");
    let mut b = store.batch().expect("batch");
    b.apply(6, 0, &env(odds(day, 1, &[("A1", 9.0)])))
        .expect("apply");
    b.commit().expect("commit");
    assert_eq!(
        store.count_odds_moves(day, 0, Some(1)).expect("count"),
        6,
        "the new chunk counts the five moves before it"
    );
}

/// The journal in chunks reads as one list of moves: from any point, of one race or all,
/// up to a limit, whether the moves a point falls among came in one batch (several chunks
/// of a date) or in many.
#[test]
fn the_odds_journal_reads_the_same_across_its_chunks_and_batches() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    // 700 moves of two races of a date, and one of another date between them: in one
    // batch of 500 messages (chunks of at most 128 moves), then in batches of 1 to 7.
    let mut seq = 0;
    let mut expected = Vec::new();
    let mut add = |b: &mut Batch<'_>, i: u64| {
        seq += 1;
        let race = if i.is_multiple_of(3) { 2 } else { 1 };
        let date = if i == 250 { "2026-11-22" } else { "2026-11-21" };
        let price = 2.0 + (i % 40) as f64 / 10.0;
        b.apply(seq, 0, &env(odds(date, race, &[("A1", price)])))
            .expect("apply");
        if date == "2026-11-21" {
            expected.push((seq, race as u8));
        }
    };
    let mut b = store.batch().expect("batch");
    for i in 0..500 {
        add(&mut b, i);
    }
    b.commit().expect("commit");
    let mut i = 500;
    while i < 701 {
        let mut b = store.batch().expect("batch");
        for _ in 0..(i % 7 + 1) {
            add(&mut b, i);
            i += 1;
        }
        b.commit().expect("commit");
    }
    let read = |after: u64, race: Option<u8>, limit: usize| -> Vec<(u64, u8)> {
        store
            .odds_moves("2026-11-21", after, race, limit)
            .expect("journal")
            .iter()
            .map(|m| (m.seq, m.race_number))
            .collect()
    };
    assert_eq!(read(0, None, usize::MAX), expected);
    for after in [
        0, 1, 127, 128, 129, 250, 251, 255, 256, 499, 500, 501, 650, 700, 701, 9999,
    ] {
        let past: Vec<(u64, u8)> = expected.iter().copied().filter(|m| m.0 > after).collect();
        assert_eq!(read(after, None, usize::MAX), past, "after {after}");
        assert_eq!(
            read(after, None, 3),
            past[..past.len().min(3)],
            "after {after}, 3"
        );
        let race_2: Vec<(u64, u8)> = past.iter().copied().filter(|m| m.1 == 2).collect();
        assert_eq!(
            read(after, Some(2), usize::MAX),
            race_2,
            "after {after}, race 2"
        );
        assert_eq!(
            store
                .count_odds_moves("2026-11-21", after, Some(2))
                .expect("count"),
            race_2.len() as u64,
            "count of race 2 after {after}"
        );
        assert_eq!(
            store
                .count_odds_moves("2026-11-21", after, None)
                .expect("count"),
            past.len() as u64,
            "count after {after}"
        );
        // Every move as it went live, with its own sequence.
        for m in store
            .odds_moves("2026-11-21", after, None, 5)
            .expect("journal")
        {
            let body: Value = serde_json::from_slice(&m.body).expect("json");
            assert_eq!(body["seq"], m.seq);
            assert_eq!(body["race_number"], m.race_number);
        }
    }
    assert_eq!(
        store
            .odds_moves("2026-11-22", 0, None, 10)
            .expect("journal")
            .iter()
            .map(|m| m.seq)
            .collect::<Vec<_>>(),
        [251]
    );
}
