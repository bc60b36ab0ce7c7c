//! The session over channels: what it reads, what it counts against a client.

use std::sync::atomic::{AtomicUsize, Ordering};

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Message;
use futures::StreamExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::outbox::{self, Outbox};
use super::*;
use crate::live::close::CLOSE_POLICY;
use crate::live::hub::{OddsDelta, OddsHub};

/// A session's surroundings: a store of its own, and a hub whose ring holds `ring`
/// updates.
struct Fixture {
    ctx: SessionContext,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new(ring: usize, limits: Limits) -> Fixture {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let store =
            racing_projections::Store::open(&dir.path().join("read-models")).expect("store opens");
        let ctx = SessionContext {
            hub: Arc::new(OddsHub::new(ring, 0)),
            read_models: ReadModels::new(store, dir.path(), 0),
            limits,
            faults: Arc::default(),
        };
        Fixture { ctx, _dir: dir }
    }
}

/// A client that sends frame after frame and reads nothing: once the answers that
/// wait for it fill its outbox, its frames are no longer read, so what it costs the
/// server stays bounded however much it sends.
#[tokio::test]
async fn a_client_that_never_reads_is_not_read_without_end() {
    let limits = Limits {
        send_timeout: Duration::from_secs(600),
        ..Limits::default()
    };
    let max_pending = limits.max_pending;
    let Fixture { ctx, _dir } = Fixture::new(64, limits);
    let pulled = Arc::new(AtomicUsize::new(0));
    let counter = pulled.clone();
    let frames = futures::stream::iter(0..100_000).map(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
        Ok::<_, std::convert::Infallible>(Message::Text(r#"{"type":"ping"}"#.into()))
    });
    // A socket whose peer reads nothing: the first frame fills it.
    let (sink, _unread) = futures::channel::mpsc::channel::<Message>(0);
    let shutdown = CancellationToken::new();
    let session = run_session(
        sink,
        frames,
        ctx,
        key(shutdown.clone(), std::future::pending()),
    );
    let ended = tokio::time::timeout(Duration::from_millis(500), session).await;
    assert!(ended.is_err(), "the session waits for the client");
    let pulled = pulled.load(Ordering::Relaxed);
    assert!(
        pulled <= max_pending + 4,
        "{pulled} frames read with {max_pending} answers allowed to wait"
    );
}

/// The ends from outside of a session whose key is never charged.
fn key<F>(shutdown: CancellationToken, ended: F) -> Key<F> {
    Key {
        shutdown,
        ended,
        charge: free(),
    }
}

/// Publishes `n` updates of one race at once, faster than any session takes them
/// from a small ring.
fn burst(hub: &OddsHub, from: u64, n: u64) -> u64 {
    for seq in from..from + n {
        hub.publish_with("2026-11-21", 1, seq, || OddsDelta {
            date: "2026-11-21".into(),
            race_number: 1,
            seq,
            frame: format!("{{\"type\":\"odds\",\"seq\":{seq}}}").into(),
        });
    }
    from + n
}

/// A session that loses its place in the ring while it keeps taking from it (the
/// server published faster than it was scheduled) is conflated, and that does not
/// count against its client; one whose client does not read is held back, and its
/// conflations count until it is closed.
#[tokio::test]
async fn only_a_conflation_the_client_caused_counts_against_it() {
    let limits = Limits {
        resume_window: Duration::ZERO,
        max_pending: 4,
        max_conflations: 2,
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(8, limits);
    let hub = ctx.hub.clone();
    // A client that reads every frame at once.
    let (sink, mut read) = futures::channel::mpsc::unbounded::<Message>();
    let frames = futures::stream::pending::<Result<Message, std::convert::Infallible>>();
    let shutdown = CancellationToken::new();
    let session = tokio::spawn(run_session(
        sink,
        frames,
        ctx.clone(),
        key(shutdown.clone(), std::future::pending()),
    ));
    let welcome = read.next().await.expect("a welcome");
    assert!(matches!(&welcome, Message::Text(t) if t.contains("welcome")));
    let mut seq = 1;
    let mut snapshots = 0;
    for _ in 0..6 {
        // Five times the ring at once: its place is lost before it can take any.
        seq = burst(&hub, seq, 40);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let frame = tokio::time::timeout_at(deadline, read.next())
                .await
                .expect("a snapshot after the burst")
                .expect("connection open");
            match frame {
                Message::Text(t) if t.contains("\"snapshot\"") => {
                    snapshots += 1;
                    break;
                }
                Message::Close(c) => panic!("closed: {c:?}"),
                _ => {}
            }
        }
    }
    assert_eq!(snapshots, 6);
    assert!(
        !session.is_finished(),
        "a client that reads is never closed"
    );

    // A client that reads slower than updates come, one at a time: its session waits
    // for room, and loses its place meanwhile.
    let (sink, mut slow) = futures::channel::mpsc::channel::<Message>(0);
    let frames = futures::stream::pending::<Result<Message, std::convert::Infallible>>();
    let held = tokio::spawn(run_session(
        sink,
        frames,
        ctx.clone(),
        key(shutdown.clone(), std::future::pending()),
    ));
    let welcome = slow.next().await.expect("a welcome");
    assert!(matches!(&welcome, Message::Text(t) if t.contains("welcome")));
    let deadline = Instant::now() + Duration::from_secs(10);
    let close = 'read: loop {
        assert!(
            Instant::now() < deadline,
            "the slow client was never closed"
        );
        for _ in 0..10 {
            seq = burst(&hub, seq, 1);
            tokio::task::yield_now().await;
        }
        match slow.next().await {
            Some(Message::Close(c)) => break 'read c,
            Some(_) => {}
            None => panic!("the connection ended without a close frame"),
        }
    };
    let close = close.expect("a close frame with a reason");
    assert_eq!(close.code, CLOSE_POLICY);
    assert!(close.reason.contains("fell behind"), "{}", close.reason);
    let _ = held.await;
    shutdown.cancel();
    let _ = session.await;
}

