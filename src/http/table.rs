//! The route table: every document endpoint, one row each ([`ROUTES`]), and the match of
//! a request's path to its row ([`find`]). The table sits above the handlers it lists and
//! the index that lists it.
//!
//! A new endpoint is a handler (`documents.rs` or beside it) and a row here: its path, its
//! metrics label, its input checks and its OpenAPI operation all come from the row.

use std::sync::{LazyLock, OnceLock};

use axum::response::Response;
use bytes::Bytes;
use racing_projections::openapi::{
    Analysis, Form, JockeyList, OddsHistory, PersonRecord, Profile, RaceCard, RaceOdds, RaceResult,
    ResultsByDate, TrainerList,
};

use super::analysis;
use super::described::{INDEX_PATH, REFERENCE_TAG};
use super::discovery::{self, HorsesPage, MeetingsPage};
use super::documents;
use super::history::{self, ChangesPage};
use super::index::{self, ApiIndex};
use super::respond::with_type;
use super::route::{Component, Handler, Operation, Route};
use super::{ApiError, AppState};
use crate::telemetry::RouteMetrics;

/// What an analysis route says it answers, the breakdowns by person named by `$people`.
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

/// The 400 answer of a jockey's or trainer's analysis.
const PERSON_ANALYSIS_400: &str = "`bad_request`: an id not of slug form, a `from` or `to` \
    that is not a real `YYYY-MM-DD`, or another query parameter.";

