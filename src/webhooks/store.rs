//! The webhooks' buckets in NATS, the one part of `webhooks` that holds a NATS client:
//! endpoints by owner and id (`{stream}_WEBHOOKS`), followed by every replica into an
//! [`Endpoints`] map; what is owed to each (`{stream}_WEBHOOK_DELIVERIES`), written by the
//! sending replica over the revision it read, so that a second writer finds out; and the
//! sender's lease, a value in the second bucket naming a replica until a time.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream::{self, kv};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::endpoint::{DeliveryState, Endpoint};
use crate::nats::buckets;

/// The lease's key in the deliveries bucket (no endpoint's key has no dot).
const LEASE: &str = "lease";

/// Every endpoint, by its key in the bucket, as this replica last saw the bucket; and a
/// count of its changes that the sender watches.
#[derive(Default)]
pub struct Endpoints {
    map: RwLock<BTreeMap<String, Endpoint>>,
    changed: watch::Sender<u64>,
}

impl Endpoints {
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Endpoint>> {
        self.map.write().unwrap_or_else(|p| p.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Endpoint>> {
        self.map.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The endpoint under `key`.
    pub fn get(&self, key: &str) -> Option<Endpoint> {
        self.read().get(key).cloned()
    }

    /// The endpoints of `owner`, by id.
    pub fn of(&self, owner: &str) -> Vec<Endpoint> {
        let prefix = format!("{owner}.");
        self.read()
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, e)| e.clone())
            .collect()
    }

    /// Every key.
    pub fn keys(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Sets the endpoint under `key` (`None`: gone), and tells the watchers.
    pub fn set(&self, key: &str, endpoint: Option<Endpoint>) {
        match endpoint {
            Some(e) => self.write().insert(key.to_owned(), e),
            None => self.write().remove(key),
        };
        self.changed.send_modify(|n| *n += 1);
    }

    /// Follows the changes.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

/// The two buckets.
#[derive(Clone)]
pub struct Buckets {
    endpoints: kv::Store,
    deliveries: kv::Store,
}

/// A write refused because the value changed since it was read.
#[derive(Debug, thiserror::Error)]
#[error("changed meanwhile")]
pub struct Conflict;

impl Buckets {
    /// Opens `{stream}_WEBHOOKS` and `{stream}_WEBHOOK_DELIVERIES`, which the set-up made,
    /// as `service`.
    pub async fn open(
        service: &crate::nats::client::Connection,
        stream: &str,
    ) -> anyhow::Result<Buckets> {
        let js: jetstream::Context = service.jetstream();
        Ok(Buckets {
            endpoints: buckets::WEBHOOKS.open(&js, stream).await?,
            deliveries: buckets::WEBHOOK_DELIVERIES.open(&js, stream).await?,
        })
    }

    /// Loads every endpoint into `map`, then keeps it in step until `shutdown` (in the
    /// background).
    pub async fn follow(
        &self,
        map: Arc<Endpoints>,
        shutdown: CancellationToken,
    ) -> anyhow::Result<()> {
        let mut watch = self.endpoints.watch_with_history(">").await?;
        let apply = {
            let map = map.clone();
            move |entry: &kv::Entry| match entry.operation {
                kv::Operation::Put => match serde_json::from_slice::<Endpoint>(&entry.value) {
                    Ok(endpoint) => map.set(&entry.key, Some(endpoint)),
                    Err(e) => {
                        tracing::warn!(key = %entry.key, error = %e, "unreadable webhook endpoint ignored")
                    }
                },
                kv::Operation::Delete | kv::Operation::Purge => map.set(&entry.key, None),
            }
        };
        let mut load = apply.clone();
        let seen = crate::keys::registry::load(&self.endpoints, &mut watch, &mut load)
            .await
            .context("loading the webhook endpoints")?;
        tracing::info!(endpoints = seen, "webhook endpoints loaded");
        tokio::spawn(crate::keys::registry::keep_watching(
            self.endpoints.clone(),
            watch,
            "webhook endpoints",
            shutdown,
            apply,
        ));
        Ok(())
    }

    /// Writes a new endpoint; refused if one of its key exists.
    pub async fn create(&self, endpoint: &Endpoint) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec(endpoint)?;
        self.endpoints
            .create(endpoint.record_key(), bytes.into())
            .await
            .context("writing the webhook endpoint")?;
        Ok(())
    }

    /// The endpoint under `key` and its revision.
    pub async fn endpoint(&self, key: &str) -> anyhow::Result<Option<(Endpoint, u64)>> {
        match self.endpoints.entry(key).await? {
            Some(entry) if entry.operation == kv::Operation::Put => {
                let endpoint = serde_json::from_slice(&entry.value)
                    .with_context(|| format!("webhook endpoint {key}"))?;
                Ok(Some((endpoint, entry.revision)))
            }
            _ => Ok(None),
        }
    }

    /// Writes a changed endpoint over the revision it was read at.
    pub async fn update(&self, endpoint: &Endpoint, revision: u64) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec(endpoint)?;
        self.endpoints
            .update(endpoint.record_key(), bytes.into(), revision)
            .await
            .map_err(|_| anyhow::Error::new(Conflict))?;
        Ok(())
    }

    /// Changes the endpoint under `key` with `change`, read and written again until no
    /// other write comes between; `None` if there is no such endpoint. `change` may
    /// refuse (its error is returned as it is).
    pub async fn change<T>(
        &self,
        key: &str,
        mut change: impl FnMut(&mut Endpoint) -> anyhow::Result<T>,
    ) -> anyhow::Result<Option<(Endpoint, T)>> {
        for _ in 0..8 {
            let Some((mut endpoint, revision)) = self.endpoint(key).await? else {
                return Ok(None);
            };
            let out = change(&mut endpoint)?;
            match self.update(&endpoint, revision).await {
                Ok(()) => return Ok(Some((endpoint, out))),
                Err(e) if e.is::<Conflict>() => continue,
                Err(e) => return Err(e),
            }
        }
        anyhow::bail!("the endpoint kept changing; try again")
    }

    /// Removes an endpoint and what is owed to it.
    pub async fn delete(&self, key: &str) -> anyhow::Result<()> {
        self.endpoints.purge(key).await?;
        self.deliveries.purge(key).await?;
        Ok(())
    }

    /// What is owed to the endpoint under `key`, with its revision.
    pub async fn state(&self, key: &str) -> anyhow::Result<Option<(DeliveryState, u64)>> {
        match self.deliveries.entry(key).await? {
            Some(entry) if entry.operation == kv::Operation::Put => {
                let state = serde_json::from_slice(&entry.value)
                    .with_context(|| format!("webhook delivery state {key}"))?;
                Ok(Some((state, entry.revision)))
            }
            _ => Ok(None),
        }
    }

    /// Writes what is owed over `revision` (`None`: there was none), and returns the new
    /// revision; [`Conflict`] if another wrote it meanwhile.
    pub async fn save_state(
        &self,
        key: &str,
        state: &DeliveryState,
        revision: Option<u64>,
    ) -> anyhow::Result<u64> {
        let bytes = serde_json::to_vec(state)?;
        // Either refusal is the same to the sender: it no longer knows what is owed.
        let written = match revision {
            Some(revision) => self
                .deliveries
                .update(key, bytes.into(), revision)
                .await
                .ok(),
            None => self.deliveries.create(key, bytes.into()).await.ok(),
        };
        written.ok_or_else(|| anyhow::Error::new(Conflict))
    }

    /// Takes the sender's lease for `replica` when it is free or lapsed, or renews it
    /// when `replica` holds it: whether `replica` holds it for `ttl` from now. One
    /// attempt.
    pub async fn hold_lease(&self, replica: &str, ttl: Duration) -> bool {
        let now = jiff::Timestamp::now().as_millisecond();
        let until = now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let mine = format!("{replica} {until}");
        match self.deliveries.entry(LEASE).await {
            Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
                let text = String::from_utf8_lossy(&entry.value);
                let (holder, held_until) = text.split_once(' ').unwrap_or(("", "0"));
                let lapsed = held_until.parse::<i64>().map_or(true, |t| t <= now);
                (holder == replica || lapsed)
                    && self
                        .deliveries
                        .update(LEASE, mine.into(), entry.revision)
                        .await
                        .is_ok()
            }
            Ok(Some(entry)) => self
                .deliveries
                .update(LEASE, mine.into(), entry.revision)
                .await
                .is_ok(),
            Ok(None) => self.deliveries.create(LEASE, mine.into()).await.is_ok(),
            Err(e) => {
                tracing::debug!(error = %e, "reading the webhook sender's lease");
                false
            }
        }
    }

    /// Lets go of the lease if `replica` holds it, so that another may take it at once.
    pub async fn release_lease(&self, replica: &str) {
        if let Ok(Some(entry)) = self.deliveries.entry(LEASE).await {
            let text = String::from_utf8_lossy(&entry.value);
            if text
                .split_once(' ')
                .is_some_and(|(holder, _)| holder == replica)
            {
                let _ = self
                    .deliveries
                    .delete_expect_revision(LEASE, Some(entry.revision))
                    .await;
            }
        }
    }
}
