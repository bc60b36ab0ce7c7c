//! Checks of everything a client puts in a request line: path segments and query
//! parameters. Pure functions over strings, shared by the handlers and the fuzz targets,
//! and the types of the handlers' parameters, each with the check it passed and the
//! OpenAPI schema that says what the check accepts.

use racing_events::{is_horse_no, Date, RaceNumber};
use racing_projections::ChangeCursor;
use serde_json::json;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::{RefOr, Schema};

use super::error::ApiError;
use super::query::clip;
use super::route::{In, Param};

/// Largest `limit` on a form request.
pub const MAX_FORM_LIMIT: usize = 1000;

/// Largest `limit` of a page of history (odds moves, changes).
pub const MAX_PAGE_LIMIT: usize = 10_000;

/// A page of history without a `limit`.
pub const DEFAULT_PAGE_LIMIT: usize = 1_000;

/// A `{date}` segment: a real calendar date written `YYYY-MM-DD`.
pub fn date(s: &str) -> Result<Date, ApiError> {
    Date::parse(s)
        .ok_or_else(|| ApiError::BadRequest(format!("date `{}` is not {}", clip(s), Date::RULE)))
}

/// Whether `s` is a whole number written as one is printed: digits, no sign and no
/// leading zero. So each race and each limit has one URL, as each date has, and a cache
/// never holds `/3` and `/03` apart.
fn canonical_digits(s: &str) -> bool {
    !s.starts_with('0') && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A `{race_number}` segment: 1 to 99, written without sign or leading zero.
pub fn race_number(s: &str) -> Result<RaceNumber, ApiError> {
    RaceNumber::parse(s).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "race number `{}` is not {} (digits, no leading zero)",
            clip(s),
            RaceNumber::RULE
        ))
    })
}

/// Largest stream sequence a request may name: JSON's and OpenAPI's largest integer
/// (`int64`), far past any stream's end.
pub const MAX_SEQUENCE: u64 = i64::MAX as u64;

/// A stream sequence in the query parameter `name`: an integer from 0 to
/// [`MAX_SEQUENCE`], without sign or leading zero.
pub fn sequence(name: &str, s: &str) -> Result<u64, ApiError> {
    match s.parse::<u64>() {
        Ok(n) if n <= MAX_SEQUENCE && (s == "0" || canonical_digits(s)) => Ok(n),
        _ => Err(ApiError::BadRequest(format!(
            "{name} `{}` is not a stream sequence: an integer from 0 to {} (digits, no leading \
             zero)",
            clip(s),
            MAX_SEQUENCE
        ))),
    }
}

/// A `{horse_no}` segment, by the feed contract's rule.
pub fn horse_no(s: &str) -> Result<&str, ApiError> {
    if is_horse_no(s) {
        Ok(s)
    } else {
        Err(ApiError::BadRequest(format!(
            "horse number `{}` must be 1 to 32 of A-Z a-z 0-9 _ -, starting with a letter or digit",
            clip(s)
        )))
    }
}

/// The `limit` of a form request: 1 to [`MAX_FORM_LIMIT`], without sign or leading zero.
pub fn form_limit(l: &str) -> Result<usize, ApiError> {
    match l.parse::<usize>() {
        Ok(n @ 1..=MAX_FORM_LIMIT) if canonical_digits(l) => Ok(n),
        _ => Err(ApiError::BadRequest(format!(
            "limit `{}` is not an integer from 1 to {MAX_FORM_LIMIT} (digits, no leading zero)",
            clip(l)
        ))),
    }
}

// ---- The parameters of the endpoints: each rule once, with the schema that says it. ----

/// Pattern of a `{date}`: `YYYY-MM-DD` with a month and day that can exist; the check
/// ([`date`]) also wants a real calendar date from year 1000 on (no 30 February).
pub const DATE_PATTERN: &str = r"^[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";
/// Pattern of a `{horse_no}`, as `racing_events::is_horse_no` checks it.
pub const HORSE_NO_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$";
/// Pattern of `?venue=`: anything with a character that is not white space.
pub const VENUE_PATTERN: &str = r"\S";

