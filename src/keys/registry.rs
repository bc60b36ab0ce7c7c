//! Managed keys in NATS: a JetStream key-value bucket holds one record per key (never the
//! key), and every replica watches it, so a key created, rotated or revoked on any machine
//! takes effect on every replica in well under a second. A key-value bucket rather than a
//! stream of key events because a key's state is its latest record: the bucket keeps
//! exactly that, a watch delivers the current records then each change, and nothing has
//! to be folded. A replica that loses NATS keeps the keys it last saw.
//!
//! Last use is kept in memory on each replica and written every few seconds to a second
//! bucket, so `racing keys list` can show it without a write per request.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use async_nats::jetstream::{self, kv};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::{generate, KeyLimits, KeyRecord, KeyRing};

/// How often each replica writes last-use times.
const USAGE_FLUSH: Duration = Duration::from_secs(5);
/// Pause before re-watching after the watch broke.
const RETRY: Duration = Duration::from_millis(500);

/// The buckets of a stream's keys.
#[derive(Clone)]
pub struct Registry {
    keys: kv::Store,
    usage: kv::Store,
}

/// How long opening a bucket keeps trying: a cluster that has just started, or has just
/// created the bucket's stream, may answer "stream not found" for a moment.
const OPEN_PATIENCE: Duration = Duration::from_secs(60);

/// Opens a bucket, creating it if it is missing. The backing stream is created here
/// with the settings of a key-value bucket (`KV_<name>` on `$KV.<name>.>`, latest values
/// kept per key, rollups allowed, direct gets) rather than through `create_key_value`,
/// whose request the Debian nats-server 2.9 answers in a form this client cannot read.
/// The bucket has as many replicas as the event stream, so keys survive what it survives.
async fn bucket(
    js: &jetstream::Context,
    name: &str,
    description: &str,
    history: i64,
    replicas: usize,
) -> anyhow::Result<kv::Store> {
    let config = jetstream::stream::Config {
        name: format!("KV_{name}"),
        description: Some(description.to_owned()),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: history,
        discard: jetstream::stream::DiscardPolicy::New,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        storage: jetstream::stream::StorageType::File,
        num_replicas: replicas,
        ..Default::default()
    };
    let deadline = tokio::time::Instant::now() + OPEN_PATIENCE;
    loop {
        let opened = js.get_key_value(name).await;
        let error = match opened {
            Ok(store) => return Ok(store),
            // Another process may create it at the same moment: opening is what counts.
            Err(open) => {
                match js.create_stream(config.clone()).await {
                    // Made just now (a first start): open it at once rather than warn and wait.
                    Ok(_) => match js.get_key_value(name).await {
                        Ok(store) => return Ok(store),
                        Err(reopen) => {
                            anyhow::anyhow!("opening key-value bucket {name}: {open}; after creating it: {reopen}")
                        }
                    },
                    Err(create) => anyhow::anyhow!("creating key-value bucket {name}: {create}"),
                }
            }
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(error);
        }
        tracing::warn!(error = %error, "key-value bucket not ready yet");
        tokio::time::sleep(RETRY).await;
    }
}

impl Registry {
    /// Opens (creating if needed) the buckets `{stream}_KEYS` and `{stream}_KEY_USAGE`.
    pub async fn open(js: &jetstream::Context, stream: &str) -> anyhow::Result<Registry> {
        let replicas = match js.get_stream(stream).await {
            Ok(mut events) => events.info().await.map_or(1, |i| i.config.num_replicas),
            Err(_) => 1,
        };
        let keys = bucket(
            js,
            &format!("{stream}_KEYS"),
            "API key records (hashes, never keys)",
            10,
            replicas,
        )
        .await?;
        let usage = bucket(
            js,
            &format!("{stream}_KEY_USAGE"),
            "Last use of each API key",
            1,
            replicas,
        )
        .await?;
        Ok(Registry { keys, usage })
    }

