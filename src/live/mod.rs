//! Live odds: the in-process hub that fans each odds update out to every WebSocket
//! session, and the frames of the protocol (`docs/live.md`).
//!
//! The projector publishes an update to the hub only after the batch holding it has
//! committed, so a snapshot read from the store is never older than a delta a session has
//! already been given. Each update is serialised once, into a frame every session shares.

pub(crate) mod close;
pub mod frames;
pub(crate) mod hub;
mod outbox;
pub(crate) mod session;
pub(crate) mod snapshot;

/// Largest client frame the protocol layer reads at all; the session answers anything
/// over its own limit (at most this) with an `error` frame and stays open, and anything
/// over this with close 1009.
pub const MAX_FRAME_BYTES: usize = 64 * 1024;
