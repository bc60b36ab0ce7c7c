//! Fuzzes the checks of a request line: the input is a UTF-8 `path?query`. The path goes
//! through the route table's match (`racing::http::table::find`), and a matched request
//! through its row's parameter checks, as its handler would take them; every path segment,
//! percent-decoded by `route::param` as the handlers decode it, goes through every segment
//! check of `racing::http::input`, and the query through `Query::parse` with the allowed
//! list of every row of the table. No input may panic; a value that passes must be in range;
//! an error must be a short 400 that echoes at most 64 characters of what the client sent.

#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use racing::http::input::{self, MAX_FORM_LIMIT};
use racing::http::query::Query;
use racing::http::route::{self, In};
use racing::http::{table, ApiError, ROUTES};

/// Characters of client input an error message may repeat (what `clip` keeps).
const ECHO_CHARS: usize = 64;

/// "A few hundred bytes": the longest template is under 100 bytes, and 64 echoed
/// characters are at most 256 bytes.
const MAX_MESSAGE_BYTES: usize = 512;

/// An allowed list of more than one parameter, which no endpoint has yet.
const SEVERAL: &[&str] = &["venue", "limit"];

fuzz_target!(|data: &[u8]| {
    let Ok(target) = std::str::from_utf8(data) else {
        return;
    };
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    if let Some(matched) = table::find(path) {
        let template = matched.route().path;
        assert!(
            path.starts_with("/api/v1/") && !path.ends_with('/'),
            "{path:?} matched {template}"
        );
        assert_eq!(
            matched.params().len(),
            template.matches('{').count(),
            "{path:?} matched {template}"
        );
        if let Err(e) = matched.route().handler.check(matched.params(), query) {
            bad_request_without_echo(&e);
        }
    }
    for raw in path.split('/') {
        // A segment that does not decode to UTF-8 is refused before any check.
        match route::param(raw, "segment") {
            Ok(segment) => segment_checks(&segment),
            Err(e) => bad_request_without_echo(&e),
        }
    }
    for route in ROUTES {
        let allowed: Vec<&str> = route
            .handler
            .params()
            .iter()
            .filter(|p| p.place == In::Query)
            .map(|p| p.name)
            .collect();
        query_checks(query, &allowed);
    }
    query_checks(query, SEVERAL);
});

fn segment_checks(s: &str) {
    match input::date(s) {
        Ok(d) => {
            assert_eq!(d.as_str(), s);
            let b = s.as_bytes();
            assert!(b.len() == 10 && b[4] == b'-' && b[7] == b'-', "date {s:?}");
        }
        Err(e) => bad_request(&e, s),
    }
    match input::race_number(s) {
        Ok(n) => assert!(
            (1..=99).contains(&n.get()) && s == n.to_string(),
            "race number {s:?}"
        ),
        Err(e) => bad_request(&e, s),
    }
    match input::horse_no(s) {
        Ok(h) => assert!(h == s && (1..=32).contains(&s.len())),
        Err(e) => bad_request(&e, s),
    }
    limit_checks(s);
    clip_checks(s);
}

fn limit_checks(s: &str) {
    match input::form_limit(s) {
        Ok(n) => assert!((1..=MAX_FORM_LIMIT).contains(&n) && s == n.to_string()),
        Err(e) => bad_request(&e, s),
    }
}

fn clip_checks(s: &str) {
    let clipped = input::clip(s);
    let head = prefix(s);
    if head.len() == s.len() {
        assert_eq!(clipped, s);
    } else {
        assert_eq!(clipped, format!("{head}…"));
    }
}

/// The query against a model of its rule: each parameter one of `allowed`, at most once;
/// the error names the first parameter that breaks it.
fn query_checks(query: Option<&str>, allowed: &[&str]) {
    let mut model = HashMap::new();
    let mut offender = None;
    for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if !allowed.contains(&name.as_ref()) || model.contains_key(name.as_ref()) {
            offender = Some(name.into_owned());
            break;
        }
        model.insert(name.into_owned(), value.into_owned());
    }
    match (Query::parse(query, allowed), offender) {
        (Ok(Query(params)), None) => {
            assert_eq!(params, model);
            if let Some(limit) = params.get("limit") {
                limit_checks(limit);
            }
            if let Some(venue) = params.get("venue") {
                clip_checks(venue);
            }
        }
        (Err(e), Some(name)) => bad_request(&e, &name),
        (Ok(_), Some(name)) => {
            panic!("query accepted with parameter {name:?}, allowed {allowed:?}")
        }
        (Err(e), None) => panic!("query refused with every parameter allowed: {e}"),
    }
}

/// A 400 whose message is short and echoes `echoed` as `clip` cuts it: between the first
/// pair of backticks (every template has its backticks around the echo), at most 64
/// characters of it, then `…` if there was more.
fn bad_request(e: &ApiError, echoed: &str) {
    let message = e.to_string();
    assert!(
        matches!(e, ApiError::BadRequest(_)),
        "not a 400: {e:?} for {echoed:?}"
    );
    assert!(
        message.len() <= MAX_MESSAGE_BYTES,
        "message of {} bytes: {message}",
        message.len()
    );
    let Some((_, after)) = message.split_once('`') else {
        panic!("no echo in {message:?}")
    };
    let head = prefix(echoed);
    let rest = after
        .strip_prefix(head)
        .unwrap_or_else(|| panic!("message {message:?} does not echo the start of {echoed:?}"));
    let close = if head.len() < echoed.len() {
        "…`"
    } else {
        "`"
    };
    assert!(
        rest.starts_with(close),
        "message {message:?} echoes more than {ECHO_CHARS} characters of {echoed:?}"
    );
}

/// A short 400 (that repeats at most 64 characters of what the client sent).
fn bad_request_without_echo(e: &ApiError) {
    assert!(matches!(e, ApiError::BadRequest(_)), "not a 400: {e:?}");
    assert!(e.to_string().len() <= MAX_MESSAGE_BYTES);
}

/// The first [`ECHO_CHARS`] characters of `s`.
fn prefix(s: &str) -> &str {
    match s.char_indices().nth(ECHO_CHARS) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
