//! The reads a request makes grow with what it answers, not with the store: a search, a
//! race's odds history and its odds as of a point, counted in records read
//! ([`Store::records_read`]) over a store of thousands of names and moves.

use racing_events::samples::{envelope, odds, odds_at, profile};
use serde_json::Value;

use crate::keys::doc::DocKey;
use crate::store::Store;
use crate::tests::tempdir;

const DAY: &str = "2026-11-25";

/// Records `store` reads while `f` runs.
fn reads_of<T>(store: &Store, f: impl FnOnce() -> T) -> (T, u64) {
    let before = store.records_read();
    let out = f();
    (out, store.records_read() - before)
}

#[test]
fn a_search_reads_the_names_it_finds_not_every_horse() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut seq = 0;
    for thousand in 0..10 {
        let mut b = store.batch().expect("batch");
        for i in 0..1000 {
            seq += 1;
            let n = thousand * 1000 + i;
            let e = envelope(profile(&format!("H{n:05}"), &format!("HORSE {n:05}")));
            b.apply(seq, 0, &e).expect("apply");
        }
        b.commit().expect("commit");
    }
    let mut b = store.batch().expect("batch");
    for (horse, name) in [
        ("S1", "STAR DUST"),
        ("S2", "MIGHTY STAR"),
        ("S3", "ROCKSTAR"),
    ] {
        seq += 1;
        b.apply(seq, 0, &envelope(profile(horse, name)))
            .expect("apply");
    }
    b.commit().expect("commit");

    let (found, read) = reads_of(&store, || store.find_horses("Star", 20).expect("search"));
    let names: Vec<&str> = found.iter().map(|m| m.horse_name.as_str()).collect();
    assert_eq!(names, ["STAR DUST", "MIGHTY STAR", "ROCKSTAR"]);
    // An index entry of each name found, and each horse's newest name: two records a
    // horse (a name read from more than one place of it, an entry more).
    assert!(read <= 2 * 3 + 2, "{read} records read for 3 horses found");

    // Ten horses' names start with it: a page of five reads about twenty, not ten
    // thousand.
    let (found, read) = reads_of(&store, || {
        store.find_horses("horse 0001", 5).expect("search")
    });
    let numbers: Vec<&str> = found.iter().map(|m| m.horse_no.as_str()).collect();
    assert_eq!(numbers, ["H00010", "H00011", "H00012", "H00013", "H00014"]);
    assert!(
        read <= 2 * 10 + 2,
        "{read} records read for 10 horses matched"
    );

    let (found, read) = reads_of(&store, || store.find_horses("nobody", 20).expect("search"));
    assert!(found.is_empty());
    assert!(read <= 2, "{read} records read for none found");

    // A name's last two characters find it; its last alone, shorter than any search, is
    // in no entry and reads nothing.
    let found = store.find_horses("ar", 20).expect("search");
    assert_eq!(found.len(), 3, "{found:?}");
    let (found, read) = reads_of(&store, || store.find_horses("R", 20).expect("search"));
    assert!(
        found.is_empty() && read == 0,
        "{found:?}, {read} records read"
    );
}

