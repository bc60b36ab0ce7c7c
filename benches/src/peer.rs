//! The peer of the live odds part: what a deployment could run instead of the service's
//! relay, nats-server's own WebSocket listener, each client speaking the NATS protocol
//! over it and subscribed to today's odds subjects. The same client library, the same
//! number of clients and the same way of stamping receipts as the service's side.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use futures::{SinkExt, StreamExt};
use nkeys::KeyPair;
use racing::nats::{LocalNats, WebSocketUser};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;
use uuid::Uuid;

use crate::clients::{Clients, Seen, Shared, Socket};
use crate::nats_protocol::{Op, Parser};

/// The largest message a peer client takes until the server's `INFO` says its own
/// `max_payload`: the `INFO` line itself is not bounded by it.
const FIRST_MAX_PAYLOAD: usize = 1024 * 1024;

/// The one subscription of a peer client.
const SID: u64 = 1;

/// nats-server's WebSocket listener on the benchmark's server, and the user its clients
/// connect as.
pub struct Peer {
    url: String,
    user: Arc<KeyPair>,
    pid: u32,
}

/// A fresh user for the peer's clients, and the listener the benchmark's nats-server is
/// to serve them on: an nkey that may subscribe to the odds subjects and nothing else,
/// over WebSocket only (none of the deployment's roles may subscribe to them). Its seed
/// never leaves this process.
pub fn user() -> (Arc<KeyPair>, WebSocketUser) {
    let user = KeyPair::new_user();
    let listener = WebSocketUser {
        nkey: user.public_key(),
        subscribe: vec![racing_events::ODDS_SUBJECTS.to_owned()],
    };
    (Arc::new(user), listener)
}

impl Peer {
    /// The listener of `nats`, started with the one [`user`] gave, for `user`.
    pub fn new(nats: &LocalNats, user: Arc<KeyPair>) -> anyhow::Result<Peer> {
        Ok(Peer {
            url: nats
                .websocket_url()
                .context("the benchmark's nats-server has no WebSocket listener")?,
            user,
            pid: nats
                .pid()
                .context("the benchmark's nats-server has exited")?,
        })
    }

    /// The process id of nats-server.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// `n` clients subscribed to the subjects of `updates`' day (all of today's races, as
    /// the service's clients subscribe to today's meeting).
    pub(crate) async fn clients(
        &self,
        n: usize,
        updates: &[racing_events::Envelope],
    ) -> anyhow::Result<Clients<Uuid>> {
        // `racing.odds.<date>.<race>`: every race of that date.
        let subject = updates
            .first()
            .and_then(|e| Some(format!("{}.>", e.subject().rsplit_once('.')?.0)))
            .context("no updates to subscribe to")?;
        let capacity = updates.len() + 16;
        Clients::start(n, |shared, stop| {
            client(
                self.url.clone(),
                self.user.clone(),
                subject.clone(),
                capacity,
                shared,
                stop,
            )
        })
        .await
    }
}

