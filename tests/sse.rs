//! The live stream as Server-Sent Events end to end: each frame an event with its `seq` as
//! its id, resumed by `Last-Event-ID` with no gap and no repeat (across a kill -9 of the
//! service too), heartbeats as comments, the socket's key and cap, `curl -N` as a client,
//! and the conflation a subscriber chooses.

use std::time::Duration;

use racing_events::samples::{card, envelope, odds_at, result, runner, status};
use racing_events::RaceStatus;
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats, KEY};

const DAY: &str = "2026-11-21";
const VENUE: &str = "Sha Tin";

/// How long a test waits for an event.
const WAIT: Duration = Duration::from_secs(30);

/// One event of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its `id:`, if it had one.
    pub id: Option<u64>,
    /// Its `event:`.
    pub event: String,
    /// Its `data:`, as JSON, checked against the AsyncAPI document.
    pub data: Value,
}

/// A stream being read: its events, and the comments among them.
pub struct Stream {
    response: reqwest::Response,
    buffer: String,
    /// The comments read so far.
    pub comments: Vec<String>,
}

impl Stream {
    /// Opens `/api/v1/live` with `query`, the test key in the header, and `last_id` as
    /// `Last-Event-ID` if given.
    pub async fn open(base: &str, query: &str, last_id: Option<u64>) -> Stream {
        let mut request = reqwest::Client::new()
            .get(format!("{base}/api/v1/live?{query}"))
            .header("X-API-Key", KEY);
        if let Some(id) = last_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.send().await.expect("a response");
        assert_eq!(response.status(), StatusCode::OK, "{query}");
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "{query}"
        );
        Stream {
            response,
            buffer: String::new(),
            comments: Vec::new(),
        }
    }

    /// The next event, waiting up to `within`.
    pub async fn next(&mut self, within: Duration) -> Event {
        tokio::time::timeout(within, self.read())
            .await
            .unwrap_or_else(|_| panic!("no event within {within:?}"))
    }

    async fn read(&mut self) -> Event {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::new(), Vec::new());
                for line in block.lines() {
                    if let Some(comment) = line.strip_prefix(':') {
                        self.comments.push(comment.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.parse().expect("a numeric id"));
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push(v.to_owned());
                    }
                }
                if event.is_empty() {
                    continue;
                }
                let data = data.join("\n");
                let data = if event == "close" {
                    serde_json::from_str(&data).expect("JSON")
                } else {
                    crate::support::frame(&data)
                };
                assert!(
                    event == "close" || data["type"] == event.as_str(),
                    "an event named by its frame's type"
                );
                return Event { id, event, data };
            }
            let chunk = self
                .response
                .chunk()
                .await
                .expect("the stream reads")
                .expect("the stream goes on");
            self.buffer
                .push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
        }
    }

    /// Events until one of type `event` whose `seq` is `seq`, that one included.
    pub async fn until(&mut self, event: &str, seq: u64) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let e = self.next(WAIT).await;
            let done = e.event == event && e.data["seq"] == seq;
            events.push(e);
            if done {
                return events;
            }
        }
    }
}

