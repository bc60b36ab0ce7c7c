//! A feeder's refused events. A message that carries its feeder's name
//! ([`racing_events::FEEDER_HEADER`]) and is refused becomes a [`Refusal`] in the bucket
//! `{stream}_REFUSALS` under `{feeder}.{stream sequence}`, beside the operator's dead
//! letter; each feeder reads its own there and nobody else's (`racing refusals`, the
//! permissions of `crate::nats::auth`).
//!
//! Keeping ([`Keeper`]): a refusal is written once, never over itself, so it keeps the
//! age of its first writing however often the log is replayed; one whose event is older
//! than the bucket keeps anything is not written again; and no feeder's name holds more
//! than [`REFUSALS_PER_FEEDER`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream::{
    self, consumer::push, consumer::DeliverPolicy, kv, response::Response,
};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::nats::buckets::{REFUSALS, REFUSALS_PER_FEEDER};
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

    /// Whether its event was stored longer than `max_age` before `now`: the bucket,
    /// which keeps a value that long from its writing, would have let it go already.
    fn aged_out(&self, max_age: Duration, now: jiff::Timestamp) -> bool {
        let Ok(stored) = self.published_at.parse::<jiff::Timestamp>() else {
            return false;
        };
        let age = now.as_nanosecond() - stored.as_nanosecond();
        !max_age.is_zero() && age >= max_age.as_nanos() as i128
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

/// What one [`keep`] did with the refusals it was given.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// Written now.
    pub new: usize,
    /// In the bucket already, from an earlier keeping (a replay) or another replica's.
    pub already: usize,
    /// Not written: their events are older than the bucket keeps a refusal.
    pub aged_out: usize,
    /// Not written: their feeder's name holds [`REFUSALS_PER_FEEDER`] already.
    pub over_quota: usize,
}

/// Keeps `refusals` in `bucket`, the refusals' bucket, through the service's JetStream
/// `js`: each written only where its key is not there yet (so a replay neither writes one
/// again nor renews its age), its event not older than the bucket's age, and its
/// feeder's name under [`REFUSALS_PER_FEEDER`]. Ends at the first write that fails.
pub async fn keep(
    js: &jetstream::Context,
    bucket: &kv::Store,
    refusals: &[Refusal],
) -> anyhow::Result<Kept> {
    let now = jiff::Timestamp::now();
    let mut kept = Kept::default();
    let mut feeders: Vec<&str> = Vec::new();
    for r in refusals {
        if !feeders.contains(&r.feeder.as_str()) {
            feeders.push(&r.feeder);
        }
    }
    for feeder in feeders {
        let held = Held::of(js, &bucket.name, feeder).await?;
        let mut count = held.keys.len();
        let mut over = 0;
        for r in refusals.iter().filter(|r| r.feeder == feeder) {
            let key = r.key();
            if held.keys.contains(&format!("$KV.{}.{key}", bucket.name)) {
                kept.already += 1;
            } else if r.aged_out(held.max_age, now) {
                kept.aged_out += 1;
            } else if count >= REFUSALS_PER_FEEDER {
                over += 1;
            } else {
                match bucket.create(&key, serde_json::to_vec(r)?.into()).await {
                    Ok(_) => {
                        kept.new += 1;
                        count += 1;
                    }
                    Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => kept.already += 1,
                    Err(e) => return Err(e).with_context(|| format!("keeping the refusal {key}")),
                }
            }
        }
        if over > 0 {
            kept.over_quota += over;
            metrics::counter!("racing_refusals_over_quota_total").increment(over as u64);
            tracing::warn!(
                feeder,
                not_kept = over,
                quota = REFUSALS_PER_FEEDER,
                "refusals not kept for their feeder: its name holds its quota already (the dead letters keep them)"
            );
        }
    }
    Ok(kept)
}

/// What the bucket holds of one feeder: its keys' subjects, and how long the bucket
/// keeps a value. Read in one request of the stream's info, filtered to the feeder's
/// keys, which the service's user may make.
struct Held {
    keys: HashSet<String>,
    max_age: Duration,
}

