//! The one error type of the HTTP API. Every error answers `{"error": CODE, "message": TEXT}`
//! (`docs/api.md`, Errors); 5xx details go to the log, never to the client.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// The exact message of the 401 every client was promised (`docs/api.md`, Errors).
pub const UNAUTHORIZED_MESSAGE: &str = "Invalid or missing API key";

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 `bad_request`: a malformed date, race number or query parameter; the message
    /// says which.
    #[error("{0}")]
    BadRequest(String),
    /// 401 `unauthorized`: a missing or wrong key, whatever the path.
    #[error("{UNAUTHORIZED_MESSAGE}")]
    Unauthorized,
    /// 404 `not_found`: nothing under that name; the message says what was looked for.
    #[error("{0}")]
    NotFound(String),
    /// 405 `method_not_allowed`: the API is read-only.
    #[error("only GET and HEAD are allowed")]
    MethodNotAllowed,
    /// 413 `body_not_accepted`: the API is read-only and reads no request body.
    #[error("the API takes no request body")]
    BodyNotAccepted,
    /// 414 `uri_too_long`: the request target is over the limit.
    #[error("the request target is over {0} bytes")]
    UriTooLong(usize),
    /// 409 `limit_reached`: the key has as many of something as its plan allows (webhook
    /// endpoints).
    #[error("{0}")]
    LimitReached(String),
    /// 429 `rate_limited`: too much for this key; `Retry-After` says when to come back.
    #[error("{0}")]
    RateLimited(String),
    /// 431 `headers_too_large`: too many header fields, or too many header bytes.
    #[error("at most {0} header fields and {1} header bytes are accepted")]
    HeadersTooLarge(usize, usize),
    /// 503 `unavailable`: the read models are not built yet.
    #[error("{0}")]
    Unavailable(String),
    /// 503 `unavailable`: a read that names a position (`min_seq`, `Racing-Min-Seq`, an
    /// `as_of` past the checkpoint) the read models here had not reached within the
    /// wait; `Retry-After` and the `Racing-Checkpoint` header and the body's
    /// `checkpoint` say where they stand.
    #[error(
        "the read models here hold the log up to {checkpoint}, not yet {wanted}; retry shortly"
    )]
    Behind {
        /// The position the request named.
        wanted: u64,
        /// The checkpoint the read models held when the wait ran out.
        checkpoint: u64,
    },
    /// 404 `not_found`: a position past the end of the log: no event has it yet.
    #[error("no position {wanted} in the log: it ends at {end}")]
    PastTheLog {
        /// The position the request named.
        wanted: u64,
        /// The stream's last sequence.
        end: u64,
    },
    /// 503 `unavailable`: a managed key, while this replica cannot confirm that it holds
    /// every revocation (the key registry out of reach for longer than allowed).
    #[error("API keys cannot be checked for revocation on this server just now (the key registry is out of reach); retry shortly")]
    KeysUnchecked,
    /// 500 `internal`: a bug or a store failure, logged with its details.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
    /// Never sent: a route that runs apart unless its answer is remembered
    /// ([`super::route::Runs::ApartUnlessRemembered`]), asked on a short reads' thread,
    /// holds no answer in memory; the pipeline hands the request to a long reads' thread.
    /// Sent only by a bug, as a 500 `internal`.
    #[error("internal error: an answer not held in memory was asked for on a short reads' thread")]
    NotRemembered,
}

impl ApiError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::NotFound(_) | ApiError::PastTheLog { .. } => {
                (StatusCode::NOT_FOUND, "not_found")
            }
            ApiError::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::BodyNotAccepted => (StatusCode::PAYLOAD_TOO_LARGE, "body_not_accepted"),
            ApiError::UriTooLong(_) => (StatusCode::URI_TOO_LONG, "uri_too_long"),
            ApiError::LimitReached(_) => (StatusCode::CONFLICT, "limit_reached"),
            ApiError::RateLimited(_) => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            ApiError::HeadersTooLarge(..) => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "headers_too_large",
            ),
            ApiError::Unavailable(_) | ApiError::KeysUnchecked | ApiError::Behind { .. } => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            ApiError::Internal(_) | ApiError::NotRemembered => {
                (StatusCode::INTERNAL_SERVER_ERROR, "internal")
            }
        }
    }
}

impl From<racing_projections::StoreError> for ApiError {
    fn from(e: racing_projections::StoreError) -> Self {
        match e {
            racing_projections::StoreError::TooLong => ApiError::Unavailable(
                "the request took too long: it reads more than its time allows; ask for less \
                 (a longer name, a smaller page, a later `since`) or retry shortly"
                    .into(),
            ),
            e => ApiError::Internal(e.into()),
        }
    }
}

/// The body of every error.
#[derive(Serialize, ToSchema)]
#[schema(examples(json!({"error": "not_found", "message": "no horse E999"})))]
pub struct ErrorBody<'a> {
    /// What went wrong, as a stable code.
    #[schema(value_type = ErrorCode)]
    error: &'a str,
    /// For people: says which input was wrong or what was looked for; echoes at most 64
    /// characters of client input and never internal details.
    message: &'a str,
    /// Only on the 503 of a read whose position (`min_seq`, `Racing-Min-Seq`, `as_of`)
    /// the read models had not reached in time: the checkpoint they hold, as the
    /// `Racing-Checkpoint` header also says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0)]
    checkpoint: Option<u64>,
}

/// The header of a 503 for a position not reached in time: the checkpoint the read
/// models hold.
pub const RACING_CHECKPOINT: axum::http::HeaderName =
    axum::http::HeaderName::from_static("racing-checkpoint");

/// The error codes: `bad_request` (400), `unauthorized` (401), `not_found` (404),
/// `method_not_allowed` (405), `limit_reached` (409), `body_not_accepted` (413),
/// `uri_too_long` (414), `rate_limited` (429), `headers_too_large` (431), `internal` (500), `unavailable` (503).
// Only described: the codes are written by `ApiError::status_and_code`, and a test checks
// that the two list the same.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum ErrorCode {
    /// 400.
    BadRequest,
    /// 401.
    Unauthorized,
    /// 404.
    NotFound,
    /// 405.
    MethodNotAllowed,
    /// 409.
    LimitReached,
    /// 413.
    BodyNotAccepted,
    /// 414.
    UriTooLong,
    /// 429.
    RateLimited,
    /// 431.
    HeadersTooLarge,
    /// 500.
    Internal,
    /// 503.
    Unavailable,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(e) = &self {
            tracing::error!(error = format!("{e:#}"), "internal error");
        }
        let (status, code) = self.status_and_code();
        let message = self.to_string();
        let checkpoint = match self {
            ApiError::Behind { checkpoint, .. } => Some(checkpoint),
            _ => None,
        };
        let body = serde_json::to_vec(&ErrorBody {
            error: code,
            message: &message,
            checkpoint,
        })
        .unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        match self {
            ApiError::MethodNotAllowed => {
                headers.insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            }
            ApiError::Unavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            ApiError::Behind { checkpoint, .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                headers.insert(RACING_CHECKPOINT, HeaderValue::from(checkpoint));
            }
            ApiError::KeysUnchecked => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            ApiError::RateLimited(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            _ => {}
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use racing_projections::StoreError;

    #[test]
    fn a_read_past_its_deadline_is_a_503_and_a_damaged_record_a_500() {
        let late = ApiError::from(StoreError::TooLong).into_response();
        assert_eq!(late.status(), StatusCode::SERVICE_UNAVAILABLE);
        let damaged = ApiError::from(StoreError::Corrupt("a record".into())).into_response();
        assert_eq!(damaged.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