/// One peer client: connects and authenticates, subscribes, waits for the `PONG` that
/// says the subscription is in place, then notes each message's event id and when the
/// frame that completed it came, answering the server's `PING`s.
///
/// A message is matched to its publish by the event id in its payload (the envelope's
/// `"event_id"`, also its `Nats-Msg-Id`), not by stream sequence: a plain subscriber
/// gets the message as the feeder published it, not JetStream's stored copy, so no
/// sequence comes with it. Every update of a run has a fresh event id, so the id names
/// one publish; and reading it from the payload needs no headers, so the client asks
/// for none (`"headers": false`) and the server sends plain `MSG`s.
async fn client(
    url: String,
    user: Arc<KeyPair>,
    subject: String,
    capacity: usize,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<Seen<Uuid>> {
    let (place, mut ws) = shared.connect(&url).await?;
    let mut parser = Parser::new(FIRST_MAX_PAYLOAD);
    let info = match next_op(&mut ws, &mut parser).await? {
        Op::Info(info) => info,
        other => bail!("nats-server began with {other:?}, not INFO"),
    };
    let info: Info = serde_json::from_slice(&info).context("nats-server's INFO")?;
    parser.set_max_payload(info.max_payload);
    let connect = connect_line(&info, &user)?;
    ws.send(Message::binary(format!(
        "{connect}SUB {subject} {SID}\r\nPING\r\n"
    )))
    .await?;
    // The server answers a PING after it has processed what came before: the SUB.
    loop {
        match next_op(&mut ws, &mut parser).await? {
            Op::Pong => break,
            Op::Ping => ws.send(pong()).await?,
            Op::Err(e) => bail!("nats-server refused a peer client: {e}"),
            _ => {}
        }
    }
    shared.subscribed(place);
    let mut seen = Seen::with_capacity(capacity);
    loop {
        let frame = tokio::select! {
            _ = stop.changed() => break,
            m = ws.next() => m,
        };
        let at = Instant::now();
        match frame {
            Some(Ok(Message::Binary(b))) => parser.push(&b),
            Some(Ok(Message::Text(t))) => parser.push(t.as_bytes()),
            Some(Ok(_)) => continue,
            Some(Err(e)) => bail!("a peer client's connection failed: {e}"),
            None => bail!("nats-server closed a peer client"),
        }
        while let Some(op) = parser.next_op()? {
            match op {
                Op::Msg(m) => {
                    let id = event_id(&m.payload).context("a message without an event id")?;
                    seen.odds.push((id, at));
                    shared.received.fetch_add(1, Ordering::Relaxed);
                }
                Op::Ping => ws.send(pong()).await?,
                Op::Err(e) => bail!("nats-server: {e}"),
                _ => {}
            }
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(5), ws.close(None)).await;
    Ok(seen)
}

fn pong() -> Message {
    Message::binary(&b"PONG\r\n"[..])
}

/// The server's next operation, reading frames as it needs them (30 s at most each).
async fn next_op(ws: &mut Socket, parser: &mut Parser) -> anyhow::Result<Op> {
    loop {
        if let Some(op) = parser.next_op()? {
            return Ok(op);
        }
        match tokio::time::timeout(Duration::from_secs(30), ws.next()).await {
            Ok(Some(Ok(Message::Binary(b)))) => parser.push(&b),
            Ok(Some(Ok(Message::Text(t)))) => parser.push(t.as_bytes()),
            Ok(Some(Ok(_))) => {}
            other => bail!("nats-server did not answer a peer client: {other:?}"),
        }
    }
}

/// What a peer client needs of the server's `INFO`.
#[derive(serde::Deserialize)]
struct Info {
    /// To sign, proving the client's nkey.
    nonce: Option<String>,
    /// The largest message the server sends (headers and payload).
    max_payload: usize,
}

/// `CONNECT {...}\r\n` as `user`, the nonce of the server's `INFO` signed with its key.
/// Not verbose (no `+OK` after each operation) and without headers (see [`client`]).
fn connect_line(info: &Info, user: &KeyPair) -> anyhow::Result<String> {
    let nonce = info
        .nonce
        .as_deref()
        .context("nats-server sent no nonce to sign")?;
    let sig = user
        .sign(nonce.as_bytes())
        .map_err(|e| anyhow!("signing the nonce: {e}"))?;
    let connect = serde_json::json!({
        "verbose": false,
        "pedantic": false,
        "lang": "rust",
        "version": env!("CARGO_PKG_VERSION"),
        "protocol": 1,
        "headers": false,
        "nkey": user.public_key(),
        "sig": data_encoding::BASE64URL_NOPAD.encode(&sig),
    });
    Ok(format!("CONNECT {connect}\r\n"))
}

/// The event id of an event envelope's JSON, read without parsing the rest (as the
/// service's clients read an `odds` frame's `seq`).
fn event_id(payload: &[u8]) -> Option<Uuid> {
    const KEY: &[u8] = b"\"event_id\":\"";
    let at = payload.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    Uuid::try_parse_ascii(payload.get(at..at + 36)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use racing_events::samples::{envelope, odds};

    #[test]
    fn the_event_id_of_a_published_envelope_is_read() {
        let e = envelope(odds("2026-11-21", 3, &[("1", 4.5)]));
        assert_eq!(event_id(e.to_json().as_bytes()), Some(e.event_id));
        assert_eq!(event_id(br#"{"event_id":"not-a-uuid"}"#), None);
        assert_eq!(event_id(b"{}"), None);
    }

    #[test]
    fn the_connect_line_signs_the_nonce() {
        let (user, _) = user();
        let info = |json: &str| serde_json::from_str::<Info>(json).expect("an INFO");
        let line = connect_line(
            &info(r#"{"server_id":"N","nonce":"n0nce","max_payload":1048576}"#),
            &user,
        )
        .expect("made");
        let json = line
            .strip_prefix("CONNECT ")
            .and_then(|l| l.strip_suffix("\r\n"))
            .expect("a CONNECT line");
        let v: serde_json::Value = serde_json::from_str(json).expect("JSON");
        let sig = data_encoding::BASE64URL_NOPAD
            .decode(v["sig"].as_str().expect("sig").as_bytes())
            .expect("base64url");
        user.verify(b"n0nce", &sig).expect("the nonce, signed");
        assert_eq!(v["nkey"], user.public_key());
        assert_eq!(v["headers"], false);
        let no_nonce = info(r#"{"max_payload":1048576}"#);
        assert!(connect_line(&no_nonce, &user).is_err(), "no nonce");
        assert!(
            serde_json::from_str::<Info>(r#"{"nonce":"n"}"#).is_err(),
            "an INFO without max_payload is refused"
        );
    }
}
