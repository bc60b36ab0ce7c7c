//! HTTP caching of the documents: a strong `ETag` on every successful answer and `304 Not
//! Modified` when the client already holds it. Results can be amended at any time, so
//! `Cache-Control: private, no-cache` lets clients keep a copy but has them revalidate
//! every use: a 304 costs one sled read and no body, and an amendment is never served stale.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;

/// What every document answer carries.
pub const CACHE_CONTROL: &str = "private, no-cache";

/// What an answer as of a point of the log carries: it never changes.
pub const CACHE_CONTROL_IMMUTABLE: &str = "private, max-age=31536000, immutable";

/// Marks a document answer: its strong `ETag` (of the uncompressed body: the 128-bit xxh3
/// that `racing_projections::etag` makes) and the `Cache-Control` of every document.
pub fn tag(response: &mut Response, etag: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(header::ETAG, etag);
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
}

/// Marks an answer that never changes (a document as of a point of the log): its strong
/// `ETag`, and a `Cache-Control` that lets the client keep it a year without asking.
pub fn tag_immutable(response: &mut Response, etag: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(header::ETAG, etag);
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL_IMMUTABLE),
    );
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

/// After compression: gives a compressed answer a strong `ETag` of its own (the
/// document's, with the coding appended inside the quotes, as each coding is its own
/// representation and compresses the same bytes the same way), and turns a 200 whose tag
/// the client's `If-None-Match` (of a GET or HEAD) matches into a 304 without a body. The
/// handlers tag the documents they serve, so nothing here reads or hashes a body.
pub(super) fn revalidate(mut response: Response, if_none_match: Option<&HeaderValue>) -> Response {
    if response.status() != StatusCode::OK {
        return response;
    }
    let headers = response.headers_mut();
    let Some(tag) = headers.get(header::ETAG).and_then(|t| t.to_str().ok()) else {
        return response;
    };
    if let Some(coding) = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|c| c.to_str().ok())
    {
        let coded = format!("{}-{coding}\"", tag.trim_end_matches('"'));
        if let Ok(coded) = HeaderValue::from_str(&coded) {
            headers.insert(header::ETAG, coded);
        }
    }
    let fresh = match (if_none_match, headers.get(header::ETAG)) {
        (Some(inm), Some(tag)) => inm
            .to_str()
            .ok()
            .zip(tag.to_str().ok())
            .is_some_and(|(inm, tag)| matches(inm, tag)),
        _ => false,
    };
    if !fresh {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    parts.status = StatusCode::NOT_MODIFIED;
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::empty())
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
    }
}
