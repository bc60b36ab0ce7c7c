//! Managed keys in NATS: a JetStream key-value bucket holds one record per key (never the
//! key), and every replica watches it, so a key created, rotated or revoked on any machine
//! takes effect on every replica in well under a second. A key-value bucket rather than a
//! stream of key events because a key's state is its latest record: the bucket keeps
//! exactly that, a watch delivers the current records then each change, and nothing has
//! to be folded. A replica that loses NATS keeps the keys it last saw, for a while.
//!
//! A watch says nothing while nothing changes, so its silence cannot tell a quiet registry
//! from a lost one. Each replica therefore asks the bucket's stream for its last sequence
//! every quarter of the allowed staleness: once the watch has delivered up to the sequence
//! an answer named, every record written before that question is held here, and the ring
//! is confirmed current as of when it was asked ([`KeyRing::confirm_current`]). With NATS
//! gone, or a watch that stopped delivering, no confirmation comes, and once the last is
//! older than the allowed staleness managed keys are refused until one does.
//!
//! Last use is kept in memory on each replica and written every few seconds to a second
//! bucket, so `racing keys list` can show it without a write per request.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use async_nats::jetstream::{self, kv};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::record::{generate, KeyLimits, KeyRecord};
use super::ring::KeyRing;
use crate::nats::buckets;

/// How often each replica writes last-use times.
const USAGE_FLUSH: Duration = Duration::from_secs(5);
/// How long a replica may go without confirming the registry current before it refuses
/// managed keys, unless configured otherwise: long enough to ride out a NATS restart or a
/// leader election, short enough that a revoked key is not used for long.
pub const STALE_AFTER: Duration = Duration::from_secs(180);
/// Questions of the registry's last sequence kept until the watch delivers up to it: a
/// watch this far behind is confirmed by the newer ones alone.
const ASKED: usize = 8;

/// The buckets of a stream's keys.
#[derive(Clone)]
pub struct Registry {
    keys: kv::Store,
    usage: kv::Store,
}

/// How many ids a new key draws before giving up: a collision of 32-bit ids is rare
/// (about one in 43,000 at 10,000 keys), several in a row mean something else is wrong.
const ID_DRAWS: usize = 8;

impl Registry {
    /// Opens the buckets `{stream}_KEYS` and `{stream}_KEY_USAGE`, which the set-up
    /// made: what the service and `racing keys` both do, neither of which may make them.
    pub async fn open(js: &jetstream::Context, stream: &str) -> anyhow::Result<Registry> {
        Ok(Registry {
            keys: buckets::KEYS.open(js, stream).await?,
            usage: buckets::KEY_USAGE.open(js, stream).await?,
        })
    }

