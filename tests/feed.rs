//! What the service offers feeders, against the real service and the events crate: the
//! feed's JSON Schema served without a key, version by version, the same as the copies
//! the repository keeps in `docs/feed/`, and taking every event of the demo's season.

use std::path::PathBuf;

use racing::http::{feed_schema_text, FEED_SCHEMA_PATH};
use racing_events::schema::{feed_schema, FeedVersion};
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats};

/// The repository's copy of a version's schema.
fn kept(version: FeedVersion) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs/feed")
        .join(format!("schema-v{}.json", version.as_str()))
}

#[tokio::test]
async fn the_feed_schema_is_served_without_a_key_version_by_version() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    let get = |query: &'static str| {
        let url = format!("{}{FEED_SCHEMA_PATH}{query}", app.base);
        let client = app.client.clone();
        async move { client.get(url).send().await.expect("request") }
    };
    let latest = get("").await;
    assert_eq!(latest.status(), StatusCode::OK, "no key needed");
    assert_eq!(
        latest
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/schema+json")
    );
    assert!(latest.headers().get("etag").is_some());
    let latest: Value = latest.json().await.expect("JSON");
    assert_eq!(latest, feed_schema(FeedVersion::LATEST));
    for (query, version) in [
        ("?version=1.0", FeedVersion::V1_0),
        ("?version=1.1", FeedVersion::V1_1),
        ("?version=v1.2", FeedVersion::V1_2),
    ] {
        let answer = get(query).await;
        assert_eq!(answer.status(), StatusCode::OK, "{query}");
        let schema: Value = answer.json().await.expect("JSON");
        assert_eq!(schema["x-feed-version"], version.as_str(), "{query}");
        assert_eq!(schema, feed_schema(version), "{query}");
    }
    for (query, words) in [
        (
            "?version=2.0",
            "version `2.0` is none of the feed's: 1.0, 1.1, 1.2",
        ),
        ("?v=1.0", "unknown query parameter `v`"),
    ] {
        let answer = get(query).await;
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{query}");
        let body: Value = answer.json().await.expect("JSON");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{query}: {body}");
    }
}

/// `RACING_BLESS=1` writes the copies from the code, for a change to the contract.
#[test]
fn the_repository_keeps_each_version_of_the_feed_schema_as_served() {
    for version in FeedVersion::ALL {
        let path = kept(version);
        let text = feed_schema_text(version);
        if std::env::var_os("RACING_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().expect("docs/feed")).expect("docs/feed");
            std::fs::write(&path, &text).expect("the copy written");
        }
        let copy = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; RACING_BLESS=1 writes it", path.display()));
        let copy: Value = serde_json::from_str(&copy).expect("the copy is JSON");
        assert_eq!(
            copy,
            feed_schema(version),
            "{} differs from the code's schema; RACING_BLESS=1 writes it again",
            path.display()
        );
    }
}

#[test]
fn every_event_of_the_demo_season_passes_the_feed_schema() {
    let schema = jsonschema::options()
        .build(&feed_schema(FeedVersion::LATEST))
        .expect("a schema");
    let today = "2026-11-28".parse().expect("a date");
    let feed = racing_demo::season(42, today);
    assert!(feed.events.len() > 1_000, "a season: {}", feed.events.len());
    let mut types = std::collections::BTreeSet::new();
    for e in &feed.events {
        let value: Value = serde_json::from_str(&e.to_json()).expect("JSON");
        if let Some(error) = schema.iter_errors(&value).next() {
            panic!("{}: {error} at {}", e.to_json(), error.instance_path());
        }
        types.insert(e.event.type_name());
    }
    assert!(types.len() >= 5, "the season's types: {types:?}");
}
