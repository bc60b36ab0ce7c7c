//! Everything the service does to every request, as one service, in the order it reads
//! here: a request id and a span, the size checks, the in-flight bound, the key, the body
//! check, the key's rate, then the answer (a document route of the table, or the router),
//! its conditional GET and, when the client asks, compression.
//!
//! This was ten tower layers, each with its own future, body wrapper and state clone per
//! request; together with the router they cost more CPU per request than hyper and the
//! kernel's loopback did. A read of a document now runs from the key check to its answer
//! within one call, on the request's first poll, with no future allocated; only what may
//! wait (the WebSocket upgrade, the OpenAPI pages, compression) is boxed and bounded by the
//! request timeout, and so are the reads that can grow with the data (a search, a page of
//! odds history, any `as_of` but a profile's or results'), which run on the long reads'
//! threads (`long.rs`), below the others; records by condition asked before, and answers
//! as of a point given lately, are sent from memory on the first poll.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{
    ACCEPT_ENCODING, CONTENT_LENGTH, IF_NONE_MATCH, RETRY_AFTER, TRANSFER_ENCODING, VARY,
};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures::future::{BoxFuture, Either, FutureExt, Ready};
use tower::Service;
use tower_http::compression::Compression;
use tracing::Instrument;

use super::described::{
    API_KEY_HEADER, ASYNCAPI_PUBLIC_PATH, FEED_ASYNCAPI_PATH, FEED_SCHEMA_PATH, ODDS_SOCKET_PATH,
    PUBLIC_PATHS,
};
use super::error::ApiError;
use super::header_text::HeaderText;
use super::limits::{RateHeaders, MAX_HEADERS, MAX_HEADER_BYTES, MAX_URI_BYTES};
use super::long::LongReads;
use super::position::{self, Asked, MIN_SEQ_HEADER};
use super::route::Runs;
use super::state::AppState;
use super::{cache, table};
use crate::keys::ring::{Identity, Refused};
use crate::telemetry::requests::route_metrics;

/// The request id header, taken from the client when it sends one.
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole HTTP API as one service: what [`super::api`] makes and the server runs.
/// The server clones it for every request, so it is one `Arc`.
#[derive(Clone)]
pub struct Api(Arc<Parts>);

struct Parts {
    state: AppState,
    plain: Answers,
    compressed: Compression<Answers>,
    /// The pricing site and the public docs: no key.
    public: Router,
}

/// The documents, then the router for every other path.
#[derive(Clone)]
struct Answers {
    state: AppState,
    router: Router,
    long: LongReads,
}

impl Api {
    /// The pipeline in front of `router`, which answers every path that is not a
    /// document's.
    pub(super) fn new(state: AppState, router: Router, public: Router, long: LongReads) -> Api {
        let plain = Answers {
            state: state.clone(),
            router,
            long,
        };
        Api(Arc::new(Parts {
            state,
            compressed: Compression::new(plain.clone()),
            plain,
            public,
        }))
    }

    /// The checks every request passes before its answer, in order: sizes, load, key,
    /// body, rate (as of `started`, when the request came). The refusal to send otherwise
    /// (a whole response: it is sent as it is).
    #[allow(clippy::result_large_err)]
    fn admit(&self, request: &Request, started: Instant) -> Result<Admission, Response> {
        let state = &self.0.state;
        let positioned = match measured(request) {
            Ok(positioned) => positioned,
            Err(e) => return Err(e.into_response()),
        };
        let Some(permit) = state.limits.admit() else {
            return Err(
                ApiError::Unavailable("the service is at capacity; retry shortly".into())
                    .into_response(),
            );
        };
        let who = match identify(state, request) {
            Ok(who) => who,
            Err(Refused::Unknown) => return Err(ApiError::Unauthorized.into_response()),
            Err(Refused::Unchecked) => return Err(ApiError::KeysUnchecked.into_response()),
        };
        if carries_body(request) {
            return Err(ApiError::BodyNotAccepted.into_response());
        }
        let (rate, refused) = state.limits.take(&who, started);
        if let Some(retry_after) = refused {
            let mut response = refusal(retry_after);
            rate.add_to(response.headers_mut());
            return Err(response);
        }
        Ok(Admission {
            permit,
            who,
            rate,
            positioned,
        })
    }
}

