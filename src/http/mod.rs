//! The read API: the six endpoints of interface.md with the rules of api-contract.md. The
//! key is checked before routing; each handler validates its path and query, then answers
//! with one stored document, sent as it is.

mod cache;
mod error;
pub mod input;
mod limits;
mod live;
mod openapi;
mod pipeline;
pub mod route;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use std::borrow::Cow;
use std::time::Instant;

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use racing_projections::openapi as documents;
use racing_projections::{etag, Doc, DocKey, FormDoc, ETAG_LEN};

pub use error::{ApiError, UNAUTHORIZED_MESSAGE};
pub use limits::{RateLimits, RequestLimits};
pub use live::ConnectionSlots;
pub use pipeline::Api;

use crate::keys::KeyRing;
use crate::live::SessionContext;
use crate::read_models::ReadModels;
use input::{clip, date, horse_no, race_number, Query};
use route::{param, Route};

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

/// Whether `path` is answered without a key: the pricing site and the public reference.
pub(crate) fn is_public(path: &str) -> bool {
    // Every document path is under /api/: one comparison for them, on the hot path.
    !path.starts_with("/api/")
        && (crate::subscribe::is_public(path) || openapi::PUBLIC_PATHS.contains(&path))
}

/// The answer to a request for a document, counted in the route metrics with its time
/// since `started`; `None` when the path is not a document's. Every handler reads the
/// store and returns, without waiting on anything.
fn answer(state: &AppState, request: &Request, started: Instant) -> Option<Response> {
    let uri = request.uri();
    let route = route::route(uri.path())?;
    let query = uri.query();
    let answered = if matches!(*request.method(), Method::GET | Method::HEAD) {
        match route {
            Route::Profile(h) => horse_profile(state, h, query),
            Route::Form(h) => horse_form(state, h, query),
            Route::Results(d) => results_by_date(state, d, query),
            Route::Race(d, n) => race_result(state, d, n, query),
            Route::CardToday => racecard_today(state, query),
            Route::Card(d) => racecard_by_date(state, d, query),
            Route::Odds(d, n) => live::race_odds(state, d, n, query),
        }
    } else {
        Err(ApiError::MethodNotAllowed)
    };
    let response = answered.unwrap_or_else(IntoResponse::into_response);
    let status = response.status().as_u16();
    // The 200s of each route have their handles at hand; other answers look theirs up.
    static OK: [OnceLock<(metrics::Counter, metrics::Histogram)>; Route::COUNT] =
        [const { OnceLock::new() }; Route::COUNT];
    let looked_up;
    let (requests, latency) = match OK.get(route.index()) {
        Some(ok) if status == 200 => {
            ok.get_or_init(|| crate::admin::route_metrics(route.template(), status))
        }
        _ => {
            looked_up = crate::admin::route_metrics(route.template(), status);
            &looked_up
        }
    };
    requests.increment(1);
    latency.record(started.elapsed().as_secs_f64());
    Some(response)
}

fn at(venue: Option<&str>) -> String {
    venue
        .map(|v| format!(" at {}", clip(v)))
        .unwrap_or_default()
}

/// A 503 until the projector has caught up with the log once.
fn built(state: &AppState) -> Result<(), ApiError> {
    if state.ready.load(Ordering::Relaxed) {
        Ok(())
    } else {
        Err(ApiError::Unavailable(
            "the read models are still being built from the log; retry shortly".into(),
        ))
    }
}

/// Reads one stored document; `Ok(None)` when there is none.
fn stored(state: &AppState, key: DocKey<'_>) -> Result<Option<Doc>, ApiError> {
    built(state)?;
    Ok(state.read_models.doc(key)?)
}

/// A document answer: JSON, with its `ETag` and `Cache-Control`. Its header map is made
/// with room for every header the answer will carry, so that it is allocated once.
fn json(body: Bytes, etag: HeaderValue) -> Response {
    let mut response = Response::new(axum::body::Body::from(body));
    let headers = response.headers_mut();
    headers.reserve(ANSWER_HEADERS);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    cache::tag(&mut response, etag);
    response
}

/// Headers of a document answer: type, ETag, cache control, the two RateLimit headers,
/// Vary and the request id (hyper writes the length and date itself).
const ANSWER_HEADERS: usize = 7;

/// A header value formatted on the stack: its own bytes are its only allocation. `None`
/// for a value over 64 bytes or not valid in a header.
fn formatted(args: std::fmt::Arguments<'_>) -> Option<HeaderValue> {
    let mut buf = [0u8; 64];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    std::io::Write::write_fmt(&mut cursor, args).ok()?;
    let len = usize::try_from(cursor.position()).ok()?;
    HeaderValue::from_bytes(buf.get(..len)?).ok()
}

/// The answer of a whole stored document: its body and its `ETag`, both sent from the
/// store's own buffer.
fn whole(doc: Doc) -> Result<Response, ApiError> {
    let stored = Bytes::from_owner(doc.into_stored());
    let etag = HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN))
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("a stored ETag is not a header value")))?;
    Ok(json(stored.slice(ETAG_LEN..), etag))
}

