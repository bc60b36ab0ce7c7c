//! The race day on the socket end to end: `topics` beyond odds (status, scratchings,
//! results, cards), live and resumed with `since`, in stream order with the odds, and
//! never conflated away by a slow client.

use std::time::Duration;

use futures::StreamExt;
use racing_events::samples::{
    card, envelope, odds, odds_with_place, result, retraction, runner, scratch_at, status,
};
use racing_events::{Envelope, RaceStatus};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use crate::live::{publish_big_odds, service, small_buffered, Client, DAY};
use crate::support::{App, Nats};

const VENUE: &str = "Sha Tin";
const EVERY_TOPIC: [&str; 5] = ["odds", "status", "scratchings", "results", "cards"];

/// A race day in the order it happens: declared, open, priced (win and place), a late
/// scratching with the race suspended meanwhile, off, finished, the result, an amended
/// result, and a retraction of another race.
fn race_day() -> Vec<Envelope> {
    let status_of = |s, reason| envelope(status(DAY, Some(VENUE), 1, s, reason));
    let placed = |place: f64| {
        envelope(odds_with_place(
            DAY,
            Some(VENUE),
            1,
            &[("A1", Some(3.5), Some(place)), ("B2", Some(6.0), None)],
        ))
    };
    vec![
        envelope(card(DAY, VENUE, 1, &["A1", "B2", "C3"])),
        envelope(card(DAY, VENUE, 2, &["D4", "E5"])),
        status_of(RaceStatus::Open, None),
        placed(1.5),
        status_of(RaceStatus::Suspended, Some("a late scratching")),
        envelope(scratch_at(DAY, VENUE, 1, "C3")),
        status_of(RaceStatus::Open, None),
        placed(1.4),
        status_of(RaceStatus::Off, None),
        status_of(RaceStatus::Finished, None),
        envelope(result(
            DAY,
            VENUE,
            1,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        )),
        envelope(result(
            DAY,
            VENUE,
            1,
            vec![runner(Some(1), "B2"), runner(Some(2), "A1")],
        )),
        envelope(retraction(DAY, VENUE, 2, "declared in error")),
    ]
}

/// The frame type each event of [`race_day`] goes out as.
const RACE_DAY_FRAMES: [&str; 13] = [
    "card",
    "card",
    "status",
    "odds",
    "status",
    "scratching",
    "status",
    "odds",
    "status",
    "status",
    "result",
    "result",
    "retraction",
];

/// A client subscribed to every topic from `since`, its odds conflated by the second.
async fn conflated_from(app: &App, since: u64) -> Client {
    let mut client = Client::connect(app).await;
    let mut subscribe = subscribe_all(Some(since));
    subscribe["conflate_ms"] = json!(1000);
    client.send(subscribe).await;
    client
}

/// Asserts that a conflated resume of [`race_day`] from its fifth event sends the
/// race-day events it missed (`missed`: the sequences of the events after it) in order,
/// then the snapshot, and nothing twice.
async fn resumed_once(client: &mut Client, missed: &[u64]) {
    assert_eq!(resumed(client, missed).await, missed_then_snapshot(missed));
    assert!(client.barrier().await.is_empty(), "nothing twice");
}

/// The frames of a conflated resume of [`race_day`] from its fifth event, until the last
/// of `missed` (the sequences of the events after it) and a snapshot: each one's type and
/// `seq`.
async fn resumed(client: &mut Client, missed: &[u64]) -> Vec<(String, u64)> {
    let mut got: Vec<(String, u64)> = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let last = *missed.last().expect("missed");
    while !(got.iter().any(|(_, seq)| *seq == last) && got.iter().any(|(t, _)| t == "snapshot")) {
        let frame = tokio::time::timeout_at(deadline, client.next_message())
            .await
            .unwrap_or_else(|_| panic!("no snapshot and retraction in time; got {got:?}"));
        let seq = frame["seq"].as_u64().unwrap_or_else(|| panic!("{frame}"));
        got.push((frame["type"].as_str().unwrap_or_default().to_owned(), seq));
    }
    got
}

/// What that resume sends: the race-day events after `since` in order (the odds move
/// among them conflated), then race 1's snapshot as it stands, at the move's `seq`.
fn missed_then_snapshot(missed: &[u64]) -> Vec<(String, u64)> {
    let mut expected: Vec<(String, u64)> = RACE_DAY_FRAMES[5..]
        .iter()
        .zip(missed)
        .filter(|(t, _)| **t != "odds")
        .map(|(t, seq)| ((*t).to_owned(), *seq))
        .collect();
    expected.push(("snapshot".to_owned(), missed[2]));
    expected
}

