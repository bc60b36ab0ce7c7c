//! The API's index at `/api/v1/` (and `/api/v1`): where everything is, for someone with a
//! key who opens the address the start-up banner prints. Links only, no data, made from
//! the route table once; behind the key like every path under `/api/v1`, its links to the
//! reference lead to the copies that need none.

use bytes::Bytes;
use serde::Serialize;
use utoipa::ToSchema;

use super::described::{
    docs_anchor, ASYNCAPI_PUBLIC_PATH, ODDS_SOCKET_PATH, PUBLIC_PATHS, REFERENCE_TAG,
};
use super::route::Route;

/// The index of the API.
#[derive(Serialize, ToSchema)]
#[schema(examples(json!({
    "about": "horse racing data: profiles and form, results, race cards, odds, jockeys and trainers, and a change feed",
    "version": "v1",
    "key": "every path under /api/v1, this one included, takes the key in the X-API-Key header; docs, openapi, asyncapi and pricing need none",
    "docs": "/docs", "openapi": "/openapi.json", "asyncapi": "/asyncapi.json",
    "live_odds": "/ws/live/odds", "pricing": "/pricing",
    "endpoints": [
        {"family": "horses", "path": "/api/v1/horses/{horse_no}",
         "summary": "Get horse profile", "docs": "/docs#op-get--api-v1-horses--horse-no-"}
    ]
})))]
pub struct ApiIndex {
    /// What the API serves, in a line.
    about: &'static str,
    /// The version every path carries (`/api/v1/`).
    version: &'static str,
    /// Which of these links need the key.
    key: &'static str,
    /// The HTML reference of every endpoint (no key needed).
    docs: &'static str,
    /// The OpenAPI 3.1 description of the HTTP API (no key needed).
    openapi: &'static str,
    /// The AsyncAPI 3.0 description of the live socket (no key needed).
    asyncapi: &'static str,
    /// The live odds WebSocket (the key in `X-API-Key` or as `?api_key=`).
    live_odds: &'static str,
    /// The pricing page, where a key is subscribed for (no key needed).
    pricing: &'static str,
    /// Every endpoint, in the reference's order, which keeps each family's together.
    endpoints: Vec<ApiEndpoint>,
}

/// One endpoint, as the index lists it.
#[derive(Serialize, ToSchema)]
pub struct ApiEndpoint {
    /// Its family: the reference's tag (`meetings`, `horses`, `results`, `racecards`,
    /// `odds`, `people`, `changes`).
    family: &'static str,
    /// Its path template: each `{name}` is a parameter.
    path: &'static str,
    /// What it answers, in a line.
    summary: &'static str,
    /// Its section of the HTML reference.
    docs: String,
}

/// The index of the route table's endpoints (but the reference's, which have links of
/// their own) and of the reference, as served.
pub(super) fn json(routes: &[&Route]) -> Bytes {
    Bytes::from(serde_json::to_vec(&index(routes)).unwrap_or_default())
}

fn index(routes: &[&Route]) -> ApiIndex {
    let endpoints = routes
        .iter()
        .filter(|r| r.doc.tag != REFERENCE_TAG)
        .map(|route| ApiEndpoint {
            family: route.doc.tag,
            path: route.path,
            summary: route.doc.summary,
            docs: format!("{}#{}", PUBLIC_PATHS[0], docs_anchor(route.path)),
        })
        .collect();
    ApiIndex {
        about: "horse racing data: profiles and form, results, race cards, odds, jockeys and \
                trainers, and a change feed",
        version: "v1",
        key: "every path under /api/v1, this one included, takes the key in the X-API-Key \
              header; docs, openapi, asyncapi and pricing need none",
        docs: PUBLIC_PATHS[0],
        openapi: PUBLIC_PATHS[1],
        asyncapi: ASYNCAPI_PUBLIC_PATH,
        live_odds: ODDS_SOCKET_PATH,
        pricing: "/pricing",
        endpoints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::ROUTES;

    #[test]
    fn the_index_links_every_endpoint_of_the_table_with_its_family() {
        let index: serde_json::Value =
            serde_json::from_slice(&json(&ROUTES)).expect("the index is JSON");
        let listed = index["endpoints"].as_array().expect("endpoints");
        let documents = ROUTES.iter().filter(|r| r.doc.tag != REFERENCE_TAG);
        assert_eq!(listed.len(), documents.clone().count());
        for (entry, route) in listed.iter().zip(documents) {
            assert_eq!(entry["path"], route.path);
            assert_eq!(entry["family"], route.doc.tag);
            assert_eq!(entry["summary"], route.doc.summary);
            assert_eq!(entry["docs"], format!("/docs#{}", docs_anchor(route.path)));
        }
        let families: Vec<&str> = listed.iter().filter_map(|e| e["family"].as_str()).collect();
        for family in [
            "meetings",
            "horses",
            "results",
            "racecards",
            "odds",
            "people",
            "changes",
        ] {
            assert!(families.contains(&family), "{family}");
        }
        assert_eq!(index["docs"], "/docs");
        assert_eq!(index["openapi"], "/openapi.json");
        assert_eq!(index["asyncapi"], "/asyncapi.json");
        assert_eq!(index["live_odds"], "/ws/live/odds");
    }
}
