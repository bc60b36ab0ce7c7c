//! Push for those who cannot hold a socket: webhooks delivered to receivers on loopback
//! (one endpoint; then 1,000; then a receiver that fails for ten minutes of the retry
//! schedule, compressed), each delivery timed from its result's publish to its receipt;
//! and the live stream as Server-Sent Events against the socket, on the same service and
//! the same updates, in rounds of both.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::post;
use serde::Serialize;
use tokio::sync::watch;

use crate::clients::{seq_of, socket_url, Clients, Seen, Shared};
use crate::feed::LogInfo;
use crate::figures::{median, percentile_ms, thousands, verdict};
use crate::live::{publish_paced, service_client, LiveResult, Round};
use crate::peer::Peer;
use crate::scale::Scale;
use crate::service::{Service, Target};

/// A webhook to one endpoint on loopback: publish to receipt p99 under this, ms.
pub const WEBHOOK_P99_MS: f64 = 50.0;
/// Webhooks to 1,000 endpoints: publish to receipt p99 under this, ms.
pub const WEBHOOKS_MANY_P99_MS: f64 = 2_000.0;
/// The live stream as Server-Sent Events: p99 at most this times the socket's.
pub const SSE_SOCKET_RATIO: f64 = 1.2;
/// What one run of webhooks measured.
#[derive(Debug, Clone, Serialize)]
pub struct WebhookRound {
    /// Endpoints, each with a path of the receiver's.
    pub endpoints: usize,
    /// Results published.
    pub events: usize,
    /// Deliveries the receiver answered 200, the first of each event and endpoint.
    pub received: usize,
    /// Endpoints x events.
    pub expected: usize,
    /// Whether every endpoint was sent its events in `seq` order.
    pub in_order: bool,
    /// Publish to receipt, ms: median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Largest.
    pub max_ms: f64,
}

/// One round of the event stream against the socket, on one service.
#[derive(Debug, Clone, Serialize)]
pub struct SseRound {
    /// `/ws/live/odds`.
    pub socket: LiveResult,
    /// `/api/v1/live`.
    pub sse: LiveResult,
}

/// Everything the push part measured.
#[derive(Debug, Clone, Serialize)]
pub struct PushResult {
    /// One endpoint.
    pub one: WebhookRound,
    /// Many endpoints.
    pub many: WebhookRound,
    /// A receiver that fails (500) for ten minutes of the schedule, divided by 600 (one
    /// second), then answers 200: every event, in order.
    pub failing: WebhookRound,
    /// The event stream against the socket.
    pub sse: Vec<SseRound>,
}

