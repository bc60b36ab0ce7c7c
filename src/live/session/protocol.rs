//! The protocol's messages: what a client may send, how it is read (size, rate, shape)
//! and answered (the frames it answers with are in `crate::live::frames`).

use axum::extract::ws::Message;
use racing_events::{Date, RaceNumber};
use serde::Deserialize;

use super::end::End;
use super::playback::Speed;
use super::subscriptions::Target;
use super::topics::Topics;
use super::Session;
use crate::live::close::{CLOSE_PROTOCOL, CLOSE_TOO_BIG};
use crate::live::frames::frame;
use crate::live::frames::{ErrorFrame, PongFrame, WelcomeFrame};
use crate::text::count;

/// A client's message.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum ClientMessage {
    Subscribe {
        date: String,
        #[serde(default)]
        race_number: Option<i64>,
        #[serde(default)]
        since: Option<u64>,
        #[serde(default)]
        topics: Option<Vec<String>>,
        #[serde(default)]
        conflate_ms: Option<u64>,
    },
    Unsubscribe {
        date: String,
        #[serde(default)]
        race_number: Option<i64>,
        #[serde(default)]
        topics: Option<Vec<String>>,
    },
    /// Braces, not a unit: so that a field the message does not have is refused, as for
    /// the others.
    Ping {},
    /// Play back a date's recorded odds (see `playback`).
    Replay {
        date: String,
        #[serde(default)]
        race_number: Option<i64>,
        #[serde(default)]
        speed: Option<f64>,
    },
    #[serde(rename = "replay_stop")]
    ReplayStop {},
}

impl Session<'_> {
    /// The first frame of a connection: the latest sequence and the heartbeat interval.
    pub(super) fn welcome(&mut self, latest: u64) {
        self.send(frame(&WelcomeFrame {
            r#type: Default::default(),
            seq: latest,
            heartbeat_ms: self.ctx.limits.heartbeat.as_millis(),
        }));
    }

    /// An `error` frame; the connection stays open.
    pub(super) fn error(&mut self, error: &str, message: &str) -> Result<(), End> {
        self.send(frame(&ErrorFrame {
            r#type: Default::default(),
            error,
            message,
        }));
        Ok(())
    }

    /// Answers one frame of the client's.
    pub(super) async fn on_client(&mut self, message: Message) -> Result<(), End> {
        let text = match message {
            Message::Text(t) => t,
            Message::Binary(_) => return self.error("bad_request", "frames must be JSON text"),
            Message::Close(_) => return Err(End::Gone),
            // The protocol layer answers pings itself.
            Message::Ping(_) | Message::Pong(_) => return Ok(()),
        };
        if self.messages.check().is_err() {
            let limits = &self.ctx.limits;
            let message = format!(
                "at most {} a second (bursts of {}) on one connection; this one was not acted on",
                count(limits.messages_per_sec, "message", "messages"),
                limits.message_burst
            );
            return self.error("rate_limited", &message);
        }
        // Every message is a request of the key's plan, as an HTTP request is: a key's
        // sockets together cost what its plan allows, not each socket its own quota.
        if !self.pay("this message")? {
            return Ok(());
        }
        if text.len() > self.ctx.limits.max_frame_bytes {
            let message = format!(
                "frames are limited to {}",
                count(self.ctx.limits.max_frame_bytes, "byte", "bytes")
            );
            return self.error("frame_too_large", &message);
        }
        match serde_json::from_str::<ClientMessage>(&text) {
            Err(e) => self.error("bad_request", &e.to_string()),
            Ok(ClientMessage::Ping {}) => {
                self.send(frame(&PongFrame {
                    r#type: Default::default(),
                }));
                Ok(())
            }
            Ok(ClientMessage::Subscribe {
                date,
                race_number,
                since,
                topics,
                conflate_ms,
            }) => match target(date, race_number).and_then(|t| {
                let conflate_ms = conflation(conflate_ms)?;
                Ok((t, (Topics::parse(topics.as_deref())?, conflate_ms)))
            }) {
                Ok((t, follow)) => self.subscribe(t, follow, since).await,
                Err(message) => self.error("bad_request", &message),
            },
            Ok(ClientMessage::Unsubscribe {
                date,
                race_number,
                topics,
            }) => {
                let topics = topics.map(|names| Topics::parse(Some(&names))).transpose();
                match target(date, race_number).and_then(|t| Ok((t, topics?))) {
                    Ok((t, topics)) => self.unsubscribe(t, topics),
                    Err(message) => self.error("bad_request", &message),
                }
            }
            Ok(ClientMessage::Replay {
                date,
                race_number,
                speed,
            }) => match target(date, race_number).and_then(|t| Ok((t, speed_of(speed)?))) {
                Ok((t, speed)) => self.start_replay(t, speed),
                Err(message) => self.error("bad_request", &message),
            },
            Ok(ClientMessage::ReplayStop {}) => self.stop_replay(),
        }
    }
}

