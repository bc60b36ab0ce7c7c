//! A message off the stream, decoded: its position, when it was stored, and its event or
//! why it was refused; and the messages decoded ahead of the fold, on a task of their own
//! ([`ahead`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_nats::jetstream;
use futures::{FutureExt, Stream, StreamExt};
use racing_events::Envelope;
use tokio::sync::mpsc;
use tokio_util::task::AbortOnDropHandle;

use crate::nats::messages::Messages;

/// A message off the stream, decoded.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub(crate) seq: u64,
    /// Messages the stream held past this one: handed over by [`Ahead`], as the server
    /// counted them past the latest message decoded ([`StreamEnd`]).
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
/// Chunks the decoder waits for room for at once, where its channel is full (a replay,
/// in which it stays [`AHEAD`] of the fold): a quarter of the channel. Waiting for room
/// for one, it was woken at every chunk the fold took, and the kernel ran it on the
/// fold's core: a seventh of the times the fold's thread lost its core in a replay were
/// as it woke the decoder.
const BURST: usize = AHEAD / CHUNK / 4;

/// The end of the stream as the decoder last heard of it: the latest message's sequence
/// and the messages the server said it held past it, at its delivery.
///
/// A message's own count is as old as its delivery, and the decoder reads up to
/// [`AHEAD`] ahead of the fold. A message stored while the projector kept up is delivered
/// at once, saying that little or nothing follows; if thousands are stored just after it
/// (six seasons published in a second), it still says so when the fold takes it, seconds
/// later. Taken at that word, such a backlog would be folded as the live feed, each batch
/// folded and then committed on the projector's thread, not as a catch-up, whose batches
/// fold while the one before is written.
#[derive(Clone, Default)]
struct StreamEnd(Arc<AtomicU64>);

impl StreamEnd {
    /// The decoder read a message at `seq`, with `pending` more after it.
    fn heard(&self, seq: u64, pending: u64) {
        self.0
            .fetch_max(seq.saturating_add(pending), Ordering::Relaxed);
    }

    /// The messages past `seq`, which said `pending`: what the stream held past the
    /// latest message decoded, if that is more.
    fn past(&self, seq: u64, pending: u64) -> u64 {
        pending.max(self.0.load(Ordering::Relaxed).saturating_sub(seq))
    }
}

/// The messages of the stream decoded ahead of the fold, in order ([`ahead`]).
pub(crate) struct Ahead {
    chunks: mpsc::Receiver<Vec<anyhow::Result<Decoded>>>,
    chunk: std::vec::IntoIter<anyhow::Result<Decoded>>,
    end: StreamEnd,
}