/// A `{horse_no}`: a horse's brand number.
#[derive(Debug)]
pub struct HorseNo(String);

/// The `?limit=` of a form: 1 to [`MAX_FORM_LIMIT`].
#[derive(Debug, Clone, Copy)]
pub struct FormLimit(pub usize);

/// The `?as_of=` of a document: a stream sequence, the point of the log to answer as of.
#[derive(Debug, Clone, Copy)]
pub struct AsOf(pub u64);

/// The `?since=` of a page of history: a stream sequence, what came after it.
#[derive(Debug, Clone, Copy)]
pub struct Since(pub u64);

/// The `?since=` of the change feed: a stream sequence, or a place inside the changes of
/// one (`SEQ.N`: after the first `N` of them), as a page's `next` gives it.
#[derive(Debug, Clone, Copy)]
pub struct ChangeSince(pub ChangeCursor);

/// The `?limit=` of a page of history: 1 to [`MAX_PAGE_LIMIT`].
#[derive(Debug, Clone, Copy)]
pub struct PageLimit(pub usize);

/// The `?min_seq=` every read takes (the pipeline reads it, `position.rs`): a stream
/// sequence the read models must hold before the read is answered.
#[derive(Debug, Clone, Copy)]
pub struct MinSeq(pub u64);

/// The `?venue=` of the date endpoints: the racecourse of one of the date's meetings.
#[derive(Debug)]
pub struct Venue(String);

impl Param for Date {
    const NAME: &'static str = "date";
    const IN: In = In::Path;
    const DOC: &'static str = "Meeting date, `YYYY-MM-DD`.";
    const EXAMPLE: &'static str = "2026-11-18";
    const SCHEMA: &'static str = "Date";

    fn check(raw: &str) -> Result<Self, ApiError> {
        date(raw)
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
            .pattern(Some(DATE_PATTERN))
            .description(Some(
                "A real calendar date written `YYYY-MM-DD` (year 1000 or later); anything \
                 else is a 400.",
            ))
            .examples([json!(Self::EXAMPLE)])
            .into()
    }
}

impl Param for RaceNumber {
    const NAME: &'static str = "race_number";
    const IN: In = In::Path;
    const DOC: &'static str = "Race number within the meeting, 1 to 99.";
    const EXAMPLE: &'static str = "1";
    const SCHEMA: &'static str = "RaceNumber";

    fn check(raw: &str) -> Result<Self, ApiError> {
        race_number(raw)
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(RaceNumber::MIN))
            .maximum(Some(RaceNumber::MAX))
            .description(Some(
                "Race number within the meeting: an integer from 1 to 99 written in \
                 digits; anything else is a 400.",
            ))
            .examples([json!(1)])
            .into()
    }
}

impl Param for HorseNo {
    const NAME: &'static str = "horse_no";
    const IN: In = In::Path;
    const DOC: &'static str = "The horse's brand number, e.g. `E271`.";
    const EXAMPLE: &'static str = "E271";
    const SCHEMA: &'static str = "HorseNo";

    fn check(raw: &str) -> Result<Self, ApiError> {
        horse_no(raw).map(|h| HorseNo(h.to_owned()))
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(HORSE_NO_PATTERN))
            .min_length(Some(1))
            .max_length(Some(32))
            .description(Some(
                "Horse (brand) number: 1 to 32 of `A-Z a-z 0-9 _ -`, starting with a letter \
                 or digit; anything else is a 400.",
            ))
            .examples([json!(Self::EXAMPLE)])
            .into()
    }
}

impl Param for FormLimit {
    const NAME: &'static str = "limit";
    const IN: In = In::Query;
    const DOC: &'static str = "Keep only the newest N entries, 1 to 1000.";
    const EXAMPLE: &'static str = "5";
    const SCHEMA: &'static str = "FormLimit";

