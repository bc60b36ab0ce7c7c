//! Sending a snapshot's file to the object store, in the object store's own format: its
//! chunks on `$O.<bucket>.C.<nuid>`, then its metadata on `$O.<bucket>.M.<name>` with a
//! rollup, so that the object store's readers (`get`, `list`, `nats object get`) read it
//! as any object. Unlike the client's `put`, the upload knows its chunks' subject: one
//! that fails (JetStream out of room, a dropped connection, a stop) removes what it sent;
//! one whose writer's lease passes to another replica stops and removes it too, and
//! writes its metadata only after renewing the lease in the term it started in (the
//! fence, [`super::lease`]). What a killed writer left is found and removed by the next
//! holder of the lease ([`Bucket::sweep`]): chunks no object's metadata names.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use async_nats::jetstream::{self, object_store::ObjectInfo};
use base64::engine::general_purpose::URL_SAFE;
use base64::Engine as _;
use futures::TryStreamExt as _;
use sha2::{Digest as _, Sha256};
use tokio::io::AsyncReadExt as _;

use super::lease::Lease;

/// Bytes of each chunk, as the object store's own.
pub const CHUNK: usize = 128 << 10;
/// How often an upload looks whether its writer still holds the lease.
const LEASE_LOOK: Duration = Duration::from_secs(1);
/// How long a chunk not of this version's making (an older version's upload) must have
/// been the last of its object before it is taken for an abandoned one: an upload under
/// way sends one far more often.
pub const ORPHAN_AGE: Duration = Duration::from_secs(120);
/// How long removing what a failed upload sent may take before it is left to the sweep.
const CLEAN_UP: Duration = Duration::from_secs(10);

/// The snapshots' bucket as an upload writes it: its stream and its name.
#[derive(Clone)]
pub struct Bucket {
    js: jetstream::Context,
    stream: jetstream::stream::Stream,
    name: String,
}

/// A snapshot's file and what its metadata says.
pub struct Object<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its metadata: what it is.
    pub metadata: &'a HashMap<String, String>,
    /// The file.
    pub file: &'a Path,
}

/// What an upload goes on under: the upload stops once `lease` is no longer held in
/// `term`, or once `stop` is cancelled (the service stopping).
pub struct Fence<'a> {
    /// The writer's lease.
    pub lease: &'a Lease,
    /// The term the upload began in.
    pub term: u64,
    /// The service's stop.
    pub stop: &'a tokio_util::sync::CancellationToken,
}

/// Why an upload sent nothing that stays.
#[derive(Debug, thiserror::Error)]
pub enum Failed {
    /// The writer's lease passed to another replica or lapsed: another may be writing.
    #[error("{0}; nothing of the snapshot is left")]
    Lost(String),
    /// Sending it failed.
    #[error("{0:#}")]
    Other(anyhow::Error),
}

/// What a sweep removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Chunk subjects no object's metadata named, removed.
    pub chunks: Vec<String>,
    /// Marks of removed objects (the client's deletes leave one each), removed.
    pub marks: usize,
    /// Chunk subjects of another version's upload, too recent to be taken as abandoned.
    pub young: usize,
}

impl Bucket {
    /// The bucket `name`'s stream, `OBJ_<name>`.
    pub async fn open(js: &jetstream::Context, name: &str) -> anyhow::Result<Bucket> {
        let stream = js
            .get_stream(format!("OBJ_{name}"))
            .await
            .with_context(|| format!("opening the stream of object store {name}"))?;
        Ok(Bucket {
            js: js.clone(),
            stream,
            name: name.to_owned(),
        })
    }

    /// The stream as it stands now.
    pub async fn info(&self) -> anyhow::Result<jetstream::stream::Info> {
        let mut stream = self.stream.clone();
        Ok(stream
            .info()
            .await
            .with_context(|| format!("looking up the stream of object store {}", self.name))?
            .clone())
    }

