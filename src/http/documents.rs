//! The document endpoints: the route table, and one handler for each row. A handler is
//! called with its parameters checked (their types say how, in `input.rs`), reads one
//! stored document and answers with it, sent as it is, without waiting on anything.
//!
//! A new endpoint is a handler here and a row in [`ROUTES`]: its path, its metrics label,
//! its input checks and its OpenAPI operation all come from the row.

use std::borrow::Cow;
use std::sync::atomic::Ordering;

use axum::http::{header, HeaderName, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use racing_projections::openapi::{
    Form, JockeyList, OddsHistory, PersonRecord, Profile, RaceCard, RaceOdds, RaceResult,
    ResultsByDate, TrainerList,
};
use racing_projections::{etag, Doc, DocKey, FormDoc, ETAG_LEN, HEAD_LEN};

use racing_events::{Date, RaceNumber};

use super::discovery::{self, HorsesPage, MeetingsPage};
use super::history::{self, ChangesPage};
use super::index::{self, ApiIndex, INDEX_PATH};
use super::input::{clip, AsOf, FormLimit, HorseNo, Venue};
use super::openapi::REFERENCE_TAG;
use super::route::{Component, Handler, Operation, Route};
use super::{cache, ApiError, AppState};

/// Every document endpoint, in the order the OpenAPI document lists them. A path is
/// answered by the first row whose template it fits, so a row with a literal segment
/// (`/racecards/today`) comes before one with a parameter in its place.
pub static ROUTES: &[Route] = &[
    Route {
        path: INDEX_PATH,
        handler: &Handler::new(index::api_index),
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
                `/api/v1`; the reference it links to needs none. Takes no query parameters.",
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
                The range holds at most 366 days.",
            ok: "The meetings of the range.",
            body: Component::of::<MeetingsPage>(),
            errors: &[(
                "400",
                "`bad_request`: a `from` or `to` that is not a real `YYYY-MM-DD`, `from` after \
                 `to`, a range of more than 366 days, or another query parameter.",
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
        handler: &Handler::new(horse_profile),
        long: false,
        doc: Operation {
            id: "horse_profile",
            tag: "horses",
            summary: "Get horse profile",
            description: "The profile of a horse by its brand number: its origin, colour, sex \
                and age, trainer and owner, career stakes, starts, wins and places, then its \
                pedigree, import type, ratings and season stakes where the feed gave them. \
                Takes no query parameters.",
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
        long: false,
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
        long: false,
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
        long: false,
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
        long: false,
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
        long: false,
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
        long: false,
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
                (`TNP`); an amended result counts as amended, a retracted one not at all. \
                Takes no query parameters.",
            ok: "The jockey's record.",
            body: Component::of::<PersonRecord>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: an id not of slug form (lower-case letters and digits, \
                     words joined by single `-`), or a query parameter.",
                ),
                ("404", "`not_found`: no jockey of that id has a ride."),
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
                overall and by season, and the 20 newest, as a jockey's record. Takes no query \
                parameters.",
            ok: "The trainer's record.",
            body: Component::of::<PersonRecord>(),
            errors: &[
                (
                    "400",
                    "`bad_request`: an id not of slug form (lower-case letters and digits, \
                     words joined by single `-`), or a query parameter.",
                ),
                ("404", "`not_found`: no trainer of that id has a ride."),
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

/// The profile of a horse.
fn horse_profile(state: &AppState, h: HorseNo, as_of: Option<AsOf>) -> Result<Response, ApiError> {
    document(state, DocKey::Profile(&h), as_of, || {
        format!("no horse {h}")
    })
}

/// The form of a horse, optionally cut to the newest `limit` entries.
fn horse_form(
    state: &AppState,
    h: HorseNo,
    limit: Option<FormLimit>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    let Some(doc) = stored(state, DocKey::Form(&h), as_of)? else {
        return Err(ApiError::NotFound(format!("no horse {h}{}", then(as_of))));
    };
    let damaged = || ApiError::Internal(anyhow::anyhow!("form document of {h} is damaged"));
    let seq = doc.seq();
    match FormDoc::body(&doc, limit.map(|l| l.0)).ok_or_else(damaged)? {
        // The whole document is the stored value's tail: sent from the store's own buffer,
        // with the stored ETag.
        Cow::Borrowed(all) => {
            let at = all.len();
            let stored = Bytes::from_owner(doc.into_stored());
            let etag =
                HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN)).map_err(|_| damaged())?;
            Ok(json(stored.slice(stored.len() - at..), etag, seq, as_of))
        }
        Cow::Owned(cut) => {
            let etag = HeaderValue::from_bytes(&etag(&cut)).map_err(|_| damaged())?;
            Ok(json(Bytes::from(cut), etag, seq, as_of))
        }
    }
}

/// All results of a date.
fn results_by_date(
    state: &AppState,
    d: Date,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    let key = DocKey::Results {
        date: d.as_str(),
        venue,
    };
    document(state, key, as_of, || {
        format!("no results for {d}{}", at(venue))
    })
}

/// The result of one race.
fn race_result(
    state: &AppState,
    d: Date,
    n: RaceNumber,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    let (n, venue) = (n.get(), venue.as_deref());
    let key = DocKey::Race {
        date: d.as_str(),
        race_number: n,
        venue,
    };
    document(state, key, as_of, || {
        format!("no result for race {n} on {d}{}", at(venue))
    })
}

/// Today's race card.
fn racecard_today(
    state: &AppState,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    let today = today(&state.timezone, &state.timezone_name);
    let key = DocKey::Card {
        date: &today,
        venue,
    };
    document(state, key, as_of, || {
        let zone = &state.timezone_name;
        format!("no meeting today ({today} in {zone}){}", at(venue))
    })
}

/// Today's date in `zone` (named `name`), worked out once a second on each thread: the
/// date changes only on a whole second, and a look-up in the zone and a date formatted
/// for every request were about 1% of the CPU serving today's card.
fn today(zone: &jiff::tz::TimeZone, name: &str) -> String {
    struct Known {
        second: i64,
        zone: String,
        date: String,
    }
    thread_local! {
        static KNOWN: std::cell::RefCell<Option<Known>> = const { std::cell::RefCell::new(None) };
    }
    let now = jiff::Timestamp::now();
    let second = now.as_second();
    KNOWN.with_borrow_mut(|known| match known {
        Some(k) if k.second == second && k.zone == name => k.date.clone(),
        _ => {
            let date = now.to_zoned(zone.clone()).date().to_string();
            *known = Some(Known {
                second,
                zone: name.to_owned(),
                date: date.clone(),
            });
            date
        }
    })
}

/// The race card of a date.
fn racecard_by_date(
    state: &AppState,
    d: Date,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    let key = DocKey::Card {
        date: d.as_str(),
        venue,
    };
    document(state, key, as_of, || {
        format!("no race card for {d}{}", at(venue))
    })
}

/// The current odds of a race, as a WebSocket `snapshot` carries them.
fn race_odds(
    state: &AppState,
    d: Date,
    n: RaceNumber,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    let (n, venue) = (n.get(), venue.as_deref());
    let key = DocKey::Odds {
        date: d.as_str(),
        race_number: n,
        venue,
    };
    document(state, key, as_of, || {
        format!("no odds for race {n} on {d}{}", at(venue))
    })
}

/// ` at VENUE` for a message about a venue's document, the venue clipped.
pub(super) fn at(venue: Option<&str>) -> String {
    venue
        .map(|v| format!(" at {}", clip(v)))
        .unwrap_or_default()
}

/// ` as of SEQ` for a message about a document as of a point of the log.
fn then(as_of: Option<AsOf>) -> String {
    as_of
        .map(|AsOf(seq)| format!(" as of {seq}"))
        .unwrap_or_default()
}

/// When a request that reads what grows with the data gives up (`Store::until`): its time
/// limit from now, as the pipeline's own bound on it runs.
pub(super) fn deadline(state: &AppState) -> std::time::Instant {
    std::time::Instant::now() + state.limits.timeout()
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

/// Reads one stored document, as it is or (`as_of`) as it was at a point of the log no
/// later than the checkpoint; `Ok(None)` when there is (or was) none.
fn stored(state: &AppState, key: DocKey<'_>, as_of: Option<AsOf>) -> Result<Option<Doc>, ApiError> {
    built(state)?;
    let Some(AsOf(seq)) = as_of else {
        return Ok(state.read_models.doc(key)?);
    };
    let store = state.read_models.load().until(deadline(state));
    let checkpoint = store.checkpoint()?;
    if seq > checkpoint {
        return Err(ApiError::BadRequest(format!(
            "as_of {seq} is past the log applied here: the checkpoint is {checkpoint}"
        )));
    }
    Ok(store.doc_as_of(key, seq)?)
}

/// The answer of a whole stored document, or a 404 that says what was `missing`.
fn document(
    state: &AppState,
    key: DocKey<'_>,
    as_of: Option<AsOf>,
    missing: impl FnOnce() -> String,
) -> Result<Response, ApiError> {
    match stored(state, key, as_of)? {
        Some(doc) => whole(doc, as_of),
        None => Err(ApiError::NotFound(format!("{}{}", missing(), then(as_of)))),
    }
}

/// The answer of a whole stored document: its body and its `ETag`, both sent from the
/// store's own buffer.
fn whole(doc: Doc, as_of: Option<AsOf>) -> Result<Response, ApiError> {
    let seq = doc.seq();
    let stored = Bytes::from_owner(doc.into_stored());
    let etag = HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN))
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("a stored ETag is not a header value")))?;
    Ok(json(stored.slice(HEAD_LEN..), etag, seq, as_of))
}

/// A document answer: JSON, with its `ETag`, `Cache-Control` (a document as of a point
/// of the log never changes) and `Racing-Seq`, the stream sequence it reflects. Its
/// header map is made with room for every header the answer will carry, so that it is
/// allocated once.
pub(super) fn json(body: Bytes, etag: HeaderValue, seq: u64, as_of: Option<AsOf>) -> Response {
    let mut response = Response::new(axum::body::Body::from(body));
    let headers = response.headers_mut();
    headers.reserve(ANSWER_HEADERS);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(RACING_SEQ, HeaderValue::from(seq));
    if as_of.is_some() {
        cache::tag_immutable(&mut response, etag);
    } else {
        cache::tag(&mut response, etag);
    }
    response
}

/// The header that gives the stream sequence an answer reflects: a WebSocket `subscribe`
/// with it as `since` resumes right after what the answer holds.
pub const RACING_SEQ: HeaderName = HeaderName::from_static("racing-seq");

/// Headers of a document answer: type, ETag, cache control, Racing-Seq, the two RateLimit
/// headers, Vary and the request id (hyper writes the length and date itself).
const ANSWER_HEADERS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_is_the_zones_own_date_whichever_zone_asked_last() {
        // Fourteen hours and more apart: one of them is on another date than UTC for
        // ten hours of every day, and the two are on different dates for most of it.
        let zones = ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"];
        for name in zones.iter().chain(&zones) {
            let zone = jiff::tz::TimeZone::get(name).expect("a known zone");
            let expected = || {
                jiff::Timestamp::now()
                    .to_zoned(zone.clone())
                    .date()
                    .to_string()
            };
            let before = expected();
            let got = today(&zone, name);
            let after = expected();
            assert!(got == before || got == after, "{name}: {got}");
        }
    }
}