    async fn put(&self, record: &KeyRecord) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec(record)?;
        self.keys.put(&record.id, bytes.into()).await?;
        Ok(())
    }

    /// Issues a key; the returned string is the only copy of it.
    pub async fn create(
        &self,
        name: &str,
        limits: KeyLimits,
    ) -> anyhow::Result<(String, KeyRecord)> {
        if name.trim().is_empty() {
            bail!("a key needs a name");
        }
        let (key, record) = generate(name, limits, jiff::Timestamp::now());
        self.put(&record).await?;
        Ok((key, record))
    }

    /// One record, by id (`rk_` prefix optional).
    pub async fn get(&self, id: &str) -> anyhow::Result<KeyRecord> {
        let id = id.trim().trim_start_matches(super::PREFIX);
        match self.keys.get(id).await? {
            Some(bytes) => Ok(serde_json::from_slice(&bytes)?),
            None => bail!("no key rk_{id}"),
        }
    }

    /// Every record, with its last use where known.
    pub async fn list(&self) -> anyhow::Result<Vec<(KeyRecord, Option<String>)>> {
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
        let mut record = self.get(id).await?;
        if record.revoked_at.is_none() {
            record.revoked_at = Some(jiff::Timestamp::now().to_string());
            self.put(&record).await?;
        }
        Ok(record)
    }

    /// Issues a new key with the same name and limits, and lets the old one work for
    /// `grace` more before it expires.
    pub async fn rotate(
        &self,
        id: &str,
        grace: Duration,
    ) -> anyhow::Result<(String, KeyRecord, KeyRecord)> {
        let mut old = self.get(id).await?;
        if old.revoked_at.is_some() {
            bail!("{} is revoked; create a new key instead", old.prefix());
        }
        let (key, new) = self.create(&old.name, old.limits).await?;
        let now = jiff::Timestamp::now();
        let grace = jiff::SignedDuration::try_from(grace).unwrap_or(jiff::SignedDuration::ZERO);
        let until = now.checked_add(grace).unwrap_or(now);
        // A rotation never extends an earlier, shorter grace period.
        let earlier = old
            .expires_at
            .as_deref()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        old.expires_at = Some(earlier.map_or(until, |e| e.min(until)).to_string());
        self.put(&old).await?;
        Ok((key, new, old))
    }

    /// Loads every record into `ring`, then keeps it in step until `shutdown`. Returns once
    /// the current records are loaded; the following runs in the background.
    pub async fn follow(
        self,
        ring: Arc<KeyRing>,
        shutdown: CancellationToken,
    ) -> anyhow::Result<()> {
        let mut watch = self.keys.watch_with_history(">").await?;
        let loaded = self.keys.status().await?.values();
        let mut seen = 0;
        while seen < loaded {
            let entry = tokio::time::timeout(Duration::from_secs(5), watch.next())
                .await
                .context("loading the key registry")?;
            match entry {
                Some(Ok(entry)) => {
                    apply(&ring, &entry);
                    seen += 1;
                    if entry.delta == 0 {
                        break;
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            }
        }
        tracing::info!(keys = seen, "key registry loaded");
        tokio::spawn(
            self.clone()
                .keep_following(watch, ring.clone(), shutdown.clone()),
        );
        tokio::spawn(ring.clone().expire(shutdown.clone()));
        tokio::spawn(self.flush_usage(ring, shutdown));
        Ok(())
    }

    async fn keep_following(
        self,
        mut watch: kv::Watch,
        ring: Arc<KeyRing>,
        shutdown: CancellationToken,
    ) {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                entry = watch.next() => match entry {
                    Some(Ok(entry)) => apply(&ring, &entry),
                    Some(Err(e)) => tracing::warn!(error = %e, "key registry watch"),
                    None => {
                        // The watch ended (NATS gone): keep the keys we have and watch
                        // again; the history brings back whatever changed meanwhile.
                        tracing::warn!("key registry watch ended; keeping the last keys seen");
                        loop {
                            tokio::select! {
                                _ = shutdown.cancelled() => return,
                                _ = tokio::time::sleep(RETRY) => {}
                            }
                            match self.keys.watch_with_history(">").await {
                                Ok(w) => {
                                    watch = w;
                                    break;
                                }
                                Err(e) => tracing::debug!(error = %e, "re-watching the key registry"),
                            }
                        }
                    }
                },
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
                let text = jiff::Timestamp::from_second(at)
                    .map(|t| t.to_string())
                    .unwrap_or_default();
                if let Err(e) = self.usage.put(&id, text.into()).await {
                    tracing::debug!(error = %e, "recording key use");
                }
            }
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
