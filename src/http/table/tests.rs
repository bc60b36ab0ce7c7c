//! The table's match of paths to rows, and each row's parameters.

use super::*;
use crate::http::route::{param, In, Runs, MAX_QUERY};

/// Asserts that `path` matches `template` with `params` (joined by `|`).
fn matches(path: &str, template: &str, params: &str) {
    let matched = find(path).unwrap_or_else(|| panic!("{path} is a document path"));
    assert_eq!(matched.route().path, template, "{path}");
    assert_eq!(matched.params().join("|"), params, "{path}");
}

/// Checks `path?query` as its route's handler would, before reading anything.
fn check(target: &str) -> Result<(), ApiError> {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let matched = find(path).unwrap_or_else(|| panic!("{path} is a document path"));
    matched.route().handler.check(matched.params(), query)
}

fn bad_request(target: &str) -> String {
    match check(target) {
        Err(ApiError::BadRequest(message)) => message,
        other => panic!("{target}: {other:?}"),
    }
}

#[test]
fn every_document_path_is_matched_with_its_parameters() {
    let cases = [
        ("/api/v1/horses/E271", "/api/v1/horses/{horse_no}", "E271"),
        (
            "/api/v1/horses/E271/form",
            "/api/v1/horses/{horse_no}/form",
            "E271",
        ),
        (
            "/api/v1/results/2026-11-21",
            "/api/v1/results/{date}",
            "2026-11-21",
        ),
        (
            "/api/v1/results/2026-11-21/3",
            "/api/v1/results/{date}/{race_number}",
            "2026-11-21|3",
        ),
        ("/api/v1/racecards/today", "/api/v1/racecards/today", ""),
        (
            "/api/v1/racecards/2026-11-21",
            "/api/v1/racecards/{date}",
            "2026-11-21",
        ),
        (
            "/api/v1/odds/2026-11-21/3",
            "/api/v1/odds/{date}/{race_number}",
            "2026-11-21|3",
        ),
    ];
    for (path, template, params) in cases {
        matches(path, template, params);
    }
}

#[test]
fn the_index_answers_with_its_slash_or_without() {
    matches("/api/v1/", "/api/v1/", "");
    matches("/api/v1", "/api/v1/", "");
    check("/api/v1").expect("no parameters");
    assert!(bad_request("/api/v1/?limit=1").starts_with("unknown query parameter `limit`"));
    for other in ["/api", "/api/", "/api/v1//", "/api/v", "/api/v1/x/"] {
        assert!(find(other).is_none(), "{other}");
    }
}

#[test]
fn parameters_are_decoded_by_their_check_and_literal_segments_never() {
    matches(
        "/api/v1/racecards/tod%61y",
        "/api/v1/racecards/{date}",
        "tod%61y",
    );
    assert!(find("/api/v1/horses/E271/%66orm").is_none());
    assert_eq!(param("%45271", "horse_no").expect("decodes"), "E271");
    let err = param("%FF", "horse_no").expect_err("not UTF-8");
    assert!(
        matches!(&err, ApiError::BadRequest(m) if m.contains("`horse_no`")),
        "{err}"
    );
    check("/api/v1/horses/%45271").expect("decoded, then checked");
    assert_eq!(
        bad_request("/api/v1/horses/%FF"),
        "malformed path: invalid UTF-8 in `horse_no`"
    );
}

#[test]
fn empty_parameters_reach_their_checks_unless_last() {
    matches("/api/v1/horses//form", "/api/v1/horses/{horse_no}/form", "");
    matches(
        "/api/v1/results//3",
        "/api/v1/results/{date}/{race_number}",
        "|3",
    );
    assert!(bad_request("/api/v1/horses//form").starts_with("horse number ``"));
    assert!(find("/api/v1/horses/").is_none());
    assert!(find("/api/v1/results/2026-11-21/").is_none());
}