#[test]
fn a_races_odds_history_and_odds_as_of_read_that_race_only() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    // Race 1 has thousands of moves; race 2 three, among them.
    let mut seq = 0;
    for hundred in 0..50 {
        let mut b = store.batch().expect("batch");
        for i in 0..100 {
            seq += 1;
            let price = f64::from(hundred * 100 + i) / 100.0 + 1.5;
            let e = envelope(odds_at(DAY, "Sha Tin", 1, &[("A1", price)]));
            b.apply(seq, 0, &e).expect("apply");
            if hundred % 16 == 10 && i == 50 {
                seq += 1;
                let e = envelope(odds(DAY, 2, &[("B2", f64::from(hundred) + 2.0)]));
                b.apply(seq, 0, &e).expect("apply");
            }
        }
        b.commit().expect("commit");
    }
    let checkpoint = store.checkpoint().expect("checkpoint");

    let (page, read) = reads_of(&store, || {
        store
            .odds_history(DAY, 2, None, 0, 1000)
            .expect("history")
            .expect("race 2 has moves")
    });
    let page: Value = serde_json::from_slice(&page).expect("json");
    let moves = page["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 3, "{page}");
    assert!(read <= 3 + 2, "{read} records read for 3 moves");

    let after = moves[0]["seq"].as_u64().expect("seq");
    let (page, read) = reads_of(&store, || {
        store
            .odds_history(DAY, 2, Some("Sha Tin"), after, 1)
            .expect("history")
            .expect("race 2 has moves")
    });
    let page: Value = serde_json::from_slice(&page).expect("json");
    assert_eq!(page["moves"].as_array().map(Vec::len), Some(1), "{page}");
    assert!(read <= 3 + 2, "{read} records read for a page of 1");

    let (none, read) = reads_of(&store, || {
        store.odds_history(DAY, 3, None, 0, 10).expect("history")
    });
    assert!(none.is_none(), "race 3 has no odds");
    assert!(read <= 2, "{read} records read for a race without odds");
    let (none, read) = reads_of(&store, || {
        store.odds_history(DAY, 3, None, 700, 10).expect("history")
    });
    assert!(none.is_none(), "race 3 has no odds after 700 either");
    assert!(
        read <= 2,
        "{read} records read for a race without odds, after 700"
    );

    let key = DocKey::Odds {
        date: DAY,
        race_number: 2,
        venue: None,
    };
    let (then, read) = reads_of(&store, || store.doc_as_of(key, checkpoint).expect("as of"));
    assert!(then.is_some(), "race 2 had odds");
    assert!(read <= 3 + 2, "{read} records read for a race of 3 moves");
}

/// The moves after a point are counted from the counts beside the journal's chunks, not
/// by reading the moves: a few records a race, from any point of a journal of thousands.
#[test]
fn the_moves_after_a_point_are_counted_without_reading_them() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    // 10,000 moves of race 1 and 100 of race 2, in batches of 100.
    let mut seq = 0;
    for hundred in 0..100 {
        let mut b = store.batch().expect("batch");
        for i in 0..100 {
            seq += 1;
            let race = if i == 0 { 2 } else { 1 };
            let price = f64::from(hundred * 100 + i) / 100.0 + 1.5;
            let e = envelope(odds(DAY, race, &[("A1", price)]));
            b.apply(seq, 0, &e).expect("apply");
        }
        b.commit().expect("commit");
    }
    for (after, race, expected) in [
        (0, Some(1), 9_900),
        (5_050, Some(1), 4_901),
        (9_999, Some(1), 1),
        (10_000, Some(1), 0),
        (0, Some(2), 100),
        (0, None, 10_000),
        (5_050, None, 4_950),
    ] {
        let (count, read) = reads_of(&store, || {
            store.count_odds_moves(DAY, after, race).expect("count")
        });
        assert_eq!(count, expected, "after {after}, race {race:?}");
        // A race's counts and a chunk; for a date, its races found first.
        let most = if race.is_some() { 3 } else { 2 * 4 + 1 };
        assert!(
            read <= most,
            "{read} records read to count {count} moves after {after}, race {race:?}"
        );
    }
}

#[test]
fn a_read_past_its_deadline_stops_and_says_so() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(1, 0, &envelope(profile("S1", "STAR DUST")))
        .expect("apply");
    b.apply(2, 0, &envelope(odds(DAY, 2, &[("S1", 3.0)])))
        .expect("apply");
    b.commit().expect("commit");
    let late = store.until(std::time::Instant::now());
    assert!(matches!(
        late.find_horses("star", 20),
        Err(crate::kv::StoreError::TooLong)
    ));
    assert!(matches!(
        late.odds_history(DAY, 2, None, 0, 10),
        Err(crate::kv::StoreError::TooLong)
    ));
    // The store without a deadline reads on.
    assert_eq!(store.find_horses("star", 20).expect("search").len(), 1);
}

/// Sixty days of four races each, each won by a horse of its own under the default
/// jockey, applied to `store` one event a sequence from 1: the days, in order.
fn rides_on_sixty_days(store: &Store) -> Vec<String> {
    use racing_events::samples::{result, runner};

    let mut b = store.batch().expect("batch");
    let mut seq = 0;
    let days: Vec<String> = (1..=60)
        .map(|d| format!("2026-{:02}-{:02}", 1 + (d - 1) / 28, 1 + (d - 1) % 28))
        .collect();
    for day in &days {
        for race in 1..=4 {
            seq += 1;
            let horse = format!("H{seq:04}");
            let e = envelope(result(day, "Sha Tin", race, vec![runner(Some(1), &horse)]));
            b.apply(seq, 0, &e).expect("apply");
        }
    }
    b.commit().expect("commit");
    days
}