/// Publishes events one at a time, waiting for each to be projected; their sequences.
async fn publish_each(nats: &Nats, app: &mut App, events: &[Envelope]) -> Vec<u64> {
    let mut seqs = Vec::with_capacity(events.len());
    for e in events {
        let seq = nats.publish(std::slice::from_ref(e)).await;
        app.projected(seq).await;
        seqs.push(seq);
    }
    seqs
}

fn subscribe_all(since: Option<u64>) -> Value {
    let mut message = json!({"type": "subscribe", "date": DAY, "topics": EVERY_TOPIC});
    if let Some(since) = since {
        message["since"] = json!(since);
    }
    message
}

/// Reads frames until one with `seq` `last`, skipping snapshots; each frame's type and
/// `seq`.
async fn until_seq(client: &mut Client, last: u64) -> Vec<(String, u64)> {
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while got.last().map(|(_, seq)| *seq) != Some(last) {
        let frame = tokio::time::timeout_at(deadline, client.next_message())
            .await
            .unwrap_or_else(|_| panic!("no frame of seq {last} in time; got {got:?}"));
        if frame["type"] == "snapshot" {
            continue;
        }
        let seq = frame["seq"].as_u64().unwrap_or_else(|| panic!("{frame}"));
        got.push((frame["type"].as_str().unwrap_or_default().to_owned(), seq));
    }
    got
}

#[tokio::test]
async fn every_topic_goes_live_once_in_stream_order_with_the_odds() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let mut client = Client::connect(&app).await;
    client.send(subscribe_all(None)).await;
    client.barrier().await;
    let events = race_day();
    let seqs = publish_each(&nats, &mut app, &events).await;
    let mut frames = Vec::new();
    while frames.len() < events.len() {
        frames.push(client.next_message().await);
    }
    let got: Vec<(&str, u64)> = frames
        .iter()
        .map(|f| {
            (
                f["type"].as_str().unwrap_or_default(),
                f["seq"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let expected: Vec<(&str, u64)> = RACE_DAY_FRAMES.into_iter().zip(seqs.clone()).collect();
    assert_eq!(got, expected);
    assert!(client.barrier().await.is_empty(), "nothing more");

    // Each frame says what happened, with where it stands in the stream.
    for f in &frames {
        assert_eq!(f["date"], DAY, "{f}");
        assert!(f["race_number"].as_u64().is_some(), "{f}");
        assert!(
            f["published_at"]
                .as_str()
                .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok()),
            "{f}"
        );
    }
    assert_eq!(frames[2]["venue"], VENUE);
    assert_eq!(frames[2]["status"], "open");
    assert!(frames[2].get("reason").is_none(), "{}", frames[2]);
    assert_eq!(frames[4]["status"], "suspended");
    assert_eq!(frames[4]["reason"], "a late scratching");
    assert_eq!(frames[5]["horse_no"], "C3");
    assert_eq!(
        frames[3]["odds"],
        json!([{"horse_no": "A1", "win_odds": 3.5, "place_odds": 1.5},
               {"horse_no": "B2", "win_odds": 6.0}])
    );
    // The card of the race as the day's card gives it (scratched runners left out then).
    let runners = |f: &Value| -> Vec<String> {
        f["card"]["runners"]
            .as_array()
            .map(|r| r.iter().map(|r| r["horse_no"].to_string()).collect())
            .unwrap_or_default()
    };
    assert_eq!(frames[0]["card"]["race_number"], 1);
    assert_eq!(runners(&frames[0]), ["\"A1\"", "\"B2\"", "\"C3\""]);
    assert_eq!(frames[1]["card"]["race_number"], 2);
    // The result as the single race's document gives it, and again when amended.
    assert_eq!(frames[10]["result"]["runners"][0]["horse_no"], "A1");
    let (code, race) = app
        .get(&format!("/api/v1/results/{DAY}/1?venue=Sha%20Tin"))
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(frames[11]["result"], race);
    assert_eq!(frames[12]["reason"], "declared in error");
    assert_eq!(frames[12]["race_number"], 2);
}

#[tokio::test]
async fn every_topic_resumes_with_since_across_a_disconnect_exactly_once() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let events = race_day();
    let mut client = Client::connect(&app).await;
    client.send(subscribe_all(None)).await;
    client.barrier().await;
    let before = publish_each(&nats, &mut app, &events[..5]).await;
    let seen = until_seq(&mut client, before[4]).await;
    assert_eq!(seen.len(), 5);
    drop(client);

    // Missed while away: the rest of the day.
    let missed = publish_each(&nats, &mut app, &events[5..]).await;
    let mut client = Client::connect(&app).await;
    client.send(subscribe_all(Some(before[4]))).await;
    // Published while the replay may be under way: it must come once, after it.
    let late = nats
        .publish(&[envelope(status(
            DAY,
            Some(VENUE),
            1,
            RaceStatus::Void,
            None,
        ))])
        .await;
    let got = until_seq(&mut client, late).await;
    let expected: Vec<(String, u64)> = RACE_DAY_FRAMES[5..]
        .iter()
        .map(|t| (*t).to_owned())
        .chain(["status".to_owned()])
        .zip(missed.into_iter().chain([late]))
        .collect();
    assert_eq!(got, expected);
    app.projected(late).await;
    assert!(client.barrier().await.is_empty(), "nothing twice");
}

/// A conflated subscription resumes its odds as snapshots, and the race-day events it
/// missed before them: a status in a snapshot is never followed by an older one, and
/// every race-day event comes at a `seq` above the last one handed, so a client that
/// keeps the last `seq` and drops again misses none of them.
#[tokio::test]
async fn a_conflated_resume_sends_the_race_day_it_missed_before_its_snapshots() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let events = race_day();
    let before = publish_each(&nats, &mut app, &events[..5]).await;
    let missed = publish_each(&nats, &mut app, &events[5..]).await;
    let mut client = conflated_from(&app, before[4]).await;
    resumed_once(&mut client, &missed).await;
}

