//! The description against the code: documents of every kind, rendered by the real folds
//! from sample events, must validate against the generated schemas, field for field; every
//! error the API can give must match its documented response.

use axum::response::IntoResponse;
use racing_events::samples::{
    card, envelope, odds, odds_at, odds_with_place, recorded_profile, result, retraction, runner,
    scratch, status,
};
use racing_events::{Envelope, Event, RaceStatus};
use racing_projections::{DocKey, Fold, FormDoc, MemState, Role, Span, Subject};
use serde_json::Value;

use super::*;
use crate::http::input::MAX_FORM_LIMIT;
use crate::http::limits::{MAX_HEADERS, MAX_HEADER_BYTES, MAX_URI_BYTES};
use crate::http::strict::Validator;

fn spec() -> Value {
    serde_json::to_value(&*SPEC).expect("the description serialises")
}

/// Folds the events, one batch each, as the projector would.
fn fold(events: Vec<Envelope>) -> MemState {
    let mut s = MemState::default();
    for (i, e) in events.iter().enumerate() {
        let mut f = Fold::default();
        f.apply(&mut s, i as u64 + 1, 0, e).expect("apply");
        f.render(&mut s).expect("render");
    }
    s
}

fn doc(s: &MemState, key: DocKey<'_>) -> Value {
    let bytes = s.doc(key).unwrap_or_else(|| panic!("no document {key:?}"));
    let bytes: Vec<u8> = match key {
        DocKey::Form(_) => FormDoc::body(&bytes, None).expect("framed").into_owned(),
        _ => bytes.into_owned(),
    };
    serde_json::from_slice(&bytes).expect("json")
}

/// Two meetings on one date (so `meetings` appears), a dead heat, a runner pulled up, a
/// scratching of a runner with a price, a profile, odds for a venue, for every venue and for a race no venue of
/// which is known, place prices, a race's status with a reason, a retracted race, the full
/// Hong Kong record on a race and a profile (with an `lbw` that is no margin): every field
/// of every document kind, and every nullable field both null and not.
fn season() -> MemState {
    fold(season_events())
}

/// The events of [`season`].
fn season_events() -> Vec<Envelope> {
    let day = "2026-11-18";
    let mut first = runner(Some(1), "E271");
    let mut second = runner(Some(1), "CA206");
    first.dead_heat = true;
    second.dead_heat = true;
    first.lbw = Some("-".into());
    first.running_positions = Some(vec![3, 2, 1]);
    first.actual_weight = Some(133);
    first.declared_weight = Some(1198);
    first.draw = Some(4);
    let mut odds_less = runner(None, "H123");
    odds_less.win_odds = None;
    odds_less.lbw = Some("---".into());
    let recorded = recorded_profile("E271", "GOLDEN SIXTY");
    let mut classed = result(day, "Happy Valley", 1, vec![first, second, odds_less]);
    if let Event::RaceResultPublished(r) = &mut classed {
        r.class = Some("Class 3".into());
    }
    [
        recorded,
        classed,
        result(day, "Happy Valley", 2, vec![runner(Some(2), "E271")]),
        result(day, "Sha Tin", 1, vec![runner(Some(3), "K101")]),
        result("2026-11-15", "Sha Tin", 5, vec![runner(Some(4), "E271")]),
        card("2026-11-21", "Sha Tin", 1, &["E271", "CA206", "H123"]),
        card("2026-11-21", "Sha Tin", 2, &["K101"]),
        card("2026-11-21", "Happy Valley", 1, &["B143"]),
        scratch("2026-11-21", 1, "H123"),
        card("2026-11-22", "Sha Tin", 1, &["E271"]),
        odds(
            "2026-11-21",
            1,
            &[("E271", 3.5), ("CA206", 2.1), ("H123", 9.0)],
        ),
        odds_at("2026-11-21", "Happy Valley", 1, &[("B143", 6.0)]),
        odds_with_place(
            "2026-11-21",
            Some("Happy Valley"),
            1,
            &[("B143", None, Some(1.9)), ("K101", None, Some(2.4))],
        ),
        status(
            "2026-11-21",
            Some("Sha Tin"),
            1,
            RaceStatus::Suspended,
            Some("reweigh"),
        ),
        odds("2026-11-25", 2, &[("K101", 4.2)]),
        result(
            "2026-11-15",
            "Happy Valley",
            5,
            vec![runner(Some(1), "K101")],
        ),
        retraction(
            "2026-11-15",
            "Happy Valley",
            5,
            "published under the wrong venue",
        ),
    ]
    .into_iter()
    .map(envelope)
    // A market that moved over twenty minutes: moves over 5 and 15 of them.
    .chain(
        [("12:00", 5.0), ("12:10", 4.0), ("12:20", 3.0)].map(|(at, price)| {
            Envelope::new(
                odds_at("2026-11-21", "Happy Valley", 1, &[("B143", price)]),
                format!("2026-11-21T{at}:00Z"),
            )
        }),
    )
    .collect()
}

