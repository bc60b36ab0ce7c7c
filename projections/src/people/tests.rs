//! What the people's read model writes: bounded by what a result changes, not by how many
//! rides its people have had.

use racing_events::samples::{envelope, result, retraction, runner};
use racing_events::{Envelope, Event, ResultRunner};

use super::Role;
use crate::batch::MemState;
use crate::counting_state::Tally;
use crate::fold::Fold;
use crate::keys;
use crate::store::Store;

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
    // Four people with 600 rides each: the heads of their records, their rows in the
    // lists, and a ride and a season's figures each. Their seasons' rides rewritten
    // whole are 90 KB a person.
    assert!(
        written <= 16 * 1024,
        "a result of four people with 600 rides each wrote {written} bytes of their records"
    );
}

/// The body of the list of `role` in `s`, assembled from its head and rows.
fn list_in(s: &MemState, role: Role) -> Option<serde_json::Value> {
    let head = s.records.get(&keys::people_doc(role.name()))?;
    let prefix = keys::person_rows(role.name());
    let rows = s
        .records
        .range(prefix.clone()..)
        .take_while(|(k, _)| k.starts_with(&prefix))
        .map(Ok);
    let (_, rows) = super::rides::list_rows(role, head, rows).expect("rows");
    Some(serde_json::from_slice(&super::render_list(role, rows)).expect("json"))
}

/// A race of `jockeys` 0 to 999, each riding for a trainer of the same number.
fn race_of(n: usize, jockeys: std::ops::Range<usize>) -> Envelope {
    let runners = jockeys
        .map(|j| {
            ride(
                1,
                &format!("R{j}"),
                &format!("Rider {j}"),
                &format!("Trainer {j}"),
            )
        })
        .collect();
    envelope(result("2024-10-01", "Sha Tin", n as i64, runners))
}

/// Races 1 to `n` of one date folded in one batch, race `i` ridden by riders `2i - 2` and
/// `2i - 1`.
fn races_of_two(n: usize) -> MemState {
    let mut s = MemState::default();
    let races = (0..n).map(|i| race_of(i + 1, i * 2..i * 2 + 2));
    fold_counting(&mut s, races, 64, b"");
    s
}

#[test]
fn a_result_writes_the_rows_of_its_people_not_the_lists_of_everyone() {
    let mut s = MemState::default();
    // 600 jockeys and as many trainers, in races of 12.
    let history = (0..50).map(|n| race_of(n % 99 + 1, n * 12..n * 12 + 12));
    fold_counting(&mut s, history, 64, b"");
    let prefixes: Vec<Vec<u8>> = Role::ALL
        .into_iter()
        .flat_map(|r| [keys::people_doc(r.name()), keys::person_rows(r.name())])
        .collect();
    let mut tally = Tally::new(&mut s);
    let mut f = Fold::default();
    f.apply(&mut tally, 1_000, 0, &race_of(99, 0..2))
        .expect("apply");
    f.render(&mut tally).expect("render");
    let written = tally.bytes(|key| prefixes.iter().any(|p| key.starts_with(p)));
    // Four rows of about 50 bytes and two heads of 42; each list is 30 KB.
    assert!(written <= 512, "{written} bytes of the lists written");
    let jockeys = list_in(&s, Role::Jockey).expect("a list");
    assert_eq!(jockeys["jockeys"].as_array().map(Vec::len), Some(600));
    assert_eq!(jockeys["jockeys"][0]["id"], "rider-0");
    assert_eq!(jockeys["jockeys"][0]["rides"], 2);
}

#[test]
fn a_list_is_dated_by_its_last_change_however_the_events_were_batched() {
    let head = |s: &MemState| s.records.get(&keys::people_doc("jockey")).cloned();
    // A newcomer's ride given and taken back: in one batch, and in a batch each.
    let given_and_taken_back = || {
        [
            race_of(98, 700..701),
            envelope(retraction("2024-10-01", "Sha Tin", 98, "void")),
        ]
    };
    let mut one = races_of_two(3);
    let before = head(&one).expect("a head");
    fold_counting(&mut one, given_and_taken_back(), 64, b"");
    let mut each = races_of_two(3);
    fold_counting(&mut each, given_and_taken_back(), 1, b"");
    let after = head(&one).expect("a head");
    assert_eq!(
        Some(&after),
        head(&each).as_ref(),
        "the same list at the same position"
    );
    assert_ne!(after, before, "it changed twice: dated at the second");
    let jockeys = list_in(&one, Role::Jockey).expect("a list");
    assert_eq!(jockeys["jockeys"].as_array().map(Vec::len), Some(6));
}

