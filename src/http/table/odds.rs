//! The rows of the odds' endpoints: a race's current odds with its market, and their
//! history.

use racing_projections::openapi::{OddsHistory, RaceOdds};

use crate::http::documents;
use crate::http::history::{self};
use crate::http::route::{Component, Handler, Operation, Route, Runs};

/// The odds' rows, in the order the OpenAPI document lists them.
pub(super) static ODDS: &[Route] = &[
    Route {
        path: "/api/v1/odds/{date}/{race_number}",
        handler: &Handler::new(documents::race_odds),
        runs: Runs::Inline,
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
        runs: Runs::Apart,
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
];
