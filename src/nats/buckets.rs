//! The key-value buckets beside a stream: what each holds and keeps, made once by the
//! set-up ([`super::setup`]) and opened, never made, by the service and `racing keys`.

use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream::stream::DiscardPolicy;
use async_nats::jetstream::{self, kv};

/// One bucket of a stream: `{stream}_{suffix}`, backed by the stream `KV_{stream}_{suffix}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// The part of its name after the stream's.
    pub suffix: &'static str,
    /// What it holds, as its stream's description.
    pub description: &'static str,
    /// Values kept per key.
    pub history: i64,
    /// How long a value lives after it was written; zero: for ever.
    pub max_age: Duration,
    /// Most bytes its values take together, history included; -1: no limit.
    pub max_bytes: i64,
    /// What a write past `max_bytes` does: refused (`New`: the records a service relies
    /// on, which no one may lose to another's writes), or taking the room of the oldest
    /// values (`Old`: a cache of what is kept elsewhere, which anyone's writes must not
    /// close to everyone's).
    pub when_full: DiscardPolicy,
}

/// API key records, by id.
pub const KEYS: Bucket = Bucket {
    suffix: "KEYS",
    description: "API key records (hashes, never keys)",
    history: 10,
    max_age: Duration::ZERO,
    max_bytes: -1,
    when_full: DiscardPolicy::New,
};

/// When each API key was last used.
pub const KEY_USAGE: Bucket = Bucket {
    suffix: "KEY_USAGE",
    description: "Last use of each API key",
    history: 1,
    max_age: Duration::ZERO,
    max_bytes: -1,
    when_full: DiscardPolicy::New,
};

/// The live service replicas and their open connections per key.
pub const REPLICAS: Bucket = Bucket {
    suffix: "REPLICAS",
    description: "Live service replicas and their open connections per key",
    history: 1,
    // A replica silent this long is gone.
    max_age: Duration::from_secs(15),
    max_bytes: -1,
    when_full: DiscardPolicy::New,
};

/// The subscribers of the pricing page's flow.
pub const SUBSCRIBERS: Bucket = Bucket {
    suffix: "SUBSCRIBERS",
    description: "Subscribers: address, name, plans, key prefixes",
    history: 5,
    max_age: Duration::ZERO,
    max_bytes: -1,
    when_full: DiscardPolicy::New,
};

/// How long a link of the subscription forms may be followed, unless the set-up and the
/// service are given another life (`RACING_LINK_TTL_HOURS`).
pub const LINK_TTL: Duration = Duration::from_secs(24 * 3600);

/// The single-use links of the subscription forms, as made for links of the default life
/// ([`signups`] for another).
pub const SIGNUPS: Bucket = Bucket {
    suffix: "SIGNUPS",
    description: "Single-use links of the subscription forms",
    history: 1,
    // A link leaves the bucket when its life is over, so that no expired link takes room:
    // the bucket's age is the links' life.
    max_age: LINK_TTL,
    // About 100,000 to 250,000 links, each form post adding one of 250 to 600 bytes; a
    // full bucket refuses the next (it is made to discard new records, never old ones).
    max_bytes: 64 << 20,
    when_full: DiscardPolicy::New,
};

/// The link bucket for links that may be followed for `life`: it keeps each that long.
pub fn signups(life: Duration) -> Bucket {
    Bucket {
        max_age: life,
        ..SIGNUPS
    }
}

/// How long the snapshot writer's lease lasts unrenewed: a writer that dies lets another
/// replica take over after it.
pub const SNAPSHOT_LEASE_TTL: Duration = Duration::from_secs(30);

/// Which replica writes the snapshots of the read models (`crate::snapshot::writer`).
pub const SNAPSHOT_LEASE: Bucket = Bucket {
    suffix: "SNAPSHOT_LEASE",
    description: "The replica that writes the snapshots of the read models",
    history: 1,
    max_age: SNAPSHOT_LEASE_TTL,
    max_bytes: -1,
    when_full: DiscardPolicy::New,
};

