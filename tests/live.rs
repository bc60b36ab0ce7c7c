//! The live odds WebSocket end to end, with a real WebSocket client against a service
//! projecting a real JetStream stream.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use racing_events::samples::{envelope, odds};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::support::{without_market, App, Nats, KEY};

pub(crate) const DAY: &str = "2026-11-21";

/// How long a test waits for a frame before it fails.
const WAIT: Duration = Duration::from_secs(10);
/// The longest a whole run of updates may take to reach a client that keeps up.
const WAIT_ALL: Duration = Duration::from_secs(60);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A live odds client.
pub(crate) struct Client {
    socket: Socket,
}

impl Client {
    pub(crate) async fn connect(app: &App) -> Client {
        Client::try_connect(&app.base, KEY).await.expect("upgrade")
    }

    /// Connects to the service at `base` with `key` and reads the welcome; the status
    /// of the refusal if it does not upgrade.
    pub(crate) async fn try_connect(base: &str, key: &str) -> Result<Client, u16> {
        let url = format!("{}/ws/live/odds?api_key={key}", base.replace("http", "ws"));
        let socket = match tokio_tungstenite::connect_async(url).await {
            Ok((socket, _)) => socket,
            Err(tokio_tungstenite::tungstenite::Error::Http(r)) => return Err(r.status().as_u16()),
            Err(e) => panic!("websocket: {e}"),
        };
        let mut client = Client { socket };
        assert_eq!(client.next().await["type"], "welcome");
        Ok(client)
    }

    /// The next text frame as JSON.
    async fn next(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(WAIT, self.socket.next())
                .await
                .expect("a frame in time")
                .expect("connection open")
                .expect("frame");
            match frame {
                Message::Text(t) => return crate::support::frame(&t),
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    /// The next frame that is not a heartbeat.
    pub(crate) async fn next_message(&mut self) -> Value {
        loop {
            let v = self.next().await;
            if v["type"] != "heartbeat" {
                return v;
            }
        }
    }

    pub(crate) async fn send(&mut self, v: Value) {
        self.socket
            .send(Message::Text(v.to_string().into()))
            .await
            .expect("send");
    }

    /// Reads until the server's close frame, skipping what comes before it.
    pub(crate) async fn close_frame(&mut self) -> Option<CloseFrame> {
        // One deadline for the whole wait: heartbeats and odds frames arrive more often
        // than WAIT, so a wait restarted per frame would never end.
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .expect("a close frame in time")
            {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(Message::Text(t))) => {
                    crate::support::frame(&t);
                }
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    }

    /// Round-trips a ping: everything the server queued before the pong has arrived.
    pub(crate) async fn barrier(&mut self) -> Vec<Value> {
        self.send(json!({"type": "ping"})).await;
        let mut before = Vec::new();
        loop {
            let v = self.next_message().await;
            if v["type"] == "pong" {
                return before;
            }
            before.push(v);
        }
    }
}

/// A book as the service rounds it: 2 decimal places.
fn round(pct: f64) -> f64 {
    (pct * 100.0).round() / 100.0
}

fn odds_seqs(frames: &[Value]) -> Vec<u64> {
    frames
        .iter()
        .filter(|f| f["type"] == "odds")
        .map(|f| f["seq"].as_u64().unwrap_or_default())
        .collect()
}

pub(crate) async fn service(adjust: impl FnOnce(&mut racing::Config)) -> (Nats, App, TempDir) {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), adjust).await;
    app.projected(0).await;
    (nats, app, dir)
}

pub(crate) async fn publish_odds(
    nats: &Nats,
    app: &mut App,
    race: i64,
    prices: &[(&str, f64)],
) -> u64 {
    publish_odds_event(nats, app, &envelope(odds(DAY, race, prices))).await
}

async fn publish_odds_event(nats: &Nats, app: &mut App, event: &racing_events::Envelope) -> u64 {
    let seq = nats.publish(std::slice::from_ref(event)).await;
    app.projected(seq).await;
    seq
}

