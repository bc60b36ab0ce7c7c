//! The feed as an AsyncAPI 3.0 document, for feeders' tools as the socket's is for
//! clients': one channel for each kind of subject (`racing.results.{date}.{race_number}`)
//! with its parameters, the envelope of each event type as a message (its payload the
//! JSON Schema of [`feed_schema`](crate::schema::feed_schema), its `Nats-Msg-Id` header), and the
//! feeder role's operation for each: it sends, and only these.

use serde_json::{json, Map, Value};

use crate::schema::{envelope_name, feed_schema, EventType, FeedVersion, EVENT_TYPES};
use crate::transport::FEEDER_HEADER;

/// The AsyncAPI version the document follows.
pub const ASYNCAPI_VERSION: &str = "3.0.0";

/// A channel's key: the kind of subject (`racing.odds...` is `odds`).
fn channel(t: &EventType) -> &'static str {
    t.subject.split('.').nth(1).unwrap_or(t.subject)
}

/// The parameters of a subject: the names in braces.
fn parameters(subject: &str) -> Vec<&str> {
    subject
        .split('.')
        .filter_map(|token| token.strip_prefix('{')?.strip_suffix('}'))
        .collect()
}

/// The feed's AsyncAPI document at the latest version of the contract.
pub fn feed_asyncapi() -> Value {
    let version = FeedVersion::LATEST;
    let schema = feed_schema(version);
    // The schemas' references point into the document's components.
    let schemas = serde_json::to_string(&schema["$defs"])
        .unwrap_or_default()
        .replace("\"#/$defs/", "\"#/components/schemas/");
    let schemas: Value = serde_json::from_str(&schemas).unwrap_or_default();
    let mut channels = Map::new();
    let mut messages = Map::new();
    let mut operations = Map::new();
    for t in &EVENT_TYPES {
        let key = channel(t);
        let entry = channels.entry(key).or_insert_with(|| {
            let parameters: Map<String, Value> = parameters(t.subject)
                .into_iter()
                .map(|p| {
                    let about = json!({
                        "description": format!("The event's `data.{p}`, as written in it."),
                        "location": format!("$message.payload#/data/{p}"),
                    });
                    (p.to_owned(), about)
                })
                .collect();
            json!({
                "address": t.subject,
                "description": format!("The `{key}` subjects of the stream (`racing.>`): each token after the kind repeats the payload's value."),
                "parameters": parameters,
                "messages": {},
            })
        });
        entry["messages"][t.name] = json!({ "$ref": format!("#/components/messages/{}", t.name) });
        messages.insert(
            t.name.to_owned(),
            json!({
                "name": t.name,
                "title": t.name,
                "summary": t.summary,
                "description": format!("Added in v{} of the feed contract.", t.since.as_str()),
                "contentType": "application/json",
                "headers": {
                    "type": "object",
                    "required": ["Nats-Msg-Id"],
                    "properties": {
                        "Nats-Msg-Id": {
                            "type": "string",
                            "description": "The event's `event_id`: JetStream drops a repeat inside its duplicate window, and the service ignores an id it has applied, at any age.",
                        },
                        FEEDER_HEADER: {
                            "type": "string",
                            "description": "The feeder's NATS user (`feeder-hkjc`), optional: the service keeps the event's refusal, if it refuses it, for that user to read.",
                        },
                    },
                },
                "payload": { "$ref": format!("#/components/schemas/{}", envelope_name(t)) },
            }),
        );
        operations.insert(
            format!("send{}", t.name),
            json!({
                "action": "send",
                "channel": { "$ref": format!("#/channels/{key}") },
                "messages": [{ "$ref": format!("#/channels/{key}/messages/{}", t.name) }],
                "summary": format!("A feeder publishes {} to JetStream.", t.name),
                "description": "As a user of the `feeder` role: it may publish on `racing.>`, receive JetStream's acknowledgements on `_INBOX_RACING_FEEDER.>` and read its own refusals (`racing refusals`), and nothing else. The acknowledgement says whether the stream stored the event or dropped it as a duplicate; whether the service applied it, the validation decides: a refused event is the operator's dead letter, and, with the header `Racing-Feeder` naming the feeder's user, a refusal that feeder reads.",
                "security": [{ "$ref": "#/components/securitySchemes/feederNkey" }],
            }),
        );
    }
    json!({
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": "racing: the feed",
            "version": version.as_str(),
            "description": "The events feeders publish to the service's NATS JetStream stream, from which every read model is built. One JSON envelope a message; `GET /feed/schema.json` is the same JSON Schema on its own, version by version.",
        },
        "defaultContentType": "application/json",
        "servers": {
            "nats": {
                "host": "localhost:4222",
                "protocol": "nats",
                "description": "The deployment's NATS: the host and port its operator gives, or the one `racing serve` runs under its data directory.",
                "security": [{ "$ref": "#/components/securitySchemes/feederNkey" }],
            },
        },
        "channels": channels,
        "operations": operations,
        "components": {
            "messages": messages,
            "schemas": schemas,
            "securitySchemes": {
                "feederNkey": {
                    "type": "asymmetricEncryption",
                    "description": "An nkey of a user of the `feeder` role (`racing credentials`): the client signs the server's challenge with the seed.",
                },
            },
        },
    })
}
