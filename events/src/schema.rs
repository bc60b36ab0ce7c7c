//! The feed as JSON Schema 2020-12, one document for each version of the contract,
//! derived from this crate's own types: the envelope, every event type and what the types
//! say of the validation (ranges, patterns, the status values, required and optional
//! fields). The rules only [`Event::validate`](crate::event::Event::validate) and the service
//! check are [`SERVICE_ONLY`]: each schema lists them too.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::Schema;
use serde_json::{json, Map, Value};

use crate::event::{
    HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceRetracted, RaceStatusChanged,
    RunnerScratched,
};
use crate::patterns::OCCURRED_AT;

/// The keyword that says in which version of the contract a field or event type came.
pub const SINCE: &str = "x-since";

/// A version of the feed contract. Each adds to the one before and removes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FeedVersion {
    /// The first contract: five event types.
    V1_0,
    /// Corrections, venues and the full Hong Kong record.
    V1_1,
    /// The race day as it happens: race status and place prices.
    V1_2,
    /// A career's seconds and thirds in a profile.
    V1_3,
}

impl FeedVersion {
    /// Every version, oldest first.
    pub const ALL: [FeedVersion; 4] = [
        FeedVersion::V1_0,
        FeedVersion::V1_1,
        FeedVersion::V1_2,
        FeedVersion::V1_3,
    ];

    /// The version this crate validates.
    pub const LATEST: FeedVersion = FeedVersion::V1_3;

    /// The version as the contract writes it: `1.0`, `1.1`, `1.2`, `1.3`.
    pub fn as_str(self) -> &'static str {
        match self {
            FeedVersion::V1_0 => "1.0",
            FeedVersion::V1_1 => "1.1",
            FeedVersion::V1_2 => "1.2",
            FeedVersion::V1_3 => "1.3",
        }
    }

    /// Reads `1.0`, `1.1`, `1.2` or `1.3` (a leading `v` allowed; `1` is `1.0`).
    pub fn parse(text: &str) -> Option<FeedVersion> {
        let text = text.strip_prefix('v').unwrap_or(text);
        let text = if text == "1" { "1.0" } else { text };
        FeedVersion::ALL.into_iter().find(|v| v.as_str() == text)
    }
}

/// One event type of the feed: its `type`, the subject it goes to and the version that
/// added it.
#[derive(Debug, Clone, Copy)]
pub struct EventType {
    /// The envelope's `type`.
    pub name: &'static str,
    /// The subject, its parameters in braces (`racing.results.{date}.{race_number}`),
    /// each the body's field of that name.
    pub subject: &'static str,
    /// The version that added it.
    pub since: FeedVersion,
    /// What it does, for people.
    pub summary: &'static str,
    body: fn(&mut SchemaGenerator) -> Schema,
}

/// Every event type of the feed, in the contract's order.
pub const EVENT_TYPES: [EventType; 7] = [
    EventType {
        name: "HorseProfileUpdated",
        subject: "racing.horses.{horse_no}",
        since: FeedVersion::V1_0,
        summary: "A whole horse profile; replaces the previous one.",
        body: SchemaGenerator::subschema_for::<HorseProfile>,
    },
    EventType {
        name: "RaceCardDeclared",
        subject: "racing.cards.{date}.{race_number}",
        since: FeedVersion::V1_0,
        summary: "A race card; replaces that race's card.",
        body: SchemaGenerator::subschema_for::<RaceCard>,
    },
    EventType {
        name: "RunnerScratched",
        subject: "racing.cards.{date}.{race_number}",
        since: FeedVersion::V1_0,
        summary: "A runner withdrawn from a declared race.",
        body: SchemaGenerator::subschema_for::<RunnerScratched>,
    },
    EventType {
        name: "RaceResultPublished",
        subject: "racing.results.{date}.{race_number}",
        since: FeedVersion::V1_0,
        summary: "A whole race result; an amendment is published again, whole.",
        body: SchemaGenerator::subschema_for::<RaceResult>,
    },
    EventType {
        name: "OddsUpdated",
        subject: "racing.odds.{date}.{race_number}",
        since: FeedVersion::V1_0,
        summary: "New prices for some runners of a race; the others keep their last.",
        body: SchemaGenerator::subschema_for::<OddsUpdated>,
    },
    EventType {
        name: "RaceRetracted",
        subject: "racing.results.{date}.{race_number}",
        since: FeedVersion::V1_1,
        summary: "A venue's race withdrawn from every read model: card, result and form.",
        body: SchemaGenerator::subschema_for::<RaceRetracted>,
    },
    EventType {
        name: "RaceStatusChanged",
        subject: "racing.status.{date}.{race_number}",
        since: FeedVersion::V1_2,
        summary: "A race's status: betting open or suspended, off, finished, abandoned, void.",
        body: SchemaGenerator::subschema_for::<RaceStatusChanged>,
    },
];

