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
            None => path.to_string(),
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