/// A race day of the date at Sha Tin: its card, then `moves` price moves with a status
/// change and a result among them.
fn race_day(moves: usize) -> Vec<racing_events::Envelope> {
    let mut events = vec![envelope(card(DAY, VENUE, 1, &["A1", "B2"]))];
    for i in 0..moves {
        events.push(envelope(odds_at(
            DAY,
            VENUE,
            1,
            &[("A1", 2.0 + i as f64 / 10.0)],
        )));
        if i == moves / 2 {
            events.push(envelope(status(DAY, Some(VENUE), 1, RaceStatus::Off, None)));
        }
    }
    events.push(envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")])));
    events
}

/// The ids of `events` that carry one.
fn ids(events: &[Event]) -> Vec<u64> {
    events.iter().filter_map(|e| e.id).collect()
}

#[tokio::test]
async fn each_frame_is_an_event_of_its_type_with_its_seq_as_id_and_heartbeats_are_comments() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.ws_limits.heartbeat = Duration::from_millis(200);
    })
    .await;
    let first = nats.publish(&race_day(0)[..1]).await;
    app.projected(first).await;
    let mut stream = Stream::open(
        &app.base,
        &format!("date={DAY}&race_number=1&topics=odds,status,results"),
        None,
    )
    .await;
    let welcome = stream.next(WAIT).await;
    assert_eq!((welcome.event.as_str(), welcome.id), ("welcome", None));
    let snapshot = stream.next(WAIT).await;
    assert_eq!(snapshot.event, "snapshot");
    let events = race_day(4);
    let last = nats.publish(&events[1..]).await;
    let got = stream.until("result", last).await;
    let kinds: Vec<&str> = got.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        kinds,
        ["odds", "odds", "odds", "status", "odds", "result"],
        "{got:?}"
    );
    let seqs: Vec<u64> = got.iter().filter_map(|e| e.data["seq"].as_u64()).collect();
    assert_eq!(ids(&got), seqs, "each id its frame's seq");
    assert_eq!(seqs, (first + 1..=last).collect::<Vec<_>>());
    // Quiet: heartbeats, as comments.
    tokio::time::timeout(Duration::from_secs(5), async {
        while stream.comments.is_empty() {
            let _ = tokio::time::timeout(Duration::from_millis(300), stream.read()).await;
        }
    })
    .await
    .expect("a heartbeat");
    assert_eq!(stream.comments[0], "heartbeat");
}

#[tokio::test]
async fn a_stream_without_a_date_gives_its_odds_no_id_as_it_cannot_resume() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let events = race_day(4);
    let first = nats.publish(&events[..1]).await;
    app.projected(first).await;
    let mut stream = Stream::open(&app.base, "", None).await;
    let welcome = stream.next(WAIT).await;
    assert_eq!(welcome.event, "welcome");
    nats.publish(&events[1..]).await;
    let odds = loop {
        let event = stream.next(WAIT).await;
        if event.event == "odds" {
            break event;
        }
    };
    assert!(odds.data["seq"].as_u64().is_some_and(|s| s > 0), "{odds:?}");
    assert_eq!(odds.id, None, "{odds:?}");
}

#[tokio::test]
async fn a_reconnect_with_the_last_event_id_resumes_with_no_gap_and_no_repeat() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let events = race_day(20);
    let first = nats.publish(&events[..1]).await;
    app.projected(first).await;
    let query = format!("date={DAY}&topics=odds,status,results");
    // From a known position: a stream without one starts where its session subscribes,
    // after its response's headers, and may miss what is published in between.
    let from_first = format!("{query}&since={first}");
    let mut stream = Stream::open(&app.base, &from_first, None).await;
    let mut seen: Vec<Event> = Vec::new();
    let half = nats.publish(&events[1..10]).await;
    seen.extend(stream.until("odds", half).await);
    // Gone: what is published meanwhile is missed, until a reconnect from the last id.
    drop(stream);
    let last = nats.publish(&events[10..]).await;
    app.projected(last).await;
    let last_id = ids(&seen).last().copied().expect("an id");
    // The URL's `since` is the first connection's: the id wins over it.
    let mut again = Stream::open(&app.base, &from_first, Some(last_id)).await;
    let rest = again.until("result", last).await;
    let mut all = ids(&seen);
    all.extend(
        ids(&rest)
            .into_iter()
            .filter(|s| *s > last_id)
            .collect::<Vec<_>>(),
    );
    let expected: Vec<u64> = (first + 1..=last).collect();
    assert_eq!(ids(&seen)[..], all[..ids(&seen).len()]);
    assert_eq!(all, expected, "no gap and no repeat");
    assert!(
        ids(&rest).iter().all(|s| *s > last_id),
        "nothing at or before the last id again: {rest:?}"
    );
    // `?since=` alone resumes the same way.
    let mut from = Stream::open(&app.base, &format!("{query}&since={last_id}"), None).await;
    let same = from.until("result", last).await;
    assert_eq!(ids(&same), ids(&rest));
}