impl PushResult {
    /// The report's rows: webhooks, each delivery from its publish to its receipt, and the
    /// event stream against the socket, medians of the rounds.
    pub fn rows(&self, judged: bool) -> Vec<[String; 7]> {
        let p = self;
        let hooks = |r: &WebhookRound| {
            format!(
                "{} of {}, {}; {:.1} / {:.1} / {:.1}",
                thousands(r.received as f64),
                thousands(r.expected as f64),
                if r.in_order {
                    "in order"
                } else {
                    "NOT in order"
                },
                r.p50_ms,
                r.p99_ms,
                r.max_ms
            )
        };
        let whole = |r: &WebhookRound| r.received == r.expected && r.in_order;
        let mut rows = vec![
            [
                format!("Webhooks, 1 endpoint, {} results", p.one.events),
                "deliveries; publish to receipt p50 / p99 / max ms".into(),
                hooks(&p.one),
                String::new(),
                String::new(),
                format!("p99 < {WEBHOOK_P99_MS} ms"),
                verdict(judged, whole(&p.one) && p.one.p99_ms < WEBHOOK_P99_MS).into(),
            ],
            [
                format!(
                    "Webhooks, {} endpoints, {} results",
                    thousands(p.many.endpoints as f64),
                    p.many.events
                ),
                "deliveries; publish to receipt p50 / p99 / max ms".into(),
                hooks(&p.many),
                String::new(),
                String::new(),
                format!("p99 < {} s", WEBHOOKS_MANY_P99_MS / 1000.0),
                verdict(
                    judged,
                    whole(&p.many) && p.many.p99_ms < WEBHOOKS_MANY_P99_MS,
                )
                .into(),
            ],
            [
                "Webhooks, a receiver failing (500) for 10 min of the schedule (÷600), then 200"
                    .into(),
                "deliveries; publish to receipt p50 / p99 / max ms".into(),
                hooks(&p.failing),
                String::new(),
                String::new(),
                "every event, in order".into(),
                verdict(judged, whole(&p.failing)).into(),
            ],
        ];
        if let Some(first) = p.sse.first() {
            let n = p.sse.len();
            let med = |f: fn(&SseRound) -> f64| median(p.sse.iter().map(f));
            let (sse99, socket99) = (med(|r| r.sse.p99_ms), med(|r| r.socket.p99_ms));
            let ratio = med(|r| r.sse.p99_ms / r.socket.p99_ms);
            rows.push([
                format!(
                    "Event stream against the socket ({} clients, {}/s)",
                    thousands(first.sse.clients as f64),
                    first.sse.rate
                ),
                format!(
                    "latency p50 / p99 ms, median of {n}; ratio: median of the rounds' p99 ratios"
                ),
                format!("{:.2} / {sse99:.2}", med(|r| r.sse.p50_ms)),
                format!("{:.2} / {socket99:.2}", med(|r| r.socket.p50_ms)),
                format!("{ratio:.2}"),
                format!("p99 ≤ {SSE_SOCKET_RATIO}× the socket's"),
                verdict(judged, ratio <= SSE_SOCKET_RATIO).into(),
            ]);
            rows.push([
                String::new(),
                "frames received of expected".into(),
                format!(
                    "{} of {}",
                    thousands(med(|r| r.sse.received as f64)),
                    thousands(first.sse.expected as f64)
                ),
                format!(
                    "{} of {}",
                    thousands(med(|r| r.socket.received as f64)),
                    thousands(first.socket.expected as f64)
                ),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        rows
    }
}

/// The part: webhooks, then the stream's rounds.
pub async fn run(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
    peer: &Peer,
) -> anyhow::Result<PushResult> {
    let tiny = scale.name == "tiny";
    let one = webhooks(
        target,
        store,
        log,
        1,
        if tiny { 10 } else { 100 },
        10,
        false,
    )
    .await?;
    let many = webhooks(
        target,
        store,
        log,
        if tiny { 20 } else { 1_000 },
        10,
        if tiny { 10 } else { 1 },
        false,
    )
    .await?;
    let failing = webhooks(target, store, log, 1, 10, 10, true).await?;
    let round = Round {
        scale,
        target,
        log,
        peer,
    };
    let mut sse = Vec::with_capacity(scale.live_rounds);
    for i in 0..scale.live_rounds {
        eprintln!(
            "bench:   push: stream round {} of {}",
            i + 1,
            scale.live_rounds
        );
        sse.push(stream_round(&round, store, i % 2 == 0).await?);
    }
    Ok(PushResult {
        one,
        many,
        failing,
        sse,
    })
}

/// What the receiver keeps: the first 200 of each endpoint's event, when it came, in the
/// order they came; and whether it is failing.
#[derive(Default)]
struct Received {
    first: HashMap<(usize, u64), Instant>,
    order: HashMap<usize, Vec<u64>>,
    failing_until: Option<Instant>,
}

async fn take(
    State(received): State<Arc<Mutex<Received>>>,
    UrlPath(endpoint): UrlPath<usize>,
    body: axum::body::Bytes,
) -> StatusCode {
    let at = Instant::now();
    let Some(seq) = std::str::from_utf8(&body).ok().and_then(seq_of) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut r = received.lock().unwrap_or_else(|p| p.into_inner());
    // A failing receiver's second starts with the first delivery it is sent.
    let until = *r.failing_until.get_or_insert(at + Duration::from_secs(1));
    if at < until {
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    if r.first.insert((endpoint, seq), at).is_none() {
        r.order.entry(endpoint).or_default().push(seq);
    }
    StatusCode::OK
}

/// `endpoints` endpoints of the key on a receiver on loopback, then `events` results of
/// today published at `rate` a second: each delivery's publish-to-receipt time. With
/// `failing`, the receiver answers 500 for the first second of deliveries and the retry
/// schedule is divided by 600 (ten minutes in one second).
async fn webhooks(
    target: &Target,
    store: &Path,
    log: &LogInfo,
    endpoints: usize,
    events: usize,
    rate: u64,
    failing: bool,
) -> anyhow::Result<WebhookRound> {
    eprintln!(
        "bench:   push: webhooks, {endpoints} endpoint(s), {events} results at {rate}/s{}",
        if failing {
            ", the receiver failing first"
        } else {
            ""
        }
    );
    let mut target = target.clone();
    target.settings.extend([
        ("RACING_WEBHOOK_ALLOW_NETWORKS".into(), "127.0.0.0/8".into()),
        (
            "RACING_WEBHOOK_MAX_ENDPOINTS".into(),
            (endpoints + 10).to_string(),
        ),
    ]);
    if failing {
        target
            .settings
            .push(("RACING_WEBHOOK_RETRY_DIVISOR".into(), "600".into()));
    }
    let received = Arc::new(Mutex::new(Received {
        // Not failing: an instant already past.
        failing_until: (!failing).then(Instant::now),
        ..Received::default()
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let app = axum::Router::new()
        .route("/hook/{endpoint}", post(take))
        .with_state(received.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let service = Service::start_ready(&target, store, "webhooks").await?;
    let client = reqwest::Client::new();
    for n in 0..endpoints {
        let res = client
            .post(service.url("/api/v1/webhooks"))
            .header("X-API-Key", &target.key)
            .header("Content-Type", "application/json")
            .body(format!(
                r#"{{"url":"http://127.0.0.1:{port}/hook/{n}","topics":["results"]}}"#
            ))
            .send()
            .await?;
        ensure!(
            res.status() == reqwest::StatusCode::CREATED,
            "endpoint {n}: {}",
            res.text().await.unwrap_or_default()
        );
    }
    let results: Vec<racing_events::Envelope> = (0..events)
        .map(|i| {
            let race = i64::try_from(i % 99 + 1).unwrap_or(1);
            let runners = vec![racing_events::samples::runner(Some(1), "A1")];
            let mut e = racing_events::samples::envelope(racing_events::samples::result(
                &log.today, "Sha Tin", race, runners,
            ));
            e.event_id = uuid::Uuid::new_v4();
            e
        })
        .collect();
    let sent = publish_paced(&target, results, rate).await?;
    let expected = endpoints * events;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let got = received.lock().map_or(0, |r| r.first.len());
        if got >= expected || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The endpoints live in NATS, beside the log the next run shares: none may be left.
    let listed: serde_json::Value = client
        .get(service.url("/api/v1/webhooks"))
        .header("X-API-Key", &target.key)
        .send()
        .await?
        .json()
        .await?;
    for endpoint in listed["webhooks"].as_array().into_iter().flatten() {
        let id = endpoint["id"].as_str().context("an endpoint's id")?;
        client
            .delete(service.url(&format!("/api/v1/webhooks/{id}")))
            .header("X-API-Key", &target.key)
            .send()
            .await?;
    }
    service.stop().await?;
    server.abort();
    let r = received.lock().unwrap_or_else(|p| p.into_inner());
    let seqs: Vec<u64> = sent.iter().map(|(s, _)| *s).collect();
    let in_order = (0..endpoints).all(|n| r.order.get(&n).is_some_and(|o| *o == seqs));
    let mut us: Vec<u64> = Vec::with_capacity(expected);
    for (seq, at) in &sent {
        for n in 0..endpoints {
            if let Some(got) = r.first.get(&(n, *seq)) {
                us.push(u64::try_from(
                    got.saturating_duration_since(*at).as_micros(),
                )?);
            }
        }
    }
    us.sort_unstable();
    let round = WebhookRound {
        endpoints,
        events,
        received: us.len(),
        expected,
        in_order,
        p50_ms: percentile_ms(&us, 0.5),
        p99_ms: percentile_ms(&us, 0.99),
        max_ms: percentile_ms(&us, 1.0),
    };
    eprintln!(
        "bench:   push: {} of {} deliveries, in order {}; publish to receipt p50 {:.1} ms p99 {:.1} ms max {:.1} ms",
        round.received, round.expected, round.in_order, round.p50_ms, round.p99_ms, round.max_ms
    );
    Ok(round)
}

/// One service, its socket's clients and its stream's, each side measured as the live
/// part measures it, the socket first or second.
async fn stream_round(
    round: &Round<'_>,
    store: &Path,
    socket_first: bool,
) -> anyhow::Result<SseRound> {
    let (target, scale, log) = (round.target, round.scale, round.log);
    let service = Service::start_ready(target, store, "push-stream").await?;
    let socket = || async {
        let updates = round.updates()?;
        let url = socket_url(&service, &target.key);
        let subscribe = format!("{{\"type\":\"subscribe\",\"date\":\"{}\"}}", log.today);
        let capacity = updates.len() + 16;
        let clients = Clients::start(scale.live_clients, |shared, stop| {
            service_client(url.clone(), subscribe.clone(), capacity, shared, stop)
        })
        .await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        round
            .measure("socket", clients, updates, Some(&service), |_, seq| seq)
            .await
    };
    let stream = || async {
        let updates = round.updates()?;
        let path = format!("/api/v1/live?date={}", log.today);
        let capacity = updates.len() + 16;
        let clients = Clients::start(scale.live_clients, |shared, stop| {
            sse_client(
                service.port(),
                path.clone(),
                target.key.clone(),
                capacity,
                shared,
                stop,
            )
        })
        .await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        round
            .measure(
                "event stream",
                clients,
                updates,
                Some(&service),
                |_, seq| seq,
            )
            .await
    };
    let (socket, sse) = if socket_first {
        let s = socket().await?;
        (s, stream().await?)
    } else {
        let e = stream().await?;
        (socket().await?, e)
    };
    service.stop().await?;
    Ok(SseRound { socket, sse })
}

/// One client of the event stream: today's meeting's odds, each `odds` event's id and
/// when it came, and when each snapshot came. It speaks HTTP/1.1 over a TCP connection of
/// its own and reads the chunked body itself, in the one task that reads the socket, as
/// the socket's clients read their frames: a client library (reqwest) hands each chunk
/// from its connection's task to the reader's, a second task woken for each event, on a
/// machine the clients share with the service.
async fn sse_client(
    port: u16,
    path: String,
    key: String,
    capacity: usize,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<Seen<u64>> {
    use bytes::Buf;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let place = shared.place().await?;
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    tcp.set_nodelay(true)?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-API-Key: {key}\r\nAccept: text/event-stream\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await?;
    let mut raw = bytes::BytesMut::with_capacity(8 * 1024);
    let head_end = loop {
        if let Some(end) = memchr::memmem::find(&raw, b"\r\n\r\n") {
            break end;
        }
        ensure!(
            tcp.read_buf(&mut raw).await? > 0,
            "the stream closed before its head"
        );
    };
    let head = std::str::from_utf8(&raw[..head_end])?.to_ascii_lowercase();
    ensure!(
        head.starts_with("http/1.1 200"),
        "the stream: {}",
        head.lines().next().unwrap_or_default()
    );
    ensure!(
        head.contains("\r\ntransfer-encoding: chunked"),
        "the stream's body is not chunked"
    );
    raw.advance(head_end + 4);
    // The body's bytes not yet read into events: each event is read where it lies, as the
    // socket's client reads a frame, with no check of its text but its first lines.
    let mut body = bytes::BytesMut::new();
    let mut seen = Seen::with_capacity(capacity);
    let mut place = Some(place);
    let mut at = Instant::now();
    loop {
        dechunk(&mut raw, &mut body)?;
        let mut from = 0;
        while let Some(end) = find_blank_line(&body[from..]) {
            let event = &body[from..from + end];
            from += end + 2;
            match event_kind(event) {
                Some((b"odds", id)) => {
                    seen.odds
                        .push((id.context("an odds event without an id")?, at));
                    shared.received.fetch_add(1, Ordering::Relaxed);
                }
                Some((b"snapshot", _)) => {
                    // Ready once the first snapshot of today's races is in.
                    match place.take() {
                        Some(place) => shared.subscribed(place),
                        None => seen.snapshots.push(at),
                    }
                }
                _ => {}
            }
        }
        body.advance(from);
        let read = tokio::select! {
            _ = stop.changed() => break,
            n = tcp.read_buf(&mut raw) => n.context("the stream broke")?,
        };
        at = Instant::now();
        ensure!(read > 0, "a stream client was closed");
    }
    Ok(seen)
}

/// Moves the data of each whole chunk at the front of `raw` (HTTP/1.1's chunked body) to
/// `out`; an error at the last chunk, which ends the stream.
fn dechunk(raw: &mut bytes::BytesMut, out: &mut bytes::BytesMut) -> anyhow::Result<()> {
    use bytes::Buf;
    loop {
        let Some(line) = memchr::memmem::find(raw, b"\r\n") else {
            return Ok(());
        };
        let size = std::str::from_utf8(&raw[..line])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
            .context("a chunk's size")?;
        ensure!(size > 0, "a stream client was closed");
        let end = line + 2 + size + 2;
        if raw.len() < end {
            return Ok(());
        }
        out.extend_from_slice(&raw[line + 2..line + 2 + size]);
        raw.advance(end);
    }
}

/// Where the first blank line (`\n\n`, an event's end) of `bytes` begins.
fn find_blank_line(bytes: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\n', bytes).find(|&i| bytes.get(i + 1) == Some(&b'\n'))
}

/// An event's `event:` type and its `id:` where it has one, from its first two lines.
fn event_kind(event: &[u8]) -> Option<(&[u8], Option<u64>)> {
    let (id, rest) = match event.strip_prefix(b"id: ") {
        Some(rest) => {
            let end = rest.iter().position(|&b| b == b'\n')?;
            let id = std::str::from_utf8(&rest[..end]).ok()?.parse().ok();
            (id, &rest[end + 1..])
        }
        None => (None, event),
    };
    let rest = rest.strip_prefix(b"event: ")?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    Some((&rest[..end], id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_read_by_its_first_lines_and_ends_at_a_blank_line() {
        let stream = b"id: 42\nevent: odds\ndata: {\"type\":\"odds\"}\n\nevent: snapshot\ndata: {}\n\n: heartbeat\n\n";
        let end = find_blank_line(stream).expect("an end");
        assert_eq!(event_kind(&stream[..end]), Some((&b"odds"[..], Some(42))));
        let rest = &stream[end + 2..];
        let end = find_blank_line(rest).expect("an end");
        assert_eq!(event_kind(&rest[..end]), Some((&b"snapshot"[..], None)));
        let rest = &rest[end + 2..];
        assert_eq!(
            event_kind(&rest[..find_blank_line(rest).expect("an end")]),
            None
        );
        assert_eq!(find_blank_line(b"id: 1\nevent: odds\ndata: {"), None);
    }

    #[test]
    fn a_chunked_body_is_read_chunk_by_whole_chunk() {
        let mut raw = bytes::BytesMut::from(&b"5\r\nhello\r\n6;x=y\r\n world\r\n4\r\nab"[..]);
        let mut out = bytes::BytesMut::new();
        dechunk(&mut raw, &mut out).expect("read");
        assert_eq!(&out[..], b"hello world");
        assert_eq!(&raw[..], b"4\r\nab", "a part of a chunk waits for the rest");
        raw.extend_from_slice(b"cd\r\n0\r\n\r\n");
        assert!(
            dechunk(&mut raw, &mut out).is_err(),
            "the last chunk ends it"
        );
        assert_eq!(&out[..], b"hello worldabcd");
    }
}
