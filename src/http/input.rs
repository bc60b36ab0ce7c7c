//! Checks of everything a client puts in a request line: path segments and query
//! parameters. Pure functions over strings, shared by the handlers and the fuzz targets.

use std::collections::HashMap;

use racing_events::{is_horse_no, Date};

use super::ApiError;

/// Largest `limit` on a form request.
pub const MAX_FORM_LIMIT: usize = 1000;

/// The query parameters of a request, each allowed at most once and each one of those
/// the endpoint takes.
pub struct Query(pub HashMap<String, String>);

impl Query {
    /// Parses a raw query string; an unknown or repeated parameter is a 400.
    pub fn parse(raw: Option<String>, allowed: &[&str]) -> Result<Query, ApiError> {
        let mut params = HashMap::new();
        for (name, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            if !allowed.contains(&name.as_ref()) {
                let hint = if allowed.is_empty() {
                    "this endpoint takes no query parameters".to_owned()
                } else {
                    format!("allowed: {}", allowed.join(", "))
                };
                return Err(ApiError::BadRequest(format!(
                    "unknown query parameter `{}` ({hint})",
                    clip(&name)
                )));
            }
            if params
                .insert(name.to_string(), value.into_owned())
                .is_some()
            {
                return Err(ApiError::BadRequest(format!(
                    "query parameter `{}` is given more than once",
                    clip(&name)
                )));
            }
        }
        Ok(Query(params))
    }
}

/// Client input echoed in a message, cut to 64 characters.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// A `{date}` segment: a real calendar date written `YYYY-MM-DD`.
pub fn date(s: &str) -> Result<&str, ApiError> {
    if Date::parse(s).is_some() {
        Ok(s)
    } else {
        Err(ApiError::BadRequest(format!(
            "date `{}` is not a real calendar date written YYYY-MM-DD",
            clip(s)
        )))
    }
}

/// Whether `s` is a whole number written as one is printed: digits, no sign and no
/// leading zero. So each race and each limit has one URL, as each date has, and a cache
/// never holds `/3` and `/03` apart.
fn canonical_digits(s: &str) -> bool {
    !s.starts_with('0') && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A `{race_number}` segment: 1 to 99, written without sign or leading zero.
pub fn race_number(s: &str) -> Result<u8, ApiError> {
    match s.parse::<u8>() {
        Ok(n @ 1..=99) if canonical_digits(s) => Ok(n),
        _ => Err(ApiError::BadRequest(format!(
            "race number `{}` is not an integer from 1 to 99 (digits, no leading zero)",
            clip(s)
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
