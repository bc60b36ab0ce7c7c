//! The AsyncAPI 3.0 description of the live odds WebSocket, generated from the code: one
//! message for each frame type of `crate::live::frames`, its payload the schema utoipa
//! derives from that type (the result and card frames refer to the documents' own
//! schemas), one channel with the key's bindings, and an operation for each message. It
//! is written from the client's side: `receive` is what the server sends, `send` what a
//! client may send. Served as JSON at `/api/v1/asyncapi.json` and, without a key like the
//! OpenAPI document, at `/asyncapi.json`; rendered once.

use std::sync::LazyLock;

use axum::extract::RawQuery;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use serde_json::{json, Map, Value};
use utoipa::openapi::{RefOr, Schema};

use super::described::{
    ASYNCAPI_PATH, ASYNCAPI_PUBLIC_PATH, ODDS_SOCKET_DOC, ODDS_SOCKET_PATH, TITLE, VERSION,
};
use super::error::ApiError;
use super::error::ErrorBody;
use super::query::Query;
use super::respond::with_type;
use super::route::Component;
use super::state::AppState;
use super::strict::Validator;
use crate::live::frames::{
    CardFrame, ErrorFrame, HeartbeatFrame, MarketFrame, OddsFrame, Ping, PongFrame, Replay,
    ReplayEndFrame, ReplayStop, ResultFrame, RetractionFrame, ScratchingFrame, SnapshotFrame,
    StatusFrame, Subscribe, Unsubscribe, WelcomeFrame,
};

/// The AsyncAPI version the document follows.
pub const ASYNCAPI_VERSION: &str = "3.0.0";

/// The channel's key in `channels`.
const CHANNEL: &str = "liveOdds";

/// Every frame the server sends, by its type.
pub const SERVER_FRAMES: [Component; 13] = [
    Component::of::<WelcomeFrame>(),
    Component::of::<SnapshotFrame>(),
    Component::of::<OddsFrame>(),
    Component::of::<MarketFrame>(),
    Component::of::<StatusFrame<'static>>(),
    Component::of::<ScratchingFrame<'static>>(),
    Component::of::<ResultFrame<'static>>(),
    Component::of::<CardFrame<'static>>(),
    Component::of::<RetractionFrame<'static>>(),
    Component::of::<HeartbeatFrame>(),
    Component::of::<PongFrame>(),
    Component::of::<ReplayEndFrame<'static>>(),
    Component::of::<ErrorFrame<'static>>(),
];

/// Every message a client may send, by its type.
pub const CLIENT_MESSAGES: [Component; 5] = [
    Component::of::<Subscribe>(),
    Component::of::<Unsubscribe>(),
    Component::of::<Ping>(),
    Component::of::<Replay>(),
    Component::of::<ReplayStop>(),
];

/// The description, built once from the code.
pub static DOCUMENT: LazyLock<Value> = LazyLock::new(describe);

/// The description as served: serialised once.
static DOCUMENT_JSON: LazyLock<Bytes> =
    LazyLock::new(|| Bytes::from(serde_json::to_vec(&*DOCUMENT).unwrap_or_default()));

/// The route of the description behind the key; rendered here, at start-up, so that a
/// request never pays for it and a broken description shows at once.
pub(super) fn routes() -> Router<AppState> {
    LazyLock::force(&DOCUMENT_JSON);
    Router::new().route(ASYNCAPI_PATH, get(asyncapi_json))
}

/// The description at [`ASYNCAPI_PUBLIC_PATH`], for a browser or a code generator with no key.
pub(super) fn public_routes() -> Router {
    Router::new().route(ASYNCAPI_PUBLIC_PATH, get(asyncapi_json))
}

/// The AsyncAPI 3.0 document of the live odds WebSocket.
#[utoipa::path(
    get,
    path = "/api/v1/asyncapi.json",
    tag = "reference",
    summary = "The AsyncAPI 3.0 document of the live odds WebSocket",
    description = "Every frame of `/ws/live/odds`, each with its JSON schema, generated from \
        the types the service serialises. Also served without a key at `/asyncapi.json`. \
        Takes no query parameters.",
    responses(
        (status = 200, description = "The AsyncAPI 3.0 document.", body = Object),
        (status = 400, description = "A query parameter (there are none).", body = ErrorBody),
    )
)]
pub(super) async fn asyncapi_json(RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    Ok(with_type(DOCUMENT_JSON.clone(), "application/json"))
}

