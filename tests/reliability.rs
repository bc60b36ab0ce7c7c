//! Reliability under faults: the service killed at random moments, fed garbage, stopped
//! with requests in flight, cut off from its broker, given a damaged store, and running on
//! a JetStream cluster that loses a node. Each test runs its own nats-server(s) on free
//! loopback ports with its own data directories, and is bounded in time. Long variants
//! (more kills, a slower cluster) run with `scripts/reliability-long`.

mod cluster;
mod feed;
pub(crate) mod process;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;
use racing_events::{Envelope, Event};
use racing_projections::{answered, Fold, MemState, Store};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tempfile::TempDir;

use crate::support::{damaged_copy_kept, App, Nats};
use feed::Message;
use process::Service;
use racing::nats::Role;

/// The stream every test uses, as the service names it by default.
const STREAM: &str = "RACING";

/// The duplicate window the service configures by default.
const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

/// A setting from the environment, for the long variants; `default` when unset.
fn setting(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")),
        Err(_) => default,
    }
}

/// Everything in a store, as owned bytes.
fn records(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    store
        .records()
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<Result<_, _>>()
        .expect("the store reads back")
}

/// A key as text: parts separated by `/`, other bytes escaped.
fn show_key(key: &[u8]) -> String {
    key.split(|b| *b == 0)
        .map(|part| {
            if part.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
                String::from_utf8_lossy(part).into_owned()
            } else {
                part.iter().map(|b| format!("{b:02x}")).collect()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Where two values first differ, with some context from each.
fn show_difference(a: &[u8], b: &[u8]) -> String {
    let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let excerpt = |v: &[u8]| {
        String::from_utf8_lossy(&v[at.saturating_sub(40)..v.len().min(at + 80)]).into_owned()
    };
    format!(
        "{} vs {} bytes, first difference at byte {at}:\n      {}\n      {}",
        a.len(),
        b.len(),
        excerpt(a),
        excerpt(b)
    )
}

/// Every difference between two sets of records, one line each, keys shown as text.
fn differences(
    (a_name, a): (&str, &BTreeMap<Vec<u8>, Vec<u8>>),
    (b_name, b): (&str, &BTreeMap<Vec<u8>, Vec<u8>>),
) -> Vec<String> {
    let keys: BTreeSet<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter_map(|k| match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) if x == y => None,
            (Some(x), Some(y)) => Some(format!("  {}: {}", show_key(k), show_difference(x, y))),
            (Some(_), None) => Some(format!("  {}: only in {a_name}", show_key(k))),
            (None, Some(_)) => Some(format!("  {}: only in {b_name}", show_key(k))),
            (None, None) => None,
        })
        .collect()
}

/// Fails with every difference listed, documents first.
fn assert_same(
    context: &str,
    a: (&str, &BTreeMap<Vec<u8>, Vec<u8>>),
    b: (&str, &BTreeMap<Vec<u8>, Vec<u8>>),
) {
    let mut diffs = differences(a, b);
    if diffs.is_empty() {
        return;
    }
    diffs.sort_by_key(|d| !d.starts_with("  doc/"));
    let shown = diffs.len().min(50);
    panic!(
        "{context}: {} records differ between {} and {}:\n{}{}",
        diffs.len(),
        a.0,
        b.0,
        diffs[..shown].join("\n"),
        if diffs.len() > shown { "\n  ..." } else { "" }
    );
}

/// The read models a clean replay of a prefix of the log gives, folded in memory by the
/// same fold the projector runs: the model a store at checkpoint `n` must equal.
struct Model<'a> {
    log: &'a [Message],
    /// When JetStream stored each message, as the projector reads it.
    published: Vec<i128>,
    state: MemState,
    fold: Fold,
    reached: u64,
    dead_letters: BTreeSet<u64>,
}

impl<'a> Model<'a> {
    /// Message `i` of `log` is at stream sequence `i + 1`, stored at `published[i]`.
    fn new(log: &'a [Message], published: Vec<i128>) -> Self {
        assert_eq!(log.len(), published.len(), "a time for each message");
        Model {
            log,
            published,
            state: MemState::default(),
            fold: Fold::default(),
            reached: 0,
            dead_letters: BTreeSet::new(),
        }
    }

    /// Folds messages up to sequence `seq`, and renders.
    fn advance_to(&mut self, seq: u64) {
        assert!(seq >= self.reached, "the model only moves forward");
        for s in self.reached + 1..=seq {
            let m = &self.log[(s - 1) as usize];
            match Envelope::decode(&m.subject, &m.payload) {
                Ok(env) => {
                    self.fold
                        .apply(&mut self.state, s, self.published[(s - 1) as usize], &env)
                        .expect("fold in memory");
                }
                Err(_) => {
                    self.dead_letters.insert(s);
                }
            }
        }
        self.fold.render(&mut self.state).expect("render in memory");
        self.reached = seq;
    }

    /// What a store at this point holds besides its checkpoint, schema and dead letters,
    /// each document as it answers.
    fn records(&self) -> BTreeMap<Vec<u8>, Vec<u8>> {
        as_answered(self.state.records.clone())
    }

    /// The `event_id`s applied up to this point.
    fn seen(&self) -> &std::collections::HashSet<u128> {
        &self.state.seen
    }
}

/// The records of a store that the fold writes: without the store's own bookkeeping
/// (`meta/checkpoint`, `meta/schema`, `meta/stream`, the applied event ids, kept in runs
/// merged as they come), and dead letters, which are checked separately.
fn folded(mut records: BTreeMap<Vec<u8>, Vec<u8>>) -> BTreeMap<Vec<u8>, Vec<u8>> {
    records.retain(|k, _| {
        !k.starts_with(b"dead\0")
            && !k.starts_with(b"seen\0")
            // The change feed, which a clean replay in memory does not keep (its pages
            // are compared across batchings in `racing-projections`' tests).
            && !k.starts_with(b"chg\0")
            && k.as_slice() != b"meta\0checkpoint"
            && k.as_slice() != b"meta\0stream"
            && k.as_slice() != b"meta\0schema"
    });
    as_answered(records)
}

/// `records` as they answer, whatever batches wrote them: the odds journal a record per
/// move and the versions and forms' changes a record per event, not in the records of
/// their batches. Each document keeps the sequence it was sealed at, that of the event
/// that last changed it, which no batching moves.
fn as_answered(records: BTreeMap<Vec<u8>, Vec<u8>>) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let records = racing_projections::journal_by_move(records).expect("the odds journal decodes");
    racing_projections::history_by_event(records).expect("the versions decode")
}

/// The first horse with a profile in the log: a document every ready service serves.
fn probe_horse(log: &[Message]) -> String {
    log.iter()
        .find_map(
            |m| match Envelope::decode(&m.subject, &m.payload).map(|e| e.event) {
                Ok(Event::HorseProfileUpdated(p)) => Some(p.horse_no),
                _ => None,
            },
        )
        .expect("a profile in the log")
}

/// Publishes a whole log into a fresh stream, every message stored at the sequence after
/// the one before.
async fn publish_log(nats: &Nats, log: &[Message]) -> u64 {
    racing::nats::ensure_stream(&nats.setup, STREAM, DUPLICATE_WINDOW)
        .await
        .expect("stream");
    let acks = feed::publish_all(&nats.js, log).await;
    for (i, ack) in acks.iter().enumerate() {
        assert_eq!(
            ack.as_ref().ok(),
            Some(&(i as u64 + 1)),
            "message {i} of the log: {ack:?}"
        );
    }
    log.len() as u64
}

