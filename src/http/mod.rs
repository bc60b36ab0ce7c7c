//! The read API: the endpoints and rules `docs/api.md` describes.
//!
//! Where things are: `pipeline.rs` is what happens to every request, top to bottom (the
//! size checks, the load, the key, the rate, the route, the answer, its conditional GET
//! and compression); `table.rs` is the route table, one row for each document endpoint
//! and the API's index, and the match of a path to its row; `documents.rs`,
//! `discovery.rs` and `history.rs` the handlers of its rows, `index.rs` the index made
//! from it; `route.rs` what a row is made of (typed parameters, operations); `input.rs`
//! the checks of every parameter, `query.rs` of the query string; `respond.rs` the steps
//! every handler shares, `state.rs` what they share (`AppState`); `openapi.rs` the
//! description made from the table; `live.rs` the WebSocket, `asyncapi.rs` its
//! description; `feed.rs` the feed's schema and AsyncAPI document for feeders;
//! `described.rs` the paths and texts the descriptions share with the rest; `strict.rs`
//! checks a value against a description's schema.
//!
//! Arrows point down that list's layers: the pipeline uses the descriptions and the
//! table, the table its handlers and the index, handlers `respond.rs`, `input.rs` and
//! `route.rs`, and those `state.rs` and the bottom (`query.rs`, `described.rs`, `error.rs`,
//! `cache.rs`, and what `state.rs` holds: `limits.rs`, `log_end.rs`, `slots.rs`).

mod analysis;
pub mod asyncapi;
mod cache;
pub mod connection;
mod described;
mod discovery;
mod documents;
mod error;
mod feed;
mod header_text;
mod history;
mod index;
pub mod input;
pub(crate) mod limits;
pub(crate) mod live;
pub(crate) mod log_end;
mod long;
mod openapi;
mod pipeline;
pub(crate) mod position;
pub mod query;
mod respond;
pub mod route;
pub(crate) mod slots;
pub mod sse;
pub(crate) mod state;
pub mod strict;
pub mod table;
pub mod webhooks;

use axum::middleware;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

pub use described::{
    ASYNCAPI_PATH, ASYNCAPI_PUBLIC_PATH, DOCS_PATH, FEED_ASYNCAPI_PATH, FEED_SCHEMA_PATH,
    INDEX_PATH, ODDS_SOCKET_PATH, OPENAPI_PATH, VERSION,
};
pub use error::ApiError;
pub use feed::{asyncapi_text as feed_asyncapi_text, schema_text as feed_schema_text};
pub use openapi::SPEC as OPENAPI;
pub use pipeline::keyless_paths;
pub use table::ROUTES;

use pipeline::Api;
use state::AppState;

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
