//! What a bulk load ([`Loader`]) holds follows the days being replayed, not the length of
//! the log: counted, on seasons of the same horses, jockeys and trainers, one meeting a
//! batch as a slow feed would give them. It reads back from the tree nothing it wrote,
//! unless an event goes back to a settled day, and answers then as a store committed
//! batch after batch does.

use super::growth::meeting;
use super::*;
use crate::tests::tempdir;

/// Enough for every record of these logs: only what is settled is let go.
const BUDGET: usize = 1 << 30;

/// `seasons` seasons of ten weekly meetings, from 2000/01, each meeting its events.
fn season_meetings(seasons: i32) -> Vec<Vec<Envelope>> {
    let mut out = Vec::new();
    for season in 0..seasons {
        for week in 0..10 {
            let date = jiff::civil::date(2000 + season as i16, 10, 1)
                + jiff::Span::new().weeks(i64::from(week));
            out.push(meeting(&date.to_string()));
        }
    }
    out
}

/// What a load of `batches` did: the most records it held after any batch, the records
/// of the store it built, and the reads the tree answered.
struct Loaded {
    most_held: usize,
    stored: usize,
    read_back: u64,
    _dir: crate::tests::TempDir,
    store: Store,
}

fn load(batches: &[Vec<Envelope>]) -> Loaded {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut loader = Loader::new(&store, BUDGET).expect("loader");
    assert!(
        loader.holds_all(),
        "a load into an empty store holds what it writes"
    );
    let (mut seq, mut most_held) = (0, 0);
    for events in batches {
        let mut b = loader.batch();
        for e in events {
            seq += 1;
            b.apply(seq, 0, e).expect("apply");
        }
        let sealed = b.seal(|_| {}).expect("seal");
        loader.write(sealed).expect("write");
        most_held = most_held.max(loader.held().1);
    }
    loader.finish().expect("finish");
    let read_back = loader.read_back();
    drop(loader);
    let stored = store.records().count();
    Loaded {
        most_held,
        stored,
        read_back,
        _dir: dir,
        store,
    }
}

/// Every record of `store`, the sealed ones as they answer.
fn records(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    store
        .records()
        .map(|item| {
            let (k, v) = item.expect("record");
            let v = if is_sealed(&k) {
                answered(&v)
            } else {
                v.to_vec()
            };
            (k.to_vec(), v)
        })
        .collect()
}

/// `seasons` of meetings, between two runs of a horse that runs in none of them: its
/// second run reads its names as its first left them, years before.
fn seasons_between_runs(seasons: i32) -> Vec<Vec<Envelope>> {
    let run = |date: &str| {
        let card = card(date, "Happy Valley", 1, &["B99"]);
        let result = result(date, "Happy Valley", 1, vec![runner(Some(1), "B99")]);
        vec![env(card), env(result)]
    };
    let mut batches = vec![run("2000-09-01")];
    batches.extend(season_meetings(seasons));
    batches.push(run("2040-09-01"));
    batches
}

#[test]
fn what_a_load_holds_does_not_grow_with_the_log() {
    let short = load(&seasons_between_runs(2));
    let long = load(&seasons_between_runs(8));
    assert_eq!(short.read_back, 0, "an in-order log reads nothing back");
    assert_eq!(long.read_back, 0, "an in-order log reads nothing back");
    // The store grows with the log; what the load held does not, but for the season
    // figures of the seven people, a record each a season.
    assert!(
        long.stored > 3 * short.stored,
        "{} against {}",
        long.stored,
        short.stored
    );
    assert!(
        long.most_held <= short.most_held + 6 * 7,
        "held {} records at most over 8 seasons, {} over 2",
        long.most_held,
        short.most_held
    );
    assert!(
        long.most_held * 10 < long.stored,
        "held {} of {} records",
        long.most_held,
        long.stored
    );
}

#[test]
fn a_settled_race_corrected_later_is_read_back_and_answers_as_committed() {
    let mut batches = season_meetings(1);
    // The first meeting's third race, corrected and then retracted after the season.
    let first = jiff::civil::date(2000, 10, 1).to_string();
    let corrected = result(&first, "Sha Tin", 3, vec![runner(Some(1), "A05")]);
    batches.push(vec![env(corrected)]);
    let loaded = load(&batches);
    assert!(
        loaded.read_back > 0,
        "the correction reads its settled race from the tree"
    );

    let dir = tempdir();
    let committed = Store::open(dir.path()).expect("open");
    let mut seq = 0;
    for events in &batches {
        let mut b = committed.batch().expect("batch");
        for e in events {
            seq += 1;
            b.apply(seq, 0, e).expect("apply");
        }
        b.commit().expect("commit");
    }
    assert_eq!(records(&loaded.store), records(&committed));
}