pub(crate) fn document(
    state: &AppState,
    key: DocKey<'_>,
    missing: impl FnOnce() -> String,
) -> Result<Response, ApiError> {
    match stored(state, key)? {
        Some(doc) => whole(doc),
        None => Err(ApiError::NotFound(missing())),
    }
}

/// The profile of a horse.
#[utoipa::path(
    get,
    path = "/api/v1/horses/{horse_no}",
    tag = "horses",
    summary = "Get horse profile",
    description = "The profile of a horse by its brand number: the fields of interface.md 2.1. \
        Takes no query parameters.",
    params(("horse_no" = openapi::HorseNo, Path, description = openapi::HORSE_NO_DOC)),
    responses(
        (status = 200, description = "The horse's profile.", body = documents::Profile),
        (status = 400, description = "`bad_request`: a malformed horse number, or a query \
            parameter.", body = error::ErrorBody),
        (status = 404, description = "`not_found`: no profile for that horse number.",
            body = error::ErrorBody),
    )
)]
fn horse_profile(state: &AppState, h: &str, query: Option<&str>) -> Result<Response, ApiError> {
    let h = param(h, "horse_no")?;
    let h = horse_no(&h)?;
    Query::parse(query.map(str::to_owned), &[])?;
    document(state, DocKey::Profile(h), || format!("no horse {h}"))
}

/// The form of a horse, optionally cut to the newest `limit` entries.
#[utoipa::path(
    get,
    path = "/api/v1/horses/{horse_no}/form",
    tag = "horses",
    summary = "Get horse form",
    description = "Every recorded race of the horse, newest first (date, then race number, \
        descending); `limit` keeps the newest N. A horse has form as soon as it appears in a \
        result, even without a profile; its `horse_name` then comes from its latest result.",
    params(
        ("horse_no" = openapi::HorseNo, Path, description = openapi::HORSE_NO_DOC),
        ("limit" = Option<openapi::FormLimit>, Query, description = openapi::LIMIT_DOC),
    ),
    responses(
        (status = 200, description = "The horse's form.", body = documents::Form),
        (status = 400, description = "`bad_request`: a malformed horse number, a `limit` that \
            is not an integer from 1 to 1000, or another query parameter.",
            body = error::ErrorBody),
        (status = 404, description = "`not_found`: a horse that appears in no result and has \
            no profile.", body = error::ErrorBody),
    )
)]
fn horse_form(state: &AppState, h: &str, query: Option<&str>) -> Result<Response, ApiError> {
    let h = param(h, "horse_no")?;
    let h = horse_no(&h)?;
    let query = Query::parse(query.map(str::to_owned), &["limit"])?;
    let limit = query
        .0
        .get("limit")
        .map(|l| input::form_limit(l))
        .transpose()?;
    let Some(doc) = stored(state, DocKey::Form(h))? else {
        return Err(ApiError::NotFound(format!("no horse {h}")));
    };
    let damaged = || ApiError::Internal(anyhow::anyhow!("form document of {h} is damaged"));
    match FormDoc::body(&doc, limit).ok_or_else(damaged)? {
        // The whole document is the stored value's tail: sent from the store's own buffer,
        // with the stored ETag.
        Cow::Borrowed(all) => {
            let at = all.len();
            let stored = Bytes::from_owner(doc.into_stored());
            let etag =
                HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN)).map_err(|_| damaged())?;
            Ok(json(stored.slice(stored.len() - at..), etag))
        }
        Cow::Owned(cut) => {
            let etag = HeaderValue::from_bytes(&etag(&cut)).map_err(|_| damaged())?;
            Ok(json(Bytes::from(cut), etag))
        }
    }
}

/// All results of a date.
#[utoipa::path(
    get,
    path = "/api/v1/results/{date}",
    tag = "results",
    summary = "List results by date",
    description = "All races of the date (or of the `venue`'s meeting), ascending race number; \
        in each, placed runners by position, then the rest as the feed listed them.",
    params(
        ("date" = openapi::Date, Path, description = openapi::DATE_DOC),
        ("venue" = Option<openapi::Venue>, Query, description = openapi::VENUE_DOC),
    ),
    responses(
        (status = 200, description = "The results of the date.", body = documents::ResultsByDate),
        (status = 400, description = "`bad_request`: a date that is not a real `YYYY-MM-DD`, \
            an empty `venue`, or another query parameter.", body = error::ErrorBody),
        (status = 404, description = "`not_found`: no results for the date (or venue).",
            body = error::ErrorBody),
    )
)]
fn results_by_date(state: &AppState, d: &str, query: Option<&str>) -> Result<Response, ApiError> {
    let d = day(d)?;
    let venue = venue(query)?;
    let venue = venue.as_deref();
    document(state, DocKey::Results { date: &d, venue }, || {
        format!("no results for {d}{}", at(venue))
    })
}

