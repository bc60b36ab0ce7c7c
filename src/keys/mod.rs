//! API keys as the service holds them: SHA-256 hashes only, compared in constant time, so a
//! key is neither kept in plain text nor guessable from response timing.
//!
//! Two kinds live in one [`KeyRing`]: keys from configuration (`RACING_API_KEYS`, the demo
//! key) and managed keys, issued by `racing keys` into a JetStream key-value bucket that
//! every replica follows (see [`registry`]).

pub mod registry;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::RwLock;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

/// The stable identity of a key for per-key limits and usage: the first 8 bytes of its
/// hash, the same on every replica. Never the key itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId(pub u64);

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
            Some(Ok(t)) => format!("expires {t}"),
            Some(Err(_)) => "expired".into(),
            None => "active".into(),
        }
    }
}

/// Every managed key starts with this.
pub const PREFIX: &str = "rk_";

/// SHA-256 of a key.
pub fn hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// A fresh managed key and its record: 32 random bits of visible id and 128 random bits
/// of secret, from the operating system's generator.
pub fn generate(name: &str, limits: KeyLimits, now: jiff::Timestamp) -> (String, KeyRecord) {
    let id = format!("{:08x}", rand::random::<u32>());
    let key = format!("{PREFIX}{id}_{:032x}", rand::random::<u128>());
    let record = KeyRecord {
        id,
        name: name.to_owned(),
        hash: hex(&hash(&key)),
        created_at: now.to_string(),
        revoked_at: None,
        expires_at: None,
        limits,
    };
    (key, record)
}

/// A fresh random key for demo mode, 128 bits, with a visible prefix.
pub fn generate_demo() -> String {
    format!("demo_{:032x}", rand::random::<u128>())
}

/// Who a request's key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// Stable id for limits.
    pub id: KeyId,
    /// Its own limits, if any.
    pub limits: KeyLimits,
}

struct Entry {
    hash: [u8; 32],
    /// `Some` for a managed key: its record id.
    managed: Option<String>,
    revoked: bool,
    expires_at: Option<jiff::Timestamp>,
    limits: KeyLimits,
    /// Unix seconds of the last accepted request; 0 for never.
    last_used: AtomicI64,
}

impl Entry {
    fn id(&self) -> KeyId {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.hash[..8]);
        KeyId(u64::from_be_bytes(first))
    }
}

/// The keys a request may carry, shared by every handler and kept in step with the
/// registry.
#[derive(Default)]
pub struct KeyRing {
    entries: RwLock<Vec<Entry>>,
}

