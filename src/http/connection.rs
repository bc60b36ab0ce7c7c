//! How each connection the API listener accepts is set up: every write goes out as soon as
//! it is made (`TCP_NODELAY`), and a client that takes nothing for as long as a live frame
//! may take to go out is dropped by the kernel (`TCP_USER_TIMEOUT`).
//!
//! Without `TCP_NODELAY`, a small write made while the previous one waits for its
//! acknowledgement is held back until it comes, which a client's delayed acknowledgement
//! stretches to 40 ms: a live frame would wait on the one before it. Without the user
//! timeout, a client whose window stays shut holds its connection, its response and a
//! stream's session for as long as it likes, since the server cannot tell it from a slow
//! one by writing: the kernel can, and it ends the connection with an error that the
//! server sees on its next write.

use std::time::Duration;

use tokio::net::TcpStream;

/// Sets up one accepted connection; `stall` is how long written data may wait
/// unacknowledged, or behind a closed window, before the connection is dropped. A setting
/// the system refuses leaves the connection as it was.
pub fn set_up(tcp: &mut TcpStream, stall: Duration) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY refused");
    }
    let ms = u32::try_from(stall.as_millis()).unwrap_or(u32::MAX);
    if let Err(e) = rustix::net::sockopt::set_tcp_user_timeout(&*tcp, ms) {
        tracing::debug!(error = %e, "TCP_USER_TIMEOUT refused");
    }
}