#[tokio::test]
async fn a_service_killed_at_random_moments_converges_to_a_clean_replay() {
    let kills = setting("RELIABILITY_KILLS", 20);
    let seed = setting("RELIABILITY_SEED", 42);
    let nats = Nats::start().await;
    let log = feed::amended_season(seed);
    let last = publish_log(&nats, &log.messages).await;
    assert!(
        log.amendments > 100 && log.duplicates > 100 && log.invalid > 20,
        "a log worth crashing on: {} amendments, {} duplicates, {} invalid",
        log.amendments,
        log.duplicates,
        log.invalid
    );

    let work = TempDir::new().expect("temp dir");

    // A clean replay first: a fresh store, one uninterrupted run. Its duration tells how
    // long after start a crash can land mid-replay on this machine.
    let started = tokio::time::Instant::now();
    let mut clean = App::start(&nats, &work.path().join("clean")).await;
    let progress = clean.projected(last).await;
    let replay = started.elapsed();
    assert_eq!(
        (
            progress.applied + progress.duplicates + progress.dead_letters,
            progress.duplicates,
            progress.dead_letters
        ),
        (last, log.duplicates, log.invalid),
        "the clean replay takes every message once: {progress:?}"
    );

    let crashed = work.path().join("crashed");
    let service_log = work.path().join("crashed.log");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut model = Model::new(&log.messages, nats.published_times(STREAM, last).await);
    let mut history = Vec::new();
    let mut checkpoint = 0;
    // First `kills` crashes 5 to 300 ms after start: while it opens the store, connects
    // and folds its first batch. Then crashes at any moment of a replay's length, which
    // land all along the log, until one finds it caught up or `late` of them have run;
    // the last run below finishes what is left.
    let late = (kills / 4).clamp(5, 100);
    let replay_ms = u64::try_from(replay.as_millis()).unwrap_or(u64::MAX);
    loop {
        let n = history.len() as u64;
        if n >= kills && (checkpoint == last || n >= kills + late) {
            break;
        }
        let delay = if n < kills {
            rng.random_range(5..=300)
        } else {
            rng.random_range(300..=300 + replay_ms)
        };
        let mut service = Service::spawn(Some(&nats.broker()), &crashed, &service_log);
        // The moment of the crash; nothing waits on the service here.
        tokio::time::sleep(Duration::from_millis(delay)).await;
        let ended = service.kill().await;
        let kill = format!("kill {} ({delay} ms after start)", n + 1);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&ended),
            Some(Signal::SIGKILL as i32),
            "{kill}: the service had ended by itself ({ended}); log:\n{}",
            service.log_tail()
        );
        let store = Store::open(&crashed.join("read-models"))
            .unwrap_or_else(|e| panic!("after {kill} the store does not open: {e}"));
        let now = store.checkpoint().expect("checkpoint");
        assert!(
            (checkpoint..=last).contains(&now),
            "{kill}: checkpoint {now}, {checkpoint} before it, stream end {last}"
        );
        // A crash leaves exactly the state of a prefix of the log: the batches that
        // committed whole, nothing of the one in flight.
        model.advance_to(now);
        assert_same(
            &format!("{kill}, at checkpoint {now}"),
            ("the store", &folded(records(&store))),
            ("a replay to the checkpoint", &model.records()),
        );
        assert!(
            &store.applied_event_ids().expect("event ids") == model.seen(),
            "{kill}: the store remembers other event ids than a replay to {now} applies"
        );
        let dead: BTreeSet<u64> = store
            .dead_letters(0, usize::MAX)
            .expect("dead letters")
            .iter()
            .map(|d| d.seq)
            .collect();
        assert_eq!(dead, model.dead_letters, "{kill}: dead letters at {now}");
        checkpoint = now;
        history.push((delay, now));
    }
    let mid_replay = history
        .iter()
        .filter(|(_, c)| (1..last).contains(c))
        .count();
    eprintln!(
        "seed {seed}: {last} messages ({} amended results, {} duplicates, {} invalid); {} \
         kills, {mid_replay} leaving a store part way (clean replay {replay:?}); (delay ms, \
         checkpoint after): {history:?}",
        log.amendments,
        log.duplicates,
        log.invalid,
        history.len()
    );

    // Once more, to the end, and a clean stop.
    let client = reqwest::Client::new();
    let probe = format!("/api/v1/horses/{}", probe_horse(&log.messages));
    let mut service = Service::spawn(Some(&nats.broker()), &crashed, &service_log);
    service.ready(&client, &probe).await;
    service.signal(Signal::SIGTERM);
    let status = service.exited(Duration::from_secs(15)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "exit {status:?}; log:\n{}",
        service.log_tail()
    );

    let crashed_store = Store::open(&crashed.join("read-models")).expect("store");
    assert_eq!(crashed_store.checkpoint().expect("checkpoint"), last);
    // Each with its position: that of the event that last changed it, wherever the
    // crashes cut the batches.
    let documents = |store: &Store| -> BTreeMap<Vec<u8>, Vec<u8>> {
        store
            .documents()
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .expect("documents")
    };
    let crashed_docs = documents(&crashed_store);
    assert!(
        crashed_docs.len() > 1000,
        "{} documents",
        crashed_docs.len()
    );
    assert_same(
        "every document after the crashes",
        ("the crashed store", &crashed_docs),
        ("a clean replay", &documents(&clean.store())),
    );
    // And the folds' own state, which later events build on, with the dead letters; the
    // applied event ids are kept in runs that merge as they come, so they are compared as
    // sets, and the change feed's parts are cut where the batches were, which crashes
    // cut elsewhere.
    let without_seen = |mut records: BTreeMap<Vec<u8>, Vec<u8>>| {
        records.retain(|k, _| !k.starts_with(b"seen\0") && !k.starts_with(b"chg\0"));
        as_answered(records)
    };
    assert_same(
        "every record after the crashes",
        ("the crashed store", &without_seen(records(&crashed_store))),
        ("a clean replay", &without_seen(records(&clean.store()))),
    );
    assert!(
        crashed_store.applied_event_ids().expect("event ids")
            == clean.store().applied_event_ids().expect("event ids"),
        "the crashed store remembers other event ids than a clean replay"
    );
    clean.stop().await;
}

/// What a message of a bad feed is, and so what must become of it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Valid: applied.
    Valid,
    /// Invalid: a dead letter whose reason holds this fragment (`None`: any reason).
    Invalid(Option<&'static str>),
    /// Over the 1 MiB limit: refused by JetStream, never stored.
    Oversized,
}

/// A payload of `size` bytes: an envelope of an unknown type padded to that size.
fn padded_envelope(size: usize) -> Vec<u8> {
    let head = br#"{"event_id":"00000000-0000-4000-8000-000000000000","type":"HorseSold","occurred_at":"2026-11-21T12:00:00Z","data":{},"padding":""#;
    let mut payload = head.to_vec();
    payload.resize(size - 2, b'x');
    payload.extend_from_slice(b"\"}");
    payload
}