/// Each feeder's refused events, keyed `{feeder}.{stream sequence}`: what
/// `racing refusals` reads, each feeder its own (`super::auth`).
pub const REFUSALS: Bucket = Bucket {
    suffix: "REFUSALS",
    description: "Refused events, by the feeder that published them",
    history: 1,
    // A feeder reads them within days; the operator's dead letters keep them all.
    max_age: Duration::from_secs(30 * 24 * 3600),
    // About 100,000 refusals of about 600 bytes. Full, the bucket drops its oldest for the
    // next: the name an event gives is its feeder's word, so a feeder naming a hundred
    // made-up feeders could fill it, and a bucket that then refused every write would keep
    // no feeder's next refusal for up to 30 days.
    max_bytes: 64 << 20,
    when_full: DiscardPolicy::Old,
};

/// Webhook endpoints, keyed `{owner}.{id}`: each key's endpoints, their URLs, topics and
/// secrets (`crate::webhooks`).
pub const WEBHOOKS: Bucket = Bucket {
    suffix: "WEBHOOKS",
    description: "Webhook endpoints: owner, URL, topics, secrets",
    history: 5,
    max_age: Duration::ZERO,
    max_bytes: -1,
    when_full: DiscardPolicy::New,
};

/// What is owed to each webhook endpoint, keyed as its endpoint: the position delivered
/// up to, the delivery under way with its retries, the recent attempts; and under `lease`,
/// the replica that sends.
pub const WEBHOOK_DELIVERIES: Bucket = Bucket {
    suffix: "WEBHOOK_DELIVERIES",
    description: "Webhook deliveries owed and attempted, and the sending replica's lease",
    history: 1,
    max_age: Duration::ZERO,
    max_bytes: -1,
    when_full: DiscardPolicy::New,
};

/// Most refusals [`REFUSALS`] keeps under one feeder's name at a time. The service counts
/// a feeder's keys before it keeps more (`crate::refusals`) and keeps none past this,
/// since the name an event gives in its `Racing-Feeder` header is the feeder's word alone:
/// events naming another feeder take at most that feeder's share. About 600 KB a name.
pub const REFUSALS_PER_FEEDER: usize = 1_000;

/// The part of the snapshots' object store's name after the stream's.
pub const SNAPSHOTS_SUFFIX: &str = "SNAPSHOTS";

/// The snapshots' object store beside `stream`.
pub fn snapshots_name(stream: &str) -> String {
    format!("{stream}_{SNAPSHOTS_SUFFIX}")
}

/// Every bucket of a stream, in the order the set-up makes them.
pub const ALL: [Bucket; 9] = [
    KEYS,
    KEY_USAGE,
    REPLICAS,
    SUBSCRIBERS,
    SIGNUPS,
    SNAPSHOT_LEASE,
    REFUSALS,
    WEBHOOKS,
    WEBHOOK_DELIVERIES,
];

/// The object store of the read models' snapshots beside `stream`: its stream is made
/// here with an object store's settings (`OBJ_<name>` on `$O.<name>.C.>` and
/// `$O.<name>.M.>`, rollups for the metadata, direct gets), as [`Bucket::make`] makes a
/// key-value bucket's, with `replicas` copies. Deletes are denied on its stream: only
/// the set-up may delete the bucket; the service removes old snapshots by purging their
/// chunks, as the object store does. One attempt.
pub(crate) async fn make_snapshot_bucket(
    js: &jetstream::Context,
    stream: &str,
    replicas: usize,
) -> anyhow::Result<()> {
    let name = snapshots_name(stream);
    if js.get_object_store(&name).await.is_ok() {
        return Ok(());
    }
    let config = jetstream::stream::Config {
        name: format!("OBJ_{name}"),
        description: Some("Snapshots of the read models".to_owned()),
        subjects: vec![format!("$O.{name}.C.>"), format!("$O.{name}.M.>")],
        discard: jetstream::stream::DiscardPolicy::New,
        allow_rollup: true,
        allow_direct: true,
        deny_delete: true,
        storage: jetstream::stream::StorageType::File,
        num_replicas: replicas,
        ..Default::default()
    };
    let created = js.create_stream(config).await;
    js.get_object_store(&name)
        .await
        .map(drop)
        .map_err(|open| match created {
            Err(e) => super::stream::stream_failure(e, &format!("OBJ_{name}")),
            Ok(_) => {
                anyhow::Error::from(open).context(format!("opening object store {name} just made"))
            }
        })
}

/// The snapshots a service keeps unless told otherwise (`RACING_SNAPSHOT_KEEP`).
pub const SNAPSHOTS_KEPT: usize = 3;

