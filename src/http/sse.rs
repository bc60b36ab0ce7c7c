//! The live stream as Server-Sent Events at `GET /api/v1/live`, for a client that cannot
//! hold a WebSocket: the socket's session (`crate::live`) run over an HTTP body, by the
//! body itself as the connection reads it, so that a frame is written on the task that
//! made it, as the socket's is. The query parameters are one `subscribe` the session is
//! handed first; each frame it sends goes out as an event, `event:` its type, `data:` the
//! frame, and `id:` its `seq` where that is a position to resume from; its heartbeats go
//! out as comments. A reconnect with `Last-Event-ID` (or `?since=`) subscribes with that
//! `since`. The key, the plan and the connection cap are the socket's.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use axum::body::{Body, Bytes};
use axum::extract::ws::Message;
use axum::extract::{RawQuery, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use axum::Extension;
use bytes::BytesMut;
use futures::{Sink, StreamExt};

use super::error::ApiError;
use super::input;
use super::query::Query;
use super::state::AppState;
use crate::keys::ring::Identity;
use crate::live::session::protocol::MAX_CONFLATE_MS;
use crate::live::session::run_session;

/// The stream's path.
pub const LIVE_EVENTS_PATH: &str = "/api/v1/live";

/// Events made and not yet taken by the connection: past them the session's writer waits,
/// and a client that takes nothing is dropped as a socket's is (`connection.rs`).
const QUEUED: usize = 16;

/// The frame types whose `seq` is a position a reconnect resumes from.
const POSITIONED: [&str; 7] = [
    "odds",
    "snapshot",
    "status",
    "scratching",
    "result",
    "card",
    "retraction",
];

/// The one `subscribe` the query asks for, as the socket's client would send it; `None`
/// for none (every race's odds, as a socket before its first `subscribe`).
fn subscription(query: &Query, headers: &HeaderMap) -> Result<(Option<String>, bool), ApiError> {
    let get = |name: &str| query.0.get(name).map(String::as_str);
    // A browser's reconnect sends the last id it was given, and the URL it first asked
    // for, `since` included: the id is the later position.
    let last_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.trim().is_empty());
    let since = match last_id.or(get("since")) {
        Some(s) => Some(input::sequence("since", s.trim())?),
        None => None,
    };
    let conflate_ms = match get("conflate_ms") {
        Some(ms) => Some(
            ms.parse::<u64>()
                .ok()
                .filter(|ms| *ms <= MAX_CONFLATE_MS)
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "conflate_ms must be an integer from 0 to {MAX_CONFLATE_MS}, got `{}`",
                        super::query::clip(ms)
                    ))
                })?,
        ),
        None => None,
    };
    let conflated = conflate_ms.is_some_and(|ms| ms > 0);
    let Some(date) = get("date") else {
        if let Some(name) = ["race_number", "topics", "since", "conflate_ms"]
            .into_iter()
            .find(|n| query.0.contains_key(*n))
        {
            return Err(ApiError::BadRequest(format!(
                "`{name}` needs a `date`: without one the stream follows every race's odds"
            )));
        }
        return Ok((None, false));
    };
    let date = input::date(date)?;
    let race_number = get("race_number").map(input::race_number).transpose()?;
    let topics: Option<Vec<String>> = get("topics").map(|t| {
        t.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect()
    });
    if let Some(names) = &topics {
        crate::live::session::topics::Topics::parse(Some(names)).map_err(ApiError::BadRequest)?;
    }
    let mut subscribe = serde_json::json!({"type": "subscribe", "date": date.as_str()});
    if let Some(n) = race_number {
        subscribe["race_number"] = n.get().into();
    }
    if let Some(since) = since {
        subscribe["since"] = since.into();
    }
    if let Some(topics) = topics {
        subscribe["topics"] = topics.into();
    }
    if let Some(ms) = conflate_ms {
        subscribe["conflate_ms"] = ms.into();
    }
    Ok((Some(subscribe.to_string()), conflated))
}

