//! A feeder: publishes events to the stream with `Nats-Msg-Id` set to their `event_id`,
//! keeping many publishes in flight and counting what JetStream stored, what it
//! recognised as a duplicate, and what was refused.

use std::io::BufRead;

use async_nats::jetstream::{self, context::PublishAckFuture};
use async_nats::HeaderMap;
use futures::stream::{FuturesOrdered, StreamExt};
use racing_events::{Envelope, FEEDER_HEADER};

/// Publishes in flight at once: enough to fill the link, bounded so memory is too.
pub const IN_FLIGHT: usize = 512;

/// Most refusal reasons kept for the report.
const MAX_REASONS: usize = 20;

/// What a run of the feeder did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Stored as new events.
    pub published: u64,
    /// Recognised by JetStream as already stored inside the duplicate window.
    pub duplicate: u64,
    /// Refused: by the feed contract's validation here, or by the server.
    pub rejected: u64,
    /// The first refusals: `(line or item number, reason)`.
    pub reasons: Vec<(u64, String)>,
    /// The highest stream sequence acknowledged (a duplicate's is its first copy's): a
    /// read with it as `min_seq` sees every event of the run.
    pub last_seq: Option<u64>,
}

/// One event the stream acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acked {
    /// Its line or item number.
    pub item: u64,
    /// Its stream sequence: the position a read names with `min_seq` to see it.
    pub seq: u64,
    /// Whether JetStream had it already (the sequence is the first copy's).
    pub duplicate: bool,
}

impl Counts {
    fn reject(&mut self, item: u64, reason: String) {
        self.rejected += 1;
        if self.reasons.len() < MAX_REASONS {
            self.reasons.push((item, reason));
        }
    }
}

/// Publishes one message with its event id as `Nats-Msg-Id`, and the feeder's name, if
/// given, as [`FEEDER_HEADER`] (so that it can read the refusal if the event is refused).
async fn send(
    js: &jetstream::Context,
    feeder: Option<&str>,
    env: &Envelope,
    payload: bytes::Bytes,
) -> Result<PublishAckFuture, async_nats::jetstream::context::PublishError> {
    let mut headers = HeaderMap::new();
    headers.insert(
        async_nats::header::NATS_MESSAGE_ID,
        env.event_id.to_string().as_str(),
    );
    if let Some(feeder) = feeder {
        headers.insert(FEEDER_HEADER, feeder);
    }
    js.publish_with_headers(env.subject(), headers, payload)
        .await
}

/// Publishes raw payloads as `feeder` (see [`send`]), each validated against the feed
/// contract first; `tick` is called after each item with the bytes it had, `acked` with
/// each acknowledgement, in the items' order.
pub async fn publish_payloads<I>(
    js: &jetstream::Context,
    feeder: Option<&str>,
    items: I,
    mut tick: impl FnMut(u64),
    mut acked: impl FnMut(Acked),
) -> anyhow::Result<Counts>
where
    I: IntoIterator<Item = std::io::Result<(u64, Vec<u8>)>>,
{
    let mut counts = Counts::default();
    let mut in_flight = FuturesOrdered::new();
    for item in items {
        let (number, payload) = item?;
        let size = payload.len() as u64;
        match Envelope::parse(&payload) {
            Err(reason) => counts.reject(number, reason.to_string()),
            Ok(env) => match send(js, feeder, &env, payload.into()).await {
                Ok(ack) => in_flight.push_back(async move { (number, ack.await) }),
                Err(e) => counts.reject(number, refused(&e)),
            },
        }
        while in_flight.len() >= IN_FLIGHT {
            if let Some(done) = in_flight.next().await {
                settle(&mut counts, done, &mut acked);
            }
        }
        tick(size);
    }
    while let Some(done) = in_flight.next().await {
        settle(&mut counts, done, &mut acked);
    }
    Ok(counts)
}

type Ack = Result<jetstream::publish::PublishAck, async_nats::jetstream::context::PublishError>;

fn settle(counts: &mut Counts, (number, ack): (u64, Ack), acked: &mut impl FnMut(Acked)) {
    match ack {
        Ok(a) => {
            if a.duplicate {
                counts.duplicate += 1;
            } else {
                counts.published += 1;
            }
            counts.last_seq = counts.last_seq.max(Some(a.sequence));
            acked(Acked {
                item: number,
                seq: a.sequence,
                duplicate: a.duplicate,
            });
        }
        Err(e) => counts.reject(number, refused(&e)),
    }
}

/// Why the server did not take an event, in words a feeder can act on. (A feeder may not
/// look the stream up first, so a missing stream shows here.)
fn refused(e: &async_nats::jetstream::context::PublishError) -> String {
    use async_nats::jetstream::context::PublishErrorKind;
    match e.kind() {
        PublishErrorKind::StreamNotFound => {
            "server refused: no stream takes this subject; start `racing serve` first, it creates the stream".to_owned()
        }
        PublishErrorKind::TimedOut => {
            "no acknowledgement in time: is this user allowed to publish it (feeder role)?".to_owned()
        }
        _ => format!("server refused: {e}"),
    }
}

/// Publishes generated events (the demo feed, an import) as `feeder` (see [`send`]).
pub async fn publish_events(
    js: &jetstream::Context,
    feeder: Option<&str>,
    events: &[Envelope],
) -> anyhow::Result<Counts> {
    // Collected first: a lazy iterator's closure held across awaits would make the future
    // too general to spawn.
    let items: Vec<std::io::Result<(u64, Vec<u8>)>> = events
        .iter()
        .zip(1..)
        .map(|(e, number)| Ok((number, e.to_json().into_bytes())))
        .collect();
    publish_payloads(js, feeder, items, |_| {}, |_| {}).await
}

/// The stream as the demo feeder sees it: what [`racing_demo::LiveDemo`] publishes through,
/// as [`publish_events`] does; refused events are the run's to report, and only what
/// ends publishing (NATS gone) ends it.
pub struct Feeder(pub jetstream::Context);

impl racing_demo::Publish for Feeder {
    type Error = anyhow::Error;

    async fn publish(&mut self, events: &[Envelope]) -> anyhow::Result<racing_demo::Refused> {
        let counts = publish_events(&self.0, None, events).await?;
        Ok(racing_demo::Refused {
            count: counts.rejected,
            reasons: counts.reasons,
        })
    }
}

/// The non-blank lines of an NDJSON reader, numbered from 1.
pub fn ndjson_lines(reader: impl BufRead) -> impl Iterator<Item = std::io::Result<(u64, Vec<u8>)>> {
    reader
        .split(b'\n')
        .enumerate()
        .filter_map(|(i, line)| match line {
            Ok(mut l) => {
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                (!l.iter().all(u8::is_ascii_whitespace)).then_some(Ok((i as u64 + 1, l)))
            }
            Err(e) => Some(Err(e)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_example_is_accepted_and_blank_lines_are_skipped() {
        let readme = include_str!("../docs/feeding.md");
        let lines: Vec<_> = ndjson_lines(readme.as_bytes())
            .filter_map(Result::ok)
            .filter(|(_, l)| l.starts_with(b"{\"event_id\""))
            .collect();
        assert!(!lines.is_empty(), "docs/feeding.md has an NDJSON example");
        for (n, line) in lines {
            Envelope::parse(&line).unwrap_or_else(|e| panic!("docs/feeding.md line {n}: {e}"));
        }
        let numbered: Vec<u64> = ndjson_lines(&b"a\n\n  \r\nb\r\n"[..])
            .map(|l| l.map(|(n, _)| n).unwrap_or_default())
            .collect();
        assert_eq!(numbered, [1, 4]);
    }
}
