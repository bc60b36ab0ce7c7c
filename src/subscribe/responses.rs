//! The answers the subscription pages share: HTML that nothing may frame, a problem's
//! page, and the pages of a client that posts too often and of a full link bucket.

use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use super::pages;

/// An HTML answer.
pub(super) fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, Html(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Nothing may frame the forms, and the pages load nothing from elsewhere.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    response
}

pub(super) fn problem(status: StatusCode, title: &str, text: &str) -> Response {
    html(status, pages::message(title, text))
}

/// The 429 page: when to come back.
pub(super) fn too_many(wait: Duration) -> Response {
    let minutes = wait.as_secs().div_ceil(60).max(1);
    let mut response = problem(
        StatusCode::TOO_MANY_REQUESTS,
        "Too many requests",
        &format!(
            "Please come back in {}.",
            crate::text::count(minutes, "minute", "minutes")
        ),
    );
    if let Ok(v) = HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// The 503 page of a form while the link bucket is full: nothing was recorded or sent.
pub(super) fn full() -> Response {
    let mut response = problem(
        StatusCode::SERVICE_UNAVAILABLE,
        "Too many forms are waiting",
        "More links are waiting to be followed than this site keeps just now, so this \
         form was not taken and nothing was sent. Please try again in an hour.",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("3600"));
    response
}
