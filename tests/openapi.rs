//! The OpenAPI document and the HTML reference as the service serves them: behind the key
//! like every `/api/v1` path, OpenAPI 3.1, and describing exactly the routes there are.

use std::collections::BTreeSet;

use racing::http::asyncapi::DOCUMENT;
use racing::http::{
    ASYNCAPI_PATH, ASYNCAPI_PUBLIC_PATH as PUBLIC_PATH, DOCS_PATH, INDEX_PATH, ODDS_SOCKET_PATH,
    OPENAPI_PATH, ROUTES,
};
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats, KEY};

/// Every route of `racing::http::api`: the table's, and the router's.
fn routes() -> Vec<&'static str> {
    let table = ROUTES.iter().map(|r| r.path);
    table
        .chain([ODDS_SOCKET_PATH, OPENAPI_PATH, DOCS_PATH, ASYNCAPI_PATH])
        .chain(racing::http::webhooks::PATHS)
        .chain([racing::http::sse::LIVE_EVENTS_PATH])
        .collect()
}

async fn service() -> (Nats, App, TempDir) {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    (nats, app, dir)
}

/// GET with the test key: status, content type and body.
async fn fetch(app: &App, path: &str) -> (StatusCode, String, String) {
    let res = app.response(path).await;
    let status = res.status();
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, content_type, res.text().await.expect("body"))
}