#[test]
fn rendered_documents_of_every_kind_validate_against_their_schemas() {
    let spec = spec();
    let s = season();
    let day = "2026-11-18";
    let cases = [
        ("Profile", DocKey::Profile("E271")),
        ("Form", DocKey::Form("E271")),
        ("Form", DocKey::Form("H123")),
        (
            "ResultsByDate",
            DocKey::Results {
                date: day,
                venue: None,
            },
        ),
        (
            "ResultsByDate",
            DocKey::Results {
                date: "2026-11-15",
                venue: None,
            },
        ),
        (
            "ResultsByDate",
            DocKey::Results {
                date: day,
                venue: Some("Sha Tin"),
            },
        ),
        (
            "RaceResult",
            DocKey::Race {
                date: day,
                race_number: 1,
                venue: None,
            },
        ),
        (
            "RaceResult",
            DocKey::Race {
                date: "2026-11-15",
                race_number: 5,
                venue: None,
            },
        ),
        (
            "RaceCard",
            DocKey::Card {
                date: "2026-11-21",
                venue: None,
            },
        ),
        (
            "RaceCard",
            DocKey::Card {
                date: "2026-11-22",
                venue: None,
            },
        ),
        // B143 has run nowhere: its form has no days since a run.
        (
            "RaceCard",
            DocKey::Card {
                date: "2026-11-21",
                venue: Some("Happy Valley"),
            },
        ),
        (
            "RaceOdds",
            DocKey::Odds {
                date: "2026-11-21",
                race_number: 1,
                venue: None,
            },
        ),
        (
            "RaceOdds",
            DocKey::Odds {
                date: "2026-11-21",
                race_number: 1,
                venue: Some("Happy Valley"),
            },
        ),
        (
            "RaceOdds",
            DocKey::Odds {
                date: "2026-11-25",
                race_number: 2,
                venue: None,
            },
        ),
    ];
    let mut validator = Validator::new(&spec);
    for (name, key) in cases {
        let reference = format!("#/components/schemas/{name}");
        let (owner, schema) = validator.component(&reference).expect("a schema");
        let v = doc(&s, key);
        if let Err(e) = validator.check(&owner, schema, &v, &format!("{key:?}")) {
            panic!("{name} does not match the document: {e}\n{v:#}");
        }
    }
    // The pages of history, read from a store of the same events: each with a page to
    // follow and at the end.
    let dir = tempfile::TempDir::new().expect("temp dir");
    let store = racing_projections::Store::open(dir.path()).expect("store");
    for (i, e) in season_events().iter().enumerate() {
        let mut batch = store.batch().expect("batch");
        batch.apply(i as u64 + 1, 0, e).expect("apply");
        batch.commit().expect("commit");
    }
    let odds = ["2026-11-21", "2026-11-21"]
        .iter()
        .zip([1, 10])
        .map(|(date, limit)| {
            store
                .odds_history(date, 1, None, 0, limit)
                .expect("history")
                .expect("moves")
        });
    let changes = [1, 10_000].into_iter().map(|limit| {
        crate::http::history::change_page(
            &racing_projections::Reader::of(&store),
            racing_projections::ChangeCursor::After(0),
            limit,
        )
        .expect("changes")
    });
    // The answers of discovery: the meetings, a search, a jockey's record and the lists.
    let person = |role, id| {
        store
            .person(role, id)
            .expect("read")
            .expect("a record")
            .to_vec()
    };
    let list = |role| store.people(role).expect("read").expect("a list").to_vec();
    let discovery = [
        (
            "Meetings",
            crate::http::discovery::meetings_page(
                &racing_projections::Reader::of(&store),
                "2026-11-01",
                "2026-11-30",
                "2026-11-30",
            )
            .expect("meetings"),
        ),
        (
            "HorseSearch",
            crate::http::discovery::horses_page(
                &racing_projections::Reader::of(&store),
                "name",
                20,
            )
            .expect("search"),
        ),
        ("PersonRecord", person(Role::Jockey, "z-purton")),
        ("PersonRecord", person(Role::Trainer, "j-size")),
        ("JockeyList", list(Role::Jockey)),
        ("TrainerList", list(Role::Trainer)),
        ("ApiIndex", crate::http::index::json(&ROUTES).to_vec()),
    ];
    // The records by condition: a horse's whole, a jockey's and a trainer's over a span
    // (one with no run in it).
    let rides: Value = serde_json::from_slice(&person(Role::Jockey, "z-purton")).expect("json");
    let horse = rides["recent"][0]["horse_no"]
        .as_str()
        .expect("a ride")
        .to_owned();
    let analysis = |subject, span| {
        let doc = store
            .analysis(subject, span, None)
            .expect("read")
            .expect("an analysis");
        doc.into_stored()[racing_projections::HEAD_LEN..].to_vec()
    };
    let analyses = [
        analysis(Subject::Horse(&horse), Span::default()),
        analysis(
            Subject::Person(Role::Jockey, "z-purton"),
            Span {
                from: Some("2026-09-01"),
                to: Some("2026-12-31"),
            },
        ),
        analysis(
            Subject::Person(Role::Trainer, "j-size"),
            Span {
                from: Some("2040-01-01"),
                to: None,
            },
        ),
    ];
    let discovery = discovery
        .into_iter()
        .chain(analyses.into_iter().map(|a| ("Analysis", a)));
    let pages = odds
        .map(|page| ("OddsHistory", page))
        .chain(changes.map(|page| ("Changes", page)))
        .chain(discovery);
    for (name, page) in pages {
        let reference = format!("#/components/schemas/{name}");
        let (owner, schema) = validator.component(&reference).expect("a schema");
        let v: Value = serde_json::from_slice(&page).expect("json");
        if let Err(e) = validator.check(&owner, schema, &v, name) {
            panic!("{name} does not match the page: {e}\n{v:#}");
        }
    }
    // Every property of every document schema was met, and every nullable one also null:
    // a field the documents lost would leave its schema property unmet.
    let schemas = spec["components"]["schemas"].as_object().expect("schemas");
    for (name, schema) in schemas {
        let Some(properties) = schema["properties"].as_object() else {
            continue;
        };
        // The error body, and what the webhooks add (their answers and payloads, checked
        // by the webhooks' own tests).
        if name == "ErrorBody" || crate::http::webhooks::is_described_here(name) {
            continue;
        }
        for (field, property) in properties {
            let key = format!("{name}.{field}");
            assert!(validator.seen.contains(&key), "{key} never met");
            let nullable = property["type"]
                .as_array()
                .is_some_and(|t| t.contains(&Value::from("null")));
            if nullable {
                assert!(
                    validator.seen.contains(&format!("{key}=null")),
                    "{key} never null"
                );
            }
        }
    }
}