#[tokio::test]
async fn live_odds_refuse_a_missing_or_wrong_key_without_upgrading() {
    let (_nats, app, _dir) = service(|_| {}).await;
    let ws = app.base.replace("http", "ws");
    for url in [
        format!("{ws}/ws/live/odds"),
        format!("{ws}/ws/live/odds?api_key=wrong"),
        format!("{ws}/ws/live/odds?api_key="),
    ] {
        match tokio_tungstenite::connect_async(&url).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(
                    response.status(),
                    StatusCode::UNAUTHORIZED.as_u16(),
                    "{url}"
                );
                let body = response.body().clone().unwrap_or_default();
                assert_eq!(
                    String::from_utf8_lossy(&body),
                    r#"{"error":"unauthorized","message":"Invalid or missing API key"}"#
                );
            }
            other => panic!("{url}: expected a 401, got {other:?}"),
        }
    }
    // The header works as well as the query parameter.
    let mut request = format!("{ws}/ws/live/odds")
        .into_client_request()
        .expect("request");
    request
        .headers_mut()
        .insert("X-API-Key", KEY.parse().expect("header"));
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("upgrade");
    let welcome = socket.next().await.expect("frame").expect("frame");
    let welcome = crate::support::frame(welcome.to_text().expect("text"));
    assert_eq!(welcome["type"], "welcome");
    assert!(welcome["heartbeat_ms"].as_u64().is_some());
}

#[tokio::test]
async fn a_subscriber_gets_a_snapshot_then_deltas_in_order() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let first = publish_odds(&nats, &mut app, 1, &[("A1", 3.5), ("B2", 8.0)]).await;

    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1}))
        .await;
    let snapshot = client.next_message().await;
    assert_eq!(snapshot["market"]["favourites"], json!(["A1"]));
    assert_eq!(
        without_market(snapshot),
        json!({"type": "snapshot", "date": DAY, "venue": null, "race_number": 1, "seq": first,
               "odds": [{"horse_no": "A1", "win_odds": 3.5}, {"horse_no": "B2", "win_odds": 8.0}]})
    );
    let second = publish_odds(&nats, &mut app, 1, &[("A1", 3.2)]).await;
    let delta = client.next_message().await;
    assert_eq!(delta["type"], "odds");
    assert_eq!(delta["seq"], second);
    assert_eq!(delta["odds"], json!([{"horse_no": "A1", "win_odds": 3.2}]));
    assert_eq!(
        delta["market"],
        json!({"win_book_pct": round(100.0 / 3.2 + 100.0 / 8.0), "favourites": ["A1"]})
    );
    assert!(delta["published_at"]
        .as_str()
        .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok()));

    // The same current odds over HTTP, for clients that poll.
    let (status, body) = app.get(&format!("/api/v1/odds/{DAY}/1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        without_market(body),
        json!({"date": DAY, "venue": null, "race_number": 1, "seq": second,
               "odds": [{"horse_no": "A1", "win_odds": 3.2}, {"horse_no": "B2", "win_odds": 8.0}]})
    );
    assert_eq!(
        app.get(&format!("/api/v1/odds/{DAY}/2")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get(&format!("/api/v1/odds/{DAY}/0")).await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn subscriptions_filter_what_a_connection_receives() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let mut everything = Client::connect(&app).await;
    let mut one_race = Client::connect(&app).await;
    one_race
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1}))
        .await;
    let empty = one_race.next_message().await;
    assert_eq!(
        (empty["type"].as_str(), empty["seq"].as_u64()),
        (Some("snapshot"), Some(0))
    );
    one_race
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 3}))
        .await;
    assert_eq!(one_race.next_message().await["type"], "snapshot");

    let r2 = publish_odds(&nats, &mut app, 2, &[("B1", 5.0)]).await;
    let r1 = publish_odds(&nats, &mut app, 1, &[("A1", 4.0)]).await;
    assert_eq!(everything.next_message().await["seq"], r2);
    assert_eq!(everything.next_message().await["seq"], r1);
    let got = one_race.next_message().await;
    assert_eq!(
        (got["seq"].as_u64(), got["race_number"].as_u64()),
        (Some(r1), Some(1))
    );

    // After unsubscribing race 1, a race-1 update is skipped and the race-3 one after it
    // is the next frame.
    one_race
        .send(json!({"type": "unsubscribe", "date": DAY, "race_number": 1}))
        .await;
    assert!(one_race.barrier().await.is_empty());
    publish_odds(&nats, &mut app, 1, &[("A1", 4.4)]).await;
    let r3 = publish_odds(&nats, &mut app, 3, &[("C1", 9.0)]).await;
    let got = one_race.next_message().await;
    assert_eq!(
        (got["seq"].as_u64(), got["race_number"].as_u64()),
        (Some(r3), Some(3))
    );

    // A meeting subscription follows every race of the day.
    let mut meeting = Client::connect(&app).await;
    meeting
        .send(json!({"type": "subscribe", "date": DAY}))
        .await;
    let snapshots: Vec<Value> = vec![
        meeting.next_message().await,
        meeting.next_message().await,
        meeting.next_message().await,
    ];
    let races: Vec<&Value> = snapshots.iter().map(|s| &s["race_number"]).collect();
    assert_eq!(races, [&json!(1), &json!(2), &json!(3)]);
    let r2b = publish_odds(&nats, &mut app, 2, &[("B1", 4.8)]).await;
    assert_eq!(meeting.next_message().await["seq"], r2b);
}

