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
//!
//! Reading ([`read`]): through a consumer the reader makes itself, under one of its
//! feeder's own names, delivering to a subject only that feeder may listen to; whatever
//! goes wrong (a gap, a restarted server, a consumer lost), it makes its consumer again
//! there, from the last refusal read, and never anywhere else.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use async_nats::jetstream::{self, consumer, kv, response::Response};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::nats::auth::Role;
use crate::nats::buckets::{REFUSALS, REFUSALS_PER_FEEDER};
use crate::nats::subjects::{refusals_delivery, refusals_reader, REFUSAL_READERS};

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

/// How long a reading waits with nothing delivered before it asks the server after its
/// consumer.
const LOOK_AFTER: Duration = Duration::from_secs(2);

/// How long a reading of what is kept (not following) may go without a refusal while
/// some are still to come before it gives up.
const STALLED: Duration = Duration::from_secs(10);

/// How long the server keeps a reading's consumer once nobody listens where it
/// delivers: a reading that died leaves its name free after it.
const LEFT_FOR: Duration = Duration::from_secs(30);

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
    let mut reading = Reading::new(client, stream, feeder);
    reading.claim().await.with_context(|| {
        format!("reading the refusals of {feeder}: is this user the feeder {feeder}?")
    })?;
    let mut read = 0;
    let mut progress = Instant::now();
    loop {
        if reading.held.is_none() {
            if let Err(e) = reading.claim().await {
                anyhow::ensure!(follow.is_some(), "reading the refusals of {feeder}: {e:#}");
                tracing::debug!(
                    error = format!("{e:#}"),
                    "the reading is not made again yet"
                );
                tokio::time::sleep(LOOK_AFTER).await;
                continue;
            }
        }
        let left = match follow {
            _ if reading.pending > 0 => {
                let stalled = progress.elapsed();
                anyhow::ensure!(
                    follow.is_some() || stalled < STALLED,
                    "{} refusals kept but not delivered within {STALLED:?}",
                    reading.pending
                );
                LOOK_AFTER
            }
            Some(wait) => match wait.checked_sub(progress.elapsed()) {
                Some(left) if !left.is_zero() => left.min(LOOK_AFTER),
                _ => break,
            },
            None => break,
        };
        let Some(held) = reading.held.as_mut() else {
            continue;
        };
        match tokio::time::timeout(left, held.messages.next()).await {
            Ok(Some(message)) => match reading.take(message) {
                Taken::Refusal(payload) => {
                    let refusal: Refusal = serde_json::from_slice(&payload)
                        .context("a refusal in the bucket that is no refusal")?;
                    read += 1;
                    progress = Instant::now();
                    each(refusal);
                }
                Taken::Removed => progress = Instant::now(),
                Taken::Foreign => {}
                Taken::Gap => reading.remake(true).await,
            },
            Ok(None) => reading.remake(true).await,
            Err(_) if left < LOOK_AFTER => {}
            Err(_) => match reading.look().await {
                Ok(Look::Fine) => {}
                Ok(Look::Remake { ours }) => reading.remake(ours).await,
                Err(e) => tracing::debug!(
                    error = format!("{e:#}"),
                    "the reading's consumer not looked up"
                ),
            },
        }
    }
    reading.release().await;
    Ok(read)
}

/// A feeder's reading of its refusals: the consumer it holds, if any, and how far it has
/// read.
struct Reading<'a> {
    client: &'a async_nats::Client,
    js: jetstream::Context,
    stream: &'a str,
    feeder: &'a str,
    /// The bucket's stream: `KV_{stream}_REFUSALS`.
    kv_stream: String,
    /// The feeder's keys: `$KV.{stream}_REFUSALS.{feeder}.>`.
    filter: String,
    /// The consumer held, none while it is being made again.
    held: Option<Consumer>,
    /// The stream sequence of the last message read.
    last: u64,
    /// Messages the server said were left to deliver.
    pending: u64,
}

/// A consumer a reading made and where it delivers.
struct Consumer {
    /// Its name: one of the feeder's ([`refusals_reader`]).
    name: String,
    /// Where it delivers: under the feeder's own subject, new for each consumer, so that
    /// nothing a consumer made before sent can be taken for this one's.
    deliver: String,
    messages: async_nats::Subscriber,
    /// The consumer sequence of the last message taken from it.
    delivered: u64,
}

/// What a message delivered to a reading was.
enum Taken {
    /// The next refusal: its payload.
    Refusal(bytes::Bytes),
    /// The next message, of a key removed.
    Removed,
    /// Not of the reading's consumer (another feeder may point a consumer of its own at
    /// this subject), or no message of the stream: passed over.
    Foreign,
    /// A message of its consumer after one missed: the consumer is made again.
    Gap,
}

/// What the server says of a reading's consumer after a wait with nothing delivered.
enum Look {
    /// All delivered, nothing left.
    Fine,
    /// Gone, another reading's now, or behind on what it should have delivered: made
    /// again, removing it first where it is still `ours`.
    Remake { ours: bool },
}

