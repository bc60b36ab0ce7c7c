//! One event as it travels on the wire: its envelope (identity, type, source time, body),
//! written and read, every problem of a payload named as the service refuses it.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::event::{Event, Object};
use crate::transport::MAX_PAYLOAD_BYTES;
use crate::validate::{self, ValidationError};
use crate::values::clip;

/// One event as it travels on the wire: identity, type, source time and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// Chosen by the feeder; makes publishing idempotent (`Nats-Msg-Id`).
    pub event_id: Uuid,
    /// RFC 3339 time of the fact at its source, as the feeder wrote it.
    pub occurred_at: String,
    /// The fact itself.
    pub event: Event,
}

/// The envelope as it is parsed first: the body is kept raw until the type is known,
/// so that a body error names the field that is wrong.
#[derive(Deserialize)]
struct RawEnvelope<'a> {
    event_id: String,
    #[serde(rename = "type")]
    kind: String,
    occurred_at: String,
    #[serde(borrow)]
    data: &'a RawValue,
}

#[derive(Serialize)]
struct WireEnvelope<'a, T: Serialize> {
    event_id: &'a Uuid,
    #[serde(rename = "type")]
    kind: &'static str,
    occurred_at: &'a str,
    data: &'a T,
}

impl Envelope {
    /// Wraps an event with a fresh random `event_id` and the given source time.
    pub fn new(event: Event, occurred_at: impl Into<String>) -> Self {
        Envelope {
            event_id: Uuid::new_v4(),
            occurred_at: occurred_at.into(),
            event,
        }
    }

    /// The subject to publish on.
    pub fn subject(&self) -> String {
        self.event.subject()
    }

    /// The JSON payload of the wire format.
    pub fn to_json(&self) -> String {
        fn wire<T: Serialize>(e: &Envelope, data: &T) -> String {
            let wire = WireEnvelope {
                event_id: &e.event_id,
                kind: e.event.type_name(),
                occurred_at: &e.occurred_at,
                data,
            };
            // Serialising plain structs of strings and numbers cannot fail.
            serde_json::to_string(&wire).unwrap_or_default()
        }
        match &self.event {
            Event::HorseProfileUpdated(d) => wire(self, d),
            Event::RaceCardDeclared(d) => wire(self, d),
            Event::RunnerScratched(d) => wire(self, d),
            Event::RaceResultPublished(d) => wire(self, d),
            Event::OddsUpdated(d) => wire(self, d),
            Event::RaceRetracted(d) => wire(self, d),
            Event::RaceStatusChanged(d) => wire(self, d),
        }
    }

    /// Parses and validates a payload without looking at its subject: what a feeder
    /// checks before it publishes. The error is the first of [`Envelope::check`]'s: the
    /// reason the service refuses the payload with.
    pub fn parse(payload: &[u8]) -> Result<Envelope, ValidationError> {
        Envelope::check(payload).map_err(|mut problems| problems.swap_remove(0))
    }

    /// As [`Envelope::parse`], with every problem of the payload, in the order the
    /// service checks them (never none): the envelope's fields, then the body's. A
    /// payload that is not a JSON envelope, too large, of an unknown type, or whose body
    /// does not decode (a field missing or of the wrong type) has that one problem: its
    /// body's rules are checked once it decodes.
    pub fn check(payload: &[u8]) -> Result<Envelope, Vec<ValidationError>> {
        if payload.len() > MAX_PAYLOAD_BYTES {
            return Err(vec![ValidationError::TooLarge(payload.len())]);
        }
        let Object(raw): Object<RawEnvelope<'_>> =
            serde_json::from_slice(payload).map_err(|e| {
                vec![ValidationError::Json(clip(
                    &e.to_string(),
                    MAX_REASON_CHARS,
                ))]
            })?;
        let mut problems = Vec::new();
        let event_id = Uuid::parse_str(&raw.event_id).ok();
        if event_id.is_none() {
            problems.push(ValidationError::field("event_id", "is not a UUID"));
        }
        if let Err(e) = validate::occurred_at(&raw.occurred_at) {
            problems.push(e);
        }
        fn body<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Result<T, ValidationError> {
            serde_json::from_str(raw.get())
                .map(|Object(body)| body)
                .map_err(|e| ValidationError::Data(clip(&e.to_string(), MAX_REASON_CHARS)))
        }
        let event = match raw.kind.as_str() {
            "HorseProfileUpdated" => body(raw.data).map(Event::HorseProfileUpdated),
            "RaceCardDeclared" => body(raw.data).map(Event::RaceCardDeclared),
            "RunnerScratched" => body(raw.data).map(Event::RunnerScratched),
            "RaceResultPublished" => body(raw.data).map(Event::RaceResultPublished),
            "OddsUpdated" => body(raw.data).map(Event::OddsUpdated),
            "RaceRetracted" => body(raw.data).map(Event::RaceRetracted),
            "RaceStatusChanged" => body(raw.data).map(Event::RaceStatusChanged),
            other => Err(ValidationError::UnknownType(clip(other, 64))),
        };
        match &event {
            Ok(event) => problems.extend(event.problems()),
            Err(e) => problems.push(e.clone()),
        }
        match (event_id, event) {
            (Some(event_id), Ok(event)) if problems.is_empty() => Ok(Envelope {
                event_id,
                occurred_at: raw.occurred_at,
                event,
            }),
            _ => Err(problems),
        }
    }

    /// Parses and validates a message as it came off the stream: the payload and the
    /// subject it was published on, which must be the event's own subject.
    pub fn decode(subject: &str, payload: &[u8]) -> Result<Envelope, ValidationError> {
        let envelope = Envelope::parse(payload)?;
        let expected = envelope.subject();
        if subject != expected {
            return Err(ValidationError::Subject {
                got: clip(subject, 128),
                expected,
            });
        }
        Ok(envelope)
    }
}

/// serde quotes the offending value whole (a megabyte string where a number belongs):
/// its messages are cut to this many characters.
const MAX_REASON_CHARS: usize = 256;