/// A jockey's records by condition over a span read the races of that span, not every
/// race the jockey rode in: a day's analysis of a jockey with rides on sixty days reads
/// about that day's rides.
#[test]
fn a_persons_analysis_reads_the_races_of_its_span_only() {
    use crate::analysis::{Span, Subject};
    use crate::people::docs::Role;

    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let days = rides_on_sixty_days(&store);

    let jockey = Subject::Person(Role::Jockey, "z-purton");
    let (all, read_all) = reads_of(&store, || {
        store
            .analysis(jockey, Span::default(), None)
            .expect("analysis")
            .expect("rides")
    });
    let day = days[30].as_str();
    let span = Span {
        from: Some(day),
        to: Some(day),
    };
    let (one, read_one) = reads_of(&store, || {
        store
            .analysis(jockey, span, None)
            .expect("analysis")
            .expect("rides")
    });
    let runs = |doc: &crate::docs::Doc| -> u64 {
        let body: Value = serde_json::from_slice(doc).expect("json");
        body["overall"]["runs"].as_u64().expect("runs")
    };
    assert_eq!((runs(&all), runs(&one)), (240, 4));
    assert!(read_all >= 240, "{read_all} records read for every ride");
    assert!(
        read_one <= 4 + 2,
        "{read_one} records read for a day of 4 rides"
    );

    // A span with none of the jockey's rides answers nothing counted, still no 404.
    let none = Span {
        from: Some("2027-01-01"),
        to: None,
    };
    let (empty, read_empty) = reads_of(&store, || {
        store
            .analysis(jockey, none, None)
            .expect("analysis")
            .expect("known")
    });
    assert_eq!(runs(&empty), 0);
    assert!(
        read_empty <= 1,
        "{read_empty} records read for a span of no rides"
    );

    // Nor does a span whose first date is after its last.
    let backwards = Span {
        from: Some(days[40].as_str()),
        to: Some(days[10].as_str()),
    };
    let none = store
        .analysis(jockey, backwards, None)
        .expect("analysis")
        .expect("known");
    assert_eq!(runs(&none), 0);
}

/// A person's records by condition stop at the store's deadline, as every read whose
/// cost grows with the data does, rather than run on.
#[test]
fn a_persons_analysis_stops_at_its_deadline() {
    use crate::analysis::{Span, Subject};
    use crate::kv::StoreError;
    use crate::people::docs::Role;
    use racing_events::samples::{result, runner};

    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    let e = envelope(result(DAY, "Sha Tin", 1, vec![runner(Some(1), "H1")]));
    b.apply(1, 0, &e).expect("apply");
    b.commit().expect("commit");
    let late = store.until(std::time::Instant::now());
    let jockey = Subject::Person(Role::Jockey, "z-purton");
    assert!(matches!(
        late.analysis(jockey, Span::default(), None),
        Err(StoreError::TooLong)
    ));
}

/// A person's records by condition as of a point read no ride of a date that nothing had
/// been published of by then: a jockey's rides on sixty days, as of the end of the
/// thirtieth, read about half as much as at the end.
#[test]
fn a_persons_analysis_as_of_a_point_reads_no_ride_of_the_dates_after_it() {
    use crate::analysis::{Span, Subject};
    use crate::people::docs::Role;

    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let seq = 4 * rides_on_sixty_days(&store).len() as u64;

    let jockey = Subject::Person(Role::Jockey, "z-purton");
    let as_of = |point: u64| {
        reads_of(&store, || {
            store
                .analysis(jockey, Span::default(), Some(point))
                .expect("analysis")
                .expect("rides")
        })
    };
    let runs = |doc: &crate::docs::Doc| -> u64 {
        let body: Value = serde_json::from_slice(doc).expect("json");
        body["overall"]["runs"].as_u64().expect("runs")
    };
    let (end, read_end) = as_of(seq);
    let (half, read_half) = as_of(30 * 4);
    assert_eq!((runs(&end), runs(&half)), (240, 120));
    assert!(
        read_half * 10 <= read_end * 6,
        "{read_half} records read halfway, {read_end} at the end"
    );
}