impl Held {
    async fn of(js: &jetstream::Context, bucket: &str, feeder: &str) -> anyhow::Result<Held> {
        #[derive(Deserialize)]
        struct Info {
            config: Config,
            state: State,
        }
        #[derive(Deserialize)]
        struct Config {
            #[serde(default)]
            max_age: u64,
        }
        #[derive(Deserialize)]
        struct State {
            #[serde(default)]
            subjects: Option<HashMap<String, u64>>,
        }
        let filter = format!("$KV.{bucket}.{feeder}.>");
        let asked: Response<Info> = js
            .request(
                format!("STREAM.INFO.KV_{bucket}"),
                &serde_json::json!({ "subjects_filter": filter }),
            )
            .await
            .with_context(|| format!("counting the refusals of {feeder}"))?;
        match asked {
            // One page holds up to 100,000 subjects, far past the quota.
            Response::Ok(info) => Ok(Held {
                keys: info
                    .state
                    .subjects
                    .unwrap_or_default()
                    .into_keys()
                    .collect(),
                max_age: Duration::from_nanos(info.config.max_age),
            }),
            Response::Err { error } => Err(anyhow::anyhow!(
                "counting the refusals of {feeder}: {error}"
            )),
        }
    }
}

/// Keeps the projector's refusals for their feeders, one batch at a time, beside the
/// projector's work: a feeder's reading waits for them, the fold does not.
#[derive(Clone)]
pub struct Keeper {
    js: jetstream::Context,
    stream: String,
    /// The bucket once opened; held while a batch is kept, so that batches are kept in
    /// turn and each counts what the one before it wrote.
    bucket: Arc<tokio::sync::Mutex<Option<kv::Store>>>,
}

impl Keeper {
    /// A keeper of the refusals of `stream`, through `js`.
    pub fn new(js: jetstream::Context, stream: &str) -> Keeper {
        Keeper {
            js,
            stream: stream.to_owned(),
            bucket: Arc::default(),
        }
    }

    /// [`keep`]s `refusals` in a task of its own, one batch at a time. Failing
    /// (the bucket missing or full, NATS away), it says so; the dead letters hold them
    /// all the same.
    pub fn keep_later(&self, refusals: Vec<Refusal>) {
        if refusals.is_empty() {
            return;
        }
        let keeper = self.clone();
        tokio::spawn(async move {
            let mut bucket = keeper.bucket.lock().await;
            let kept = match bucket.as_ref() {
                Some(store) => keep(&keeper.js, store, &refusals).await,
                None => match REFUSALS.open(&keeper.js, &keeper.stream).await {
                    Ok(store) => keep(&keeper.js, bucket.insert(store), &refusals).await,
                    Err(e) => Err(e),
                },
            };
            match kept {
                Ok(kept) => tracing::debug!(?kept, "refusals kept"),
                Err(e) => {
                    *bucket = None;
                    tracing::warn!(
                        error = format!("{e:#}"),
                        count = refusals.len(),
                        "refusals not kept for their feeders"
                    );
                }
            }
        });
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn stored_at(published_at: &str) -> Refusal {
        Refusal {
            feeder: "feeder-a".to_owned(),
            seq: 7,
            subject: "racing.horses.E271".to_owned(),
            event_id: None,
            reason: "wins is more than starts".to_owned(),
            published_at: published_at.to_owned(),
        }
    }

    #[test]
    fn a_refusal_ages_out_with_its_event_stored_time_not_its_writing() {
        let now: jiff::Timestamp = "2026-11-30T12:00:00Z".parse().expect("a time");
        let days = |n: u64| Duration::from_secs(n * 24 * 3600);
        assert!(stored_at("2026-10-31T11:59:59Z").aged_out(days(30), now));
        assert!(stored_at("2026-10-31T12:00:00Z").aged_out(days(30), now));
        assert!(!stored_at("2026-10-31T12:00:01Z").aged_out(days(30), now));
        assert!(!stored_at("2026-11-30T11:59:59Z").aged_out(days(30), now));
        // A bucket that keeps values for ever, and a time that cannot be read: kept.
        assert!(!stored_at("2020-01-01T00:00:00Z").aged_out(Duration::ZERO, now));
        assert!(!stored_at("yesterday").aged_out(days(30), now));
    }

    #[test]
    fn a_refusal_s_key_is_its_feeder_and_stream_sequence() {
        assert_eq!(stored_at("2026-11-30T12:00:00Z").key(), "feeder-a.7");
    }
}
