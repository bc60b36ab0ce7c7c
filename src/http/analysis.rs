//! The records by condition of a horse, a jockey and a trainer (`/analysis`): worked out
//! from the read models when asked for (`racing_projections::Store::analysis`), over the
//! dates `from` to `to`, as they are or `as_of` a point of the log. Answers as they are
//! are kept in memory until a commit changes a form (`ReadModels::analysis`), answers as
//! of a point until another store is swapped in (`ReadModels::as_of`): one held there is
//! sent from the thread that took the request, one to work out is worked out on a long
//! reads' thread (`long.rs`).

use axum::response::Response;
use racing_projections::{Role, Span, Subject};

use super::documents::whole;
use super::error::ApiError;
use super::input::{AsOf, FromDate, HorseNo, PersonId, ToDate};
use super::long;
use super::respond::{self, built, deadline};
use super::state::AppState;

/// A horse's records by condition.
pub(super) fn horse(
    state: &AppState,
    h: HorseNo,
    from: Option<FromDate>,
    to: Option<ToDate>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    answer(state, Subject::Horse(&h), (from, to), as_of)
}

/// A jockey's records by condition.
pub(super) fn jockey(
    state: &AppState,
    id: PersonId,
    from: Option<FromDate>,
    to: Option<ToDate>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    answer(state, Subject::Person(Role::Jockey, &id), (from, to), as_of)
}

/// A trainer's records by condition.
pub(super) fn trainer(
    state: &AppState,
    id: PersonId,
    from: Option<FromDate>,
    to: Option<ToDate>,
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    answer(
        state,
        Subject::Person(Role::Trainer, &id),
        (from, to),
        as_of,
    )
}

/// The records of `subject` over `from` to `to`, as they are or as of a point.
fn answer(
    state: &AppState,
    subject: Subject<'_>,
    (from, to): (Option<FromDate>, Option<ToDate>),
    as_of: Option<AsOf>,
) -> Result<Response, ApiError> {
    built(state)?;
    // A `from` after `to` is a range of no dates, whose records count no run: no schema
    // can tell the two apart, so neither is refused.
    let (from, to) = (from.map(|d| d.0), to.map(|d| d.0));
    let span = Span {
        from: from.as_ref().map(|d| d.as_str()),
        to: to.as_ref().map(|d| d.as_str()),
    };
    // What a 404 says is missing: a horse's entry in a result, a person's ride.
    let (kind, id, missing) = match subject {
        Subject::Horse(h) => ("horse", h, "is in no result"),
        Subject::Person(role, id) => (role.name(), id, "has no ride"),
    };
    // What names the question, as it is or as of a point.
    let key = format!(
        "{kind}/{id}?{}&{}",
        span.from.unwrap_or_default(),
        span.to.unwrap_or_default()
    );
    let doc = match as_of {
        None => match state.read_models.remembered_analysis(&key) {
            Some(doc) => Some(doc),
            // Worked out on a long reads' thread alone (`Runs::ApartUnlessRemembered`).
            None if !long::apart() => return Err(ApiError::NotRemembered),
            None => state
                .read_models
                .analysis(&key, subject, span, deadline(state))?,
        },
        Some(AsOf(seq)) => {
            state
                .read_models
                .as_of(seq, key.as_bytes(), |store| -> Result<_, ApiError> {
                    Ok(respond::as_of(state, store, seq, false)?.analysis(
                        subject,
                        span,
                        Some(seq),
                    )?)
                })?
        }
    };
    match doc {
        Some(doc) => whole(doc, as_of),
        None => Err(ApiError::NotFound(format!(
            "{kind} {id} {missing}{}",
            as_of
                .map(|AsOf(seq)| format!(" as of {seq}"))
                .unwrap_or_default()
        ))),
    }
}