/// The message (its frame's `type`) of the component a list names, and its schema.
struct Message {
    /// The frame's `type`, which is the message's key.
    kind: String,
    /// The schema's name in `components.schemas`.
    schema: String,
    /// The schema's description: what the frame is.
    description: String,
}

/// Adds each component of `list`, and what it refers to, to `schemas`; its message.
fn messages(list: &[Component], schemas: &mut Map<String, Value>) -> Vec<Message> {
    list.iter()
        .map(|c| {
            let mut found: Vec<(String, RefOr<Schema>)> = Vec::new();
            (c.collect)(&mut found);
            for (name, schema) in found {
                let mut schema = serde_json::to_value(schema).unwrap_or_default();
                plain_tag(&mut schema);
                instants(&mut schema);
                schemas.entry(name).or_insert(schema);
            }
            let schema = (c.name)().into_owned();
            let own = &schemas[&schema];
            let kind = own["properties"]["type"]["enum"][0]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            // Doc comments break lines where the source does; a reader's tool wraps.
            let description = own["description"]
                .as_str()
                .unwrap_or_default()
                .replace('\n', " ");
            Message {
                kind,
                schema,
                description,
            }
        })
        .collect()
}

/// A frame's `type` as a plain `{type, enum, description}`: utoipa wraps an inlined schema
/// with a description of its own in a `oneOf` of that one schema, which says the same in a
/// way fewer readers of the document follow.
fn plain_tag(schema: &mut Value) {
    let Some(tag) = schema.pointer_mut("/properties/type") else {
        return;
    };
    if let Some(Value::Array(mut one)) = tag.as_object_mut().and_then(|t| t.remove("oneOf")) {
        if let (1, Some(Value::Object(inner))) = (one.len(), one.pop()) {
            if let Some(fields) = tag.as_object_mut() {
                fields.extend(inner);
            }
        }
    }
}

/// Gives every instant of `schema` (a string of `format: date-time`) the one pattern the
/// service writes instants in, [`racing_events::Instant::PATTERN`], as the OpenAPI
/// document does.
fn instants(schema: &mut Value) {
    match schema {
        Value::Object(fields) => {
            if fields.get("format").and_then(Value::as_str) == Some("date-time") {
                fields.insert("pattern".into(), racing_events::Instant::PATTERN.into());
            }
            fields.values_mut().for_each(instants);
        }
        Value::Array(items) => items.iter_mut().for_each(instants),
        _ => {}
    }
}