/// The same resume where the race-day events it missed are committed while it runs: after
/// it read the journal, before it reads its snapshot. The snapshot shows them, so they
/// still go before it, each once: their live relays, waiting meanwhile, are not sent again.
#[tokio::test]
async fn a_resume_whose_snapshot_shows_events_its_journal_read_had_not_sends_them_first() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let events = race_day();
    let before = publish_each(&nats, &mut app, &events[..5]).await;
    let (reached, release) = app.faults.pause_replay_before_snapshots();
    let mut client = conflated_from(&app, before[4]).await;
    tokio::time::timeout(Duration::from_secs(30), reached)
        .await
        .expect("the replay reaches its snapshots")
        .expect("the fault's gate");
    let missed = publish_each(&nats, &mut app, &events[5..]).await;
    let _ = release.send(());
    resumed_once(&mut client, &missed).await;
}

#[tokio::test]
async fn a_resume_from_an_http_answer_position_replays_only_what_came_after_it() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let events = race_day();
    let first = publish_each(&nats, &mut app, &events[..4]).await;
    // The position an HTTP answer gives (`Racing-Seq`) is a `since` like any frame's.
    let position = app
        .client
        .get(format!("{}/api/v1/odds/{DAY}/1", app.base))
        .header("X-API-Key", crate::support::KEY)
        .send()
        .await
        .expect("GET")
        .headers()
        .get("Racing-Seq")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .expect("Racing-Seq");
    assert_eq!(position, first[3]);
    let rest = publish_each(&nats, &mut app, &events[4..]).await;
    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1,
                     "topics": ["status", "scratchings"], "since": position}))
        .await;
    let got = until_seq(&mut client, rest[5]).await;
    // Race 1's status changes and scratching only: no odds, no results, no cards.
    assert_eq!(
        got,
        [
            ("status".to_owned(), rest[0]),
            ("scratching".to_owned(), rest[1]),
            ("status".to_owned(), rest[2]),
            ("status".to_owned(), rest[4]),
            ("status".to_owned(), rest[5]),
        ]
    );
    assert!(client.barrier().await.is_empty());
}

