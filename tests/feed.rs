//! What the service offers feeders, against the real service and the events crate: the
//! feed's JSON Schema served without a key, version by version, the same as the copies
//! the repository keeps in `docs/feed/`, and taking every event of the demo's season;
//! `racing publish --check` and `--dry-run`, with no NATS.

use std::path::PathBuf;
use std::process::Command;

use racing::http::{feed_asyncapi_text, feed_schema_text, FEED_ASYNCAPI_PATH, FEED_SCHEMA_PATH};
use racing_events::samples::{self, envelope};
use racing_events::schema::asyncapi::feed_asyncapi;
use racing_events::schema::{feed_schema, FeedVersion};
use racing_events::Envelope;
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
fn the_repository_keeps_the_feed_schema_of_each_version_and_its_asyncapi_document() {
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
    // The Python client's feeder carries the latest, to check events before it sends them.
    let packaged = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("clients/python/src/racing_client/feed_schema.json");
    if std::env::var_os("RACING_BLESS").is_some() {
        std::fs::write(&packaged, feed_schema_text(FeedVersion::LATEST)).expect("written");
    }
    let copy: Value = serde_json::from_str(&std::fs::read_to_string(&packaged).unwrap_or_default())
        .unwrap_or_default();
    assert_eq!(
        copy,
        feed_schema(FeedVersion::LATEST),
        "{}: RACING_BLESS=1 writes it again",
        packaged.display()
    );
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/feed/asyncapi.json");
    if std::env::var_os("RACING_BLESS").is_some() {
        std::fs::write(&path, feed_asyncapi_text()).expect("the copy written");
    }
    let copy = std::fs::read_to_string(&path).unwrap_or_default();
    let copy: Value = serde_json::from_str(&copy).unwrap_or_default();
    assert_eq!(
        copy,
        feed_asyncapi(),
        "{}: RACING_BLESS=1 writes it again",
        path.display()
    );
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

#[test]
fn publish_check_names_each_refused_line_and_exits_3_with_no_nats() {
    let dir = TempDir::new().expect("temp dir");
    let good = envelope(samples::odds("2026-11-21", 3, &[("E271", 3.5)]));
    let bad = envelope(samples::profile("E271", "GOLDEN SIXTY"))
        .to_json()
        .replace("\"wins\":2", "\"wins\":12");
    let file = dir.path().join("events.ndjson");
    std::fs::write(&file, format!("{}\n{bad}\n", good.to_json())).expect("written");
    // No NATS anywhere: a URL where none listens shows that none is tried.
    let racing = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_racing"))
            .args(args)
            .arg(&file)
            .env("RACING_NATS_URL", "nats://127.0.0.1:1")
            .env("RACING_DATA_DIR", dir.path())
            .output()
            .expect("racing runs")
    };
    let checked = racing(&["publish", "--check"]);
    let out = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(3), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "line 2: wins: is more than starts");
    assert!(
        lines[1].ends_with(": 1 valid, 1 refused, 0 with a repeated event_id"),
        "{out}"
    );

    let dry = racing(&["publish", "--dry-run"]);
    let out = String::from_utf8_lossy(&dry.stdout);
    assert_eq!(dry.status.code(), Some(3), "{out}");
    assert_eq!(
        out.lines().next(),
        Some(
            format!(
                "line 1: racing.odds.2026-11-21.3 OddsUpdated {}",
                good.event_id
            )
            .as_str()
        )
    );

    std::fs::write(&file, format!("{}\n", good.to_json())).expect("written");
    let clean = racing(&["publish", "--check"]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
}

/// The official AsyncAPI 3.0.0 JSON Schema (`tests/fixtures/asyncapi/`).
fn asyncapi_validator() -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/asyncapi/3.0.0.json");
    let text = std::fs::read_to_string(&path).expect("the official schema");
    let schema: Value = serde_json::from_str(&text).expect("JSON");
    jsonschema::validator_for(&schema).expect("the official schema compiles")
}