#[tokio::test]
async fn openapi_document_needs_the_key_is_3_1_and_describes_every_route() {
    let (_nats, app, _dir) = service().await;
    let (status, body) = app.get_with("/api/v1/openapi.json", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "unauthorized");

    let (status, spec) = app.get("/api/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let version = spec["openapi"].as_str().expect("openapi version");
    assert!(version.starts_with("3.1"), "{version}");
    assert_eq!(spec["info"]["version"], racing::http::VERSION);
    let described: BTreeSet<&str> = spec["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(described, routes().into_iter().collect::<BTreeSet<_>>());

    // And every described path is routed: with example parameters, none meets the
    // router's fallback.
    for path in &described {
        let concrete = match ROUTES.iter().find(|r| r.path == *path) {
            Some(route) => route.example(),
            // The event stream answers a bad date at once, where a good one would stream.
            None if *path == racing::http::sse::LIVE_EVENTS_PATH => format!("{path}?date=x"),
            None => path.replace("{id}", "ep_0123456789abcdef"),
        };
        assert!(!concrete.contains('{'), "{concrete}");
        let (status, _, body) = fetch(&app, &concrete).await;
        let body: Value = serde_json::from_str(&body).unwrap_or_default();
        assert_ne!(body["message"], "no such path", "{path} ({status})");
    }
    let schemes = &spec["components"]["securitySchemes"];
    assert_eq!(schemes["api_key"]["in"], "header");
    assert_eq!(schemes["api_key"]["name"], "X-API-Key");
}

#[tokio::test]
async fn docs_page_needs_the_key_and_is_self_contained_html() {
    let (_nats, app, _dir) = service().await;
    let (status, body) = app.get_with("/api/v1/docs", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "unauthorized");

    let (status, content_type, page) = fetch(&app, "/api/v1/docs").await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(page.starts_with("<!DOCTYPE html>"));
    for path in routes() {
        assert!(page.contains(path), "the page does not list {path}");
    }
    let lower = page.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "a script");
    for attr in ["src=", "href=", "url("] {
        for quote in ["\"", "'", ""] {
            for scheme in ["http://", "https://", "//"] {
                let outside = format!("{attr}{quote}{scheme}");
                assert!(!lower.contains(&outside), "loads {outside}…");
            }
        }
    }
}

#[tokio::test]
async fn the_same_docs_and_description_are_public_and_their_link_works() {
    let (_nats, app, _dir) = service().await;
    let keyed = fetch(&app, "/api/v1/docs").await.2;
    let public = |path: &'static str| {
        let client = app.client.clone();
        let url = format!("{}{path}", app.base);
        async move {
            let res = client.get(url).send().await.expect("request");
            let status = res.status();
            (status, res.text().await.expect("body"))
        }
    };
    let (status, page) = public("/docs").await;
    assert_eq!(status, StatusCode::OK, "no key needed");
    assert_eq!(page, keyed, "the same page");
    // Its link to the description is relative: from /docs it leads to /openapi.json,
    // which answers without a key too.
    assert!(page.contains("href=\"openapi.json\""));
    let (status, spec) = public("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let spec: serde_json::Value = serde_json::from_str(&spec).expect("JSON");
    assert_eq!(spec["openapi"], "3.1.0");
}

#[tokio::test]
async fn the_asyncapi_document_is_public_cached_and_linked_from_the_docs() {
    let (_nats, app, _dir) = service().await;
    let (status, body) = app.get_with(ASYNCAPI_PATH, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "under /api/v1, the key");
    assert_eq!(body["error"], "unauthorized");
    let (status, keyed) = app.get(ASYNCAPI_PATH).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(keyed, *DOCUMENT, "the document the frame check reads");

    let res = app
        .client
        .get(format!("{}{PUBLIC_PATH}", app.base))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::OK, "no key needed");
    let etag = res.headers().get("etag").cloned().expect("an ETag");
    let content_type = res.headers().get("content-type").cloned();
    assert_eq!(
        content_type.as_ref().and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let public: Value = res.json().await.expect("JSON");
    assert_eq!(public, keyed, "the same document");
    assert_eq!(public["asyncapi"], "3.0.0");
    // Revalidated as every keyed answer is.
    let again = app
        .client
        .get(format!("{}{ASYNCAPI_PATH}", app.base))
        .header("x-api-key", KEY)
        .header("if-none-match", etag)
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    // The docs page links it relatively: from /docs to /asyncapi.json, from
    // /api/v1/docs to /api/v1/asyncapi.json.
    let page = fetch(&app, DOCS_PATH).await.2;
    assert!(
        page.contains("href=\"asyncapi.json\""),
        "the docs page links it"
    );
}

#[tokio::test]
async fn the_api_root_answers_an_index_of_links_with_the_key() {
    let (_nats, app, _dir) = service().await;
    let public = |path: String| {
        let client = app.client.clone();
        let url = format!("{}{path}", app.base);
        async move {
            let res = client.get(url).send().await.expect("request");
            let status = res.status();
            (status, res.text().await.expect("body"))
        }
    };
    let mut answers = Vec::new();
    for root in [INDEX_PATH, "/api/v1"] {
        // Under /api/v1 like the rest: the exact 401 without the key.
        let (status, body) = app.get_with(root, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{root}");
        assert_eq!(body["error"], "unauthorized");
        let (status, content_type, body) = fetch(&app, root).await;
        assert_eq!(status, StatusCode::OK, "{root}: {body}");
        assert_eq!(content_type, "application/json", "{root}");
        answers.push(body);
    }
    assert_eq!(
        answers[0], answers[1],
        "the same index with its slash or without"
    );
    let index: Value = serde_json::from_str(&answers[0]).expect("JSON");

    // Its links to the reference answer without a key; each endpoint's link to the
    // reference lands on its section of the page.
    for link in ["docs", "openapi", "asyncapi"] {
        let path = index[link].as_str().expect("a link").to_owned();
        assert_eq!(
            public(path.clone()).await.0,
            StatusCode::OK,
            "{link}: {path}"
        );
    }
    let (_, page) = public("/docs".to_owned()).await;
    let endpoints = index["endpoints"].as_array().expect("endpoints");
    let mut families = BTreeSet::new();
    for e in endpoints {
        let docs = e["docs"].as_str().expect("a link to the reference");
        let (page_path, section) = docs.split_once('#').expect("a section");
        assert_eq!(page_path, "/docs");
        assert!(page.contains(&format!("id=\"{section}\"")), "{docs}");
        families.insert(e["family"].as_str().expect("a family"));
    }
    let listed: BTreeSet<&str> = endpoints
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    for route in ROUTES.iter().filter(|r| r.path != INDEX_PATH) {
        assert!(
            listed.contains(route.path),
            "{} not in the index",
            route.path
        );
    }
    for family in [
        "meetings",
        "horses",
        "results",
        "racecards",
        "odds",
        "people",
        "changes",
    ] {
        assert!(families.contains(family), "{family}: {families:?}");
    }
    assert_eq!(index["live_odds"], ODDS_SOCKET_PATH);
}

/// The query parameters a route's handler takes, as its 400 for an unknown one lists them.
async fn taken_by(app: &App, concrete: &str) -> BTreeSet<String> {
    let sep = if concrete.contains('?') { '&' } else { '?' };
    let (status, body) = app.get(&format!("{concrete}{sep}zz_probe=1")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{concrete}: {body}");
    let message = body["message"].as_str().expect("a message");
    if message.contains("this endpoint takes no query parameters") {
        return BTreeSet::new();
    }
    let (_, allowed) = message
        .split_once("allowed: ")
        .unwrap_or_else(|| panic!("{concrete}: {message}"));
    allowed
        .trim_end_matches(')')
        .split(", ")
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn each_operation_declares_and_names_exactly_the_query_parameters_its_handler_takes() {
    let (_nats, app, _dir) = service().await;
    let (_, spec) = app.get("/api/v1/openapi.json").await;
    let mut operations = Vec::new();
    for route in ROUTES.iter() {
        let op = &spec["paths"][route.path]["get"];
        let declared: BTreeSet<String> = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query")
            .map(|p| p["name"].as_str().expect("a name").to_owned())
            .collect();
        let taken = taken_by(&app, &route.example()).await;
        assert_eq!(declared, taken, "{}: declared against taken", route.path);
        let description = op["description"]
            .as_str()
            .expect("a description")
            .to_owned();
        operations.push((route.path, taken, description));
    }
    let mut wrong = Vec::new();
    for (path, taken, description) in operations {
        let says_none = description.contains("Takes no query parameters");
        if says_none != taken.is_empty() {
            wrong.push(format!("{path} takes {taken:?}, yet: {description}"));
        }
        for name in &taken {
            let named = description.contains(&format!("`{name}`"))
                || description.contains(&format!("`{name}="));
            if !named {
                wrong.push(format!(
                    "{path} takes `{name}`; its description does not name it"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every property name of `schema` and of the schemas it holds or refers to, recursively.
fn fields_of(
    schema: &Value,
    schemas: &Value,
    seen: &mut BTreeSet<String>,
    out: &mut BTreeSet<String>,
) {
    match schema {
        Value::Object(map) => {
            if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                let name = target.rsplit('/').next().expect("a name").to_owned();
                if seen.insert(name.clone()) {
                    fields_of(&schemas[&name], schemas, seen, out);
                }
            }
            if let Some(Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            for (key, inner) in map {
                if key != "examples" && key != "example" {
                    fields_of(inner, schemas, seen, out);
                }
            }
        }
        Value::Array(items) => {
            for inner in items {
                fields_of(inner, schemas, seen, out);
            }
        }
        _ => {}
    }
}

/// The names in the code spans of a Markdown text: `odds[].win_prob` and
/// `{horse_no, win_odds}` name `win_prob`, `horse_no` and `win_odds`.
fn named(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_field_of_every_frame_the_server_sends_is_in_the_live_guide() {
    let read = |name: &str| {
        std::fs::read_to_string(format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_else(|e| panic!("docs/{name}: {e}"))
    };
    let guide = read("live.md");
    // A frame's own fields are described in the guide; the fields of the documents a
    // frame carries (a card's race, a result, an odds entry) may be, where the guide
    // points to them, in the API reference.
    let with_reference = named(&format!("{guide}{}", read("api.md")));
    let guide = named(&guide);
    let schemas = &DOCUMENT["components"]["schemas"];
    let messages = DOCUMENT["components"]["messages"]
        .as_object()
        .expect("messages");
    let received: Vec<&Value> = DOCUMENT["operations"]
        .as_object()
        .expect("operations")
        .values()
        .filter(|op| op["action"] == "receive")
        .collect();
    assert_eq!(received.len(), racing::http::asyncapi::SERVER_FRAMES.len());
    let mut missing = Vec::new();
    for op in received {
        let reference = op["messages"][0]["$ref"].as_str().expect("a message");
        let kind = reference.rsplit('/').next().expect("a kind");
        let payload = &messages[kind]["payload"];
        let name = payload["$ref"]
            .as_str()
            .expect("a schema")
            .rsplit('/')
            .next();
        let own: BTreeSet<String> = schemas[name.expect("a name")]["properties"]
            .as_object()
            .expect("a frame's fields")
            .keys()
            .cloned()
            .collect();
        let mut fields = BTreeSet::new();
        fields_of(payload, schemas, &mut BTreeSet::new(), &mut fields);
        for field in fields {
            let text = if own.contains(&field) {
                &guide
            } else {
                &with_reference
            };
            if !text.contains(&field) {
                missing.push(format!("{kind}.{field}"));
            }
        }
    }
    assert!(missing.is_empty(), "fields not described: {missing:?}");
}

#[test]
fn the_paths_the_reference_lists_as_keyless_are_the_services() {
    let list = crate::support::marked("api.md", "keyless paths:", "end of keyless paths");
    let listed: BTreeSet<&str> = list
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| word.starts_with('/'))
        .collect();
    let served: BTreeSet<&str> = racing::http::keyless_paths().collect();
    assert_eq!(listed, served);
}

#[test]
fn the_descriptions_carry_the_version_of_the_changelogs_latest_release() {
    let changelog = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/CHANGELOG.md"))
        .expect("CHANGELOG.md");
    let latest = changelog
        .lines()
        .filter_map(|line| line.strip_prefix("## ["))
        .filter_map(|line| line.split(']').next())
        .find(|version| *version != "Unreleased");
    assert_eq!(latest, Some(racing::http::VERSION));
    assert_eq!(DOCUMENT["info"]["version"], racing::http::VERSION);
}