/// Every document endpoint, in the order the OpenAPI document lists them. A path is
/// answered by the first row whose template it fits, so a row with a literal segment
/// (`/racecards/today`) comes before one with a parameter in its place.
pub static ROUTES: &[Route] = &[
    Route {
        path: INDEX_PATH,
        handler: &Handler::new(api_index),
        long: false,
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
    },
    Route {
        path: "/api/v1/meetings",
        handler: &Handler::new(discovery::meetings),
        long: false,
        doc: Operation {
            id: "meetings",
            tag: "meetings",
            summary: "Meetings of a range of dates",
            description: "Every meeting from `from` to `to` (both included) with a card or a \
                result, by date, then venue: `races` counts the races known for it (with a card \
                or a result), `card` says whether its race card exists, `results` how many \
                results it has. Without `from`, 30 days before today; without `to`, 14 days \
                after, today being the date in the service's time zone (`RACING_TIMEZONE`). \
                A page covers at most 366 days: for a longer range, `to` in the answer is the \
                page's last date and `next` the first date after it with a meeting, to ask \
                again with as `from` (and the same `to`); `next` is `null` on the last page. \
                A `from` after `to` is a range of no dates: no meetings.",
            ok: "The meetings of the range, or of its first 366 days.",
            body: Component::of::<MeetingsPage>(),
            errors: &[(
                "400",
                "`bad_request`: a `from` or `to` that is not a real `YYYY-MM-DD`, or another \
                 query parameter.",
            )],
        },
    },
    Route {
        path: "/api/v1/horses",
        handler: &Handler::new(discovery::horse_search),
        long: true,
        doc: Operation {
            id: "horse_search",
            tag: "horses",
            summary: "Find horses by name",
            description: "Horses whose name contains `name` (required), whatever the case: those \
                with a name that starts with it first, then alphabetical. Names come from \
                profiles, cards and results, so a horse without a profile is found too; a \
                horse that was renamed is found by each name and listed under its newest (its \
                latest profile's, or its latest-dated card's or result's, whichever came \
                last). At most `limit` (default 20).",
            ok: "The horses found (maybe none).",
            body: Component::of::<HorsesPage>(),
            errors: &[(
                "400",
                "`bad_request`: no `name`, a `name` not of 2 to 50 characters, a `limit` not \
                 from 1 to 100, or another query parameter.",
            )],
        },
    },
    Route {
        path: "/api/v1/horses/{horse_no}",
        handler: &Handler::new(documents::horse_profile),
        long: false,
        doc: Operation {
            id: "horse_profile",
            tag: "horses",
            summary: "Get horse profile",
            description: "The profile of a horse by its brand number: its origin, colour, sex \
                and age, trainer and owner, career stakes, starts, wins and places, then its \
                pedigree, import type, ratings and season stakes where the feed gave them. \
                With `as_of`, as the log up to that point would have answered.",
            ok: "The horse's profile.",
            body: Component::of::<Profile>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a malformed horse number, or a query parameter.",
                ),
                ("404", "`not_found`: no profile for that horse number."),
            ],
        },
    },
    Route {
        path: "/api/v1/horses/{horse_no}/form",
        handler: &Handler::new(documents::horse_form),
        long: false,
        doc: Operation {
            id: "horse_form",
            tag: "horses",
            summary: "Get horse form",
            description: "Every recorded race of the horse, newest first (date, then race number, \
                descending); `limit` keeps the newest N. A horse has form as soon as it appears \
                in a result, even without a profile; its `horse_name` then comes from its latest \
                result. With `as_of`, as the log up to that point would have answered.",
            ok: "The horse's form.",
            body: Component::of::<Form>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a malformed horse number, a `limit` that is not an integer \
                     from 1 to 1000, or another query parameter.",
                ),
                (
                    "404",
                    "`not_found`: a horse that appears in no result and has no profile.",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/horses/{horse_no}/analysis",
        handler: &Handler::new(analysis::horse),
        long: true,
        doc: Operation {
            id: "horse_analysis",
            tag: "horses",
            summary: "A horse's records by condition",
            description: analysis_description!("and by jockey and trainer"),
            ok: "The records by condition.",
            body: Component::of::<Analysis>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a malformed horse number, a `from` or `to` that is not a real \
                     `YYYY-MM-DD`, or another query parameter.",
                ),
                (
                    "404",
                    "`not_found`: the horse has no run in a result (as of the point).",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/results/{date}",
        handler: &Handler::new(documents::results_by_date),
        long: false,
        doc: Operation {
            id: "results_by_date",
            tag: "results",
            summary: "List results by date",
            description: "All races of the date (or of the `venue`'s meeting), ascending race \
                number; in each, placed runners by position, then the rest as the feed listed \
                them. With `as_of`, as the log up to that point would have answered.",
            ok: "The results of the date.",
            body: Component::of::<ResultsByDate>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a date that is not a real `YYYY-MM-DD`, an empty `venue`, or \
                     another query parameter.",
                ),
                ("404", "`not_found`: no results for the date (or venue)."),
            ],
        },
    },
    Route {
        path: "/api/v1/results/{date}/{race_number}",
        handler: &Handler::new(documents::race_result),
        long: false,
        doc: Operation {
            id: "race_result",
            tag: "results",
            summary: "Get single race result",
            description: "The result of one race: `{date, venue, race_number, race_name, \
                distance, going, runners}`, runners placed by position, then the rest; with \
                `venue`, that venue's race of the number. With `as_of`, as the log up to that \
                point would have answered.",
            ok: "The race's result.",
            body: Component::of::<RaceResult>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a date that is not a real `YYYY-MM-DD`, a race number not \
                     from 1 to 99, an empty `venue`, or another query parameter.",
                ),
                ("404", "`not_found`: no such race on that date (or venue)."),
            ],
        },
    },
    Route {
        path: "/api/v1/racecards/today",
        handler: &Handler::new(documents::racecard_today),
        long: false,
        doc: Operation {
            id: "racecard_today",
            tag: "racecards",
            summary: "Today's race card",
            description: "The card of today's meeting, where today is the calendar date in the \
                service's time zone (`RACING_TIMEZONE`, by default `Asia/Hong_Kong`); the `date` \
                field says which day that was; with `venue`, that venue's meeting. Scratched \
                runners are removed. With `as_of`, as the log up to that point would have \
                answered.",
            ok: "Today's race card.",
            body: Component::of::<RaceCard>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: an empty `venue`, or another query parameter.",
                ),
                (
                    "404",
                    "`not_found`: no meeting today (or none at the venue); the message names \
                     the date.",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/racecards/{date}",
        handler: &Handler::new(documents::racecard_by_date),
        long: false,
        doc: Operation {
            id: "racecard_by_date",
            tag: "racecards",
            summary: "Race card by date",
            description: "The card of the date (or of the `venue`'s meeting), ascending race \
                number, scratched runners removed. With `as_of`, as the log up to that point \
                would have answered.",
            ok: "The race card of the date.",
            body: Component::of::<RaceCard>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a date that is not a real `YYYY-MM-DD`, an empty `venue`, or \
                     another query parameter.",
                ),
                ("404", "`not_found`: no race card for the date (or venue)."),
            ],
        },
    },
    Route {
        path: "/api/v1/odds/{date}/{race_number}",
        handler: &Handler::new(documents::race_odds),
        long: false,
        doc: Operation {
            id: "race_odds",
            tag: "odds",
            summary: "Current odds and market of a race",
            description: "The current win and place odds of a race, for clients that poll: every \
                runner with a price, in horse-number order, with its implied probabilities and \
                moves, the race's `market` (books, favourites, steamers and drifters), and \
                `seq`, the stream sequence of the race's latest odds update (a WebSocket \
                `subscribe` with `since` resumes from it). A `venue`'s race has the odds given \
                for it and those a feeder gave without a venue (for the race of that number at \
                every venue), each runner at its latest price; `venue` is null where no venue \
                of the race is known yet. With `as_of`, as the log up to that point would have \
                answered.",
            ok: "The race's current odds.",
            body: Component::of::<RaceOdds>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a date that is not a real `YYYY-MM-DD`, a race number not \
                     from 1 to 99, an empty `venue`, or another query parameter.",
                ),
                (
                    "404",
                    "`not_found`: no odds for the race (or for the race at the venue).",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/odds/{date}/{race_number}/history",
        handler: &Handler::new(history::odds_history),
        long: true,
        doc: Operation {
            id: "odds_history",
            tag: "odds",
            summary: "Odds history of a race",
            description: "Every odds update of the race in the order it went live, a page at a \
                time: the moves after `since`, at most `limit`, each with its stream `seq`, \
                `published_at` (when the log stored it), `occurred_at` (when its prices were \
                given at their source) and the runners it priced, as the WebSocket sent it. With \
                `venue`, that venue's moves and those given without a venue; without, every \
                move of the race number (each says its `venue`). Pass `next` as `since` for \
                the following page; `null` at the end.",
            ok: "A page of the race's odds moves.",
            body: Component::of::<OddsHistory>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: a date that is not a real `YYYY-MM-DD`, a race number not \
                     from 1 to 99, an empty `venue`, a `since` that is not a stream sequence, a \
                     `limit` not from 1 to 10000, or another query parameter.",
                ),
                (
                    "404",
                    "`not_found`: the race (or the race at the venue) has no odds at all.",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/jockeys",
        handler: &Handler::new(discovery::jockeys),
        long: false,
        doc: Operation {
            id: "jockeys",
            tag: "people",
            summary: "List jockeys",
            description: "Every jockey with a ride in a result, by name: `id` (the slug of the \
                name, for `/api/v1/jockeys/{id}`), `name` (as the newest result gives it) and \
                `rides`. With `name`, only those whose name contains it, whatever the case.",
            ok: "The jockeys (maybe none).",
            body: Component::of::<JockeyList>(),
            errors: &[(
                "400",
                "`bad_request`: a `name` not of 2 to 50 characters, or another query parameter.",
            )],
        },
    },
    Route {
        path: "/api/v1/jockeys/{id}",
        handler: &Handler::new(discovery::jockey),
        long: false,
        doc: Operation {
            id: "jockey",
            tag: "people",
            summary: "Get a jockey's record",
            description: "A jockey's rides, wins, seconds and thirds, overall (with percentages \
                of rides, one decimal place) and by Hong Kong season (September to August, \
                newest first), and the 20 newest rides. A ride is a runner in a result except \
                one withdrawn (`WV`, `WV-A`, `WX`, `WX-A`, `WXNR`) or that took no part \
                (`TNP`); an amended result counts as amended, a retracted one not at all.",
            ok: "The jockey's record.",
            body: Component::of::<PersonRecord>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: an id not of slug form (lower-case letters and digits, \
                     words joined by single `-`), or a query parameter other than `min_seq`.",
                ),
                ("404", "`not_found`: no jockey of that id has a ride."),
            ],
        },
    },
    Route {
        path: "/api/v1/jockeys/{id}/analysis",
        handler: &Handler::new(analysis::jockey),
        long: true,
        doc: Operation {
            id: "jockey_analysis",
            tag: "people",
            summary: "A jockey's records by condition",
            description: analysis_description!("and by trainer (each jockey-trainer combination)"),
            ok: "The records by condition.",
            body: Component::of::<Analysis>(),
            errors: &[
                ("400", PERSON_ANALYSIS_400),
                (
                    "404",
                    "`not_found`: no jockey of that id has a run in a result (as of the point).",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/trainers",
        handler: &Handler::new(discovery::trainers),
        long: false,
        doc: Operation {
            id: "trainers",
            tag: "people",
            summary: "List trainers",
            description: "Every trainer with a runner that rode in a result, by name: `id`, \
                `name` and `rides`, as for jockeys. With `name`, only those whose name contains \
                it, whatever the case.",
            ok: "The trainers (maybe none).",
            body: Component::of::<TrainerList>(),
            errors: &[(
                "400",
                "`bad_request`: a `name` not of 2 to 50 characters, or another query parameter.",
            )],
        },
    },
    Route {
        path: "/api/v1/trainers/{id}",
        handler: &Handler::new(discovery::trainer),
        long: false,
        doc: Operation {
            id: "trainer",
            tag: "people",
            summary: "Get a trainer's record",
            description: "A trainer's runners that rode (rides), wins, seconds and thirds, \
                overall and by season, and the 20 newest, as a jockey's record.",
            ok: "The trainer's record.",
            body: Component::of::<PersonRecord>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: an id not of slug form (lower-case letters and digits, \
                     words joined by single `-`), or a query parameter other than `min_seq`.",
                ),
                ("404", "`not_found`: no trainer of that id has a ride."),
            ],
        },
    },
    Route {
        path: "/api/v1/trainers/{id}/analysis",
        handler: &Handler::new(analysis::trainer),
        long: true,
        doc: Operation {
            id: "trainer_analysis",
            tag: "people",
            summary: "A trainer's records by condition",
            description: analysis_description!("and by jockey (each jockey-trainer combination)"),
            ok: "The records by condition.",
            body: Component::of::<Analysis>(),
            errors: &[
                ("400", PERSON_ANALYSIS_400),
                (
                    "404",
                    "`not_found`: no trainer of that id has a run in a result (as of the point).",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/changes",
        handler: &Handler::new(history::changes),
        long: false,
        doc: Operation {
            id: "changes",
            tag: "changes",
            summary: "Documents changed since a point of the log",
            description: "Every document that changed (or went) after `since`, in `seq` order: \
                `path` is the API path that now answers differently. One loop keeps a copy in \
                sync: read a page, GET each path (with `as_of` = its `seq`, or without), pass \
                `next` as `since`; at the end (`next` null) poll again later with the last \
                `seq` or the answer's `Racing-Seq`. Each `seq` is the position of the event \
                that changed the document, whatever path built the store (live or a \
                replay); one event may change several documents; a page holds at \
                most `limit` changes, and where it ends inside one `seq`'s changes its `next` \
                is `\"SEQ.N\"` (after the first N of them), to pass as `since` as it is. \
                Reads the changes it returns and no others. Followed from 0 it names every \
                document there is.",
            ok: "A page of the change feed.",
            body: Component::of::<ChangesPage>(),
            errors: &[(
                "400",
                "`bad_request`: a `since` that is not a stream sequence or a page's `next`, \
                 a `limit` not from 1 to 10000, or another query parameter.",
            )],
        },
    },
];

/// The index as served: made from the table and serialised once.
static INDEX_JSON: LazyLock<Bytes> = LazyLock::new(|| index::json(ROUTES));

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
        *self
            .compiled
            .ok
            .get_or_init(|| crate::telemetry::route_metrics(self.compiled.route.path, 200))
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
mod tests;
