//! The route table's machinery. An endpoint is one [`Route`]: its path template, its
//! handler, whose typed parameters say what a request must carry and how each is checked,
//! and its OpenAPI operation. A path is matched by walking the templates along it, without
//! a router's per-request work (a route service cloned, parameters stored in the request
//! and deserialised back out of it); every path no row matches (the WebSocket, the OpenAPI
//! document, unknown paths) goes on to the axum router.

use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{LazyLock, OnceLock};

use axum::response::Response;
use percent_encoding::percent_decode_str;
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

use super::documents::ROUTES;
use super::index::INDEX_PATH;
use super::input::Query;
use super::{ApiError, AppState};

/// One endpoint: everything about it, declared once.
pub struct Route {
    /// The path template as the OpenAPI document writes it (`/api/v1/horses/{horse_no}`):
    /// each `{name}` is a parameter of the handler, in the same order, and takes a whole
    /// segment. It is also the route's `route` label in the metrics.
    pub path: &'static str,
    /// The handler, called with its parameters checked.
    pub handler: &'static (dyn Handle + Sync),
    /// Whether its work can grow with the data rather than with its answer (a search, a
    /// page of odds history): it is answered on a blocking thread, within the request's
    /// deadline, as is every request with `as_of`.
    pub long: bool,
    /// Its operation in the OpenAPI document (the parameters are the handler's).
    pub doc: Operation,
}

/// A route's operation in the OpenAPI document.
pub struct Operation {
    /// The `operationId`: the handler's name.
    pub id: &'static str,
    /// The tag it is listed under.
    pub tag: &'static str,
    /// One line.
    pub summary: &'static str,
    /// What it answers, in full.
    pub description: &'static str,
    /// What a 200 answers.
    pub ok: &'static str,
    /// The schema of a 200's body.
    pub body: Component,
    /// The errors particular to this route, `(status, what it means here)`, each with the
    /// error body; those any route can give are added to every operation.
    pub errors: &'static [(&'static str, &'static str)],
}

/// A named schema of the OpenAPI document's components.
#[derive(Clone, Copy)]
pub struct Component {
    /// Its name.
    pub name: fn() -> Cow<'static, str>,
    /// Adds it, and every schema it refers to, to a list of components.
    pub collect: fn(&mut Vec<(String, RefOr<Schema>)>),
}

impl Component {
    /// The schema of `T`.
    pub const fn of<T: ToSchema>() -> Component {
        Component {
            name: T::name,
            collect: collect::<T>,
        }
    }
}

fn collect<T: ToSchema>(schemas: &mut Vec<(String, RefOr<Schema>)>) {
    schemas.push((T::name().into_owned(), T::schema()));
    T::schemas(schemas);
}

impl Route {
    /// A path of this route with each parameter's example in its place.
    /// Required query parameters follow, with their examples.
    pub fn example(&self) -> String {
        let mut path = self.path.to_owned();
        let mut query = Vec::new();
        for p in self.handler.params() {
            match p.place {
                In::Path => path = path.replace(&format!("{{{}}}", p.name), p.example),
                In::Query if p.required => query.push(format!("{}={}", p.name, p.example)),
                In::Query => {}
            }
        }
        if !query.is_empty() {
            path = format!("{path}?{}", query.join("&"));
        }
        path
    }
}

// ---- Parameters ----

/// Where a request carries a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    /// A `{name}` segment of the path.
    Path,
    /// A query parameter.
    Query,
}

/// A value that a request carries, checked: the type of a handler's parameter. A path
/// parameter is taken as the type itself; a query parameter as `Option` of it, or as the
/// type itself where a request must carry it (a 400 names it when missing).
pub trait Param: Sized {
    /// Its name: the `{name}` of the template, or the query parameter.
    const NAME: &'static str;
    /// Where it is carried.
    const IN: In;
    /// Its description in the OpenAPI document.
    const DOC: &'static str;
    /// A value that passes the check.
    const EXAMPLE: &'static str;
    /// The name of its schema among the OpenAPI document's components.
    const SCHEMA: &'static str;
    /// The value, from the percent-decoded segment or the query parameter's value; one
    /// that fails the check is a 400 that says why.
    fn check(raw: &str) -> Result<Self, ApiError>;
    /// Its schema: what the check accepts.
    fn schema() -> RefOr<Schema>;
}

/// A handler's parameter as the table declares it.
#[derive(Clone, Copy)]
pub struct Declared {
    /// Its name: the `{name}` of the template, or the query parameter.
    pub name: &'static str,
    /// Where it is carried.
    pub place: In,
    /// Whether a request must carry it (every path parameter; a query parameter taken as
    /// itself, not as an `Option`).
    pub required: bool,
    /// Its description in the OpenAPI document.
    pub doc: &'static str,
    /// A value that passes its check.
    pub example: &'static str,
    /// Its schema.
    pub schema: Component,
}

