//! The read API: the six endpoints of interface.md with the rules of api-contract.md. The
//! key is checked before routing; each handler validates its path and query, then answers
//! with one stored document, sent as it is.

mod cache;
mod error;
pub mod input;
mod limits;
mod live;
mod openapi;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, RawQuery, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use racing_projections::{DocKey, FormDoc};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::TraceLayer;

pub use error::{ApiError, UNAUTHORIZED_MESSAGE};
pub use limits::{RateLimits, RequestLimits};
pub use live::ConnectionSlots;

use crate::keys::KeyRing;
use crate::live::SessionContext;
use crate::read_models::ReadModels;
use input::{clip, date, horse_no, race_number, Query};

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
    /// The one shutdown signal.
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// The API as a router, for the server and for handler tests.
pub fn router(state: AppState) -> Router {
    let routes = Router::new()
        .route("/api/v1/horses/{horse_no}", get(horse_profile))
        .route("/api/v1/horses/{horse_no}/form", get(horse_form))
        .route("/api/v1/results/{date}", get(results_by_date))
        .route("/api/v1/results/{date}/{race_number}", get(race_result))
        .route("/api/v1/racecards/today", get(racecard_today))
        .route("/api/v1/racecards/{date}", get(racecard_by_date))
        .route("/api/v1/odds/{date}/{race_number}", get(live::race_odds))
        .route(ODDS_SOCKET_PATH, get(live::odds_socket))
        .merge(openapi::routes())
        .route_layer(middleware::from_fn(crate::admin::track_requests))
        .fallback(|| async { ApiError::NotFound("no such path".into()) })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state.clone());
    // The layers wrap the router once rather than each route (as `Router::layer` does),
    // so that a request clones one service stack, not one boxed service per layer. They
    // run top to bottom: ids and tracing, then size checks, load bounds, the key, the
    // body check, the key's rate, then conditional GETs over the (possibly compressed)
    // body, so that each encoding has its own strong ETag.
    let stack = tower::ServiceBuilder::new()
        .layer(SetRequestIdLayer::x_request_id(RequestIds))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(middleware::from_fn(limits::reject_oversized))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            limits::bound_work,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), require_key))
        .layer(middleware::from_fn(limits::reject_body))
        .layer(middleware::from_fn_with_state(state, limits::rate_limit))
        .layer(middleware::from_fn(cache::conditional))
        .layer(tower_http::compression::CompressionLayer::new())
        .service(routes);
    Router::new().fallback_service(stack)
}

/// The span of a request: method, path and request id. Never the query, which may hold
/// the WebSocket's `api_key`, and never a header value.
/// Request ids: a random prefix chosen once per process, then a counter. Unique within
/// the process and unlikely to repeat across processes, for the cost of an atomic
/// increment (a v4 UUID asked the kernel for randomness on every request: 1.7% of the
/// service's CPU under load).
#[derive(Clone, Copy)]
struct RequestIds;

impl MakeRequestId for RequestIds {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        static PREFIX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let prefix = *PREFIX.get_or_init(rand::random);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        HeaderValue::from_str(&format!("{prefix:016x}-{n:012x}"))
            .ok()
            .map(RequestId::new)
    }
}

fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), id)
}

/// Refuses any request without a valid key before it reaches a route, so that nothing
/// about the data, not even which paths exist, leaks to someone without a key. The key's
/// identity (never the key) goes on to the handlers for per-key limits.
async fn require_key(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let header = request
        .headers()
        .get(API_KEY_HEADER)
        .and_then(|v| v.to_str().ok());
    let id = match header {
        Some(_) => state.keys.identify(header),
        None if request.uri().path() == ODDS_SOCKET_PATH => {
            let query = request.uri().query().unwrap_or_default();
            let key = form_urlencoded::parse(query.as_bytes())
                .find(|(name, _)| name == "api_key")
                .map(|(_, value)| value);
            state.keys.identify(key.as_deref())
        }
        None => None,
    };
    let Some(id) = id else {
        return ApiError::Unauthorized.into_response();
    };
    // The key is no longer needed past this point; only its identity travels on.
    request.extensions_mut().insert(id);
    next.run(request).await
}

fn path_error(e: PathRejection) -> ApiError {
    ApiError::BadRequest(format!("malformed path: {}", e.body_text()))
}

fn at(venue: Option<&str>) -> String {
    venue
        .map(|v| format!(" at {}", clip(v)))
        .unwrap_or_default()
}

/// Reads one stored document; `Ok(None)` when there is none.
fn stored(state: &AppState, key: DocKey<'_>) -> Result<Option<sled::IVec>, ApiError> {
    if !state.ready.load(Ordering::Relaxed) {
        return Err(ApiError::Unavailable(
            "the read models are still being built from the log; retry shortly".into(),
        ));
    }
    Ok(state.read_models.load().doc(key)?)
}

/// A document answer: JSON, with its `ETag` and `Cache-Control`.
fn json(body: Bytes) -> Response {
    let mut response = body.clone().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    cache::tag(&mut response, &body);
    response
}