/// The whole description.
fn describe() -> Value {
    let mut schemas = Map::new();
    let server = messages(&SERVER_FRAMES, &mut schemas);
    let client = messages(&CLIENT_MESSAGES, &mut schemas);
    let mut components = Map::new();
    let mut channel = Map::new();
    let mut operations = Map::new();
    for (action, list) in [("receive", &server), ("send", &client)] {
        for m in list {
            let summary = m.description.split(". ").next().unwrap_or_default();
            components.insert(
                m.kind.clone(),
                json!({
                    "name": m.kind,
                    "title": m.kind,
                    "summary": summary.trim_end_matches('.'),
                    "description": m.description,
                    "contentType": "application/json",
                    "payload": {"$ref": format!("#/components/schemas/{}", m.schema)},
                }),
            );
            channel.insert(
                m.kind.clone(),
                json!({"$ref": format!("#/components/messages/{}", m.kind)}),
            );
            let who = if action == "receive" {
                "The server sends"
            } else {
                "A client may send"
            };
            operations.insert(
                format!("{action}_{}", m.kind),
                json!({
                    "action": action,
                    "channel": {"$ref": format!("#/channels/{CHANNEL}")},
                    "summary": format!("{who} `{}`.", m.kind),
                    "messages": [{"$ref": format!("#/channels/{CHANNEL}/messages/{}", m.kind)}],
                }),
            );
        }
    }
    json!({
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": "The live odds WebSocket of the horse racing data API. Operations \
                are written from the client's side: `receive` is a frame the server sends, \
                `send` a message a client may send. Every frame is JSON text with a `type` \
                that names its message. The HTTP API is described as OpenAPI 3.1 at \
                `/openapi.json`.",
            "license": {"name": "MIT"},
        },
        "defaultContentType": "application/json",
        "servers": {
            "service": {
                "host": "{host}",
                "protocol": "ws",
                "description": "The service that serves this document (`wss` behind a TLS \
                    proxy).",
                "variables": {
                    "host": {
                        "default": "127.0.0.1:8080",
                        "description": "The service's address: the host and port of this \
                            document's URL (`RACING_LISTEN`).",
                    },
                },
                "security": [
                    {"$ref": "#/components/securitySchemes/api_key"},
                    {"$ref": "#/components/securitySchemes/api_key_query"},
                ],
            },
        },
        "channels": {
            CHANNEL: {
                "address": ODDS_SOCKET_PATH,
                "title": "Live odds",
                "description": ODDS_SOCKET_DOC,
                "servers": [{"$ref": "#/servers/service"}],
                "messages": channel,
                "bindings": {
                    "ws": {
                        "method": "GET",
                        "query": {
                            "type": "object",
                            "properties": {
                                "api_key": {
                                    "type": "string",
                                    "description": "The key, for a client that cannot set \
                                        headers on the upgrade request. The only query \
                                        parameter taken.",
                                },
                            },
                            "additionalProperties": false,
                        },
                        "headers": {
                            "type": "object",
                            "properties": {
                                "X-API-Key": {
                                    "type": "string",
                                    "description": "The key.",
                                },
                            },
                        },
                        "bindingVersion": "0.1.0",
                    },
                },
            },
        },
        "operations": operations,
        "components": {
            "messages": components,
            "schemas": schemas,
            "securitySchemes": {
                "api_key": {
                    "type": "httpApiKey",
                    "name": "X-API-Key",
                    "in": "header",
                    "description": "The key in the upgrade request's header.",
                },
                "api_key_query": {
                    "type": "httpApiKey",
                    "name": "api_key",
                    "in": "query",
                    "description": "The key as a query parameter of the upgrade request.",
                },
            },
        },
    })
}

/// Checks one frame the server sent against the description, strictly: its `type` must
/// name a message the server sends, and its fields must be that message's payload, no
/// more (see [`Validator`]). Tests route every frame they receive through it.
pub fn check_server_frame(text: &str) -> Result<(), String> {
    check(text, "receive")
}

/// Checks one message a client sends against the description, as
/// [`check_server_frame`] does a server's.
pub fn check_client_message(text: &str) -> Result<(), String> {
    check(text, "send")
}

/// Checks a frame or message as written in a document, which may leave parts out, each
/// written `elision` ([`Validator::with_elisions`]): the server's (`server`) or a client's.
pub fn check_written(v: &Value, server: bool, elision: &str) -> Result<(), String> {
    let action = if server { "receive" } else { "send" };
    check_value(v, action, Validator::with_elisions(&DOCUMENT, elision))
}

fn check(text: &str, action: &str) -> Result<(), String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e}): {text}"))?;
    check_value(&v, action, Validator::new(&DOCUMENT))
        .map_err(|e| format!("{e}\nin the frame {text}"))
}

/// Checks `v` against the message of its `type` that the `action` (`receive`: the
/// server's; `send`: a client's) of the description names.
fn check_value(v: &Value, action: &str, mut validator: Validator<'_>) -> Result<(), String> {
    let kind = v["type"]
        .as_str()
        .ok_or_else(|| "a frame without a string `type`".to_owned())?;
    let doc = &*DOCUMENT;
    if doc["operations"].get(format!("{action}_{kind}")).is_none() {
        return Err(format!(
            "a `{kind}` frame, which the AsyncAPI document does not describe"
        ));
    }
    let payload = &doc["components"]["messages"][kind]["payload"]["$ref"];
    let (owner, schema) = validator.component(payload.as_str().unwrap_or_default())?;
    validator.check(&owner, schema, v, kind)
}

#[cfg(test)]
mod tests;
