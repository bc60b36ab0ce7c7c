//! Open WebSocket connections per key, capped across every replica: a slot for each,
//! freed when it drops.

use std::sync::Arc;

use crate::keys::digest::KeyId;
use crate::keys::replicas::Replicas;

/// Open WebSocket connections per key, capped across every replica.
pub struct ConnectionSlots {
    replicas: Arc<Replicas>,
    pub(super) max_per_key: usize,
}

/// One open connection; the slot frees when it drops.
pub struct Slot {
    pub(super) replicas: Arc<Replicas>,
    pub(super) key: KeyId,
    /// When it opened, its place among the key's connections.
    pub(super) opened: u64,
}

impl ConnectionSlots {
    /// At most `max_per_key` connections for each key (unless the key sets its own), on
    /// all `replicas` together.
    pub fn new(max_per_key: usize, replicas: Arc<Replicas>) -> Arc<ConnectionSlots> {
        Arc::new(ConnectionSlots {
            replicas,
            max_per_key,
        })
    }

    pub(super) fn take(&self, key: KeyId, max: usize) -> Option<Slot> {
        let opened = self.replicas.open(key, max)?;
        Some(Slot {
            replicas: self.replicas.clone(),
            key,
            opened,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.replicas.close(self.key, self.opened);
    }
}
