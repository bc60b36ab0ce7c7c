//! The read API: the endpoints and rules `docs/api.md` describes.
//!
//! Where things are: `pipeline.rs` is what happens to every request, top to bottom (the
//! size checks, the load, the key, the rate, the route, the answer, its conditional GET
//! and compression); `table.rs` is the route table, one row for each document endpoint
//! and the API's index, and the match of a path to its row; `documents.rs`,
//! `discovery.rs` and `history.rs` the handlers of its rows, `index.rs` the index made
//! from it; `route.rs` what a row is made of (typed parameters, operations); `input.rs`
//! the checks of every parameter, `query.rs` of the query string; `respond.rs` the steps
//! every handler shares; `openapi.rs` the description made from the table; `live.rs` the
//! WebSocket, `asyncapi.rs` its description; `feed.rs` the feed's schema and AsyncAPI document for feeders; `described.rs` the paths and texts the
//! descriptions share with the rest; `strict.rs` checks a value against a description's
//! schema.
//!
//! Arrows point down that list's layers: the pipeline uses the descriptions and the
//! table, the table its handlers and the index, handlers `respond.rs`, `input.rs` and
//! `route.rs`, and those the bottom (`query.rs`, `described.rs`, `error.rs`, `cache.rs`).

mod analysis;
pub mod asyncapi;
mod cache;
pub mod connection;
mod described;
mod discovery;
mod documents;
mod error;
mod feed;
mod history;
mod index;
pub mod input;
pub(crate) mod limits;
pub(crate) mod live;
mod long;
mod openapi;
mod pipeline;
pub(crate) mod position;
pub mod query;
mod respond;
pub mod route;
pub mod sse;
pub mod strict;
pub mod table;
pub mod webhooks;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use axum::http::HeaderValue;
use axum::middleware;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

pub use described::{
    ASYNCAPI_PATH, ASYNCAPI_PUBLIC_PATH, DOCS_PATH, FEED_ASYNCAPI_PATH, FEED_SCHEMA_PATH,
    INDEX_PATH, OPENAPI_PATH, VERSION,
};
pub use error::{ApiError, UNAUTHORIZED_MESSAGE};
pub use feed::{asyncapi_text as feed_asyncapi_text, schema_text as feed_schema_text};
pub use limits::{RateLimits, RequestLimits};
pub use live::ConnectionSlots;
pub use openapi::SPEC as OPENAPI;
pub use pipeline::{keyless_paths, Api};
pub use position::{AskEnd, LogEnd, MIN_SEQ_HEADER};
pub use table::ROUTES;

use crate::keys::ring::KeyRing;
use crate::live::session::SessionContext;
use crate::read_models::ReadModels;

/// The header that carries the key (case-insensitive, as every HTTP header name).
pub const API_KEY_HEADER: &str = "x-api-key";

/// The live odds WebSocket; the only path that also takes the key as `?api_key=`.
pub const ODDS_SOCKET_PATH: &str = "/ws/live/odds";