/// Follows the live stream as Server-Sent Events; the key was checked before routing.
#[utoipa::path(
    get,
    path = "/api/v1/live",
    tag = "odds",
    summary = "Live odds and the race day (Server-Sent Events)",
    description = "The live socket's frames as a `text/event-stream`, for the same \
        subscription as one `subscribe`, given as query parameters: `date` (without it, \
        every race's odds), `race_number`, `topics` (comma-separated: `odds`, `status`, \
        `scratchings`, `results`, `cards`, `market`), `since` and `conflate_ms`. Each frame \
        is an event: `event:` its `type`, `data:` the frame as the socket sends it \
        (described in `/asyncapi.json`), and `id:` its `seq` for the frames whose `seq` is a \
        position (`odds`, `snapshot`, and the race day's). A reconnect sends the last id as \
        `Last-Event-ID`, which resumes exactly as the socket's `since` (no gap, no repeat); \
        it wins over `since` in the URL. Heartbeats are comments (`: heartbeat`). A close \
        is an event `close` with the socket's `code` and `reason`. The key may be given as \
        `api_key` (an `EventSource` cannot set headers); the key's plan and its cap on \
        live connections are the socket's, shared with it. See docs/live.md.",
    params(
        ("date" = Option<String>, Query, description = "Meeting date, `YYYY-MM-DD`."),
        ("race_number" = Option<u8>, Query, description = "Race within the meeting, 1 to 99."),
        ("topics" = Option<String>, Query, description = "Comma-separated topics; `odds` if \
            left out."),
        ("since" = Option<u64>, Query, description = "Resume after this position."),
        ("conflate_ms" = Option<u64>, Query, description = "0 to 120000: odds moves of a race \
            within this many milliseconds go out as one frame with each runner's latest \
            prices; 0 (the default) sends every move."),
        ("Last-Event-ID" = Option<String>, Header, description = "The last event's id: \
            resume after it."),
    ),
    responses(
        (status = 200, description = "The stream.", content_type = "text/event-stream",
            body = String),
        (status = 400, description = "`bad_request`: a malformed parameter, a parameter that \
            needs a `date` without one, or another query parameter.",
            body = super::error::ErrorBody),
        (status = 429, description = "`rate_limited`: too many open live connections for the \
            key, or over its request rate.", body = super::error::ErrorBody),
    ),
    security(("api_key" = []), ("api_key_query" = []))
)]
pub(super) async fn live_events(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let query = Query::parse(
        raw.as_deref(),
        &[
            "api_key",
            "date",
            "race_number",
            "topics",
            "since",
            "conflate_ms",
        ],
    )?;
    super::respond::built(&state)?;
    let (subscribe, conflated) = subscription(&query, &headers)?;
    let key = super::live::connection_of(&state, who)?;
    let queue = Arc::new(Mutex::new(Queued::default()));
    // A stream without a date (every race's odds) cannot resume, as `since` needs a date:
    // its odds carry no id, so that a reconnect does not claim to.
    let events = Events {
        queue: queue.clone(),
        odds_ids: subscribe.is_some() && !conflated,
    };
    let client = futures::stream::iter(
        subscribe.map(|text| Ok::<Message, Infallible>(Message::Text(text.into()))),
    )
    .chain(futures::stream::pending());
    let context = state.live.clone();
    // The session runs where the body is read, on the connection's own task: each frame
    // is written as the session makes it, with no hand-over between two tasks.
    let session = state
        .sessions
        .track_future(run_session(events, client, context, key));
    let body = SessionBody {
        session: Some(Box::pin(session)),
        queue,
    };
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // A proxy that buffers would hold the events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// The events the session has made that the body has not yet handed to the connection.
#[derive(Default)]
struct Queued {
    bytes: BytesMut,
    events: usize,
    /// The session's writer, waiting for room.
    waiting: Option<Waker>,
}

fn lock(queue: &Mutex<Queued>) -> std::sync::MutexGuard<'_, Queued> {
    queue.lock().unwrap_or_else(|p| p.into_inner())
}

/// The session's frames as events, into the response's body.
struct Events {
    queue: Arc<Mutex<Queued>>,
    /// Whether `odds` frames carry their `seq` as an id: not on a conflated
    /// subscription, whose odds frames of different races may go out of `seq` order (a
    /// reconnect sends its odds as a snapshot).
    odds_ids: bool,
}

impl Sink<Message> for Events {
    type Error = Infallible;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let mut q = lock(&self.queue);
        if q.events < QUEUED {
            return Poll::Ready(Ok(()));
        }
        q.waiting = Some(cx.waker().clone());
        Poll::Pending
    }

    fn start_send(self: Pin<&mut Self>, message: Message) -> Result<(), Self::Error> {
        let mut q = lock(&self.queue);
        let before = q.bytes.len();
        write_event(&mut q.bytes, &message, self.odds_ids);
        q.events += usize::from(q.bytes.len() > before);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
}

/// The response's body: it runs the session each time the connection asks for more, and
/// hands over every event made since in one chunk.
struct SessionBody<F> {
    session: Option<Pin<Box<F>>>,
    queue: Arc<Mutex<Queued>>,
}