impl<'a> Reading<'a> {
    fn new(client: &'a async_nats::Client, stream: &'a str, feeder: &'a str) -> Reading<'a> {
        let bucket = REFUSALS.name(stream);
        Reading {
            client,
            js: jetstream::new(client.clone()),
            stream,
            feeder,
            kv_stream: format!("KV_{bucket}"),
            filter: format!("$KV.{bucket}.{feeder}.>"),
            held: None,
            last: 0,
            pending: 0,
        }
    }

    /// Makes a consumer of the feeder's keys from the one after the last read, under the
    /// first of the feeder's names free: one whose consumer is missing, or delivers where
    /// nobody listens (a reading that ended or died). A name whose consumer another
    /// reading listens to is left to it: the server refuses to move such a consumer's
    /// delivery, and a look says whether anyone listens.
    async fn claim(&mut self) -> anyhow::Result<()> {
        self.held = None;
        let start = match self.last {
            0 => consumer::DeliverPolicy::All,
            last => consumer::DeliverPolicy::ByStartSequence {
                start_sequence: last + 1,
            },
        };
        for slot in 0..REFUSAL_READERS {
            let name = refusals_reader(self.feeder, slot);
            // A second try after removing a consumer left behind.
            for _ in 0..2 {
                let deliver = format!(
                    "{}.{}",
                    refusals_delivery(self.stream, self.feeder),
                    uuid::Uuid::new_v4().simple()
                );
                // Listening first: the consumer delivers as soon as it is made.
                let messages = self.client.subscribe(deliver.clone()).await?;
                let config = consumer::Config {
                    name: Some(name.clone()),
                    deliver_subject: Some(deliver.clone()),
                    filter_subject: self.filter.clone(),
                    deliver_policy: start,
                    ack_policy: consumer::AckPolicy::None,
                    inactive_threshold: LEFT_FOR,
                    ..Default::default()
                };
                let made: Response<consumer::Info> = self
                    .js
                    .request(
                        format!("CONSUMER.CREATE.{}.{name}.{}", self.kv_stream, self.filter),
                        &serde_json::json!({ "stream_name": self.kv_stream, "config": config }),
                    )
                    .await?;
                match made {
                    // Made now, or one left behind that had delivered nothing, taken over.
                    Response::Ok(info) if info.delivered.consumer_sequence == 0 => {
                        self.pending = info.num_pending;
                        self.held = Some(Consumer {
                            name,
                            deliver,
                            messages,
                            delivered: 0,
                        });
                        return Ok(());
                    }
                    // One left behind, taken over where it had got to: removed, made again.
                    Response::Ok(_) => self.remove(&name).await,
                    Response::Err { error }
                        if error.error_code() == jetstream::ErrorCode::CONSUMER_NAME_EXIST =>
                    {
                        break
                    }
                    // Made by a reading from elsewhere in the stream: its own still, if
                    // anyone listens to it.
                    Response::Err { .. } => match self.info(&name).await? {
                        Some(info) if info.push_bound => break,
                        Some(_) => self.remove(&name).await,
                        None => {}
                    },
                }
            }
        }
        anyhow::bail!(
            "{} reads its refusals {REFUSAL_READERS} times at once already, as many as it may",
            self.feeder
        )
    }

    /// Takes a message delivered to the reading's subject.
    fn take(&mut self, message: async_nats::Message) -> Taken {
        let Some(held) = self.held.as_mut() else {
            return Taken::Foreign;
        };
        if message.status.is_some()
            || !message
                .subject
                .starts_with(&self.filter[..self.filter.len() - 1])
        {
            return Taken::Foreign;
        }
        let message = jetstream::Message {
            message,
            context: self.js.clone(),
        };
        let Ok(info) = message.info() else {
            return Taken::Foreign;
        };
        if info.stream != self.kv_stream || info.consumer != held.name {
            return Taken::Foreign;
        }
        if info.consumer_sequence != held.delivered + 1 || info.stream_sequence <= self.last {
            return Taken::Gap;
        }
        held.delivered = info.consumer_sequence;
        self.last = info.stream_sequence;
        self.pending = info.pending;
        if message.message.payload.is_empty() {
            Taken::Removed
        } else {
            Taken::Refusal(message.message.payload)
        }
    }

    /// Asks the server after the reading's consumer, once nothing came for a while.
    async fn look(&mut self) -> anyhow::Result<Look> {
        let Some(held) = self.held.as_ref() else {
            return Ok(Look::Remake { ours: false });
        };
        let name = held.name.clone();
        Ok(match self.info(&name).await? {
            None => Look::Remake { ours: false },
            Some(info) if info.config.deliver_subject.as_deref() != Some(&held.deliver) => {
                Look::Remake { ours: false }
            }
            Some(info)
                if info.delivered.consumer_sequence != held.delivered || info.num_pending > 0 =>
            {
                Look::Remake { ours: true }
            }
            Some(_) => {
                self.pending = 0;
                Look::Fine
            }
        })
    }

    /// Drops the consumer held, removing it first if it is still `ours`; the next turn
    /// makes one again from the last read.
    async fn remake(&mut self, ours: bool) {
        if let Some(held) = self.held.take() {
            if ours {
                self.remove(&held.name).await;
            }
        }
    }

    /// Removes the consumer held, at the end.
    async fn release(mut self) {
        self.remake(true).await;
    }

    /// The consumer `name` of the bucket, if there is one.
    async fn info(&self, name: &str) -> anyhow::Result<Option<consumer::Info>> {
        let asked: Response<consumer::Info> = self
            .js
            .request(
                format!("CONSUMER.INFO.{}.{name}", self.kv_stream),
                &serde_json::json!({}),
            )
            .await?;
        match asked {
            Response::Ok(info) => Ok(Some(info)),
            Response::Err { error }
                if error.error_code() == jetstream::ErrorCode::CONSUMER_NOT_FOUND =>
            {
                Ok(None)
            }
            Response::Err { error } => Err(anyhow::anyhow!("looking up {name}: {error}")),
        }
    }

    /// Removes the consumer `name`; one gone already, or not removed now, goes by itself
    /// once nobody listens to it ([`LEFT_FOR`]).
    async fn remove(&self, name: &str) {
        let _ = self
            .js
            .delete_consumer_from_stream(name, &self.kv_stream)
            .await;
    }
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
