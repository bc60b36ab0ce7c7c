//! A webhook endpoint as its bucket keeps it, and what is owed to it: the endpoint's
//! record (its owner's key, URL, topics, secrets, whether it is disabled), written by the
//! API; its delivery state (the position delivered up to, the delivery under way with its
//! retries, the recent attempts), written by the replica that sends. Both are account
//! configuration beside the log, never read models.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::sign::Secret;
use crate::keys::digest::KeyId;
use crate::live::session::topics::Topics;

/// Attempts a delivery state keeps, newest last.
pub const RECENT: usize = 50;

/// How long an endpoint's previous secret still signs after a rotation, in seconds.
pub const ROTATION_GRACE_SECS: i64 = 24 * 3600;

/// The topics an endpoint may follow: the race day's, not odds or the market (those are
/// the socket's and the event stream's).
pub const OFFERED: [&str; 4] = ["results", "status", "scratchings", "cards"];

/// One endpoint of a key's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// `ep_` and 16 hex digits.
    pub id: String,
    /// The key that owns it: [`owner`] of its id.
    pub owner: String,
    /// For a managed key, its record's id: whom to tell by mail when it is disabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Where deliveries go.
    pub url: String,
    /// What it follows, as given (each one of [`OFFERED`]).
    pub topics: Vec<String>,
    /// Only this date's events, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Its secrets, the one in use first, then one a rotation replaced while it still
    /// signs.
    pub secrets: Vec<StoredSecret>,
    /// RFC 3339.
    pub created_at: String,
    /// The log's position when it was made: events after it are delivered.
    pub from_seq: u64,
    /// Set when it stops being sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<Disabled>,
    /// The latest replay asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayAsked>,
}

/// A secret with, once a rotation replaced it, the end of the time it still signs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredSecret {
    /// `whsec_...`.
    pub secret: String,
    /// Unix seconds after which it no longer signs; none for the one in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<i64>,
}

/// Why and when an endpoint was disabled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disabled {
    /// RFC 3339.
    pub at: String,
    /// In words.
    pub reason: String,
}

/// A replay asked for: send again every event after `since`. `n` counts the asks, so
/// that the sender applies each once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayAsked {
    /// The position to send again from.
    pub since: u64,
    /// Which ask it is.
    pub n: u64,
}

/// The owner part of a key's endpoints' names: its id in hex.
pub fn owner(key: KeyId) -> String {
    format!("{:016x}", key.0)
}

/// The name of an endpoint's records in both buckets: its owner, then its id.
pub fn record_key(owner: &str, id: &str) -> String {
    format!("{owner}.{id}")
}

/// A new endpoint id.
pub fn new_id() -> String {
    format!("ep_{:016x}", rand::random::<u64>())
}

/// Whether `id` is an endpoint id's shape (so that it may name a record).
pub fn is_id(id: &str) -> bool {
    id.strip_prefix("ep_")
        .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The topics named, checked: at least one, each offered.
pub(crate) fn topics(names: &[String]) -> Result<Topics, String> {
    if let Some(odd) = names.iter().find(|n| !OFFERED.contains(&n.as_str())) {
        let odd = racing_events::clip(odd, 32);
        let why = match odd.as_str() {
            "odds" | "market" => format!(
                "`{odd}` is not offered by webhooks: prices move many times a second; \
                 follow them on the live socket or the event stream (GET /api/v1/live)"
            ),
            _ => format!("`{odd}` is not a topic"),
        };
        return Err(format!("topics: {why}; they are {}", OFFERED.join(", ")));
    }
    Topics::parse(Some(names))
}

impl Endpoint {
    /// The secrets that sign a delivery made at `now` (Unix seconds).
    pub fn signing(&self, now: i64) -> Vec<Secret> {
        self.secrets
            .iter()
            .filter(|s| s.until.is_none_or(|until| now < until))
            .filter_map(|s| Secret::parse(&s.secret))
            .collect()
    }

    /// What it follows; `None` for topics no longer offered (a record from a later
    /// version), which are then sent nothing.
    pub(crate) fn followed(&self) -> Option<Topics> {
        topics(&self.topics).ok()
    }

    /// Its key in the buckets.
    pub fn record_key(&self) -> String {
        record_key(&self.owner, &self.id)
    }
}

/// What is owed to an endpoint, as the sending replica keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeliveryState {
    /// Every event up to this position is done: delivered, or not one the endpoint
    /// follows.
    pub position: u64,
    /// The delivery under way, with its retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// The recent attempts, newest last.
    #[serde(default)]
    pub recent: VecDeque<Attempt>,
    /// The last replay ask applied ([`ReplayAsked::n`]).
    #[serde(default)]
    pub replayed: u64,
}