impl<F: Future<Output = ()>> futures::Stream for SessionBody<F> {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(session) = self.session.as_mut() {
            if session.as_mut().poll(cx).is_ready() {
                self.session = None;
            }
        }
        let mut q = lock(&self.queue);
        if !q.bytes.is_empty() {
            let chunk = q.bytes.split().freeze();
            q.events = 0;
            if let Some(writer) = q.waiting.take() {
                writer.wake();
            }
            return Poll::Ready(Some(Ok(chunk)));
        }
        if self.session.is_none() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

/// Writes the event of a frame of the session's to `out`; nothing for what a stream has
/// no form for.
fn write_event(out: &mut BytesMut, message: &Message, odds_ids: bool) {
    match message {
        Message::Text(text) => write_frame_event(out, text.as_str(), odds_ids),
        Message::Close(frame) => {
            let (code, reason) = frame
                .as_ref()
                .map_or((1000, ""), |f| (f.code, f.reason.as_str()));
            let data = serde_json::json!({"code": code, "reason": reason});
            out.extend_from_slice(format!("event: close\ndata: {data}\n\n").as_bytes());
        }
        _ => {}
    }
}

/// Writes a frame as an event: its type, its `seq` as the id where that is a position,
/// the frame as data; a heartbeat as a comment.
fn write_frame_event(out: &mut BytesMut, frame: &str, odds_ids: bool) {
    let kind = frame
        .strip_prefix("{\"type\":\"")
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("message");
    if kind == "heartbeat" {
        out.extend_from_slice(b": heartbeat\n\n");
        return;
    }
    let positioned = POSITIONED.contains(&kind)
        && (kind != "odds" || odds_ids)
        && !frame.starts_with("{\"type\":\"odds\",\"replay\":true");
    let id = positioned
        .then(|| seq_of(frame))
        .flatten()
        .filter(|s| *s > 0);
    out.reserve(frame.len() + 48);
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
        out.extend_from_slice(b"\n");
    }
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\n");
    for line in frame.split('\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\n");
    }
    out.extend_from_slice(b"\n");
}

/// The `seq` of a frame: its first `"seq":`, which every frame writes before any document
/// it carries.
fn seq_of(frame: &str) -> Option<u64> {
    let at = frame.find("\"seq\":")? + 6;
    let digits = frame.get(at..)?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits.get(..end)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(b: BytesMut) -> String {
        String::from_utf8(b.to_vec()).expect("utf-8")
    }

    fn frame_event(frame: &str, odds_ids: bool) -> BytesMut {
        let mut out = BytesMut::new();
        write_frame_event(&mut out, frame, odds_ids);
        out
    }

    fn event(message: &Message, odds_ids: bool) -> Option<BytesMut> {
        let mut out = BytesMut::new();
        write_event(&mut out, message, odds_ids);
        (!out.is_empty()).then_some(out)
    }

    #[test]
    fn a_frame_is_an_event_with_its_type_and_its_seq_where_it_is_a_position() {
        let odds = r#"{"type":"odds","date":"2026-11-21","venue":null,"race_number":1,"seq":42,"odds":[]}"#;
        assert_eq!(
            text(frame_event(odds, true)),
            format!("id: 42\nevent: odds\ndata: {odds}\n\n")
        );
        assert_eq!(
            text(frame_event(odds, false)),
            format!("event: odds\ndata: {odds}\n\n"),
            "conflated odds carry no id"
        );
        let result = r#"{"type":"result","date":"2026-11-21","venue":"Sha Tin","race_number":1,"seq":7,"published_at":"x","result":{"seq":99}}"#;
        assert!(text(frame_event(result, false)).starts_with("id: 7\nevent: result\n"));
        let welcome = r#"{"type":"welcome","seq":5,"heartbeat_ms":5000}"#;
        assert_eq!(
            text(frame_event(welcome, true)),
            format!("event: welcome\ndata: {welcome}\n\n")
        );
        let empty = r#"{"type":"snapshot","date":"2026-11-21","venue":null,"race_number":1,"seq":0,"odds":[]}"#;
        assert!(text(frame_event(empty, true)).starts_with("event: snapshot\n"));
        assert_eq!(
            text(frame_event(r#"{"type":"heartbeat","seq":9}"#, true)),
            ": heartbeat\n\n"
        );
    }

    #[test]
    fn a_close_is_an_event_with_the_sockets_code_and_reason() {
        let close = Message::Close(Some(axum::extract::ws::CloseFrame {
            code: 1008,
            reason: "API key revoked".into(),
        }));
        assert_eq!(
            event(&close, true).map(text).as_deref(),
            Some("event: close\ndata: {\"code\":1008,\"reason\":\"API key revoked\"}\n\n")
        );
        assert!(event(&Message::Ping(Bytes::new()), true).is_none());
    }
}