    fn check(raw: &str) -> Result<Self, ApiError> {
        form_limit(raw).map(FormLimit)
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(MAX_FORM_LIMIT as u64))
            .description(Some(
                "Keep only the newest N entries: an integer from 1 to 1000 written in \
                 digits; anything else is a 400.",
            ))
            .examples([json!(5)])
            .into()
    }
}

impl Param for Venue {
    const NAME: &'static str = "venue";
    const IN: In = In::Query;
    const DOC: &'static str = "For a date with more than one meeting: the racecourse whose \
        meeting to answer with. Without it such a date answers with the meeting that has the \
        most races (ties: alphabetical) and lists every venue in `meetings`.";
    const EXAMPLE: &'static str = "Happy Valley";
    const SCHEMA: &'static str = "Venue";

    fn check(raw: &str) -> Result<Self, ApiError> {
        if raw.trim().is_empty() {
            return Err(ApiError::BadRequest(
                "query parameter `venue` is empty".into(),
            ));
        }
        Ok(Venue(raw.to_owned()))
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(VENUE_PATTERN))
            .min_length(Some(1))
            .description(Some(
                "Racecourse of the meeting, e.g. `Sha Tin` or `Happy Valley`; empty or \
                 blank is a 400.",
            ))
            .examples([json!(Self::EXAMPLE)])
            .into()
    }
}

impl Param for AsOf {
    const NAME: &'static str = "as_of";
    const IN: In = In::Query;
    const DOC: &'static str = "A stream sequence: the document exactly as it was served once \
        the log up to it had been applied, byte for byte (a result amended later as first \
        published, a form with only the runs known then). 404 where the document did not \
        exist then, or where the log does not reach it yet. Past the checkpoint here, it is \
        waited for as `min_seq` is. Its answer never changes.";
    const EXAMPLE: &'static str = "1";
    const SCHEMA: &'static str = "AsOf";

    fn check(raw: &str) -> Result<Self, ApiError> {
        sequence(Self::NAME, raw).map(AsOf)
    }

    fn schema() -> RefOr<Schema> {
        sequence_schema(
            "A stream sequence (as `Racing-Seq`, a change's or an odds move's `seq` give it): \
             an integer from 0 written in digits; anything else is a 400.",
        )
    }
}

impl Param for Since {
    const NAME: &'static str = "since";
    const IN: In = In::Query;
    const DOC: &'static str = "A stream sequence: only what came after it. Without it, from \
        the start of the log. Pass a page's `next` to read the following page.";
    const EXAMPLE: &'static str = "0";
    const SCHEMA: &'static str = "Since";

    fn check(raw: &str) -> Result<Self, ApiError> {
        sequence(Self::NAME, raw).map(Since)
    }

    fn schema() -> RefOr<Schema> {
        sequence_schema(
            "A stream sequence (a page's `next`, a `Racing-Seq`): an integer from 0 written \
             in digits; anything else is a 400.",
        )
    }
}

/// Pattern of a change feed cursor ([`change_cursor`]): `SEQ` or `SEQ.N`, each written
/// without sign or leading zero, `SEQ` of at most 18 digits and `N` of at most 9, so that
/// every text it admits is a cursor the service holds (a stream sequence to
/// [`MAX_SEQUENCE`], a count of changes in a `u32`).
pub const CHANGE_CURSOR_PATTERN: &str = r"^(0|[1-9][0-9]{0,17})(\.[1-9][0-9]{0,8})?$";

/// Most digits of a change feed cursor's sequence, and of its count of changes.
const CURSOR_DIGITS: (usize, usize) = (18, 9);