#[tokio::test]
async fn the_stream_takes_the_sockets_key_and_its_cap_on_connections() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| c.ws_max_connections_per_key = 1).await;
    let first = nats.publish(&race_day(0)).await;
    app.projected(first).await;
    let client = reqwest::Client::new();
    let url = |key: &str| format!("{}/api/v1/live?date={DAY}&api_key={key}", app.base);
    let refused = client.get(url("wrong")).send().await.expect("an answer");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    // The key as a query parameter, as an EventSource sends it.
    let mut held = client.get(url(KEY)).send().await.expect("an answer");
    assert_eq!(held.status(), StatusCode::OK);
    let chunk = held.chunk().await.expect("read").expect("a chunk");
    assert!(String::from_utf8_lossy(&chunk).contains("event: welcome"));
    // One connection for the key: a second, socket or stream, is refused.
    let second = client.get(url(KEY)).send().await.expect("an answer");
    assert_eq!(second.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: Value = second.json().await.expect("JSON");
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("at most 1"));
    for bad in [
        "date=2026-02-30",
        "race_number=1",
        &format!("date={DAY}&topics=weather"),
        &format!("date={DAY}&conflate_ms=120001"),
        &format!("date={DAY}&since=x"),
        &format!("date={DAY}&page=2"),
    ] {
        let res = client
            .get(format!("{}/api/v1/live?{bad}", app.base))
            .header("X-API-Key", KEY)
            .send()
            .await
            .expect("an answer");
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
    // The client goes: its session goes with the response, and the key's connection is
    // free again.
    drop(held);
    let again = reopened(&client, &url(KEY)).await;
    assert_eq!(again.status(), StatusCode::OK);
}