#[tokio::test]
async fn a_thousand_invalid_events_are_dead_letters_and_every_valid_one_applies() {
    use racing_events::MAX_PAYLOAD_BYTES;
    use rand::seq::SliceRandom;

    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let valid = feed::valid_events(&mut rng, 800);
    let mut feed: Vec<(Message, Kind)> = valid
        .iter()
        .map(|e| (Message::event(e), Kind::Valid))
        .collect();
    // Every kind of invalid event in turn, each made from a valid one.
    for k in 0..1200 {
        let e = &valid[rng.random_range(0..valid.len())];
        let (m, reason) = feed::invalid(&mut rng, e, k);
        feed.push((m, Kind::Invalid(reason)));
    }
    for size in [
        MAX_PAYLOAD_BYTES + 1,
        MAX_PAYLOAD_BYTES + 4096,
        MAX_PAYLOAD_BYTES * 3 / 2,
        MAX_PAYLOAD_BYTES * 5 / 2,
    ] {
        let m = Message {
            subject: "racing.horses.BIG".into(),
            payload: padded_envelope(size),
            msg_id: None,
        };
        feed.push((m, Kind::Oversized));
    }
    feed.shuffle(&mut rng);
    let messages: Vec<Message> = feed.iter().map(|(m, _)| m.clone()).collect();
    let acks = feed::publish_all(&nats.js, &messages).await;

    // What JetStream stored, in sequence order, and what it refused. Over 1 MiB, the
    // stream refuses a message (its limit counts headers too); were one stored, the
    // service must refuse it in turn.
    let mut stored: Vec<(u64, &Message, Kind)> = Vec::new();
    let mut refused = 0;
    for ((m, kind), ack) in feed.iter().zip(&acks) {
        match (kind, ack) {
            (Kind::Oversized, Err(_)) => refused += 1,
            (Kind::Oversized, Ok(seq)) => {
                stored.push((*seq, m, Kind::Invalid(Some("over the 1 MiB limit"))));
            }
            (_, Ok(seq)) => stored.push((*seq, m, *kind)),
            (_, Err(e)) => panic!("a message of {} bytes refused: {e}", m.payload.len()),
        }
    }
    stored.sort_by_key(|(seq, _, _)| *seq);
    let last = stored.last().expect("stored").0;
    assert_eq!(last, stored.len() as u64, "no gaps in the stream");
    let invalid: BTreeMap<u64, (&Message, Option<&str>)> = stored
        .iter()
        .filter_map(|(seq, m, kind)| match kind {
            Kind::Invalid(reason) => Some((*seq, (*m, *reason))),
            _ => None,
        })
        .collect();
    assert!(
        invalid.len() >= 1000,
        "{} invalid events stored",
        invalid.len()
    );
    assert!(
        refused >= 1,
        "the 2.5 MiB message is over NATS's max_payload"
    );
    assert_eq!(
        stored.len() + refused,
        feed.len(),
        "every message stored or refused"
    );

    // No stall: the projector reaches the end, each message counted once.
    let progress = app.projected(last).await;
    assert_eq!(progress.checkpoint, last);
    assert_eq!(
        (progress.applied, progress.dead_letters, progress.duplicates),
        (valid.len() as u64, invalid.len() as u64, 0),
        "{progress:?}"
    );

    // Each invalid one is a dead letter at its own sequence, with its reason.
    let letters = app
        .store()
        .dead_letters(0, usize::MAX)
        .expect("dead letters");
    let letter_seqs: Vec<u64> = letters.iter().map(|l| l.seq).collect();
    assert_eq!(letter_seqs, invalid.keys().copied().collect::<Vec<_>>());
    for letter in &letters {
        let (m, reason) = invalid[&letter.seq];
        assert_eq!(letter.subject, m.subject, "dead letter {}", letter.seq);
        assert!(
            !letter.reason.trim().is_empty(),
            "dead letter {}",
            letter.seq
        );
        if let Some(fragment) = reason {
            assert!(
                letter.reason.contains(fragment),
                "dead letter {}: `{}` does not say `{fragment}`; payload starts {:?}",
                letter.seq,
                letter.reason,
                String::from_utf8_lossy(&m.payload[..m.payload.len().min(200)])
            );
        }
    }

    // Each valid one is served.
    for e in &valid {
        let path = feed::document_path(e);
        let (status, body) = app.get(&path).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{path}: {body}");
        if let Event::HorseProfileUpdated(p) = &e.event {
            assert_eq!(body["horse_name"], p.horse_name.as_str(), "{path}");
        }
    }
    // And nothing else: the read models are what the valid events alone fold to.
    let in_order: Vec<Message> = stored.iter().map(|(_, m, _)| (*m).clone()).collect();
    let times = nats.published_times(STREAM, in_order.len() as u64).await;
    let mut model = Model::new(&in_order, times);
    model.advance_to(last);
    assert_eq!(
        model.dead_letters,
        invalid.keys().copied().collect::<BTreeSet<_>>()
    );
    assert_same(
        "after the bad feed",
        ("the store", &folded(records(&app.store()))),
        ("the valid events alone", &model.records()),
    );
    assert!(
        &app.store().applied_event_ids().expect("event ids") == model.seen(),
        "the store remembers other event ids than the valid events alone"
    );
    app.stop().await;
}

#[tokio::test]
async fn an_event_of_exactly_one_mebibyte_with_its_msg_id_is_stored_and_applied() {
    use racing_events::samples::profile;
    use racing_events::MAX_PAYLOAD_BYTES;

    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // A valid profile padded with an unknown field (ignored, forward compatible) to
    // exactly the feed contract's largest payload.
    let e = feed::envelope(&mut rng, profile("BIG1", "HEAVYWEIGHT"));
    let mut m = Message::event(&e);
    let json = String::from_utf8(m.payload.clone()).expect("utf-8");
    let head = json.strip_suffix('}').expect("an object");
    let pad = MAX_PAYLOAD_BYTES - head.len() - r#","padding":""}"#.len();
    m.payload = format!(r#"{head},"padding":"{}"}}"#, "x".repeat(pad)).into_bytes();
    assert_eq!(m.payload.len(), MAX_PAYLOAD_BYTES);
    let seq = feed::publish(&nats.js, &m)
        .await
        .unwrap_or_else(|e| panic!("a 1 MiB event with its Nats-Msg-Id: {e}"));
    let progress = app.projected(seq).await;
    assert_eq!((progress.applied, progress.dead_letters), (1, 0));
    assert_eq!(
        app.get("/api/v1/horses/BIG1").await.1["horse_name"],
        "HEAVYWEIGHT"
    );
    app.stop().await;
}

/// Reads an HTTP/1.1 response's head from `socket`; returns its `Content-Length` and
/// whatever of the body came with the head.
async fn read_head(socket: &mut tokio::net::TcpStream) -> (usize, Vec<u8>) {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(process::WAIT, socket.read(&mut chunk))
            .await
            .expect("a response head in time")
            .expect("read");
        assert!(n > 0, "connection closed before the head: {buf:?}");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            assert!(head.starts_with("http/1.1 200"), "{head}");
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no content-length: {head}"));
            return (length, buf[end + 4..].to_vec());
        }
    }
}

