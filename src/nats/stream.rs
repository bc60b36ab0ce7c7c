//! The stream of the feed contract: its settings and the incarnation a stream info
//! describes, made or brought up to date, and what a failure to make it says.

use std::time::Duration;

use async_nats::jetstream::{self, stream};
use racing_events::{ALL_SUBJECTS, MAX_PAYLOAD_BYTES};

use crate::retry::Fatal;

/// Bytes of headers a message may carry on top of its payload.
const HEADER_ALLOWANCE: usize = 4096;

/// The stream settings of the feed contract: every `racing.>` subject, file storage, kept
/// forever, deduplicated inside `duplicate_window`.
pub fn stream_config(name: &str, duplicate_window: Duration, replicas: usize) -> stream::Config {
    stream::Config {
        num_replicas: replicas.max(1),
        name: name.to_owned(),
        description: Some("Racing feed: the source of truth of every read model".into()),
        subjects: vec![ALL_SUBJECTS.to_owned()],
        storage: stream::StorageType::File,
        retention: stream::RetentionPolicy::Limits,
        duplicate_window,
        // JetStream counts headers (Nats-Msg-Id) in the message size: leave room for them
        // on top of a contract-sized payload.
        max_message_size: i32::try_from(MAX_PAYLOAD_BYTES + HEADER_ALLOWANCE).unwrap_or(i32::MAX),
        ..Default::default()
    }
}

/// Which incarnation of a stream `info` describes: its name and when it was created. A
/// stream made again under the same name (NATS's volumes wiped, a new cluster) numbers
/// its messages from 1 again, so read models built from the one before must not be kept.
pub fn stream_identity(info: &stream::Info) -> String {
    let created = jiff::Timestamp::from_nanosecond(info.created.unix_timestamp_nanos())
        .map_or_else(
            |_| info.created.unix_timestamp_nanos().to_string(),
            |t| t.to_string(),
        );
    format!("{} created {created}", info.config.name)
}

/// Creates the stream, or brings the settings of an existing one up to date: one
/// attempt, whose failure says whether asking again may help (see [`stream_failure`]);
/// start-up asks again through [`Connection::ready`](super::client::Connection::ready).
pub async fn ensure_stream(
    js: &jetstream::Context,
    name: &str,
    duplicate_window: Duration,
) -> anyhow::Result<stream::Info> {
    ensure_replicated_stream(js, name, duplicate_window, None).await
}

/// [`ensure_stream`] with `replicas` copies of the stream in a JetStream cluster; `None`
/// keeps the replicas of an existing stream (an operator may have set them), or 1.
pub async fn ensure_replicated_stream(
    js: &jetstream::Context,
    name: &str,
    duplicate_window: Duration,
    replicas: Option<usize>,
) -> anyhow::Result<stream::Info> {
    let replicas = match replicas {
        Some(r) => r,
        None => match js.get_stream(name).await {
            Ok(mut existing) => existing.info().await.map_or(1, |i| i.config.num_replicas),
            Err(_) => 1,
        },
    };
    js.create_or_update_stream(stream_config(name, duplicate_window, replicas))
        .await
        .map_err(|e| stream_failure(e, name))
}

/// A failure to make or update stream `name`, as an error for [`crate::retry::patiently`]:
/// [`Fatal`] where asking again does not help (JetStream off, settings refused); otherwise
/// (no answer in time, a cluster still electing its leader) an error to try again after.
pub fn stream_failure(e: jetstream::context::CreateStreamError, name: &str) -> anyhow::Error {
    use jetstream::context::CreateStreamErrorKind as Kind;
    match e.kind() {
        Kind::JetStreamUnavailable => Fatal(
            "JetStream is not enabled on this NATS server (nothing answers its API); \
             run nats-server with JetStream (`-js`, or the `jetstream` block of nats.conf)"
                .to_owned(),
        )
        .into(),
        Kind::JetStream(api) if refusal_stands(api.error_code()) => {
            Fatal(format!("NATS refuses stream {name}: {api}")).into()
        }
        Kind::EmptyStreamName | Kind::InvalidStreamName | Kind::DomainAndExternalSet => {
            Fatal(format!("stream {name}: {e}")).into()
        }
        _ => anyhow::Error::from(e).context(format!("creating or updating stream {name}")),
    }
}

/// Whether a JetStream API error stands however often it is asked again: JetStream off
/// for the account, settings the server refuses, limits reached. Not those of a cluster
/// that is starting or electing a leader (unavailable, no peers, insufficient resources
/// while nodes join), which pass.
fn refusal_stands(code: jetstream::ErrorCode) -> bool {
    use jetstream::ErrorCode as C;
    [
        C::JETSTREAM_NOT_ENABLED,
        C::JETSTREAM_NOT_ENABLED_FOR_ACCOUNT,
        C::BAD_REQUEST,
        C::INVALID_JSON,
        C::STREAM_INVALID_CONFIG,
        C::STREAM_REPLICAS_NOT_SUPPORTED,
        C::STREAM_REPLICAS_NOT_UPDATABLE,
        C::STREAM_SUBJECT_OVERLAP,
        C::STREAM_NAME_EXIST,
        C::STREAM_MAX_BYTES_REQUIRED,
        C::STREAM_MAX_STREAM_BYTES_EXCEEDED,
        C::MAXIMUM_STREAMS_LIMIT,
        C::ACCOUNT_RESOURCES_EXCEEDED,
        C::STORAGE_RESOURCES_EXCEEDED,
        C::MEMORY_RESOURCES_EXCEEDED,
    ]
    .contains(&code)
}
