//! `replay` on the live odds WebSocket: a past meeting's recorded odds played back on a
//! connection, at the pace their prices were given (`occurred_at`) divided by a speed,
//! beside its live updates; and `racing watch --replay`, which plays the same.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use racing_events::samples::{envelope, odds};
use racing_events::{Envelope, Event};

use crate::live::{publish_odds, service, Client, DAY};
use crate::support::{App, Nats, KEY};

/// The next frames up to and including `replay_end`.
async fn until_replay_end(client: &mut Client) -> Vec<(Instant, Value)> {
    let mut frames = Vec::new();
    loop {
        let frame = client.next_message().await;
        let end = frame["type"] == "replay_end";
        frames.push((Instant::now(), frame));
        if end {
            return frames;
        }
    }
}

fn replayed(frames: &[(Instant, Value)]) -> Vec<&Value> {
    frames
        .iter()
        .map(|(_, f)| f)
        .filter(|f| f["type"] == "odds" && f["replay"] == true)
        .collect()
}

fn seqs(frames: &[&Value]) -> Vec<u64> {
    frames
        .iter()
        .map(|f| f["seq"].as_u64().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_past_meeting_replays_in_order_with_its_original_sequences_and_times() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    // A client that follows every race sees the moves as they go live.
    let mut watcher = Client::connect(&app).await;
    let mut published = Vec::new();
    for (race, price) in [(1, 3.5), (2, 8.0), (1, 3.2), (2, 7.5)] {
        published.push(publish_odds(&nats, &mut app, race, &[("A1", price)]).await);
    }
    let mut live = Vec::new();
    while live.len() < published.len() {
        let frame = watcher.next_message().await;
        if frame["type"] == "odds" {
            live.push(frame);
        }
    }

    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "replay", "date": DAY, "speed": 100}))
        .await;
    let frames = until_replay_end(&mut client).await;
    let replay = replayed(&frames);
    assert_eq!(
        frames.len(),
        replay.len() + 1,
        "only the replay: {frames:?}"
    );
    assert_eq!(seqs(&replay), published, "each move once, in order");
    for (replayed, live) in replay.iter().zip(&live) {
        let mut unmarked = (*replayed).clone();
        let marked = unmarked.as_object_mut().and_then(|o| o.remove("replay"));
        assert_eq!(marked, Some(json!(true)));
        assert_eq!(
            &unmarked, live,
            "the move as it went live, seq and published_at too"
        );
    }
    assert_eq!(
        frames.last().map(|(_, f)| f.clone()),
        Some(
            json!({"type": "replay_end", "date": DAY, "race_number": null, "moves": 4, "stopped": false})
        )
    );

    // One race of the meeting.
    client
        .send(json!({"type": "replay", "date": DAY, "race_number": 2, "speed": 100}))
        .await;
    let frames = until_replay_end(&mut client).await;
    let replay = replayed(&frames);
    assert_eq!(seqs(&replay), [published[1], published[3]]);
    assert!(replay.iter().all(|f| f["race_number"] == 2));
    assert_eq!(
        frames.last().map(|(_, f)| f.clone()),
        Some(
            json!({"type": "replay_end", "date": DAY, "race_number": 2, "moves": 2, "stopped": false})
        )
    );

    // A date without recorded odds ends at once.
    client
        .send(json!({"type": "replay", "date": "2026-11-25"}))
        .await;
    assert_eq!(
        client.next_message().await,
        json!({"type": "replay_end", "date": "2026-11-25", "race_number": null, "moves": 0, "stopped": false})
    );
}

/// Publishes a move of A1 in race 1, its price given (`occurred_at`) as it is published;
/// its sequence once projected.
async fn publish_now(nats: &Nats, app: &mut App, price: f64) -> u64 {
    let now = jiff::Timestamp::now().to_string();
    let event = Envelope::new(envelope(odds(DAY, 1, &[("A1", price)])).event, now);
    let seq = nats.publish(&[event]).await;
    app.projected(seq).await;
    seq
}

