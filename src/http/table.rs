//! The route table: every document endpoint, one row each ([`ROUTES`]), and the match of
//! a request's path to its row ([`find`]). The table sits above the handlers it lists and
//! the index that lists it. The rows are in a file for each family of endpoints, with
//! their OpenAPI prose: `table/horses.rs`, `race_days.rs` (meetings, results, cards),
//! `odds.rs`, `people.rs` (jockeys and trainers) and `changes.rs`.
//!
//! A new endpoint is a handler (`documents.rs` or beside it) and a row in its family's
//! file: its path, its metrics label, its input checks and its OpenAPI operation all come
//! from the row.

use std::sync::{LazyLock, OnceLock};

use axum::response::Response;
use bytes::Bytes;

use super::described::{INDEX_PATH, REFERENCE_TAG};
use super::error::ApiError;
use super::index::{self, ApiIndex};
use super::respond::with_type;
use super::route::{Component, Handler, Operation, Route, Runs};
use super::state::AppState;
use crate::telemetry::requests::RouteMetrics;

/// What an analysis route says it answers, the breakdowns by person named by `$people`
/// (the horses' and the people's rows; defined before their modules, which use it).
macro_rules! analysis_description {
    ($people:literal) => {
        concat!(
            "Runs, wins, places, strike rate and level-stake profit or loss, overall and by \
             venue, distance, going, class and draw, ",
            $people,
            ", over the races dated `from` to `to` (both included; by default every race; \
             a `from` after `to` is a range of no dates, which counts no run), worked out from the results when asked for (`docs/api.md`, Records by \
             condition). A run is a runner in a result except one withdrawn or that took no \
             part; `level_stake` is the profit or loss of a 1-unit win bet on each run with \
             recorded win odds. With `as_of`, as the log up to that point would have \
             answered."
        )
    };
}

/// The index's row.
static INDEX: Route = Route {
    path: INDEX_PATH,
    handler: &Handler::new(api_index),
    runs: Runs::Inline,
    doc: Operation {
        id: "api_index",
        tag: REFERENCE_TAG,
        summary: "Index of the API",
        description: "Links to everything else: the HTML reference (`/docs`), the OpenAPI \
                and AsyncAPI descriptions (`/openapi.json`, `/asyncapi.json`), the live odds \
                socket, the pricing page, and each family of endpoints with their path \
                templates, summaries and sections of the reference. Also answered at \
                `/api/v1`. It holds no data, but takes the key like every path under \
                `/api/v1`; the reference it links to needs none.",
        ok: "The index.",
        body: Component::of::<ApiIndex>(),
        errors: &[],
    },
};

/// Every document endpoint, in the order the OpenAPI document lists them: the index,
/// then each family's rows (a file each, with their OpenAPI prose). A path is answered by
/// the first row whose template it fits, so a row with a literal segment
/// (`/racecards/today`) comes before one with a parameter in its place.
pub static ROUTES: LazyLock<Vec<&'static Route>> = LazyLock::new(|| {
    std::iter::once(&INDEX)
        .chain(race_days::MEETINGS)
        .chain(horses::HORSES)
        .chain(race_days::RESULTS_AND_CARDS)
        .chain(odds::ODDS)
        .chain(people::PEOPLE)
        .chain(changes::CHANGES)
        .collect()
});

/// The index as served: made from the table and serialised once.
static INDEX_JSON: LazyLock<Bytes> = LazyLock::new(|| index::json(&ROUTES));

/// The index: links to the reference, the socket, the pricing page and every endpoint.
fn api_index(_: &AppState) -> Result<Response, ApiError> {
    Ok(with_type(INDEX_JSON.clone(), "application/json"))
}

/// Most parameters in a path.
const MAX_PARAMS: usize = 4;

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
    ok: OnceLock<RouteMetrics>,
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
        .copied()
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

    /// The counts of the route's 200s, looked up once.
    pub(crate) fn ok_metrics(&self) -> RouteMetrics {
        *self.compiled.ok.get_or_init(|| {
            crate::telemetry::requests::route_metrics(self.compiled.route.path, 200)
        })
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

mod changes;
mod horses;
mod odds;
mod people;
mod race_days;
#[cfg(test)]
mod tests;
