//! The keys a request may carry ([`KeyRing`]), kept in step with the registry, and where
//! each stands for the sessions that hold it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;

use super::digest::{hash, key_id, unhex, KeyId};
use super::record::{KeyLimits, KeyRecord};

/// Who a request's key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// Stable id for limits.
    pub id: KeyId,
    /// Its own limits, if any.
    pub limits: KeyLimits,
}

/// Why a key is not accepted now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Missing, unknown, revoked or expired: a 401.
    Unknown,
    /// A managed key while the registry has not been confirmed current for longer than
    /// allowed: it may have been revoked meanwhile, so it is refused for now (a 503), and
    /// accepted again once the registry is followed again.
    Unchecked,
}

/// Where a key stands, as the open sessions of the key follow it (see
/// [`KeyRing::standing`]): they close when it is no longer `Valid`, and look at its
/// limits again when they change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Accepted, with these limits.
    Valid(KeyLimits),
    /// Revoked.
    Revoked,
    /// Past the end of its grace period.
    Expired,
    /// Its record was deleted from the registry.
    Removed,
    /// A managed key while the registry is not confirmed current (see
    /// [`Refused::Unchecked`]): refused for now, valid again once it is.
    Unchecked,
}

impl Standing {
    /// Why a session of a key that stands so is closed; `None` while it is valid.
    pub fn ended(&self) -> Option<&'static str> {
        match self {
            Standing::Valid(_) => None,
            Standing::Revoked => Some("API key revoked"),
            Standing::Expired => Some("API key expired"),
            Standing::Removed => Some("API key removed"),
            Standing::Unchecked => Some("API key cannot be checked for revocation"),
        }
    }
}

struct Entry {
    /// `Some` for a managed key: its record id.
    managed: Option<String>,
    expires_at: Option<jiff::Timestamp>,
    limits: KeyLimits,
    /// Unix seconds of the last accepted request; 0 for never.
    last_used: AtomicI64,
    /// Followed by the key's open sessions.
    standing: watch::Sender<Standing>,
}

impl Entry {
    fn new(
        managed: Option<String>,
        expires_at: Option<jiff::Timestamp>,
        limits: KeyLimits,
    ) -> Self {
        Entry {
            managed,
            expires_at,
            limits,
            last_used: AtomicI64::new(0),
            standing: watch::channel(Standing::Valid(limits)).0,
        }
    }
}

/// The keys valid now, by hash, and the managed ones by record id.
#[derive(Default)]
struct Keys {
    by_hash: HashMap<[u8; 32], Entry>,
    /// The hash of each key held, by its id: the replicas' reports name keys by id.
    by_id: HashMap<KeyId, [u8; 32]>,
    managed: HashMap<String, [u8; 32]>,
    /// Last use of managed keys that left the ring since the last [`KeyRing::used_since`],
    /// so that a revoked key's last requests are still recorded.
    retired: Vec<(String, i64)>,
}

impl Keys {
    /// Takes a managed key out of the ring, telling its sessions why.
    fn retire(&mut self, id: &str, standing: Standing) {
        let Some(hash) = self.managed.remove(id) else {
            return;
        };
        self.by_id.remove(&key_id(&hash));
        if let Some(entry) = self.by_hash.remove(&hash) {
            entry.standing.send_replace(standing);
            let used = entry.last_used.load(Ordering::Relaxed);
            if used > 0 {
                self.retired.push((id.to_owned(), used));
            }
        }
    }
}

/// The keys a request may carry, shared by every handler and kept in step with the
/// registry. Only keys valid now are held: a revoked or expired key leaves the ring (its
/// record stays in the registry), and its open sessions are told (see [`Standing`]).
pub struct KeyRing {
    keys: RwLock<Keys>,
    /// Woken when an expiry is set or changed, for [`KeyRing::expire`].
    expiries: Notify,
    /// What [`KeyRing::managed_until`] counts from.
    epoch: Instant,
    /// Milliseconds after `epoch` until which managed keys are accepted: when the registry
    /// was last confirmed current, plus the staleness allowed. `u64::MAX` while no
    /// registry is followed (a ring filled by hand).
    managed_until: AtomicU64,
}