    /// Sends `object` in chunks of [`CHUNK`] bytes, at most `rate` bytes a second, while
    /// `fence` holds; then renews the lease in its term and writes the metadata; then
    /// removes the chunks of the object of that name it replaces, if any. On any failure
    /// the chunks it sent are removed before it returns.
    pub async fn send(
        &self,
        object: &Object<'_>,
        fence: &Fence<'_>,
        rate: Option<u64>,
    ) -> Result<ObjectInfo, Failed> {
        let nuid = format!("t{}_{}", fence.term, uuid::Uuid::new_v4().simple());
        let chunks = self.chunks_subject(&nuid);
        let sent = self.send_chunks(object, fence, rate, &chunks).await;
        let sent = match sent {
            Ok(sent) => sent,
            Err(e) => {
                self.clean_up(&chunks).await;
                return Err(e);
            }
        };
        // The fence: the lease is this replica's for its life from here, and was so
        // since the upload began, so nobody else has written or swept meanwhile.
        if let Err(lost) = fence.lease.renew(fence.term).await {
            self.clean_up(&chunks).await;
            return Err(Failed::Lost(lost));
        }
        let replaced = self.existing(object.name).await;
        let info = ObjectInfo {
            name: object.name.to_owned(),
            description: Some(object.description.to_owned()),
            metadata: object.metadata.clone(),
            headers: None,
            options: Some(async_nats::jetstream::object_store::ObjectOptions {
                link: None,
                max_chunk_size: Some(CHUNK),
            }),
            bucket: self.name.clone(),
            nuid: nuid.clone(),
            size: sent.bytes,
            chunks: sent.chunks,
            modified: Some(async_nats::datetime::now()),
            digest: Some(format!("SHA-256={}", URL_SAFE.encode(sent.digest))),
            deleted: false,
        };
        if let Err(e) = self.publish_meta(&info).await {
            self.clean_up(&chunks).await;
            return Err(Failed::Other(e));
        }
        if let Some(old) = replaced.filter(|old| old.nuid != nuid) {
            if let Err(e) = self.purge(&self.chunks_subject(&old.nuid)).await {
                tracing::warn!(
                    error = format!("{e:#}"),
                    "removing a replaced snapshot's chunks"
                );
            }
        }
        Ok(info)
    }

