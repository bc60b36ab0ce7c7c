//! The WebSocket close codes the service sends (RFC 6455).

/// WebSocket close code for a policy violation (RFC 6455): a client too slow to follow, or
/// whose key is no longer good for the connection (revoked, expired, over a lowered cap).
pub const CLOSE_POLICY: u16 = 1008;

/// WebSocket close code for "going away": the server is shutting down.
pub const CLOSE_GOING_AWAY: u16 = 1001;

/// WebSocket close code for a protocol error: a frame that cannot be read.
pub const CLOSE_PROTOCOL: u16 = 1002;

/// WebSocket close code for a message too big to process.
pub const CLOSE_TOO_BIG: u16 = 1009;

/// WebSocket close code for "try again later": the key cannot be checked just now.
pub const CLOSE_TRY_LATER: u16 = 1013;
