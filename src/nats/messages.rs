//! Reading the log in order through a consumer that survives its reader's pauses and a
//! server that forgets it.
//!
//! The server removes an ordered consumer that asks for nothing for 30 s (async-nats
//! makes them with that inactivity threshold), and the client asks only as its buffer
//! drains: 500 messages at a time, again once 250 are left. Two readers lose it:
//! - one that leaves the stream unread: left unread for longer than that threshold, it
//!   delivered the 500 buffered and then nothing for a long while; left unread for less,
//!   all of them. The projector over a replay's batches on a large store does, and a
//!   rebuild's worker held stopped for the API's requests;
//! - one that reads steadily but slowly: at one message every 100 ms, the 500 that came
//!   after a pull request took longer than the threshold to read; the server dropped the
//!   consumer, and the client's next pull went unanswered. Once its buffer was read, the
//!   reader waited until async-nats missed two idle heartbeats and made the consumer
//!   again. The projector reads that way in a replay past its memory budget, and gave up
//!   first, after the 5 s past which it starts over from its checkpoint.
//!
//! [`Messages`] makes the consumer again, from the next message, before reading on after
//! [`UNREAD_LIMIT`] unread; and after [`SILENT`] of waiting with nothing delivered, it asks
//! the server about the consumer, and makes it again if the server has no such consumer or
//! holds messages for it with no pull waiting.
//!
//! async-nats's own making again restarts from the stream's first message when the
//! consumer had delivered nothing yet. A message before the one expected is therefore not
//! delivered: the consumer is made again from the expected one.

use std::time::Duration;

use async_nats::jetstream::{self, consumer, context::ConsumerInfoErrorKind};
use futures::StreamExt;
use tokio::time::Instant;
use tokio_util::task::AbortOnDropHandle;

/// Longest a reader may leave [`Messages`] unread before it makes its consumer again, well
/// inside the server's 30 s.
const UNREAD_LIMIT: Duration = Duration::from_secs(20);

/// How long [`Messages::next`] waits with nothing delivered before it asks the server
/// whether its consumer still waits for messages: well inside the projector's 5 s, past
/// which it stops and starts over from its checkpoint.
const SILENT: Duration = Duration::from_secs(2);

/// Longest the server's answer about a consumer is waited for; without one, the consumer
/// is left as it is and asked about again after [`SILENT`].
const LOOK_WITHIN: Duration = Duration::from_secs(2);

/// How long the making again of a consumer is tried before the read fails: a few of
/// [`CONSUMER_WITHIN`]'s attempts, each of which may draw a dead node of a cluster.
const REMAKE_PATIENCE: Duration = Duration::from_secs(10);

/// Every message of a stream from a sequence on, in order: what
/// [`messages_from`] returns. Read it with [`Messages::next`].
pub struct Messages {
    js: jetstream::Context,
    stream: String,
    consumer: Consumer,
    /// The sequence after the last message delivered: where a consumer made again starts.
    next: u64,
    /// When the reader last stopped asking: after a message, or when a wait for one was
    /// given up (a `next` cancelled by a timeout). `None` while a `next` is waiting, which
    /// keeps the consumer asking however long the stream stays quiet.
    left: Option<Instant>,
    /// How long `next`s have waited since the last message delivered or the last look at
    /// the consumer, cancelled ones included (the rebuild waits 250 ms at a time); time the
    /// reader spends away is not counted, as the client asks for nothing meanwhile.
    waited: Duration,
    /// A look at the consumer, or its making again, on a task of its own, so that a
    /// `next` cancelled meanwhile does not start it over: `Some` consumer if one was made.
    mending: Option<AbortOnDropHandle<anyhow::Result<Option<Consumer>>>>,
}

/// An ordered consumer and its name on the server.
pub(super) struct Consumer {
    pub(super) messages: consumer::pull::Ordered,
    pub(super) name: String,
}

/// Why a consumer is made again: the `reason` of `racing_consumers_remade_total`.
#[derive(Clone, Copy, Debug)]
enum Remake {
    /// Its reader left it unread past [`UNREAD_LIMIT`].
    Unread,
    /// The server has no such consumer.
    Gone,
    /// The server holds messages for it and no pull of it waits.
    Unasked,
    /// It delivered a message from before the one expected.
    Behind,
}