/// Publishes three moves of race 1 about 1.5 s apart (see [`publish_now`]); their
/// sequences.
async fn three_moves_apart(nats: &Nats, app: &mut App) -> Vec<u64> {
    let mut published = Vec::new();
    for price in [3.5, 3.2, 3.0] {
        if !published.is_empty() {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
        published.push(publish_now(nats, app, price).await);
    }
    published
}

/// The first race of a demo meeting as the live demo trades it, a price move a second for
/// the demo's default 120 s, its moves dated (`occurred_at`) a second apart from 13:00
/// in Hong Kong: the moves, and the race's date.
fn a_demo_race() -> (Vec<Envelope>, String) {
    let today = jiff::civil::Date::constant(2026, 11, 21);
    let season = racing_demo::season(42, today);
    let mut simulator = racing_demo::Simulator::new(&season, 42);
    let start: jiff::Timestamp = "2026-11-21T13:00:00+08:00".parse().expect("a time");
    let moves = (0..120)
        .flat_map(|second| {
            let at = start + jiff::SignedDuration::from_secs(second);
            simulator.trade(0, second as u64, 120, &at.to_string())
        })
        .filter(|e| matches!(e.event, Event::OddsUpdated(_)))
        .collect();
    (moves, season.today)
}

/// How far apart the first and last of `moves` were given.
fn given_span(moves: &[Envelope]) -> Duration {
    let at = |e: Option<&Envelope>| {
        e.and_then(|e| e.occurred_at.parse::<jiff::Timestamp>().ok())
            .expect("a time")
    };
    let span = at(moves.last()).duration_since(at(moves.first()));
    Duration::try_from(span).expect("forwards")
}

/// A service with a demo race (see [`a_demo_race`]) published into its log at once and
/// applied: the service, how many moves the race had, its date, and how far apart its
/// first and last prices were given.
async fn a_demo_race_published() -> (Nats, App, tempfile::TempDir, usize, String, Duration) {
    let (nats, mut app, dir) = service(|_| {}).await;
    let (moves, day) = a_demo_race();
    let last = nats.publish(&moves).await;
    app.projected(last).await;
    let stored = nats.published_times("RACING", last).await;
    let stored = Duration::from_nanos((stored[stored.len() - 1] - stored[0]) as u64);
    let span = given_span(&moves);
    assert!(
        stored < span / 20,
        "the log stored the race's {span:?} in {stored:?}"
    );
    (nats, app, dir, moves.len(), day, span)
}

/// That a replay at speed 100 of prices given over `span` took about a hundredth of it:
/// not less, and not more than `slack` beyond.
fn paced(took: Duration, span: Duration, slack: Duration, what: &str) {
    let pace = span / 100;
    assert!(
        took >= pace.mul_f64(0.9) && took <= pace + slack,
        "a race given over {span:?} {what} in {took:?} at speed 100, not about {pace:?}"
    );
}

#[tokio::test]
async fn a_demo_race_published_at_once_replays_at_the_pace_its_prices_were_given() {
    let (_nats, app, _dir, moves, day, span) = a_demo_race_published().await;
    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "replay", "date": day, "race_number": 1, "speed": 100}))
        .await;
    let frames = until_replay_end(&mut client).await;
    assert_eq!(replayed(&frames).len(), moves);
    let took = frames[frames.len() - 1].0 - frames[0].0;
    paced(took, span, Duration::from_secs(1), "replayed");
}

#[tokio::test]
async fn watch_replay_plays_a_demo_race_at_the_pace_its_prices_were_given() {
    let (_nats, app, _dir, moves, day, span) = a_demo_race_published().await;
    let started = Instant::now();
    let watched = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["watch", "--url", &app.base, "--key", KEY, "--date", &day])
        .args(["--race", "1", "--replay", "100"])
        .env_remove("RACING_LOG")
        .kill_on_drop(true)
        .output();
    let watched = tokio::time::timeout(Duration::from_secs(30), watched)
        .await
        .expect("the replay ends")
        .expect("racing runs");
    let took = started.elapsed();
    let out = String::from_utf8_lossy(&watched.stdout);
    assert!(watched.status.success(), "{out}");
    assert_eq!(out.lines().count(), moves + 1, "{out}");
    paced(took, span, Duration::from_secs(5), "watched");
}