/// A loader beside readers answers a write once it is done, without waiting for it, and
/// only once: the store holds the batch by then, and the next write or the load's end
/// does not answer it again.
#[test]
fn a_write_done_is_answered_without_waiting_and_once() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let meetings = season_meetings(1);
    let mut loader = Loader::beside_reads(&store).expect("loader");
    assert!(loader.written_yet().is_none(), "nothing is being written");
    let mut seq = 0;
    let mut seal = |loader: &Loader, events: &[Envelope]| {
        let mut b = loader.batch();
        for e in events {
            seq += 1;
            b.apply(seq, 0, e).expect("apply");
        }
        b.seal(|_| {}).expect("seal")
    };
    let first = seal(&loader, &meetings[0]);
    let first_checkpoint = first.stats().checkpoint;
    assert!(loader.write(first).expect("write").is_none());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let written = loop {
        if let Some(written) = loader.written_yet() {
            break written.expect("written");
        }
        assert!(std::time::Instant::now() < deadline, "never written");
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert_eq!(written.stats.checkpoint, first_checkpoint);
    assert_eq!(store.checkpoint().expect("checkpoint"), first_checkpoint);
    assert!(loader.written_yet().is_none(), "answered once");
    let second = seal(&loader, &meetings[1]);
    let second_checkpoint = second.stats().checkpoint;
    assert!(
        loader.write(second).expect("write").is_none(),
        "the first write is not answered again"
    );
    let done = loader.finish().expect("finish").expect("the second write");
    assert_eq!(done.stats.checkpoint, second_checkpoint);
    assert_eq!(store.checkpoint().expect("checkpoint"), second_checkpoint);
}

/// A commit that a failed write left in part beside readers is finished by the next
/// catch-up's loader before its first batch, as by the store's opening: its writes are all
/// in, and the record that kept them is gone.
#[test]
fn a_catch_up_finishes_a_commit_a_failed_write_left_in_part() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut commit = crate::kv::Commit::default();
    commit.put(b"card\0a", b"1");
    commit.put(b"card\0b", b"2");
    // What the write left: the record of its writes, and the first of them.
    store
        .kv
        .put(keys::BESIDE_READERS, &commit.encoded())
        .expect("put");
    store.kv.put(b"card\0a", b"1").expect("put");
    let _loader = Loader::beside_reads(&store).expect("loader");
    assert_eq!(
        store.kv.get(b"card\0b").expect("read").as_deref(),
        Some(&b"2"[..])
    );
    assert_eq!(store.kv.get(keys::BESIDE_READERS).expect("read"), None);
}

/// The writer of a load in steps runs at the lowest priority, so that it never takes the
/// fold's core from it (`load.rs`); read from Linux's `/proc`, where each thread has a
/// nice value of its own. Other tests' writers may run beside it in this process: one at
/// that priority is looked for, as soon as the writer has lowered itself.
#[cfg(target_os = "linux")]
#[test]
fn the_writer_of_a_load_in_steps_gives_way_to_the_fold() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let _loader = Loader::new(&store, BUDGET).expect("loader");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let nices = writers_nice();
        if nices.contains(&i64::from(crate::load::WRITER_IN_STEPS_NICE)) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the writers' nice values: {nices:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The nice value of each of this process's threads named as a loader's writer.
#[cfg(target_os = "linux")]
fn writers_nice() -> Vec<i64> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("the threads");
    tasks
        .filter_map(|task| {
            let path = task.ok()?.path();
            let name = std::fs::read_to_string(path.join("comm")).ok()?;
            if name.trim_end() != "racing-load" {
                return None;
            }
            let stat = std::fs::read_to_string(path.join("stat")).ok()?;
            // After the name in parentheses: the state, then fields 4 to 52; nice is 19th.
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_whitespace().nth(16)?.parse().ok()
        })
        .collect()
}