/// A rule of the contract that no JSON Schema here carries, with the words that begin or
/// end its refusal (the dead letter's reason).
#[derive(Debug, Clone, Copy)]
pub struct ServiceOnly {
    /// The rule, for people.
    pub rule: &'static str,
    /// Words of the refusal's reason that name it.
    pub refusal: &'static str,
    /// The version that added it: a schema of an earlier one does not list it.
    pub since: FeedVersion,
}

/// The rules only the service checks: a feeder's schema validator lets these through, and
/// `racing publish --check` does not.
pub const SERVICE_ONLY: [ServiceOnly; 10] = [
    ServiceOnly {
        rule: "`date` is a day of the calendar (the pattern lets 2026-02-30 through)",
        refusal: "is not a real calendar date",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "`occurred_at` is a real moment (the pattern lets 24:61:00 through)",
        refusal: "is not an RFC 3339 timestamp",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "`wins` and `places` are no more than `starts`",
        refusal: "is more than starts",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "a horse appears at most once in a race's runners or an odds update",
        refusal: "more than once",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "runners share a position exactly when each has `dead_heat` true",
        refusal: "dead_heat",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "a result runner with no position has a status (a normal finisher has a placing)",
        refusal: "is null for a runner with no status",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "the subject repeats the payload's values and its kind matches the `type`",
        refusal: "does not match the event",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "the payload is at most 1 MiB",
        refusal: "over the 1 MiB limit",
        since: FeedVersion::V1_0,
    },
    ServiceOnly {
        rule: "a profile gives `seconds` and `thirds` together, or neither",
        refusal: "is given without",
        since: FeedVersion::V1_3,
    },
    ServiceOnly {
        rule: "with `seconds` and `thirds`, `places` is `wins + seconds + thirds`",
        refusal: "is not wins + seconds + thirds",
        since: FeedVersion::V1_3,
    },
];

