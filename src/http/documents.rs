//! The document endpoints: the route table, and one handler for each row. A handler is
//! called with its parameters checked (their types say how, in `input.rs`), reads one
//! stored document and answers with it, sent as it is, without waiting on anything.
//!
//! A new endpoint is a handler here and a row in [`ROUTES`]: its path, its metrics label,
//! its input checks and its OpenAPI operation all come from the row.

use std::borrow::Cow;
use std::sync::atomic::Ordering;

use axum::http::{header, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use racing_projections::openapi::{Form, Profile, RaceCard, RaceOdds, RaceResult, ResultsByDate};
use racing_projections::{etag, Doc, DocKey, FormDoc, ETAG_LEN};

use racing_events::{Date, RaceNumber};

use super::input::{clip, FormLimit, HorseNo, Venue};
use super::route::{Component, Handler, Operation, Route};
use super::{cache, ApiError, AppState};

/// Every document endpoint, in the order the OpenAPI document lists them. A path is
/// answered by the first row whose template it fits, so a row with a literal segment
/// (`/racecards/today`) comes before one with a parameter in its place.
pub static ROUTES: &[Route] = &[
    Route {
        path: "/api/v1/horses/{horse_no}",
        handler: &Handler::new(horse_profile),
        doc: Operation {
            id: "horse_profile",
            tag: "horses",
            summary: "Get horse profile",
            description: "The profile of a horse by its brand number: the fields of interface.md \
                2.1. Takes no query parameters.",
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
        handler: &Handler::new(horse_form),
        doc: Operation {
            id: "horse_form",
            tag: "horses",
            summary: "Get horse form",
            description: "Every recorded race of the horse, newest first (date, then race number, \
                descending); `limit` keeps the newest N. A horse has form as soon as it appears \
                in a result, even without a profile; its `horse_name` then comes from its latest \
                result.",
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
        path: "/api/v1/results/{date}",
        handler: &Handler::new(results_by_date),
        doc: Operation {
            id: "results_by_date",
            tag: "results",
            summary: "List results by date",
            description: "All races of the date (or of the `venue`'s meeting), ascending race \
                number; in each, placed runners by position, then the rest as the feed listed \
                them.",
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
        handler: &Handler::new(race_result),
        doc: Operation {
            id: "race_result",
            tag: "results",
            summary: "Get single race result",
            description: "The result of one race: `{date, venue, race_number, race_name, \
                distance, going, runners}`, runners placed by position, then the rest.",
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
        handler: &Handler::new(racecard_today),
        doc: Operation {
            id: "racecard_today",
            tag: "racecards",
            summary: "Today's race card",
            description: "The card of today's meeting, where today is the calendar date in the \
                service's time zone (`RACING_TIMEZONE`, by default `Asia/Hong_Kong`); the `date` \
                field says which day that was. Scratched runners are removed.",
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
        handler: &Handler::new(racecard_by_date),
        doc: Operation {
            id: "racecard_by_date",
            tag: "racecards",
            summary: "Race card by date",
            description: "The card of the date, ascending race number, scratched runners removed.",
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
        handler: &Handler::new(race_odds),
        doc: Operation {
            id: "race_odds",
            tag: "odds",
            summary: "Current win odds of a race",
            description: "The current win odds of a race, for clients that poll: every runner \
                with a price, in horse-number order, and `seq`, the stream sequence of the race's \
                latest odds update (a WebSocket `subscribe` with `since` resumes from it). A \
                venue's race has the odds given for it and those a feeder gave without a venue \
                (for the race of that number at every venue), each runner at its latest price; \
                `venue` is null where no venue of the race is known yet.",
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
];

/// The profile of a horse.
fn horse_profile(state: &AppState, h: HorseNo) -> Result<Response, ApiError> {
    document(state, DocKey::Profile(&h), || format!("no horse {h}"))
}

/// The form of a horse, optionally cut to the newest `limit` entries.
fn horse_form(
    state: &AppState,
    h: HorseNo,
    limit: Option<FormLimit>,
) -> Result<Response, ApiError> {
    let Some(doc) = stored(state, DocKey::Form(&h))? else {
        return Err(ApiError::NotFound(format!("no horse {h}")));
    };
    let damaged = || ApiError::Internal(anyhow::anyhow!("form document of {h} is damaged"));
    match FormDoc::body(&doc, limit.map(|l| l.0)).ok_or_else(damaged)? {
        // The whole document is the stored value's tail: sent from the store's own buffer,
        // with the stored ETag.
        Cow::Borrowed(all) => {
            let at = all.len();
            let stored = Bytes::from_owner(doc.into_stored());
            let etag =
                HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN)).map_err(|_| damaged())?;
            Ok(json(stored.slice(stored.len() - at..), etag))
        }
        Cow::Owned(cut) => {
            let etag = HeaderValue::from_bytes(&etag(&cut)).map_err(|_| damaged())?;
            Ok(json(Bytes::from(cut), etag))
        }
    }
}

/// All results of a date.
fn results_by_date(state: &AppState, d: Date, venue: Option<Venue>) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    document(
        state,
        DocKey::Results {
            date: d.as_str(),
            venue,
        },
        || format!("no results for {d}{}", at(venue)),
    )
}

/// The result of one race.
fn race_result(
    state: &AppState,
    d: Date,
    n: RaceNumber,
    venue: Option<Venue>,
) -> Result<Response, ApiError> {
    let (n, venue) = (n.get(), venue.as_deref());
    let key = DocKey::Race {
        date: d.as_str(),
        race_number: n,
        venue,
    };
    document(state, key, || {
        format!("no result for race {n} on {d}{}", at(venue))
    })
}

/// Today's race card.
fn racecard_today(state: &AppState, venue: Option<Venue>) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    let today = jiff::Timestamp::now()
        .to_zoned(state.timezone.clone())
        .date()
        .to_string();
    let key = DocKey::Card {
        date: &today,
        venue,
    };
    document(state, key, || {
        let zone = &state.timezone_name;
        format!("no meeting today ({today} in {zone}){}", at(venue))
    })
}

/// The race card of a date.
fn racecard_by_date(state: &AppState, d: Date, venue: Option<Venue>) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    document(
        state,
        DocKey::Card {
            date: d.as_str(),
            venue,
        },
        || format!("no race card for {d}{}", at(venue)),
    )
}

/// The current odds of a race, as a WebSocket `snapshot` carries them.
fn race_odds(
    state: &AppState,
    d: Date,
    n: RaceNumber,
    venue: Option<Venue>,
) -> Result<Response, ApiError> {
    let (n, venue) = (n.get(), venue.as_deref());
    let key = DocKey::Odds {
        date: d.as_str(),
        race_number: n,
        venue,
    };
    document(state, key, || {
        format!("no odds for race {n} on {d}{}", at(venue))
    })
}

/// ` at VENUE` for a message about a venue's document, the venue clipped.
fn at(venue: Option<&str>) -> String {
    venue
        .map(|v| format!(" at {}", clip(v)))
        .unwrap_or_default()
}

/// A 503 until the projector has caught up with the log once.
pub(super) fn built(state: &AppState) -> Result<(), ApiError> {
    if state.ready.load(Ordering::Relaxed) {
        Ok(())
    } else {
        Err(ApiError::Unavailable(
            "the read models are still being built from the log; retry shortly".into(),
        ))
    }
}

/// Reads one stored document; `Ok(None)` when there is none.
fn stored(state: &AppState, key: DocKey<'_>) -> Result<Option<Doc>, ApiError> {
    built(state)?;
    Ok(state.read_models.doc(key)?)
}

/// The answer of a whole stored document, or a 404 that says what was `missing`.
fn document(
    state: &AppState,
    key: DocKey<'_>,
    missing: impl FnOnce() -> String,
) -> Result<Response, ApiError> {
    match stored(state, key)? {
        Some(doc) => whole(doc),
        None => Err(ApiError::NotFound(missing())),
    }
}

/// The answer of a whole stored document: its body and its `ETag`, both sent from the
/// store's own buffer.
fn whole(doc: Doc) -> Result<Response, ApiError> {
    let stored = Bytes::from_owner(doc.into_stored());
    let etag = HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN))
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("a stored ETag is not a header value")))?;
    Ok(json(stored.slice(ETAG_LEN..), etag))
}

/// A document answer: JSON, with its `ETag` and `Cache-Control`. Its header map is made
/// with room for every header the answer will carry, so that it is allocated once.
fn json(body: Bytes, etag: HeaderValue) -> Response {
    let mut response = Response::new(axum::body::Body::from(body));
    let headers = response.headers_mut();
    headers.reserve(ANSWER_HEADERS);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    cache::tag(&mut response, etag);
    response
}

/// Headers of a document answer: type, ETag, cache control, the two RateLimit headers,
/// Vary and the request id (hyper writes the length and date itself).
const ANSWER_HEADERS: usize = 7;