/// What an admitted request carries to its answer.
struct Admission {
    /// Its place among the requests in flight, held until the answer is made.
    permit: tokio::sync::OwnedSemaphorePermit,
    /// Whose key it came with.
    who: Identity,
    /// The key's RateLimit headers, for the answer.
    rate: RateHeaders,
    /// Whether it has the header `Racing-Min-Seq`, seen as its headers were measured.
    positioned: bool,
}

impl Service<Request> for Api {
    type Response = Response;
    type Error = Infallible;
    type Future = Either<
        Ready<Result<Response, Infallible>>,
        BoxFuture<'static, Result<Response, Infallible>>,
    >;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let started = Instant::now();
        let id = request_id(&request);
        let span = request_span(&request, &id);
        if is_public(request.uri().path()) {
            return self.public(request, id, span, started);
        }
        let (admission, if_none_match, coded, waits) = {
            let _entered = span.enter();
            let admission = match self.admit(&request, started) {
                Ok(admission) => admission,
                Err(refusal) => {
                    count_refusal(&request, &refusal, started);
                    return done(finish(refusal, id, started));
                }
            };
            let if_none_match = matches!(*request.method(), Method::GET | Method::HEAD)
                .then(|| request.headers().get(IF_NONE_MATCH).cloned())
                .flatten();
            let coded = request.headers().contains_key(ACCEPT_ENCODING);
            // The path's route, found once for every question.
            let matched = table::find(request.uri().path());
            // What a read of the table asks of the position: its `as_of` (read on a
            // long reads' thread) and the position to wait for, if the read models do not
            // hold it yet.
            let asked = match &matched {
                Some(_) => position::asked(&request, admission.positioned),
                None => Ok(Asked::default()),
            };
            let asked = match asked {
                Ok(asked) => asked,
                Err(e) => {
                    let refusal = e.into_response();
                    count_refusal(&request, &refusal, started);
                    let refusal = conclude(refusal, admission.rate, None, true);
                    return done(finish(refusal, id, started));
                }
            };
            let waits = matched.as_ref().and_then(|m| {
                let seq = asked.at_least?;
                (!position::reached(&self.0.state, seq)).then_some((seq, m.route().path))
            });
            let runs = matched.as_ref().map(|m| m.route().runs);
            let blocking = asked.as_of || runs.is_some_and(|runs| runs != Runs::Inline);
            // Answered here unless it runs apart; one that runs apart unless remembered,
            // or reads as of a point what it would read here, is tried here first, and
            // handed over only if its answer is not in memory.
            let here = !blocking || runs.is_some_and(|runs| runs != Runs::Apart);
            if let Some(matched) = matched.filter(|_| !coded && here && waits.is_none()) {
                if let Some(response) = answer_matched(&self.0.state, &matched, &request, started) {
                    let response = conclude(response, admission.rate, if_none_match, true);
                    return done(finish(response, id, started));
                }
            }
            if blocking {
                // (Tried above already, unless it goes through the router.)
                let unless_remembered = here && (coded || waits.is_some());
                request
                    .extensions_mut()
                    .insert(Blocking { unless_remembered });
            }
            (admission, if_none_match, coded, waits)
        };
        let Admission {
            permit, who, rate, ..
        } = admission;
        // The handlers behind the router (the WebSocket's) need to know whose key it is.
        request.extensions_mut().insert(who);
        let api = self.clone();
        let answering = async move {
            // A read of a position the read models do not hold yet waits for it here,
            // holding its place among the requests in flight but no thread.
            if let Some((seq, route)) = waits {
                let state = &api.0.state;
                if let Err(e) = position::reach(state, seq, started).await {
                    let response = e.into_response();
                    route_metrics(route, response.status().as_u16()).record(started.elapsed());
                    return Ok(response);
                }
            }
            if coded {
                api.0
                    .compressed
                    .clone()
                    .call(request)
                    .await
                    .map(|r| r.map(Body::new))
            } else {
                api.0.plain.clone().call(request).await
            }
        };
        let timeout = self.0.state.limits.timeout();
        Either::Right(
            async move {
                let response = bounded(answering, timeout, permit).await;
                let response = conclude(response, rate, if_none_match, !coded);
                Ok(finish(response, id, started))
            }
            .instrument(span)
            .boxed(),
        )
    }
}

