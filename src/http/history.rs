//! The log's history as pages: a race's odds moves, and the change feed of every document.
//! Each page is read from what the projector keeps (the odds journal, the change rows),
//! never from NATS, and says where the next one starts.

use axum::http::HeaderValue;
use axum::response::Response;
use bytes::Bytes;
use racing_events::{Date, RaceNumber};
use racing_projections::{etag, ChangeCursor, DocKey, Reader};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use super::input::{ChangeSince, PageLimit, Since, Venue, DEFAULT_PAGE_LIMIT};
use super::respond::{at, built, deadline, json};
use super::state::AppState;

/// A page of the change feed.
#[derive(Serialize, ToSchema)]
#[schema(as = Changes, examples(json!({
    "changes": [
        {"seq": 5120, "path": "/api/v1/results/2026-11-18/3"},
        {"seq": 5120, "path": "/api/v1/horses/K307/form"},
        {"seq": 5131, "path": "/api/v1/odds/2026-11-18/4?venue=Happy+Valley"}
    ],
    "next": "5131.1"
})))]
pub struct ChangesPage {
    /// Every document that changed (or went) after `since`, in `seq` order: at most
    /// `limit`.
    changes: Vec<Change>,
    /// Where the following page starts, to pass as `since`: the last change's `seq` where
    /// the page ended with its last change, `"SEQ.N"` where it ended inside its changes
    /// (after the first N); `null` at the end (keep the last change's `seq`, or the
    /// answer's `Racing-Seq`, for the next poll).
    #[schema(required = true)]
    next: Option<Next>,
}

/// Where the following page of the change feed starts.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Next {
    /// After every change of this `seq`.
    Seq(u64),
    /// Inside the changes of one `seq`: `"SEQ.N"`, after the first N of them.
    Inside(String),
}

impl From<ChangeCursor> for Next {
    fn from(cursor: ChangeCursor) -> Next {
        match cursor {
            ChangeCursor::After(seq) => Next::Seq(seq),
            ChangeCursor::Inside { seq, done } => Next::Inside(format!("{seq}.{done}")),
        }
    }
}

/// A document that answers differently from a point of the log on.
#[derive(Serialize, ToSchema)]
pub struct Change {
    /// The stream sequence its change was applied with: a GET of `path` with this
    /// `as_of` answers the document as it then became (404 if it went).
    seq: u64,
    /// The API path that now answers differently, with its `venue` where it is one
    /// venue's document.
    path: String,
}

/// A race's odds moves after `since`, a page at a time.
pub(super) fn odds_history(
    state: &AppState,
    d: Date,
    n: RaceNumber,
    venue: Option<Venue>,
    since: Option<Since>,
    limit: Option<PageLimit>,
) -> Result<Response, ApiError> {
    built(state)?;
    let (n, venue) = (n.get(), venue.as_deref());
    let store = state.read_models.reader().until(deadline(state));
    // Every move up to the checkpoint read first is in the journal when it is scanned.
    let checkpoint = store.checkpoint()?;
    let since = since.map_or(0, |s| s.0);
    let limit = limit.map_or(DEFAULT_PAGE_LIMIT, |l| l.0);
    match store.odds_history(d.as_str(), n, venue, since, limit)? {
        Some(page) => page_answer(page, checkpoint),
        None => Err(ApiError::NotFound(format!(
            "no odds history for race {n} on {d}{}",
            at(venue)
        ))),
    }
}

/// The documents changed after `since`, a page at a time.
pub(super) fn changes(
    state: &AppState,
    since: Option<ChangeSince>,
    limit: Option<PageLimit>,
) -> Result<Response, ApiError> {
    built(state)?;
    let store = state.read_models.reader().until(deadline(state));
    // Every change up to the checkpoint read first is in the feed when it is scanned: a
    // client at the end that polls again with it as `since` misses nothing.
    let checkpoint = store.checkpoint()?;
    let page = change_page(
        &store,
        since.map_or(ChangeCursor::After(0), |s| s.0),
        limit.map_or(DEFAULT_PAGE_LIMIT, |l| l.0),
    )?;
    page_answer(page, checkpoint)
}