/// A change feed cursor as a page's `next` writes it: `SEQ`, or `SEQ.N` with `N` from 1,
/// each an integer without sign or leading zero, of at most 18 and 9 digits (what
/// [`CHANGE_CURSOR_PATTERN`] says).
pub fn change_cursor(s: &str) -> Result<ChangeCursor, ApiError> {
    let (seq, done) = match s.split_once('.') {
        Some((seq, done)) => (seq, Some(done)),
        None => (s, None),
    };
    let digits = |t: &str, most: usize| t == "0" || canonical_digits(t) && t.len() <= most;
    let refused = || {
        ApiError::BadRequest(format!(
            "since `{}` is not a change feed cursor: a stream sequence of at most {} digits, \
             or one and the changes of it already read (`SEQ.N`, N from 1, at most {} \
             digits), each without sign or leading zero",
            clip(s),
            CURSOR_DIGITS.0,
            CURSOR_DIGITS.1
        ))
    };
    if !digits(seq, CURSOR_DIGITS.0) {
        return Err(refused());
    }
    let seq = sequence("since", seq)?;
    match done {
        None => Ok(ChangeCursor::After(seq)),
        Some(done) if done != "0" && digits(done, CURSOR_DIGITS.1) => {
            let done = done.parse::<u32>().map_err(|_| refused())?;
            Ok(ChangeCursor::Inside { seq, done })
        }
        Some(_) => Err(refused()),
    }
}

impl Param for ChangeSince {
    const NAME: &'static str = "since";
    const IN: In = In::Query;
    const DOC: &'static str = "A stream sequence: only the changes after it; or a page's \
        `next`, which may stand inside one sequence's changes (`SEQ.N`). Without it, from the \
        start of the log.";
    const EXAMPLE: &'static str = "0";
    const SCHEMA: &'static str = "ChangeSince";

    fn check(raw: &str) -> Result<Self, ApiError> {
        change_cursor(raw).map(ChangeSince)
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(CHANGE_CURSOR_PATTERN))
            .description(Some(
                "A stream sequence (a `Racing-Seq`, a change's `seq`), or a page's `next`: \
                 `SEQ.N` stands after the first N changes of the sequence SEQ. Anything else \
                 is a 400.",
            ))
            .examples([json!("0"), json!("5120.64")])
            .into()
    }
}

impl Param for PageLimit {
    const NAME: &'static str = "limit";
    const IN: In = In::Query;
    const DOC: &'static str = "At most this many items in the page, 1 to 10000 (default 1000).";
    const EXAMPLE: &'static str = "100";
    const SCHEMA: &'static str = "PageLimit";

    fn check(raw: &str) -> Result<Self, ApiError> {
        match raw.parse::<usize>() {
            Ok(n @ 1..=MAX_PAGE_LIMIT) if canonical_digits(raw) => Ok(PageLimit(n)),
            _ => Err(ApiError::BadRequest(format!(
                "limit `{}` is not an integer from 1 to {MAX_PAGE_LIMIT} (digits, no leading \
                 zero)",
                clip(raw)
            ))),
        }
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(MAX_PAGE_LIMIT as u64))
            .default(Some(json!(DEFAULT_PAGE_LIMIT)))
            .description(Some(
                "Items in a page: an integer from 1 to 10000 written in digits; anything \
                 else is a 400.",
            ))
            .examples([json!(100)])
            .into()
    }
}

impl Param for MinSeq {
    const NAME: &'static str = super::query::MIN_SEQ;
    const IN: In = In::Query;
    const DOC: &'static str = "A stream sequence (a feeder's acknowledgement gives it, as \
        `racing publish` prints it; a `Racing-Seq` read from another replica): answer only \
        once the read models here hold the log up to it, waiting for them up to a limit \
        (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the \
        checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a \
        position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says \
        the same; with both, the larger counts.";
    const EXAMPLE: &'static str = "1";
    const SCHEMA: &'static str = "MinSeq";

    fn check(raw: &str) -> Result<Self, ApiError> {
        sequence(Self::NAME, raw).map(MinSeq)
    }

    fn schema() -> RefOr<Schema> {
        sequence_schema(
            "A stream sequence (a publish's acknowledgement, a `Racing-Seq`): an integer from \
             0 written in digits; anything else is a 400.",
        )
    }
}