#[test]
fn other_paths_are_left_to_the_router() {
    for path in [
        "/",
        "",
        "/api/v1//",
        "/api/v1/horse",
        "/api/v1/jockeys/",
        "/api/v1/horses/E271/",
        "/api/v1/horses/E271/form/",
        "/api/v1/horses/E271/forms",
        "/api/v1/results/2026-11-21/3/",
        "/api/v1/results/2026-11-21/3/4",
        "/api/v1/racecards/today/",
        "/api/v1/odds/2026-11-21",
        "/api/v1/openapi.json",
        "/api/v2/horses/E271",
        "//api/v1/horses/E271",
        "/ws/live/odds",
    ] {
        assert!(find(path).is_none(), "{path}");
    }
}

#[test]
fn the_path_is_checked_before_the_query_and_the_query_against_the_handler() {
    // The first parameter that fails is the error, the path's before the query's.
    assert!(bad_request("/api/v1/results/not-a-date/0?sort=asc").starts_with("date"));
    assert!(bad_request("/api/v1/results/2026-11-21/0?sort=asc").starts_with("race number"));
    assert_eq!(
        bad_request("/api/v1/results/2026-11-21/1?sort=asc"),
        "unknown query parameter `sort` (allowed: venue, as_of, min_seq)"
    );
    assert_eq!(
        bad_request("/api/v1/horses/E271?venue=Sha+Tin"),
        "unknown query parameter `venue` (allowed: as_of, min_seq)"
    );
    assert_eq!(
        bad_request("/api/v1/horses/E271/form?limit=1&limit=2"),
        "query parameter `limit` is given more than once"
    );
    assert!(bad_request("/api/v1/horses/E271/form?limit=0").starts_with("limit `0`"));
    assert_eq!(
        bad_request("/api/v1/racecards/today?venue=+"),
        "query parameter `venue` is empty"
    );
    check("/api/v1/results/2026-11-21/1?venue=Happy+Valley").expect("valid");
    check("/api/v1/horses/E271/form?limit=1000").expect("valid");
}

#[test]
fn every_row_declares_its_template_parameters_in_order_then_its_query() {
    for route in ROUTES.iter() {
        let params = route.handler.params();
        let query = params.iter().filter(|p| p.place == In::Query).count();
        assert!(params.len() - query <= MAX_PARAMS, "{}", route.path);
        assert!(query <= MAX_QUERY, "{}", route.path);
        let in_path: Vec<String> = params
            .iter()
            .filter(|p| p.place == In::Path)
            .map(|p| format!("{{{}}}", p.name))
            .collect();
        let in_template: Vec<&str> = route
            .path
            .split('/')
            .filter(|s| s.contains(['{', '}']))
            .collect();
        assert_eq!(in_template, in_path, "{}", route.path);
        let first_query = params.iter().position(|p| p.place == In::Query);
        assert!(
            params[first_query.unwrap_or(params.len())..]
                .iter()
                .all(|p| p.place == In::Query),
            "{}: a path parameter after the query's",
            route.path
        );
    }
}

#[test]
fn every_row_answers_its_own_example_and_no_earlier_row_takes_it() {
    for route in ROUTES.iter() {
        let example = route.example();
        assert!(!example.contains(['{', '}']), "{example}");
        let (path, query) = match example.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (example.as_str(), None),
        };
        let matched = find(path).unwrap_or_else(|| panic!("{example} unmatched"));
        assert_eq!(matched.route().path, route.path, "{example}");
        matched
            .route()
            .handler
            .check(matched.params(), query)
            .unwrap_or_else(|e| panic!("{example}: {e}"));
    }
}

/// The routes whose work grows with the data they read, not with what they answer (a
/// search, an odds history, the records by condition worked out from every run of a
/// subject), run on the long reads' threads with the request's deadline; the others read one
/// document and answer inline.
#[test]
fn the_routes_whose_reads_grow_with_the_data_are_long() {
    let long: Vec<&str> = ROUTES
        .iter()
        .filter(|route| route.runs != Runs::Inline)
        .map(|route| route.path)
        .collect();
    assert_eq!(
        long,
        [
            "/api/v1/horses",
            "/api/v1/horses/{horse_no}/analysis",
            "/api/v1/odds/{date}/{race_number}/history",
            "/api/v1/jockeys/{id}/analysis",
            "/api/v1/trainers/{id}/analysis",
        ]
    );
}
