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
    /// Of a refused message: the feeder its header names and its `Nats-Msg-Id`, for the
    /// refusal that feeder reads (`crate::refusals`). Read only where it is refused.
    pub(crate) sender: Option<(String, Option<String>)>,
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