#[tokio::test]
async fn a_v1_client_gets_odds_only_and_bad_topics_are_refused() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let mut v1 = Client::connect(&app).await;
    let mut by_meeting = Client::connect(&app).await;
    by_meeting
        .send(json!({"type": "subscribe", "date": DAY}))
        .await;
    by_meeting.barrier().await;
    let seqs = publish_each(&nats, &mut app, &race_day()).await;
    for client in [&mut v1, &mut by_meeting] {
        // Up to the last odds update: race-day frames would have come before it.
        let got = until_seq(client, seqs[7]).await;
        assert_eq!(
            got,
            [("odds".to_owned(), seqs[3]), ("odds".to_owned(), seqs[7])]
        );
        assert!(client.barrier().await.is_empty(), "nothing after");
    }
    for (topics, says) in [
        (json!(["odds", "weather"]), "`weather` is not a topic"),
        (
            json!([]),
            "at least one of odds, status, scratchings, results, cards",
        ),
        (json!("status"), "invalid type"),
    ] {
        v1.send(json!({"type": "subscribe", "date": DAY, "topics": topics}))
            .await;
        let answer = v1.next_message().await;
        assert_eq!(answer["type"], "error", "{answer}");
        assert_eq!(answer["error"], "bad_request");
        assert!(
            answer["message"].as_str().is_some_and(|m| m.contains(says)),
            "{answer}"
        );
    }
    // Unsubscribing one topic keeps the others.
    v1.send(json!({"type": "subscribe", "date": DAY, "topics": ["odds", "status"]}))
        .await;
    v1.send(json!({"type": "unsubscribe", "date": DAY, "topics": ["odds"]}))
        .await;
    let snapshots = v1.barrier().await;
    assert!(
        snapshots.iter().all(|f| f["type"] == "snapshot"),
        "{snapshots:?}"
    );
    let more = publish_each(
        &nats,
        &mut app,
        &[
            envelope(odds(DAY, 1, &[("A1", 2.0)])),
            envelope(status(
                DAY,
                None,
                1,
                RaceStatus::Abandoned,
                Some("waterlogged"),
            )),
        ],
    )
    .await;
    let status = v1.next_message().await;
    assert_eq!(status["type"], "status", "no odds before it: {status}");
    assert_eq!(status["seq"], more[1]);
    assert_eq!(status["venue"], Value::Null);
    assert!(v1.barrier().await.is_empty());
}

/// A client that reads nothing while the odds run far past the ring is conflated (its
/// odds come as snapshots), and still gets every status change and scratching, once each
/// and in stream order, read back from the store.
#[tokio::test]
async fn status_and_scratchings_are_never_conflated_away_by_a_slow_client() {
    let (nats, mut app, _dir) = service(|c| {
        c.odds_buffer = 64;
        c.ws_limits.max_pending = 4;
        c.ws_limits.max_conflations = 1000;
        c.ws_limits.send_timeout = Duration::from_secs(120);
    })
    .await;
    let mut slow = small_buffered(&app).await;
    let subscribe = subscribe_all(None).to_string();
    futures::SinkExt::send(&mut slow, Message::Text(subscribe.into()))
        .await
        .expect("subscribe");
    let runners: Vec<String> = (0..1000).map(|i| format!("H{i:04}")).collect();
    let mut day_seqs = Vec::new();
    for round in 0..4 {
        publish_big_odds(&nats, &mut app, 100, &runners).await;
        let kind = if round % 2 == 0 {
            RaceStatus::Suspended
        } else {
            RaceStatus::Open
        };
        let events = [
            envelope(status(DAY, Some(VENUE), 1, kind, None)),
            envelope(scratch_at(DAY, VENUE, 1, &runners[round])),
        ];
        day_seqs.extend(publish_each(&nats, &mut app, &events).await);
    }
    let last = publish_big_odds(&nats, &mut app, 100, &runners).await;
    let last = *last.last().expect("published");
    app.projected(last).await;

    // Now it reads: every frame until the last update is covered.
    let mut got_day = Vec::new();
    let mut snapshots = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let frame = tokio::time::timeout_at(deadline, slow.next())
            .await
            .expect("frames in time")
            .expect("open")
            .expect("frame");
        let Message::Text(text) = frame else { continue };
        let v: Value = serde_json::from_str(&text).expect("json");
        let seq = v["seq"].as_u64().unwrap_or(0);
        match v["type"].as_str() {
            Some("status" | "scratching") => got_day.push(seq),
            Some("snapshot") => snapshots += 1,
            _ => {}
        }
        if seq >= last && matches!(v["type"].as_str(), Some("odds" | "snapshot")) {
            break;
        }
    }
    assert!(snapshots > 0, "the slow client was conflated");
    assert_eq!(
        got_day, day_seqs,
        "every status and scratching, once, in order"
    );
}