    async fn send_chunks(
        &self,
        object: &Object<'_>,
        fence: &Fence<'_>,
        rate: Option<u64>,
        subject: &str,
    ) -> Result<Sent, Failed> {
        let fail = |e: anyhow::Error| Failed::Other(e);
        let mut file = tokio::fs::File::open(object.file)
            .await
            .with_context(|| format!("opening {}", object.file.display()))
            .map_err(fail)?;
        let started = Instant::now();
        let mut looked = Instant::now();
        let mut hash = Sha256::new();
        let mut sent = Sent::default();
        loop {
            let mut chunk = Vec::with_capacity(CHUNK);
            let n = (&mut file)
                .take(CHUNK as u64)
                .read_to_end(&mut chunk)
                .await
                .with_context(|| format!("reading {}", object.file.display()))
                .map_err(fail)?;
            if n == 0 {
                break;
            }
            if fence.stop.is_cancelled() {
                return Err(fail(anyhow::anyhow!(
                    "the service stopped while {} was sent",
                    object.name
                )));
            }
            if looked.elapsed() >= LEASE_LOOK {
                looked = Instant::now();
                // A look that finds it changed has the renewal decide (and name the
                // replica that holds it now).
                if !fence.lease.holds(fence.term).await {
                    fence.lease.renew(fence.term).await.map_err(Failed::Lost)?;
                }
            }
            hash.update(&chunk);
            let ack = self
                .js
                .publish(subject.to_owned(), chunk.into())
                .await
                .map_err(|e| fail(anyhow::anyhow!("sending a chunk of {}: {e}", object.name)))?;
            ack.await
                .map_err(|e| fail(anyhow::anyhow!("sending a chunk of {}: {e}", object.name)))?;
            sent.chunks += 1;
            sent.bytes += n;
            if let Some(rate) = rate.filter(|r| *r > 0) {
                let due = Duration::from_secs_f64(sent.bytes as f64 / rate as f64);
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    tokio::time::sleep(wait).await;
                }
            }
        }
        sent.digest = hash.finalize().into();
        Ok(sent)
    }

    /// The object of `name` as its metadata stands, if any.
    async fn existing(&self, name: &str) -> Option<ObjectInfo> {
        let message = self
            .stream
            .direct_get_last_for_subject(self.meta_subject(name))
            .await
            .ok()?;
        serde_json::from_slice::<ObjectInfo>(&message.payload)
            .ok()
            .filter(|info| !info.deleted)
    }

    async fn publish_meta(&self, info: &ObjectInfo) -> anyhow::Result<()> {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(async_nats::header::NATS_ROLLUP, "sub");
        let payload = serde_json::to_vec(info).context("the snapshot's metadata")?;
        self.js
            .publish_with_headers(self.meta_subject(&info.name), headers, payload.into())
            .await
            .with_context(|| format!("sending the metadata of {}", info.name))?
            .await
            .with_context(|| format!("sending the metadata of {}", info.name))?;
        Ok(())
    }

    /// Removes an object: its metadata first (it is listed no more), then its chunks
    /// (left to the sweep if this fails).
    pub async fn remove(&self, info: &ObjectInfo) -> anyhow::Result<()> {
        self.purge(&self.meta_subject(&info.name)).await?;
        self.purge(&self.chunks_subject(&info.nuid)).await
    }

    /// Removes the chunks no object of `objects` (the bucket's, listed under the lock
    /// that keeps this replica's own uploads out) names, as the holder of the lease in
    /// `term`: this version's (their subject says the term they were sent in) at once,
    /// since a writer whose term is over sends no metadata; another version's once their
    /// last chunk is [`ORPHAN_AGE`] old. And the marks the client's deletes leave.
    pub async fn sweep(&self, objects: &[ObjectInfo], term: u64) -> anyhow::Result<Swept> {
        let named: HashSet<&str> = objects
            .iter()
            .filter(|o| !o.deleted)
            .map(|o| o.nuid.as_str())
            .collect();
        let prefix = self.chunks_subject("");
        let subjects: Vec<(String, usize)> = self
            .stream
            .info_with_subjects(format!("{prefix}>"))
            .await
            .context("listing the bucket's chunks")?
            .try_collect()
            .await
            .context("listing the bucket's chunks")?;
        let mut swept = Swept::default();
        for (subject, _) in subjects {
            let Some(nuid) = subject.strip_prefix(&prefix) else {
                continue;
            };
            if named.contains(nuid) {
                continue;
            }
            let abandoned = match term_of(nuid) {
                Some(_) => true,
                None => self.last_is_older(&subject, ORPHAN_AGE).await,
            };
            if !abandoned {
                swept.young += 1;
                continue;
            }
            self.purge(&subject).await?;
            tracing::info!(subject, term, "removed chunks no snapshot names");
            swept.chunks.push(subject);
        }
        for mark in objects.iter().filter(|o| o.deleted) {
            self.purge(&self.meta_subject(&mark.name)).await?;
            swept.marks += 1;
        }
        Ok(swept)
    }

    /// Whether the last message on `subject` is older than `age` (not when unknown).
    async fn last_is_older(&self, subject: &str, age: Duration) -> bool {
        match self.stream.direct_get_last_for_subject(subject).await {
            Ok(message) => {
                let at = message.time.unix_timestamp();
                jiff::Timestamp::now().as_second().saturating_sub(at) > age.as_secs() as i64
            }
            Err(_) => false,
        }
    }

    /// Removes what a failed upload sent, bounded: what is left is the sweep's.
    async fn clean_up(&self, subject: &str) {
        match tokio::time::timeout(CLEAN_UP, self.purge(subject)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(
                error = format!("{e:#}"),
                subject,
                "a failed upload's chunks are left to the next sweep"
            ),
            Err(_) => tracing::warn!(
                subject,
                "a failed upload's chunks are left to the next sweep"
            ),
        }
    }

    async fn purge(&self, subject: &str) -> anyhow::Result<()> {
        self.stream
            .purge()
            .filter(subject)
            .await
            .with_context(|| format!("purging {subject}"))?;
        Ok(())
    }

    fn chunks_subject(&self, nuid: &str) -> String {
        format!("$O.{}.C.{nuid}", self.name)
    }

    fn meta_subject(&self, name: &str) -> String {
        format!("$O.{}.M.{}", self.name, URL_SAFE.encode(name))
    }
}

/// What an upload's chunks came to.
#[derive(Default)]
struct Sent {
    chunks: usize,
    bytes: usize,
    digest: [u8; 32],
}

/// The lease's term an upload of this version was sent in, from its chunks' subject
/// (`t<term>_<uuid>`); `None` for another's (the client's own are 22 letters and digits).
fn term_of(nuid: &str) -> Option<u64> {
    let (term, id) = nuid.strip_prefix('t')?.split_once('_')?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| term.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_s_term_is_read_from_its_chunks_subject_and_another_s_is_not() {
        let ours = format!("t42_{}", uuid::Uuid::new_v4().simple());
        assert_eq!(term_of(&ours), Some(42));
        assert_eq!(term_of("tUVWXYZ0123456789abcdefg"), None);
        assert_eq!(term_of("t4_notahexid"), None);
    }
}
