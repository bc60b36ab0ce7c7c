//! The document paths of the API, matched by hand: a split on `/` and a `match`. The read
//! endpoints answer from this match without a router's per-request work (a route service
//! cloned, parameters stored in the request and deserialised back out of it); every other
//! path (the WebSocket, the OpenAPI document, unknown paths) goes on to the axum router.
//! Each handler percent-decodes its parameters with [`param`], as a router would.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;

use super::ApiError;

/// A document path, with its parameters as they came (percent-encoded).
#[derive(Debug, PartialEq, Eq)]
pub enum Route<'a> {
    /// `/api/v1/horses/{horse_no}`
    Profile(&'a str),
    /// `/api/v1/horses/{horse_no}/form`
    Form(&'a str),
    /// `/api/v1/results/{date}`
    Results(&'a str),
    /// `/api/v1/results/{date}/{race_number}`
    Race(&'a str, &'a str),
    /// `/api/v1/racecards/today`
    CardToday,
    /// `/api/v1/racecards/{date}`
    Card(&'a str),
    /// `/api/v1/odds/{date}/{race_number}`
    Odds(&'a str, &'a str),
}

impl Route<'_> {
    /// How many document routes there are.
    pub const COUNT: usize = 7;

    /// The route's place among the [`Route::COUNT`], for tables indexed by route.
    pub fn index(&self) -> usize {
        match self {
            Route::Profile(_) => 0,
            Route::Form(_) => 1,
            Route::Results(_) => 2,
            Route::Race(..) => 3,
            Route::CardToday => 4,
            Route::Card(_) => 5,
            Route::Odds(..) => 6,
        }
    }

    /// The path template, as the OpenAPI document and the route metrics name it.
    pub fn template(&self) -> &'static str {
        match self {
            Route::Profile(_) => "/api/v1/horses/{horse_no}",
            Route::Form(_) => "/api/v1/horses/{horse_no}/form",
            Route::Results(_) => "/api/v1/results/{date}",
            Route::Race(..) => "/api/v1/results/{date}/{race_number}",
            Route::CardToday => "/api/v1/racecards/today",
            Route::Card(_) => "/api/v1/racecards/{date}",
            Route::Odds(..) => "/api/v1/odds/{date}/{race_number}",
        }
    }
}

/// The document route of `path`; `None` when it is not one (the router takes it). As
/// with the router before it, a parameter may be empty (and is refused by its check)
/// except the last, and a path that ends in `/` is no document's.
pub fn route(path: &str) -> Option<Route<'_>> {
    let rest = path.strip_prefix("/api/v1/")?;
    if rest.ends_with('/') {
        return None;
    }
    let mut parts = rest.split('/');
    let (first, second, third) = (parts.next()?, parts.next()?, parts.next());
    if parts.next().is_some() {
        return None;
    }
    Some(match (first, third) {
        ("horses", None) => Route::Profile(second),
        ("horses", Some("form")) => Route::Form(second),
        ("results", None) => Route::Results(second),
        ("results", Some(n)) => Route::Race(second, n),
        ("racecards", None) if second == "today" => Route::CardToday,
        ("racecards", None) => Route::Card(second),
        ("odds", Some(n)) => Route::Odds(second, n),
        _ => return None,
    })
}

/// A path parameter, percent-decoded; one that does not decode to UTF-8 is a 400.
pub fn param<'a>(raw: &'a str, name: &str) -> Result<Cow<'a, str>, ApiError> {
    percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| ApiError::BadRequest(format!("malformed path: invalid UTF-8 in `{name}`")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(path: &str) -> Route<'_> {
        route(path).expect("a document path")
    }

    #[test]
    fn every_document_path_is_matched_with_its_parameters() {
        assert_eq!(ok("/api/v1/horses/E271"), Route::Profile("E271"));
        assert_eq!(ok("/api/v1/horses/E271/form"), Route::Form("E271"));
        assert_eq!(
            ok("/api/v1/results/2026-11-21"),
            Route::Results("2026-11-21")
        );
        assert_eq!(
            ok("/api/v1/results/2026-11-21/3"),
            Route::Race("2026-11-21", "3")
        );
        assert_eq!(ok("/api/v1/racecards/today"), Route::CardToday);
        assert_eq!(
            ok("/api/v1/racecards/2026-11-21"),
            Route::Card("2026-11-21")
        );
        assert_eq!(
            ok("/api/v1/odds/2026-11-21/3"),
            Route::Odds("2026-11-21", "3")
        );
    }

    #[test]
    fn parameters_are_decoded_by_their_handler_and_static_segments_never() {
        assert_eq!(ok("/api/v1/racecards/tod%61y"), Route::Card("tod%61y"));
        assert!(route("/api/v1/horses/E271/%66orm").is_none());
        assert_eq!(param("%45271", "horse_no").expect("decodes"), "E271");
        let err = param("%FF", "horse_no").expect_err("not UTF-8");
        assert!(
            matches!(&err, ApiError::BadRequest(m) if m.contains("`horse_no`")),
            "{err}"
        );
    }

    #[test]
    fn empty_parameters_reach_their_checks_unless_last() {
        assert_eq!(ok("/api/v1/horses//form"), Route::Form(""));
        assert_eq!(ok("/api/v1/results//3"), Route::Race("", "3"));
        assert!(route("/api/v1/horses/").is_none());
        assert!(route("/api/v1/results/2026-11-21/").is_none());
    }

    #[test]
    fn other_paths_are_left_to_the_router() {
        for path in [
            "/",
            "/api/v1",
            "/api/v1/",
            "/api/v1/horses",
            "/api/v1/horses/E271/",
            "/api/v1/horses/E271/form/",
            "/api/v1/horses/E271/forms",
            "/api/v1/results/2026-11-21/3/",
            "/api/v1/racecards/today/",
            "/api/v1/odds/2026-11-21",
            "/api/v1/openapi.json",
            "/api/v2/horses/E271",
            "/ws/live/odds",
        ] {
            assert!(route(path).is_none(), "{path}");
        }
    }
}
