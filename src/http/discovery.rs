//! The endpoints of discovery: which dates have meetings, horses by name, jockeys and
//! trainers. The meetings and the search are read by a scan of the records the projector
//! keeps for them (one a date, one a horse); a jockey's or trainer's record and the
//! lists of them are documents rendered by the projector, sent as stored.

use axum::http::HeaderValue;
use axum::response::Response;
use bytes::Bytes;
use racing_projections::{etag, Doc, HorseMatch, MeetingRow, Reader, Role, ETAG_LEN, HEAD_LEN};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use super::input::{FromDate, NameText, PersonId, SearchLimit, ToDate, DEFAULT_SEARCH_LIMIT};
use super::respond::{built, json};
use super::state::AppState;

/// Days of the meetings' range before today without a `from`.
pub const DEFAULT_DAYS_BEFORE: i64 = 30;

/// Days of the meetings' range after today without a `to`.
pub const DEFAULT_DAYS_AFTER: i64 = 14;

/// Most days (both ends included) a page of meetings covers.
pub const MAX_RANGE_DAYS: i64 = 366;

/// The meetings of a range of dates, a page of at most [`MAX_RANGE_DAYS`] days at a time.
#[derive(Serialize, ToSchema)]
#[schema(as = Meetings, examples(json!({
    "from": "2026-11-01", "to": "2026-11-30",
    "meetings": [
        {"date": "2026-11-15", "venue": "Sha Tin", "races": 10, "card": true, "results": 10},
        {"date": "2026-11-18", "venue": "Happy Valley", "races": 9, "card": true, "results": 0}
    ],
    "next": null
})))]
pub struct MeetingsPage {
    /// The first date this page covers, `YYYY-MM-DD`: the request's `from`.
    #[schema(format = Date)]
    from: String,
    /// The last date this page covers, `YYYY-MM-DD`: the request's `to`, or, for a range
    /// of more than 366 days, the 366th day from `from`.
    #[schema(format = Date)]
    to: String,
    /// Every meeting from `from` to `to` with a card or a result, by date, then venue.
    meetings: Vec<MeetingRow>,
    /// Where the range goes on: the first date after this page, up to the request's `to`,
    /// that has a meeting; ask again with it as `from` (and the same `to`) for the next
    /// page. `null` when none is left.
    #[schema(required = true, format = Date)]
    next: Option<String>,
}

/// The horses a search found.
#[derive(Serialize, ToSchema)]
#[schema(as = HorseSearch, examples(json!({
    "horses": [{"horse_no": "E271", "horse_name": "GOLDEN SIXTY"}]
})))]
pub struct HorsesPage {
    /// Horses with a name that contains the text: those with a name that starts with it
    /// first, then alphabetical by name.
    horses: Vec<HorseMatch>,
}

/// The meetings from `from` to `to`, by default from 30 days before today to 14 after.
pub(super) fn meetings(
    state: &AppState,
    from: Option<FromDate>,
    to: Option<ToDate>,
) -> Result<Response, ApiError> {
    built(state)?;
    let today = jiff::Timestamp::now()
        .to_zoned(state.timezone.clone())
        .date();
    let day = |d: racing_events::Date| -> Result<jiff::civil::Date, ApiError> {
        d.as_str()
            .parse()
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("a checked date: {e}")))
    };
    let around = |days: i64| -> Result<jiff::civil::Date, ApiError> {
        today
            .checked_add(jiff::Span::new().days(days))
            .map_err(|e| ApiError::Internal(e.into()))
    };
    let from = match from {
        Some(FromDate(d)) => day(d)?,
        None => around(-DEFAULT_DAYS_BEFORE)?,
    };
    let to = match to {
        Some(ToDate(d)) => day(d)?,
        None => around(DEFAULT_DAYS_AFTER)?,
    };
    // A page covers at most MAX_RANGE_DAYS days; a `from` after `to` is a range of no
    // dates, with no meetings (no schema can tell it from another range, so it is not
    // refused).
    let last = from
        .checked_add(jiff::Span::new().days(MAX_RANGE_DAYS - 1))
        .unwrap_or(jiff::civil::Date::MAX);
    let page_to = to.min(last);
    let store = state.read_models.reader();
    let checkpoint = store.checkpoint()?;
    answer(
        meetings_page(
            &store,
            &from.to_string(),
            &page_to.to_string(),
            &to.to_string(),
        )?,
        checkpoint,
    )
}

