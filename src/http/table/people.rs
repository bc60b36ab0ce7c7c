//! The rows of the jockeys' and trainers' endpoints: the lists, a record, and the
//! records by condition.

use racing_projections::openapi::{Analysis, JockeyList, PersonRecord, TrainerList};

use crate::http::analysis;
use crate::http::discovery;
use crate::http::route::{Component, Handler, Operation, Route, Runs};

/// The 400 answer of a jockey's or trainer's analysis.
const PERSON_ANALYSIS_400: &str = "`bad_request`: an id not of slug form, a `from` or `to` \
    that is not a real `YYYY-MM-DD`, or another query parameter.";

/// The jockeys' and trainers' rows, in the order the OpenAPI document lists them.
pub(super) static PEOPLE: &[Route] = &[
    Route {
        path: "/api/v1/jockeys",
        handler: &Handler::new(discovery::jockeys),
        runs: Runs::Inline,
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
        runs: Runs::Inline,
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
        runs: Runs::ApartUnlessRemembered,
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
                    "`not_found`: no jockey of that id has a ride (as of the point).",
                ),
            ],
        },
    },
    Route {
        path: "/api/v1/trainers",
        handler: &Handler::new(discovery::trainers),
        runs: Runs::Inline,
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
        runs: Runs::Inline,
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
        runs: Runs::ApartUnlessRemembered,
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
                    "`not_found`: no trainer of that id has a ride (as of the point).",
                ),
            ],
        },
    },
];
