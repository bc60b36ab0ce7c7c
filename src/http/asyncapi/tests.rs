//! The AsyncAPI document against its shape and against the code: every message has its
//! schema, every reference resolves, the frames the types write validate, and the
//! check the tests route every received frame through refuses what it does not describe.

use std::collections::BTreeSet;

use serde_json::Value;

use super::*;
use crate::http::openapi::SPEC;

/// Every `$ref` in `v`, with where it was.
fn refs<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match v {
        Value::Object(fields) => {
            for (k, field) in fields {
                match (k.as_str(), field.as_str()) {
                    ("$ref", Some(r)) => out.push((at.clone(), r)),
                    _ => refs(field, format!("{at}/{k}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                refs(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_document_is_asyncapi_3_shaped_with_one_channel_and_its_key_bindings() {
    let doc = &*DOCUMENT;
    assert_eq!(doc["asyncapi"], "3.0.0");
    let spec = serde_json::to_value(&*SPEC).expect("the OpenAPI document");
    assert_eq!(doc["info"]["title"], spec["info"]["title"]);
    assert_eq!(doc["info"]["version"], spec["info"]["version"]);
    for top in ["servers", "channels", "operations"] {
        assert!(doc[top].as_object().is_some_and(|o| !o.is_empty()), "{top}");
    }
    for part in ["messages", "schemas", "securitySchemes"] {
        assert!(doc["components"][part].is_object(), "components.{part}");
    }
    let channels = doc["channels"].as_object().expect("channels");
    assert_eq!(channels.len(), 1);
    let channel = &doc["channels"][CHANNEL];
    assert_eq!(channel["address"], ODDS_SOCKET_PATH);
    let ws = &channel["bindings"]["ws"];
    assert_eq!(ws["method"], "GET");
    assert!(ws["query"]["properties"]["api_key"].is_object());
    assert!(ws["headers"]["properties"]["X-API-Key"].is_object());
    let server = &doc["servers"]["service"];
    assert_eq!(server["protocol"], "ws");
    assert!(server["host"].is_string());
    // An operation for each message of the channel: receive what the server sends, send
    // what a client may.
    let messages = channel["messages"].as_object().expect("messages");
    let operations = doc["operations"].as_object().expect("operations");
    assert_eq!(operations.len(), messages.len());
    for op in operations.values() {
        assert!(["receive", "send"].contains(&op["action"].as_str().unwrap_or_default()));
        assert_eq!(op["channel"]["$ref"], format!("#/channels/{CHANNEL}"));
    }
}

#[test]
fn every_message_has_its_schema_and_every_reference_resolves() {
    let doc = &*DOCUMENT;
    let mut found = Vec::new();
    refs(doc, String::new(), &mut found);
    assert!(found.len() > 40, "few references: {found:?}");
    for (at, r) in &found {
        let pointer = r
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("{at}: {r} is not local"));
        assert!(
            doc.pointer(pointer).is_some(),
            "{at}: {r} resolves to nothing"
        );
    }
    let kinds = |list: &[Component]| -> BTreeSet<String> {
        let mut schemas = Map::new();
        messages(list, &mut schemas)
            .into_iter()
            .map(|m| m.kind)
            .collect()
    };
    let server = kinds(&SERVER_FRAMES);
    let client = kinds(&CLIENT_MESSAGES);
    let expected_server = [
        "welcome",
        "snapshot",
        "odds",
        "market",
        "status",
        "scratching",
        "result",
        "card",
        "retraction",
        "heartbeat",
        "pong",
        "replay_end",
        "error",
    ];
    assert_eq!(server, expected_server.map(String::from).into());
    let expected_client = ["subscribe", "unsubscribe", "ping", "replay", "replay_stop"];
    assert_eq!(client, expected_client.map(String::from).into());
    let validator = Validator::new(doc);
    for (kind, message) in doc["components"]["messages"].as_object().expect("messages") {
        let payload = message["payload"]["$ref"].as_str().expect("a payload $ref");
        let (_, schema) = validator.component(payload).expect("its schema");
        assert_eq!(
            schema["properties"]["type"]["enum"],
            serde_json::json!([kind]),
            "{kind}: its schema allows its own type only"
        );
        assert!(message["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty()));
        let action = if server.contains(kind) {
            "receive"
        } else {
            "send"
        };
        assert_eq!(
            doc["operations"][format!("{action}_{kind}")]["action"],
            action
        );
    }
    // The documents the result and card frames carry are the HTTP API's own schemas.
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["ResultFrame"]["properties"]["result"]["$ref"],
        "#/components/schemas/RaceResult"
    );
    assert_eq!(
        schemas["CardFrame"]["properties"]["card"]["$ref"],
        "#/components/schemas/CardRace"
    );
    assert_eq!(schemas["RaceResult"], spec_schema("RaceResult"));
}

fn spec_schema(name: &str) -> Value {
    serde_json::to_value(&*SPEC).expect("OpenAPI")["components"]["schemas"][name].clone()
}

#[test]
fn the_snapshot_frame_names_every_field_of_the_odds_document() {
    // A snapshot is the odds document with a `type`: a field the document gains and the
    // frame's type lacks would fail every test that meets it; this says so first.
    let schemas = &DOCUMENT["components"]["schemas"];
    for (frame, document) in [("SnapshotFrame", "RaceOdds"), ("RunnerPrice", "RunnerOdds")] {
        let document = spec_schema(document);
        let fields = document["properties"].as_object().expect("properties");
        for field in fields.keys() {
            assert!(
                schemas[frame]["properties"][field].is_object(),
                "{frame} lacks `{field}` of the document"
            );
        }
    }
}

#[test]
fn the_frame_check_refuses_an_unknown_type_and_a_field_the_schema_does_not_name() {
    let welcome = r#"{"type":"welcome","seq":3,"heartbeat_ms":5000}"#;
    check_server_frame(welcome).expect("a welcome is described");
    let odds = r#"{"type":"odds","date":"2026-11-21","venue":null,"race_number":1,"seq":4,"published_at":"2026-11-21T01:02:03.000Z","occurred_at":"2026-11-21T01:02:00.000Z","odds":[{"horse_no":"A1","win_odds":3.5}],"market":{"win_book_pct":28.57,"favourites":["A1"]}}"#;
    check_server_frame(odds).expect("an odds frame is described");
    let refused = [
        (r#"{"type":"dance","seq":3}"#, "does not describe"),
        (
            &odds.replace("01:02:00.000Z", "09:02:00+08:00"),
            "is not an instant in UTC to the millisecond",
        ),
        (
            r#"{"type":"welcome","seq":3,"heartbeat_ms":5000,"mood":"fine"}"#,
            "`mood` is not in the WelcomeFrame schema",
        ),
        (
            &odds.replace(r#""win_odds":3.5"#, r#""win_odds":3.5,"show_odds":1.2"#),
            "`show_odds` is not in the RunnerPrice schema",
        ),
        (r#"{"type":"welcome","seq":3}"#, "`heartbeat_ms` missing"),
        (r#"{"type":"ping"}"#, "does not describe"),
        (r#"{"seq":3}"#, "without a string `type`"),
    ];
    for (frame, why) in refused {
        let e = check_server_frame(frame).expect_err(frame);
        assert!(e.contains(why), "{frame}: {e}");
    }
    check_client_message(r#"{"type":"subscribe","date":"2026-11-21","topics":["odds","status"]}"#)
        .expect("a subscribe with topics is described");
    let e = check_client_message(r#"{"type":"subscribe","date":"2026-11-21","topics":["gossip"]}"#)
        .expect_err("an unknown topic");
    assert!(e.contains("gossip"), "{e}");
}