fn asyncapi_errors(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .take(10)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[tokio::test]
async fn the_feed_asyncapi_document_is_served_and_valid_by_the_official_schema() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    let answer = app
        .client
        .get(format!("{}{FEED_ASYNCAPI_PATH}", app.base))
        .send()
        .await
        .expect("request");
    assert_eq!(answer.status(), StatusCode::OK, "no key needed");
    let doc: Value = answer.json().await.expect("JSON");
    assert_eq!(doc, feed_asyncapi());
    let official = asyncapi_validator();
    assert_eq!(asyncapi_errors(&official, &doc), Vec::<String>::new());
    // The socket's document too, under the same schema.
    let socket = serde_json::to_value(&*racing::http::asyncapi::DOCUMENT).expect("JSON");
    assert_eq!(asyncapi_errors(&official, &socket), Vec::<String>::new());
    // The official schema refuses what AsyncAPI 3.0 does not allow.
    let mut wrong = doc.clone();
    wrong["operations"]["sendOddsUpdated"]["action"] = "publish".into();
    wrong["channels"]["odds"]["parameters"]["date"]["schema"] = serde_json::json!({});
    assert_eq!(
        asyncapi_errors(&official, &wrong).len(),
        2,
        "{:?}",
        asyncapi_errors(&official, &wrong)
    );

    // One channel a kind of subject, its parameters the subject's; an operation a type,
    // the feeder's: it sends.
    let channels = doc["channels"].as_object().expect("channels");
    assert_eq!(
        channels.keys().map(String::as_str).collect::<Vec<_>>(),
        ["horses", "cards", "results", "odds", "status"]
    );
    assert_eq!(
        doc["channels"]["results"]["address"],
        "racing.results.{date}.{race_number}"
    );
    for p in ["date", "race_number"] {
        assert_eq!(
            doc["channels"]["results"]["parameters"][p]["location"],
            format!("$message.payload#/data/{p}")
        );
    }
    let operations = doc["operations"].as_object().expect("operations");
    assert_eq!(operations.len(), 7);
    for op in operations.values() {
        assert_eq!(op["action"], "send");
    }
    // Every reference resolves, and each message's payload takes a sample event of its type
    // and carries the Nats-Msg-Id header.
    let text = doc.to_string();
    for r in text.split("\"$ref\":\"").skip(1) {
        let pointer = r.split('"').next().unwrap_or_default();
        let pointer = pointer.strip_prefix('#').expect("local");
        assert!(
            doc.pointer(pointer).is_some(),
            "{pointer} resolves to nothing"
        );
    }
    for event in [
        samples::profile("E271", "GOLDEN SIXTY"),
        samples::odds("2026-11-21", 3, &[("E271", 3.5)]),
        samples::retraction("2026-11-21", "Sha Tin", 3, "wrong date"),
    ] {
        let message = &doc["components"]["messages"][event.type_name()];
        assert_eq!(message["headers"]["required"][0], "Nats-Msg-Id");
        let mut root = doc.clone();
        root["$ref"] = message["payload"]["$ref"].clone();
        let payload = jsonschema::validator_for(&root).expect("compiles");
        let value: Value = serde_json::from_str(&envelope(event).to_json()).expect("JSON");
        assert!(payload.is_valid(&value), "{value}");
        let mut wrong = value.clone();
        wrong["data"] = serde_json::json!({});
        assert!(!payload.is_valid(&wrong), "an empty body");
    }
}

/// Publishes `payload` as the event `e`'s message, as the feeder `name` would, naming
/// itself, past any check of its own: what only the service refuses.
async fn publish_as(client: &async_nats::Client, name: &str, e: &Envelope, payload: String) {
    let js = async_nats::jetstream::new(client.clone());
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(
        async_nats::header::NATS_MESSAGE_ID,
        e.event_id.to_string().as_str(),
    );
    headers.insert(racing_events::FEEDER_HEADER, name);
    js.publish_with_headers(e.subject(), headers, payload.into())
        .await
        .expect("published")
        .await
        .expect("stored");
}

