//! The rows of the horses' endpoints: the search, a profile, its form and its records by
//! condition.

use racing_projections::openapi::{Analysis, Form, Profile};

use crate::http::analysis;
use crate::http::discovery::{self, HorsesPage};
use crate::http::documents;
use crate::http::route::{Component, Handler, Operation, Route, Runs};

/// The horses' rows, in the order the OpenAPI document lists them.
pub(super) static HORSES: &[Route] = &[
    Route {
        path: "/api/v1/horses",
        handler: &Handler::new(discovery::horse_search),
        runs: Runs::Apart,
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
        runs: Runs::Inline,
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
        runs: Runs::Inline,
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
        runs: Runs::ApartUnlessRemembered,
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
                    "`not_found`: the horse is in no result (as of the point).",
                ),
            ],
        },
    },
];
