//! Reads that name a position of the log: `min_seq=N` (or the header `Racing-Min-Seq: N`)
//! on any read, and an `as_of` past the checkpoint. Such a read waits, holding its place
//! among the requests in flight but no thread, until the read models here hold the log up
//! to N (a watch the projector tells after each commit, [`ReadModels::wait_applied`]), for
//! at most the configured wait; then it is answered as any other, or it gets a 503 that
//! says where they stand. A position past the end of the log is a 404 at once: the end is
//! asked of NATS by whoever wires the service ([`LogEnd`](super::log_end::LogEnd)), and
//! only for a position past both the checkpoint and the end last seen. A read without one
//! costs nothing more than a look at its query, which the pipeline reads anyway for
//! `as_of`, and a comparison of each header's name as the pipeline measures them.
//!
//! [`ReadModels::wait_applied`]: crate::read_models::ReadModels::wait_applied

use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::extract::Request;
use axum::http::HeaderName;

use super::error::ApiError;
use super::input::sequence;
use super::query::MIN_SEQ;
use super::state::AppState;

/// The header that says the same as [`MIN_SEQ`], for clients that would rather not change
/// their URLs (a cache keyed by URL keeps one entry).
pub const MIN_SEQ_HEADER: HeaderName = HeaderName::from_static("racing-min-seq");

/// What a request's query and headers ask of the position, read in one pass over the
/// query.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Asked {
    /// Whether it has an `as_of` (however it is spelled: its read runs on a blocking
    /// thread).
    pub as_of: bool,
    /// The position the read models must hold before it is answered: the largest of its
    /// `min_seq`, its `Racing-Min-Seq` and a well-formed `as_of` (a malformed one is the
    /// handler's 400).
    pub at_least: Option<u64>,
}

/// What `request` asks of the position; `header`: whether it has a `Racing-Min-Seq` (the
/// pipeline notes it as it measures the headers). The query's names are read as the
/// handlers read them, percent-decoded (`min%5Fseq` is `min_seq`); a malformed or repeated
/// `min_seq`, or a malformed `Racing-Min-Seq`, is a 400.
pub(super) fn asked(request: &Request, header: bool) -> Result<Asked, ApiError> {
    let mut asked = Asked::default();
    if let Some(query) = request.uri().query() {
        let mut min_seq = None;
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            match name.as_ref() {
                "as_of" => {
                    asked.as_of = true;
                    if let Ok(seq) = sequence("as_of", &value) {
                        asked.at_least = asked.at_least.max(Some(seq));
                    }
                }
                MIN_SEQ => {
                    if min_seq.is_some() {
                        return Err(ApiError::BadRequest(format!(
                            "query parameter `{MIN_SEQ}` is given more than once"
                        )));
                    }
                    min_seq = Some(sequence(MIN_SEQ, &value)?);
                }
                _ => {}
            }
        }
        asked.at_least = asked.at_least.max(min_seq);
    }
    if let Some(value) = header
        .then(|| request.headers().get(MIN_SEQ_HEADER))
        .flatten()
    {
        let text = value.to_str().map_err(|_| {
            ApiError::BadRequest("header `Racing-Min-Seq` is not a stream sequence".into())
        })?;
        let seq = sequence("header `Racing-Min-Seq`", text.trim())?;
        asked.at_least = asked.at_least.max(Some(seq));
    }
    Ok(asked)
}

/// Whether a read that must see `seq` can be answered now: the read models hold it, or
/// they are still being built (the handler's 503 says so; there is nothing to wait for).
pub(super) fn reached(state: &AppState, seq: u64) -> bool {
    seq <= state.read_models.applied() || !state.ready.load(Ordering::Relaxed)
}

/// Waits, from `started` (when the request came) for at most the configured wait, until
/// the read models hold the log up to `seq`: `Ok(())` then; a 404 at once for a position
/// past the end of the log; else a 503 with the checkpoint they hold.
pub(super) async fn reach(state: &AppState, seq: u64, started: Instant) -> Result<(), ApiError> {
    let deadline = started + state.limits.min_seq_wait();
    let left = || deadline.saturating_duration_since(Instant::now());
    if seq > state.log_end.seen() {
        if let Some(end) = state.log_end.asked_since(started, left()).await {
            if seq > end {
                return Err(ApiError::PastTheLog { wanted: seq, end });
            }
        }
    }
    state
        .read_models
        .wait_applied(seq, left())
        .await
        .map_err(|checkpoint| ApiError::Behind {
            wanted: seq,
            checkpoint,
        })
}

#[cfg(test)]
mod tests {
    use axum::body::Body;

    use super::*;

    fn request(uri: &str, header: Option<&str>) -> Request {
        let mut builder = Request::builder().uri(uri);
        if let Some(h) = header {
            builder = builder.header("Racing-Min-Seq", h);
        }
        builder.body(Body::empty()).expect("a request")
    }

    #[test]
    fn a_read_asks_for_the_largest_position_it_names_however_it_is_spelled() {
        let at = |uri: &str, header: Option<&str>| asked(&request(uri, header), true).ok();
        let horse = "/api/v1/horses/H001";
        assert_eq!(at(horse, None), Some(Asked::default()));
        assert_eq!(
            at(&format!("{horse}?min_seq=7"), None),
            Some(Asked {
                as_of: false,
                at_least: Some(7)
            })
        );
        assert_eq!(
            at(&format!("{horse}?min%5Fseq=7&as_of=9"), Some("8")),
            Some(Asked {
                as_of: true,
                at_least: Some(9)
            })
        );
        assert_eq!(
            at(&format!("{horse}?as%5Fof=x"), Some(" 12 ")),
            Some(Asked {
                as_of: true,
                at_least: Some(12)
            }),
            "a malformed as_of is the handler's to refuse"
        );
        for (uri, header) in [
            (format!("{horse}?min_seq=07"), None),
            (format!("{horse}?min_seq=-1"), None),
            (format!("{horse}?min_seq=1&min_seq=2"), None),
            (format!("{horse}?min_seq=9223372036854775808"), None),
            (horse.to_owned(), Some("seven")),
        ] {
            assert!(
                matches!(
                    asked(&request(&uri, header), true),
                    Err(ApiError::BadRequest(_))
                ),
                "{uri} {header:?}"
            );
        }
    }
}
