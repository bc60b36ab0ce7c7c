//! The rows of the race days' endpoints: the dates with meetings, the results of a date
//! and of a race, and the race cards of today and of a date.

use racing_projections::openapi::{RaceCard, RaceResult, ResultsByDate};

use crate::http::discovery::{self, MeetingsPage};
use crate::http::documents;
use crate::http::route::{Component, Handler, Operation, Route, Runs};

/// The dates with meetings: first of the document routes, before the horses'.
pub(super) static MEETINGS: &[Route] = &[Route {
    path: "/api/v1/meetings",
    handler: &Handler::new(discovery::meetings),
    runs: Runs::Inline,
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
}];

/// The results and the race cards.
pub(super) static RESULTS_AND_CARDS: &[Route] = &[
    Route {
        path: "/api/v1/results/{date}",
        handler: &Handler::new(documents::results_by_date),
        runs: Runs::Inline,
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
        runs: Runs::Inline,
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
        runs: Runs::Inline,
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
        runs: Runs::Inline,
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
];