impl Remake {
    fn reason(self) -> &'static str {
        match self {
            Remake::Unread => "unread",
            Remake::Gone => "gone",
            Remake::Unasked => "unasked",
            Remake::Behind => "behind",
        }
    }
}

/// How [`Messages::mend`] mends the consumer.
enum Mend {
    /// Makes it again at once.
    Now(Remake),
    /// Looks at the consumer of this name first, and makes it again only if the server
    /// lost it ([`look`]).
    Look(String),
}

/// Notes how a `next` ends, however it ends, a cancelled one included: when the reader
/// stopped asking, and how long it waited in vain.
struct Asking<'a> {
    left: &'a mut Option<Instant>,
    waited: &'a mut Duration,
    began: Instant,
    /// Whether the wait counts towards [`SILENT`]: not once a message came, nor once the
    /// consumer is looked at.
    in_vain: bool,
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        *self.left = Some(Instant::now());
        if self.in_vain {
            *self.waited += self.began.elapsed();
        }
    }
}

impl Messages {
    pub(super) fn new(
        js: &jetstream::Context,
        stream: &str,
        start: u64,
        consumer: Consumer,
    ) -> Self {
        Self {
            js: js.clone(),
            stream: stream.to_owned(),
            consumer,
            next: start,
            left: None,
            waited: Duration::ZERO,
            mending: None,
        }
    }

    /// The next message; `None` if the stream ended. Cancel-safe: a message is never
    /// taken from the consumer and then dropped.
    pub async fn next(&mut self) -> Option<anyhow::Result<jetstream::Message>> {
        if self.left.is_some_and(|left| left.elapsed() > UNREAD_LIMIT) {
            self.mend(Mend::Now(Remake::Unread));
        }
        loop {
            if let Some(mending) = &mut self.mending {
                let mended = mending.await;
                self.mending = None;
                match mended {
                    Ok(Ok(Some(made))) => self.consumer = made,
                    Ok(Ok(None)) => {}
                    // Left as it was: the next `next` tries again.
                    Ok(Err(e)) => return Some(Err(e)),
                    Err(e) => return Some(Err(anyhow::anyhow!("mending the consumer: {e}"))),
                }
            }
            let m = {
                let Self {
                    consumer,
                    left,
                    waited,
                    ..
                } = self;
                *left = None;
                let silent = tokio::time::sleep(SILENT.saturating_sub(*waited));
                let mut asking = Asking {
                    left,
                    waited,
                    began: Instant::now(),
                    in_vain: true,
                };
                // A message ready wins over the silence, and most reads find one ready:
                // the timer is then never armed.
                tokio::select! {
                    biased;
                    m = consumer.messages.next() => {
                        asking.in_vain = !matches!(m, Some(Ok(_)));
                        m
                    }
                    () = silent => {
                        asking.in_vain = false;
                        *asking.waited = Duration::ZERO;
                        drop(asking);
                        self.mend(Mend::Look(self.consumer.name.clone()));
                        continue;
                    }
                }
            };
            let m = match m? {
                Ok(m) => m,
                Err(e) => return Some(Err(e.into())),
            };
            self.waited = Duration::ZERO;
            let seq = m.info().map_or(self.next, |info| info.stream_sequence);
            if seq < self.next {
                tracing::warn!(
                    stream = %self.stream,
                    seq,
                    expected = self.next,
                    "a consumer of the log delivered a message from before the one expected"
                );
                self.mend(Mend::Now(Remake::Behind));
                continue;
            }
            self.next = seq + 1;
            return Some(Ok(m));
        }
    }

    /// The name of the consumer in use on the server (`racing-` and a UUID).
    pub fn consumer_name(&self) -> &str {
        &self.consumer.name
    }