/// The frame type an event goes out as on the socket.
fn frame_type(event: &racing_events::Event) -> Option<&'static str> {
    use racing_events::Event;
    Some(match event {
        Event::HorseProfileUpdated(_) => return None,
        Event::OddsUpdated(_) => "odds",
        Event::RaceStatusChanged(_) => "status",
        Event::RunnerScratched(_) => "scratching",
        Event::RaceResultPublished(_) => "result",
        Event::RaceCardDeclared(_) => "card",
        Event::RaceRetracted(_) => "retraction",
    })
}

/// The date of a race-day or odds event.
fn date_of(event: &racing_events::Event) -> Option<&str> {
    use racing_events::Event;
    Some(match event {
        Event::HorseProfileUpdated(_) => return None,
        Event::OddsUpdated(o) => &o.date,
        Event::RaceStatusChanged(s) => &s.date,
        Event::RunnerScratched(s) => &s.date,
        Event::RaceResultPublished(r) => &r.date,
        Event::RaceCardDeclared(c) => &c.date,
        Event::RaceRetracted(r) => &r.date,
    })
}

/// What the stream holds for `date` after `after` up to `upto`, as the frames a client
/// following every topic of the date must have received: type and `seq` each.
async fn stream_frames(nats: &Nats, date: &str, after: u64, upto: u64) -> Vec<(String, u64)> {
    let js = async_nats::jetstream::new(nats.connect(racing::nats::Role::Service).await);
    let mut messages = racing::nats::messages_from(&js, "RACING", after + 1)
        .await
        .expect("a consumer of the stream");
    let mut frames = Vec::new();
    let mut seq = after;
    while seq < upto {
        let m = tokio::time::timeout(Duration::from_secs(10), messages.next())
            .await
            .expect("the stream's messages in time")
            .expect("a message")
            .expect("a message");
        seq = m.info().expect("metadata").stream_sequence;
        let Ok(e) = Envelope::decode(&m.subject, &m.payload) else {
            continue;
        };
        if date_of(&e.event) == Some(date) {
            if let Some(kind) = frame_type(&e.event) {
                frames.push((kind.to_owned(), seq));
            }
        }
    }
    frames
}

/// The acceptance of the race day on the socket: a client following every topic of the
/// demo's meeting of today, through declarations, prices, statuses, scratchings and
/// results, gets each once and in stream order, and after a forced disconnect resumes
/// with `since` with nothing lost.
#[tokio::test]
async fn a_client_follows_the_demos_race_day_and_resumes_after_a_drop_with_nothing_lost() {
    let (nats, app, _dir) = service(|c| {
        c.demo = Some(42);
        c.demo_race_secs = 3;
    })
    .await;
    // Today's meeting, once the demo's season is in.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let today = loop {
        let (code, card) = app.get("/api/v1/racecards/today").await;
        if code == StatusCode::OK {
            break card["date"].as_str().expect("a date").to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "no card of today");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let follow = |since: Option<u64>| {
        let mut m = json!({"type": "subscribe", "date": today, "topics": EVERY_TOPIC});
        if let Some(since) = since {
            m["since"] = json!(since);
        }
        m
    };
    // Reads until `enough` says so of what came; every frame but snapshots and heartbeats.
    async fn until(
        client: &mut Client,
        enough: impl Fn(&[(String, u64)]) -> bool,
    ) -> Vec<(String, u64)> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        let mut got: Vec<(String, u64)> = Vec::new();
        while !enough(&got) {
            let frame = tokio::time::timeout_at(deadline, client.next_message())
                .await
                .unwrap_or_else(|_| panic!("not enough in time; got {got:?}"));
            let kind = frame["type"].as_str().unwrap_or_default().to_owned();
            if kind == "snapshot" {
                continue;
            }
            let seq = frame["seq"].as_u64().unwrap_or_else(|| panic!("{frame}"));
            got.push((kind, seq));
        }
        got
    }
    let count = |got: &[(String, u64)], kind: &str| got.iter().filter(|(t, _)| t == kind).count();
    let mut client = Client::connect(&app).await;
    // From the start of the log: the meeting runs while the service starts (on a loaded
    // machine for a while before today's card is served), and its late scratching may
    // have come by then. A replay from the start has the whole day so far.
    let start = 0;
    client.send(follow(Some(start))).await;
    let first = until(&mut client, |got| count(got, "result") == 1).await;
    drop(client);
    let dropped_at = first.last().map(|(_, seq)| *seq).expect("frames");
    // Away while the next race runs.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut client = Client::connect(&app).await;
    client.send(follow(Some(dropped_at))).await;
    // At least one more result, and on to the day's late scratching where it is later.
    let scratched = count(&first, "scratching") > 0;
    let second = until(&mut client, |got| {
        count(got, "result") >= 1 && (scratched || count(got, "scratching") > 0)
    })
    .await;
    let upto = second.last().map(|(_, seq)| *seq).expect("frames");

    let mut got = first;
    got.extend(second);
    let expected = stream_frames(&nats, &today, start, upto).await;
    for kind in ["odds", "status", "scratching", "result"] {
        assert!(
            expected.iter().any(|(t, _)| t == kind),
            "the demo's race day has {kind} frames: {expected:?}"
        );
    }
    assert_eq!(got, expected, "each once, in stream order, across the drop");
}