/// Commits odds moves of race 1 of `DAY` at sequences `seqs` to the fixture's store.
fn commit_moves(ctx: &SessionContext, seqs: impl IntoIterator<Item = u64>) {
    commit_moves_at(ctx, seqs.into_iter().map(|seq| (seq, 0)));
}

/// Commits odds moves of race 1 of `DAY`, each at its sequence, its prices given and
/// recorded at its time (nanoseconds since the epoch).
fn commit_moves_at(ctx: &SessionContext, moves: impl IntoIterator<Item = (u64, i128)>) {
    use racing_events::samples::odds;
    let store = ctx.read_models.load();
    let mut batch = store.batch().expect("batch");
    for (seq, at) in moves {
        let price = 2.0 + (seq % 50) as f64 / 10.0;
        let given = jiff::Timestamp::from_nanosecond(at).expect("a time");
        let event =
            racing_events::Envelope::new(odds(DAY, 1, &[("A001", price)]), given.to_string());
        batch.apply(seq, at, &event).expect("apply");
    }
    batch.commit().expect("commit");
}

/// Commits moves as [`commit_moves_at`] does, and has the hub record them as gone live
/// before any session joined.
fn recorded(ctx: &SessionContext, moves: impl IntoIterator<Item = (u64, i128)>) {
    let moves: Vec<(u64, i128)> = moves.into_iter().collect();
    commit_moves_at(ctx, moves.iter().copied());
    for (seq, _) in moves {
        ctx.hub
            .publish_with(DAY, 1, seq, || unreachable!("no session yet"));
    }
}

/// Commits moves at sequences `seqs` and sends each to the sessions, as the projector does.
fn go_live(ctx: &SessionContext, seqs: std::ops::RangeInclusive<u64>) {
    commit_moves(ctx, seqs.clone());
    relay_moves(ctx, seqs);
}