/// The body of the error `response` of `status`, checked against the `ErrorBody` schema.
fn error_body(spec: &Value, response: axum::response::Response, status: &str) -> Value {
    let body = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(axum::body::to_bytes(response.into_body(), 1 << 16))
        .expect("body");
    let body: Value = serde_json::from_slice(&body).expect("json");
    let mut validator = Validator::new(spec);
    let (owner, schema) = validator
        .component("#/components/schemas/ErrorBody")
        .expect("a schema");
    validator
        .check(&owner, schema, &body, status)
        .unwrap_or_else(|e| panic!("{e}"));
    body
}

#[test]
fn every_error_matches_its_documented_response_and_the_error_schema() {
    let spec = spec();
    let errors = [
        ApiError::BadRequest("date `x` is not a real calendar date".into()),
        ApiError::Unauthorized,
        ApiError::NotFound("no horse E999".into()),
        ApiError::MethodNotAllowed,
        ApiError::LimitReached("this key has 2 webhook endpoints".into()),
        ApiError::BodyNotAccepted,
        ApiError::UriTooLong(MAX_URI_BYTES),
        ApiError::RateLimited("too many requests for this key; retry in 1 s".into()),
        ApiError::HeadersTooLarge(MAX_HEADERS, MAX_HEADER_BYTES),
        ApiError::Internal(anyhow::anyhow!("a bug")),
        ApiError::Unavailable("the read models are still being built".into()),
    ];
    let codes = spec["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .expect("codes")
        .clone();
    assert_eq!(codes.len(), errors.len(), "one code per ApiError variant");
    for e in errors {
        let message = e.to_string();
        let response = e.into_response();
        let status = response.status().as_str().to_owned();
        let body = error_body(&spec, response, &status);
        // The documented example of this status carries the same code.
        let documented = error_response("", "", &status);
        let example =
            serde_json::to_value(&documented.content["application/json"].example).expect("example");
        assert_eq!(example["error"], body["error"], "{status}");
        // Where the message is fixed, the shared response shows it exactly.
        if let Some((.., shown)) = COMMON_ERRORS.iter().find(|(s, ..)| *s == status) {
            if matches!(
                status.as_str(),
                "401" | "405" | "413" | "414" | "431" | "500"
            ) {
                assert_eq!(*shown, message, "{status}");
            }
        }
    }
}

#[test]
fn every_operation_documents_the_key_errors_and_caching() {
    let spec = spec();
    assert!(spec["openapi"]
        .as_str()
        .expect("version")
        .starts_with("3.1"));
    let paths = spec["paths"].as_object().expect("paths");
    assert_eq!(paths.len(), 30, "{:?}", paths.keys());
    for (path, item) in paths {
        if path.starts_with(crate::http::webhooks::WEBHOOKS_PATH) {
            // A key's account: no caching, and methods of their own.
            for op in ["get", "post", "delete"].map(|m| &item[m]) {
                let Some(responses) = op["responses"].as_object() else {
                    continue;
                };
                for status in ["400", "401", "413", "429", "500", "503"] {
                    assert!(responses.contains_key(status), "{path}: no {status}");
                }
                assert!(!responses.contains_key("304"), "{path}");
            }
            continue;
        }
        let op = &item["get"];
        let responses = op["responses"].as_object().expect("responses");
        for status in [
            "400", "401", "405", "413", "414", "429", "431", "500", "503",
        ] {
            assert!(responses.contains_key(status), "{path}: no {status}");
        }
        if path == ODDS_SOCKET_PATH {
            assert!(responses.contains_key("101"), "{path}");
            assert_eq!(op["security"].as_array().map(Vec::len), Some(2), "{path}");
        } else if path == crate::http::sse::LIVE_EVENTS_PATH {
            // A stream: no ETag, nothing to revalidate.
            assert!(responses.contains_key("200"), "{path}");
            assert!(!responses.contains_key("304"), "{path}");
            assert_eq!(op["security"].as_array().map(Vec::len), Some(2), "{path}");
        } else {
            assert!(responses.contains_key("200"), "{path}");
            assert!(responses.contains_key("304"), "{path}");
            let headers = responses["200"]["headers"].as_object().expect("headers");
            for h in ["ETag", "Cache-Control", "RateLimit", "RateLimit-Policy"] {
                assert!(headers.contains_key(h), "{path}: 200 without {h}");
            }
        }
    }
    let limit = &spec["components"]["schemas"]["FormLimit"];
    assert_eq!(limit["maximum"], MAX_FORM_LIMIT as u64);
    let schemes = &spec["components"]["securitySchemes"];
    assert_eq!(schemes[KEY_HEADER_SCHEME]["name"], "X-API-Key");
    assert_eq!(schemes[KEY_HEADER_SCHEME]["in"], "header");
    assert_eq!(schemes[KEY_QUERY_SCHEME]["name"], "api_key");
    let rate = &spec["components"]["responses"]["RateLimited"]["headers"];
    for h in ["Retry-After", "RateLimit", "RateLimit-Policy"] {
        assert!(rate[h].is_object(), "429 without {h}");
    }
}

#[test]
fn docs_page_lists_every_path_and_schema_and_loads_nothing_from_outside() {
    let page = std::str::from_utf8(&DOCS_HTML).expect("utf-8").to_owned();
    let spec = spec();
    for path in spec["paths"].as_object().expect("paths").keys() {
        assert!(page.contains(&format!("<code>{path}</code>")), "{path}");
    }
    for name in spec["components"]["schemas"]
        .as_object()
        .expect("schemas")
        .keys()
    {
        assert!(page.contains(&format!("id=\"schema-{name}\"")), "{name}");
    }
    assert!(!page.contains("<script"));
    for attr in ["src=\"", "href=\"", "url("] {
        for scheme in ["http:", "https:", "//"] {
            assert!(!page.contains(&format!("{attr}{scheme}")), "{attr}{scheme}");
        }
    }
    assert!(page.contains("X-API-Key"));
}

#[test]
fn the_full_record_is_described_as_optional_with_its_units() {
    let spec = spec();
    let schemas = &spec["components"]["schemas"];
    let cases = [
        ("ResultRunner", "lbw", "officially written"),
        ("ResultRunner", "lbw_lengths", "lengths"),
        ("ResultRunner", "running_positions", "each call"),
        ("ResultRunner", "actual_weight", "pounds"),
        ("ResultRunner", "declared_weight", "pounds"),
        ("ResultRunner", "draw", "1 to 99"),
        ("ResultRace", "class", "class"),
        ("RaceResult", "class", "class"),
        ("FormEntry", "race_name", "Race name"),
        ("FormEntry", "class", "class"),
        ("FormEntry", "lbw_lengths", "lengths"),
        ("FormEntry", "declared_weight", "pounds"),
        ("Profile", "sire", "Sire"),
        ("Profile", "import_type", "private purchase"),
        ("Profile", "season_stakes", "Hong Kong dollars"),
    ];
    for (schema, field, words) in cases {
        let property = &schemas[schema]["properties"][field];
        let description = property["description"].as_str().unwrap_or_default();
        assert!(
            description.contains(words),
            "{schema}.{field}: {description:?} lacks {words:?}"
        );
        let required = schemas[schema]["required"]
            .as_array()
            .is_some_and(|r| r.contains(&Value::from(field)));
        let always = ["race_name", "going", "trainer"].contains(&field) && schema == "FormEntry";
        assert_eq!(required, always, "{schema}.{field} required");
    }
}

#[test]
fn every_read_takes_a_position_and_says_what_a_position_not_reached_answers() {
    let spec = spec();
    for route in ROUTES.iter() {
        let op = &spec["paths"][route.path]["get"];
        let params = op["parameters"].as_array().expect("parameters");
        let has = |name: &str, place: &str| {
            params
                .iter()
                .any(|p| p["name"] == name && p["in"] == place && p["required"] == false)
        };
        assert!(has("min_seq", "query"), "{}", route.path);
        assert!(has("Racing-Min-Seq", "header"), "{}", route.path);
        let not_found = op["responses"]["404"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(
            not_found.contains("past the end of the log"),
            "{}: {not_found}",
            route.path
        );
    }
    let unavailable = &spec["components"]["responses"]["Unavailable"];
    assert!(unavailable["headers"]["Racing-Checkpoint"].is_object());

    // The 503 of a position not reached, and the 404 of one past the end: each body
    // as the error schema says, the 503's with the checkpoint in it and in a header.
    for (e, status, checkpoint) in [
        (
            ApiError::Behind {
                wanted: 12,
                checkpoint: 9,
            },
            "503",
            Some(9),
        ),
        (
            ApiError::PastTheLog {
                wanted: 12,
                end: 10,
            },
            "404",
            None,
        ),
    ] {
        let response = e.into_response();
        assert_eq!(response.status().as_str(), status);
        let header = response
            .headers()
            .get("racing-checkpoint")
            .map(|v| v.to_str().expect("ascii").to_owned());
        assert_eq!(header, checkpoint.map(|c: u64| c.to_string()));
        if status == "503" {
            assert_eq!(response.headers()["retry-after"], "1");
        }
        let body = error_body(&spec, response, status);
        assert_eq!(body["checkpoint"].as_u64(), checkpoint, "{body}");
    }
}

/// Whether `value` matches the `pattern` of a description's string schema.
fn matches(pattern: &str, value: &str) -> bool {
    let schema = serde_json::json!({"type": "string", "pattern": pattern});
    jsonschema::validator_for(&schema)
        .expect("the pattern compiles")
        .is_valid(&serde_json::json!(value))
}

#[test]
fn a_change_cursor_is_taken_exactly_where_its_pattern_admits_it() {
    let spec = spec();
    let pattern = spec["components"]["schemas"]["ChangeSince"]["pattern"]
        .as_str()
        .expect("a pattern");
    for cursor in [
        "0",
        "1",
        "5120.64",
        "999999999999999999",
        "999999999999999999.999999999",
        "9419369.82600367434829",
        "9223372036854775807",
        "1.4294967296",
        "1.0",
        "01",
        "1.",
        ".1",
        "-1",
        "1.01",
        "",
    ] {
        assert_eq!(
            matches(pattern, cursor),
            crate::http::input::change_cursor(cursor).is_ok(),
            "{cursor:?}"
        );
    }
}

#[test]
fn the_socket_requires_the_upgrade_headers_its_handshake_checks() {
    let spec = spec();
    let params = spec["paths"][ODDS_SOCKET_PATH]["get"]["parameters"]
        .as_array()
        .expect("parameters")
        .clone();
    let good = [
        ("Connection", "Upgrade"),
        ("Upgrade", "websocket"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ];
    for (name, _) in good {
        let p = params
            .iter()
            .find(|p| p["name"] == name && p["in"] == "header")
            .unwrap_or_else(|| panic!("{name} described"));
        assert_eq!(p["required"], true, "{name}");
    }
    let pattern = |name: &str| {
        params
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["schema"]["pattern"].as_str())
            .expect("a pattern")
            .to_owned()
    };
    let tries = [
        ("Connection", "keep-alive, Upgrade"),
        ("Connection", "upgrade"),
        ("Connection", "keep-alive"),
        ("Connection", "upgraded"),
        ("Connection", "xupgradex, close"),
        ("Upgrade", "WebSocket"),
        ("Upgrade", "websocket2"),
        ("Upgrade", "h2c"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Key", "abc"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Version", "8"),
    ];
    for (name, value) in tries {
        let mut headers = axum::http::HeaderMap::new();
        for (n, v) in good {
            let v = if n == name { value } else { v };
            headers.insert(
                axum::http::HeaderName::from_bytes(n.as_bytes()).expect("a name"),
                v.parse().expect("a value"),
            );
        }
        assert_eq!(
            matches(&pattern(name), value),
            super::super::live::handshake(&headers).is_ok(),
            "{name}: {value}"
        );
    }
}

/// Every property schema of `v`, with its name and where it is.
fn properties<'a>(v: &'a Value, at: &str, out: &mut Vec<(String, &'a str, &'a Value)>) {
    match v {
        Value::Object(fields) => {
            if let Some(Value::Object(props)) = fields.get("properties") {
                for (name, schema) in props {
                    out.push((format!("{at}/{name}"), name.as_str(), schema));
                }
            }
            for (key, inner) in fields {
                properties(inner, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                properties(inner, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_served_instant_has_one_format_utc_with_z_to_the_millisecond() {
    let pattern = racing_events::Instant::PATTERN;
    assert!(matches(pattern, "2026-11-21T04:10:02.113Z"));
    for other in [
        "2026-11-21T12:10:02+08:00",
        "2026-11-21T04:10:02Z",
        "2026-11-21T04:10:02.113456789Z",
        "2026-11-21",
    ] {
        assert!(!matches(pattern, other), "{other}");
    }
    let asyncapi = crate::http::asyncapi::DOCUMENT.clone();
    for (name, document) in [("OpenAPI", spec()), ("AsyncAPI", asyncapi)] {
        let mut found = Vec::new();
        properties(&document, "", &mut found);
        let mut instants = 0;
        for (at, field, schema) in found {
            // A field named for a moment is an instant; a date is a date.
            let named = field.ends_with("_at") || field == "at" || field == "clock";
            let instant = schema["format"] == "date-time";
            assert_eq!(named, instant, "{name} {at}: {schema}");
            if instant {
                assert_eq!(schema["pattern"], pattern, "{name} {at}");
                instants += 1;
            }
            if field == "date" || field == "from" || field == "to" {
                assert_ne!(schema["format"], "date-time", "{name} {at}");
            }
        }
        assert!(instants >= 5, "{name}: {instants} instants");
    }
}