/// A demo race day folded event by event, the late scratchings among the price moves:
/// after each event, each of its races' odds documents marks the runners scratched so far
/// that have a price, and books, favours and names as movers only the others, its win book
/// the sum counted here over them.
#[test]
fn the_demos_race_day_books_only_the_runners_that_can_still_run() {
    use racing_events::Event;
    use racing_projections::{DocKey, Fold, MemState};
    use std::collections::{BTreeMap, BTreeSet};

    let today = jiff::civil::Date::constant(2026, 11, 21);
    let season = racing_demo::season(42, today);
    let mut simulator = racing_demo::Simulator::new(&season, 42);
    let date = simulator.date().to_owned();
    let start: jiff::Timestamp = "2026-11-21T13:00:00+08:00".parse().expect("a time");
    let mut day: Vec<Envelope> = season
        .events
        .iter()
        .filter(|e| date_of(&e.event) == Some(date.as_str()))
        .cloned()
        .collect();
    let race_secs = 120;
    for race in 0..simulator.races() {
        for second in 0..race_secs {
            let at = start + jiff::SignedDuration::from_secs((race * 600) as i64 + second as i64);
            day.extend(simulator.trade(race, second, race_secs, &at.to_string()));
        }
    }

    let mut s = MemState::default();
    let mut scratched: BTreeMap<(String, i64), BTreeSet<String>> = BTreeMap::new();
    let (mut checked, mut marked) = (0, 0);
    for (i, e) in day.iter().enumerate() {
        let mut f = Fold::default();
        f.apply(&mut s, i as u64 + 1, 0, e).expect("apply");
        f.render(&mut s).expect("render");
        let (venue, race) = match &e.event {
            Event::RunnerScratched(x) => {
                let venue = x.venue.clone().expect("the demo names the venue");
                let out = scratched.entry((venue.clone(), x.race_number)).or_default();
                out.insert(x.horse_no.clone());
                (venue, x.race_number)
            }
            Event::OddsUpdated(o) => (o.venue.clone().expect("a venue"), o.race_number),
            _ => continue,
        };
        let key = DocKey::Odds {
            date: &date,
            race_number: u8::try_from(race).expect("a race number"),
            venue: Some(&venue),
        };
        let Some(doc) = s.doc(key) else {
            continue;
        };
        let doc: Value = serde_json::from_slice(&doc).expect("json");
        let runners = doc["odds"].as_array().expect("odds");
        let out = scratched.get(&(venue, race)).cloned().unwrap_or_default();
        let priced_out: BTreeSet<String> = runners
            .iter()
            .map(|r| r["horse_no"].as_str().expect("a number").to_owned())
            .filter(|h| out.contains(h))
            .collect();
        let marks: BTreeSet<String> = runners
            .iter()
            .filter(|r| r["scratched"] == json!(true))
            .map(|r| r["horse_no"].as_str().expect("a number").to_owned())
            .collect();
        assert_eq!(marks, priced_out, "after event {}: {doc}", i + 1);
        let left = runners.iter().filter(|r| r["scratched"].is_null());
        let sum: f64 = left
            .filter_map(|r| r["win_odds"].as_f64())
            .map(|p| 1.0 / p)
            .sum();
        let market = &doc["market"];
        assert_eq!(
            market["win_book_pct"],
            json!((sum * 10_000.0).round() / 100.0),
            "after event {}: {doc}",
            i + 1
        );
        for list in ["favourites", "steamers", "drifters"] {
            for h in market[list].as_array().expect("a list") {
                let h = h.as_str().expect("a number");
                assert!(
                    !out.contains(h),
                    "{h} among the {list} after event {}",
                    i + 1
                );
            }
        }
        checked += 1;
        marked += marks.len();
    }
    assert!(checked > 1_000, "{checked} documents checked");
    assert!(marked > 0, "the day's late scratchings came after prices");
}
