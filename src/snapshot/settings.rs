//! How a service writes and uses snapshots.

use std::time::Duration;

/// How a service writes and uses snapshots.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Whether this replica may write them (when it holds the lease).
    pub write: bool,
    /// Whether a start with an empty, older or damaged store loads the newest one.
    pub load: bool,
    /// A snapshot is due once this many events were applied since the last one...
    pub every_events: u64,
    /// ...or this long has passed since it, with at least one event since.
    pub every: Duration,
    /// How many are kept; older ones are removed once a new one is written.
    pub keep: usize,
    /// How long a start with no snapshot of its layout waits for the one another replica
    /// of its layout, holding the writer's lease, will publish.
    pub wait: Duration,
    /// Bytes a second a snapshot is sent at most; `None`: as fast as JetStream takes it.
    pub send_rate: Option<u64>,
    /// JetStream's file storage limit of each NATS server (`max_file_store`), where the
    /// operator states it: the room the log shares with the snapshots' bucket.
    pub file_store: Option<u64>,
    /// Bytes of JetStream's file storage a snapshot must leave to the log.
    pub log_margin: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            write: true,
            load: true,
            every_events: 250_000,
            every: Duration::from_secs(3600),
            keep: crate::nats::buckets::SNAPSHOTS_KEPT,
            wait: Duration::from_secs(3600),
            send_rate: None,
            file_store: None,
            log_margin: 1 << 30,
        }
    }
}
