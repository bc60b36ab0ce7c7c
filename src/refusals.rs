//! A feeder's refused events. A message that carries its feeder's name
//! ([`racing_events::FEEDER_HEADER`]) and is refused becomes a [`Refusal`] in the bucket
//! `{stream}_REFUSALS` under `{feeder}.{stream sequence}`, beside the operator's dead
//! letter; each feeder reads its own there and nobody else's (`racing refusals`, the
//! permissions of `crate::nats::auth`). The same refusal kept again is the same value
//! under the same key, so a replay keeps each once.

use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream::{self, consumer::push, consumer::DeliverPolicy};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::nats::buckets::REFUSALS;
use crate::nats::subjects::refusals_delivery;
use crate::nats::Role;

/// One refused event, as its feeder reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// The feeder that published it: its NATS user's name.
    pub feeder: String,
    /// Its position in the stream.
    pub seq: u64,
    /// The subject it was published on.
    pub subject: String,
    /// Its `event_id` where one could be read (the payload's, else its `Nats-Msg-Id`).
    pub event_id: Option<String>,
    /// Why it was refused: the dead letter's reason.
    pub reason: String,
    /// When JetStream stored it, RFC 3339.
    pub published_at: String,
}

impl Refusal {
    /// Its key in the bucket.
    pub fn key(&self) -> String {
        format!("{}.{}", self.feeder, self.seq)
    }
}

/// Whether `name` names a feeder as keys and subjects may hold it: a `feeder` user's
/// name as its seed file has it (`feeder`, `feeder-hkjc`). A message whose header names
/// anything else keeps no refusal.
pub fn is_feeder_name(name: &str) -> bool {
    Role::of_user(name) == Some(Role::Feeder)
        && name.len() <= 64
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

/// The `event_id` of a refused payload where it can be read: its own field, else the
/// message's `Nats-Msg-Id`.
pub fn event_id_of(payload: &[u8], msg_id: Option<&str>) -> Option<String> {
    #[derive(Deserialize)]
    struct Id<'a> {
        #[serde(borrow)]
        event_id: Option<&'a str>,
    }
    serde_json::from_slice::<Id<'_>>(payload)
        .ok()
        .and_then(|id| id.event_id.map(str::to_owned))
        .or_else(|| msg_id.map(str::to_owned))
        .map(|id| racing_events::clip(&id, 64))
}

/// Keeps `refusals` in the bucket of `stream`, through the service's JetStream.
pub async fn keep(
    js: &jetstream::Context,
    stream: &str,
    refusals: &[Refusal],
) -> anyhow::Result<()> {
    let bucket = REFUSALS.name(stream);
    let kv = js
        .get_key_value(&bucket)
        .await
        .with_context(|| format!("the bucket {bucket} (made by `racing setup`)"))?;
    for r in refusals {
        let value = serde_json::to_vec(r)?;
        kv.put(r.key(), value.into())
            .await
            .with_context(|| format!("keeping the refusal {}", r.key()))?;
    }
    Ok(())
}

/// [`keep`] in a task of its own, beside the projector's work: a feeder's reading waits
/// for them, the fold does not. Failing (the bucket missing, NATS away), it says so; the
/// dead letters hold them all the same.
pub fn keep_later(js: &jetstream::Context, stream: &str, refusals: Vec<Refusal>) {
    if refusals.is_empty() {
        return;
    }
    let (js, stream) = (js.clone(), stream.to_owned());
    tokio::spawn(async move {
        if let Err(e) = keep(&js, &stream, &refusals).await {
            tracing::warn!(
                error = format!("{e:#}"),
                count = refusals.len(),
                "refusals not kept for their feeders"
            );
        }
    });
}

/// Reads the refusals of `feeder` from the bucket of `stream`, as that feeder: each is
/// handed to `each`, oldest first. Without `follow` it ends when it has read every one
/// kept; with it, it also waits that long for each next one.
pub async fn read(
    client: &async_nats::Client,
    stream: &str,
    feeder: &str,
    follow: Option<Duration>,
    mut each: impl FnMut(Refusal),
) -> anyhow::Result<u64> {
    anyhow::ensure!(
        is_feeder_name(feeder),
        "`{feeder}` is no feeder's name (feeder, feeder-NAME)"
    );
    let js = jetstream::new(client.clone());
    let bucket = REFUSALS.name(stream);
    let kv_stream = js
        .get_stream(format!("KV_{bucket}"))
        .await
        .with_context(|| format!("the bucket {bucket}: is this user the feeder {feeder}?"))?;
    // A named consumer: its creation names its filter, which the feeder's permissions
    // hold to its own keys; it delivers where only this feeder may listen.
    let name = format!("refusals_{}", uuid::Uuid::new_v4().simple());
    let consumer = kv_stream
        .create_consumer(push::OrderedConfig {
            name: Some(name.clone()),
            deliver_subject: format!("{}.{name}", refusals_delivery(stream, feeder)),
            filter_subject: format!("$KV.{bucket}.{feeder}.>"),
            deliver_policy: DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .with_context(|| format!("reading the refusals of {feeder}"))?;
    let mut kept = consumer.cached_info().num_pending;
    let mut messages = consumer.messages().await?;
    let mut read = 0;
    loop {
        let wait = match follow {
            _ if kept > 0 => Duration::from_secs(10),
            Some(wait) => wait,
            None => break,
        };
        let Ok(next) = tokio::time::timeout(wait, messages.next()).await else {
            anyhow::ensure!(
                kept == 0,
                "{kept} refusals kept but not delivered within {wait:?}"
            );
            break;
        };
        let Some(message) = next else { break };
        let message = message.map_err(|e| anyhow::anyhow!("reading the refusals: {e}"))?;
        kept = kept.saturating_sub(1);
        if message.payload.is_empty() {
            continue; // a deleted or purged key
        }
        let refusal: Refusal = serde_json::from_slice(&message.payload)
            .with_context(|| format!("a refusal under {}", message.subject))?;
        read += 1;
        each(refusal);
    }
    Ok(read)
}
