//! The document handlers: one for each row of the route table (`table.rs`) that reads one
//! stored document. A handler is called with its parameters checked (their types say how,
//! in `input.rs`), reads the document and answers with it, sent as it is, without waiting
//! on anything.

use std::borrow::Cow;

use axum::http::HeaderValue;
use axum::response::Response;
use bytes::Bytes;
use racing_projections::{etag, Doc, DocKey, FormDoc, ETAG_LEN, HEAD_LEN};

use racing_events::{Date, RaceNumber};

use super::error::ApiError;
use super::input::{AsOf, FormLimit, HorseNo, Venue};
use super::respond::{self, at, built, json};
use super::state::AppState;

/// The profile of a horse.
pub(super) fn horse_profile(
    state: &AppState,
    h: HorseNo,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    document(state, DocKey::Profile(&h), as_of, || {
        format!("no horse {h}")
    })
}

/// The form of a horse, optionally cut to the newest `limit` entries.
pub(super) fn horse_form(
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
pub(super) fn results_by_date(
    state: &AppState,
    d: Date,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    of_date(
        state,
        (d, venue, as_of),
        |date, venue| DocKey::Results { date, venue },
        "no results for",
    )
}

/// The result of one race.
pub(super) fn race_result(
    state: &AppState,
    d: Date,
    n: RaceNumber,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    of_race(
        state,
        (d, n, venue, as_of),
        |date, race_number, venue| DocKey::Race {
            date,
            race_number,
            venue,
        },
        "no result for race",
    )
}

/// Today's race card.
pub(super) fn racecard_today(
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
/// for every request were a visible share of the CPU serving today's card.
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
pub(super) fn racecard_by_date(
    state: &AppState,
    d: Date,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    of_date(
        state,
        (d, venue, as_of),
        |date, venue| DocKey::Card { date, venue },
        "no race card for",
    )
}

/// The current odds of a race, as a WebSocket `snapshot` carries them.
pub(super) fn race_odds(
    state: &AppState,
    d: Date,
    n: RaceNumber,
    venue: Option<Venue>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    of_race(
        state,
        (d, n, venue, as_of),
        |date, race_number, venue| DocKey::Odds {
            date,
            race_number,
            venue,
        },
        "no odds for race",
    )
}

/// The document of a date (and venue) that `key` names, or a 404 that says `missing`
/// and which.
fn of_date(
    state: &AppState,
    (d, venue, as_of): (Date, Option<Venue>, Option<AsOf>),
    key: for<'a> fn(&'a str, Option<&'a str>) -> DocKey<'a>,
    missing: &str,
) -> Result<Response, ApiError> {
    let venue = venue.as_deref();
    document(state, key(d.as_str(), venue), as_of, || {
        format!("{missing} {d}{}", at(venue))
    })
}

/// The document of a race that `key` names, or a 404 that says `missing` and which.
fn of_race(
    state: &AppState,
    (d, n, venue, as_of): (Date, RaceNumber, Option<Venue>, Option<AsOf>),
    key: for<'a> fn(&'a str, u8, Option<&'a str>) -> DocKey<'a>,
    missing: &str,
) -> Result<Response, ApiError> {
    let (n, venue) = (n.get(), venue.as_deref());
    document(state, key(d.as_str(), n, venue), as_of, || {
        format!("{missing} {n} on {d}{}", at(venue))
    })
}

/// ` as of SEQ` for a message about a document as of a point of the log.
fn then(as_of: Option<AsOf>) -> String {
    as_of
        .map(|AsOf(seq)| format!(" as of {seq}"))
        .unwrap_or_default()
}

/// Reads one stored document, as it is or (`as_of`) as it was at a point of the log the
/// read models hold; `Ok(None)` when there is (or was) none. One as of a point is
/// rendered on a long reads' thread, unless it was answered lately.
fn stored(state: &AppState, key: DocKey<'_>, as_of: Option<AsOf>) -> Result<Option<Doc>, ApiError> {
    built(state)?;
    let Some(AsOf(seq)) = as_of else {
        return Ok(state.read_models.doc(key)?);
    };
    state
        .read_models
        .as_of(seq, &key.key(), |store| -> Result<_, ApiError> {
            let bounded = key.as_of_is_bounded();
            Ok(respond::as_of(state, store, seq, bounded)?.doc_as_of(key, seq)?)
        })
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
pub(super) fn whole(doc: Doc, as_of: Option<AsOf>) -> Result<Response, ApiError> {
    let seq = doc.seq();
    let stored = Bytes::from_owner(doc.into_stored());
    let etag = HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN))
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("a stored ETag is not a header value")))?;
    Ok(json(stored.slice(HEAD_LEN..), etag, seq, as_of))
}

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