#[tokio::test]
async fn a_resumed_connection_replays_what_it_missed_with_no_gap_or_duplicate() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    publish_odds(&nats, &mut app, 1, &[("A1", 3.0)]).await;
    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1}))
        .await;
    assert_eq!(client.next_message().await["type"], "snapshot");
    let d1 = publish_odds(&nats, &mut app, 1, &[("A1", 3.1)]).await;
    assert_eq!(client.next_message().await["seq"], d1);
    drop(client);

    // Missed while away: two for race 1, one for race 2.
    let d2 = publish_odds(&nats, &mut app, 1, &[("A1", 3.2)]).await;
    publish_odds(&nats, &mut app, 2, &[("B1", 7.0)]).await;
    let d3 = publish_odds(&nats, &mut app, 1, &[("A1", 3.3)]).await;

    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1, "since": d1}))
        .await;
    // Published while the replay may be under way: it must come once, after the replay.
    let d4 = nats
        .publish(&[envelope(odds(DAY, 1, &[("A1", 3.4)]))])
        .await;
    let mut seqs = Vec::new();
    while seqs.last() != Some(&d4) {
        let frame = client.next_message().await;
        assert_eq!(frame["type"], "odds", "{frame}");
        seqs.push(frame["seq"].as_u64().unwrap_or_default());
    }
    assert_eq!(seqs, [d2, d3, d4]);
    let d5 = publish_odds(&nats, &mut app, 1, &[("A1", 3.5)]).await;
    assert_eq!(odds_seqs(&[client.next_message().await]), [d5]);
}