impl Api {
    /// A public page (the pricing site, the docs): the size checks and the in-flight bound,
    /// no key; the forms have their own limits per client and address.
    fn public(
        &self,
        request: Request,
        id: HeaderValue,
        span: tracing::Span,
        started: Instant,
    ) -> <Api as Service<Request>>::Future {
        let state = &self.0.state;
        if let Err(e) = measured(&request) {
            let refusal = e.into_response();
            count_refusal(&request, &refusal, started);
            return done(finish(refusal, id, started));
        }
        let Some(permit) = state.limits.admit() else {
            let busy = ApiError::Unavailable("the service is at capacity; retry shortly".into())
                .into_response();
            count_refusal(&request, &busy, started);
            return done(finish(busy, id, started));
        };
        let answering = self.0.public.clone().call(request);
        let timeout = state.limits.timeout();
        Either::Right(
            async move {
                Ok(finish(
                    bounded(answering, timeout, permit).await,
                    id,
                    started,
                ))
            }
            .instrument(span)
            .boxed(),
        )
    }
}

/// The answer of `answering`, or a 503 once `timeout` has passed; the place among the
/// requests in flight is held until then.
async fn bounded(
    answering: impl std::future::Future<Output = Result<Response, Infallible>>,
    timeout: std::time::Duration,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Response {
    let response = match tokio::time::timeout(timeout, answering).await {
        Ok(Ok(response)) => response,
        Ok(Err(never)) => match never {},
        Err(_) => ApiError::Unavailable("the request took too long".into()).into_response(),
    };
    drop(permit);
    response
}

/// The answer of a document route of the table, counted in the route metrics with its
/// time since `started`; `None` when the path is no route's (the router takes it). Every
/// handler reads the store and returns, without waiting on anything.
fn answer(state: &AppState, request: &Request, started: Instant) -> Option<Response> {
    let matched = table::find(request.uri().path())?;
    let answered = answer_matched(state, &matched, request, started);
    Some(answered.unwrap_or_else(|| ApiError::NotRemembered.into_response()))
}

/// The answer of `request`, whose path is `matched`'s route, counted as [`answer`]'s;
/// `None` where its handler holds no answer in memory on a short reads' thread
/// ([`ApiError::NotRemembered`]), not counted: it is to be asked again on a long reads'.
fn answer_matched(
    state: &AppState,
    matched: &table::Matched<'_>,
    request: &Request,
    started: Instant,
) -> Option<Response> {
    let uri = request.uri();
    let route = matched.route();
    let answered = if matches!(*request.method(), Method::GET | Method::HEAD) {
        route.handler.answer(state, matched.params(), uri.query())
    } else {
        Err(ApiError::MethodNotAllowed)
    };
    if matches!(answered, Err(ApiError::NotRemembered)) {
        return None;
    }
    let response = answered.unwrap_or_else(IntoResponse::into_response);
    let status = response.status().as_u16();
    // The 200s of each route have their counts at hand; other answers look theirs up.
    let counts = if status == 200 {
        matched.ok_metrics()
    } else {
        route_metrics(route.path, status)
    };
    counts.record(started.elapsed());
    Some(response)
}

impl Service<Request> for Answers {
    type Response = Response;
    type Error = Infallible;
    type Future = Either<
        Ready<Result<Response, Infallible>>,
        Either<
            <Router as Service<Request>>::Future,
            BoxFuture<'static, Result<Response, Infallible>>,
        >,
    >;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if let Some(&Blocking { unless_remembered }) = request.extensions().get::<Blocking>() {
            let matched = table::find(request.uri().path());
            let remembered = matched
                .as_ref()
                .filter(|_| unless_remembered)
                .and_then(|m| answer_matched(&self.state, m, &request, Instant::now()));
            if let Some(response) = remembered {
                return Either::Left(futures::future::ready(Ok(response)));
            }
            let state = self.state.clone();
            let long = self.long.clone();
            let started = Instant::now();
            let route = matched.map_or("unmatched", |m| m.route().path);
            metrics::counter!("racing_http_long_reads_total", "route" => route).increment(1);
            return Either::Right(Either::Right(
                async move {
                    let answering = long.answer(move || answer(&state, &request, started));
                    Ok(match answering.await {
                        Some(Some(response)) => response,
                        // `long` found the path a route.
                        Some(None) => {
                            ApiError::Internal(anyhow::anyhow!("a long route went")).into_response()
                        }
                        None => {
                            ApiError::Internal(anyhow::anyhow!("the long reads' threads are gone"))
                                .into_response()
                        }
                    })
                }
                .boxed(),
            ));
        }
        match answer(&self.state, &request, Instant::now()) {
            Some(response) => Either::Left(futures::future::ready(Ok(response))),
            None => Either::Right(Either::Left(self.router.call(request))),
        }
    }
}