/// A handler's parameter: a [`Param`] of the path or a required one of the query, or an
/// `Option` of one of the query.
pub trait Arg: Sized {
    /// The query parameter's name; `None` for a path parameter.
    const QUERY: Option<&'static str>;
    /// Takes it from the request, checked.
    fn take(input: &mut Input<'_>) -> Result<Self, ApiError>;
    /// How the table declares it.
    fn declared() -> Declared;
}

impl<T: Param> Arg for T {
    const QUERY: Option<&'static str> = match T::IN {
        In::Path => None,
        In::Query => Some(T::NAME),
    };

    fn take(input: &mut Input<'_>) -> Result<Self, ApiError> {
        match T::IN {
            In::Path => {
                let raw = input.path.next().ok_or_else(|| {
                    ApiError::Internal(anyhow::anyhow!("no segment for `{}`", T::NAME))
                })?;
                T::check(&param(raw, T::NAME)?)
            }
            In::Query => match input.query()?.remove(T::NAME) {
                Some(v) => T::check(&v),
                None => Err(ApiError::BadRequest(format!(
                    "query parameter `{}` is required: {}",
                    T::NAME,
                    T::DOC
                ))),
            },
        }
    }

    fn declared() -> Declared {
        declared::<T>(true)
    }
}

impl<T: Param> Arg for Option<T> {
    const QUERY: Option<&'static str> = {
        assert!(
            matches!(T::IN, In::Query),
            "a path parameter is never optional"
        );
        Some(T::NAME)
    };

    fn take(input: &mut Input<'_>) -> Result<Self, ApiError> {
        input
            .query()?
            .remove(T::NAME)
            .map(|v| T::check(&v))
            .transpose()
    }

    fn declared() -> Declared {
        declared::<T>(false)
    }
}

fn declared<T: Param>(required: bool) -> Declared {
    Declared {
        name: T::NAME,
        place: T::IN,
        required,
        doc: T::DOC,
        example: T::EXAMPLE,
        schema: Component {
            name: || Cow::Borrowed(T::SCHEMA),
            collect: |schemas| schemas.push((T::SCHEMA.to_owned(), T::schema())),
        },
    }
}

/// What a matched request carries, taken parameter by parameter in the handler's order:
/// the path's, then the query's, parsed once with the handler's query parameters allowed.
pub struct Input<'a> {
    path: std::slice::Iter<'a, &'a str>,
    raw_query: Option<&'a str>,
    allowed: &'a [&'static str],
    query: Option<HashMap<String, String>>,
}

impl Input<'_> {
    /// The query parameters not yet taken, parsed on first use: an unknown or repeated
    /// one is a 400.
    fn query(&mut self) -> Result<&mut HashMap<String, String>, ApiError> {
        if self.query.is_none() {
            self.query = Some(Query::parse(self.raw_query, self.allowed)?.0);
        }
        Ok(self.query.get_or_insert_default())
    }
}

/// A path parameter, percent-decoded; one that does not decode to UTF-8 is a 400.
pub fn param<'a>(raw: &'a str, name: &str) -> Result<Cow<'a, str>, ApiError> {
    percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| ApiError::BadRequest(format!("malformed path: invalid UTF-8 in `{name}`")))
}

// ---- Handlers ----

/// A handler as the table holds it, the types of its parameters erased.
pub trait Handle {
    /// Checks the parameters, then answers: see [`Handle::check`].
    fn answer(
        &self,
        state: &AppState,
        path: &[&str],
        query: Option<&str>,
    ) -> Result<Response, ApiError>;

    /// Checks the parameters in the handler's order: the path's (`path`, percent-encoded
    /// as they came), then the query's; a query parameter the handler does not take is a
    /// 400. The first that fails is the error.
    fn check(&self, path: &[&str], query: Option<&str>) -> Result<(), ApiError>;

    /// Its parameters, in order.
    fn params(&self) -> Vec<Declared>;
}

/// A handler fn, `fn(&AppState, A, B, ...) -> Result<Response, ApiError>` where each
/// parameter is an [`Arg`], made a [`Handle`] for a table row.
pub struct Handler<F, P> {
    f: F,
    params: PhantomData<fn(P)>,
}

/// Implemented by a handler fn taking the parameters `P` (a tuple), whatever its arity.
pub trait Takes<P> {}

impl<F, P> Handler<F, P> {
    /// The row's handler `f`.
    pub const fn new(f: F) -> Self
    where
        F: Takes<P>,
    {
        Handler {
            f,
            params: PhantomData,
        }
    }
}

