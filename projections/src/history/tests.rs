//! `as_of` against what was stored: a log folded one event a batch, every document kept
//! as it stood after each event, then every document asked for as of every point, of that
//! store and of one that folded the whole log in a single batch.

use std::collections::{BTreeMap, BTreeSet};

use racing_events::samples::{
    card, envelope, odds, odds_at, odds_with_place, profile, result, retraction, runner, scratch,
    scratch_at, status,
};
use racing_events::{Envelope, RaceStatus};

use crate::docs::answered;
use crate::feed::ChangeCursor;
use crate::keys::doc::DocKey;
use crate::store::Store;
use crate::tests::{tempdir, TempDir};

const DAY: &str = "2026-11-25";
const ST: &str = "Sha Tin";
const HV: &str = "Happy Valley";

/// A log with what changes documents in every way: profiles and a rename, cards at two
/// venues, scratchings for a venue and for every venue (of a runner priced before, and of
/// runners priced after), odds for a venue and for every venue, results, an amendment
/// that drops a runner, retractions, a race published again, statuses for a venue and for every venue (one that a result finishes), place prices,
/// price moves minutes apart.
fn log() -> Vec<Envelope> {
    [
        profile("A1", "ALPHA"),
        card(DAY, ST, 1, &["A1", "B2", "C3"]),
        card(DAY, HV, 1, &["D4", "E5"]),
        odds(DAY, 1, &[("A1", 3.0), ("D4", 4.0)]),
        status(DAY, Some(ST), 1, RaceStatus::Open, None),
        odds_at(DAY, ST, 1, &[("A1", 2.5)]),
        odds_with_place(DAY, Some(HV), 1, &[("D4", None, Some(1.6))]),
        scratch_at(DAY, ST, 1, "C3"),
        odds_at(DAY, ST, 1, &[("A1", 2.2), ("B2", 9.0)]),
        odds_at(DAY, ST, 1, &[("B2", 7.5)]),
        // A priced runner scratched after its moves: its race's market changes here.
        scratch_at(DAY, ST, 1, "B2"),
        status(DAY, None, 1, RaceStatus::Suspended, Some("reweigh")),
        scratch(DAY, 1, "E5"),
        result(
            DAY,
            ST,
            1,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        ),
        profile("A1", "ALPHA TWO"),
        result(
            DAY,
            ST,
            1,
            vec![runner(Some(1), "B2"), runner(Some(2), "C3")],
        ),
        odds_at(DAY, HV, 1, &[("D4", 5.0)]),
        status(DAY, Some(HV), 1, RaceStatus::Off, None),
        retraction(DAY, HV, 1, "wrong venue"),
        card(DAY, ST, 2, &["A1", "C3"]),
        odds(DAY, 2, &[("C3", 6.0)]),
        result(DAY, ST, 2, vec![runner(Some(1), "C3"), runner(None, "A1")]),
        result("2026-11-01", ST, 5, vec![runner(Some(3), "A1")]),
        retraction(DAY, ST, 2, "void race"),
        odds_at(DAY, HV, 1, &[("E5", 7.0)]),
        result(DAY, ST, 2, vec![runner(Some(1), "A1")]),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, event)| {
        // Four minutes apart, so that the market's windows of 5 and 15 minutes move.
        let at = jiff::Timestamp::from_second(1_795_262_400 + 240 * i as i64).expect("moment");
        Envelope::new(event, at.to_string())
    })
    .collect()
}

/// Every document of `store` as it answers: key to its `ETag` and its bytes (the stored
/// value without the sequence it was sealed at, which depends on the batching).
fn documents(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    store
        .documents()
        .map(|r| r.map(|(k, v)| (k.to_vec(), answered(&v))))
        .collect::<Result<_, _>>()
        .expect("documents")
}