/// Sends moves at sequences `seqs` to the sessions, as the projector does once they are
/// committed.
fn relay_moves(ctx: &SessionContext, seqs: std::ops::RangeInclusive<u64>) {
    for seq in seqs {
        ctx.hub.publish_with(DAY, 1, seq, || OddsDelta {
            date: DAY.into(),
            race_number: 1,
            seq,
            frame: format!(r#"{{"type":"odds","seq":{seq}}}"#).into(),
        });
    }
}

/// After a replay: the session serves what it left of the ring, the writer sends the
/// outbox to the client, and what the client got is read to its end.
async fn served_to_the_end(
    mut session: Session<'_>,
    outbox: &Outbox,
    mut writer: std::pin::Pin<Box<impl std::future::Future<Output = ()>>>,
    read: futures::channel::mpsc::UnboundedReceiver<Message>,
) -> Vec<Message> {
    while let Ok(relayed) = session.rx.try_recv() {
        session.relay(&relayed).expect("relay");
    }
    let drained = async {
        while outbox.len() > 0 {
            tokio::task::yield_now().await;
        }
    };
    tokio::select! {
        () = drained => {}
        () = &mut writer => panic!("the writer stopped"),
    }
    drop(writer);
    drop(session);
    read.collect().await
}

const DAY: &str = "2026-11-21";

/// The `seq` of each `odds` frame among `frames`.
fn odds_seqs(frames: &[Message]) -> Vec<u64> {
    frames
        .iter()
        .filter_map(|m| match m {
            Message::Text(t) if t.starts_with(r#"{"type":"odds""#) => {
                let v: serde_json::Value = serde_json::from_str(t).expect("json");
                v["seq"].as_u64()
            }
            _ => None,
        })
        .collect()
}

/// A `since` replay reads the journal a little at a time as the client takes frames: with
/// nobody reading, it stops with the outbox full and nothing more in hand; live updates
/// that come meanwhile follow it in sequence, each once.
#[tokio::test]
async fn a_replay_waits_at_the_outbox_and_hands_over_to_live_in_sequence() {
    let limits = Limits::default();
    let max_pending = limits.max_pending;
    let Fixture { ctx, _dir } = Fixture::new(4096, limits);
    recorded(&ctx, (1..=2000).map(|seq| (seq, 0)));
    let outbox = Outbox::default();
    let (latest, rx) = ctx.hub.join();
    assert_eq!(latest, 2000);
    let (_ends, ends) = futures::channel::oneshot::channel();
    let mut session = Session::new(&ctx, &outbox, latest, rx, ends);
    let mut replay = Box::pin(session.subscribe(
        (DAY.to_owned(), Some(1)),
        (super::topics::Topics::ODDS, 0),
        Some(0),
    ));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), replay.as_mut())
            .await
            .is_err(),
        "with nobody reading, the replay waits"
    );
    assert!(
        outbox.len() <= max_pending,
        "{} frames wait, at most {max_pending} may",
        outbox.len()
    );
    // Ten more updates are committed and go live while the replay waits.
    go_live(&ctx, 2001..=2010);
    let (sink, read) = futures::channel::mpsc::unbounded::<Message>();
    // Boxed, so that dropping it drops the sink, which ends what the client reads.
    let mut writer = Box::pin(outbox::write(sink, &outbox, Duration::from_secs(10)));
    tokio::select! {
        ended = replay => assert!(ended.is_ok(), "the replay ends well"),
        () = &mut writer => panic!("the writer stopped"),
    }
    // What the replay left of the ring goes out as the session serves.
    let frames = served_to_the_end(session, &outbox, writer, read).await;
    let seqs = odds_seqs(&frames);
    let expected: Vec<u64> = (1..=2010).collect();
    let first_wrong = seqs.iter().zip(&expected).position(|(a, b)| a != b);
    assert!(
        seqs == expected,
        "{} odds frames where every update once in order makes 2,010; first out of place at {first_wrong:?}",
        seqs.len()
    );
}

