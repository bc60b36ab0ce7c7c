//! The snapshot writer's lease: one value in the `{stream}_SNAPSHOT_LEASE` bucket, naming
//! the replica that writes snapshots and the layout of its store. It lapses
//! [`crate::nats::buckets::SNAPSHOT_LEASE_TTL`] after it was last written (the bucket's
//! maximum age), so a writer that dies lets another take over.
//!
//! A hold has a term: the revision at which this replica took the lease, kept while each
//! renewal follows its own last write. An upload is fenced by its term ([`Lease::renew`]
//! just before its metadata is written): a writer whose lease lapsed, even for a moment,
//! and was taken by another, finds its term over and sends nothing more, so two writers
//! never both publish.
//!
//! Beside it, each replica says which layout it runs (`layouts.<layout>.<replica>`, lapsing
//! as the lease does): what a prune keeps the newest snapshot of ([`Lease::in_use`]).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, kv};
use futures::TryStreamExt as _;

/// The lease's key.
const KEY: &str = "writer";
/// The first token of the keys by which each replica says which layout it runs.
const LAYOUTS: &str = "layouts";
/// How many times a release reads the lease and removes it where a write of this
/// replica's own moved it on between.
const RELEASE_TRIES: usize = 3;
/// How long listing the bucket's keys may take before what is in use counts as unknown:
/// a listing reads an ordered consumer until the server says it reached the end, so a
/// server that stops answering would hold the snapshot's prune for ever.
const LISTING: Duration = Duration::from_secs(10);

/// This replica's hold on the lease.
#[derive(Clone)]
pub struct Lease {
    bucket: kv::Store,
    /// What this replica writes as the lease's value: its id and its layout.
    me: bytes::Bytes,
    /// Its key saying which layout it runs.
    layout_key: String,
    /// Its hold, while it has one: one change of the lease at a time.
    held: Arc<tokio::sync::Mutex<Option<Held>>>,
    /// How many replicas are live, this one included (`crate::keys::replicas`).
    live: Arc<dyn Fn() -> u32 + Send + Sync>,
    /// How long the lease lasts unrenewed, in milliseconds: the bucket's maximum age, read
    /// again at each [`Lease::announce`], so that a life an operator changes under
    /// running replicas sets their pace from their next renewal.
    life_ms: Arc<AtomicU64>,
}

/// A hold on the lease: the revision it was taken at, and the revision of its last write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    term: u64,
    revision: u64,
}

/// Who holds the lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The replica's id.
    pub replica: String,
    /// The layout of its read models.
    pub layout: String,
}

/// The layouts the live replicas run, as they say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InUse {
    /// Each layout some replica says it runs.
    pub layouts: BTreeSet<String>,
    /// Whether some live replica runs a layout not known here: more replicas are live
    /// than say which layout they run (an older version says nothing), or the bucket did
    /// not answer.
    pub unknown: bool,
}

impl Lease {
    /// The lease beside `stream`, as held by `replica` (whose store has this version's
    /// layout); `live` counts the replicas live.
    pub async fn open(
        js: &jetstream::Context,
        stream: &str,
        replica: &str,
        live: Arc<dyn Fn() -> u32 + Send + Sync>,
    ) -> anyhow::Result<Lease> {
        let bucket = crate::nats::buckets::SNAPSHOT_LEASE
            .open(js, stream)
            .await?;
        let layout = racing_projections::layout();
        let me = format!("{replica} {layout}");
        let lease = Lease {
            bucket,
            me: me.into(),
            layout_key: format!("{LAYOUTS}.{layout}.{replica}"),
            held: Arc::default(),
            live,
            life_ms: Arc::new(AtomicU64::new(millis(
                crate::nats::buckets::SNAPSHOT_LEASE_TTL,
            ))),
        };
        lease.read_life().await;
        Ok(lease)
    }

    /// Reads the life the bucket has now (an operator may have changed it); where it
    /// cannot be read, the life stays as last read (at first, the set-up's).
    async fn read_life(&self) {
        // The bucket's `status` is what it was opened with: the stream's information is
        // asked for again.
        match self.bucket.stream.get_info().await {
            Ok(info) if !info.config.max_age.is_zero() => {
                let life = millis(info.config.max_age);
                if self.life_ms.swap(life, Ordering::Relaxed) != life {
                    tracing::debug!(life_ms = life, "the snapshot writer's lease's life");
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(error = %e, "reading the life of the snapshot writer's lease");
            }
        }
    }

    /// How often a holder renews the lease, and a replica says which layout it runs: a
    /// third of the lease's life, so that one renewal lost to a slow answer leaves it held.
    pub fn renew_every(&self) -> Duration {
        (Duration::from_millis(self.life_ms.load(Ordering::Relaxed)) / 3)
            .max(Duration::from_millis(100))
    }

    /// Takes the lease when nobody holds it, or renews it when this replica does: whether
    /// this replica holds it after. One attempt.
    pub async fn hold(&self) -> bool {
        let mut held = self.held.lock().await;
        *held = self.try_hold(*held).await;
        held.is_some()
    }

    async fn try_hold(&self, held: Option<Held>) -> Option<Held> {
        match self.bucket.entry(KEY).await {
            Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
                if entry.value != self.me {
                    return None;
                }
                let revision = self
                    .bucket
                    .update(KEY, self.me.clone(), entry.revision)
                    .await
                    .ok()?;
                // The same term while nobody wrote the lease since this replica last did.
                let term = held
                    .filter(|h| h.revision == entry.revision)
                    .map_or(revision, |h| h.term);
                Some(Held { term, revision })
            }
            Ok(_) => {
                let revision = self.bucket.create(KEY, self.me.clone()).await.ok()?;
                Some(Held {
                    term: revision,
                    revision,
                })
            }
            // Not known: a hold keeps its term, and the fence decides.
            Err(e) => {
                tracing::debug!(error = %e, "reading the snapshot writer's lease");
                held
            }
        }
    }

