//! The live odds WebSocket `/ws/live/odds`, with a cap on connections per key. (Clients
//! that poll have `GET /api/v1/odds/{date}/{race_number}`, a document route.)

use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use futures::StreamExt;

use super::described::ODDS_SOCKET_DOC;
use super::error::ApiError;
use super::query::Query;
use super::slots::Slot;
use super::state::AppState;
use crate::keys::ring::{Identity, Standing};
use crate::live::close::{CLOSE_POLICY, CLOSE_TRY_LATER};
use crate::live::session::{run_session, Charge, Key};

/// Bytes read from a socket at once. tungstenite keeps a read buffer of this size for
/// every connection (128 KiB by default, which every idle connection held resident);
/// client frames are a few hundred bytes, and longer ones still arrive whole, read in
/// several turns.
const READ_BUFFER: usize = 1024;

/// Why a connection beyond a lowered cap is closed.
const CAP_LOWERED: &str = "connection limit of the API key lowered";

/// Follows the key of an open connection: resolves, with the close code and reason, when
/// the key is revoked, expires or is removed, cannot be checked for revocation (1013, try
/// again later), or when its cap is lowered below the
/// connections open and this one is among the newest beyond it. Holds the connection's
/// slot, which frees when the session ends.
async fn key_ends(
    mut standing: tokio::sync::watch::Receiver<Standing>,
    slot: Slot,
    default_max: usize,
) -> (u16, &'static str) {
    loop {
        let now = *standing.borrow_and_update();
        match now {
            Standing::Valid(limits) => {
                let max = limits.max_connections.unwrap_or(default_max);
                if slot.replicas.older(slot.key, slot.opened) >= max {
                    return (CLOSE_POLICY, CAP_LOWERED);
                }
            }
            Standing::Unchecked => {
                return (CLOSE_TRY_LATER, now.ended().unwrap_or("API key unchecked"))
            }
            ended => return (CLOSE_POLICY, ended.ended().unwrap_or("API key ended")),
        }
        if standing.changed().await.is_err() {
            return (CLOSE_POLICY, Standing::Removed.ended().unwrap_or_default());
        }
    }
}

/// A live connection of `who`'s: a slot among the key's connections on every replica
/// (429 past its cap), the close that comes when the key ends, and the key's plan, to
/// which the connection's messages and replays are charged as its HTTP requests are.
/// What the socket and the event stream share.
pub(super) fn connection_of(
    state: &AppState,
    who: Identity,
) -> Result<Key<impl std::future::Future<Output = (u16, &'static str)>>, ApiError> {
    // The key may have gone since the request was identified.
    let standing = state.keys.standing(who.id).ok_or(ApiError::Unauthorized)?;
    let max = who
        .limits
        .max_connections
        .unwrap_or(state.slots.max_per_key);
    let Some(slot) = state.slots.take(who.id, max) else {
        return Err(ApiError::RateLimited(format!(
            "at most {max} live odds connections for this key"
        )));
    };
    let ended = key_ends(standing, slot, state.slots.max_per_key);
    let limits = state.limits.clone();
    let owed = limits.clone();
    Ok(Key {
        shutdown: state.shutdown.clone(),
        ended,
        charge: Charge {
            take: Box::new(move || limits.spend(&who)),
            owe: Box::new(move |n| owed.owe(&who, n)),
        },
    })
}

/// The headers of an upgrade (RFC 6455, 4.1), each a 400 unless it is what
/// [`UPGRADE_HEADERS`] says, so that the description's patterns and this check accept
/// the same requests (axum's own check lets a `Connection` with `upgrade` anywhere in it
/// through, and any `Sec-WebSocket-Key`).
pub(super) fn handshake(headers: &HeaderMap) -> Result<(), ApiError> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let connection = text("connection").is_some_and(|v| {
        v.split(',').any(|token| {
            token
                .trim_matches([' ', '\t'])
                .eq_ignore_ascii_case("upgrade")
        })
    });
    let upgrade = text("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let version = text("sec-websocket-version") == Some("13");
    let key = text("sec-websocket-key").is_some_and(|k| {
        let b = k.as_bytes();
        b.len() == 24
            && b[..22]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/'))
            && &b[22..] == b"=="
    });
    let wrong: Vec<&str> = UPGRADE_HEADERS
        .iter()
        .zip([connection, upgrade, key, version])
        .filter(|(_, ok)| !ok)
        .map(|((name, ..), _)| *name)
        .collect();
    if wrong.is_empty() {
        return Ok(());
    }
    Err(ApiError::BadRequest(format!(
        "this is a WebSocket endpoint: an upgrade needs {}",
        wrong.join(", ")
    )))
}

/// The headers of a WebSocket upgrade, as the description requires them: name, pattern
/// of its value, and what it says. [`handshake`] checks the same.
pub const UPGRADE_HEADERS: [(&str, &str, &str); 4] = [
    (
        "Connection",
        r"^([^,]*,)*[ \t]*[Uu][Pp][Gg][Rr][Aa][Dd][Ee][ \t]*(,.*)?$",
        "`Upgrade` (one of its comma-separated tokens, whatever the case).",
    ),
    (
        "Upgrade",
        "^[Ww][Ee][Bb][Ss][Oo][Cc][Kk][Ee][Tt]$",
        "`websocket`, whatever the case.",
    ),
    (
        "Sec-WebSocket-Key",
        "^[A-Za-z0-9+/]{22}==$",
        "16 random bytes in base64 (24 characters ending `==`), as RFC 6455 asks.",
    ),
    ("Sec-WebSocket-Version", "^13$", "`13`."),
];

/// Upgrades to the live odds protocol; the key was checked before routing.
#[utoipa::path(
    get,
    path = "/ws/live/odds",
    tag = "odds",
    summary = "Live odds (WebSocket)",
    description = ODDS_SOCKET_DOC,
    responses(
        (status = 101, description = "Switching Protocols: the connection now speaks the live \
            odds protocol described above."),
        (status = 400, description = "`bad_request`: not a WebSocket upgrade request, or a \
            query parameter other than `api_key`.", body = super::error::ErrorBody),
        (status = 429, description = "`rate_limited`: too many open live odds connections for \
            the key, or over the key's request rate (upgrades count as requests).",
            body = super::error::ErrorBody),
        (status = 503, description = "`unavailable`: the read models are still being built \
            from the log at start-up, or a managed key cannot be checked for revocation (the \
            key registry out of reach); `Retry-After` says when to try again.",
            body = super::error::ErrorBody),
    ),
    security(("api_key" = []), ("api_key_query" = []))
)]
pub(super) async fn odds_socket(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &["api_key"])?;
    // While the log is being replayed, a session would be sent history as live updates,
    // faster than any client takes them.
    super::respond::built(&state)?;
    handshake(&headers)?;
    let upgrade = upgrade.map_err(|e| {
        ApiError::BadRequest(format!("this is a WebSocket endpoint: {}", e.body_text()))
    })?;
    let key = connection_of(&state, who)?;
    let context = state.live.clone();
    let sessions = state.sessions.clone();
    Ok(upgrade
        .read_buffer_size(READ_BUFFER)
        .max_message_size(crate::live::MAX_FRAME_BYTES)
        .max_frame_size(crate::live::MAX_FRAME_BYTES)
        .on_upgrade(move |socket: WebSocket| {
            sessions.track_future(async move {
                let (sink, stream) = socket.split();
                run_session(sink, stream, context, key).await;
            })
        }))
}