/// The JSON Schema of one message of the feed at `version`: the envelope, with `data`
/// the body of its `type`. Fields and types added later are left out; unknown fields are
/// allowed, as the contract ignores them.
pub fn feed_schema(version: FeedVersion) -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let types: Vec<&EventType> = EVENT_TYPES.iter().filter(|t| t.since <= version).collect();
    let names: Vec<&str> = types.iter().map(|t| t.name).collect();
    let mut defs = Map::new();
    defs.insert(
        ENVELOPE.to_owned(),
        json!({
            "description": "What every event has: its identity, type, source time and body.",
            "type": "object",
            "required": ["event_id", "type", "occurred_at", "data"],
            "properties": {
                "event_id": {
                    "description": "Chosen by the feeder; makes publishing idempotent (`Nats-Msg-Id`).",
                    "type": "string",
                    "format": "uuid",
                    "pattern": "^[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}$",
                },
                "type": { "enum": names },
                "occurred_at": {
                    "description": "RFC 3339 time of the fact at its source.",
                    "type": "string",
                    "format": "date-time",
                    "pattern": OCCURRED_AT,
                },
                "data": { "type": "object" },
            },
        }),
    );
    for t in &types {
        let body = (t.body)(&mut generator);
        defs.insert(
            envelope_name(t),
            json!({
                "description": t.summary,
                SINCE: t.since.as_str(),
                "x-subject": t.subject,
                "allOf": [{ "$ref": format!("#/$defs/{ENVELOPE}") }],
                "properties": {
                    "type": { "const": t.name },
                    "data": body,
                },
            }),
        );
    }
    for (name, mut body) in generator.take_definitions(true) {
        as_of(&mut body, version);
        tidy(&mut body);
        defs.insert(name, body);
    }
    let service_only: Vec<&str> = SERVICE_ONLY
        .iter()
        .filter(|r| r.since <= version)
        .map(|r| r.rule)
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("urn:racing:feed:{}", version.as_str()),
        "title": format!("One event of the racing feed, contract v{}", version.as_str()),
        "description": "A message a feeder publishes to NATS JetStream: the envelope, and the body \
            of its `type` in `data`; each type is one branch of `oneOf` (`<type>Envelope`). \
            Unknown extra fields are ignored. The header `Nats-Msg-Id` carries the \
            `event_id`; `x-subject` names each type's subject. The rules in \
            `x-service-only` are checked by the service alone.",
        "x-feed-version": version.as_str(),
        "x-service-only": service_only,
        "oneOf": types
            .iter()
            .map(|t| json!({ "$ref": format!("#/$defs/{}", envelope_name(t)) }))
            .collect::<Vec<_>>(),
        "$defs": defs,
    })
}

/// The name in `$defs` of what every envelope has.
pub const ENVELOPE: &str = "Envelope";

/// The name in `$defs` of the envelope of `t`'s events (`OddsUpdatedEnvelope`); the body
/// is under its type's name (`OddsUpdated`).
pub fn envelope_name(t: &EventType) -> String {
    format!("{}Envelope", t.name)
}

/// Leaves out of an object's schema the properties added after `version`, and the
/// alternatives of its `anyOf` that require one of them: an `anyOf` left with one
/// alternative becomes plain `required` (a v1.2 odds entry needs a win or a place price,
/// a v1.0 one its win price).
fn as_of(schema: &mut Value, version: FeedVersion) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let later = |p: &Value| {
        p.get(SINCE)
            .and_then(Value::as_str)
            .and_then(FeedVersion::parse)
            .is_some_and(|since| since > version)
    };
    let Some(Value::Object(properties)) = object.get_mut("properties") else {
        return;
    };
    let gone: Vec<String> = properties
        .iter()
        .filter(|(_, p)| later(p))
        .map(|(name, _)| name.clone())
        .collect();
    if gone.is_empty() {
        return;
    }
    for name in &gone {
        properties.remove(name);
    }
    let needs_gone = |s: &Value| {
        s.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| gone.iter().any(|g| n == g)))
    };
    if let Some(Value::Array(choices)) = object.get_mut("anyOf") {
        choices.retain(|c| !needs_gone(c));
        if let [only] = choices.as_slice() {
            let also = only.get("required").cloned().unwrap_or(json!([]));
            object.remove("anyOf");
            let required = object.entry("required").or_insert_with(|| json!([]));
            if let (Some(required), Some(also)) = (required.as_array_mut(), also.as_array()) {
                required.extend(also.iter().cloned());
            }
        }
    }
}

/// The descriptions, which are the types' doc comments, as a reader's tool shows them:
/// lines joined (it wraps them itself), and rustdoc's links (`` [`Lbw`] ``) as plain code.
fn tidy(schema: &mut Value) {
    match schema {
        Value::Object(fields) => {
            for (key, value) in fields.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => {
                        *text = text
                            .replace('\n', " ")
                            .replace("[`", "`")
                            .replace("`]", "`");
                    }
                    _ => tidy(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
