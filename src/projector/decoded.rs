//! A message off the stream, decoded: its position, when it was stored, and its event or
//! why it was refused.

use async_nats::jetstream;
use racing_events::Envelope;

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
}

impl Decoded {
    /// A message at `seq` of the stream, with `pending` more after it, stored at
    /// `published` (nanoseconds since the epoch), decoded from its subject and payload.
    pub(crate) fn new(
        seq: u64,
        pending: u64,
        published: i128,
        subject: async_nats::Subject,
        payload: bytes::Bytes,
    ) -> Decoded {
        let envelope = Envelope::decode(subject.as_str(), &payload)
            .map_err(|reason| (reason.to_string(), payload));
        Decoded {
            seq,
            pending,
            published,
            subject,
            envelope,
        }
    }
}

pub(crate) fn decode(m: jetstream::Message) -> anyhow::Result<Decoded> {
    let info = m
        .info()
        .map_err(|e| anyhow::anyhow!("message metadata: {e}"))?;
    let (seq, pending) = (info.stream_sequence, info.pending);
    let published = info.published.unix_timestamp_nanos();
    Ok(Decoded::new(
        seq,
        pending,
        published,
        m.message.subject,
        m.message.payload,
    ))
}