/// The mark of a request answered on a long reads' thread (`long.rs`): one for a route
/// whose work can grow with the data ([`super::route::Route::runs`]) or for a document
/// `as_of` a point not answered lately (but a profile's or results', whose reads are
/// bounded by their answer), so that what it reads holds up no other request, and stopped
/// at the request's deadline.
/// Decided once, where the pipeline admits it ([`position::asked`] reads the query's
/// names as the handlers do, percent-decoded, so that no spelling of `as_of` runs a read
/// that grows with the data inline), and read where it is answered.
#[derive(Clone, Copy)]
struct Blocking {
    /// Whether its answer is sent from memory, without the hand-over, where it is held
    /// there ([`super::route::Runs::ApartUnlessRemembered`], or an `as_of` answered
    /// lately).
    unless_remembered: bool,
}

/// Counts an answer made before any route ran (401, 413, 414, 429, 431, 503) in the
/// route metrics, so that an operator sees a flood of bad keys: under the document's
/// template where the path is one, else `unmatched`.
fn count_refusal(request: &Request, refusal: &Response, started: Instant) {
    let route = table::find(request.uri().path()).map_or("unmatched", |m| m.route().path);
    route_metrics(route, refusal.status().as_u16()).record(started.elapsed());
}

fn done(response: Response) -> <Api as Service<Request>>::Future {
    Either::Left(futures::future::ready(Ok(response)))
}

/// The answer of an admitted request as sent: a 304 if the client holds it, the key's
/// RateLimit headers, and `Vary` where compression did not add it (`plain`), since every
/// answer may be compressed for a client that asks.
fn conclude(
    response: Response,
    rate: RateHeaders,
    if_none_match: Option<HeaderValue>,
    plain: bool,
) -> Response {
    // Without a coding or a tag to compare, there is nothing to revalidate.
    let mut response = match (&if_none_match, plain) {
        (None, true) => response,
        _ => cache::revalidate(response, if_none_match.as_ref()),
    };
    let headers = response.headers_mut();
    rate.add_to(headers);
    if plain {
        headers.append(VARY, HeaderValue::from_static("accept-encoding"));
    }
    response
}

/// Every answer: its request id, and a log line of its status and time (an error for a
/// 5xx other than 503).
///
/// A 503 is the service's state, not a fault: still building its read models, at its
/// in-flight limit, or past the time limit. It is counted by route in
/// `racing_http_requests_total` and the state shows on `/readyz`; an error line for
/// each wrote one line a request at start-up, while clients polled, and would write
/// thousands a second when shedding load, the moment the service has least to spare.
fn finish(mut response: Response, id: HeaderValue, started: Instant) -> Response {
    response.headers_mut().insert(REQUEST_ID, id);
    let status = response.status().as_u16();
    // The time is read only when the line is written.
    let latency_ms = || started.elapsed().as_secs_f64() * 1000.0;
    if response.status().is_server_error() && response.status() != StatusCode::SERVICE_UNAVAILABLE {
        tracing::error!(status, latency_ms = latency_ms(), "response failed");
    } else {
        tracing::debug!(
            status,
            latency_ms = latency_ms(),
            "finished processing request"
        );
    }
    response
}

/// Every path answered without a key: the pricing site's pages, the public reference and
/// the feed's descriptions. Nothing under `/api/` is.
pub fn keyless_paths() -> impl Iterator<Item = &'static str> {
    crate::subscribe::PUBLIC_PAGES
        .into_iter()
        .chain(PUBLIC_PATHS)
        .chain([ASYNCAPI_PUBLIC_PATH, FEED_SCHEMA_PATH, FEED_ASYNCAPI_PATH])
}