/// [`Handle`] for the handler fns of each arity.
macro_rules! arity {
    ($($arg:ident),*) => {
        impl<F, $($arg: Arg),*> Takes<($($arg,)*)> for F
        where
            F: Fn(&AppState, $($arg),*) -> Result<Response, ApiError>,
        {
        }

        impl<F, $($arg: Arg),*> Handler<F, ($($arg,)*)> {
            #[allow(non_snake_case, unused_mut)]
            fn take(path: &[&str], query: Option<&str>) -> Result<($($arg,)*), ApiError> {
                let names: &[Option<&'static str>] = &[$($arg::QUERY),*];
                let mut allowed = [""; MAX_QUERY];
                let mut n = 0;
                for (slot, name) in allowed.iter_mut().zip(names.iter().flatten()) {
                    *slot = name;
                    n += 1;
                }
                let mut input = Input {
                    path: path.iter(),
                    raw_query: query,
                    allowed: allowed.get(..n).unwrap_or_default(),
                    query: None,
                };
                $(let $arg = $arg::take(&mut input)?;)*
                // A query parameter the handler does not take is a 400, even where it
                // takes none.
                input.query()?;
                Ok(($($arg,)*))
            }
        }

        impl<F, $($arg: Arg),*> Handle for Handler<F, ($($arg,)*)>
        where
            F: Fn(&AppState, $($arg),*) -> Result<Response, ApiError>,
        {
            #[allow(non_snake_case)]
            fn answer(
                &self,
                state: &AppState,
                path: &[&str],
                query: Option<&str>,
            ) -> Result<Response, ApiError> {
                let ($($arg,)*) = Self::take(path, query)?;
                (self.f)(state, $($arg),*)
            }

            fn check(&self, path: &[&str], query: Option<&str>) -> Result<(), ApiError> {
                Self::take(path, query).map(drop)
            }

            fn params(&self) -> Vec<Declared> {
                vec![$($arg::declared()),*]
            }
        }
    };
}

arity!();
arity!(A);
arity!(A, B);
arity!(A, B, C);
arity!(A, B, C, D);
arity!(A, B, C, D, E);

// ---- Matching ----

/// Most parameters in a path.
const MAX_PARAMS: usize = 4;

/// Most query parameters a handler takes.
const MAX_QUERY: usize = 4;

/// A piece of a path template.
enum Part {
    /// Text the path must have here, exactly (never decoded).
    Literal(&'static str),
    /// A parameter: everything up to the next `/`, even nothing.
    Param,
}

/// A row of the table, ready to match: its template in pieces, and the metrics of its
/// 200s.
struct Compiled {
    route: &'static Route,
    parts: Vec<Part>,
    ok: OnceLock<(metrics::Counter, metrics::Histogram)>,
}

/// `template` in pieces: the literal text between its parameters.
fn parts(template: &'static str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some((literal, after)) = rest.split_once('{') {
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        parts.push(Part::Param);
        rest = after.split_once('}').map_or("", |(_, after)| after);
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    parts
}

static TABLE: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    ROUTES
        .iter()
        .map(|route| Compiled {
            route,
            parts: parts(route.path),
            ok: OnceLock::new(),
        })
        .collect()
});

/// A request's path matched to its route, with its parameters as they came
/// (percent-encoded), in order.
pub struct Matched<'a> {
    compiled: &'static Compiled,
    params: [&'a str; MAX_PARAMS],
    len: usize,
}

impl Matched<'_> {
    /// The route.
    pub fn route(&self) -> &'static Route {
        self.compiled.route
    }

    /// The path parameters, in order, as they came.
    pub fn params(&self) -> &[&str] {
        self.params.get(..self.len).unwrap_or_default()
    }

    /// The counter and histogram of the route's 200s, looked up once.
    pub fn ok_metrics(&self) -> &(metrics::Counter, metrics::Histogram) {
        self.compiled
            .ok
            .get_or_init(|| crate::admin::route_metrics(self.compiled.route.path, 200))
    }
}

/// The route of `path`: the first row whose template it fits, its literal text exactly
/// (never decoded) and each parameter by a segment, even an empty one, except that a
/// path that ends in `/` is no route's but the index's ([`INDEX_PATH`]), which also
/// answers without its slash. `None` when no row fits (the router takes it).
///
/// Each template is walked along the path once, without splitting either: a row that does
/// not fit fails at its first different byte, so a path costs tens of nanoseconds however
/// many rows there are before its own.
pub fn find(path: &str) -> Option<Matched<'_>> {
    if path.ends_with('/') && path != INDEX_PATH {
        return None;
    }
    // `/api/v1` is what a hand types or a base URL joins to: the index, as with its slash.
    let path = if INDEX_PATH.strip_suffix('/') == Some(path) {
        INDEX_PATH
    } else {
        path
    };
    TABLE.iter().find_map(|compiled| fit(compiled, path))
}

/// `path` matched to one row, if it fits.
fn fit<'a>(compiled: &'static Compiled, path: &'a str) -> Option<Matched<'a>> {
    let mut matched = Matched {
        compiled,
        params: [""; MAX_PARAMS],
        len: 0,
    };
    let mut rest = path;
    for part in &compiled.parts {
        match part {
            Part::Literal(literal) => rest = rest.strip_prefix(literal)?,
            Part::Param => {
                let (value, after) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                *matched.params.get_mut(matched.len)? = value;
                matched.len += 1;
                rest = after;
            }
        }
    }
    rest.is_empty().then_some(matched)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "unknown query parameter `sort` (allowed: venue, as_of)"
        );
        assert_eq!(
            bad_request("/api/v1/horses/E271?venue=Sha+Tin"),
            "unknown query parameter `venue` (allowed: as_of)"
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
        for route in ROUTES {
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
        for route in ROUTES {
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
}
