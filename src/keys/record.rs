//! A managed key as the registry stores it (everything but the key), the limits a key may
//! set for itself, and fresh keys.

use serde::{Deserialize, Serialize};

use super::digest::{hash, hex};

/// Limits a key may set for itself; `None` takes the service's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyLimits {
    /// Sustained requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_sec: Option<u32>,
    /// Requests allowed in a burst.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// Open live odds connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<usize>,
    /// Webhook endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_webhooks: Option<usize>,
}

/// A managed key as stored in the registry: everything but the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// The visible part after `rk_`, also the record's name in the bucket.
    pub id: String,
    /// Who the key is for.
    pub name: String,
    /// SHA-256 of the whole key, hex.
    pub hash: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339, once revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// RFC 3339: after a rotation, the end of the old key's grace period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Per-key limits.
    #[serde(default)]
    pub limits: KeyLimits,
    /// For a key a subscriber got on the pricing page: the address it was sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscriber: Option<String>,
    /// For a subscriber's key: the plan's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

impl KeyRecord {
    /// The prefix shown for support: `rk_` and the id.
    pub fn prefix(&self) -> String {
        format!("{PREFIX}{}", self.id)
    }

    /// `active`, `revoked`, `expired`, or `expires <time>`.
    pub fn state(&self, now: jiff::Timestamp) -> String {
        if self.revoked_at.is_some() {
            return "revoked".into();
        }
        match self
            .expires_at
            .as_deref()
            .map(str::parse::<jiff::Timestamp>)
        {
            Some(Ok(t)) if t <= now => "expired".into(),
            Some(Ok(t)) => format!("expires {}", racing_events::Instant::text(t)),
            Some(Err(_)) => "expired".into(),
            None => "active".into(),
        }
    }
}

/// Every managed key starts with this.
pub const PREFIX: &str = "rk_";

/// A fresh managed key and its record: 32 random bits of visible id and 128 random bits
/// of secret, from the operating system's generator.
pub fn generate(name: &str, limits: KeyLimits, now: jiff::Timestamp) -> (String, KeyRecord) {
    let id = format!("{:08x}", rand::random::<u32>());
    let key = format!("{PREFIX}{id}_{:032x}", rand::random::<u128>());
    let record = KeyRecord {
        id,
        name: name.to_owned(),
        hash: hex(&hash(&key)),
        created_at: racing_events::Instant::text(now),
        revoked_at: None,
        expires_at: None,
        limits,
        subscriber: None,
        plan: None,
    };
    (key, record)
}

/// A fresh random key for demo mode, 128 bits, with a visible prefix.
pub fn generate_demo() -> String {
    format!("demo_{:032x}", rand::random::<u128>())
}