/// What the handlers share. Every middleware and handler takes its own clone for each
/// request, so it is one `Arc`: a clone is one atomic increment.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    /// Shares `shared` with every request.
    pub fn new(shared: Shared) -> AppState {
        AppState(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The fields of [`AppState`].
pub struct Shared {
    /// The read models.
    pub read_models: Arc<ReadModels>,
    /// Accepted keys, kept in step with the registry.
    pub keys: Arc<KeyRing>,
    /// Per-key rates and request bounds.
    pub limits: Arc<RateLimits>,
    /// The zone of "today".
    pub timezone: jiff::tz::TimeZone,
    /// Its IANA name.
    pub timezone_name: Arc<str>,
    /// Whether the projector has caught up once.
    pub ready: Arc<AtomicBool>,
    /// Where the log ends, for a read whose position is past the checkpoint.
    pub log_end: Arc<LogEnd>,
    /// What live odds sessions share.
    pub live: SessionContext,
    /// Open WebSocket connections per key.
    pub slots: Arc<ConnectionSlots>,
    /// Every live odds session, so that shutdown can wait for their close frames.
    pub sessions: tokio_util::task::TaskTracker,
    /// The pricing page and the subscription flow.
    pub signup: Arc<crate::subscribe::signup::Signup>,
    /// Webhook endpoints.
    pub webhooks: Arc<crate::webhooks::manage::Webhooks>,
    /// The one shutdown signal.
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// The API as one service, for the server and for handler tests: the request pipeline
/// (`pipeline.rs`: ids, tracing, limits, the key, the rate, conditional GETs and
/// compression) in front of the documents, and the axum router for every other path;
/// an error when the threads of the long reads cannot be started (`long.rs`).
pub fn api(state: AppState) -> std::io::Result<Api> {
    let others = Router::new()
        .route(ODDS_SOCKET_PATH, get(live::odds_socket))
        .route(sse::LIVE_EVENTS_PATH, get(sse::live_events))
        .merge(webhooks::routes())
        .merge(openapi::routes())
        .merge(asyncapi::routes())
        .route_layer(middleware::from_fn(crate::telemetry::track_requests))
        // Answers of no route are counted too, as `unmatched`: a scan of paths shows.
        .fallback(|| async { unmatched(ApiError::NotFound("no such path".into())) })
        // The route's own methods in `Allow` (axum writes them where the answer has none):
        // the webhooks' paths take POST and DELETE, not only GET and HEAD.
        .method_not_allowed_fallback(|| async {
            let mut response = unmatched(ApiError::MethodNotAllowed);
            response.headers_mut().remove(axum::http::header::ALLOW);
            response
        })
        .with_state(state.clone());
    let public = crate::subscribe::routes(state.signup.clone())
        .merge(openapi::public_routes())
        .merge(asyncapi::public_routes())
        .merge(feed::public_routes())
        .route_layer(middleware::from_fn(crate::telemetry::track_requests));
    Ok(Api::new(state, others, public, long::LongReads::start()?))
}

/// `error` as answered where no route applies, counted under the route `unmatched`.
fn unmatched(error: ApiError) -> axum::response::Response {
    let response = error.into_response();
    crate::telemetry::requests::route_metrics("unmatched", response.status().as_u16()).count();
    response
}

/// A header value written on the stack from text and numbers, without `format!`'s
/// machinery: two are made for every answer (the request id and the `RateLimit` header),
/// and formatting them was a visible share of the service's CPU serving a small document.
/// Its own bytes are the value's only allocation.
struct HeaderText {
    buf: [u8; HeaderText::CAPACITY],
    len: usize,
    overflowed: bool,
}

impl HeaderText {
    /// Longest value it makes.
    const CAPACITY: usize = 64;

    fn new() -> HeaderText {
        HeaderText {
            buf: [0; HeaderText::CAPACITY],
            len: 0,
            overflowed: false,
        }
    }

    fn bytes(mut self, bytes: &[u8]) -> HeaderText {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.overflowed = true,
        }
        self
    }

    fn text(self, text: &str) -> HeaderText {
        self.bytes(text.as_bytes())
    }

    /// `n` in decimal.
    fn number(self, n: u64) -> HeaderText {
        self.bytes(itoa::Buffer::new().format(n).as_bytes())
    }

    /// `n` in lower-case hex, with leading zeros to at least `digits` digits (one digit
    /// at least, as `format!` writes zero).
    fn hex(self, n: u64, digits: usize) -> HeaderText {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut all = [0u8; 16];
        for (i, d) in all.iter_mut().enumerate() {
            *d = DIGITS[((n >> (60 - 4 * i)) & 0xf) as usize];
        }
        let significant = (64 - n.leading_zeros() as usize).div_ceil(4);
        let shown = significant.max(digits).clamp(1, 16);
        self.bytes(&all[16 - shown..])
    }

    /// The value; `None` if it is over [`HeaderText::CAPACITY`] bytes or not valid in a
    /// header.
    fn value(&self) -> Option<HeaderValue> {
        if self.overflowed {
            return None;
        }
        HeaderValue::from_bytes(self.buf.get(..self.len)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_text_is_exact_or_refused() {
        let v = HeaderText::new()
            .text("\"default\";r=")
            .number(41)
            .text(";t=")
            .number(u64::MAX)
            .value();
        assert_eq!(
            v.expect("fits"),
            format!("\"default\";r=41;t={}", u64::MAX).as_str()
        );
        for n in [0, 1, 0xabc, 0xffff_ffff_ffff, 0x1_0000_0000_0000, u64::MAX] {
            let v = HeaderText::new()
                .hex(n, 12)
                .text("-")
                .hex(n, 16)
                .text("-")
                .hex(n, 0)
                .value();
            assert_eq!(
                v.expect("fits"),
                format!("{n:012x}-{n:016x}-{n:x}").as_str(),
                "{n}"
            );
        }
        let long = "x".repeat(HeaderText::CAPACITY);
        assert!(HeaderText::new().text(&long).value().is_some());
        assert!(
            HeaderText::new().text(&long).text("y").value().is_none(),
            "over the capacity"
        );
        assert!(
            HeaderText::new().text("a\nb").value().is_none(),
            "not a header value"
        );
    }
}
