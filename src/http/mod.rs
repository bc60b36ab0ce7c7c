//! The read API: the endpoints of interface.md with the rules of api-contract.md.
//!
//! Where things are: `pipeline.rs` is what happens to every request, top to bottom (the
//! size checks, the load, the key, the rate, the route, the answer, its conditional GET
//! and compression); `documents.rs` is the route table, one row and one handler for each
//! document endpoint; `route.rs` the table's machinery (matching, typed parameters);
//! `input.rs` the checks of every parameter; `openapi.rs` the description made from the
//! table; `live.rs` the WebSocket.

mod cache;
mod discovery;
mod documents;
mod error;
mod history;
pub mod input;
mod limits;
mod live;
mod openapi;
mod pipeline;
pub mod route;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use axum::http::HeaderValue;
use axum::middleware;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

pub use documents::ROUTES;
pub use error::{ApiError, UNAUTHORIZED_MESSAGE};
pub use limits::{RateLimits, RequestLimits};
pub use live::ConnectionSlots;
pub use openapi::{DOCS_PATH, OPENAPI_PATH};
pub use pipeline::Api;

use crate::keys::KeyRing;
use crate::live::SessionContext;
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
    /// What live odds sessions share.
    pub live: SessionContext,
    /// Open WebSocket connections per key.
    pub slots: Arc<ConnectionSlots>,
    /// Every live odds session, so that shutdown can wait for their close frames.
    pub sessions: tokio_util::task::TaskTracker,
    /// The pricing page and the subscription flow.
    pub signup: Arc<crate::subscribe::Signup>,
    /// The one shutdown signal.
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// The API as one service, for the server and for handler tests: the request pipeline
/// (`pipeline.rs`: ids, tracing, limits, the key, the rate, conditional GETs and
/// compression) in front of the documents, and the axum router for every other path.
pub fn api(state: AppState) -> Api {
    let others = Router::new()
        .route(ODDS_SOCKET_PATH, get(live::odds_socket))
        .merge(openapi::routes())
        .route_layer(middleware::from_fn(crate::admin::track_requests))
        // Answers of no route are counted too, as `unmatched`: a scan of paths shows.
        .fallback(|| async { unmatched(ApiError::NotFound("no such path".into())) })
        .method_not_allowed_fallback(|| async { unmatched(ApiError::MethodNotAllowed) })
        .with_state(state.clone());
    let public = crate::subscribe::routes(state.signup.clone())
        .merge(openapi::public_routes())
        .route_layer(middleware::from_fn(crate::admin::track_requests));
    Api::new(state, others, public)
}

/// `error` as answered where no route applies, counted under the route `unmatched`.
fn unmatched(error: ApiError) -> axum::response::Response {
    let response = error.into_response();
    let (requests, _) = crate::admin::route_metrics("unmatched", response.status().as_u16());
    requests.increment(1);
    response
}

/// A header value formatted on the stack: its own bytes are its only allocation. `None`
/// for a value over 64 bytes or not valid in a header.
fn formatted(args: std::fmt::Arguments<'_>) -> Option<HeaderValue> {
    let mut buf = [0u8; 64];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    std::io::Write::write_fmt(&mut cursor, args).ok()?;
    let len = usize::try_from(cursor.position()).ok()?;
    HeaderValue::from_bytes(buf.get(..len)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formatted_header_value_is_exact_or_refused() {
        let v = formatted(format_args!("\"default\";r={};t={}", 41, 2)).expect("fits");
        assert_eq!(v, "\"default\";r=41;t=2");
        assert!(
            formatted(format_args!("{:065}", 0)).is_none(),
            "over 64 bytes"
        );
        assert!(
            formatted(format_args!("a\nb")).is_none(),
            "not a header value"
        );
    }
}