/// The page of meetings from `from` to `to` as JSON ([`MeetingsPage`]), with where the
/// range goes on up to `end`.
pub(super) fn meetings_page(
    store: &Reader,
    from: &str,
    to: &str,
    end: &str,
) -> Result<Vec<u8>, ApiError> {
    let meetings = if from <= to {
        store.meetings(from, to)?
    } else {
        Vec::new()
    };
    // The dates are `YYYY-MM-DD`: their order is their text's.
    let after = next_day(to);
    let next = match after {
        Some(after) if from <= to && after.as_str() <= end => {
            store.first_meeting_date(&after, end)?
        }
        _ => None,
    };
    let page = MeetingsPage {
        from: from.to_owned(),
        to: to.to_owned(),
        meetings,
        next,
    };
    serde_json::to_vec(&page).map_err(|e| ApiError::Internal(e.into()))
}

/// The date after `date` (`YYYY-MM-DD`); `None` past the calendar's end.
fn next_day(date: &str) -> Option<String> {
    let day: jiff::civil::Date = date.parse().ok()?;
    day.tomorrow().ok().map(|d| d.to_string())
}

/// The horses with a name that contains `text`, at most `limit`, as JSON
/// ([`HorsesPage`]).
pub(super) fn horses_page(store: &Reader, text: &str, limit: usize) -> Result<Vec<u8>, ApiError> {
    let horses = store.find_horses(text, limit)?;
    serde_json::to_vec(&HorsesPage { horses }).map_err(|e| ApiError::Internal(e.into()))
}

/// The horses with a name that contains `name`.
pub(super) fn horse_search(
    state: &AppState,
    name: NameText,
    limit: Option<SearchLimit>,
) -> Result<Response, ApiError> {
    built(state)?;
    let store = state
        .read_models
        .reader()
        .until(super::respond::deadline(state));
    let checkpoint = store.checkpoint()?;
    let limit = limit.map_or(DEFAULT_SEARCH_LIMIT, |l| l.0);
    answer(horses_page(&store, &name, limit)?, checkpoint)
}

/// Every jockey, by name.
pub(super) fn jockeys(state: &AppState, name: Option<NameText>) -> Result<Response, ApiError> {
    people(state, Role::Jockey, name)
}

/// Every trainer, by name.
pub(super) fn trainers(state: &AppState, name: Option<NameText>) -> Result<Response, ApiError> {
    people(state, Role::Trainer, name)
}

/// A jockey's record.
pub(super) fn jockey(state: &AppState, id: PersonId) -> Result<Response, ApiError> {
    person(state, Role::Jockey, &id)
}

/// A trainer's record.
pub(super) fn trainer(state: &AppState, id: PersonId) -> Result<Response, ApiError> {
    person(state, Role::Trainer, &id)
}

/// The record of one person, as the read models keep it.
fn person(state: &AppState, role: Role, id: &str) -> Result<Response, ApiError> {
    built(state)?;
    match state.read_models.person(role, id)? {
        Some(doc) => stored(doc),
        None => Err(ApiError::NotFound(format!(
            "no {} {id}: nobody of that id has a ride in a result",
            role.name()
        ))),
    }
}

/// Everyone of `role`, those whose name contains `name` (any case) where it is given.
fn people(state: &AppState, role: Role, name: Option<NameText>) -> Result<Response, ApiError> {
    built(state)?;
    let Some(name) = name else {
        // A list kept in memory is answered without reading the store's checkpoint.
        return match state.read_models.people(role)? {
            Some(doc) => stored(doc),
            None => answer(
                racing_projections::render_list(role, Vec::new()),
                state.read_models.reader().checkpoint()?,
            ),
        };
    };
    let store = state.read_models.reader();
    let (seq, rows) = match store.people_rows(role)? {
        Some(found) => found,
        None => (store.checkpoint()?, Vec::new()),
    };
    let text = name.to_lowercase();
    let rows = rows
        .into_iter()
        .filter(|r| r.name.to_lowercase().contains(text.as_str()))
        .collect();
    answer(racing_projections::render_list(role, rows), seq)
}

/// A stored document's answer, sent from the store's own buffer.
fn stored(doc: Doc) -> Result<Response, ApiError> {
    let seq = doc.seq();
    let stored = Bytes::from_owner(doc.into_stored());
    let etag = HeaderValue::from_maybe_shared(stored.slice(..ETAG_LEN))
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("a stored ETag is not a header value")))?;
    Ok(json(stored.slice(HEAD_LEN..), etag, seq, None))
}

/// The answer of a body made for this request, with its `ETag` and `seq`, the stream
/// sequence it reflects (the checkpoint it was read at).
fn answer(body: Vec<u8>, seq: u64) -> Result<Response, ApiError> {
    let etag = HeaderValue::from_bytes(&etag(&body))
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("an ETag is not a header value")))?;
    Ok(json(Bytes::from(body), etag, seq, None))
}