impl Default for KeyRing {
    fn default() -> Self {
        KeyRing::new([])
    }
}

impl KeyRing {
    /// A ring of configured keys.
    pub fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> Self {
        let by_hash: HashMap<[u8; 32], Entry> = keys
            .into_iter()
            .map(|k| (hash(k), Entry::new(None, None, KeyLimits::default())))
            .collect();
        let by_id = by_hash.keys().map(|h| (key_id(h), *h)).collect();
        KeyRing {
            keys: RwLock::new(Keys {
                by_hash,
                by_id,
                ..Keys::default()
            }),
            expiries: Notify::new(),
            epoch: Instant::now(),
            managed_until: AtomicU64::new(u64::MAX),
        }
    }

    fn millis_since_epoch(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u64::MAX)
    }

    /// Records that every record written to the registry before `at` is held here:
    /// managed keys are accepted until `stale_after` past it.
    pub fn confirm_current(&self, at: Instant, stale_after: Duration) {
        let stale_after = u64::try_from(stale_after.as_millis()).unwrap_or(u64::MAX);
        let until = self.millis_since_epoch(at).saturating_add(stale_after);
        self.managed_until.store(until, Ordering::Relaxed);
    }

    /// Whether managed keys are refused now, the registry not confirmed current for
    /// longer than allowed.
    pub fn unchecked(&self) -> bool {
        self.millis_since_epoch(Instant::now()) >= self.managed_until.load(Ordering::Relaxed)
    }

    /// Tells the sessions of managed keys that their keys are refused for now
    /// (`unchecked`), or valid again: a session must not outlive a revocation it cannot
    /// hear of.
    pub fn tell_unchecked(&self, unchecked: bool) {
        let keys = self.read();
        for entry in keys.by_hash.values().filter(|e| e.managed.is_some()) {
            let standing = match unchecked {
                true => Standing::Unchecked,
                false => Standing::Valid(entry.limits),
            };
            entry.standing.send_if_modified(|s| {
                let changed = *s != standing;
                *s = standing;
                changed
            });
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Keys> {
        self.keys.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Keys> {
        self.keys.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Whose key `key` is, if it is valid now; a missing, unknown, revoked or expired key
    /// all give [`Refused::Unknown`], a managed key while the registry is not confirmed
    /// current [`Refused::Unchecked`].
    ///
    /// The key is found by its SHA-256 in a hash map, not by comparing it with each key
    /// held: the time the look-up takes depends only on the hash of what was presented,
    /// and since SHA-256 is one-way, a caller cannot choose keys whose hashes come near a
    /// held one, so timing tells nothing about the keys held (which constant-time
    /// compares were for).
    pub fn identify(&self, key: Option<&str>) -> Result<Identity, Refused> {
        let presented = hash(key.ok_or(Refused::Unknown)?);
        let keys = self.read();
        let entry = keys.by_hash.get(&presented).ok_or(Refused::Unknown)?;
        let now = jiff::Timestamp::now();
        // Between its expiry and the sweep of [`KeyRing::expire`].
        if entry.expires_at.is_some_and(|t| t <= now) {
            return Err(Refused::Unknown);
        }
        if entry.managed.is_some() && self.unchecked() {
            return Err(Refused::Unchecked);
        }
        // Written once a second at most: a store on every request made the line that
        // holds it bounce between the cores serving the key.
        let second = now.as_second();
        if entry.last_used.load(Ordering::Relaxed) != second {
            entry.last_used.store(second, Ordering::Relaxed);
        }
        Ok(Identity {
            id: key_id(&presented),
            limits: entry.limits,
        })
    }

    /// Whether `key` is accepted now.
    pub fn accepts(&self, key: Option<&str>) -> bool {
        self.identify(key).is_ok()
    }

    /// Follows where the key `id` stands, for a session of it; `None` if it is no longer
    /// held.
    pub fn standing(&self, id: KeyId) -> Option<watch::Receiver<Standing>> {
        let keys = self.read();
        let hash = keys.by_id.get(&id)?;
        keys.by_hash.get(hash).map(|e| e.standing.subscribe())
    }

    /// The limits of the key `id`, if it is held: what another replica's report of its
    /// use is charged against.
    pub fn limits_of(&self, id: KeyId) -> Option<KeyLimits> {
        let keys = self.read();
        let hash = keys.by_id.get(&id)?;
        keys.by_hash.get(hash).map(|e| e.limits)
    }

    /// The record id of the managed key `id`; `None` for a configured key (or one gone).
    pub fn record_id(&self, id: KeyId) -> Option<String> {
        let keys = self.read();
        let hash = keys.by_id.get(&id)?;
        keys.by_hash.get(hash)?.managed.clone()
    }

    /// Adds, changes or (once revoked or expired) drops a managed key from its record.
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
        let mut keys = self.write();
        if record.revoked_at.is_some() {
            keys.retire(&record.id, Standing::Revoked);
            return;
        }
        if expires_at.is_some_and(|t| t <= jiff::Timestamp::now()) {
            keys.retire(&record.id, Standing::Expired);
            return;
        }
        if keys.managed.get(&record.id).is_some_and(|h| *h != hash) {
            keys.retire(&record.id, Standing::Removed);
        }
        if !keys.by_hash.contains_key(&hash) {
            keys.managed.insert(record.id.clone(), hash);
            keys.by_id.insert(key_id(&hash), hash);
        }
        let entry = keys
            .by_hash
            .entry(hash)
            .or_insert_with(|| Entry::new(Some(record.id.clone()), None, record.limits));
        let expiry_changed = entry.expires_at != expires_at;
        entry.expires_at = expires_at;
        entry.limits = record.limits;
        let standing = Standing::Valid(record.limits);
        entry.standing.send_if_modified(|s| {
            let changed = *s != standing;
            *s = standing;
            changed
        });
        drop(keys);
        if expiry_changed {
            self.expiries.notify_one();
        }
    }

    /// Forgets a managed key whose record was deleted.
    pub fn remove(&self, id: &str) {
        self.write().retire(id, Standing::Removed);
    }

    /// Drops the keys whose grace period has ended by `now`, telling their sessions;
    /// returns the next expiry of a key still held.
    fn expire_due(&self, now: jiff::Timestamp) -> Option<jiff::Timestamp> {
        let mut keys = self.write();
        let due: Vec<String> = keys
            .by_hash
            .values()
            .filter(|e| e.expires_at.is_some_and(|t| t <= now))
            .filter_map(|e| e.managed.clone())
            .collect();
        for id in due {
            keys.retire(&id, Standing::Expired);
        }
        keys.by_hash.values().filter_map(|e| e.expires_at).min()
    }

    /// Ends keys at the end of their grace periods until `shutdown`: no registry event
    /// fires then, and a session must not outlive its key. A rotation that sets or
    /// shortens an expiry wakes it to look again.
    pub async fn expire(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            let next = self.expire_due(jiff::Timestamp::now());
            let wait = next.map(|t| {
                let left = t.duration_since(jiff::Timestamp::now());
                Duration::try_from(left).unwrap_or(Duration::ZERO)
            });
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = self.expiries.notified() => {}
                _ = tokio::time::sleep(wait.unwrap_or(Duration::MAX)), if wait.is_some() => {}
            }
        }
    }

    /// Managed keys used since `since` (unix seconds): `(record id, last use)`, those
    /// that left the ring since the last call included.
    pub fn used_since(&self, since: i64) -> Vec<(String, i64)> {
        let mut keys = self.write();
        let mut used = std::mem::take(&mut keys.retired);
        used.retain(|(_, t)| *t > since);
        used.extend(keys.by_hash.values().filter_map(|e| {
            let t = e.last_used.load(Ordering::Relaxed);
            (t > since)
                .then(|| e.managed.clone().map(|id| (id, t)))
                .flatten()
        }));
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::record::generate;

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
        let id = ring.identify(Some(&key)).expect("held").id;
        assert_eq!(ring.limits_of(id), Some(record.limits), "found by its id");

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
        assert_eq!(ring.limits_of(id), None, "no longer found by its id");
        ring.remove(&record.id);
        assert!(!ring.accepts(Some(&key)));
    }

    #[test]
    fn managed_keys_are_refused_while_the_registry_is_unconfirmed_and_configured_keys_go_on() {
        let (key, record) = generate("acme", KeyLimits::default(), jiff::Timestamp::now());
        let ring = KeyRing::new(["configured"]);
        ring.upsert(&record);
        assert!(
            ring.accepts(Some(&key)),
            "no registry followed: nothing to confirm"
        );
        let stale_after = Duration::from_secs(60);
        ring.confirm_current(Instant::now(), stale_after);
        assert!(ring.accepts(Some(&key)) && !ring.unchecked());

        let id = ring.identify(Some(&key)).map(|i| i.id).expect("held");
        let mut standing = ring.standing(id).expect("held");
        let configured = ring
            .standing(
                ring.identify(Some("configured"))
                    .map(|i| i.id)
                    .expect("held"),
            )
            .expect("held");
        ring.confirm_current(ring.epoch, Duration::ZERO);
        assert!(ring.unchecked());
        ring.tell_unchecked(true);
        assert_eq!(*standing.borrow_and_update(), Standing::Unchecked);
        assert!(
            !configured.has_changed().unwrap_or(true),
            "configured keys go on"
        );
        assert_eq!(
            ring.identify(Some(&key)).map(|i| i.id),
            Err(Refused::Unchecked)
        );
        assert!(ring.accepts(Some("configured")));
        assert_eq!(ring.identify(Some("unknown")), Err(Refused::Unknown));

        ring.confirm_current(Instant::now(), stale_after);
        assert!(ring.accepts(Some(&key)), "confirmed again");
        ring.tell_unchecked(false);
        assert_eq!(
            *standing.borrow_and_update(),
            Standing::Valid(record.limits)
        );
        assert!(!configured.has_changed().unwrap_or(true));
    }

    #[test]
    fn sessions_hear_of_a_change_of_limits_and_of_revocation() {
        let now = jiff::Timestamp::now();
        let (key, mut record) = generate("acme", KeyLimits::default(), now);
        let ring = KeyRing::default();
        ring.upsert(&record);
        let id = ring.identify(Some(&key)).map(|i| i.id).expect("held");
        let mut standing = ring.standing(id).expect("held");
        assert_eq!(
            *standing.borrow_and_update(),
            Standing::Valid(KeyLimits::default())
        );

        ring.upsert(&record);
        assert!(!standing.has_changed().unwrap_or(true), "nothing changed");
        record.limits.max_connections = Some(1);
        ring.upsert(&record);
        assert_eq!(
            *standing.borrow_and_update(),
            Standing::Valid(record.limits)
        );

        record.revoked_at = Some(now.to_string());
        ring.upsert(&record);
        assert_eq!(*standing.borrow_and_update(), Standing::Revoked);
        assert!(ring.standing(id).is_none() && ring.read().managed.is_empty());
        assert!(!ring.accepts(Some(&key)));
    }

    #[test]
    fn an_expired_key_leaves_the_ring_and_its_last_use_is_kept() {
        let now = jiff::Timestamp::now();
        let (key, mut record) = generate("acme", KeyLimits::default(), now);
        let ring = KeyRing::default();
        let later = now + jiff::SignedDuration::from_secs(60);
        record.expires_at = Some(later.to_string());
        ring.upsert(&record);
        assert!(ring.accepts(Some(&key)));
        let id = ring.identify(Some(&key)).map(|i| i.id).expect("held");
        let standing = ring.standing(id).expect("held");
        assert_eq!(ring.expire_due(now), Some(later), "the next expiry");
        assert_eq!(ring.expire_due(later), None, "none left");
        assert_eq!(*standing.borrow(), Standing::Expired);
        assert!(ring.read().by_hash.is_empty());
        assert_eq!(ring.used_since(0).len(), 1, "its last use is still written");
        assert!(ring.used_since(0).is_empty(), "once");
    }
}