#[test]
fn a_document_as_of_any_point_is_what_was_stored_then_however_the_log_was_batched() {
    let events = log();
    let (one_dir, whole_dir) = (tempdir(), tempdir());
    let one_by_one = Store::open(one_dir.path()).expect("open");
    let whole = Store::open(whole_dir.path()).expect("open");
    let mut then = Vec::new();
    let mut all_keys = BTreeSet::new();
    let mut batch_of_all = whole.batch().expect("batch");
    for (i, e) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        let mut b = one_by_one.batch().expect("batch");
        b.apply(seq, 0, e).expect("apply");
        b.commit().expect("commit");
        batch_of_all.apply(seq, 0, e).expect("apply");
        let docs = documents(&one_by_one);
        all_keys.extend(docs.keys().cloned());
        then.push(docs);
    }
    batch_of_all.commit().expect("commit");
    assert!(all_keys.len() > 20, "a log that makes many documents");

    let mut checked = 0;
    for (i, stored) in then.iter().enumerate() {
        let seq = i as u64 + 1;
        for key in &all_keys {
            let doc_key = DocKey::parse(key).expect("a document key parses");
            assert_eq!(doc_key.key(), *key, "parse and key agree");
            for (name, store) in [("one event a batch", &one_by_one), ("one batch", &whole)] {
                let answered = store.doc_as_of(doc_key, seq).expect("as of").map(|d| {
                    assert_eq!(d.seq(), seq, "an answer as of a point reflects that point");
                    answered(&d.into_stored())
                });
                assert!(
                    answered.as_ref() == stored.get(key),
                    "{name}: {} as of {seq}: {:?} where {:?} was stored",
                    String::from_utf8_lossy(key).replace('\0', "/"),
                    answered.as_deref().map(String::from_utf8_lossy),
                    stored.get(key).map(|v| String::from_utf8_lossy(v)),
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked} answers checked");
}

#[test]
fn a_record_written_once_keeps_no_copy_among_the_versions() {
    const RESULTS: u64 = 40;
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let horses: Vec<String> = (0..14).map(|i| format!("H{i:03}")).collect();
    let race = |date: &str, first: usize| {
        let runners = (0..horses.len())
            .map(|p| runner(Some(p as i64 + 1), &horses[(first + p) % horses.len()]))
            .collect();
        envelope(result(date, ST, 1, runners))
    };
    let date = |i: u64| format!("2026-{:02}-{:02}", 1 + i / 28, 1 + i % 28);
    // Bytes of the results' records, and of the versions kept for `as_of`.
    let bytes = || {
        let (mut results, mut versions) = (0, 0);
        for found in store.kv.all() {
            let (k, v) = found.expect("read");
            if k.starts_with(b"res\0") {
                results += k.len() + v.len();
            } else if k.starts_with(b"h\0") {
                versions += k.len() + v.len();
            }
        }
        (results, versions)
    };
    // A result a date, a batch each: each makes its result's record, its day's and its
    // day's rides'.
    for i in 0..RESULTS {
        let mut b = store.batch().expect("batch");
        b.apply(i + 1, 0, &race(&date(i), 0)).expect("apply");
        b.commit().expect("commit");
    }
    let (results, versions) = bytes();
    assert!(
        versions as u64 <= RESULTS * 3 * 64,
        "{versions} bytes of versions for {RESULTS} results of {results} bytes, never amended"
    );

    // An amendment keeps the value it replaced, once.
    let key = crate::keys::result(&date(0), 1, ST);
    let first = store.kv.get(&key).expect("read").expect("the first result");
    let mut b = store.batch().expect("batch");
    b.apply(RESULTS + 1, 0, &race(&date(0), 1)).expect("apply");
    b.commit().expect("commit");
    let kept = store
        .kv
        .get(crate::keys::versions::history(&key, RESULTS + 1))
        .expect("read")
        .expect("the amendment's version");
    let now = store
        .kv
        .get(&key)
        .expect("read")
        .expect("the amended result");
    let kept = crate::history::packing::unpack_versions(&[kept], Some(now.as_ref()))
        .expect("unpacks against the amended result")
        .remove(0);
    let replaced: Vec<(u64, &[u8])> = crate::subject_entries::entries(&kept)
        .collect::<Result<_, _>>()
        .expect("decodes");
    assert_eq!(replaced, [(RESULTS + 1, first.as_ref())]);
}

/// A store of a race's result published `amendments` times after its first, a batch
/// each, of fourteen runners of whom each amendment swaps the last two; with the result's
/// record key, and the record's value and the race's document after each batch.
fn amended(amendments: usize) -> (TempDir, Store, Vec<u8>, Vec<After>) {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let key = crate::keys::result(DAY, 1, ST);
    let doc = race_doc().key();
    let race = |i: usize| {
        let mut horses: Vec<String> = (0..14).map(|h| format!("H{h:03}")).collect();
        if i % 2 == 1 {
            horses.swap(12, 13);
        }
        let runners = (horses.iter().enumerate())
            .map(|(p, horse)| runner(Some(p as i64 + 1), horse))
            .collect();
        envelope(result(DAY, ST, 1, runners))
    };
    let mut after = Vec::new();
    for i in 0..=amendments {
        let mut b = store.batch().expect("batch");
        b.apply(i as u64 + 1, 0, &race(i)).expect("apply");
        b.commit().expect("commit");
        let value = store.kv.get(&key).expect("read").expect("the result");
        let answered = documents(&store).remove(&doc).expect("the race's document");
        after.push((value.to_vec(), answered));
    }
    (dir, store, key, after)
}

/// A record's value and a document's answer after a batch.
type After = (Vec<u8>, Vec<u8>);

/// The document of the race [`amended`] publishes.
fn race_doc() -> DocKey<'static> {
    DocKey::Race {
        date: DAY,
        race_number: 1,
        venue: Some(ST),
    }
}

#[test]
fn a_record_amended_again_and_again_keeps_each_version_as_what_changed() {
    const AMENDMENTS: usize = 30;
    let (_dir, store, key, after) = amended(AMENDMENTS);
    let values: Vec<&[u8]> = after.iter().map(|(value, _)| value.as_slice()).collect();
    let stored: Vec<Vec<u8>> = (store.kv.prefix(crate::keys::versions::history_of(&key)))
        .map(|found| found.expect("read").1.to_vec())
        .collect();
    let kept: usize = stored.iter().map(Vec::len).sum();
    assert!(
        kept * 8 < values[0].len() * AMENDMENTS,
        "{kept} bytes of versions for {AMENDMENTS} amendments of a result of {} bytes",
        values[0].len()
    );
    // Unpacked, they are what each batch replaced: nothing, then each value in turn.
    let unpacked =
        crate::history::packing::unpack_versions(&stored, values.last().copied()).expect("unpacks");
    let replaced: Vec<&[u8]> = (unpacked.iter())
        .flat_map(|batch| crate::subject_entries::entries(batch).map(|e| e.expect("an entry").1))
        .collect();
    let expected: Vec<&[u8]> = std::iter::once(&[][..])
        .chain(values[..AMENDMENTS].iter().copied())
        .collect();
    assert_eq!(replaced, expected);
}

#[test]
fn a_document_as_of_any_point_of_a_long_history_reads_a_short_run_of_its_versions() {
    const AMENDMENTS: usize = 50;
    let (_dir, store, _, after) = amended(AMENDMENTS);
    // Records read for the race's document as of each point, checking each answer.
    let reads: Vec<u64> = (after.iter().enumerate())
        .map(|(i, (_, stored))| {
            let seq = i as u64 + 1;
            let before = store.records_read();
            let then = store.doc_as_of(race_doc(), seq).expect("as of");
            let read = store.records_read() - before;
            let then = then.expect("the race's document").into_stored();
            assert!(answered(&then) == *stored, "the race as of {seq}");
            read
        })
        .collect();
    let newest = reads.last().copied().expect("a point");
    // A version record packed against the one after it is read with those up to one
    // packed alone, at most 16 (`packing::RUN`) past the point's; none reads them all.
    assert!(
        reads.iter().all(|&read| read <= newest + 16),
        "records read as of each point: {reads:?}"
    );
}

#[test]
fn a_copy_holds_a_run_of_versions_as_one_record_that_answers_the_same() {
    const AMENDMENTS: usize = 50;
    let (_dir, store, key, after) = amended(AMENDMENTS);
    let copy_dir = tempdir();
    let (copy, _) = (store.copy_to(copy_dir.path(), Default::default(), || true)).expect("copied");
    // A record a batch in the store; in the copy, a record a run that ends with one
    // packed alone, and the records of the last run as they are.
    let versions = |s: &Store| s.kv.prefix(crate::keys::versions::history_of(&key)).count();
    assert!(
        versions(&copy) * 5 < versions(&store),
        "{} records of versions copied from {}",
        versions(&copy),
        versions(&store)
    );
    let records = |s: &Store| {
        let all = s.kv.all().map(|found| {
            let (k, v) = found?;
            Ok((k.to_vec(), v.to_vec()))
        });
        let all: Result<BTreeMap<_, _>, crate::kv::StoreError> = all.collect();
        crate::history::history_by_event(all.expect("records")).expect("unpacked")
    };
    assert!(
        records(&copy) == records(&store),
        "the same versions by event"
    );
    for (i, (_, stored)) in after.iter().enumerate() {
        let seq = i as u64 + 1;
        let then = copy.doc_as_of(race_doc(), seq).expect("as of");
        let then = then.expect("the race's document").into_stored();
        assert!(answered(&then) == *stored, "the copy's race as of {seq}");
    }
}

#[test]
fn the_runs_known_stay_bounded_and_keep_the_records_packed_lately() {
    use super::packing::{Runs, RUN, RUNS_KNOWN};
    let mut runs = Runs::default();
    // A record packed every thousand others is never forgotten: packed alone at first,
    // then at the end of each run, and against the value after it between.
    let mut busy = 0;
    for i in 0..3 * RUNS_KNOWN {
        if i % 1000 == 0 {
            let alone = busy % usize::from(RUN) == 0;
            assert_eq!(runs.go_on(b"busy"), !alone, "{busy} times packed");
            busy += 1;
        }
        assert!(!runs.go_on(format!("r{i}").as_bytes()), "unknown: alone");
        assert!(runs.newer.len() + runs.older.len() <= 2 * RUNS_KNOWN);
    }
    assert!(busy > 2 * usize::from(RUN), "{busy} runs");
}

#[test]
fn the_change_feed_names_each_document_a_batch_changed_or_removed() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let events = log();
    let mut changed_at: BTreeMap<u64, BTreeSet<Vec<u8>>> = BTreeMap::new();
    let mut before = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        let mut b = store.batch().expect("batch");
        b.apply(seq, 0, e).expect("apply");
        b.commit().expect("commit");
        let now = documents(&store);
        let keys: BTreeSet<&Vec<u8>> = now.keys().chain(before.keys()).collect();
        let differ: BTreeSet<Vec<u8>> = keys
            .into_iter()
            .filter(|k| now.get(*k) != before.get(*k))
            .cloned()
            .collect();
        if !differ.is_empty() {
            changed_at.insert(seq, differ);
        }
        before = now;
    }
    let mut feed: BTreeMap<u64, BTreeSet<Vec<u8>>> = BTreeMap::new();
    let mut from = ChangeCursor::After(0);
    loop {
        let page = store.change_page(from, 7).expect("changes");
        for (seq, key) in page.rows {
            feed.entry(seq).or_default().insert(key);
        }
        match page.next {
            Some(next) => from = next,
            None => break,
        }
    }
    let show = |rows: &BTreeMap<u64, BTreeSet<Vec<u8>>>,
                other: &BTreeMap<u64, BTreeSet<Vec<u8>>>| {
        let mut out = Vec::new();
        for (seq, keys) in rows {
            for k in keys {
                if !other.get(seq).is_some_and(|o| o.contains(k)) {
                    out.push(format!(
                        "{seq} {}",
                        String::from_utf8_lossy(k).replace('\0', "/")
                    ));
                }
            }
        }
        out
    };
    assert!(
        feed == changed_at,
        "exactly what answers differently, at each batch: in the feed only {:?}; changed but not in it {:?}",
        show(&feed, &changed_at),
        show(&changed_at, &feed)
    );
    assert!(store
        .change_page(ChangeCursor::After(events.len() as u64), 10)
        .expect("changes")
        .rows
        .is_empty());
}

