//! Live odds: the in-process hub that fans each odds update out to every WebSocket
//! session, and the frames of the protocol (api-contract.md, "Live odds WebSocket").
//!
//! The projector publishes an update to the hub only after the batch holding it has
//! committed, so a snapshot read from the store is never older than a delta a session has
//! already been given. Each update is serialised once, into a frame every session shares.

mod outbox;
mod session;

use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use racing_events::RunnerOdds;
use serde::Serialize;
use tokio::sync::broadcast;

pub use session::{published_at, run_session, Limits, SessionContext};

/// WebSocket close code for a policy violation (RFC 6455): a client too slow to follow, or
/// whose key is no longer good for the connection (revoked, expired, over a lowered cap).
pub const CLOSE_POLICY: u16 = 1008;
/// WebSocket close code for "going away": the server is shutting down.
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// WebSocket close code for a protocol error: a frame that cannot be read.
pub const CLOSE_PROTOCOL: u16 = 1002;
/// WebSocket close code for a message too big to process.
pub const CLOSE_TOO_BIG: u16 = 1009;

/// Largest client frame the protocol layer reads at all; the session answers anything
/// over its own limit (at most this) with an `error` frame and stays open, and anything
/// over this with close 1009.
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

/// One odds update as every session receives it.
#[derive(Debug)]
pub struct OddsDelta {
    /// Meeting date, shared by every frame queued for the update.
    pub date: Arc<str>,
    /// Race within the meeting.
    pub race_number: u8,
    /// JetStream stream sequence of the `OddsUpdated` event.
    pub seq: u64,
    /// The `odds` frame, ready to send.
    pub frame: Utf8Bytes,
}

/// The `odds` frame of an `OddsUpdated` event. `venue` is the event's: `None` (null in
/// the frame) for odds given for the race of that number at every venue of the date.
pub fn odds_frame(
    date: &str,
    venue: Option<&str>,
    race_number: u8,
    seq: u64,
    published_at: &str,
    odds: &[RunnerOdds],
) -> Utf8Bytes {
    #[derive(Serialize)]
    struct Frame<'a> {
        r#type: &'static str,
        date: &'a str,
        venue: Option<&'a str>,
        race_number: u8,
        seq: u64,
        published_at: &'a str,
        odds: &'a [RunnerOdds],
    }
    frame(&Frame {
        r#type: "odds",
        date,
        venue,
        race_number,
        seq,
        published_at,
        odds,
    })
}

/// Serialises a server message; they are plain structs of strings and numbers.
pub(crate) fn frame<T: Serialize>(message: &T) -> Utf8Bytes {
    serde_json::to_string(message).unwrap_or_default().into()
}

/// The fan-out point: one broadcast ring shared by every session. A session that falls
/// more than the ring's capacity behind loses its place and is sent fresh snapshots
/// instead, so its memory is bounded whatever it does.
pub struct OddsHub {
    latest: Mutex<u64>,
    tx: broadcast::Sender<Arc<OddsDelta>>,
}

impl OddsHub {
    /// A hub whose ring holds `capacity` updates, starting from the store's latest odds
    /// sequence.
    pub fn new(capacity: usize, latest: u64) -> OddsHub {
        OddsHub {
            latest: Mutex::new(latest),
            tx: broadcast::channel(capacity.max(1)).0,
        }
    }

    /// Sends the update `delta` builds to every session. With no session listening it
    /// only records the sequence: replaying the log builds no frame that nobody reads.
    /// (A session joins under the same lock, so it never misses an update sent after.)
    pub fn publish_with(&self, seq: u64, delta: impl FnOnce() -> OddsDelta) {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        *latest = (*latest).max(seq);
        if self.tx.receiver_count() > 0 {
            let _ = self.tx.send(Arc::new(delta()));
        }
    }

    /// Joins the fan-out: the latest sequence published and a receiver of every update
    /// after it, taken together so that nothing falls between them.
    pub fn join(&self) -> (u64, broadcast::Receiver<Arc<OddsDelta>>) {
        let latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        (*latest, self.tx.subscribe())
    }

    /// The latest sequence published.
    pub fn latest(&self) -> u64 {
        *self.latest.lock().unwrap_or_else(|p| p.into_inner())
    }
}