/// The result of one race.
#[utoipa::path(
    get,
    path = "/api/v1/results/{date}/{race_number}",
    tag = "results",
    summary = "Get single race result",
    description = "The result of one race: `{date, venue, race_number, race_name, distance, \
        going, runners}`, runners placed by position, then the rest.",
    params(
        ("date" = openapi::Date, Path, description = openapi::DATE_DOC),
        ("race_number" = openapi::RaceNumber, Path, description = openapi::RACE_NUMBER_DOC),
        ("venue" = Option<openapi::Venue>, Query, description = openapi::VENUE_DOC),
    ),
    responses(
        (status = 200, description = "The race's result.", body = documents::RaceResult),
        (status = 400, description = "`bad_request`: a date that is not a real `YYYY-MM-DD`, \
            a race number not from 1 to 99, an empty `venue`, or another query parameter.",
            body = error::ErrorBody),
        (status = 404, description = "`not_found`: no such race on that date (or venue).",
            body = error::ErrorBody),
    )
)]
fn race_result(
    state: &AppState,
    d: &str,
    n: &str,
    query: Option<&str>,
) -> Result<Response, ApiError> {
    let (d, n) = race(d, n)?;
    let venue = venue(query)?;
    let venue = venue.as_deref();
    let key = DocKey::Race {
        date: &d,
        race_number: n,
        venue,
    };
    document(state, key, || {
        format!("no result for race {n} on {d}{}", at(venue))
    })
}

/// Today's race card.
#[utoipa::path(
    get,
    path = "/api/v1/racecards/today",
    tag = "racecards",
    summary = "Today's race card",
    description = "The card of today's meeting, where today is the calendar date in the \
        service's time zone (`RACING_TIMEZONE`, by default `Asia/Hong_Kong`); the `date` field \
        says which day that was. Scratched runners are removed.",
    params(("venue" = Option<openapi::Venue>, Query, description = openapi::VENUE_DOC)),
    responses(
        (status = 200, description = "Today's race card.", body = documents::RaceCard),
        (status = 400, description = "`bad_request`: an empty `venue`, or another query \
            parameter.", body = error::ErrorBody),
        (status = 404, description = "`not_found`: no meeting today (or none at the venue); \
            the message names the date.", body = error::ErrorBody),
    )
)]
fn racecard_today(state: &AppState, query: Option<&str>) -> Result<Response, ApiError> {
    let venue = venue(query)?;
    let venue = venue.as_deref();
    let today = jiff::Timestamp::now()
        .to_zoned(state.timezone.clone())
        .date()
        .to_string();
    let key = DocKey::Card {
        date: &today,
        venue,
    };
    document(state, key, || {
        let zone = &state.timezone_name;
        format!("no meeting today ({today} in {zone}){}", at(venue))
    })
}

/// The race card of a date.
#[utoipa::path(
    get,
    path = "/api/v1/racecards/{date}",
    tag = "racecards",
    summary = "Race card by date",
    description = "The card of the date, ascending race number, scratched runners removed.",
    params(
        ("date" = openapi::Date, Path, description = openapi::DATE_DOC),
        ("venue" = Option<openapi::Venue>, Query, description = openapi::VENUE_DOC),
    ),
    responses(
        (status = 200, description = "The race card of the date.", body = documents::RaceCard),
        (status = 400, description = "`bad_request`: a date that is not a real `YYYY-MM-DD`, \
            an empty `venue`, or another query parameter.", body = error::ErrorBody),
        (status = 404, description = "`not_found`: no race card for the date (or venue).",
            body = error::ErrorBody),
    )
)]
fn racecard_by_date(state: &AppState, d: &str, query: Option<&str>) -> Result<Response, ApiError> {
    let d = day(d)?;
    let venue = venue(query)?;
    let venue = venue.as_deref();
    document(state, DocKey::Card { date: &d, venue }, || {
        format!("no race card for {d}{}", at(venue))
    })
}

/// The `{date}` of a path, decoded and checked to be a real calendar date.
fn day(raw: &str) -> Result<Cow<'_, str>, ApiError> {
    let d = param(raw, "date")?;
    date(&d)?;
    Ok(d)
}

/// The `{date}/{race_number}` of a race path, both decoded and checked.
pub(crate) fn race<'a>(d: &'a str, n: &str) -> Result<(Cow<'a, str>, u8), ApiError> {
    let d = day(d)?;
    let n = race_number(&param(n, "race_number")?)?;
    Ok((d, n))
}

/// The query of the date endpoints: only `venue`, a meeting's racecourse on a date with
/// more than one.
fn venue(query: Option<&str>) -> Result<Option<String>, ApiError> {
    let mut query = Query::parse(query.map(str::to_owned), &["venue"])?;
    match query.0.remove("venue") {
        Some(v) if v.trim().is_empty() => Err(ApiError::BadRequest(
            "query parameter `venue` is empty".into(),
        )),
        v => Ok(v),
    }
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