/// The refusals `feeder` reads through `client`: read again until there are some, for
/// at most `within` of `since`.
async fn refusals_of(
    client: &async_nats::Client,
    feeder: &str,
    since: std::time::Instant,
    within: std::time::Duration,
) -> Vec<racing::refusals::Refusal> {
    loop {
        let mut found = Vec::new();
        racing::refusals::read(client, "RACING", feeder, None, |r| found.push(r))
            .await
            .expect("a feeder reads its own");
        if !found.is_empty() || since.elapsed() > within {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn each_feeder_reads_its_own_refusals_within_two_seconds_and_no_other_s() {
    let mut nats = Nats::start_with_feeders(&["a", "b"]).await;
    // Feeder b's try at a's refusals is refused by NATS, and the server says so.
    nats.violations_expected = true;
    let dir = TempDir::new().expect("temp dir");
    let _app = App::start(&nats, dir.path()).await;
    let seeds = nats.credentials_dir();
    let connect = |name: &str| {
        let seed = std::fs::read_to_string(seeds.join(format!("{name}.nk"))).expect("a seed");
        let auth = racing::nats::ClientAuth::nkey(seed.trim());
        let url = nats.url();
        async move {
            racing::nats::connect(&url, &auth, racing::nats::Role::Feeder)
                .await
                .expect("the feeder connects")
        }
    };
    let (a, b) = (connect("feeder-a").await, connect("feeder-b").await);

    // A profile whose wins are more than its starts: valid JSON that only the service
    // refuses. Each feeder sends one.
    let refused = |wins: i64| {
        let e = envelope(samples::profile("E271", "GOLDEN SIXTY"));
        let payload = e
            .to_json()
            .replace("\"wins\":2", &format!("\"wins\":{wins}"));
        (e, payload)
    };
    let (from_a, payload_a) = refused(11);
    let sent = std::time::Instant::now();
    publish_as(&a, "feeder-a", &from_a, payload_a).await;
    let found = refusals_of(&a, "feeder-a", sent, std::time::Duration::from_secs(5)).await;
    let took = sent.elapsed();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        took < std::time::Duration::from_secs(2),
        "the refusal came after {took:?}"
    );
    let r = &found[0];
    assert_eq!(r.feeder, "feeder-a");
    assert_eq!(r.subject, "racing.horses.E271");
    assert_eq!(
        r.event_id.as_deref(),
        Some(from_a.event_id.to_string().as_str())
    );
    assert_eq!(r.reason, "wins is more than starts");
    assert!(r.seq > 0 && r.published_at.ends_with('Z'), "{r:?}");

    let (from_b, payload_b) = refused(12);
    publish_as(&b, "feeder-b", &from_b, payload_b).await;
    // An event with no feeder's name is the operator's dead letter only.
    let (anonymous, payload) = refused(13);
    nats.publish_raw(
        &anonymous.subject(),
        payload.as_bytes(),
        Some(&anonymous.event_id.to_string()),
    )
    .await;
    let found_b = refusals_of(&b, "feeder-b", sent, std::time::Duration::from_secs(10)).await;
    assert_eq!(
        found_b
            .iter()
            .map(|r| r.event_id.clone())
            .collect::<Vec<_>>(),
        [Some(from_b.event_id.to_string())]
    );
    let again = refusals_of(&a, "feeder-a", sent, std::time::Duration::ZERO).await;
    assert_eq!(
        again, found,
        "a sees b's refusal and the anonymous one nowhere"
    );
    // b may not read a's: its consumer on a's keys is refused.
    let err = racing::refusals::read(&b, "RACING", "feeder-a", None, |_| {})
        .await
        .expect_err("b reads nothing of a's");
    assert!(format!("{err:#}").contains("feeder-a"), "{err:#}");

    // The same through `racing refusals`, as feeder a with its nkey.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["refusals", "--nats-url", &nats.url(), "--nats-nkey"])
        .arg(seeds.join("feeder-a.nk"))
        .env_remove("RACING_NATS_URL")
        .env("RACING_DATA_DIR", dir.path())
        .output()
        .await
        .expect("racing runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [format!(
            "seq {} at {} on racing.horses.E271 event {}: wins is more than starts",
            r.seq, r.published_at, from_a.event_id
        )]
    );
}
