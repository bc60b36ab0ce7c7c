//! The frames waiting to go out to one client, and the writer that sends them. The
//! session decides what to send and never waits on the socket; the writer waits on the
//! socket and nothing else. The session takes live updates from the shared ring only
//! while the outbox has room, so a slow client's backlog stays in the ring (shared, not
//! per client) until it loses its place there and is sent snapshots instead.

use std::collections::{BTreeSet, VecDeque};
use std::fmt::Display;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use futures::{Sink, SinkExt};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// A frame waiting to go out.
pub(super) struct Pending {
    /// The JSON text.
    pub text: Utf8Bytes,
    /// For an `odds` delta, its race, so that conflation knows what to re-snapshot.
    pub race: Option<(Arc<str>, u8)>,
}

#[derive(Default)]
struct State {
    frames: VecDeque<Pending>,
    close: Option<(u16, &'static str)>,
    stop: bool,
}

/// One client's outgoing frames.
#[derive(Default)]
pub(super) struct Outbox {
    state: Mutex<State>,
    ready: Notify,
    /// Signalled each time the writer takes a frame.
    pub room: Notify,
    /// Cancelled when the writer has finished: the connection is over.
    pub done: CancellationToken,
}

enum Next {
    Frame(Utf8Bytes),
    Close(u16, &'static str),
    Stop,
}

impl Outbox {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a frame.
    pub fn push(&self, pending: Pending) {
        self.state().frames.push_back(pending);
        self.ready.notify_one();
    }

    /// How many frames are waiting.
    pub fn len(&self) -> usize {
        self.state().frames.len()
    }

    /// Removes every waiting `odds` delta and returns the races they were for.
    pub fn take_deltas(&self) -> BTreeSet<(String, u8)> {
        let mut races = BTreeSet::new();
        self.state().frames.retain_mut(|p| match p.race.take() {
            Some((date, n)) => {
                races.insert((date.to_string(), n));
                false
            }
            None => true,
        });
        races
    }

    /// Drops what is waiting and has the writer send a close frame, then stop.
    pub fn close(&self, code: u16, reason: &'static str) {
        let mut state = self.state();
        state.frames.clear();
        state.close = Some((code, reason));
        drop(state);
        self.ready.notify_one();
    }

    /// Has the writer stop without a close frame (the connection is already gone).
    pub fn stop(&self) {
        self.state().stop = true;
        self.ready.notify_one();
    }

    /// The next waiting frame, if any, unless a close or stop is pending (those go first).
    pub(super) fn try_frame(&self) -> Option<Utf8Bytes> {
        let mut state = self.state();
        if state.close.is_some() || state.stop {
            return None;
        }
        let p = state.frames.pop_front()?;
        drop(state);
        self.room.notify_one();
        Some(p.text)
    }

    async fn next(&self) -> Next {
        loop {
            {
                let mut state = self.state();
                if let Some((code, reason)) = state.close.take() {
                    return Next::Close(code, reason);
                }
                if state.stop {
                    return Next::Stop;
                }
                if let Some(p) = state.frames.pop_front() {
                    drop(state);
                    self.room.notify_one();
                    return Next::Frame(p.text);
                }
            }
            self.ready.notified().await;
        }
    }
}

/// Sends the outbox's frames until it closes or stops, or the client stalls for
/// `send_timeout` on one frame (then it is closed with 1008).
pub(super) async fn write<Si>(mut sink: Si, outbox: &Outbox, send_timeout: Duration)
where
    Si: Sink<Message> + Unpin,
    Si::Error: Display,
{
    let sent = metrics::counter!("racing_ws_messages_sent_total");
    loop {
        match outbox.next().await {
            Next::Frame(text) => {
                // Every frame waiting now goes out in one write: a client that falls
                // behind costs fewer system calls, not more.
                let mut frames = 1;
                let written = {
                    let batch = async {
                        sink.feed(Message::Text(text)).await?;
                        while let Some(more) = outbox.try_frame() {
                            sink.feed(Message::Text(more)).await?;
                            frames += 1;
                        }
                        sink.flush().await
                    };
                    let mut batch = std::pin::pin!(batch);
                    // A client that keeps up takes the write at once; the timer is armed
                    // only for one whose socket is full (a timer per frame was a
                    // timer-wheel insert and removal for each of 200,000 frames a second).
                    match futures::poll!(batch.as_mut()) {
                        std::task::Poll::Ready(result) => Ok(result),
                        std::task::Poll::Pending => tokio::time::timeout(send_timeout, batch).await,
                    }
                };
                match written {
                    // One addition per write, not per frame: the counter is shared by
                    // every connection on both cores.
                    Ok(Ok(())) => sent.increment(frames),
                    Ok(Err(_)) => break,
                    Err(_) => {
                        let reason = "too slow: a frame could not be sent in time";
                        close(
                            &mut sink,
                            super::close::CLOSE_POLICY,
                            reason,
                            Duration::from_secs(1),
                        )
                        .await;
                        break;
                    }
                }
            }
            Next::Close(code, reason) => {
                close(&mut sink, code, reason, send_timeout).await;
                break;
            }
            Next::Stop => break,
        }
    }
    outbox.done.cancel();
}

async fn close<Si>(sink: &mut Si, code: u16, reason: &'static str, wait: Duration)
where
    Si: Sink<Message> + Unpin,
{
    let frame = Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }));
    let _ = tokio::time::timeout(wait, async {
        let _ = sink.send(frame).await;
        let _ = sink.close().await;
    })
    .await;
}
