//! Why a session ends: the client gone, or a close with its code and reason, such as an
//! internal error's.

use std::fmt::Display;

/// Why a session ends.
#[derive(Debug)]
pub(super) enum End {
    /// The client closed or the connection broke; nothing more to send.
    Gone,
    /// Close with this code and reason.
    Close(u16, &'static str),
}

pub(super) fn internal(e: impl Display) -> End {
    tracing::error!(error = %e, "odds session");
    End::Close(1011, "internal error")
}