impl Ahead {
    /// The next message, with what the stream held past it as last heard; `None` once
    /// the decoder has ended. Cancel-safe: a message is taken only where it is returned.
    pub(crate) async fn recv(&mut self) -> Option<anyhow::Result<Decoded>> {
        loop {
            if let Some(mut m) = self.chunk.next() {
                if let Ok(d) = &mut m {
                    d.pending = self.end.past(d.seq, d.pending);
                }
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
pub(crate) fn ahead(messages: Messages) -> (Ahead, AbortOnDropHandle<()>) {
    // Its consumer outlives batches that take longer than the server waits for a reader
    // (a replay's on a large store): [`crate::nats::Messages`]. Its `next` is
    // cancel-safe; through the stream, one not yet ready is kept for the next look.
    let messages = futures::stream::unfold(messages, |mut messages| async move {
        let m = messages.next().await?;
        Some((m.and_then(decode), messages))
    });
    handed_over(Box::pin(messages))
}

/// [`ahead`], of messages decoded as they are read.
fn handed_over(
    mut messages: impl Stream<Item = anyhow::Result<Decoded>> + Send + Unpin + 'static,
) -> (Ahead, AbortOnDropHandle<()>) {
    let (send, chunks) = mpsc::channel(AHEAD / CHUNK);
    let end = StreamEnd::default();
    let heard = end.clone();
    let hear = move |m: anyhow::Result<Decoded>| {
        let d = m?;
        heard.heard(d.seq, d.pending);
        Ok(d)
    };
    let decoder = tokio::spawn(async move {
        // Room for `BURST` chunks, then a chunk into each place (until the fold is gone).
        'decoding: while let Ok(room) = send.reserve_many(BURST).await {
            for place in room {
                let Some(m) = messages.next().await else {
                    break 'decoding;
                };
                let mut chunk = vec![hear(m)];
                let mut failed = chunk[0].is_err();
                let mut ended = false;
                // Those the consumer holds ready, without waiting.
                while !failed && chunk.len() < CHUNK {
                    let Some(next) = messages.next().now_or_never() else {
                        break;
                    };
                    let Some(m) = next else {
                        ended = true;
                        break;
                    };
                    let d = hear(m);
                    failed = d.is_err();
                    chunk.push(d);
                }
                place.send(chunk);
                if failed || ended || send.is_closed() {
                    break 'decoding;
                }
            }
        }
    });
    let ahead = Ahead {
        chunks,
        chunk: Vec::new().into_iter(),
        end,
    };
    (ahead, AbortOnDropHandle::new(decoder))
}

#[cfg(test)]
mod tests {
    use racing_events::samples::{envelope, odds};

    use super::*;

    /// `count` price moves from the first position, each delivered saying that nothing
    /// followed it, all ready at once.
    fn price_moves(
        count: u64,
    ) -> impl Stream<Item = anyhow::Result<Decoded>> + Send + Unpin + 'static {
        let e = envelope(odds("2026-11-21", 1, &[("A1", 3.5)]));
        let payload = bytes::Bytes::from(e.to_json().into_bytes());
        let subject = async_nats::Subject::from(e.subject());
        let messages = (1..=count)
            .map(move |seq| Ok(Decoded::new(seq, 0, 0, subject.clone(), payload.clone())));
        futures::stream::iter(messages)
    }

    /// Messages delivered one by one as they were stored, each saying that nothing
    /// followed it: once the decoder has read them all, the fold takes the first saying
    /// what followed it.
    #[tokio::test]
    async fn the_fold_takes_a_message_with_what_the_decoder_read_past_it() {
        let (mut ahead, decoder) = handed_over(price_moves(10_000));
        decoder.await.expect("the decoder ends with its messages");
        for (seq, past) in [(1, 9_999), (2, 9_998)] {
            let m = ahead.recv().await.expect("a message").expect("decoded");
            assert_eq!((m.seq, m.pending), (seq, past));
        }
    }

    /// The decoder, as far ahead of the fold as it may be, waits for room for a burst of
    /// chunks, not for each chunk the fold takes ([`BURST`]). (The test's runtime has
    /// one thread: the decoder runs only where the test yields to it.)
    #[tokio::test]
    async fn a_decoder_ahead_waits_for_room_for_a_burst_of_chunks() {
        let (mut ahead, _decoder) = handed_over(price_moves(100_000));
        async fn decoded_up_to(ahead: &Ahead) -> usize {
            for _ in 0..1_000 {
                tokio::task::yield_now().await;
            }
            ahead.end.0.load(Ordering::Relaxed) as usize
        }
        assert_eq!(
            decoded_up_to(&ahead).await,
            AHEAD,
            "as far ahead as it may be"
        );
        async fn take(ahead: &mut Ahead, messages: usize) {
            for _ in 0..messages {
                ahead.recv().await.expect("a message").expect("decoded");
            }
        }
        // All but one chunk of a burst taken: no more decoded.
        take(&mut ahead, CHUNK * (BURST - 1)).await;
        assert_eq!(decoded_up_to(&ahead).await, AHEAD);
        take(&mut ahead, CHUNK).await;
        assert_eq!(decoded_up_to(&ahead).await, AHEAD + CHUNK * BURST);
    }

    /// A message delivered while the projector kept up said that little followed it; the
    /// fold takes it saying what followed the latest message the decoder read.
    #[test]
    fn a_message_is_taken_with_what_the_stream_held_past_the_latest_decoded() {
        let end = StreamEnd::default();
        for seq in 1..=1_000 {
            end.heard(seq, 0);
        }
        // Then 29,000 stored at once, as the decoder reaches the 5,000th.
        end.heard(5_000, 25_000);
        end.heard(5_001, 24_999);
        assert_eq!(end.past(10, 0), 29_990);
        assert_eq!(end.past(29_999, 0), 1);
        // Its own count where it says more than the latest decoded's.
        assert_eq!(end.past(10, 40_000), 40_000);
        assert_eq!(end.past(30_000, 0), 0);
        assert_eq!(end.past(30_001, 0), 0, "not past the end");
    }

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
