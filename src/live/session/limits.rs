//! The limits of a session, all configurable, and how much of a journal it reads at a
//! time.

use std::time::Duration;

/// Moves and race-day events read from a journal at a time: by a `since` replay, a
/// `replay`'s playback and a session that fell behind.
pub(super) const CHUNK: usize = 64;

/// The limits of a session; all configurable.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest inbound frame, bytes.
    pub max_frame_bytes: usize,
    /// Most subscriptions on one connection.
    pub max_subscriptions: usize,
    /// Quiet time after which a heartbeat is sent.
    pub heartbeat: Duration,
    /// How long live updates wait on a new connection for its first message, so that a
    /// client resuming with `subscribe` + `since` gets its replay with nothing before it.
    pub resume_window: Duration,
    /// Longest one frame may take to go out before the client counts as stalled.
    pub send_timeout: Duration,
    /// Frames waiting to go out to one client; while this many wait, it takes no more
    /// live updates from the shared ring.
    pub max_pending: usize,
    /// Conflations allowed within `conflation_window` before the client is closed; only
    /// those the client caused count (it held the session back by not reading), never a
    /// catch-up of the server's.
    pub max_conflations: usize,
    /// See `max_conflations`.
    pub conflation_window: Duration,
    /// Most updates one `since` replays; further back gets a snapshot instead.
    pub max_replay: u64,
    /// Client messages a connection may send a second, on average; one over the rate is
    /// answered with an `error` frame (`rate_limited`) and not acted on.
    pub messages_per_sec: u32,
    /// Client messages it may send at once: enough to subscribe to every target it may
    /// hold in one go.
    pub message_burst: u32,
    /// Longest one read of the store may take (on a blocking thread, never a runtime
    /// worker) before the connection is closed with 1013, to resume with `since`: the
    /// HTTP request timeout.
    pub read_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: 4096,
            max_subscriptions: 256,
            heartbeat: Duration::from_secs(5),
            resume_window: Duration::from_millis(250),
            send_timeout: Duration::from_secs(10),
            max_pending: 64,
            max_conflations: 3,
            conflation_window: Duration::from_secs(60),
            max_replay: 100_000,
            messages_per_sec: 20,
            message_burst: 300,
            read_timeout: Duration::from_secs(10),
        }
    }
}