    /// The term of this replica's hold, while it holds the lease.
    pub async fn term(&self) -> Option<u64> {
        self.held.lock().await.map(|h| h.term)
    }

    /// The fence: renews the lease if this replica has held it without a break since
    /// `term` began, so that it is this replica's for the lease's life from now. `Err`
    /// says who holds it instead (or that nobody answered), and the hold is over.
    pub async fn renew(&self, term: u64) -> Result<(), String> {
        let mut held = self.held.lock().await;
        let Some(h) = held.filter(|h| h.term == term) else {
            return Err(self.lost().await);
        };
        match self.bucket.update(KEY, self.me.clone(), h.revision).await {
            Ok(revision) => {
                *held = Some(Held { term, revision });
                Ok(())
            }
            Err(_) => {
                *held = None;
                Err(self.lost().await)
            }
        }
    }

    /// Whether this replica still holds the lease in `term`, as the bucket says now: one
    /// read, to stop an upload early.
    pub async fn holds(&self, term: u64) -> bool {
        let Some(h) = *self.held.lock().await else {
            return false;
        };
        match self.bucket.entry(KEY).await {
            Ok(Some(entry)) => {
                h.term == term
                    && entry.operation == kv::Operation::Put
                    && entry.revision == h.revision
                    && entry.value == self.me
            }
            Ok(None) => false,
            // Unknown: the fence decides.
            Err(_) => true,
        }
    }

    /// What a writer whose hold ended says of it.
    async fn lost(&self) -> String {
        match self.holder().await {
            Some(holder) => format!(
                "the snapshot writer's lease passed to replica {} (layout {})",
                holder.replica, holder.layout
            ),
            None => "the snapshot writer's lease lapsed".to_owned(),
        }
    }

    /// Who holds it now, if anyone (or `None` if the bucket does not answer).
    pub async fn holder(&self) -> Option<Holder> {
        let entry = self.bucket.entry(KEY).await.ok()??;
        if entry.operation != kv::Operation::Put {
            return None;
        }
        let value = String::from_utf8(entry.value.to_vec()).ok()?;
        let (replica, layout) = value.split_once(' ')?;
        Some(Holder {
            replica: replica.to_owned(),
            layout: layout.to_owned(),
        })
    }

    /// Whether `holder` is this replica.
    pub fn is_me(&self, holder: &Holder) -> bool {
        self.me == format!("{} {}", holder.replica, holder.layout)
    }

    /// Lets go of it, if this replica holds it, so that another may take it at once.
    /// Whatever revision it is at: a renewal cut short (the one that runs while a
    /// snapshot is made ends with it) may have moved it on without this replica hearing
    /// of it, and the lease stayed taken until it lapsed.
    pub async fn release(&self) {
        let mut held = self.held.lock().await;
        if held.take().is_none() {
            return;
        }
        for _ in 0..RELEASE_TRIES {
            let revision = match self.bucket.entry(KEY).await {
                Ok(Some(entry))
                    if entry.operation == kv::Operation::Put && entry.value == self.me =>
                {
                    entry.revision
                }
                // Another's, or nobody's, or no answer: nothing of this replica's to let go.
                _ => return,
            };
            if (self
                .bucket
                .delete_expect_revision(KEY, Some(revision))
                .await)
                .is_ok()
            {
                return;
            }
        }
    }

    /// Says, for the lease's life, that this replica runs this version's layout.
    pub async fn announce(&self) {
        self.read_life().await;
        let layout = racing_projections::layout();
        if let Err(e) = self
            .bucket
            .put(
                &self.layout_key,
                bytes::Bytes::from_static(layout.as_bytes()),
            )
            .await
        {
            tracing::debug!(error = %e, "saying which layout this replica runs");
        }
    }

    /// Stops saying so, as this replica stops.
    pub async fn withdraw(&self) {
        let _ = self.bucket.delete(&self.layout_key).await;
    }

    /// The layouts the live replicas say they run, and whether others run one not known.
    pub async fn in_use(&self) -> InUse {
        let listing = async {
            let keys = self.bucket.keys().await.ok()?;
            keys.try_collect::<Vec<String>>().await.ok()
        };
        let Ok(Some(keys)) = tokio::time::timeout(LISTING, listing).await else {
            return unknown();
        };
        let mut layouts = BTreeSet::new();
        let mut replicas = 0usize;
        for key in keys {
            let mut parts = key.splitn(3, '.');
            if let (Some(LAYOUTS), Some(layout), Some(_)) =
                (parts.next(), parts.next(), parts.next())
            {
                layouts.insert(layout.to_owned());
                replicas += 1;
            }
        }
        InUse {
            layouts,
            unknown: (self.live)() as usize > replicas,
        }
    }
}

/// What is in use where the bucket does not answer in time: nothing can be ruled out.
fn unknown() -> InUse {
    InUse {
        layouts: BTreeSet::new(),
        unknown: true,
    }
}

/// `d` in whole milliseconds, as the lease's life is kept.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