    /// Writes a changed record over the revision it was read at: a change made meanwhile
    /// (a revocation while a rotation was under way) is never overwritten.
    async fn update(&self, record: &KeyRecord, revision: u64) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec(record)?;
        self.keys
            .update(&record.id, bytes.into(), revision)
            .await
            .with_context(|| format!("{} changed meanwhile; try again", record.prefix()))?;
        Ok(())
    }

    /// Issues a key; the returned string is the only copy of it.
    pub async fn create(
        &self,
        name: &str,
        limits: KeyLimits,
    ) -> anyhow::Result<(String, KeyRecord)> {
        self.create_with(name, limits, generate).await
    }

    /// Issues a key of a subscriber's `plan`, recording the address it goes to.
    pub async fn create_for(
        &self,
        name: &str,
        limits: KeyLimits,
        subscriber: &str,
        plan: &str,
    ) -> anyhow::Result<(String, KeyRecord)> {
        self.create_with(name, limits, |name, limits, now| {
            let (key, mut record) = generate(name, limits, now);
            record.subscriber = Some(subscriber.to_owned());
            record.plan = Some(plan.to_owned());
            (key, record)
        })
        .await
    }

    /// Issues a key like the key `id`: its name, limits, subscriber and plan; `id` itself
    /// is left as it is. A revoked key is refused, as [`Registry::rotate`] refuses it: a
    /// revocation is undone by [`Registry::unrevoke`] alone, never by a key like it.
    pub async fn issue_like(&self, id: &str) -> anyhow::Result<(String, KeyRecord)> {
        let (old, _) = self.entry(id).await?;
        if old.revoked_at.is_some() {
            bail!("{} is revoked; no key like it is issued", old.prefix());
        }
        self.create_like(&old).await
    }

    /// Retires a key that another replaced: revoked at once without `grace`, else
    /// expiring once `grace` is over (never later than an expiry it has already).
    /// Returns whether it may still work, in its grace period; a key with no record
    /// counts as retired.
    pub async fn retire(&self, id: &str, grace: Option<Duration>) -> anyhow::Result<bool> {
        let bare = id.trim().trim_start_matches(super::record::PREFIX);
        match self.keys.entry(bare).await? {
            Some(entry) if entry.operation == kv::Operation::Put => {}
            _ => return Ok(false),
        }
        let record = match grace {
            None => self.revoke(id).await?,
            Some(grace) => self.expire_after(id, grace).await?,
        };
        let state = record.state(jiff::Timestamp::now());
        Ok(!matches!(state.as_str(), "revoked" | "expired"))
    }

    /// Issues a key like `old`: its name, limits, subscriber and plan.
    async fn create_like(&self, old: &KeyRecord) -> anyhow::Result<(String, KeyRecord)> {
        match (&old.subscriber, &old.plan) {
            (Some(subscriber), Some(plan)) => {
                self.create_for(&old.name, old.limits, subscriber, plan)
                    .await
            }
            _ => self.create(&old.name, old.limits).await,
        }
    }

    /// Issues a key drawn by `draw` (as [`generate`] does), written only if no record has
    /// its id: on a collision another is drawn, so an existing key is never overwritten.
    /// (`draw` is a parameter so that the collision can be tested.)
    pub async fn create_with(
        &self,
        name: &str,
        limits: KeyLimits,
        mut draw: impl FnMut(&str, KeyLimits, jiff::Timestamp) -> (String, KeyRecord),
    ) -> anyhow::Result<(String, KeyRecord)> {
        if name.trim().is_empty() {
            bail!("a key needs a name");
        }
        for _ in 0..ID_DRAWS {
            let (key, record) = draw(name, limits, jiff::Timestamp::now());
            let bytes = serde_json::to_vec(&record)?;
            match self.keys.create(&record.id, bytes.into()).await {
                Ok(_) => return Ok((key, record)),
                Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                    tracing::info!(key = %record.prefix(), "key id taken; drawing another");
                }
                Err(e) => return Err(e.into()),
            }
        }
        bail!("{ID_DRAWS} key ids drawn were all taken")
    }

    /// One record and its revision, by id (`rk_` prefix optional).
    async fn entry(&self, id: &str) -> anyhow::Result<(KeyRecord, u64)> {
        let id = id.trim().trim_start_matches(super::record::PREFIX);
        match self.keys.entry(id).await? {
            Some(entry) if entry.operation == kv::Operation::Put => {
                Ok((serde_json::from_slice(&entry.value)?, entry.revision))
            }
            _ => bail!("no key rk_{id}"),
        }
    }

    /// One record, by id (`rk_` prefix optional).
    pub async fn get(&self, id: &str) -> anyhow::Result<KeyRecord> {
        Ok(self.entry(id).await?.0)
    }

    /// Sets a key's own limits; its open sessions and its rate follow at once, on every
    /// replica.
    pub async fn set_limits(&self, id: &str, limits: KeyLimits) -> anyhow::Result<KeyRecord> {
        let (mut record, revision) = self.entry(id).await?;
        record.limits = limits;
        self.update(&record, revision).await?;
        Ok(record)
    }

    /// The records of the keys valid now (those in a grace period included), or with
    /// `all` every record, revoked and expired ones too; each with its last use where
    /// known.
    pub async fn list(&self, all: bool) -> anyhow::Result<Vec<(KeyRecord, Option<String>)>> {
        let now = jiff::Timestamp::now();
        let mut ids: Vec<String> = match self.keys.keys().await {
            Ok(keys) => keys.filter_map(|k| async { k.ok() }).collect().await,
            Err(e) => return Err(e.into()),
        };
        ids.sort();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let Some(bytes) = self.keys.get(&id).await? else {
                continue;
            };
            let record: KeyRecord = serde_json::from_slice(&bytes)?;
            if !all && matches!(record.state(now).as_str(), "revoked" | "expired") {
                continue;
            }
            let used = self
                .usage
                .get(&id)
                .await?
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            out.push((record, used));
        }
        Ok(out)
    }

    /// Revokes a key at once, on every replica.
    pub async fn revoke(&self, id: &str) -> anyhow::Result<KeyRecord> {
        let (mut record, revision) = self.entry(id).await?;
        if record.revoked_at.is_none() {
            record.revoked_at = Some(racing_events::Instant::now());
            self.update(&record, revision).await?;
        }
        Ok(record)
    }

    /// Lets a revoked key work again, on every replica: the only way back from
    /// [`Registry::revoke`]. An expiry it had stands.
    pub async fn unrevoke(&self, id: &str) -> anyhow::Result<KeyRecord> {
        let (mut record, revision) = self.entry(id).await?;
        if record.revoked_at.is_some() {
            record.revoked_at = None;
            self.update(&record, revision).await?;
        }
        Ok(record)
    }

    /// Issues a new key with the same name, limits and subscriber, and lets the old one work for
    /// `grace` more before it expires.
    pub async fn rotate(
        &self,
        id: &str,
        grace: Duration,
    ) -> anyhow::Result<(String, KeyRecord, KeyRecord)> {
        let (old, _) = self.entry(id).await?;
        if old.revoked_at.is_some() {
            bail!("{} is revoked; create a new key instead", old.prefix());
        }
        let (key, new) = self.create_like(&old).await?;
        let old = self.expire_after(id, grace).await?;
        Ok((key, new, old))
    }

    /// Lets a key work for `grace` more, then expire; an earlier expiry stands, and a
    /// revoked key stays revoked.
    pub async fn expire_after(&self, id: &str, grace: Duration) -> anyhow::Result<KeyRecord> {
        let (mut old, revision) = self.entry(id).await?;
        if old.revoked_at.is_some() {
            return Ok(old);
        }
        let now = jiff::Timestamp::now();
        let grace = jiff::SignedDuration::try_from(grace).unwrap_or(jiff::SignedDuration::ZERO);
        let until = now.checked_add(grace).unwrap_or(now);
        // A rotation never extends an earlier, shorter grace period.
        let earlier = old
            .expires_at
            .as_deref()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        old.expires_at = Some(racing_events::Instant::text(
            earlier.map_or(until, |e| e.min(until)),
        ));
        self.update(&old, revision).await?;
        Ok(old)
    }

    /// Loads every record into `ring`, then keeps it in step until `shutdown`, confirming
    /// it current (see the module's doc) so that managed keys are refused once it has not
    /// been for `stale_after`. Returns once the current records are loaded; the following
    /// runs in the background.
    pub async fn follow(
        self,
        ring: Arc<KeyRing>,
        stale_after: Duration,
        shutdown: CancellationToken,
    ) -> anyhow::Result<()> {
        // The revision of the newest record the watch has delivered.
        let delivered = Arc::new(AtomicU64::new(0));
        let asked = Instant::now();
        let mut watch = self.keys.watch_with_history(">").await?;
        let seen = load(&self.keys, &mut watch, |entry| {
            delivered.fetch_max(entry.revision, Ordering::Relaxed);
            apply(&ring, entry);
        })
        .await
        .context("loading the key registry")?;
        ring.confirm_current(asked, stale_after);
        tracing::info!(keys = seen, "key registry loaded");
        let following = ring.clone();
        let watched = delivered.clone();
        tokio::spawn(keep_watching(
            self.keys.clone(),
            watch,
            "key registry",
            shutdown.clone(),
            move |entry| {
                watched.fetch_max(entry.revision, Ordering::Relaxed);
                apply(&following, entry);
            },
        ));
        tokio::spawn(
            self.clone()
                .confirm(ring.clone(), delivered, stale_after, shutdown.clone()),
        );
        tokio::spawn(ring.clone().expire(shutdown.clone()));
        tokio::spawn(self.flush_usage(ring, shutdown));
        Ok(())
    }

    /// Confirms `ring` current each time the watch has `delivered` up to the last sequence
    /// the registry's stream had when asked, asking every quarter of `stale_after`, until
    /// `shutdown`; when managed keys start and stop being refused, tells their sessions
    /// and the log.
    async fn confirm(
        self,
        ring: Arc<KeyRing>,
        delivered: Arc<AtomicU64>,
        stale_after: Duration,
        shutdown: CancellationToken,
    ) {
        let every = (stale_after / 4).clamp(Duration::from_millis(100), Duration::from_secs(15));
        let mut asked: VecDeque<(Instant, u64)> = VecDeque::with_capacity(ASKED);
        let mut refusing = false;
        // 1 while managed keys are refused for want of a confirmation: what an alert
        // watches (docs/monitoring/alerts.yml).
        let unchecked = metrics::gauge!("racing_keys_unchecked");
        unchecked.set(0.0);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            let at = Instant::now();
            match tokio::time::timeout(every, self.keys.stream.get_info()).await {
                Ok(Ok(info)) => {
                    if asked.len() == ASKED {
                        asked.pop_front();
                    }
                    asked.push_back((at, info.state.last_sequence));
                }
                Ok(Err(e)) => tracing::debug!(error = %e, "asking the key registry's sequence"),
                Err(_) => tracing::debug!("the key registry's sequence not told within {every:?}"),
            }
            let delivered = delivered.load(Ordering::Relaxed);
            while let Some(&(at, last)) = asked.front() {
                if last > delivered {
                    break;
                }
                asked.pop_front();
                ring.confirm_current(at, stale_after);
            }
            if ring.unchecked() != refusing {
                refusing = !refusing;
                ring.tell_unchecked(refusing);
                match refusing {
                    true => tracing::warn!(
                        "key registry not confirmed current for {stale_after:?}: refusing managed keys"
                    ),
                    false => tracing::info!("key registry current again: accepting managed keys"),
                }
                unchecked.set(f64::from(u8::from(refusing)));
            }
        }
    }

    async fn flush_usage(self, ring: Arc<KeyRing>, shutdown: CancellationToken) {
        let mut since = 0;
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(USAGE_FLUSH) => {}
            }
            for (id, at) in ring.used_since(since) {
                since = since.max(at);
                // Written as every instant the service gives: UTC, `Z`, milliseconds.
                let text = jiff::Timestamp::from_second(at)
                    .map(racing_events::Instant::text)
                    .unwrap_or_default();
                if let Err(e) = self.usage.put(&id, text.into()).await {
                    tracing::debug!(error = %e, "recording key use");
                }
            }
        }
    }
}