/// With no `RACING_NATS_URL`, `racing serve` runs a nats-server of its own, with its
/// store under the data directory and users of its own (no anonymous client), makes the
/// stream of the feed contract there (file storage, `racing.>`, kept forever, a
/// two-minute duplicate window), serves what `racing publish` publishes to it with the
/// feeder's credentials it finds there, and stops it on exit.
#[tokio::test]
async fn serve_without_a_nats_url_runs_its_own_server_and_stops_it_on_exit() {
    use async_nats::jetstream::stream::{DiscardPolicy, RetentionPolicy, StorageType};
    use racing_events::samples::profile;

    let work = TempDir::new().expect("temp dir");
    let data = work.path().join("data");
    let client = reqwest::Client::new();
    let mut service = Service::spawn(None, &data, &work.path().join("racing.log"));
    let base = service.ready(&client, "/api/v1/horses/E271").await;
    let url = service.nats().await;
    assert!(
        data.join("nats").join("jetstream").is_dir(),
        "the server's store is under the data directory; log:\n{}",
        service.log_tail()
    );

    // No anonymous client: only the users it made, kept owner-only under the data
    // directory.
    assert!(
        async_nats::connect(&url).await.is_err(),
        "an anonymous client is refused"
    );
    let own = data.join("credentials");
    let mode = |p: &Path| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(p).expect("there").permissions().mode() & 0o777
    };
    assert_eq!(mode(&own), 0o700, "the credentials directory is owner-only");
    for user in ["service", "feeder", "keys-admin"] {
        assert_eq!(mode(&own.join(format!("{user}.nk"))), 0o600, "{user}.nk");
    }
    let credentials = racing::nats::Credentials::open(&own, STREAM).expect("credentials");
    let auth = racing::nats::ClientAuth::from_credentials(&credentials, Role::Service)
        .expect("a service user");
    let nats = racing::nats::connect(&url, &auth, Role::Service)
        .await
        .expect("its server answers the service");
    let js = async_nats::jetstream::new(nats);
    let mut stream = js.get_stream(STREAM).await.expect("the stream was made");
    let config = stream.info().await.expect("stream info").config.clone();
    assert_eq!(config.subjects, ["racing.>"]);
    assert_eq!(config.storage, StorageType::File);
    assert_eq!(config.retention, RetentionPolicy::Limits);
    assert_eq!(config.discard, DiscardPolicy::Old);
    assert_eq!(
        (config.max_age, config.max_messages, config.max_bytes),
        (Duration::ZERO, -1, -1),
        "kept forever"
    );
    assert_eq!(config.duplicate_window, DUPLICATE_WINDOW);

    // `racing publish` and `racing keys`, pointed at the data directory alone, find the
    // server and their users' credentials there.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let event = feed::envelope(&mut rng, profile("E271", "GOLDEN SIXTY"));
    let file = work.path().join("events.ndjson");
    std::fs::write(&file, format!("{}\n", event.to_json())).expect("events file");
    let racing = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_racing"))
            .args(args)
            .arg("--data-dir")
            .arg(&data)
            .env_remove("RACING_NATS_URL")
            .env_remove("RACING_LOG")
            .output()
            .expect("racing runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "racing {args:?}: {text}{log}");
        // Quiet by default: no log line (async-nats's INFO ones included) and no colour.
        assert!(log.is_empty(), "racing {args:?} wrote to stderr: {log}");
        text
    };
    let published = racing(&["publish", file.to_str().expect("a path")]);
    let lines: Vec<&str> = published.lines().collect();
    assert!(
        lines.first().is_some_and(|l| l.starts_with("line 1: seq "))
            && lines.get(1).is_some_and(|l| l.starts_with("published 1,")),
        "each event's sequence, then the counts: {published}"
    );
    let key = racing(&["keys", "create", "--name", "local"]);
    let key = key.trim();
    assert!(
        key.starts_with("rk_") && !key.contains(char::is_whitespace),
        "the key alone on stdout: {key:?}"
    );
    let deadline = tokio::time::Instant::now() + process::WAIT;
    loop {
        let res = client
            .get(format!("{base}/api/v1/horses/E271"))
            .header("X-API-Key", key)
            .send()
            .await
            .expect("request");
        if res.status() == reqwest::StatusCode::OK {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the profile was not served with the new key"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    service.signal(Signal::SIGTERM);
    let status = service.exited(Duration::from_secs(15)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "exits cleanly on SIGTERM ({status:?}); log:\n{}",
        service.log_tail()
    );
    let addr = url.trim_start_matches("nats://").to_owned();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::net::TcpStream::connect(&addr).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "its nats-server at {addr} still answers after the service exited"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Keys never reach the log, even at debug level: not from the header, not from the
/// WebSocket's `api_key` query parameter, not when they are wrong.
#[tokio::test]
async fn no_key_reaches_the_log_even_at_debug_level() {
    const WRONG: &str = "wrong-key-4e1f9a0c7d";
    let nats = Nats::start().await;
    let work = TempDir::new().expect("temp dir");
    let client = reqwest::Client::new();
    let mut service = Service::spawn_with(
        Some(&nats.broker()),
        &work.path().join("data"),
        &work.path().join("racing.log"),
        &[("RACING_LOG", "debug")],
    );
    let base = service.ready(&client, "/api/v1/horses/E271").await;
    for key in [crate::support::KEY, WRONG] {
        let res = client
            .get(format!("{base}/api/v1/horses/E271?api_key={key}"))
            .header("X-API-Key", key)
            .send()
            .await
            .expect("request");
        assert!(res.status().is_client_error(), "{key}: {}", res.status());
    }
    let mut live = process::LiveClient::connect(&base).await;
    live.send(serde_json::json!({"type": "ping"})).await;
    assert_eq!(live.next_json().await["type"], "pong");
    let wrong = format!(
        "{}/ws/live/odds?api_key={WRONG}",
        base.replace("http", "ws")
    );
    assert!(tokio_tungstenite::connect_async(wrong).await.is_err());
    drop(live);
    service.signal(Signal::SIGTERM);
    assert!(service.exited(Duration::from_secs(15)).await.is_some());
    let log = service.log_text();
    assert!(log.contains("DEBUG"), "the log is at debug level");
    for key in [crate::support::KEY, WRONG] {
        assert!(!log.contains(key), "{key} is in the log:\n{log}");
    }
}

#[tokio::test]
async fn sigterm_finishes_requests_closes_sockets_and_exits_in_time() {
    use racing_events::samples::{odds, profile, result, runner};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let nats = Nats::start().await;
    racing::nats::ensure_stream(&nats.setup, STREAM, DUPLICATE_WINDOW)
        .await
        .expect("stream");
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let day = "2026-11-18";
    // A day of results of about 10 MB, more than the kernel's socket buffers hold, so that
    // a reader that has not read it keeps the server writing.
    let mut events = vec![feed::envelope(&mut rng, profile("E271", "GOLDEN SIXTY"))];
    for race in 1..=10 {
        let mut r = result(day, "Sha Tin", race, vec![runner(Some(1), "E271")]);
        if let Event::RaceResultPublished(r) = &mut r {
            r.race_name = (0..1_000_000)
                .map(|i| char::from(b'A' + ((i * 7 + race as usize) % 26) as u8))
                .collect();
        }
        events.push(feed::envelope(&mut rng, r));
    }
    events.push(feed::envelope(&mut rng, odds(day, 1, &[("E271", 3.5)])));
    let messages: Vec<Message> = events.iter().map(Message::event).collect();
    for ack in feed::publish_all(&nats.js, &messages).await {
        ack.expect("stored");
    }

    let work = TempDir::new().expect("temp dir");
    let data = work.path().join("data");
    let log_path = work.path().join("racing.log");
    let client = reqwest::Client::new();
    let mut service = Service::spawn(Some(&nats.broker()), &data, &log_path);
    let base = service.ready(&client, "/api/v1/horses/E271").await;

    // A live client, following race 1, sees an update go live.
    let mut live = process::LiveClient::connect(&base).await;
    live.send(serde_json::json!({"type": "subscribe", "date": day, "race_number": 1}))
        .await;
    assert_eq!(live.next_json().await["type"], "snapshot");
    let last = feed::publish(
        &nats.js,
        &Message::event(&feed::envelope(&mut rng, odds(day, 1, &[("E271", 3.2)]))),
    )
    .await
    .expect("stored");
    let delta = live.next_json().await;
    assert_eq!(
        (delta["type"].as_str(), delta["seq"].as_u64()),
        (Some("odds"), Some(last))
    );

    // A request in flight: the head read, most of the body not.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let addr = base.trim_start_matches("http://").parse().expect("address");
    let mut slow = socket.connect(addr).await.expect("connect");
    let request = format!(
        "GET /api/v1/results/{day} HTTP/1.1\r\nHost: {addr}\r\nX-API-Key: {}\r\n\
         Accept-Encoding: identity\r\n\r\n",
        crate::support::KEY
    );
    slow.write_all(request.as_bytes()).await.expect("request");
    let (length, mut body) = read_head(&mut slow).await;
    assert!(length > 9_000_000, "a big enough response: {length} bytes");

    let signalled = tokio::time::Instant::now();
    service.signal(Signal::SIGTERM);

    // The live socket is closed at once, with 1001 (going away).
    match live.next(process::WAIT).await {
        process::Frame::Closed(Some(frame)) => assert_eq!(u16::from(frame.code), 1001, "{frame:?}"),
        other => panic!("expected a close frame with 1001, got {other:?}"),
    }
    // The request in flight is answered whole: the process waits for it.
    assert!(
        service.exited(Duration::ZERO).await.is_none(),
        "exited with a response half sent"
    );
    let mut chunk = vec![0u8; 64 * 1024];
    while body.len() < length {
        let n = tokio::time::timeout(process::WAIT, slow.read(&mut chunk))
            .await
            .expect("the body keeps coming")
            .expect("read");
        assert!(
            n > 0,
            "connection closed after {} of {length} bytes",
            body.len()
        );
        body.extend_from_slice(&chunk[..n]);
    }
    let results: serde_json::Value = serde_json::from_slice(&body).expect("a whole JSON body");
    assert_eq!(results["races"].as_array().map(Vec::len), Some(10));

    // And the process exits cleanly, in time.
    let bound = Duration::from_secs(10);
    let status = service
        .exited(bound.saturating_sub(signalled.elapsed()))
        .await;
    assert!(
        status.is_some_and(|s| s.success()),
        "exit within {bound:?} with status 0, got {status:?}; log:\n{}",
        service.log_tail()
    );
    eprintln!("exited {:?} after SIGTERM", signalled.elapsed());

    // Nothing projected was lost: the store is at the last sequence, and a restart
    // resumes after it and serves it at once.
    let store = Store::open(&data.join("read-models")).expect("store");
    assert_eq!(store.checkpoint().expect("checkpoint"), last);
    drop(store);
    let mut service = Service::spawn(Some(&nats.broker()), &data, &log_path);
    let base = service.ready(&client, "/api/v1/horses/E271").await;
    let (status, odds) = process::get(&client, &base, &format!("/api/v1/odds/{day}/1"))
        .await
        .expect("odds");
    let odds: serde_json::Value = serde_json::from_slice(&odds).expect("json");
    assert_eq!((status.as_u16(), odds["seq"].as_u64()), (200, Some(last)));
    // Resumes after it ("projecting from=…", logged once its consumer is made, which
    // may be just after the service turns ready).
    service
        .wait_for_log(&format!("from={}", last + 1), process::WAIT)
        .await;
    service.signal(Signal::SIGTERM);
    assert!(service.exited(bound).await.is_some_and(|s| s.success()));
}

/// Publishes `m`, retrying while the broker is away or JetStream is not back yet; its
/// `Nats-Msg-Id` makes a retry of a publish that was in fact stored a duplicate.
async fn publish_retrying(nats: &Nats, m: &Message) -> u64 {
    let deadline = tokio::time::Instant::now() + process::WAIT;
    loop {
        match feed::publish(&nats.js, m).await {
            Ok(seq) => return seq,
            Err(e) if e.starts_with("duplicate of sequence ") => {
                return e["duplicate of sequence ".len()..]
                    .parse()
                    .expect("a sequence");
            }
            Err(e) => assert!(
                tokio::time::Instant::now() < deadline,
                "not stored within {:?}: {e}",
                process::WAIT
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn reads_survive_a_broker_outage_and_the_projector_catches_up() {
    use racing_events::samples::{odds, profile};

    let mut nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.ws_limits.heartbeat = Duration::from_millis(200);
    })
    .await;
    let day = "2026-11-21";
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut before: Vec<Envelope> = (0..50)
        .map(|i| feed::envelope(&mut rng, profile(&format!("P{i:03}"), "BEFORE")))
        .collect();
    before.push(feed::envelope(&mut rng, odds(day, 1, &[("P000", 4.0)])));
    let mut published = 0;
    let mut odds_seqs = Vec::new();
    for e in &before {
        let seq = publish_retrying(&nats, &Message::event(e)).await;
        published += 1;
        if matches!(e.event, Event::OddsUpdated(_)) {
            odds_seqs.push(seq);
        }
    }
    app.projected(*odds_seqs.last().expect("odds")).await;

    // A live client following race 1 across the outage.
    let mut live = process::LiveClient::connect(&app.base).await;
    live.send(serde_json::json!({"type": "subscribe", "date": day, "race_number": 1}))
        .await;
    let snapshot = live.next_json().await;
    assert_eq!(
        (snapshot["type"].as_str(), snapshot["seq"].as_u64()),
        (Some("snapshot"), odds_seqs.last().copied())
    );
    let reads = [
        "/api/v1/horses/P000",
        "/api/v1/horses/P049",
        &format!("/api/v1/odds/{day}/1"),
    ];
    let mut answers = Vec::new();
    for path in reads {
        answers.push(app.get(path).await);
    }

    // The broker dies. Reads go on from sled, unchanged, for the whole outage.
    let port = nats.kill_server().await;
    let outage = tokio::time::Instant::now();
    let mut served = 0;
    while outage.elapsed() < Duration::from_secs(2) {
        for (path, answer) in reads.iter().zip(&answers) {
            assert_eq!(&app.get(path).await, answer, "{path} during the outage");
            served += 1;
        }
    }
    assert!(served > 10, "{served} reads during the outage");

    // It comes back on the same port with the same store; what is published then is
    // projected, once.
    nats.restart_server(port).await;
    let after: Vec<Envelope> = (0..5)
        .flat_map(|i| {
            [
                feed::envelope(&mut rng, profile(&format!("Q{i:03}"), "AFTER")),
                feed::envelope(&mut rng, odds(day, 1, &[("P000", 5.0 + f64::from(i))])),
            ]
        })
        .collect();
    let mut last = 0;
    for e in &after {
        last = publish_retrying(&nats, &Message::event(e)).await;
        published += 1;
        if matches!(e.event, Event::OddsUpdated(_)) {
            odds_seqs.push(last);
        }
    }
    let progress = app.projected(last).await;
    assert_eq!(
        (
            progress.checkpoint,
            progress.applied,
            progress.duplicates,
            progress.dead_letters
        ),
        (last, published, 0, 0),
        "every event applied once: {progress:?}"
    );
    assert_eq!(
        app.get("/api/v1/horses/Q004").await.1["horse_name"],
        "AFTER"
    );

    // The live client saw every update after its snapshot with no gap, or was given a
    // fresh snapshot.
    let expected = odds_seqs[1..].to_vec();
    let mut got = Vec::new();
    while got.last() != expected.last() {
        let frame = live.next_json().await;
        match frame["type"].as_str() {
            Some("odds") => got.push(frame["seq"].as_u64().expect("seq")),
            Some("snapshot") => {
                got.clear();
                if frame["seq"].as_u64() == expected.last().copied() {
                    break;
                }
            }
            _ => panic!("unexpected frame {frame}"),
        }
    }
    let tail = &expected[expected.len() - got.len()..];
    assert_eq!(
        got, tail,
        "odds after the last snapshot, in order, none missing"
    );
    app.stop().await;
}

/// Copies a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The served documents of a stopped service's store, with its checkpoint.
fn stored_documents(data_dir: &Path) -> (u64, BTreeMap<Vec<u8>, Vec<u8>>) {
    let dir = racing::read_models::active_dir(data_dir).expect("the store in use");
    let store = Store::open(&dir).expect("store");
    let docs = store
        .documents()
        .map(|r| r.map(|(k, v)| (k.to_vec(), answered(&v))))
        .collect::<Result<_, _>>()
        .expect("documents");
    (store.checkpoint().expect("checkpoint"), docs)
}

/// A stream, and a stopped service whose store holds its read models: the original a
/// damaged store is compared with.
struct Projected {
    nats: Nats,
    work: TempDir,
    last: u64,
    documents: BTreeMap<Vec<u8>, Vec<u8>>,
    client: reqwest::Client,
    /// A document every ready service serves.
    probe: String,
}

impl Projected {
    /// A few hundred events, some with documents big enough for sled to keep out of line
    /// (its `blobs`): a store of about 2 MB.
    async fn small() -> Projected {
        use racing_events::samples::{result, runner};
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut events = feed::valid_events(&mut rng, 400);
        for race in 1..=3 {
            let mut r = result(
                "2026-10-01",
                "Sha Tin",
                race,
                vec![runner(Some(1), "V0000")],
            );
            if let Event::RaceResultPublished(r) = &mut r {
                // Drawn at random, so that it stays over a blob's size in the store, which
                // packs its documents: a repeated name would pack to a few hundred bytes.
                const LETTERS: &[u8] =
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -";
                let letter = |_| char::from(LETTERS[rng.random_range(0..LETTERS.len())]);
                r.race_name = (0..300_000).map(letter).collect();
            }
            events.push(feed::envelope(&mut rng, r));
        }
        let messages: Vec<Message> = events.iter().map(Message::event).collect();
        Self::new(&messages, "/api/v1/horses/V0000").await
    }

    /// A demo season with amendments: a store of about 50 MB, over many sled segments.
    async fn large() -> Projected {
        let log = feed::amended_season(42);
        let probe = format!("/api/v1/horses/{}", probe_horse(&log.messages));
        Self::new(&log.messages, &probe).await
    }

    /// Publishes `messages` and runs the service over them once, to a clean stop.
    async fn new(messages: &[Message], probe: &str) -> Projected {
        let nats = Nats::start().await;
        let last = publish_log(&nats, messages).await;
        let work = TempDir::new().expect("temp dir");
        let client = reqwest::Client::new();
        let original = work.path().join("original");
        run_to_completion(
            &nats,
            &original,
            &work.path().join("original.log"),
            &client,
            probe,
        )
        .await;
        let (checkpoint, documents) = stored_documents(&original);
        assert_eq!(checkpoint, last);
        Projected {
            nats,
            work,
            last,
            documents,
            client,
            probe: probe.to_owned(),
        }
    }

    /// A copy of the original's data directory, damaged by `damage` (given the
    /// `read-models` directory).
    fn damaged(&self, name: &str, damage: impl FnOnce(&Path)) -> PathBuf {
        let dir = self.work.path().join(name);
        copy_dir(&self.work.path().join("original"), &dir);
        damage(&dir.join("read-models"));
        dir
    }

    /// Runs the service on `dir` until it is ready and stops it; checks that it serves
    /// and stores exactly the original documents. Returns its log.
    async fn rebuilt(&self, name: &str, dir: &Path) -> String {
        let log = self.work.path().join(format!("{name}.log"));
        let text = run_to_completion(&self.nats, dir, &log, &self.client, &self.probe).await;
        let (checkpoint, documents) = stored_documents(dir);
        assert_eq!(checkpoint, self.last, "{name}: checkpoint");
        assert_same(
            &format!("{name}: every document"),
            ("the rebuilt store", &documents),
            ("the original", &self.documents),
        );
        text
    }

    /// [`Projected::rebuilt`], and the damage was noticed: an error line says the store
    /// is rebuilt, and the damaged one is kept aside for inspection.
    async fn detected_and_rebuilt(&self, name: &str, dir: &Path) {
        let log = self.rebuilt(name, dir).await;
        assert!(
            log.contains("rebuilding") && log.contains("read-models.damaged-"),
            "{name}: a clear log line; log:\n{log}"
        );
        assert!(
            damaged_copy_kept(dir),
            "{name}: the damaged store kept aside for inspection"
        );
    }
}

/// Starts the service on `data_dir`, waits until it serves `probe`, has checked every
/// record of its store, and `/readyz` says it is ready (so a damaged store found by that
/// check has been rebuilt), then stops it with SIGTERM; returns its log.
async fn run_to_completion(
    nats: &Nats,
    data_dir: &Path,
    log: &Path,
    client: &reqwest::Client,
    probe: &str,
) -> String {
    let mut service = Service::spawn(Some(&nats.broker()), data_dir, log);
    let base = service.ready(client, probe).await;
    let admin = service.admin().await.expect("the admin listener");
    let deadline = tokio::time::Instant::now() + process::WAIT;
    loop {
        let log = service.log_text();
        // A store found damaged while the service runs is moved aside once the rebuilt one
        // has replaced it, after `/readyz` is ready again (the move waits for the last
        // reader of the damaged store to let go).
        let checked = log.contains("read models verified")
            || log.contains("damaged read models replaced by rebuilt ones and moved aside");
        let ready = client.get(format!("{admin}/readyz")).send().await;
        if checked && ready.is_ok_and(|r| r.status().is_success()) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not ready in {:?}; log:\n{}",
            process::WAIT,
            service.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, _) = process::get(client, &base, probe).await.expect("probe");
    assert_eq!(
        status.as_u16(),
        200,
        "{probe}; log:\n{}",
        service.log_tail()
    );
    service.signal(Signal::SIGTERM);
    let status = service.exited(Duration::from_secs(10)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "exit {status:?}; log:\n{}",
        service.log_tail()
    );
    service.log_text()
}

/// Applies `change` to the sled tree of a stopped service's read models, as a bug, a
/// bad disk or an older version would leave it. The tree and key names are the store's
/// own (projections/src/store.rs and keys.rs).
fn tamper(read_models: &Path, key: &[u8], value: &[u8]) {
    let db = sled::open(read_models).expect("sled");
    let tree = db.open_tree("read_models").expect("tree");
    tree.insert(key, value).expect("insert");
    db.flush().expect("flush");
}

/// Something done to a stopped service's `read-models` directory.
type Damage = Box<dyn FnOnce(&Path)>;

/// The blob files of a store, oldest first.
fn blobs(read_models: &Path) -> Vec<PathBuf> {
    let mut blobs: Vec<PathBuf> = std::fs::read_dir(read_models.join("blobs"))
        .expect("blobs")
        .map(|e| e.expect("entry").path())
        .collect();
    blobs.sort_by_key(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<u64>().ok())
    });
    assert!(!blobs.is_empty(), "documents big enough to be blobs");
    blobs
}

/// Overwrites 64 KiB at seven places through sled's log with `byte`, or random bytes for
/// `None`. Where live records lie in the log depends on how often each was rewritten (and
/// so on how the projector happened to batch): damage at one place may land only on
/// superseded records, which nothing reads again, and go unseen.
fn overwrite_through(read_models: &Path, byte: Option<u8>) {
    for eighth in 1..8 {
        overwrite_at(read_models, eighth, 8, byte);
    }
}

/// Overwrites 64 KiB of the sled log at `part / parts` of its length, on a page
/// boundary, with `byte` or random bytes.
fn overwrite_at(read_models: &Path, part: u64, parts: u64, byte: Option<u8>) {
    use std::io::{Seek, SeekFrom, Write};
    let mut db = std::fs::OpenOptions::new()
        .write(true)
        .open(read_models.join("db"))
        .expect("db");
    let size = db.metadata().expect("size").len();
    db.seek(SeekFrom::Start(size * part / parts / 4096 * 4096))
        .expect("seek");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let bytes: Vec<u8> = (0..64 * 1024)
        .map(|_| byte.unwrap_or_else(|| rng.random()))
        .collect();
    db.write_all(&bytes).expect("write");
}

#[tokio::test]
async fn a_damaged_store_is_rebuilt_from_the_log() {
    let original = Projected::small().await;
    // Damage sled may take for a torn write and recover from by going back to an older
    // checkpoint, or refuse to open: either way the service converges to the same
    // documents.
    let recovered: Vec<(&str, Damage)> = vec![
        (
            "removed",
            Box::new(|d: &Path| std::fs::remove_dir_all(d).expect("remove")),
        ),
        (
            "emptied",
            Box::new(|d: &Path| {
                std::fs::File::create(d.join("db")).expect("truncate");
            }),
        ),
        (
            "truncated",
            Box::new(|d: &Path| {
                let db = std::fs::OpenOptions::new()
                    .write(true)
                    .open(d.join("db"))
                    .expect("db");
                let size = db.metadata().expect("size").len();
                db.set_len(size / 2 + 12_345).expect("truncate");
            }),
        ),
        (
            "a blob torn",
            Box::new(|d: &Path| {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&blobs(d)[0])
                    .expect("blob");
                f.set_len(100).expect("truncate");
            }),
        ),
    ];
    for (name, damage) in recovered {
        let dir = original.damaged(name, damage);
        original.rebuilt(name, &dir).await;
    }
    // Damage the store itself reports: detected, moved aside, rebuilt.
    let detected: Vec<(&str, Damage)> = vec![
        (
            "an unknown schema",
            Box::new(|d: &Path| tamper(d, b"meta\0schema", b"x")),
        ),
        (
            "an undecodable checkpoint",
            Box::new(|d: &Path| tamper(d, b"meta\0checkpoint", b"bad")),
        ),
        (
            "a checkpoint past the stream's end",
            Box::new(|d: &Path| tamper(d, b"meta\0checkpoint", &u64::MAX.to_be_bytes())),
        ),
    ];
    for (name, damage) in detected {
        let dir = original.damaged(name, damage);
        original.detected_and_rebuilt(name, &dir).await;
    }
    // Read models of an older version's layout: not damage, rebuilt and not kept.
    let dir = original.damaged("an older schema", |d: &Path| {
        tamper(d, b"meta\0schema", b"1")
    });
    let log = original.rebuilt("an older schema", &dir).await;
    assert!(
        log.contains("read models of an older version") && !log.contains("unusable"),
        "an older schema: a warning, not the error of damage; log:\n{log}"
    );
    assert!(
        !damaged_copy_kept(&dir),
        "an older schema: nothing kept aside"
    );
}

#[tokio::test]
async fn a_store_with_unreadable_records_is_rebuilt_from_the_log() {
    // Each of these opens with its checkpoint intact and fails only on reading some
    // records (the service would serve 500s); on a large store the same damage can make
    // sled panic in open (exit 101, a crash loop). Start-up reads every record to catch it.
    let small = Projected::small().await;
    let cases: Vec<(&str, Damage)> = vec![
        (
            "garbage in the log",
            Box::new(|d: &Path| overwrite_through(d, None)),
        ),
        (
            "zeroes in the log",
            Box::new(|d: &Path| overwrite_through(d, Some(0))),
        ),
        (
            "blobs lost",
            Box::new(|d: &Path| {
                for blob in blobs(d) {
                    std::fs::remove_file(blob).expect("remove");
                }
            }),
        ),
    ];
    for (name, damage) in cases {
        let dir = small.damaged(name, damage);
        small.detected_and_rebuilt(name, &dir).await;
    }
    let large = Projected::large().await;
    // Zeroes through the whole log, not only at its eighths: at the eighths alone, one run
    // in three left nothing the service detected (its documents came out whole, no copy
    // set aside), as if every stretch fell on pages the log no longer uses; with the
    // smaller records of schema 14, that is more of the log.
    let dir = large.damaged("zeroes in a large log", |d| {
        for part in 1..32 {
            overwrite_at(d, part, 32, Some(0));
        }
    });
    large
        .detected_and_rebuilt("zeroes in a large log", &dir)
        .await;
}

/// Publishes each of `messages` until JetStream acknowledges it, retrying through a
/// leader election (its `Nats-Msg-Id` keeps a retry from storing it twice), and giving up
/// on one after `patience`; tells `progress` how many it has dealt with. Returns the
/// index and sequence of each acknowledged one.
async fn feed_with_acks(
    js: async_nats::jetstream::Context,
    messages: Vec<Message>,
    patience: Duration,
    progress: tokio::sync::watch::Sender<usize>,
) -> Vec<(usize, u64)> {
    let mut acked = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            match tokio::time::timeout(Duration::from_secs(2), feed::publish(&js, m)).await {
                Ok(Ok(seq)) => {
                    acked.push((i, seq));
                    break;
                }
                Ok(Err(e)) if e.starts_with("duplicate of sequence ") => {
                    let seq = e["duplicate of sequence ".len()..].parse().expect("seq");
                    acked.push((i, seq));
                    break;
                }
                _ if tokio::time::Instant::now() > deadline => break,
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        progress.send_replace(i + 1);
    }
    acked
}

/// The replicas of the stream as its configuration says, and how many of them are
/// current (the leader and the followers that are not offline or lagging).
async fn replicas(js: &async_nats::jetstream::Context) -> (usize, usize) {
    let mut stream = js.get_stream(STREAM).await.expect("stream");
    let info = stream.info().await.expect("info");
    let current = info.cluster.as_ref().map_or(0, |c| {
        usize::from(c.leader.is_some())
            + c.replicas
                .iter()
                .filter(|r| r.current && !r.offline)
                .count()
    });
    (info.config.num_replicas, current)
}

/// Waits until the stream has `want` replicas configured and current.
async fn replicated(js: &async_nats::jetstream::Context, want: usize) {
    let deadline = tokio::time::Instant::now() + process::WAIT;
    loop {
        let (configured, current) = replicas(js).await;
        if configured == want && current == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{current} of {configured} replicas current, {want} wanted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls `path` until it answers 200; false if it does not within `within`.
async fn served(client: &reqwest::Client, base: &str, path: &str, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let status = process::get(client, base, path).await.map(|(s, _)| s);
        if status.is_ok_and(|s| s.as_u16() == 200) {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What the stream and the service say, for a failure message: the stream's state, the
/// first missing messages as the stream holds them, the service's status and log.
async fn diagnosis(
    js: &async_nats::jetstream::Context,
    service: &mut Service,
    client: &reqwest::Client,
    missing: &[(usize, u64)],
) -> String {
    let mut out = String::new();
    match js.get_stream(STREAM).await {
        Ok(mut stream) => {
            let state = stream.info().await.map(|i| i.state.clone());
            out += &format!("stream: {state:?}\n");
            for (i, seq) in missing.iter().take(5) {
                let held = stream.get_raw_message(*seq).await;
                out += &format!(
                    "  event {i} acknowledged at {seq}: {:?}\n",
                    held.map(|m| m.subject)
                );
            }
        }
        Err(e) => out += &format!("stream: {e}\n"),
    }
    out += &format!("service status: {}\n", service.status(client).await);
    out + &service.log_tail()
}

/// A three-node cluster with a stream of three replicas and its buckets, set up as an
/// operator does before any service starts.
async fn clustered_stream() -> (cluster::Cluster, async_nats::jetstream::Context) {
    let cluster = cluster::Cluster::start(3).await;
    let settings = racing::nats::StreamSettings {
        name: STREAM.to_owned(),
        duplicate_window: DUPLICATE_WINDOW,
        replicas: Some(3),
        link_ttl: racing::nats::buckets::LINK_TTL,
    };
    racing::nats::set_up(&cluster.open(Role::Setup).await, &settings)
        .await
        .expect("a stream of three replicas and its buckets");
    let js = async_nats::jetstream::new(cluster.connect(Role::Service).await);
    replicated(&js, 3).await;
    (cluster, js)
}

/// The name of the node that leads the stream.
async fn stream_leader(js: &async_nats::jetstream::Context) -> String {
    let mut stream = js.get_stream(STREAM).await.expect("stream");
    let info = stream.info().await.expect("info");
    info.cluster
        .as_ref()
        .and_then(|c| c.leader.clone())
        .expect("a leader")
}

#[tokio::test]
async fn a_service_without_the_replicas_setting_keeps_the_replicas_an_operator_set() {
    let work = TempDir::new().expect("temp dir");
    let (cluster, js) = clustered_stream().await;
    let mut service = Service::spawn(
        Some(&cluster.broker(&cluster.urls().join(","))),
        &work.path().join("data"),
        &work.path().join("racing.log"),
    );
    service
        .ready(&reqwest::Client::new(), "/api/v1/horses/H0000")
        .await;
    assert_eq!(
        replicas(&js).await.0,
        3,
        "replicas after the service started"
    );
}

/// Which node of the cluster a test kills.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Victim {
    /// A node that does not lead the stream: the service may be connected to it.
    Follower,
    /// The stream's leader, which also hosts the projector's consumer, with the service
    /// connected to it alone (it learns the others from the cluster).
    Leader,
}

/// Feeds 600 events with acknowledgements through a three-replica stream, kills `victim`
/// a third of the way in, and checks that the service kept answering and serves every
/// acknowledged event.
async fn lose_a_node(victim: Victim) {
    use racing_events::samples::profile;

    let work = TempDir::new().expect("temp dir");
    let (mut cluster, js) = clustered_stream().await;
    let leader = stream_leader(&js).await;
    let url = match victim {
        Victim::Follower => cluster.urls().join(","),
        Victim::Leader => cluster.url(cluster.index_of(&leader)),
    };
    let mut service = Service::spawn_with(
        Some(&cluster.broker(&url)),
        &work.path().join("data"),
        &work.path().join("racing.log"),
        &[("RACING_STREAM_REPLICAS", "3")],
    );
    let client = reqwest::Client::new();
    let base = service.ready(&client, "/api/v1/horses/H0000").await;
    assert_eq!(replicas(&js).await.0, 3, "the service keeps three replicas");

    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let n = 600;
    let messages: Vec<Message> = (0..n)
        .map(|i| {
            Message::event(&feed::envelope(
                &mut rng,
                profile(&format!("H{i:04}"), "FED"),
            ))
        })
        .collect();
    let (progress, mut fed) = tokio::sync::watch::channel(0);
    // Fed as a feeder: the service's user may not publish events.
    let feeder_js = async_nats::jetstream::new(cluster.connect(Role::Feeder).await);
    let feeder = tokio::spawn(feed_with_acks(
        feeder_js,
        messages,
        Duration::from_secs(20),
        progress,
    ));

    // A third in, a node dies, with publishes in flight.
    tokio::time::timeout(process::WAIT, fed.wait_for(|f| *f >= n / 3))
        .await
        .expect("a third fed in time")
        .expect("feeder alive");
    assert!(
        served(&client, &base, "/api/v1/horses/H0000", process::WAIT).await,
        "the first events projected"
    );
    let leader = stream_leader(&js).await;
    let killed = match victim {
        Victim::Leader => cluster.index_of(&leader),
        Victim::Follower => (0..3)
            .find(|i| *i != cluster.index_of(&leader))
            .expect("a follower"),
    };
    cluster.kill(killed).await;

    // The service keeps answering meanwhile: at least once with the node down, even if
    // the feeder finished before it died.
    let mut answered = 0;
    loop {
        let (status, _) = process::get(&client, &base, "/api/v1/horses/H0000")
            .await
            .expect("the service answers");
        assert_eq!(status.as_u16(), 200, "a read while a node is down");
        answered += 1;
        if feeder.is_finished() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let acked = feeder.await.expect("feeder");
    assert!(answered > 0);
    assert!(
        acked.len() > n * 9 / 10,
        "most events acknowledged despite the loss: {} of {n}",
        acked.len()
    );

    // Every acknowledged event is in the read models: the last one first (the projector
    // goes in stream order), then each.
    let last = acked
        .iter()
        .max_by_key(|(_, seq)| *seq)
        .copied()
        .expect("acked");
    let last_path = format!("/api/v1/horses/H{:04}", last.0);
    let caught_up = served(&client, &base, &last_path, process::WAIT).await;
    let mut missing = Vec::new();
    for &(i, seq) in &acked {
        let path = format!("/api/v1/horses/H{i:04}");
        if !served(&client, &base, &path, Duration::ZERO).await {
            missing.push((i, seq));
        }
    }
    if !caught_up || !missing.is_empty() {
        panic!(
            "{victim:?} node-{killed} killed: {} of {} acknowledged events not served (the \
             last, {last:?}, {}); {}",
            missing.len(),
            acked.len(),
            if caught_up { "served" } else { "not served" },
            diagnosis(&js, &mut service, &client, &missing).await
        );
    }
    eprintln!(
        "killed node-{killed} ({victim:?}); {} of {n} acknowledged; {answered} reads meanwhile",
        acked.len()
    );
    // A clean exit. Its time is checked on a whole cluster
    // (`sigterm_finishes_requests_closes_sockets_and_exits_in_time`); here a node was just
    // lost, and the steps of a stop that speak to NATS (the leases given back) may each
    // wait out their bounds, so the exit has more room than there.
    service.signal(Signal::SIGTERM);
    let status = service.exited(Duration::from_secs(20)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "exit {status:?}; log:\n{}",
        service.log_tail()
    );
}

#[tokio::test]
async fn an_acknowledged_event_survives_losing_a_cluster_node() {
    lose_a_node(Victim::Follower).await;
}

#[tokio::test]
async fn the_projector_resumes_after_losing_the_stream_leader() {
    lose_a_node(Victim::Leader).await;
}

/// nats-server 2.9 puts a consumer of one replica on any of the stream's nodes, a dead one
/// too, where it is never answered for: each attempt is bounded, so that the next one,
/// which may draw a live node, comes soon (the flake of `lose_a_node` in CI).
#[tokio::test]
async fn a_consumer_is_made_promptly_or_given_up_with_a_cluster_node_down() {
    let (mut cluster, js) = clustered_stream().await;
    let feeder = async_nats::jetstream::new(cluster.connect(Role::Feeder).await);
    for i in 0..3 {
        feeder
            .publish(format!("racing.horses.H{i:04}"), "{}".into())
            .await
            .expect("publish")
            .await
            .expect("acknowledged");
    }
    let leader = stream_leader(&js).await;
    let follower = (0..3)
        .find(|i| *i != cluster.index_of(&leader))
        .expect("a follower");
    cluster.kill(follower).await;

    let bound = racing::nats::CONSUMER_WITHIN + Duration::from_secs(1);
    let (mut made, mut given_up) = (0, 0);
    for _ in 0..12 {
        let attempt = tokio::time::timeout(bound, racing::nats::messages_from(&js, STREAM, 2))
            .await
            .expect("an attempt ends within its bound");
        match attempt {
            Ok(mut messages) => {
                let first = tokio::time::timeout(process::WAIT, messages.next())
                    .await
                    .expect("a message in time")
                    .expect("a message")
                    .expect("delivered");
                let seq = first.info().expect("a JetStream message").stream_sequence;
                assert_eq!(seq, 2, "the consumer starts where asked");
                made += 1;
            }
            Err(e) => {
                assert!(e.to_string().contains("no consumer"), "{e:#}");
                given_up += 1;
            }
        }
    }
    // Each attempt draws one of three nodes: all twelve on the dead one, one in 531,441.
    assert!(
        made > 0,
        "no consumer made in 12 attempts ({given_up} given up)"
    );
    eprintln!("node-{follower} down: {made} consumers made, {given_up} attempts given up");
}

#[tokio::test]
async fn a_rebuilds_worker_held_stopped_dies_with_a_killed_service() {
    // The service stops its rebuild's worker for part of each period while requests keep
    // the machine busy. Killed meanwhile, it must not leave the worker stopped for good,
    // holding a store and its memory: the worker dies with it.
    let nats = Nats::start().await;
    let log = feed::amended_season(7);
    publish_log(&nats, &log.messages).await;
    let work = TempDir::new().expect("temp dir");
    let client = reqwest::Client::new();
    let probe = format!("/api/v1/horses/{}", probe_horse(&log.messages));
    let mut service = Service::spawn(
        Some(&nats.broker()),
        &work.path().join("data"),
        &work.path().join("racing.log"),
    );
    service.ready(&client, &probe).await;
    let admin = service.admin().await.expect("an admin listener");
    let started = client
        .post(format!("{admin}/rebuild"))
        .send()
        .await
        .expect("POST /rebuild");
    assert_eq!(started.status(), reqwest::StatusCode::ACCEPTED);
    let worker = tokio::time::timeout(process::WAIT, settled_worker(service.pid()))
        .await
        .unwrap_or_else(|_| {
            panic!(
                "no rebuild worker under the idle policy within {:?}; log:\n{}",
                process::WAIT,
                service.log_tail()
            )
        });

    // Stopped, as the pacer leaves it for most of a period under load.
    nix::sys::signal::kill(worker, Signal::SIGSTOP).expect("stop the worker");
    service.kill().await;
    let deadline = tokio::time::Instant::now() + process::WAIT;
    loop {
        match process_state(worker) {
            // Gone, or dead and waiting for init to reap it.
            None | Some('Z') => break,
            Some(state) => assert!(
                tokio::time::Instant::now() < deadline,
                "the worker is still there ({state}) {:?} after its service was killed",
                process::WAIT
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The service `service`'s rebuild worker, once it has set itself up: the idle policy,
/// which it takes right after asking to die with the service.
async fn settled_worker(service: nix::unistd::Pid) -> nix::unistd::Pid {
    loop {
        let children = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                stat_fields(*pid).is_some_and(|f| f.get(1) == Some(&service.as_raw().to_string()))
            });
        for pid in children {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let is_worker = cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == b"rebuild-worker");
            if is_worker && idle_policy(pid) {
                return nix::unistd::Pid::from_raw(pid);
            }
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The fields of `/proc/PID/stat` after the command name: the state first, the parent's
/// id second (proc(5)).
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    Some(after_name.split_whitespace().map(str::to_owned).collect())
}

/// Whether a thread of process `pid` runs under the idle policy (`SCHED_IDLE`, 5: the
/// 41st field of a task's `stat`).
fn idle_policy(pid: i32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            stat.rsplit_once(')')
                .and_then(|(_, f)| f.split_whitespace().nth(38).map(|p| p == "5"))
                .unwrap_or(false)
        })
}

/// The state letter of process `pid`, if it is there.
fn process_state(pid: nix::unistd::Pid) -> Option<char> {
    stat_fields(pid.as_raw())?.first()?.chars().next()
}

/// Folds `messages` into `batch`, the first at stream sequence `first`, each at the
/// sequence after the one before.
fn fold_into(batch: &mut racing_projections::Batch<'_>, messages: &[Message], first: u64) {
    for (seq, m) in (first..).zip(messages) {
        match Envelope::decode(&m.subject, &m.payload) {
            Ok(env) => {
                batch
                    .apply(seq, seq as i128 * 1_000_000, &env)
                    .expect("apply");
            }
            Err(reason) => batch.dead_letter(seq, &m.subject, &reason.to_string(), &m.payload),
        }
    }
}

#[test]
fn a_replay_loaded_in_bulk_holds_what_folding_as_the_events_come_holds() {
    let log = feed::amended_season(11);
    assert!(log.amendments > 100 && log.duplicates > 100 && log.invalid > 20);
    let work = TempDir::new().expect("temp dir");

    // As the events come: batches of 1 to 40 messages.
    let incremental = Store::open(&work.path().join("incremental")).expect("store");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut done = 0;
    while done < log.messages.len() {
        let size = rng.random_range(1..=40).min(log.messages.len() - done);
        let mut batch = incremental.batch().expect("batch");
        fold_into(
            &mut batch,
            &log.messages[done..done + size],
            done as u64 + 1,
        );
        batch.commit().expect("commit");
        done += size;
    }
    let expected = folded(records(&incremental));
    assert!(expected.len() > 1000, "{} records", expected.len());

    // In bulk, holding every record in memory; and with a budget so small that it lets go
    // of all but the batch being written and reads the rest from the store as it writes.
    for (name, budget) in [("holding-all", 1usize << 30), ("over-its-budget", 64 << 10)] {
        let store = Store::open(&work.path().join(name)).expect("store");
        let mut loader = racing_projections::Loader::new(&store, budget).expect("loader");
        assert!(loader.holds_all(), "an empty store is held whole");
        for (i, chunk) in log.messages.chunks(1_500).enumerate() {
            let mut batch = loader.batch();
            fold_into(&mut batch, chunk, (i * 1_500) as u64 + 1);
            let sealed = batch.seal(|_| {}).expect("seal");
            loader.write(sealed).expect("write");
        }
        loader.finish().expect("the last write, and the load's end");
        assert_eq!(loader.holds_all(), budget > 1 << 20, "{name}");
        let left: Vec<_> = std::fs::read_dir(work.path().join(name))
            .expect("the store's directory")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("load-steps-"))
            .collect();
        assert!(
            left.is_empty(),
            "{name}: the load's redo files left: {left:?}"
        );
        assert_eq!(
            store.checkpoint().expect("checkpoint"),
            log.messages.len() as u64
        );
        assert_same(
            &format!("the store loaded in bulk, {name}"),
            ("loaded in bulk", &folded(records(&store))),
            ("folded as the events came", &expected),
        );
        assert_eq!(
            store.applied_event_ids().expect("ids"),
            incremental.applied_event_ids().expect("ids")
        );
    }
}