/// A replay sends what went live and nothing else: not an update the projector ignored as
/// a duplicate (same `event_id`, published again under another `Nats-Msg-Id`), and not an
/// update at or below the `seq` of a snapshot the connection already had. A `since` past
/// the latest update (a stream started afresh) is answered with a snapshot, not silence.
#[tokio::test]
async fn a_replay_sends_only_what_went_live_and_what_no_snapshot_covered() {
    let (nats, mut app, _dir) = service(|_| {}).await;
    let first = envelope(odds(DAY, 1, &[("A1", 3.0)]));
    let a = publish_odds_event(&nats, &mut app, &first).await;
    let b = publish_odds(&nats, &mut app, 1, &[("A1", 4.0)]).await;
    let again = nats
        .publish_raw(
            &first.subject(),
            first.to_json().as_bytes(),
            Some("another-msg-id"),
        )
        .await;
    app.projected(again).await;
    publish_odds(&nats, &mut app, 2, &[("B1", 7.0)]).await;
    let r2 = publish_odds(&nats, &mut app, 2, &[("B1", 6.5)]).await;

    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 2}))
        .await;
    let snapshot = client.next_message().await;
    assert_eq!(
        (&snapshot["type"], &snapshot["seq"]),
        (&json!("snapshot"), &json!(r2))
    );
    client
        .send(json!({"type": "subscribe", "date": DAY, "since": a - 1}))
        .await;
    let frames = client.barrier().await;
    assert_eq!(odds_seqs(&frames), [a, b], "{frames:?}");
    assert_eq!(frames.len(), 2, "{frames:?}");

    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1, "since": r2 + 100}))
        .await;
    let snapshot = client.next_message().await;
    assert_eq!(snapshot["type"], "snapshot", "{snapshot}");
    assert_eq!(
        snapshot["seq"], b,
        "the duplicate changed nothing: {snapshot}"
    );
    assert_eq!(
        without_market(snapshot)["odds"],
        json!([{"horse_no": "A1", "win_odds": 4.0}])
    );
}

/// A frame over the protocol layer's 64 KiB is not read: the connection is closed with
/// 1009 and a reason, not dropped.
#[tokio::test]
async fn a_frame_over_64_kib_is_closed_with_1009() {
    let (_nats, app, _dir) = service(|_| {}).await;
    let mut client = Client::connect(&app).await;
    let huge = format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(70_000));
    client
        .socket
        .send(Message::Text(huge.into()))
        .await
        .expect("send");
    let close = client.close_frame().await;
    let close = close.expect("a close code");
    assert_eq!(close.code, CloseCode::Size);
    assert!(close.reason.contains("64 KiB"), "{}", close.reason);
}

