//! What a rebuild says of itself: where it stands, how far it is, and where its fresh
//! store started (`GET /rebuild`, `racing rebuild`).

use serde::{Deserialize, Serialize};

/// Where a rebuild stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// None has run since start.
    #[default]
    Idle,
    /// Folding the log into a fresh store.
    Running,
    /// Swapped in.
    Done,
    /// Stopped with an error; the store in use was kept.
    Failed,
}

/// A rebuild's progress, as `GET /rebuild` shows it and `racing rebuild` draws it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Status {
    /// Where it stands.
    pub state: State,
    /// When it started (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// The stream sequence the fresh store has reached.
    pub checkpoint: u64,
    /// The stream's last sequence when the rebuild last looked.
    pub stream_last_seq: u64,
    /// Messages folded so far.
    pub folded: u64,
    /// Whether the fold up to the projector's checkpoint runs (or ran) in a worker
    /// process of its own, rather than in the service's.
    #[serde(default)]
    pub worker: bool,
    /// Seconds the worker has been held stopped so that the API's requests had the CPU
    /// (it gives way while the rest of the machine is busy: `pace`).
    #[serde(default)]
    pub held_secs: f64,
    /// Times the rebuild's consumer delivered nothing below the projector's checkpoint
    /// and was made again (after 3 s of nothing, or at once while it holds the
    /// projector): as after a stream leader's loss.
    #[serde(default)]
    pub consumer_stalls: u32,
    /// Documents read lately that were read from the fresh store before its swap, so
    /// that they are in its cache when requests come to it.
    #[serde(default)]
    pub warmed: u64,
    /// The directory being built, or swapped in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What was found wrong with the store in use, when the rebuild repairs it: the
    /// replaced store is then moved aside for inspection rather than removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<String>,
    /// The snapshot the fresh store was loaded from before it caught up with the log
    /// (`racing snapshot load`); none: it was folded from the log's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// Why the store in use was copied into the fresh one before it caught up with the
    /// log: its size on disk against its records' (`src/compaction.rs`); none: no compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<String>,
}

/// Where a rebuild's fresh store starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Empty: the whole log is folded into it.
    Log,
    /// A snapshot's records (the newest of this layout and stream, or the one named),
    /// then the log from its checkpoint.
    Snapshot(Option<String>),
    /// A copy of the store in use (about `record_bytes` of records), then the log from
    /// the copy's checkpoint: a compaction, for the reason `why`.
    Store {
        /// What was measured that asked for it.
        why: String,
        /// The bytes of the records to copy, as last measured: the room the copy needs.
        record_bytes: u64,
    },
}
