//! What feeders read, without a key: the feed's JSON Schema, one document for each
//! version of the contract (`racing_events::schema`), at `/feed/schema.json` (the latest)
//! and `/feed/schema.json?version=1.0` (or `1.1`, `1.2`); its AsyncAPI 3.0 document at
//! `/feed/asyncapi.json`. Rendered once.

use std::sync::LazyLock;

use axum::extract::RawQuery;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use racing_events::asyncapi::feed_asyncapi;
use racing_events::schema::{feed_schema, FeedVersion};

use super::described::{FEED_ASYNCAPI_PATH, FEED_SCHEMA_PATH};
use super::error::ApiError;
use super::query::{clip, Query};
use super::respond::with_type;

/// Each version's schema as served, pretty-printed as the repository keeps it.
static SCHEMAS: LazyLock<Vec<(FeedVersion, Bytes)>> = LazyLock::new(|| {
    FeedVersion::ALL
        .into_iter()
        .map(|v| (v, Bytes::from(schema_text(v))))
        .collect()
});

/// The AsyncAPI document as served.
static ASYNCAPI: LazyLock<Bytes> = LazyLock::new(|| Bytes::from(asyncapi_text()));

/// The feed's AsyncAPI document as text: what `/feed/asyncapi.json` answers and
/// `docs/feed/asyncapi.json` holds.
pub fn asyncapi_text() -> String {
    let mut text = serde_json::to_string_pretty(&feed_asyncapi()).unwrap_or_default();
    text.push('\n');
    text
}

/// The schema of `version` as text: what `/feed/schema.json` answers and what
/// `docs/feed/` holds.
pub fn schema_text(version: FeedVersion) -> String {
    let mut text = serde_json::to_string_pretty(&feed_schema(version)).unwrap_or_default();
    text.push('\n');
    text
}

/// The feed's descriptions: no key, as they hold no data.
pub(super) fn public_routes() -> Router {
    LazyLock::force(&SCHEMAS);
    LazyLock::force(&ASYNCAPI);
    Router::new()
        .route(FEED_SCHEMA_PATH, get(schema_json))
        .route(FEED_ASYNCAPI_PATH, get(asyncapi_json))
}

/// The AsyncAPI 3.0 document of the feed.
async fn asyncapi_json(RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    Ok(with_type(ASYNCAPI.clone(), "application/json"))
}

/// The JSON Schema of the feed: the latest version, or the one `?version=` names.
async fn schema_json(RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let query = Query::parse(raw.as_deref(), &["version"])?;
    let version = match query.0.get("version") {
        None => FeedVersion::LATEST,
        Some(v) => FeedVersion::parse(v).ok_or_else(|| {
            let known: Vec<&str> = FeedVersion::ALL.iter().map(|v| v.as_str()).collect();
            ApiError::BadRequest(format!(
                "version `{}` is none of the feed's: {}",
                clip(v),
                known.join(", ")
            ))
        })?,
    };
    let body = SCHEMAS
        .iter()
        .find(|(v, _)| *v == version)
        .map(|(_, body)| body.clone())
        .unwrap_or_default();
    Ok(with_type(body, "application/schema+json"))
}