#[tokio::test]
async fn bad_frames_get_an_error_and_the_connection_stays_open() {
    let (_nats, app, _dir) = service(|c| c.ws_limits.max_subscriptions = 2).await;
    let mut client = Client::connect(&app).await;
    let cases = [
        (Message::Text("not json".into()), "bad_request"),
        (Message::Text(r#"{"type":"dance"}"#.into()), "bad_request"),
        (
            Message::Text(r#"{"type":"subscribe","date":"2026-02-30"}"#.into()),
            "bad_request",
        ),
        (
            Message::Text(r#"{"type":"subscribe","date":"2026-11-21","race_number":0}"#.into()),
            "bad_request",
        ),
        (
            Message::Text(r#"{"type":"subscribe","date":"2026-11-21","race_number":"1"}"#.into()),
            "bad_request",
        ),
        (
            Message::Text(r#"{"type":"unsubscribe","date":"2026-11-21"}"#.into()),
            "not_subscribed",
        ),
        (Message::Binary(vec![1, 2, 3].into()), "bad_request"),
        (
            Message::Text(format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(5000)).into()),
            "frame_too_large",
        ),
    ];
    for (frame, code) in cases {
        client.socket.send(frame.clone()).await.expect("send");
        let reply = client.next_message().await;
        assert_eq!(reply["type"], "error", "{frame:?}");
        assert_eq!(reply["error"], code, "{frame:?}: {reply}");
        assert!(reply["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    for race in [1, 2] {
        client
            .send(json!({"type": "subscribe", "date": DAY, "race_number": race}))
            .await;
        assert_eq!(client.next_message().await["type"], "snapshot");
    }
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 3}))
        .await;
    assert_eq!(
        client.next_message().await["error"],
        "too_many_subscriptions"
    );
    assert!(
        client.barrier().await.is_empty(),
        "still open, nothing else sent"
    );
}

#[tokio::test]
async fn heartbeats_fill_silence_and_connections_per_key_are_capped() {
    let (_nats, app, _dir) = service(|c| {
        c.ws_limits.heartbeat = Duration::from_millis(200);
        c.ws_max_connections_per_key = 2;
    })
    .await;
    let mut first = Client::connect(&app).await;
    let heartbeat = first.next().await;
    assert_eq!(heartbeat, json!({"type": "heartbeat", "seq": 0}));
    let _second = Client::connect(&app).await;
    let url = format!(
        "{}/ws/live/odds?api_key={KEY}",
        app.base.replace("http", "ws")
    );
    match tokio_tungstenite::connect_async(&url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS.as_u16());
            assert!(response.headers().contains_key("retry-after"));
        }
        other => panic!("expected 429, got {other:?}"),
    }
    drop(first);
    // The slot frees when the connection ends.
    tokio::time::timeout(WAIT, async {
        loop {
            if tokio_tungstenite::connect_async(&url).await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a slot frees after a disconnect");
}

/// A key's sockets are paid for by its plan, together, as its HTTP requests are: two
/// connections of a key with a burst of 10 answer at most 10 messages between them
/// (their upgrades took two), not each its own quota of the connection.
#[tokio::test]
async fn a_keys_sockets_share_its_plan() {
    let (_nats, app, _dir) = service(|c| {
        c.request_limits.rate_per_sec = 1;
        c.request_limits.burst = 10;
    })
    .await;
    let mut sockets = [Client::connect(&app).await, Client::connect(&app).await];
    for socket in &mut sockets {
        for _ in 0..10 {
            socket.send(json!({"type": "ping"})).await;
        }
    }
    let (mut pongs, mut refused) = (0, 0);
    for socket in &mut sockets {
        for _ in 0..10 {
            let answer = socket.next_message().await;
            match (answer["type"].as_str(), answer["error"].as_str()) {
                (Some("pong"), _) => pongs += 1,
                (Some("error"), Some("rate_limited")) => refused += 1,
                other => panic!("unexpected answer {other:?}: {answer}"),
            }
        }
    }
    // A token comes back each second the test runs.
    assert!(
        (8..=11).contains(&pongs) && pongs + refused == 20,
        "{pongs} pings answered and {refused} refused on two sockets of a key with a burst of 10"
    );
}

/// A `since` replay costs its key a request per 1,000 moves it sends, however many that is:
/// one past the burst of the key's plan goes ahead with the message that asked for it,
/// and what the key had not left is a debt that its next requests wait out at the plan's
/// rate, so that a large replay costs in proportion to a small one.
#[tokio::test]
async fn a_replay_past_the_burst_costs_the_key_in_proportion_to_its_moves() {
    let (nats, mut app, _dir) = service(|c| {
        c.request_limits.rate_per_sec = 1;
        c.request_limits.burst = 2;
    })
    .await;
    // 4,000 moves: 4 pages, twice the whole burst.
    let moves: Vec<_> = (0..4_000u32)
        .map(|i| envelope(odds(DAY, 1, &[("A1", 2.0 + f64::from(i % 50) / 10.0)])))
        .collect();
    let mut last = 0;
    for chunk in moves.chunks(500) {
        last = nats.publish(chunk).await;
    }
    app.projected(last).await;
    // The upgrade and the subscribe take the burst; the replay goes ahead all the same.
    let began = std::time::Instant::now();
    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1, "since": 0}))
        .await;
    let mut replayed = 0;
    while replayed < 4_000 {
        let frame = client.next_message().await;
        assert_eq!(frame["type"], "odds", "{frame}");
        replayed += 1;
    }
    // The key owes what the replay cost past its burst: its next request waits until 5 s
    // after the upgrade (6 requests taken, 1 a second, 1 more within the tolerance).
    let res = app
        .client
        .get(format!("{}/api/v1/racecards/today", app.base))
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u32 = res.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    let waited = began.elapsed().as_secs_f64();
    assert!(
        f64::from(retry) + waited >= 4.5,
        "a replay of 4 pages on a burst of 2 left a wait of {retry} s, {waited:.1} s after the upgrade"
    );
}

#[tokio::test]
async fn shutdown_closes_every_socket_with_1001() {
    let (_nats, app, _dir) = service(|_| {}).await;
    let mut client = Client::connect(&app).await;
    let stopping = tokio::spawn(app.stop());
    let close = client.close_frame().await;
    assert_eq!(close.map(|f| f.code), Some(CloseCode::Away));
    stopping.await.expect("stopped");
}

#[tokio::test]
async fn two_hundred_clients_each_receive_every_update_in_order() {
    let (nats, mut app, _dir) = service(|c| c.ws_max_connections_per_key = 250).await;
    let mut clients = Vec::new();
    for _ in 0..200 {
        clients.push(Client::connect(&app).await);
    }
    let mut published = Vec::new();
    for i in 0..50 {
        let race = i % 5 + 1;
        let price = 2.0 + f64::from(i) / 10.0;
        published.push(
            nats.publish(&[envelope(odds(DAY, race.into(), &[("A1", price)]))])
                .await,
        );
    }
    app.projected(*published.last().expect("published")).await;
    let expected = published.clone();
    let readers = clients.into_iter().map(|mut c| {
        let expected = expected.clone();
        tokio::spawn(async move {
            let mut got = Vec::new();
            while got.len() < expected.len() {
                got.extend(odds_seqs(&[c.next_message().await]));
            }
            assert_eq!(got, expected);
        })
    });
    for r in futures::future::join_all(readers).await {
        r.expect("every client got every update in order");
    }
}

/// Publishes `n` updates of a large race in small bursts (each well under the ring), so
/// that only a slow reader can fall behind; returns their sequences.
/// A live odds connection whose socket has a 4 KiB receive buffer, so that a client
/// that reads slowly or not at all holds the server back soon.
pub(crate) async fn small_buffered(app: &App) -> Socket {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let addr = app
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("addr");
    let stream = socket.connect(addr).await.expect("connect");
    let url = format!("ws://{addr}/ws/live/odds?api_key={KEY}");
    let (socket, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream))
        .await
        .expect("upgrade");
    socket
}

pub(crate) async fn publish_big_odds(
    nats: &Nats,
    app: &mut App,
    n: u32,
    runners: &[String],
) -> Vec<u64> {
    let mut published = Vec::new();
    for i in 0..n {
        let price = 5.0 + f64::from(i % 100) / 10.0;
        let prices: Vec<(&str, f64)> = runners.iter().map(|h| (h.as_str(), price)).collect();
        published.push(nats.publish(&[envelope(odds(DAY, 1, &prices))]).await);
        if i % 10 == 9 {
            app.projected(*published.last().unwrap_or(&0)).await;
        }
    }
    published
}

/// Reads odds sequences until it has `n` of them.
/// Reads `n` odds updates on another task. Fails, rather than waiting forever on
/// heartbeats, if they have not all come within [`WAIT_ALL`], saying what came instead.
fn read_concurrently(mut client: Client, n: usize) -> tokio::task::JoinHandle<(Client, Vec<u64>)> {
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + WAIT_ALL;
        let mut got = Vec::new();
        let mut others = Vec::new();
        while got.len() < n {
            let Ok(frame) = tokio::time::timeout_at(deadline, client.next_message()).await else {
                panic!(
                    "{} of {n} odds updates within {WAIT_ALL:?}; other frames: {others:?}",
                    got.len()
                );
            };
            match frame["seq"].as_u64() {
                Some(seq) if frame["type"] == "odds" => got.push(seq),
                _ => others.push(frame["type"].to_string()),
            }
        }
        (client, got)
    })
}