#[tokio::test]
async fn a_replay_keeps_the_recorded_pace_divided_by_its_speed_beside_live_updates() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let published = three_moves_apart(&nats, &mut app).await;

    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1}))
        .await;
    let snapshot = client.next_message().await;
    assert_eq!(snapshot["type"], "snapshot");
    client
        .send(json!({"type": "replay", "date": DAY, "race_number": 1}))
        .await;
    let first = client.next_message().await;
    let started = Instant::now();
    assert_eq!(
        (&first["seq"], &first["replay"]),
        (&json!(published[0]), &json!(true))
    );
    // A live update while the replay waits out its first gap goes out at once.
    let fresh = publish_now(&nats, &mut app, 2.8).await;
    let mut frames = until_replay_end(&mut client).await;
    frames.insert(0, (started, first));
    let live: Vec<&Value> = frames
        .iter()
        .map(|(_, f)| f)
        .filter(|f| f["type"] == "odds" && f.get("replay").is_none())
        .collect();
    assert_eq!(seqs(&live), [fresh], "the live update, during the replay");
    assert!(fresh > snapshot["seq"].as_u64().unwrap_or(u64::MAX));
    let replay: Vec<&(Instant, Value)> =
        frames.iter().filter(|(_, f)| f["replay"] == true).collect();
    assert_eq!(
        replay
            .iter()
            .map(|(_, f)| f["seq"].as_u64().unwrap_or_default())
            .collect::<Vec<_>>(),
        published,
        "what was recorded when the replay was asked for, not the live update since"
    );
    for pair in replay.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(
            gap >= Duration::from_millis(1000),
            "moves recorded 1.5 s apart replayed {gap:?} apart at speed 1"
        );
    }

    // At speed 100 the same 3 s go by in about 30 ms.
    client
        .send(json!({"type": "replay", "date": DAY, "race_number": 1, "speed": 100}))
        .await;
    let asked = Instant::now();
    let frames = until_replay_end(&mut client).await;
    assert_eq!(
        seqs(&replayed(&frames)),
        [published.as_slice(), &[fresh]].concat()
    );
    let took = frames.last().map(|(at, _)| *at - asked).unwrap_or_default();
    assert!(
        took < Duration::from_millis(1000),
        "a 3 s replay at speed 100 took {took:?}"
    );
}

#[tokio::test]
async fn bad_replay_messages_get_error_frames_and_the_connection_stays_open() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let mut client = Client::connect(&app).await;
    // Following a meeting without odds, it is sent nothing live.
    client
        .send(json!({"type": "subscribe", "date": "2026-11-25"}))
        .await;
    let cases = [
        (
            json!({"type": "replay", "date": "2026-02-30"}),
            "date must be",
        ),
        (
            json!({"type": "replay", "date": DAY, "race_number": 0}),
            "race_number must be",
        ),
        (
            json!({"type": "replay", "date": DAY, "race_number": 100}),
            "race_number must be",
        ),
        (
            json!({"type": "replay", "date": DAY, "speed": 0.5}),
            "speed must be",
        ),
        (
            json!({"type": "replay", "date": DAY, "speed": 101}),
            "speed must be",
        ),
        (
            json!({"type": "replay", "date": DAY, "speed": "fast"}),
            "invalid type",
        ),
        (
            json!({"type": "replay", "race_number": 1}),
            "missing field `date`",
        ),
        (
            json!({"type": "replay", "date": DAY, "from": 1}),
            "unknown field `from`",
        ),
    ];
    for (message, says) in cases {
        client.send(message.clone()).await;
        let reply = client.next_message().await;
        assert_eq!(reply["type"], "error", "{message}");
        assert_eq!(reply["error"], "bad_request", "{message}: {reply}");
        let text = reply["message"].as_str().unwrap_or_default();
        assert!(text.contains(says), "{message}: {text}");
    }
    client.send(json!({"type": "replay_stop"})).await;
    assert_eq!(client.next_message().await["error"], "not_replaying");

    // One replay at a time; a stopped one sends nothing more.
    let published = three_moves_apart(&nats, &mut app).await;
    client
        .send(json!({"type": "replay", "date": DAY, "speed": 1.5}))
        .await;
    let first = client.next_message().await;
    assert_eq!(first["seq"], published[0]);
    client
        .send(json!({"type": "replay", "date": DAY, "speed": 100}))
        .await;
    let refused = client.next_message().await;
    assert_eq!(refused["error"], "replay_running", "{refused}");
    client.send(json!({"type": "replay_stop"})).await;
    assert_eq!(
        client.next_message().await,
        json!({"type": "replay_end", "date": DAY, "race_number": null, "moves": 1, "stopped": true})
    );
    // Longer than the replay's next gap (1.5 s at speed 1.5).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        client.barrier().await.is_empty(),
        "still open, nothing more sent"
    );
}
