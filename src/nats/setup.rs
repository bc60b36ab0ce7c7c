//! Setting up a deployment's NATS: the stream and its key-value buckets, made or brought
//! up to date by the set-up user alone (`racing setup`, or a service with a server of its
//! own). A service finds them made; it may not change them, so a replica taken over
//! cannot shorten the log's limits and purge the source of truth.

use std::time::Duration;

use async_nats::jetstream::{self, stream};

use super::buckets::{self, SnapshotBucket};
use super::client::Connection;

/// What the set-up makes the stream with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSettings {
    /// The stream's name.
    pub name: String,
    /// JetStream's duplicate window.
    pub duplicate_window: Duration,
    /// Copies in a JetStream cluster; `None` keeps an existing stream's, or 1.
    pub replicas: Option<usize>,
    /// How long a link of the subscription forms may be followed: the link bucket keeps
    /// each link that long ([`buckets::signups`]).
    pub link_ttl: Duration,
}

/// Makes the stream or brings its settings up to date, then makes each bucket beside it
/// that is missing, with as many copies as the stream (so keys survive what the log
/// survives), and bounds the snapshots' bucket as the defaults say
/// ([`SnapshotBucket::default`]). Each step is asked again with the connection's
/// patience, and ends at once on a refusal that asking again does not mend (see
/// [`Connection::ready`]).
pub async fn set_up(
    connection: &Connection,
    settings: &StreamSettings,
) -> anyhow::Result<stream::Info> {
    set_up_with(connection, settings, &SnapshotBucket::default()).await
}

/// [`set_up`], with the snapshots' bucket bounded as `snapshots` says.
pub async fn set_up_with(
    connection: &Connection,
    settings: &StreamSettings,
    snapshots: &SnapshotBucket,
) -> anyhow::Result<stream::Info> {
    let js = connection.jetstream();
    let name = &settings.name;
    let info = connection
        .ready(&format!("creating or updating stream {name}"), || {
            super::stream::ensure_replicated_stream(
                &js,
                name,
                settings.duplicate_window,
                settings.replicas,
            )
        })
        .await?;
    let replicas = info.config.num_replicas.max(1);
    for bucket in buckets::ALL {
        let bucket = if bucket == buckets::SIGNUPS {
            buckets::signups(settings.link_ttl)
        } else {
            bucket
        };
        connection
            .ready(
                &format!("making key-value bucket {}", bucket.name(name)),
                || bucket.make(&js, name, replicas),
            )
            .await?;
    }
    let bucket = buckets::snapshots_name(name);
    connection
        .ready(&format!("making object store {bucket}"), || {
            buckets::make_snapshot_bucket(&js, name, replicas)
        })
        .await?;
    connection
        .ready(&format!("bounding object store {bucket}"), || {
            buckets::size_snapshot_bucket(&js, name, snapshots)
        })
        .await?;
    Ok(info)
}

/// The stream `name` as the set-up made it: what a service checks at start-up instead of
/// making it. One attempt; a stream not found says who makes it.
pub async fn existing_stream(js: &jetstream::Context, name: &str) -> anyhow::Result<stream::Info> {
    use jetstream::context::GetStreamErrorKind as Kind;
    match js.get_stream(name).await {
        Ok(stream) => Ok(stream.cached_info().clone()),
        Err(e) => match e.kind() {
            Kind::JetStream(api) if api.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND => {
                Err(anyhow::anyhow!(
                    "stream {name} does not exist on this NATS: `racing setup`, as the \
                     set-up user, makes it and its buckets (docs/security.md)"
                ))
            }
            _ => Err(anyhow::Error::from(e).context(format!("looking up stream {name}"))),
        },
    }
}