/// How a connection whose client side broke is closed: a frame over the protocol layer's
/// limit with 1009 (the client may still read it), anything else with 1002.
pub(super) fn broken(error: &str) -> End {
    tracing::debug!(error, "live odds client frame unreadable");
    // tungstenite's words for a frame over `max_message_size` / `max_frame_size`.
    if error.contains("too long") {
        End::Close(CLOSE_TOO_BIG, "frame over the 64 KiB limit")
    } else {
        End::Close(CLOSE_PROTOCOL, "unreadable frame")
    }
}

fn target(date: String, race_number: Option<i64>) -> Result<Target, String> {
    if Date::parse(&date).is_none() {
        return Err(format!("date must be {}", Date::RULE));
    }
    match race_number.map(RaceNumber::try_from).transpose() {
        Ok(n) => Ok((date, n.map(RaceNumber::get))),
        Err(problem) => Err(format!("race_number {problem}")),
    }
}

/// Most of a subscription's conflation window, milliseconds.
pub const MAX_CONFLATE_MS: u64 = 120_000;

/// A subscription's conflation window: 0 (every move) if not given.
fn conflation(ms: Option<u64>) -> Result<u64, String> {
    match ms {
        Some(ms) if ms > MAX_CONFLATE_MS => Err(format!(
            "conflate_ms must be from 0 to {MAX_CONFLATE_MS}, got {ms}"
        )),
        ms => Ok(ms.unwrap_or(0)),
    }
}

/// A replay's speed: 1 if not given.
fn speed_of(speed: Option<f64>) -> Result<Speed, String> {
    let x = speed.unwrap_or(1.0);
    Speed::new(x).ok_or_else(|| format!("speed must be {}, got {x}", Speed::RULE))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::ClientMessage;
    use crate::live::frames::{Ping, Replay, ReplayStop, Subscribe, Unsubscribe};

    /// Whether `text` is a client message as the AsyncAPI document's types read it.
    fn described(text: &str) -> bool {
        fn reads<'a, T: Deserialize<'a>>(text: &'a str) -> bool {
            serde_json::from_str::<T>(text).is_ok()
        }
        match serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .as_ref()
            .and_then(|v| v["type"].as_str())
        {
            Some("subscribe") => reads::<Subscribe>(text),
            Some("unsubscribe") => reads::<Unsubscribe>(text),
            Some("ping") => reads::<Ping>(text),
            Some("replay") => reads::<Replay>(text),
            Some("replay_stop") => reads::<ReplayStop>(text),
            _ => false,
        }
    }

    #[test]
    fn the_session_reads_the_client_messages_the_description_gives_and_no_others() {
        let messages = [
            (
                r#"{"type":"subscribe","date":"2026-11-21","race_number":1,"since":5,"topics":["odds","status"]}"#,
                true,
            ),
            (
                r#"{"type":"subscribe","date":"2026-11-21","conflate_ms":1000}"#,
                true,
            ),
            (r#"{"type":"subscribe","date":"2026-11-21"}"#, true),
            (
                r#"{"type":"unsubscribe","date":"2026-11-21","race_number":2,"topics":["cards"]}"#,
                true,
            ),
            (r#"{"type":"ping"}"#, true),
            (
                r#"{"type":"replay","date":"2026-11-21","race_number":3,"speed":2.5}"#,
                true,
            ),
            (r#"{"type":"replay_stop"}"#, true),
            (
                r#"{"type":"subscribe","date":"2026-11-21","weather":true}"#,
                false,
            ),
            (
                r#"{"type":"unsubscribe","date":"2026-11-21","since":4}"#,
                false,
            ),
            (r#"{"type":"ping","seq":1}"#, false),
            (r#"{"type":"resume","date":"2026-11-21"}"#, false),
        ];
        for (text, valid) in messages {
            let read = serde_json::from_str::<ClientMessage>(text).is_ok();
            assert_eq!((read, described(text)), (valid, valid), "{text}");
        }
    }
}
