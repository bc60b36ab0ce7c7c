//! The steps every handler shares: a 503 until the read models are built, the deadline of
//! a read that grows with the data, and the answer, JSON with its `ETag`, cache control
//! and `Racing-Seq`, or a body of another type with its `ETag`.

use std::sync::atomic::Ordering;

use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use racing_projections::Reader;

use super::cache;
use super::error::ApiError;
use super::input::AsOf;
use super::long;
use super::query::clip;
use super::state::AppState;

/// ` at VENUE` for a message about a venue's document, the venue clipped.
pub(super) fn at(venue: Option<&str>) -> String {
    venue
        .map(|v| format!(" at {}", clip(v)))
        .unwrap_or_default()
}

/// When a request that reads what grows with the data gives up (`Store::until`): its time
/// limit from now, as the pipeline's own bound on it runs.
pub(super) fn deadline(state: &AppState) -> std::time::Instant {
    std::time::Instant::now() + state.limits.timeout()
}

/// `store` for a read as of `seq`, stopped at the request's deadline: on a long reads'
/// thread alone (`long.rs`; on another, [`ApiError::NotRemembered`] hands the request
/// over) unless the read is `bounded` whatever the log's length (a profile's, one
/// record's versions, or results', one for each race they list: handing it over took
/// longer than the read), and where the store holds `seq`. The pipeline waited for the
/// position (`position.rs`); a store swapped since answers as a replica behind does.
pub(super) fn as_of(
    state: &AppState,
    store: Reader,
    seq: u64,
    bounded: bool,
) -> Result<Reader, ApiError> {
    if !bounded && !long::apart() {
        return Err(ApiError::NotRemembered);
    }
    let store = store.until(deadline(state));
    let checkpoint = store.checkpoint()?;
    if seq > checkpoint {
        return Err(ApiError::Behind {
            wanted: seq,
            checkpoint,
        });
    }
    Ok(store)
}

/// A 503 until the projector has caught up with the log once.
pub(super) fn built(state: &AppState) -> Result<(), ApiError> {
    if state.ready.load(Ordering::Relaxed) {
        Ok(())
    } else {
        Err(ApiError::Unavailable(
            "the read models are still being built from the log; retry shortly".into(),
        ))
    }
}

/// A document answer: JSON, with its `ETag`, `Cache-Control` (a document as of a point
/// of the log never changes) and `Racing-Seq`, the stream sequence it reflects. Its
/// header map is made with room for every header the answer will carry, so that it is
/// allocated once.
pub(super) fn json(body: Bytes, etag: HeaderValue, seq: u64, as_of: Option<AsOf>) -> Response {
    let mut response = Response::new(axum::body::Body::from(body));
    let headers = response.headers_mut();
    headers.reserve(ANSWER_HEADERS);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(RACING_SEQ, HeaderValue::from(seq));
    if as_of.is_some() {
        cache::tag_immutable(&mut response, etag);
    } else {
        cache::tag(&mut response, etag);
    }
    response
}

/// The header that gives the stream sequence an answer reflects: a WebSocket `subscribe`
/// with it as `since` resumes right after what the answer holds.
pub const RACING_SEQ: HeaderName = HeaderName::from_static("racing-seq");

/// Headers of a document answer: type, ETag, cache control, Racing-Seq, the two RateLimit
/// headers, Vary and the request id (hyper writes the length and date itself).
const ANSWER_HEADERS: usize = 8;

/// `body` as an answer of `content_type`, with its `ETag`.
pub(super) fn with_type(body: Bytes, content_type: &'static str) -> Response {
    let mut response = body.clone().into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    let etag = racing_projections::etag(&body);
    if let Ok(etag) = HeaderValue::from_bytes(&etag) {
        cache::tag(&mut response, etag);
    }
    response
}
