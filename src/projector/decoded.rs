//! A message off the stream, decoded: its position, when it was stored, and its event or
//! why it was refused; and the messages decoded ahead of the fold, on a task of their own
//! ([`ahead`]).

use async_nats::jetstream;
use futures::FutureExt;
use racing_events::Envelope;
use tokio::sync::mpsc;
use tokio_util::task::AbortOnDropHandle;

use crate::nats::messages::Messages;

/// A message off the stream, decoded.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub(crate) seq: u64,
    /// Messages the stream held past this one.
    pub(crate) pending: u64,
    /// When JetStream stored it, in nanoseconds since the epoch.
    pub(crate) published: i128,
    pub(crate) subject: async_nats::Subject,
    /// The event, or why it was refused and the payload to keep in the dead letter.
    pub(crate) envelope: Result<Envelope, (String, bytes::Bytes)>,
    /// Of a refused message: the feeder its header names and its `Nats-Msg-Id`, for the
    /// refusal that feeder reads (`crate::refusals`). Read only where it is refused.
    pub(crate) sender: Option<(String, Option<String>)>,
}

impl Decoded {
    /// A message at `seq` of the stream, with `pending` more after it, stored at
    /// `published` (nanoseconds since the epoch), decoded from its subject and payload.
    /// Its `occurred_at` is written as the service serves an instant: the fold and the
    /// live updates take one so written as it is ([`racing_events::Instant::of`]), and
    /// it is written here, ahead of the fold, rather than on the fold's thread (twice for
    /// a price move going live).
    pub(crate) fn new(
        seq: u64,
        pending: u64,
        published: i128,
        subject: async_nats::Subject,
        payload: bytes::Bytes,
    ) -> Decoded {
        let envelope = Envelope::decode(subject.as_str(), &payload)
            .map(|mut envelope| {
                if let Some(served) = racing_events::Instant::of(&envelope.occurred_at) {
                    envelope.occurred_at = served;
                }
                envelope
            })
            .map_err(|reason| (reason.to_string(), payload));
        Decoded {
            seq,
            pending,
            published,
            subject,
            envelope,
            sender: None,
        }
    }
}

pub(crate) fn decode(m: jetstream::Message) -> anyhow::Result<Decoded> {
    let info = m
        .info()
        .map_err(|e| anyhow::anyhow!("message metadata: {e}"))?;
    let (seq, pending) = (info.stream_sequence, info.pending);
    let published = info.published.unix_timestamp_nanos();
    let headers = m.message.headers;
    let mut decoded = Decoded::new(
        seq,
        pending,
        published,
        m.message.subject,
        m.message.payload,
    );
    if decoded.envelope.is_err() {
        let header = |name: &str| {
            headers
                .as_ref()
                .and_then(|h| h.get(name))
                .map(|v| v.as_str().to_owned())
        };
        decoded.sender = header(racing_events::FEEDER_HEADER)
            .map(|feeder| (feeder, header(async_nats::header::NATS_MESSAGE_ID.as_ref())));
    }
    Ok(decoded)
}

/// Most messages decoded ahead of the fold: decoding goes on, on another thread, while a
/// batch is folded and committed.
const AHEAD: usize = 32_768;
/// Most messages the decoder hands over at once: those the consumer had ready.
const CHUNK: usize = 256;

/// The messages of the stream decoded ahead of the fold, in order ([`ahead`]).
pub(crate) struct Ahead {
    chunks: mpsc::Receiver<Vec<anyhow::Result<Decoded>>>,
    chunk: std::vec::IntoIter<anyhow::Result<Decoded>>,
}

impl Ahead {
    /// The next message; `None` once the decoder has ended. Cancel-safe: a message is
    /// taken only where it is returned.
    pub(crate) async fn recv(&mut self) -> Option<anyhow::Result<Decoded>> {
        loop {
            if let Some(m) = self.chunk.next() {
                return Some(m);
            }
            self.chunk = self.chunks.recv().await?.into_iter();
        }
    }
}

/// Decodes `messages` on a task of its own, up to [`AHEAD`] ahead of what the fold has
/// taken, and hands them over a chunk at a time: a message as soon as it comes, with those
/// that came with it. Through a channel of single messages, which a replay keeps full,
/// each message the fold took would free a place and wake the decoder waiting for it on
/// the other core (7% of the fold's thread in the replay of the bench's log). The decoder
/// ends after an error, which it hands over, and with the task it returns.
pub(crate) fn ahead(mut messages: Messages) -> (Ahead, AbortOnDropHandle<()>) {
    let (send, chunks) = mpsc::channel(AHEAD / CHUNK);
    // Its consumer outlives batches that take longer than the server waits for a reader
    // (a replay's on a large store): [`crate::nats::Messages`].
    let decoder = tokio::spawn(async move {
        let mut ended = false;
        while !ended {
            let Some(m) = messages.next().await else {
                break;
            };
            let mut chunk = vec![m.and_then(decode)];
            let mut failed = chunk[0].is_err();
            // Those the consumer holds ready, without waiting (`next` is cancel-safe).
            while !failed && chunk.len() < CHUNK {
                let Some(next) = messages.next().now_or_never() else {
                    break;
                };
                let Some(m) = next else {
                    ended = true;
                    break;
                };
                let d = m.and_then(decode);
                failed = d.is_err();
                chunk.push(d);
            }
            if send.send(chunk).await.is_err() || failed {
                break;
            }
        }
    });
    let ahead = Ahead {
        chunks,
        chunk: Vec::new().into_iter(),
    };
    (ahead, AbortOnDropHandle::new(decoder))
}

#[cfg(test)]
mod tests {
    use racing_events::samples::{envelope, odds};

    use super::*;

    /// A message's `occurred_at` comes out of decoding as the service serves an instant,
    /// whatever offset and precision the feeder wrote: the fold and the live updates take
    /// it as it is.
    #[test]
    fn an_event_s_instant_is_decoded_as_it_is_served() {
        for (given, served) in [
            ("2026-11-21T12:10:02+08:00", "2026-11-21T04:10:02.000Z"),
            ("2026-11-21T04:10:02.113456Z", "2026-11-21T04:10:02.113Z"),
            ("2026-11-21T04:10:02.113Z", "2026-11-21T04:10:02.113Z"),
        ] {
            let mut e = envelope(odds("2026-11-21", 1, &[("A1", 3.5)]));
            e.occurred_at = given.into();
            let payload = bytes::Bytes::from(e.to_json().into_bytes());
            let m = Decoded::new(1, 0, 0, e.subject().into(), payload);
            let decoded = m.envelope.expect("valid");
            assert_eq!(decoded.occurred_at, served, "{given}");
        }
    }
}