/// The schema of a stream sequence parameter.
fn sequence_schema(description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(0))
        .maximum(Some(MAX_SEQUENCE))
        .description(Some(description))
        .examples([json!(0)])
        .into()
}

// The text parameters read as the text they were checked as.
macro_rules! as_str {
    ($($t:ident),*) => {$(
        impl std::ops::Deref for $t {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    )*};
}

as_str!(HorseNo, Venue);

// ---- The parameters of discovery: meetings by date, search by name, people by id. ----

/// Characters a `?name=` search text may have, fewest and most.
pub const NAME_TEXT_LEN: (usize, usize) = (
    racing_projections::MIN_SEARCH_CHARS,
    racing_projections::MAX_SEARCH_CHARS,
);

/// Largest `limit` of a horse search.
pub const MAX_SEARCH_LIMIT: usize = 100;

/// A horse search without a `limit`.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;

/// Most characters of a jockey's or trainer's `{id}`.
pub const MAX_PERSON_ID: usize = 100;

/// Pattern of a jockey's or trainer's `{id}`: a slug.
pub const PERSON_ID_PATTERN: &str = r"^[a-z0-9]+(-[a-z0-9]+)*$";

/// The `?from=` of a range of dates (the meetings, the records by condition): the first
/// date, `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy)]
pub struct FromDate(pub Date);

/// The `?to=` of a range of dates: the last date, `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy)]
pub struct ToDate(pub Date);

/// The `?name=` of a search: 2 to 50 characters, matched case-insensitively.
#[derive(Debug)]
pub struct NameText(String);

/// The `?limit=` of a horse search: 1 to [`MAX_SEARCH_LIMIT`].
#[derive(Debug, Clone, Copy)]
pub struct SearchLimit(pub usize);

/// A jockey's or trainer's `{id}`: the slug of their name.
#[derive(Debug)]
pub struct PersonId(String);

/// A `?name=` search text: 2 to 50 characters (not bytes).
pub fn name_text(s: &str) -> Result<&str, ApiError> {
    let (min, max) = NAME_TEXT_LEN;
    let n = s.chars().count();
    if (min..=max).contains(&n) {
        Ok(s)
    } else {
        Err(ApiError::BadRequest(format!(
            "name `{}` is {}: a search takes {min} to {max}",
            clip(s),
            crate::text::count(n, "character", "characters")
        )))
    }
}

/// A jockey's or trainer's `{id}`: lower-case ASCII letters and digits, single `-`
/// between them, at most [`MAX_PERSON_ID`] characters.
pub fn person_id(s: &str) -> Result<&str, ApiError> {
    if s.len() <= MAX_PERSON_ID && racing_projections::is_slug(s) {
        Ok(s)
    } else {
        Err(ApiError::BadRequest(format!(
            "id `{}` is not the slug of a name: lower-case a-z and 0-9 in words joined by \
             single `-`, at most {MAX_PERSON_ID} characters (`Z Purton` is `z-purton`)",
            clip(s)
        )))
    }
}

/// The schema of a date query parameter.
fn date_query_schema(description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
        .pattern(Some(DATE_PATTERN))
        .description(Some(description))
        .examples([json!("2026-11-01")])
        .into()
}

impl Param for FromDate {
    const NAME: &'static str = "from";
    const IN: In = In::Query;
    const DOC: &'static str = "The first date, `YYYY-MM-DD`. Meetings: default 30 days before \
        today (in `RACING_TIMEZONE`). Records by condition: default the first race.";
    const EXAMPLE: &'static str = "2026-11-01";
    const SCHEMA: &'static str = "FromDate";

    fn check(raw: &str) -> Result<Self, ApiError> {
        date(raw).map(FromDate)
    }

    fn schema() -> RefOr<Schema> {
        date_query_schema(
            "The first date of the range: a real calendar date written `YYYY-MM-DD`; \
             anything else is a 400.",
        )
    }
}

impl Param for ToDate {
    const NAME: &'static str = "to";
    const IN: In = In::Query;
    const DOC: &'static str = "The last date, `YYYY-MM-DD` (before `from`: a range of no \
        dates). Meetings: default 14 days after today (in `RACING_TIMEZONE`); a page covers \
        at most 366 days of the range. Records by condition: default the last race.";
    const EXAMPLE: &'static str = "2026-11-30";
    const SCHEMA: &'static str = "ToDate";

    fn check(raw: &str) -> Result<Self, ApiError> {
        date(raw).map(ToDate)
    }

    fn schema() -> RefOr<Schema> {
        date_query_schema(
            "The last date of the range: a real calendar date written `YYYY-MM-DD`; \
             anything else is a 400.",
        )
    }
}

impl Param for NameText {
    const NAME: &'static str = "name";
    const IN: In = In::Query;
    const DOC: &'static str = "Part of a name, 2 to 50 characters, whatever the case.";
    const EXAMPLE: &'static str = "sixty";
    const SCHEMA: &'static str = "NameText";

    fn check(raw: &str) -> Result<Self, ApiError> {
        name_text(raw).map(|n| NameText(n.to_owned()))
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(NAME_TEXT_LEN.0))
            .max_length(Some(NAME_TEXT_LEN.1))
            .description(Some(
                "Text to find in names, matched case-insensitively anywhere in the name: 2 \
                 to 50 characters; shorter or longer is a 400.",
            ))
            .examples([json!(Self::EXAMPLE)])
            .into()
    }
}