pub(crate) fn document(
    state: &AppState,
    key: DocKey<'_>,
    missing: impl FnOnce() -> String,
) -> Result<Response, ApiError> {
    match stored(state, key)? {
        Some(bytes) => Ok(json(Bytes::from_owner(bytes))),
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
        (status = 200, description = "The horse's profile.", body = openapi::Profile),
        (status = 400, description = "`bad_request`: a malformed horse number, or a query \
            parameter.", body = openapi::ErrorBody),
        (status = 404, description = "`not_found`: no profile for that horse number.",
            body = openapi::ErrorBody),
    )
)]
async fn horse_profile(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Path(h) = path.map_err(path_error)?;
    let h = horse_no(&h)?;
    Query::parse(raw, &[])?;
    document(&state, DocKey::Profile(h), || format!("no horse {h}"))
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
        (status = 200, description = "The horse's form.", body = openapi::Form),
        (status = 400, description = "`bad_request`: a malformed horse number, a `limit` that \
            is not an integer from 1 to 1000, or another query parameter.",
            body = openapi::ErrorBody),
        (status = 404, description = "`not_found`: a horse that appears in no result and has \
            no profile.", body = openapi::ErrorBody),
    )
)]
async fn horse_form(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Path(h) = path.map_err(path_error)?;
    let h = horse_no(&h)?;
    let query = Query::parse(raw, &["limit"])?;
    let limit = query
        .0
        .get("limit")
        .map(|l| input::form_limit(l))
        .transpose()?;
    let Some(stored) = stored(&state, DocKey::Form(h))? else {
        return Err(ApiError::NotFound(format!("no horse {h}")));
    };
    let body = FormDoc::body(&stored, limit)
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("form document of {h} is damaged")))?;
    Ok(json(Bytes::from(body)))
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
        (status = 200, description = "The results of the date.", body = openapi::ResultsByDate),
        (status = 400, description = "`bad_request`: a date that is not a real `YYYY-MM-DD`, \
            an empty `venue`, or another query parameter.", body = openapi::ErrorBody),
        (status = 404, description = "`not_found`: no results for the date (or venue).",
            body = openapi::ErrorBody),
    )
)]
async fn results_by_date(
    State(state): State<AppState>,
    Day(d): Day,
    Venue(venue): Venue,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    document(&state, DocKey::Results { date: &d, venue }, || {
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
        (status = 200, description = "The race's result.", body = openapi::RaceResult),
        (status = 400, description = "`bad_request`: a date that is not a real `YYYY-MM-DD`, \
            a race number not from 1 to 99, an empty `venue`, or another query parameter.",
            body = openapi::ErrorBody),
        (status = 404, description = "`not_found`: no such race on that date (or venue).",
            body = openapi::ErrorBody),
    )
)]
async fn race_result(
    State(state): State<AppState>,
    RacePath(d, n): RacePath,
    Venue(venue): Venue,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    let key = DocKey::Race {
        date: &d,
        race_number: n,
        venue,
    };
    document(&state, key, || {
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
        (status = 200, description = "Today's race card.", body = openapi::RaceCard),
        (status = 400, description = "`bad_request`: an empty `venue`, or another query \
            parameter.", body = openapi::ErrorBody),
        (status = 404, description = "`not_found`: no meeting today (or none at the venue); \
            the message names the date.", body = openapi::ErrorBody),
    )
)]
async fn racecard_today(
    State(state): State<AppState>,
    Venue(venue): Venue,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    let today = jiff::Timestamp::now()
        .to_zoned(state.timezone.clone())
        .date()
        .to_string();
    let key = DocKey::Card {
        date: &today,
        venue,
    };
    document(&state, key, || {
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
        (status = 200, description = "The race card of the date.", body = openapi::RaceCard),
        (status = 400, description = "`bad_request`: a date that is not a real `YYYY-MM-DD`, \
            an empty `venue`, or another query parameter.", body = openapi::ErrorBody),
        (status = 404, description = "`not_found`: no race card for the date (or venue).",
            body = openapi::ErrorBody),
    )
)]
async fn racecard_by_date(
    State(state): State<AppState>,
    Day(d): Day,
    Venue(venue): Venue,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    document(&state, DocKey::Card { date: &d, venue }, || {
        format!("no race card for {d}{}", at(venue))
    })
}

/// The `{date}` of a one-parameter path, checked to be a real calendar date.
struct Day(String);

impl<S: Send + Sync> FromRequestParts<S> for Day {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(d) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(path_error)?;
        date(&d)?;
        Ok(Day(d))
    }
}

/// The `{date}/{race_number}` of a race path, both checked.
pub(crate) struct RacePath(pub String, pub u8);

impl<S: Send + Sync> FromRequestParts<S> for RacePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path((d, n)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(path_error)?;
        date(&d)?;
        let n = race_number(&n)?;
        Ok(RacePath(d, n))
    }
}

/// The query of the date endpoints: only `venue`, a meeting's racecourse on a date with
/// more than one.
struct Venue(Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for Venue {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let mut query = Query::parse(parts.uri.query().map(str::to_owned), &["venue"])?;
        match query.0.remove("venue") {
            Some(v) if v.trim().is_empty() => Err(ApiError::BadRequest(
                "query parameter `venue` is empty".into(),
            )),
            v => Ok(Venue(v)),
        }
    }
}