#[test]
fn a_change_feed_page_holds_at_most_its_limit_and_goes_on_inside_a_position() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let events = log();
    // Every event in one batch, then one more.
    let mut b = store.batch().expect("batch");
    for (i, e) in events.iter().enumerate() {
        b.apply(i as u64 + 1, 0, e).expect("apply");
    }
    b.commit().expect("commit");
    let whole = events.len() as u64;
    let more = envelope(profile("Z9", "ZULU"));
    let mut b = store.batch().expect("batch");
    b.apply(whole + 1, 0, &more).expect("apply");
    b.commit().expect("commit");

    let all = store
        .change_page(ChangeCursor::After(0), 10_000)
        .expect("changes");
    assert!(all.next.is_none());
    // The event that changed the most documents.
    let mut at: BTreeMap<u64, usize> = BTreeMap::new();
    for (seq, _) in &all.rows {
        *at.entry(*seq).or_default() += 1;
    }
    let (busiest, changes) = at.into_iter().max_by_key(|&(_, n)| n).expect("changes");
    assert!(changes > 2, "an event changed several documents");

    // Pages of 2, each from the last one's `next`: every row once, in order.
    let (mut from, mut rows, mut inside) = (ChangeCursor::After(0), Vec::new(), 0);
    for _ in 0..all.rows.len() {
        let before = store.records_read();
        let page = store.change_page(from, 2).expect("changes");
        assert!(page.rows.len() <= 2, "{} rows", page.rows.len());
        assert!(
            store.records_read() - before <= 2,
            "a part and the next at most"
        );
        rows.extend(page.rows);
        match page.next {
            Some(next) => {
                inside += usize::from(matches!(next, ChangeCursor::Inside { .. }));
                from = next;
            }
            None => break,
        }
    }
    assert!(rows == all.rows, "the pages hold every row once, in order");
    assert!(inside > 0, "a page ended inside one event's changes");
    let first = all
        .rows
        .iter()
        .position(|(seq, _)| *seq == busiest)
        .expect("its changes");
    assert_eq!(
        store
            .change_page(
                ChangeCursor::Inside {
                    seq: busiest,
                    done: 1
                },
                1
            )
            .expect("changes")
            .rows,
        all.rows[first + 1..first + 2]
    );
}

#[test]
fn a_damaged_change_feed_record_is_an_error_not_a_short_page() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    // A document key said to be 200 bytes long, with 3 after it.
    let mut record = 200u32.to_be_bytes().to_vec();
    record.extend_from_slice(b"doc");
    store
        .kv
        .put(&crate::keys::change(5, 0), &record)
        .expect("put");
    assert!(matches!(
        store.change_page(ChangeCursor::After(0), 10),
        Err(crate::kv::StoreError::Corrupt(_))
    ));
}