/// A delivery under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The event's position.
    pub seq: u64,
    /// Its date, where its journal record is.
    pub date: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the next is due, Unix milliseconds.
    pub next_at: i64,
}

/// One attempt, as `GET /api/v1/webhooks/{id}/deliveries` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = WebhookAttempt)]
pub struct Attempt {
    /// The event's position.
    pub seq: u64,
    /// The delivery's `webhook-id`.
    pub webhook_id: String,
    /// The payload's `type`.
    pub r#type: String,
    /// Which attempt of the delivery it was, from 1.
    pub attempt: u32,
    /// When it was made, RFC 3339.
    #[schema(format = DateTime)]
    pub at: String,
    /// `delivered`, `failed` (another attempt follows) or `given_up` (the endpoint was
    /// disabled).
    pub status: String,
    /// The receiver's status code, if it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub response_code: Option<u16>,
    /// Why it failed without an answer, or the start of a failed answer's body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error: Option<String>,
    /// When the next attempt is due, RFC 3339, after a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, nullable = false)]
    pub next_attempt_at: Option<String>,
    /// How long it took, milliseconds.
    pub duration_ms: u64,
}

impl DeliveryState {
    /// A state that starts after `position`.
    pub fn from(position: u64) -> DeliveryState {
        DeliveryState {
            position,
            ..DeliveryState::default()
        }
    }

    /// Notes an attempt, keeping the newest [`RECENT`].
    pub fn note(&mut self, attempt: Attempt) {
        while self.recent.len() >= RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(attempt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_follows_race_day_topics_only() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(topics(&names(&["results", "status"])).is_ok());
        for refused in [&["odds"][..], &["market"], &["results", "weather"], &[]] {
            assert!(topics(&names(refused)).is_err(), "{refused:?}");
        }
        let why = topics(&names(&["odds"])).expect_err("odds refused");
        assert!(why.contains("/api/v1/live"), "{why}");
    }

    #[test]
    fn a_rotated_secret_signs_until_its_grace_ends() {
        let (new, old) = (Secret::generate(), Secret::generate());
        let endpoint = Endpoint {
            id: new_id(),
            owner: owner(KeyId(7)),
            key: None,
            url: "https://example.com/".into(),
            topics: vec!["results".into()],
            date: None,
            secrets: vec![
                StoredSecret {
                    secret: new.text(),
                    until: None,
                },
                StoredSecret {
                    secret: old.text(),
                    until: Some(1_000),
                },
            ],
            created_at: "2026-11-21T00:00:00Z".into(),
            from_seq: 0,
            disabled: None,
            replay: None,
        };
        assert_eq!(endpoint.signing(999), [new.clone(), old]);
        assert_eq!(endpoint.signing(1_000), [new]);
        assert!(is_id(&endpoint.id));
        assert!(!is_id("ep_zz") && !is_id("../x"));
    }

    #[test]
    fn a_state_keeps_the_newest_attempts() {
        let mut state = DeliveryState::from(3);
        for seq in 0..(RECENT as u64 + 5) {
            state.note(Attempt {
                seq,
                webhook_id: String::new(),
                r#type: "result".into(),
                attempt: 1,
                at: String::new(),
                status: "delivered".into(),
                response_code: Some(200),
                error: None,
                next_attempt_at: None,
                duration_ms: 1,
            });
        }
        assert_eq!(state.recent.len(), RECENT);
        assert_eq!(state.recent.front().map(|a| a.seq), Some(5));
    }
}