    /// Starts the consumer's mending on a task of its own, unless one is under way.
    fn mend(&mut self, how: Mend) {
        if self.mending.is_some() {
            return;
        }
        let (js, stream, next) = (self.js.clone(), self.stream.clone(), self.next);
        self.mending = Some(AbortOnDropHandle::new(tokio::spawn(async move {
            let why = match how {
                Mend::Now(why) => why,
                Mend::Look(name) => match look(&js, &stream, &name, next).await {
                    Some(why) => why,
                    None => return Ok(None),
                },
            };
            tracing::info!(
                stream = %stream,
                from = next,
                reason = why.reason(),
                "making a consumer of the log again"
            );
            let made = crate::retry::patiently("the consumer made again", REMAKE_PATIENCE, || {
                make_consumer(&js, &stream, next)
            })
            .await?;
            metrics::counter!("racing_consumers_remade_total", "reason" => why.reason())
                .increment(1);
            Ok(Some(made))
        })));
    }
}

/// Asks the server about the consumer `name` of `stream`, whose reader expects `next`:
/// why it must be made again, if it must.
async fn look(js: &jetstream::Context, stream: &str, name: &str, next: u64) -> Option<Remake> {
    let asked = tokio::time::timeout(LOOK_WITHIN, async {
        let stream = js.get_stream_no_info(stream).await?;
        match stream.consumer_info(name).await {
            Ok(info) => anyhow::Ok(Some(info)),
            Err(e) if e.kind() == ConsumerInfoErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    })
    .await;
    match asked {
        Ok(Ok(None)) => Some(Remake::Gone),
        Ok(Ok(Some(info))) => {
            let held = info.num_pending > 0 && info.delivered.stream_sequence < next;
            if held && info.num_waiting == 0 {
                return Some(Remake::Unasked);
            }
            if held {
                tracing::info!(
                    stream,
                    consumer = name,
                    next,
                    pending = info.num_pending,
                    waiting = info.num_waiting,
                    "the server holds messages for a waiting consumer of the log and has delivered none for {SILENT:?}"
                );
            }
            None
        }
        Ok(Err(e)) => {
            tracing::warn!(
                stream,
                consumer = name,
                "a consumer of the log could not be looked at: {e:#}"
            );
            None
        }
        Err(_) => {
            tracing::warn!(
                stream,
                consumer = name,
                "the server said nothing about a consumer of the log within {LOOK_WITHIN:?}"
            );
            None
        }
    }
}

/// Longest the making of a consumer may take before [`messages_from`] gives up on it.
/// nats-server 2.9 puts a one-replica consumer (an ordered one) on a node drawn at random
/// from the stream's peers, a dead one among them, and one made there is never answered
/// for: with one node of three down, a third of the attempts hang, and in CI several in a
/// row, each given 5 s, kept the projector behind long enough to fail `lose_a_node`. A live
/// node answers within milliseconds; a new attempt draws again.
pub const CONSUMER_WITHIN: Duration = Duration::from_secs(2);

/// Every message of `stream` from sequence `start` on, in order, through an ordered pull
/// consumer of its own, made again when its reader leaves it unread too long or the
/// server loses it ([`Messages`]): how the projector and a rebuild read the log. One
/// attempt, bounded by [`CONSUMER_WITHIN`].
pub async fn messages_from(
    js: &jetstream::Context,
    stream: &str,
    start: u64,
) -> anyhow::Result<Messages> {
    let consumer = make_consumer(js, stream, start).await?;
    Ok(Messages::new(js, stream, start, consumer))
}

/// An ordered consumer of `stream` from sequence `start`: one attempt, bounded by
/// [`CONSUMER_WITHIN`].
async fn make_consumer(
    js: &jetstream::Context,
    stream: &str,
    start: u64,
) -> anyhow::Result<Consumer> {
    // Named by the service, so that [`Messages`] can ask the server about it.
    let name = format!("racing-{}", uuid::Uuid::new_v4().simple());
    let made = tokio::time::timeout(CONSUMER_WITHIN, async {
        let consumer = js
            .get_stream(stream)
            .await?
            .create_consumer(consumer::pull::OrderedConfig {
                name: Some(name.clone()),
                deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                    start_sequence: start,
                },
                ..Default::default()
            })
            .await?;
        anyhow::Ok(Consumer {
            messages: consumer.messages().await?,
            name,
        })
    })
    .await;
    made.map_err(|_| {
        anyhow::anyhow!(
            "no consumer of {stream} was made within {CONSUMER_WITHIN:?} (in a cluster, \
             its node may be down; another attempt picks again)"
        )
    })?
}