/// Hands `apply` the current values of `store` from `watch`, a watch with history just
/// made; returns how many there were.
pub(crate) async fn load(
    store: &kv::Store,
    watch: &mut kv::Watch,
    mut apply: impl FnMut(&kv::Entry),
) -> anyhow::Result<u64> {
    let loaded = store.status().await?.values();
    let mut seen = 0;
    while seen < loaded {
        match tokio::time::timeout(Duration::from_secs(5), watch.next()).await? {
            Some(Ok(entry)) => {
                apply(&entry);
                seen += 1;
                if entry.delta == 0 {
                    break;
                }
            }
            Some(Err(e)) => return Err(e.into()),
            None => break,
        }
    }
    Ok(seen)
}

/// Hands `apply` each change of `store` until `shutdown`. When the watch ends (NATS
/// gone), what was applied stands and the bucket is watched again; the history brings
/// back whatever changed meanwhile.
pub(crate) async fn keep_watching(
    store: kv::Store,
    mut watch: kv::Watch,
    what: &'static str,
    shutdown: CancellationToken,
    mut apply: impl FnMut(&kv::Entry),
) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            entry = watch.next() => match entry {
                Some(Ok(entry)) => apply(&entry),
                Some(Err(e)) => tracing::warn!(error = %e, "{what} watch"),
                None => {
                    tracing::warn!("{what} watch ended; keeping the last values seen");
                    let mut pauses = crate::retry::Pauses::nats();
                    loop {
                        tokio::select! {
                            _ = shutdown.cancelled() => return,
                            _ = tokio::time::sleep(pauses.next_pause()) => {}
                        }
                        match store.watch_with_history(">").await {
                            Ok(w) => {
                                watch = w;
                                break;
                            }
                            Err(e) => tracing::debug!(error = %e, "re-watching the {what}"),
                        }
                    }
                }
            },
        }
    }
}

fn apply(ring: &KeyRing, entry: &kv::Entry) {
    match entry.operation {
        kv::Operation::Put => match serde_json::from_slice::<KeyRecord>(&entry.value) {
            Ok(record) => ring.upsert(&record),
            Err(e) => tracing::warn!(key = %entry.key, error = %e, "unreadable key record ignored"),
        },
        kv::Operation::Delete | kv::Operation::Purge => ring.remove(&entry.key),
    }
}