/// Whether `path` is answered without a key ([`keyless_paths`]).
fn is_public(path: &str) -> bool {
    // Every document path is under /api/: one comparison for them, on the hot path.
    !path.starts_with("/api/") && keyless_paths().any(|p| p == path)
}

/// An oversized request line or header block, refused before anything else reads them;
/// else whether a header is `Racing-Min-Seq`, noted in the same pass over the headers, so
/// that a read without one does not look it up.
fn measured(request: &Request) -> Result<bool, ApiError> {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if target > MAX_URI_BYTES {
        return Err(ApiError::UriTooLong(MAX_URI_BYTES));
    }
    let headers = request.headers();
    let mut bytes = 0;
    let mut positioned = false;
    for (name, value) in headers {
        let name = name.as_str();
        bytes += name.len() + value.len();
        positioned |= name.len() == MIN_SEQ_HEADER.as_str().len() && name == MIN_SEQ_HEADER;
    }
    if headers.len() > MAX_HEADERS || bytes > MAX_HEADER_BYTES {
        return Err(ApiError::HeadersTooLarge(MAX_HEADERS, MAX_HEADER_BYTES));
    }
    Ok(positioned)
}

/// Whether a GET or HEAD carries a body: the API is read-only, and such a request is
/// refused, unread. (Other methods go on to routing, which answers them 405.)
fn carries_body(request: &Request) -> bool {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return false;
    }
    let headers = request.headers();
    let length = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim() != "0");
    length.unwrap_or(false) || headers.contains_key(TRANSFER_ENCODING)
}

/// The 429 of a key over its rate: `Retry-After` in whole seconds. (The RateLimit headers
/// go on every answer, this one included.)
fn refusal(retry_after: u64) -> Response {
    metrics::counter!("racing_rate_limited_total").increment(1);
    let mut response = ApiError::RateLimited(format!(
        "too many requests for this key; retry in {retry_after} s"
    ))
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
        response.headers_mut().insert(RETRY_AFTER, v);
    }
    response
}

/// The key's identity; a refusal comes before routing, so that nothing about the data,
/// not even which paths exist, leaks to someone without a key. The WebSocket
/// and its event stream alone may carry their key as `?api_key=` (browsers cannot set
/// their headers).
fn identify(state: &AppState, request: &Request) -> Result<Identity, Refused> {
    let header = request
        .headers()
        .get(API_KEY_HEADER)
        .and_then(|v| v.to_str().ok());
    match header {
        Some(_) => state.keys.identify(header),
        None if [ODDS_SOCKET_PATH, super::sse::LIVE_EVENTS_PATH]
            .contains(&request.uri().path()) =>
        {
            let query = request.uri().query().unwrap_or_default();
            let key = form_urlencoded::parse(query.as_bytes())
                .find(|(name, _)| name == "api_key")
                .map(|(_, value)| value);
            state.keys.identify(key.as_deref())
        }
        None => Err(Refused::Unknown),
    }
}

/// The client's request id if it sent one, else a random prefix chosen once per thread and
/// the thread's own counter: unique within the process and unlikely to repeat across
/// processes, for the cost of a thread-local increment (a v4 UUID asked the kernel for
/// randomness on every request, a visible share of the service's CPU under load; a
/// process-wide counter was a cache line bouncing between the cores).
fn request_id(request: &Request) -> HeaderValue {
    if let Some(id) = request.headers().get(REQUEST_ID) {
        return id.clone();
    }
    thread_local! {
        static NEXT: std::cell::Cell<(u64, u64)> = std::cell::Cell::new((rand::random(), 0));
    }
    let (prefix, n) = NEXT.with(|next| {
        let (prefix, n) = next.get();
        next.set((prefix, n.wrapping_add(1)));
        (prefix, n)
    });
    HeaderText::new()
        .hex(prefix, 16)
        .text("-")
        .hex(n, 12)
        .value()
        .unwrap_or_else(|| HeaderValue::from_static("-"))
}

/// The span of a request: method, path and request id. Never the query, which may hold
/// the WebSocket's `api_key`, and never a header value.
fn request_span(request: &Request, id: &HeaderValue) -> tracing::Span {
    let id = id.to_str().unwrap_or_default();
    tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), id)
}

#[cfg(test)]
mod tests;