/// A page of the change feed after `since` as JSON ([`ChangesPage`]).
pub(super) fn change_page(
    store: &Reader,
    since: ChangeCursor,
    limit: usize,
) -> Result<Vec<u8>, ApiError> {
    let page = store.change_page(since, limit)?;
    let changes = page
        .rows
        .iter()
        .map(|(seq, key)| {
            let key = DocKey::parse(key).ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!(
                    "a change names no document: {}",
                    String::from_utf8_lossy(key)
                ))
            })?;
            Ok(Change {
                seq: *seq,
                path: path_of(key),
            })
        })
        .collect::<Result<_, ApiError>>()?;
    serde_json::to_vec(&ChangesPage {
        changes,
        next: page.next.map(Next::from),
    })
    .map_err(|e| ApiError::Internal(e.into()))
}

/// A page's answer: its `ETag` made here, and the checkpoint it was read at.
fn page_answer(page: Vec<u8>, checkpoint: u64) -> Result<Response, ApiError> {
    let etag = HeaderValue::from_bytes(&etag(&page))
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("an ETag is not a header value")))?;
    Ok(json(Bytes::from(page), etag, checkpoint, None))
}

/// The API path that answers the document `key`: the route table's template with the
/// key's values, and `?venue=` (form-encoded) for one venue's document.
pub fn path_of(key: DocKey<'_>) -> String {
    let venue = |v: Option<&str>| {
        v.map(|v| {
            let v: String = form_urlencoded::byte_serialize(v.as_bytes()).collect();
            format!("?venue={v}")
        })
        .unwrap_or_default()
    };
    match key {
        DocKey::Profile(h) => format!("/api/v1/horses/{h}"),
        DocKey::Form(h) => format!("/api/v1/horses/{h}/form"),
        DocKey::Results { date, venue: v } => format!("/api/v1/results/{date}{}", venue(v)),
        DocKey::Race {
            date,
            race_number,
            venue: v,
        } => format!("/api/v1/results/{date}/{race_number}{}", venue(v)),
        DocKey::Card { date, venue: v } => format!("/api/v1/racecards/{date}{}", venue(v)),
        DocKey::Odds {
            date,
            race_number,
            venue: v,
        } => format!("/api/v1/odds/{date}/{race_number}{}", venue(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::table;

    #[test]
    fn every_document_has_a_path_the_route_table_answers() {
        let keys = [
            DocKey::Profile("E271"),
            DocKey::Form("K307"),
            DocKey::Results {
                date: "2026-11-18",
                venue: None,
            },
            DocKey::Results {
                date: "2026-11-18",
                venue: Some("Happy Valley"),
            },
            DocKey::Race {
                date: "2026-11-18",
                race_number: 3,
                venue: Some("Sha Tin & Co/1?"),
            },
            DocKey::Card {
                date: "2026-11-18",
                venue: None,
            },
            DocKey::Odds {
                date: "2026-11-18",
                race_number: 12,
                venue: Some("Happy Valley"),
            },
        ];
        for key in keys {
            let path = path_of(key);
            let (path, query) = path
                .split_once('?')
                .map_or((path.as_str(), None), |(p, q)| (p, Some(q)));
            let matched =
                table::find(path).unwrap_or_else(|| panic!("{path} is no route of the table"));
            matched
                .route()
                .handler
                .check(matched.params(), query)
                .unwrap_or_else(|e| panic!("{path}?{query:?} does not pass its checks: {e:?}"));
        }
        assert_eq!(
            path_of(DocKey::Card {
                date: "2026-11-18",
                venue: Some("Sha Tin & Co/1?")
            }),
            "/api/v1/racecards/2026-11-18?venue=Sha+Tin+%26+Co%2F1%3F"
        );
    }
}