#[tokio::test]
async fn a_slow_client_is_conflated_then_closed_while_a_fast_one_keeps_every_update() {
    let (nats, mut app, _dir) = service(|c| {
        c.odds_buffer = 128;
        c.ws_limits.max_pending = 4;
        c.ws_limits.max_conflations = 1;
        // Only falling behind the ring may close it here, however slow the machine.
        c.ws_limits.send_timeout = Duration::from_secs(120);
    })
    .await;
    // A slow reader: a tiny receive buffer, and long pauses.
    let mut slow = small_buffered(&app).await;
    let mut frame_types = Vec::new();
    let next_slow = async |slow: &mut Socket| -> Result<String, Option<(CloseCode, String)>> {
        match tokio::time::timeout(WAIT, slow.next())
            .await
            .expect("a frame in time")
        {
            Some(Ok(Message::Text(t))) => {
                let v = crate::support::frame(&t);
                Ok(v["type"].as_str().unwrap_or_default().to_owned())
            }
            Some(Ok(Message::Close(frame))) => Err(frame.map(|f| (f.code, f.reason.to_string()))),
            other => panic!("expected frames then a close, got {other:?}"),
        }
    };
    assert_eq!(next_slow(&mut slow).await, Ok("welcome".to_owned()));

    // Large frames (about 40 KB) fill the slow client's socket buffers quickly.
    let runners: Vec<String> = (0..1000).map(|i| format!("H{i:04}")).collect();
    let mut fast_got = Vec::new();
    let mut fast = Client::connect(&app).await;
    for _phase in 0..2 {
        // The slow client reads nothing while 300 updates go out: it loses its place.
        let reader = read_concurrently(fast, 300);
        let published = publish_big_odds(&nats, &mut app, 300, &runners).await;
        let (client, got) = reader.await.expect("fast reader");
        assert_eq!(got, published, "the fast client keeps every update");
        fast = client;
        fast_got.extend(got);
        // Then it reads until its turn comes again: the first time round it is
        // conflated (a snapshot replaces what it missed), the second time closed.
        let deadline = tokio::time::Instant::now() + WAIT_ALL;
        loop {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the slow client was neither conflated nor closed within {WAIT_ALL:?}: {frame_types:?}"
            );
            match next_slow(&mut slow).await {
                Ok(kind) => {
                    let done = kind == "snapshot";
                    frame_types.push(kind);
                    if done {
                        break;
                    }
                }
                Err(code) => {
                    let (code, reason) = code.expect("a close frame");
                    assert_eq!(code, CloseCode::Policy, "closed as too slow");
                    assert!(reason.contains("fell behind"), "{reason}");
                    assert!(
                        frame_types.iter().any(|k| k == "snapshot"),
                        "conflated first"
                    );
                    assert!(frame_types.iter().filter(|k| *k == "odds").count() < fast_got.len());
                    return;
                }
            }
        }
    }
    panic!(
        "the slow client was never closed: {} frames",
        frame_types.len()
    );
}

