//! What the service offers feeders, against the real service and the events crate: the
//! feed's JSON Schema served without a key, version by version, the same as the copies
//! the repository keeps in `docs/feed/`, and taking every event of the demo's season;
//! `racing publish --check` and `--dry-run`, with no NATS.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use racing::http::{feed_asyncapi_text, feed_schema_text, FEED_ASYNCAPI_PATH, FEED_SCHEMA_PATH};
use racing_events::asyncapi::feed_asyncapi;
use racing_events::samples::{self, envelope};
use racing_events::schema::{feed_schema, FeedVersion};
use racing_events::{Envelope, Event};
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
    assert_eq!(lines[0], "line 2: wins is more than starts");
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

/// The sample feed docs/feeding.md walks through.
fn sample_feed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/examples/feed.ndjson")
}

#[tokio::test]
async fn the_sample_feed_passes_the_check_and_is_served_as_it_was_published() {
    let file = sample_feed();
    let text = std::fs::read_to_string(&file).expect("docs/examples/feed.ndjson");
    let events: Vec<Envelope> = text
        .lines()
        .map(|l| Envelope::parse(l.as_bytes()).expect("a valid event"))
        .collect();
    let kinds: std::collections::BTreeSet<&str> =
        events.iter().map(|e| e.event.type_name()).collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            "HorseProfileUpdated",
            "OddsUpdated",
            "RaceCardDeclared",
            "RaceResultPublished",
            "RaceStatusChanged",
            "RunnerScratched"
        ],
        "a day of every kind but a retraction"
    );
    let racing = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_racing"))
            .args(args)
            .arg(&file)
            .env_remove("RACING_NATS_URL")
            .env_remove("RACING_LOG")
            .output()
            .expect("racing runs")
    };
    let checked = racing(&["publish", "--check"]);
    let said = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!(": {} valid, 0 refused, 0 with", events.len())),
        "{said}"
    );

    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let server_dir = nats.credentials_dir();
    let server_dir = server_dir.parent().expect("the server's directory");
    let url = nats.url();
    let published = racing(&[
        "publish",
        "--nats-url",
        &url,
        "--data-dir",
        server_dir.to_str().expect("a path"),
    ]);
    let said = String::from_utf8_lossy(&published.stdout);
    assert_eq!(published.status.code(), Some(0), "{said}");
    // Each event's position first (`line N: seq S`), then the counts.
    let counts = format!("published {}, duplicate 0, rejected 0", events.len());
    assert!(said.lines().any(|l| l.starts_with(&counts)), "{said}");

    // Read back, once the service has applied the file (the log's first events): what
    // each document serves is what the file said.
    app.projected(events.len() as u64).await;
    let mut cards = Vec::new();
    let mut scratched = Vec::new();
    let mut prices: BTreeMap<&str, (Option<f64>, Option<f64>)> = BTreeMap::new();
    let mut status = None;
    let mut result = None;
    for e in &events {
        match &e.event {
            Event::HorseProfileUpdated(p) => {
                let (code, doc) = app.get(&format!("/api/v1/horses/{}", p.horse_no)).await;
                assert_eq!(code, StatusCode::OK, "{doc}");
                assert_eq!(doc["horse_name"], p.horse_name.as_str());
                assert_eq!(doc["total_stakes"], p.total_stakes);
                assert_eq!(doc["starts"], p.starts);
            }
            Event::RaceCardDeclared(c) => cards.push(c),
            Event::RunnerScratched(s) => scratched.push(s.horse_no.as_str()),
            Event::OddsUpdated(o) => {
                for r in &o.odds {
                    prices.insert(r.horse_no.as_str(), (r.win_odds, r.place_odds));
                }
            }
            Event::RaceStatusChanged(s) => status = Some(s.status.as_str()),
            Event::RaceResultPublished(r) => result = Some(r),
            Event::RaceRetracted(_) => {}
        }
    }
    let [card] = cards[..] else {
        panic!("one card")
    };
    let result = result.expect("a result");
    let day = &card.date;
    let number = card.race_number;

    let (code, served) = app.get(&format!("/api/v1/results/{day}/{number}")).await;
    assert_eq!(code, StatusCode::OK, "{served}");
    let placings = |runners: &Value| -> Vec<(String, Value)> {
        runners
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                (
                    r["horse_no"].as_str().unwrap_or_default().to_owned(),
                    r["position"].clone(),
                )
            })
            .collect()
    };
    let given: Vec<(String, Value)> = result
        .runners
        .iter()
        .map(|r| (r.horse_no.clone(), r.position.into()))
        .collect();
    assert_eq!(placings(&served["runners"]), given, "{served}");

    let (code, racecard) = app.get(&format!("/api/v1/racecards/{day}")).await;
    assert_eq!(code, StatusCode::OK, "{racecard}");
    let race = &racecard["races"][0];
    assert_eq!(race["race_number"], number);
    assert_eq!(race["status"], status.expect("a status"));
    let declared: Vec<&str> = card
        .runners
        .iter()
        .map(|r| r.horse_no.as_str())
        .filter(|h| !scratched.contains(h))
        .collect();
    let listed: Vec<&str> = race["runners"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["horse_no"].as_str())
        .collect();
    assert_eq!(listed, declared, "the card without the scratched runner");

    let (code, odds) = app.get(&format!("/api/v1/odds/{day}/{number}")).await;
    assert_eq!(code, StatusCode::OK, "{odds}");
    for runner in odds["odds"].as_array().into_iter().flatten() {
        let horse = runner["horse_no"].as_str().unwrap_or_default();
        if scratched.contains(&horse) {
            continue;
        }
        let (win, place) = prices.get(horse).copied().unwrap_or_default();
        assert_eq!(
            (runner["win_odds"].as_f64(), runner["place_odds"].as_f64()),
            (win, place),
            "{horse}: {odds}"
        );
    }
    assert_eq!(
        odds["odds"].as_array().map(Vec::len),
        Some(prices.len()),
        "every runner priced: {odds}"
    );
}