impl Param for SearchLimit {
    const NAME: &'static str = "limit";
    const IN: In = In::Query;
    const DOC: &'static str = "At most this many horses, 1 to 100 (default 20).";
    const EXAMPLE: &'static str = "20";
    const SCHEMA: &'static str = "SearchLimit";

    fn check(raw: &str) -> Result<Self, ApiError> {
        match raw.parse::<usize>() {
            Ok(n @ 1..=MAX_SEARCH_LIMIT) if canonical_digits(raw) => Ok(SearchLimit(n)),
            _ => Err(ApiError::BadRequest(format!(
                "limit `{}` is not an integer from 1 to {MAX_SEARCH_LIMIT} (digits, no \
                 leading zero)",
                clip(raw)
            ))),
        }
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(MAX_SEARCH_LIMIT as u64))
            .default(Some(json!(DEFAULT_SEARCH_LIMIT)))
            .description(Some(
                "Horses in the answer: an integer from 1 to 100 written in digits; anything \
                 else is a 400.",
            ))
            .examples([json!(20)])
            .into()
    }
}

impl Param for PersonId {
    const NAME: &'static str = "id";
    const IN: In = In::Path;
    const DOC: &'static str = "The slug of the name: lower-case letters and digits, words \
        joined by `-` (`Z Purton` is `z-purton`), as the list gives it.";
    const EXAMPLE: &'static str = "z-purton";
    const SCHEMA: &'static str = "PersonId";

    fn check(raw: &str) -> Result<Self, ApiError> {
        person_id(raw).map(|id| PersonId(id.to_owned()))
    }

    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(PERSON_ID_PATTERN))
            .min_length(Some(1))
            .max_length(Some(MAX_PERSON_ID))
            .description(Some(
                "The slug of a jockey's or trainer's name: lower-case ASCII letters and \
                 digits, every other run of characters one `-`, none at either end, at most \
                 100 characters; anything else is a 400.",
            ))
            .examples([json!(Self::EXAMPLE)])
            .into()
    }
}

as_str!(NameText, PersonId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_text_s_length_reads_right_for_one_character() {
        let message = |text: &str| match name_text(text) {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("a 400 for `{text}`, not {other:?}"),
        };
        assert!(message("x").contains("is 1 character:"), "{}", message("x"));
        let long = "a".repeat(51);
        assert!(
            message(&long).contains("is 51 characters:"),
            "{}",
            message(&long)
        );
    }
}