/// A client whose socket takes nothing for the send timeout is let go: the server ends
/// the connection (its close frame cannot reach a client that reads nothing), which frees
/// the key's one connection slot, and what the client then reads ends.
#[tokio::test]
async fn a_client_that_takes_nothing_is_let_go_after_the_send_timeout() {
    let (nats, mut app, _dir) = service(|c| {
        c.ws_limits.send_timeout = Duration::from_secs(1);
        c.ws_limits.max_pending = 4;
        c.ws_max_connections_per_key = 1;
    })
    .await;
    let mut stalled = small_buffered(&app).await;
    let url = format!(
        "{}/ws/live/odds?api_key={KEY}",
        app.base.replace("http", "ws")
    );
    // Whether the key's one slot is taken: a second connection is refused with 429.
    let taken = async || match tokio_tungstenite::connect_async(&url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
            true
        }
        Err(e) => panic!("upgrade: {e}"),
        Ok(_) => false,
    };
    assert!(taken().await);
    // About 40 KB a frame: a few fill the stalled client's buffers.
    let runners: Vec<String> = (0..1000).map(|i| format!("H{i:04}")).collect();
    publish_big_odds(&nats, &mut app, 100, &runners).await;
    let deadline = tokio::time::Instant::now() + WAIT_ALL;
    while taken().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the stalled connection is still open after {WAIT_ALL:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // What was in flight can still be read; then the connection is over.
    let ended = tokio::time::timeout(WAIT_ALL, async {
        while let Some(Ok(frame)) = stalled.next().await {
            match frame {
                Message::Close(_) => break,
                Message::Text(t) => {
                    crate::support::frame(&t);
                }
                _ => {}
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the client's connection did not end");
}

/// What one client of [`catch_ups_after_outages_close_no_client_that_keeps_reading`]
/// has seen: per race, the highest `seq` of an odds or snapshot frame, and how it ended.
#[derive(Debug, Default)]
struct Seen {
    latest: std::collections::HashMap<i64, u64>,
    snapshots: usize,
    closed: Option<String>,
}

/// Reads every frame as fast as it comes, recording what it saw in `seen`.
fn follow(
    mut client: Client,
    seen: std::sync::Arc<std::sync::Mutex<Seen>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(frame) = client.socket.next().await {
            let mut seen = seen.lock().expect("lock");
            match frame {
                Ok(Message::Text(t)) => {
                    let v = crate::support::frame(&t);
                    let (Some(race), Some(seq)) = (v["race_number"].as_i64(), v["seq"].as_u64())
                    else {
                        continue;
                    };
                    if v["type"] == "snapshot" {
                        seen.snapshots += 1;
                    }
                    let latest = seen.latest.entry(race).or_default();
                    *latest = (*latest).max(seq);
                }
                Ok(Message::Close(frame)) => {
                    seen.closed = Some(format!("{frame:?}"));
                    return;
                }
                Ok(_) => {}
                Err(e) => {
                    seen.closed = Some(e.to_string());
                    return;
                }
            }
        }
    })
}

/// After an outage the projector catches up on a backlog far larger than the ring at
/// once. That is the server's doing, not the clients': ten clients that read as fast as
/// they can go through five such catch-ups within the conflation window (three are
/// allowed to a client that falls behind by itself) and none is closed; each reaches
/// every race's latest price.
#[tokio::test]
async fn catch_ups_after_outages_close_no_client_that_keeps_reading() {
    let (nats, mut app, _dir) = service(|c| c.odds_buffer = 256).await;
    let seen: Vec<_> = (0..10)
        .map(|_| std::sync::Arc::new(std::sync::Mutex::new(Seen::default())))
        .collect();
    let mut readers = Vec::new();
    for s in &seen {
        readers.push(follow(Client::connect(&app).await, s.clone()));
    }
    let races = [1, 2, 3, 4];
    for outage in 0..5 {
        // The projector is held (as a paused or partitioned service is) while 2,000
        // updates arrive, eight times the ring.
        let held = app.read_models.lock_commits().await;
        let mut last = std::collections::HashMap::new();
        for i in 0..2000 {
            let race = races[i % races.len()];
            let price = 2.0 + f64::from(u32::try_from(i).unwrap_or(0) % 50) / 10.0;
            let seq = nats
                .publish(&[envelope(odds(DAY, race, &[("A001", price)]))])
                .await;
            last.insert(race, seq);
        }
        drop(held);
        app.projected(*last.values().max().unwrap_or(&0)).await;
        let deadline = tokio::time::Instant::now() + WAIT_ALL;
        loop {
            let behind: Vec<String> = seen
                .iter()
                .enumerate()
                .filter_map(|(n, s)| {
                    let s = s.lock().expect("lock");
                    if let Some(why) = &s.closed {
                        panic!("client {n} was closed after outage {outage}: {why}");
                    }
                    let caught_up = last
                        .iter()
                        .all(|(race, seq)| s.latest.get(race).is_some_and(|l| l >= seq));
                    (!caught_up).then(|| format!("client {n}: {:?}", s.latest))
                })
                .collect();
            if behind.is_empty() {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "after outage {outage}, not at the latest prices {last:?} within {WAIT_ALL:?}: {behind:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    for s in &seen {
        let s = s.lock().expect("lock");
        assert!(s.closed.is_none(), "{:?}", s.closed);
        assert!(s.snapshots >= 5, "a snapshot per catch-up at least: {s:?}");
    }
    for r in readers {
        r.abort();
    }
}