#[test]
fn a_list_stored_whole_before_rows_were_kept_loses_nobody() {
    let mut s = races_of_two(5);
    // As a store written before the rows were kept holds it: the whole list under its
    // head, and no row.
    for role in Role::ALL {
        let whole = serde_json::to_vec(&list_in(&s, role).expect("a list")).expect("json");
        let prefix = keys::person_rows(role.name());
        s.records.retain(|k, _| !k.starts_with(&prefix));
        s.records.insert(
            keys::people_doc(role.name()),
            crate::docs::seal(false, &whole, 5),
        );
    }
    let before = list_in(&s, Role::Jockey).expect("a list");
    assert_eq!(before["jockeys"].as_array().map(Vec::len), Some(10));
    // One more ride of rider 3, a newcomer, and race 5 (riders 8 and 9) retracted.
    let gone = retraction("2024-10-01", "Sha Tin", 5, "void");
    let batch = [race_of(9, 3..4), race_of(10, 20..21), envelope(gone)];
    fold_counting(&mut s, batch, 64, b"");
    let after = list_in(&s, Role::Jockey).expect("a list");
    let rows = after["jockeys"].as_array().expect("rows");
    assert_eq!(rows.len(), 9, "{after}");
    let rides = |id: &str| {
        rows.iter()
            .find(|r| r["id"] == id)
            .map(|r| r["rides"].clone())
    };
    assert_eq!(rides("rider-3"), Some(2.into()));
    assert_eq!(rides("rider-4"), Some(1.into()));
    assert_eq!(rides("rider-20"), Some(1.into()));
    assert_eq!(rides("rider-8"), None);
    let trainers = list_in(&s, Role::Trainer).expect("a list");
    assert_eq!(trainers["trainers"].as_array().map(Vec::len), Some(9));
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

/// A race on `date` of one runner, ridden by Purton for Size.
fn purton_on(date: &str, n: usize) -> Envelope {
    let runners = vec![ride((n % 3) as i64 + 1, "P1", "Z Purton", "J Size")];
    envelope(result(date, "Sha Tin", (n % 10) as i64 + 1, runners))
}

/// The bytes of people's records (their heads) written by a result of Purton's after
/// `history` (folded in batches of 64).
fn record_bytes_after(history: Vec<Envelope>) -> (usize, serde_json::Value) {
    let mut s = MemState::default();
    fold_counting(&mut s, history, 64, b"");
    let written = fold_counting(&mut s, [purton_on("2060-10-01", 0)], 1, b"ppl\0doc\0");
    let served = super::served(&s, Role::Jockey, "z-purton")
        .expect("read")
        .expect("a record");
    let doc = serde_json::from_slice(crate::docs::unseal(&served)).expect("json");
    (written, doc)
}

/// Forty rides of Purton's in one season, and forty in forty seasons.
fn forty_rides_in_one_season_and_in_forty() -> (Vec<Envelope>, Vec<Envelope>) {
    let one = (0..40)
        .map(|n| purton_on(&format!("2024-10-{:02}", n / 10 + 1), n))
        .collect();
    let forty = (0..40)
        .map(|n| purton_on(&format!("{}-10-01", 2000 + n), n))
        .collect();
    (one, forty)
}

#[test]
fn a_result_writes_the_head_of_a_persons_record_whatever_their_seasons() {
    let (one, forty) = forty_rides_in_one_season_and_in_forty();
    let (in_one, doc_one) = record_bytes_after(one);
    let (in_forty, doc_forty) = record_bytes_after(forty);
    assert_eq!(doc_one["seasons"].as_array().map(Vec::len), Some(2));
    assert_eq!(doc_one["rides"], 41);
    assert_eq!(doc_forty["seasons"].as_array().map(Vec::len), Some(41));
    assert_eq!(doc_forty["rides"], 41);
    // A head each for Purton and Size: their `ETag`, sequence and key. Their records
    // hold a row for each season.
    assert_eq!(in_one, in_forty, "the bytes of the records' heads");
    assert!(
        in_forty <= 2 * 80,
        "{in_forty} bytes of the records written"
    );
}

/// The records of people (their seasons, rides, tallies and heads) that a result of
/// Purton's reads after `history` (folded in batches of 64).
fn people_read_after(history: Vec<Envelope>) -> usize {
    let mut s = MemState::default();
    fold_counting(&mut s, history, 64, b"");
    let mut tally = Tally::new(&mut s);
    let mut f = Fold::default();
    f.apply(&mut tally, 1_000, 0, &purton_on("2060-10-01", 0))
        .expect("apply");
    f.render(&mut tally).expect("render");
    let read = tally.read();
    read.iter().filter(|k| k.starts_with(b"ppl\0")).count()
}

#[test]
fn a_result_reads_as_much_of_people_whatever_their_seasons() {
    // The result reads neither every season nor every ride: a person's newest days, as
    // many as hold their 20 newest rides, and no more than 20 of them.
    let (one, forty) = forty_rides_in_one_season_and_in_forty();
    let eighty: Vec<Envelope> = (0..80)
        .map(|n| purton_on(&format!("{}-10-01", 1960 + n), n))
        .collect();
    let in_one = people_read_after(one);
    let (in_forty, in_eighty) = (people_read_after(forty), people_read_after(eighty));
    assert_eq!(in_forty, in_eighty, "records of people read");
    // Purton's and Size's: their newest day, the two newest, then the twenty newest (a
    // ride a day), 23 reads of a day; a season and a tally each, their heads and rows.
    assert!(in_eighty <= 2 * 28, "{in_eighty} records of people read");
    // Ten rides a day before the newest's one: the newest, the two and the three newest.
    assert!(in_one <= 2 * 11, "{in_one} records of people read");
}

#[test]
fn a_record_stored_whole_is_served_as_stored_until_a_result_changes_it() {
    let history: Vec<Envelope> = (0..9).map(|n| purton_on("2024-10-01", n)).collect();
    let mut s = MemState::default();
    fold_counting(&mut s, history.clone(), 64, b"");
    // As a store written before the heads were kept holds it: the record whole.
    let key = keys::person_doc("jockey", "z-purton");
    let whole = super::served(&s, Role::Jockey, "z-purton")
        .expect("read")
        .expect("a record");
    assert_eq!(
        s.records.get(&key).map(Vec::len),
        Some(crate::docs::HEAD_LEN)
    );
    s.records.insert(key.clone(), whole.clone());
    let read = super::served(&s, Role::Jockey, "z-purton").expect("read");
    assert_eq!(read, Some(whole), "served as stored");

    let next = purton_on("2024-10-02", 9);
    fold_counting(&mut s, [next.clone()], 1, b"");
    assert_eq!(
        s.records.get(&key).map(Vec::len),
        Some(crate::docs::HEAD_LEN)
    );
    let results: Vec<racing_events::RaceResult> = history
        .iter()
        .chain([&next])
        .map(|e| match &e.event {
            Event::RaceResultPublished(r) => r.clone(),
            _ => unreachable!("a result"),
        })
        .collect();
    let expected = super::docs::render_from_results(Role::Jockey, "z-purton", &results);
    let served = super::served(&s, Role::Jockey, "z-purton").expect("read");
    let text = |doc: &[u8]| String::from_utf8_lossy(doc).into_owned();
    let served = served.as_deref().map(|v| text(crate::docs::unseal(v)));
    assert_eq!(served, expected.as_deref().map(text));
}

#[test]
fn a_record_read_apart_from_its_head_is_served_with_its_own_etag() {
    let mut s = MemState::default();
    fold_counting(&mut s, (0..5).map(|n| purton_on("2024-10-01", n)), 64, b"");
    let key = keys::person_doc("jockey", "z-purton");
    let head = s.records.get_mut(&key).expect("a head");
    // An `ETag` another record gave: as read while a commit changed the records.
    head[1] ^= 1;
    let served = super::served(&s, Role::Jockey, "z-purton")
        .expect("read")
        .expect("a record");
    let (tag, body) = (
        &served[..crate::docs::ETAG_LEN],
        crate::docs::unseal(&served),
    );
    assert_eq!(tag, crate::docs::etag(body));
    let doc: serde_json::Value = serde_json::from_slice(body).expect("json");
    assert_eq!(doc["rides"], 5);
}

#[test]
fn a_commit_names_the_records_and_lists_of_people_it_changes() {
    let dir = crate::tests::tempdir();
    let store = Store::open(dir.path()).expect("open");
    let commit = |seq: u64, e: &Envelope| {
        let mut changed = Vec::new();
        let mut b = store.batch().expect("batch");
        b.apply(seq, 0, e).expect("apply");
        b.commit_noting(|key| changed.push(key.to_vec()))
            .expect("commit");
        changed
    };
    let changed = commit(1, &purton_on("2024-10-01", 0));
    for key in [
        super::record_key(Role::Jockey, "z-purton"),
        super::record_key(Role::Trainer, "j-size"),
        super::list_key(Role::Jockey),
        super::list_key(Role::Trainer),
    ] {
        assert!(
            changed.contains(&key),
            "{} named",
            String::from_utf8_lossy(&key)
        );
    }
    // A result that changes nothing of their records or lists names neither.
    let changed = commit(2, &purton_on("2024-10-01", 0));
    assert!(
        !changed.iter().any(|k| k.starts_with(b"ppl\0")),
        "{changed:?}"
    );
}

/// `purtons_race(n)` as amended by `change`.
fn amended(n: usize, change: impl FnOnce(&mut [ResultRunner])) -> Event {
    let Event::RaceResultPublished(mut r) = purtons_race(n) else {
        unreachable!("a result")
    };
    change(&mut r.runners);
    Event::RaceResultPublished(r)
}

#[test]
fn a_persons_head_and_row_are_what_their_rides_read_back_make_after_every_batch() {
    // Purton and Bowman ride in 58 races over forty days. Then: the newest result
    // amended (a position), a ride of the newest day moved to Bowman (Purton's twenty
    // newest lose one), an old ride moved to Teetan, the newest race retracted, a ride
    // on a date before all, and new results, Teetan's among them.
    let mut events: Vec<Event> = (0..400).step_by(7).map(purtons_race).collect();
    events.push(amended(399, |r| r[0].position = Some(2)));
    events.push(amended(392, |r| r[0].jockey = "H Bowman".into()));
    events.push(amended(7, |r| r[0].jockey = "K Teetan".into()));
    let Event::RaceResultPublished(r) = purtons_race(399) else {
        unreachable!("a result")
    };
    events.push(retraction(&r.date, &r.venue, r.race_number, "void"));
    events.push(purton_on("2024-08-01", 1).event);
    events.push(purtons_race(405));
    events.push(amended(406, |r| r[1].jockey = "K Teetan".into()));
    let log: Vec<Envelope> = events.into_iter().map(envelope).collect();
    let people = [
        (Role::Jockey, "z-purton"),
        (Role::Jockey, "h-bowman"),
        (Role::Jockey, "k-teetan"),
        (Role::Trainer, "j-size"),
        (Role::Trainer, "c-s-shum"),
    ];
    for size in [1, 5] {
        let dir = crate::tests::tempdir();
        let store = Store::open(dir.path()).expect("open");
        let mut seq = 0;
        for batch in log.chunks(size) {
            // Each batch starts from what the one before it handed on.
            let mut b = store.batch().expect("batch");
            for e in batch {
                seq += 1;
                b.apply(seq, 0, e).expect("apply");
            }
            b.commit().expect("commit");
            for (role, id) in people {
                let agrees = super::rides::written_as_read_back(&store.kv, role, id);
                assert!(
                    agrees.expect("read"),
                    "{id} at {seq}, batches of {size}: written as their rides read back"
                );
            }
        }
        let teetan = super::rides::served(&store.kv, Role::Jockey, "k-teetan");
        assert!(teetan.expect("read").is_some());
    }
}
