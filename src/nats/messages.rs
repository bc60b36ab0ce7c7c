//! Reading the log in order through a consumer that survives its reader's long pauses.
//!
//! The server removes an ordered consumer that asks for nothing for 30 s (async-nats
//! makes them with that inactivity threshold). The client's stream then delivers what it
//! had already pulled and nothing more: with 3,000 messages stored and the stream left
//! unread for 35 s and for 50 s, it delivered 500 and then nothing for 40 s; left 10 s or
//! 25 s, all of them. Readers do leave it that long: the projector over a replay's
//! batches on a large store, a rebuild's worker held stopped for the API's requests.
//! [`Messages`] notes when its reader stopped asking and, past [`UNREAD_LIMIT`], makes
//! the consumer again from the next message before reading on, so that no reader has to.

use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use futures::StreamExt;
use tokio::time::Instant;
use tokio_util::task::AbortOnDropHandle;

/// Longest a reader may leave [`Messages`] unread before it makes its consumer again, well
/// inside the server's 30 s.
pub const UNREAD_LIMIT: Duration = Duration::from_secs(20);

/// How long the making again of a consumer is tried before the read fails: a few of
/// [`super::CONSUMER_WITHIN`]'s attempts, each of which may draw a dead node of a cluster.
const REMAKE_PATIENCE: Duration = Duration::from_secs(10);

/// Every message of a stream from a sequence on, in order: what
/// [`super::messages_from`] returns. Read it with [`Messages::next`].
pub struct Messages {
    js: jetstream::Context,
    stream: String,
    consumer: consumer::pull::Ordered,
    /// The sequence after the last message delivered: where a consumer made again starts.
    next: u64,
    /// When the reader last stopped asking: after a message, or when a wait for one was
    /// given up (a `next` cancelled by a timeout). `None` while a `next` is waiting, which
    /// keeps the consumer asking however long the stream stays quiet.
    left: Option<Instant>,
    /// The consumer being made again, on a task of its own, so that a `next` cancelled
    /// meanwhile (the rebuild waits 250 ms at a time) does not start it over.
    making: Option<AbortOnDropHandle<anyhow::Result<consumer::pull::Ordered>>>,
}

/// Notes when a `next` ends, however it ends: a cancelled one included.
struct Asking<'a>(&'a mut Option<Instant>);

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        *self.0 = Some(Instant::now());
    }
}

impl Messages {
    pub(super) fn new(
        js: &jetstream::Context,
        stream: &str,
        start: u64,
        consumer: consumer::pull::Ordered,
    ) -> Self {
        Self {
            js: js.clone(),
            stream: stream.to_owned(),
            consumer,
            next: start,
            left: None,
            making: None,
        }
    }

    /// The next message; `None` if the stream ended. Cancel-safe: a message is never
    /// taken from the consumer and then dropped.
    pub async fn next(&mut self) -> Option<anyhow::Result<jetstream::Message>> {
        let unread = self.left.filter(|left| left.elapsed() > UNREAD_LIMIT);
        if let (Some(left), None) = (unread, &self.making) {
            tracing::info!(
                stream = %self.stream,
                from = self.next,
                unread_secs = left.elapsed().as_secs(),
                "a consumer of the log was left unread; making it again"
            );
            let (js, stream, next) = (self.js.clone(), self.stream.clone(), self.next);
            self.making = Some(AbortOnDropHandle::new(tokio::spawn(async move {
                crate::retry::patiently("the consumer made again", REMAKE_PATIENCE, || {
                    super::make_consumer(&js, &stream, next)
                })
                .await
            })));
        }
        if let Some(making) = &mut self.making {
            let made = making.await;
            self.making = None;
            match made {
                Ok(Ok(made)) => {
                    self.consumer = made;
                    metrics::counter!("racing_consumers_remade_total").increment(1);
                }
                // Left as it was: the next `next` tries again.
                Ok(Err(e)) => return Some(Err(e)),
                Err(e) => return Some(Err(anyhow::anyhow!("making the consumer again: {e}"))),
            }
        }
        let Self {
            consumer,
            left,
            next,
            ..
        } = self;
        *left = None;
        let _asking = Asking(left);
        let m = consumer.next().await?.map_err(anyhow::Error::from);
        if let Some(info) = m.as_ref().ok().and_then(|m| m.info().ok()) {
            *next = info.stream_sequence + 1;
        }
        Some(m)
    }
}
