//! HTTP caching of the documents: a strong `ETag` on every successful answer and `304 Not
//! Modified` when the client already holds it. Results can be amended at any time, so
//! `Cache-Control: private, no-cache` lets clients keep a copy but has them revalidate
//! every use: a 304 costs one sled read and no body, and an amendment is never served stale.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// What every document answer carries.
pub const CACHE_CONTROL: &str = "private, no-cache";

/// The largest body this layer tags; documents are far smaller, so a larger body (there
/// is none today) is passed through untagged rather than buffered.
const MAX_TAGGED: usize = 16 * 1024 * 1024;

/// The strong validator of a body: its 128-bit xxh3, quoted.
pub fn etag(body: &[u8]) -> HeaderValue {
    let tag = format!("\"{:032x}\"", xxhash_rust::xxh3::xxh3_128(body));
    HeaderValue::from_str(&tag).unwrap_or_else(|_| HeaderValue::from_static("\"\""))
}

/// Whether an `If-None-Match` value matches `tag` (weak comparison, as RFC 9110 asks
/// for this header; `*` matches any current document).
fn matches(if_none_match: &str, tag: &str) -> bool {
    if_none_match.trim() == "*"
        || if_none_match
            .split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == tag)
}

/// Tags successful GET and HEAD answers and turns a matching `If-None-Match` into a 304.
pub(super) async fn conditional(request: Request, next: Next) -> Response {
    let cacheable = matches!(*request.method(), Method::GET | Method::HEAD);
    let if_none_match = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let response = next.run(request).await;
    if !cacheable || response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_TAGGED).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let tag = etag(&bytes);
    parts.headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    let fresh = if_none_match
        .as_deref()
        .zip(tag.to_str().ok())
        .is_some_and(|(inm, t)| matches(inm, t));
    parts.headers.insert(header::ETAG, tag);
    if fresh {
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove(header::CONTENT_TYPE);
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_compares_weakly_and_accepts_lists_and_star() {
        let tag = "\"abc\"";
        for hit in ["\"abc\"", "W/\"abc\"", "\"x\", \"abc\"", "*"] {
            assert!(matches(hit, tag), "{hit}");
        }
        for miss in ["\"abd\"", "abc", ""] {
            assert!(!matches(miss, tag), "{miss}");
        }
        assert_eq!(etag(b"{}"), etag(b"{}"));
        assert_ne!(etag(b"{}"), etag(b"[]"));
    }
}
