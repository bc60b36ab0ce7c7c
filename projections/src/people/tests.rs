//! What the people's read model writes: bounded by what a result changes, not by how many
//! rides its people have had.

use racing_events::samples::{envelope, result, retraction, runner};
use racing_events::{Envelope, Event, ResultRunner};

use crate::tally::Tally;
use crate::{Fold, MemState, Store};

/// Folds `events` into `s` in batches of `size`, counting the bytes put under `prefix`.
pub(crate) fn fold_counting(
    s: &mut MemState,
    events: impl IntoIterator<Item = Envelope>,
    size: usize,
    prefix: &[u8],
) -> usize {
    let mut seq = s.seen.len() as u64;
    let mut tally = Tally::new(s);
    let mut f = Fold::default();
    let mut held = 0;
    for e in events {
        seq += 1;
        f.apply(&mut tally, seq, 0, &e).expect("apply");
        held += 1;
        if held == size {
            f.render(&mut tally).expect("render");
            (f, held) = (Fold::default(), 0);
        }
    }
    f.render(&mut tally).expect("render");
    tally.bytes(|key| key.starts_with(prefix))
}

/// A runner ridden by `jockey` for `trainer`.
fn ride(position: i64, horse: &str, jockey: &str, trainer: &str) -> ResultRunner {
    let mut r = runner(Some(position), horse);
    r.jockey = jockey.into();
    r.trainer = trainer.into();
    r
}

/// Race `n` (0-based) of one season: ten races a date from 2024-09-01, Purton riding one
/// runner of each for Size, beside another jockey's and trainer's.
fn purtons_race(n: usize) -> Event {
    let date = jiff::civil::date(2024, 9, 1) + jiff::Span::new().days((n / 10) as i64);
    let runners = vec![
        ride(
            (n % 3) as i64 + 1,
            &format!("P{}", n % 500),
            "Z Purton",
            "J Size",
        ),
        ride(4, &format!("Q{}", n % 500), "H Bowman", "C S Shum"),
    ];
    result(&date.to_string(), "Sha Tin", (n % 10) as i64 + 1, runners)
}

#[test]
fn a_result_writes_what_it_changes_of_people_however_many_rides_they_have() {
    let mut s = MemState::default();
    let history = (0..600).map(|n| envelope(purtons_race(n)));
    fold_counting(&mut s, history, 64, b"ppl\0");
    let next = envelope(purtons_race(600));
    let written = fold_counting(&mut s, [next], 1, b"ppl\0");
    // Four people with 600 rides each: their documents (20 rides each) and lists, and a
    // ride and a season's figures each. Their seasons' rides rewritten whole are 90 KB
    // a person.
    assert!(
        written <= 16 * 1024,
        "a result of four people with 600 rides each wrote {written} bytes of their records"
    );
}

#[test]
fn a_store_keeps_the_rides_of_people_as_a_fold_in_memory_does() {
    // Rides given, moved from one jockey and trainer to another by amendments (one in
    // the batch of the result it amends), and taken away by a retraction, over the
    // newest twenty and a season's boundary.
    let mut events: Vec<Event> = (0..400).step_by(9).map(purtons_race).collect();
    for n in [369, 387, 396] {
        let Event::RaceResultPublished(mut r) = purtons_race(n) else {
            unreachable!("a result")
        };
        r.runners[0].jockey = "H Bowman".into();
        r.runners[1].trainer = "J Size".into();
        events.push(Event::RaceResultPublished(r));
    }
    let Event::RaceResultPublished(r) = purtons_race(378) else {
        unreachable!("a result")
    };
    events.push(retraction(&r.date, &r.venue, r.race_number, "void"));
    let log: Vec<Envelope> = events.into_iter().map(envelope).collect();
    let mut memory = MemState::default();
    fold_counting(&mut memory, log.clone(), 7, b"");

    let dir = crate::tests::tempdir();
    let store = Store::open(dir.path()).expect("open");
    for (at, batch) in log.chunks(7).enumerate() {
        let mut b = store.batch().expect("batch");
        for (i, e) in batch.iter().enumerate() {
            b.apply((at * 7 + i + 1) as u64, 0, e).expect("apply");
        }
        b.commit().expect("commit");
    }
    // Both batched the log alike: their documents were sealed at the same sequences.
    let people = |records: Vec<(Vec<u8>, Vec<u8>)>| -> Vec<(String, String)> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        records
            .into_iter()
            .filter(|(k, _)| k.starts_with(b"ppl\0"))
            .map(|(k, v)| (text(&k), text(&v)))
            .collect()
    };
    let stored = store.kv.all().map(|item| {
        let (k, v) = item.expect("read");
        (k.to_vec(), v.to_vec())
    });
    let kept = people(memory.records.into_iter().collect());
    assert_eq!(people(stored.collect()), kept);
    assert!(kept
        .iter()
        .any(|(k, _)| k.contains("ride\0jockey\0h-bowman")));
}
