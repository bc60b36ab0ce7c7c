//! The snapshot writer's lease: one value in the `{stream}_SNAPSHOT_LEASE` bucket, naming
//! the replica that writes snapshots and the layout of its store. It lapses
//! [`crate::nats::buckets::SNAPSHOT_LEASE_TTL`] after it was last written (the bucket's
//! maximum age), so a writer that dies lets another take over.

use async_nats::jetstream::{self, kv};

/// The lease's key.
const KEY: &str = "writer";

/// This replica's hold on the lease.
#[derive(Clone)]
pub struct Lease {
    bucket: kv::Store,
    /// What this replica writes as the lease's value: its id and its layout.
    me: bytes::Bytes,
}

/// Who holds the lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The replica's id.
    pub replica: String,
    /// The layout of its read models.
    pub layout: String,
}

impl Lease {
    /// The lease beside `stream`, as held by `replica` (whose store has this version's
    /// layout).
    pub async fn open(
        js: &jetstream::Context,
        stream: &str,
        replica: &str,
    ) -> anyhow::Result<Lease> {
        let bucket = crate::nats::buckets::SNAPSHOT_LEASE
            .open(js, stream)
            .await?;
        let me = format!("{replica} {}", racing_projections::layout());
        Ok(Lease {
            bucket,
            me: me.into(),
        })
    }

    /// Takes the lease when nobody holds it, or renews it when this replica does: whether
    /// this replica holds it after. One attempt.
    pub async fn hold(&self) -> bool {
        match self.bucket.entry(KEY).await {
            Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
                entry.value == self.me
                    && self
                        .bucket
                        .update(KEY, self.me.clone(), entry.revision)
                        .await
                        .is_ok()
            }
            Ok(_) => self.bucket.create(KEY, self.me.clone()).await.is_ok(),
            Err(e) => {
                tracing::debug!(error = %e, "reading the snapshot writer's lease");
                false
            }
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
    pub async fn release(&self) {
        if let Ok(Some(entry)) = self.bucket.entry(KEY).await {
            if entry.value == self.me {
                let _ = self
                    .bucket
                    .delete_expect_revision(KEY, Some(entry.revision))
                    .await;
            }
        }
    }
}