/// Client messages beyond the connection's rate get an `error` frame each and are not
/// acted on; the connection stays open.
#[tokio::test]
async fn client_messages_over_the_rate_are_refused_with_an_error_frame() {
    let limits = Limits {
        messages_per_sec: 1,
        message_burst: 5,
        resume_window: Duration::ZERO,
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(64, limits);
    let pings = futures::stream::iter(0..10)
        .map(|_| Ok::<_, std::convert::Infallible>(Message::Text(r#"{"type":"ping"}"#.into())))
        .chain(futures::stream::pending());
    let (sink, mut read) = futures::channel::mpsc::unbounded::<Message>();
    let shutdown = CancellationToken::new();
    let session = tokio::spawn(run_session(
        sink,
        pings,
        ctx.clone(),
        key(shutdown.clone(), std::future::pending()),
    ));
    let mut kinds = Vec::new();
    while kinds.len() < 11 {
        let frame = tokio::time::timeout(Duration::from_secs(5), read.next())
            .await
            .expect("a frame in time")
            .expect("open");
        if let Message::Text(t) = frame {
            let v: serde_json::Value = serde_json::from_str(&t).expect("json");
            let kind = match v["type"].as_str() {
                Some("error") => format!("error:{}", v["error"].as_str().unwrap_or_default()),
                other => other.unwrap_or_default().to_owned(),
            };
            kinds.push(kind);
        }
    }
    assert_eq!(kinds[0], "welcome");
    assert_eq!(
        kinds.iter().filter(|k| *k == "pong").count(),
        5,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| *k == "error:rate_limited").count(),
        5,
        "{kinds:?}"
    );
    assert!(!session.is_finished(), "the connection stays open");
    shutdown.cancel();
    let _ = session.await;
}

/// Waits until `outbox` holds `n` frames, failing after a few seconds.
async fn outbox_holds(outbox: &Outbox, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while outbox.len() != n {
        assert!(
            Instant::now() < deadline,
            "{} frames wait, {n} expected",
            outbox.len()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A `replay` whose client does not read takes half the outbox and waits there, holding
/// no more: live updates that come meanwhile still go out beside it, and once the client
/// reads, every replayed move follows in order, none dropped or conflated.
#[tokio::test]
async fn a_replay_waits_at_half_the_outbox_and_live_updates_still_go_out() {
    let limits = Limits {
        resume_window: Duration::ZERO,
        ..Limits::default()
    };
    let half = limits.max_pending / 2;
    let Fixture { ctx, _dir } = Fixture::new(4096, limits);
    recorded(&ctx, (1..=300).map(|seq| (seq, 0)));
    let outbox = Outbox::default();
    let (latest, rx) = ctx.hub.join();
    // Nothing ends it from outside.
    let (_ends, ends) = futures::channel::oneshot::channel();
    let mut session = Session::new(&ctx, &outbox, latest, rx, ends);
    let (mut client, mut from_client) = futures::channel::mpsc::channel(1);
    let replay = format!(r#"{{"type":"replay","date":"{DAY}","speed":100}}"#);
    client
        .try_send(Ok(Message::Text(replay.into())))
        .expect("room for one message");
    let mut serve = Box::pin(session.serve(&mut from_client));
    let nobody_reads = async {
        outbox_holds(&outbox, half).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(outbox.len(), half, "the replay waits at half the outbox");
        // Moves recorded after the replay was asked for are not part of it.
        go_live(&ctx, 301..=310);
        outbox_holds(&outbox, half + 10).await;
    };
    tokio::select! {
        end = &mut serve => panic!("the session ended: {end:?}"),
        () = nobody_reads => {}
    }
    let (sink, mut read) = futures::channel::mpsc::unbounded::<Message>();
    let writer = outbox::write(sink, &outbox, Duration::from_secs(10));
    let mut frames = Vec::new();
    let reads = async {
        while let Some(frame) = read.next().await {
            let end = matches!(&frame, Message::Text(t) if t.contains("replay_end"));
            frames.push(frame);
            if end {
                return;
            }
        }
    };
    tokio::select! {
        end = &mut serve => panic!("the session ended: {end:?}"),
        () = writer => panic!("the writer stopped"),
        read = tokio::time::timeout(Duration::from_secs(10), reads) => {
            assert!(read.is_ok(), "the replay ends in time");
        }
    }
    let replayed: Vec<Message> = frames
        .iter()
        .filter(|m| matches!(m, Message::Text(t) if t.contains(r#""replay":true"#)))
        .cloned()
        .collect();
    assert_eq!(
        odds_seqs(&replayed),
        (1..=300).collect::<Vec<u64>>(),
        "every recorded move once, in order"
    );
    let live: Vec<Message> = frames
        .iter()
        .filter(|m| matches!(m, Message::Text(t) if !t.contains(r#""replay""#)))
        .cloned()
        .collect();
    assert_eq!(odds_seqs(&live), (301..=310).collect::<Vec<u64>>());
    let Some(Message::Text(end)) = frames.last() else {
        panic!("no replay_end");
    };
    assert_eq!(
        end.as_str(),
        format!(
            r#"{{"type":"replay_end","date":"{DAY}","race_number":null,"moves":300,"stopped":false}}"#
        )
    );
}

/// A paced replay whose client stops reading for a while goes on at its pace once the
/// client reads again, rather than hurrying through the moves that fell due meanwhile.
#[tokio::test]
async fn a_replay_held_up_by_its_client_resumes_at_its_pace() {
    let limits = Limits {
        resume_window: Duration::ZERO,
        max_pending: 4,
        send_timeout: Duration::from_secs(600),
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(64, limits);
    // Ten moves recorded 200 ms apart.
    recorded(
        &ctx,
        (1..=10).map(|seq| (seq, i128::from(seq) * 200_000_000)),
    );
    let replay = format!(r#"{{"type":"replay","date":"{DAY}"}}"#);
    let frames = futures::stream::iter([Ok::<_, std::convert::Infallible>(Message::Text(
        replay.into(),
    ))])
    .chain(futures::stream::pending());
    // A socket that takes one frame and then nothing until the client reads.
    let (sink, mut read) = futures::channel::mpsc::channel::<Message>(0);
    let shutdown = CancellationToken::new();
    let session = tokio::spawn(run_session(
        sink,
        frames,
        ctx.clone(),
        key(shutdown.clone(), std::future::pending()),
    ));
    // Long enough for every move to fall due.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut arrived = Vec::new();
    while let Ok(Some(frame)) = tokio::time::timeout(Duration::from_secs(5), read.next()).await {
        let Message::Text(t) = frame else { continue };
        if t.contains("replay_end") {
            break;
        }
        if t.contains(r#""replay":true"#) {
            arrived.push(Instant::now());
        }
    }
    assert_eq!(arrived.len(), 10, "every move");
    // The socket and the outbox held the first few; the last four went out at pace.
    for pair in arrived[6..].windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(100),
            "moves recorded 200 ms apart went out {gap:?} apart after the client read again"
        );
    }
    drop(read);
    shutdown.cancel();
    let _ = session.await;
}

/// A client that subscribes and unsubscribes date after date, a race and a meeting each
/// time, for odds and for the race day: once each target is gone, the session holds
/// nothing for it (no floor, no target, no race-day position), however many went before.
#[tokio::test]
async fn a_session_holds_only_what_it_follows_now() {
    use super::topics::Topics;
    const PAIRS: u32 = 2_000;
    let Fixture { ctx, _dir } = Fixture::new(64, Limits::default());
    recorded(&ctx, (1..=3).map(|seq| (seq, 0)));
    let outbox = Outbox::default();
    let (latest, rx) = ctx.hub.join();
    let (_ends, ends) = futures::channel::oneshot::channel();
    let mut session = Session::new(&ctx, &outbox, latest, rx, ends);
    let every = Topics::parse(Some(&["odds".to_owned(), "status".to_owned()])).expect("topics");
    // One target is followed throughout: what is pruned is only what went.
    let kept = (DAY.to_owned(), Some(1));
    session
        .subscribe(kept.clone(), (every, 0), None)
        .await
        .expect("subscribed");
    for i in 0..PAIRS {
        let date = jiff::civil::date(2000, 1, 1)
            .checked_add(jiff::Span::new().days(i64::from(i / 2)))
            .expect("a date")
            .to_string();
        let t = (date, (i % 2 == 0).then_some(3));
        session
            .subscribe(t.clone(), (every, 0), None)
            .await
            .expect("subscribed");
        session.unsubscribe(t, None).expect("unsubscribed");
        // The client reads what it is sent.
        while outbox.len() > 0 {
            let _ = outbox.try_frame();
        }
    }
    let targets = session.targets.as_ref().map_or(0, |t| t.len());
    assert_eq!(
        (targets, session.floors.len(), session.handed.len()),
        (1, 2, 1),
        "after {PAIRS} subscribe/unsubscribe pairs: targets, floors (a date and a race) and race-day dates held"
    );
}

/// A key revoked while its connection replays a busy past day to a client that reads
/// slowly: the connection is closed with the revocation's code within a few frames, not
/// once the replay is over.
#[tokio::test]
async fn a_revocation_reaches_a_connection_inside_a_slow_replay() {
    const MOVES: u64 = 5_000;
    let limits = Limits {
        resume_window: Duration::ZERO,
        max_pending: 8,
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(64, limits);
    recorded(&ctx, (1..=MOVES).map(|seq| (seq, 0)));
    let subscribe = format!(r#"{{"type":"subscribe","date":"{DAY}","race_number":1,"since":0}}"#);
    let frames = futures::stream::iter([Ok::<_, std::convert::Infallible>(Message::Text(
        subscribe.into(),
    ))])
    .chain(futures::stream::pending());
    // A socket whose client takes one frame at a time.
    let (sink, mut read) = futures::channel::mpsc::channel::<Message>(0);
    let (revoke, revoked) = tokio::sync::oneshot::channel::<()>();
    let ended = async move {
        let _ = revoked.await;
        (CLOSE_POLICY, "API key revoked")
    };
    let shutdown = CancellationToken::new();
    let session = tokio::spawn(run_session(sink, frames, ctx, key(shutdown.clone(), ended)));
    let mut odds = 0;
    while odds < 20 {
        let frame = tokio::time::timeout(Duration::from_secs(5), read.next())
            .await
            .expect("a frame in time")
            .expect("open");
        if matches!(&frame, Message::Text(t) if t.starts_with(r#"{"type":"odds""#)) {
            odds += 1;
        }
    }
    revoke.send(()).expect("the session waits");
    // The client goes on reading slowly: a frame every 10 ms.
    let mut after = 0;
    let close = loop {
        let frame = tokio::time::timeout(Duration::from_secs(5), read.next())
            .await
            .expect("a frame in time")
            .expect("open until closed");
        if let Message::Close(close) = frame {
            break close;
        }
        after += 1;
        assert!(
            after < 100,
            "{after} frames of the replay went out after the key was revoked"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(close.map(|c| c.code), Some(CLOSE_POLICY));
    shutdown.cancel();
    let _ = session.await;
}

/// A `since` replay is charged to the key's plan a request per 1,000 odds moves it sends,
/// counted before it starts, with the `subscribe` that asked for it: all of its pages,
/// however many, and never refused itself (the key owes what it has not left), so that a
/// large replay costs in proportion to a small one.
#[tokio::test]
async fn a_replay_is_owed_by_its_pages_however_many() {
    use std::sync::Mutex;
    let limits = Limits {
        max_pending: 10_000,
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(4096, limits);
    recorded(&ctx, (1..=2_500).map(|seq| (seq, 0)));
    let outbox = Outbox::default();
    let (latest, rx) = ctx.hub.join();
    let (_ends, ends) = futures::channel::oneshot::channel();
    let mut session = Session::new(&ctx, &outbox, latest, rx, ends);
    let owed = Arc::new(Mutex::new(Vec::new()));
    let seen = owed.clone();
    session.charge = super::Charge {
        // The key may have nothing left: its replay is owed all the same, never refused.
        take: Box::new(|| Some(Duration::from_secs(3))),
        owe: Box::new(move |n| seen.lock().expect("charges").push(n)),
    };
    let race = (DAY.to_owned(), Some(1));
    session
        .subscribe(race, (super::topics::Topics::ODDS, 0), Some(0))
        .await
        .expect("replayed");
    let frames: Vec<_> = std::iter::from_fn(|| outbox.try_frame()).collect();
    assert_eq!(frames.len(), 2_500, "every move");
    assert_eq!(*owed.lock().expect("charges"), [3], "2,500 moves: 3 pages");
}

/// A session reads the store on a blocking thread, never on the runtime's own: a read
/// that hangs past the read deadline closes the connection with 1013 (to resume with
/// `since`) while the runtime goes on, even a runtime of one thread.
#[tokio::test(flavor = "current_thread")]
async fn a_read_that_hangs_closes_the_connection_and_holds_up_no_worker() {
    let limits = Limits {
        read_timeout: Duration::from_millis(100),
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(64, limits);
    let outbox = Outbox::default();
    let (latest, rx) = ctx.hub.join();
    let (_ends, ends) = futures::channel::oneshot::channel();
    let mut session = Session::new(&ctx, &outbox, latest, rx, ends);
    let ticks = Arc::new(AtomicUsize::new(0));
    let ticking = ticks.clone();
    let ticker = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            ticking.fetch_add(1, Ordering::Relaxed);
        }
    });
    let started = Instant::now();
    let read = session
        .read(|store| {
            std::thread::sleep(Duration::from_secs(1));
            store.checkpoint()
        })
        .await;
    let took = started.elapsed();
    ticker.abort();
    assert!(
        matches!(read, Err(End::Close(1013, _))),
        "a read past its deadline closes with 1013: {read:?}"
    );
    assert!(took < Duration::from_millis(800), "given up after {took:?}");
    assert!(
        ticks.load(Ordering::Relaxed) >= 3,
        "the runtime went on while the read hung"
    );
}

/// An odds move of race 1 at Sha Tin pricing `prices`, as the journal writes it.
fn move_frame(seq: u64, prices: &[(&str, f64)]) -> String {
    let odds: Vec<String> = prices
        .iter()
        .map(|(h, p)| format!(r#"{{"horse_no":"{h}","win_odds":{p}}}"#))
        .collect();
    format!(
        r#"{{"type":"odds","date":"{DAY}","venue":"Sha Tin","race_number":1,"seq":{seq},"published_at":"2026-11-21T05:00:00Z","occurred_at":"2026-11-21T05:00:00Z","odds":[{}],"market":{{"favourites":[]}}}}"#,
        odds.join(",")
    )
}

/// A subscriber that chose a window of 300 ms is sent at most one `odds` frame a window
/// for a race whose prices move every 10 ms, and ends at the prices of one sent every
/// move; the frames of both are the protocol's `odds` frames.
#[tokio::test]
async fn a_conflated_subscriber_gets_a_frame_a_window_and_ends_at_the_same_prices() {
    const WINDOW: Duration = Duration::from_millis(300);
    let limits = Limits {
        resume_window: Duration::ZERO,
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(4096, limits);
    let hub = ctx.hub.clone();
    let shutdown = CancellationToken::new();
    let connect = |conflate_ms: u128| {
        let subscribe = format!(
            r#"{{"type":"subscribe","date":"{DAY}","race_number":1,"conflate_ms":{conflate_ms}}}"#
        );
        let frames = futures::stream::iter([Ok::<_, std::convert::Infallible>(Message::Text(
            subscribe.into(),
        ))])
        .chain(futures::stream::pending());
        let (sink, read) = futures::channel::mpsc::unbounded::<Message>();
        tokio::spawn(run_session(
            sink,
            frames,
            ctx.clone(),
            key(shutdown.clone(), std::future::pending()),
        ));
        read
    };
    let (mut every, mut windowed) = (connect(0), connect(WINDOW.as_millis()));
    // Each has subscribed (its snapshot came) before the moves.
    for read in [&mut every, &mut windowed] {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(5), read.next())
                .await
                .expect("a frame")
                .expect("open");
            if matches!(&frame, Message::Text(t) if t.contains("\"snapshot\"")) {
                break;
            }
        }
    }
    // Each client's odds frames as they come, with when they came.
    let collect = |mut read: futures::channel::mpsc::UnboundedReceiver<Message>| {
        tokio::spawn(async move {
            let mut frames: Vec<(Instant, serde_json::Value)> = Vec::new();
            while let Some(frame) = read.next().await {
                let Message::Text(text) = frame else { continue };
                let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
                if v["type"] == "odds" {
                    serde_json::from_str::<crate::live::frames::OddsFrame>(&text)
                        .expect("an odds frame of the protocol");
                    frames.push((Instant::now(), v));
                }
            }
            frames
        })
    };
    let (every, windowed) = (collect(every), collect(windowed));
    let runners = ["A1", "B2", "C3"];
    let started = Instant::now();
    let mut seq = 0;
    while started.elapsed() < Duration::from_millis(1_500) {
        seq += 1;
        let horse = runners[seq as usize % 3];
        let price = 2.0 + (seq % 17) as f64 / 10.0;
        let frame = move_frame(seq, &[(horse, price)]);
        hub.publish_with(DAY, 1, seq, || OddsDelta {
            date: DAY.into(),
            race_number: 1,
            seq,
            frame: frame.into(),
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let last = seq;
    // Once the last move's window is over, both clients are closed.
    tokio::time::sleep(WINDOW * 2).await;
    shutdown.cancel();
    let prices = |frames: &[(Instant, serde_json::Value)]| {
        let mut prices = std::collections::BTreeMap::new();
        for (_, v) in frames {
            for runner in v["odds"].as_array().expect("odds") {
                prices.insert(
                    runner["horse_no"].as_str().expect("a horse").to_owned(),
                    runner["win_odds"].as_f64().expect("a price"),
                );
            }
        }
        prices
    };
    let each = every.await.expect("collected");
    let windows = windowed.await.expect("collected");
    assert_eq!(each.len() as u64, last, "every move to the subscriber of 0");
    assert_eq!(
        windows.last().map(|(_, v)| v["seq"].clone()),
        Some(last.into())
    );
    assert_eq!(
        prices(&windows),
        prices(&each),
        "the same prices in the end"
    );
    let gaps: Vec<Duration> = windows
        .windows(2)
        .map(|w| w[1].0.duration_since(w[0].0))
        .collect();
    // A window apart, less a scheduler's hiccup.
    assert!(
        gaps.iter()
            .all(|g| *g >= WINDOW - Duration::from_millis(50)),
        "{gaps:?}"
    );
    assert!(
        windows.len() <= 1_500 / 300 + 2,
        "{} frames for {last} moves",
        windows.len()
    );
    let seqs: Vec<u64> = windows
        .iter()
        .filter_map(|(_, v)| v["seq"].as_u64())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "in seq order: {seqs:?}"
    );
}

/// A `since` replay of odds and race-day events reads two journals a chunk at a time
/// while the projector commits: a batch committed in the middle of it (a status, then
/// moves) is in both journals before the hub relays it. The replay stops at the
/// checkpoint it began at, and the batch comes live after it, so the client still gets
/// every frame once and in stream order: never the batch's moves from the journal ahead
/// of its status from the ring.
#[tokio::test]
async fn a_replay_of_two_journals_keeps_stream_order_across_a_commit_in_its_middle() {
    use racing_events::samples::status;
    use racing_events::RaceStatus;
    let limits = Limits {
        max_pending: 8,
        ..Limits::default()
    };
    let Fixture { ctx, _dir } = Fixture::new(4096, limits);
    let commit_status = |seq: u64| {
        let store = ctx.read_models.load();
        let mut batch = store.batch().expect("batch");
        let event = racing_events::Envelope::new(
            status(DAY, None, 1, RaceStatus::Open, None),
            "2026-11-21T05:00:00Z",
        );
        batch.apply(seq, 0, &event).expect("apply");
        batch.commit().expect("commit");
    };
    commit_status(1);
    commit_moves(&ctx, 2..=200);
    let outbox = Outbox::default();
    let (latest, rx) = ctx.hub.join();
    let (_ends, ends) = futures::channel::oneshot::channel();
    let mut session = Session::new(&ctx, &outbox, latest, rx, ends);
    let topics = ["odds".to_owned(), "status".to_owned()];
    let topics = super::topics::Topics::parse(Some(&topics)).expect("topics");
    let mut replay = Box::pin(session.subscribe((DAY.to_owned(), None), (topics, 0), Some(0)));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), replay.as_mut())
            .await
            .is_err(),
        "with nobody reading, the replay waits"
    );
    // A batch is committed while the replay waits; the hub has not relayed it yet.
    commit_status(201);
    commit_moves(&ctx, 202..=210);
    let (sink, read) = futures::channel::mpsc::unbounded::<Message>();
    let mut writer = Box::pin(outbox::write(sink, &outbox, Duration::from_secs(10)));
    tokio::select! {
        ended = replay => assert!(ended.is_ok(), "the replay ends well"),
        () = &mut writer => panic!("the writer stopped"),
    }
    // The projector relays the batch, and the session serves what the ring holds.
    let day = ctx
        .read_models
        .load()
        .race_day(DAY, 200, 1)
        .expect("the journal");
    let day = day.into_iter().next().expect("the status at 201");
    ctx.hub.publish_day(201, || {
        Some(crate::live::hub::DayDelta {
            date: DAY.into(),
            race_number: 1,
            seq: 201,
            kind: day.kind,
            frame: day.frame.into(),
        })
    });
    relay_moves(&ctx, 202..=210);
    let frames = served_to_the_end(session, &outbox, writer, read).await;
    let seqs: Vec<u64> = frames
        .iter()
        .filter_map(|m| match m {
            Message::Text(t) => {
                let v: serde_json::Value = serde_json::from_str(t).expect("json");
                matches!(v["type"].as_str(), Some("odds" | "status"))
                    .then(|| v["seq"].as_u64())
                    .flatten()
            }
            _ => None,
        })
        .collect();
    let expected: Vec<u64> = (1..=210).collect();
    let first_wrong = seqs.iter().zip(&expected).position(|(a, b)| a != b);
    assert!(
        seqs == expected,
        "{} frames where every event once in stream order makes 210; first out of place at {first_wrong:?}: {:?}",
        seqs.len(),
        first_wrong.map(|i| &seqs[i.saturating_sub(2)..(i + 8).min(seqs.len())])
    );
}