impl KeyRing {
    /// A ring of configured keys.
    pub fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> Self {
        let entries = keys
            .into_iter()
            .map(|k| Entry {
                hash: hash(k),
                managed: None,
                revoked: false,
                expires_at: None,
                limits: KeyLimits::default(),
                last_used: AtomicI64::new(0),
            })
            .collect();
        KeyRing {
            entries: RwLock::new(entries),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Entry>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Entry>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Whose key `key` is, if it is valid now. Every stored hash is compared, whatever
    /// matches, so the time taken does not tell which key or how much of it matched; a
    /// missing, unknown, revoked or expired key all give `None`.
    pub fn identify(&self, key: Option<&str>) -> Option<Identity> {
        let presented = hash(key?);
        let entries = self.read();
        let mut found = subtle::CtOption::new(0u64, subtle::Choice::from(0));
        for (i, e) in entries.iter().enumerate() {
            let candidate = subtle::CtOption::new(i as u64, e.hash.ct_eq(&presented));
            found = ConditionallySelectable::conditional_select(
                &found,
                &candidate,
                candidate.is_some(),
            );
        }
        let entry = entries.get(usize::try_from(Option::<u64>::from(found)?).ok()?)?;
        let now = jiff::Timestamp::now();
        if entry.revoked || entry.expires_at.is_some_and(|t| t <= now) {
            return None;
        }
        // Written once a second at most: a store on every request made the line that
        // holds it bounce between the cores serving the key.
        let second = now.as_second();
        if entry.last_used.load(Ordering::Relaxed) != second {
            entry.last_used.store(second, Ordering::Relaxed);
        }
        Some(Identity {
            id: entry.id(),
            limits: entry.limits,
        })
    }

    /// Whether `key` is valid now.
    pub fn accepts(&self, key: Option<&str>) -> bool {
        self.identify(key).is_some()
    }

    /// Adds or replaces a managed key from its record.
    pub fn upsert(&self, record: &KeyRecord) {
        let Some(hash) = unhex(&record.hash) else {
            tracing::warn!(key = %record.prefix(), "key record with a malformed hash ignored");
            return;
        };
        let expires_at = match record.expires_at.as_deref().map(str::parse) {
            None => None,
            Some(Ok(t)) => Some(t),
            // An unreadable expiry fails closed.
            Some(Err(_)) => Some(jiff::Timestamp::UNIX_EPOCH),
        };
        let entry = Entry {
            hash,
            managed: Some(record.id.clone()),
            revoked: record.revoked_at.is_some(),
            expires_at,
            limits: record.limits,
            last_used: AtomicI64::new(0),
        };
        let mut entries = self.write();
        match entries
            .iter_mut()
            .find(|e| e.managed.as_deref() == Some(record.id.as_str()))
        {
            Some(e) => {
                entry
                    .last_used
                    .store(e.last_used.load(Ordering::Relaxed), Ordering::Relaxed);
                *e = entry;
            }
            None => entries.push(entry),
        }
    }

    /// Forgets a managed key.
    pub fn remove(&self, id: &str) {
        self.write().retain(|e| e.managed.as_deref() != Some(id));
    }

    /// Managed keys used since `since` (unix seconds): `(record id, last use)`.
    pub fn used_since(&self, since: i64) -> Vec<(String, i64)> {
        self.read()
            .iter()
            .filter_map(|e| {
                let t = e.last_used.load(Ordering::Relaxed);
                (t > since)
                    .then(|| e.managed.clone().map(|id| (id, t)))
                    .flatten()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_held_keys_are_accepted() {
        let keys = KeyRing::new(["alpha", "beta"]);
        assert!(keys.accepts(Some("alpha")) && keys.accepts(Some("beta")));
        for bad in [None, Some(""), Some("alph"), Some("alpha "), Some("ALPHA")] {
            assert!(!keys.accepts(bad), "{bad:?}");
        }
        assert!(!KeyRing::default().accepts(Some("")));
        let a = keys.identify(Some("alpha")).map(|i| i.id);
        assert_eq!(
            a,
            KeyRing::new(["alpha"])
                .identify(Some("alpha"))
                .map(|i| i.id)
        );
        assert_ne!(a, keys.identify(Some("beta")).map(|i| i.id));
    }

    #[test]
    fn managed_keys_are_refused_once_revoked_or_expired() {
        let now = jiff::Timestamp::now();
        let (key, mut record) = generate("acme", KeyLimits::default(), now);
        assert!(key.starts_with(&record.prefix()) && key.len() == 3 + 8 + 1 + 32);
        let ring = KeyRing::default();
        ring.upsert(&record);
        assert!(ring.accepts(Some(&key)));
        assert_eq!(ring.used_since(0).len(), 1);

        record.expires_at = Some((now + jiff::SignedDuration::from_secs(60)).to_string());
        ring.upsert(&record);
        assert!(ring.accepts(Some(&key)), "inside its grace period");
        record.expires_at = Some((now - jiff::SignedDuration::from_secs(1)).to_string());
        ring.upsert(&record);
        assert!(!ring.accepts(Some(&key)), "expired");
        assert_eq!(record.state(now), "expired");

        record.expires_at = None;
        record.revoked_at = Some(now.to_string());
        ring.upsert(&record);
        assert!(!ring.accepts(Some(&key)), "revoked");
        ring.remove(&record.id);
        assert!(!ring.accepts(Some(&key)));
    }
}