/// A stream of `url` once the key's connection is free again, within `WAIT`.
async fn reopened(client: &reqwest::Client, url: &str) -> reqwest::Response {
    tokio::time::timeout(WAIT, async {
        loop {
            let res = client.get(url).send().await.expect("an answer");
            if res.status() != StatusCode::TOO_MANY_REQUESTS {
                return res;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the key's connection freed")
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_once_a_frame_waits_past_the_send_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.ws_max_connections_per_key = 1;
        c.ws_limits.send_timeout = Duration::from_secs(2);
    })
    .await;
    let first = nats.publish(&race_day(0)[..1]).await;
    app.projected(first).await;
    // A client with a small window asks for the stream, reads its first bytes, and then
    // nothing more.
    let addr: std::net::SocketAddr = app
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("an address");
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(4096).expect("a small buffer");
    let mut tcp = socket.connect(addr).await.expect("connected");
    let request = format!(
        "GET /api/v1/live?date={DAY}&topics=odds HTTP/1.1\r\nHost: {addr}\r\nX-API-Key: {KEY}\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.expect("sent");
    let mut start = vec![0; 512];
    let n = tokio::time::timeout(WAIT, tcp.read(&mut start))
        .await
        .expect("an answer")
        .expect("read");
    assert!(
        String::from_utf8_lossy(&start[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&start[..n])
    );
    let client = reqwest::Client::new();
    let url = format!("{}/api/v1/live?date={DAY}", app.base);
    let held = client
        .get(&url)
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("an answer");
    assert_eq!(
        held.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "the key's one connection"
    );
    // More than its window and the server's buffers take before the stream stops.
    let last = nats.publish(&race_day(400)[1..]).await;
    app.projected(last).await;
    let again = reopened(&client, &format!("{url}&api_key={KEY}")).await;
    assert_eq!(
        again.status(),
        StatusCode::OK,
        "the stalled client's connection freed"
    );
    // And the stalled client finds its connection ended.
    let ended = tokio::time::timeout(WAIT, async {
        let mut buf = vec![0; 64 * 1024];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the connection ended");
}

#[tokio::test]
async fn curl_follows_the_stream() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let events = race_day(2);
    let first = nats.publish(&events[..1]).await;
    app.projected(first).await;
    let mut curl = tokio::process::Command::new("curl")
        .args(["-N", "-s", "-H", &format!("X-API-Key: {KEY}")])
        .arg(format!(
            "{}/api/v1/live?date={DAY}&topics=odds,results",
            app.base
        ))
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("curl runs");
    let stdout = curl.stdout.take().expect("its output");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    // Published once curl is connected (its welcome came).
    let mut printed = Vec::new();
    let mut published = None;
    let result = tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with("data: {\"type\":\"welcome\"") && published.is_none() {
                published = Some(nats.publish(&events[1..]).await);
            }
            let done = line.starts_with("data: {\"type\":\"result\"");
            printed.push(line);
            if done {
                return;
            }
        }
    })
    .await;
    assert!(result.is_ok(), "curl printed {printed:?}");
    let last = published.expect("published");
    assert!(printed.contains(&format!("id: {last}")), "{printed:?}");
    assert!(printed.contains(&"event: result".to_owned()), "{printed:?}");
}

#[tokio::test]
async fn a_stream_resumed_across_a_kill_of_the_service_misses_and_repeats_nothing() {
    use crate::reliability::process::Service;
    let nats = Nats::start().await;
    let work = TempDir::new().expect("temp dir");
    let spawn = |n: usize| {
        Service::spawn(
            Some(&nats.broker()),
            &work.path().join("data"),
            &work.path().join(format!("racing-{n}.log")),
        )
    };
    let client = reqwest::Client::new();
    let mut service = spawn(1);
    let base = service.ready(&client, "/api/v1/meetings").await;
    let events = race_day(20);
    let first = nats.publish(&events[..1]).await;
    let query = format!("date={DAY}&topics=odds,status,results");
    let mut stream = Stream::open(&base, &query, None).await;
    assert_eq!(stream.next(WAIT).await.event, "welcome");
    let half = nats.publish(&events[1..10]).await;
    let seen = stream.until("odds", half).await;
    service.kill().await;
    // Published while the service is down: the log keeps them.
    let last = nats.publish(&events[10..]).await;
    let mut again = spawn(2);
    let base = again.ready(&client, "/api/v1/meetings").await;
    let last_id = ids(&seen).last().copied().expect("an id");
    let mut resumed = Stream::open(&base, &query, Some(last_id)).await;
    let rest = resumed.until("result", last).await;
    let mut all = ids(&seen);
    all.extend(ids(&rest));
    // From the first event after `first`, or from the race's snapshot where the session
    // took its subscription after the first moves were applied (the snapshot holds them).
    let start = match seen.iter().find(|e| e.id.is_some()) {
        Some(e) if e.event == "snapshot" => e.id.expect("an id"),
        _ => first + 1,
    };
    assert_eq!(
        all,
        (start..=last).collect::<Vec<_>>(),
        "no gap, no repeat: {:?}",
        seen.iter().map(|e| (&e.event, e.id)).collect::<Vec<_>>()
    );
    drop(service);
}

#[tokio::test]
async fn a_one_second_window_sends_at_most_an_odds_frame_a_race_a_second_and_ends_at_the_same_prices(
) {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let first = nats.publish(&race_day(0)[..1]).await;
    app.projected(first).await;
    let query =
        |ms: u64| format!("date={DAY}&race_number=1&topics=odds,status,results&conflate_ms={ms}");
    // Each stream read as it comes, each event with when it came, until the last move.
    // Which move is the last is known once its publish is acknowledged, and its event
    // may come before that: a reader looks again at what it read when it learns it.
    let (last_known, last) = tokio::sync::watch::channel(u64::MAX);
    let read = |mut stream: Stream| {
        let mut last = last.clone();
        tokio::spawn(async move {
            let mut events: Vec<(tokio::time::Instant, Event)> = Vec::new();
            loop {
                tokio::select! {
                    e = stream.next(WAIT) => events.push((tokio::time::Instant::now(), e)),
                    Ok(()) = last.changed() => {}
                }
                let want = *last.borrow();
                let reached = events
                    .iter()
                    .any(|(_, e)| e.event == "odds" && e.data["seq"].as_u64() == Some(want));
                if reached {
                    return events;
                }
            }
        })
    };
    let every = read(Stream::open(&app.base, &query(0), None).await);
    let windowed = read(Stream::open(&app.base, &query(1_000), None).await);
    // 200 moves a second for 3 s, three runners at random prices.
    let runners = ["A1", "B2", "C3"];
    let started = tokio::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    let mut seq = 0;
    for i in 0..600u32 {
        tick.tick().await;
        let horse = runners[(i % 3) as usize];
        let price = 2.0 + f64::from(rand::random::<u8>() % 50) / 10.0;
        seq = nats
            .publish(&[envelope(odds_at(DAY, VENUE, 1, &[(horse, price)]))])
            .await;
        if i == 300 {
            // A race-day frame amid the moves: never held for the window.
            nats.publish(&[envelope(status(DAY, Some(VENUE), 1, RaceStatus::Off, None))])
                .await;
        }
    }
    let took = started.elapsed();
    last_known.send_replace(seq);
    let prices = |events: &[(tokio::time::Instant, Event)]| {
        let mut prices = std::collections::BTreeMap::new();
        for (_, e) in events.iter().filter(|(_, e)| e.event == "odds") {
            for runner in e.data["odds"].as_array().expect("odds") {
                prices.insert(
                    runner["horse_no"].as_str().expect("a horse").to_owned(),
                    runner["win_odds"].as_f64().expect("a price"),
                );
            }
        }
        prices
    };
    let all = every.await.expect("read");
    let conflated = windowed.await.expect("read");
    assert_eq!(
        prices(&conflated),
        prices(&all),
        "the same prices in the end"
    );
    let odds: Vec<tokio::time::Instant> = conflated
        .iter()
        .filter(|(_, e)| e.event == "odds")
        .map(|(at, _)| *at)
        .collect();
    let seconds = took.as_secs_f64().ceil() as usize;
    let moves = all.iter().filter(|(_, e)| e.event == "odds").count();
    assert_eq!(moves, 600, "every move to the stream of 0");
    assert!(
        odds.len() <= seconds + 2,
        "{} odds frames over {took:?} for {moves} moves",
        odds.len()
    );
    let gaps: Vec<Duration> = odds.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|g| *g >= Duration::from_millis(750)),
        "at most one a second, give or take the machine: {gaps:?}"
    );
    assert!(
        conflated
            .iter()
            .filter(|(_, e)| e.event == "odds")
            .all(|(_, e)| e.id.is_none()),
        "a conflated stream's odds carry no id"
    );
    let status_of = |events: &[(tokio::time::Instant, Event)]| {
        let found: Vec<_> = events.iter().filter(|(_, e)| e.event == "status").collect();
        assert_eq!(found.len(), 1, "the status, once");
        let (at, e) = found[0];
        (*at, e.id)
    };
    let (sent_at_once, id) = status_of(&all);
    let (sent_windowed, windowed_id) = status_of(&conflated);
    assert_eq!(windowed_id, id, "the status keeps its id");
    assert!(
        sent_windowed.saturating_duration_since(sent_at_once) < Duration::from_millis(400),
        "the status waited {:?} for the window",
        sent_windowed.saturating_duration_since(sent_at_once)
    );
}