/// How the set-up bounds the snapshots' bucket ([`size_snapshot_bucket`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotBucket {
    /// The snapshots a service keeps (`RACING_SNAPSHOT_KEEP`).
    pub keep: usize,
    /// The bucket's limit in bytes as the operator states it; `None`: derived from the
    /// snapshots in it and `keep`.
    pub bytes: Option<u64>,
}

impl Default for SnapshotBucket {
    fn default() -> SnapshotBucket {
        SnapshotBucket {
            keep: SNAPSHOTS_KEPT,
            bytes: None,
        }
    }
}

/// Bytes of the chunks an object of the snapshots' bucket is sent in: the object store's
/// own size, which the service's uploads keep (`crate::snapshot::upload::CHUNK`).
pub const SNAPSHOT_CHUNK: u64 = 128 << 10;

/// Bounds the snapshots' bucket beside `stream` ([`snapshot_bucket_limit`]), so that
/// snapshots never take more of JetStream's storage, which the log shares, than the
/// snapshots kept need: past its limit the bucket refuses a new upload (it discards new
/// messages, never old chunks). One attempt; nothing changes where the limit is the one
/// it has, or where none can be derived yet.
pub(crate) async fn size_snapshot_bucket(
    js: &jetstream::Context,
    stream: &str,
    sizing: &SnapshotBucket,
) -> anyhow::Result<()> {
    use futures::TryStreamExt as _;
    let bucket = snapshots_name(stream);
    let name = format!("OBJ_{bucket}");
    let mut handle = js
        .get_stream(&name)
        .await
        .with_context(|| format!("looking up stream {name}"))?;
    let info = handle
        .info()
        .await
        .with_context(|| format!("looking up stream {name}"))?
        .clone();
    let chunks: Vec<(String, usize)> = handle
        .info_with_subjects(format!("$O.{bucket}.C.>"))
        .await
        .with_context(|| format!("listing the chunks of {bucket}"))?
        .try_collect()
        .await
        .with_context(|| format!("listing the chunks of {bucket}"))?;
    let most = chunks.iter().map(|(_, n)| *n as u64).max();
    let Some(limit) = snapshot_bucket_limit(sizing, info.state.bytes, most) else {
        return Ok(());
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let discard = jetstream::stream::DiscardPolicy::New;
    if info.config.max_bytes == limit && info.config.discard == discard {
        return Ok(());
    }
    let mut config = info.config;
    config.max_bytes = limit;
    config.discard = discard;
    js.update_stream(config)
        .await
        .map_err(|e| super::stream::stream_failure(e, &name))?;
    tracing::info!(bucket, max_bytes = limit, "snapshots' bucket bounded");
    Ok(())
}

/// The snapshots' bucket's byte limit: as `sizing` states it, or derived: `keep + 2`
/// snapshots (those kept, the one being sent, and the newest of an older layout that
/// replicas in a rolling upgrade still run) the size of the largest in the bucket
/// (`most_chunks` chunks of [`SNAPSHOT_CHUNK`]), and a quarter more for their growth and
/// JetStream's own bytes. Never below what the bucket holds (`held`), so that no chunk
/// is dropped, nor, derived, below that and room for one more. `None`: nothing stated and
/// no snapshot to derive it from (the bucket keeps the limit it has).
pub fn snapshot_bucket_limit(
    sizing: &SnapshotBucket,
    held: u64,
    most_chunks: Option<u64>,
) -> Option<u64> {
    if let Some(bytes) = sizing.bytes {
        return Some(bytes.max(held));
    }
    let largest = most_chunks
        .filter(|n| *n > 0)?
        .saturating_mul(SNAPSHOT_CHUNK);
    let room = |n: u64| n.saturating_mul(largest).saturating_mul(5) / 4;
    let kept = sizing.keep.max(1) as u64 + 2;
    Some(room(kept).max(held.saturating_add(room(1))))
}

impl Bucket {
    /// The bucket's name beside the stream `stream`.
    pub fn name(&self, stream: &str) -> String {
        format!("{stream}_{}", self.suffix)
    }

    /// Opens the bucket beside `stream`, which the set-up made: one attempt, as start-up
    /// asks again through [`super::Connection::ready`] (a cluster that has just started
    /// may answer "not found" for a moment).
    pub async fn open(&self, js: &jetstream::Context, stream: &str) -> anyhow::Result<kv::Store> {
        let name = self.name(stream);
        js.get_key_value(&name).await.with_context(|| {
            format!("opening key-value bucket {name}; `racing setup` makes it (docs/security.md)")
        })
    }

    /// Makes the bucket beside `stream` with `replicas` copies if it is missing, and
    /// opens it. Its stream is made here with the settings of a key-value bucket
    /// (`KV_<name>` on `$KV.<name>.>`, latest values kept per key, rollups allowed, direct
    /// gets) rather than through `create_key_value`, whose request the Debian nats-server
    /// 2.9 answers in a form this client cannot read. One attempt, as [`Bucket::open`].
    pub(crate) async fn make(
        &self,
        js: &jetstream::Context,
        stream: &str,
        replicas: usize,
    ) -> anyhow::Result<kv::Store> {
        let name = self.name(stream);
        if let Ok(store) = js.get_key_value(&name).await {
            self.bring_up_to_date(js, &store).await?;
            return Ok(store);
        }
        let config = jetstream::stream::Config {
            name: format!("KV_{name}"),
            description: Some(self.description.to_owned()),
            subjects: vec![format!("$KV.{name}.>")],
            max_messages_per_subject: self.history,
            max_age: self.max_age,
            max_bytes: self.max_bytes,
            discard: self.when_full,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            storage: jetstream::stream::StorageType::File,
            num_replicas: replicas,
            ..Default::default()
        };
        let created = js.create_stream(config).await;
        // Another process may make it at the same moment: opening is what counts.
        js.get_key_value(&name).await.map_err(|open| match created {
            Err(e) => super::stream::stream_failure(e, &format!("KV_{name}")),
            Ok(_) => anyhow::Error::from(open)
                .context(format!("opening key-value bucket {name} just made")),
        })
    }

    /// Gives a bucket made before it had a byte limit (or with another one) the limit it
    /// has now, one made with another age (the link bucket, whose age is the links'
    /// configured life) its age, and one made to refuse writes when full what it does now
    /// (the refusals' bucket drops its oldest), so that `racing setup` after an upgrade or
    /// a change of settings bounds it too. A shorter age drops the values older than it at
    /// once.
    async fn bring_up_to_date(
        &self,
        js: &jetstream::Context,
        store: &kv::Store,
    ) -> anyhow::Result<()> {
        let info = store
            .stream
            .get_info()
            .await
            .with_context(|| format!("looking up the stream of {}", store.name))?;
        if info.config.max_bytes == self.max_bytes
            && info.config.max_age == self.max_age
            && info.config.discard == self.when_full
        {
            return Ok(());
        }
        let mut config = info.config;
        config.max_bytes = self.max_bytes;
        config.max_age = self.max_age;
        config.discard = self.when_full;
        // JetStream refuses a duplicate window longer than the age.
        if !self.max_age.is_zero() && config.duplicate_window > self.max_age {
            config.duplicate_window = self.max_age;
        }
        let name = config.name.clone();
        js.update_stream(config)
            .await
            .map_err(|e| super::stream::stream_failure(e, &name))?;
        tracing::info!(
            bucket = %store.name,
            max_bytes = self.max_bytes,
            max_age_secs = self.max_age.as_secs(),
            when_full = ?self.when_full,
            "bucket's limits set"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshots_bucket_holds_the_snapshots_kept_and_never_less_than_it_holds() {
        let derived = SnapshotBucket {
            keep: 3,
            bytes: None,
        };
        let chunk = SNAPSHOT_CHUNK;
        // Nothing to derive it from.
        assert_eq!(snapshot_bucket_limit(&derived, 0, None), None);
        // Five snapshots of 8 chunks, and a quarter more.
        assert_eq!(
            snapshot_bucket_limit(&derived, 9 * chunk, Some(8)),
            Some(5 * 8 * chunk * 5 / 4)
        );
        // A bucket holding more (orphans, an older layout's) keeps it, and room for one.
        assert_eq!(
            snapshot_bucket_limit(&derived, 100 * chunk, Some(8)),
            Some(100 * chunk + 10 * chunk)
        );
        // As stated, but never below what it holds.
        let stated = SnapshotBucket {
            keep: 3,
            bytes: Some(chunk),
        };
        assert_eq!(snapshot_bucket_limit(&stated, 0, Some(8)), Some(chunk));
        assert_eq!(
            snapshot_bucket_limit(&stated, 3 * chunk, Some(8)),
            Some(3 * chunk)
        );
    }
}
