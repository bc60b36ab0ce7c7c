//! One WebSocket session of the live odds protocol, written against a `Sink` and a
//! `Stream` of messages so that it runs over an axum socket in the service and over
//! channels in unit tests. Its rooms: the protocol's messages (`protocol`), what a
//! connection follows and the snapshots that start it (`subscriptions`), `since` replays
//! from the odds journal (`replay`), the race day's other topics (`topics`, `days`), a
//! past meeting played back at its pace beside the
//! live updates (`playback`), and falling behind (`conflation`). It reads the read
//! models and the hub, never the log.
//!
//! Guarantees on a connection: live `odds` frames come in strictly increasing `seq`; a
//! race's `snapshot` comes before any delta for it, and no delta at or below a snapshot's
//! `seq` follows it; a `since` replay hands over to live updates with no gap and no
//! duplicate. The frames a `replay` plays back are marked `"replay":true` and stand
//! outside all of that: they carry their recorded `seq`, in their own increasing order.

mod conflation;
mod days;
mod end;
pub(crate) mod limits;
mod market;
mod playback;
pub(crate) mod protocol;
mod replay;
mod subscriptions;
#[cfg(test)]
mod tests;
pub(crate) mod topics;
mod window;

use std::collections::VecDeque;
use std::fmt::Display;
use std::future::Future;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, Sink, Stream, StreamExt};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::faults::Faults;
use crate::read_models::ReadModels;

use super::close::{CLOSE_GOING_AWAY, CLOSE_TRY_LATER};
use super::frames::frame;
use super::frames::HeartbeatFrame;
use super::hub::{OddsDelta, OddsHub, Relay};
use super::outbox::{self, Outbox, Pending};
use end::{internal, End};
use limits::Limits;
use protocol::broken;
use subscriptions::{Floors, Targets};
use topics::Handed;

/// What every session shares.
#[derive(Clone)]
pub struct SessionContext {
    /// The fan-out of live updates.
    pub hub: Arc<OddsHub>,
    /// The read models: snapshots, and the odds journal for `since` replays.
    pub read_models: Arc<ReadModels>,
    /// Limits.
    pub limits: Limits,
    /// The faults a test injects (none in service).
    pub faults: Arc<Faults>,
}

/// What a connection's work costs its key's plan, shared with HTTP.
pub struct Charge {
    /// Takes a request (a client message) from the key's rate limit; says how long until
    /// it would be admitted if it refuses it.
    pub take: Box<dyn Fn() -> Option<Duration> + Send + Sync>,
    /// Charges `n` requests of work that a message admitted asked for (a `since` replay's
    /// pages), whatever the key has left: past its burst, a debt its next requests wait
    /// out. Never refuses.
    pub owe: Box<dyn Fn(u32) + Send + Sync>,
}

/// A charge that never refuses and counts nothing, for a session that answers to no
/// key's plan.
pub fn free() -> Charge {
    Charge {
        take: Box::new(|| None),
        owe: Box::new(|_| {}),
    }
}

struct Session<'a> {
    ctx: &'a SessionContext,
    outbox: &'a Outbox,
    rx: Receiver<Arc<Relay>>,
    /// `None`: every race (until the first subscribe).
    targets: Option<Targets>,
    floors: Floors,
    /// Per date, how far its race-day events have been handed on.
    handed: Handed,
    /// The `seq` of the last `odds` frame sent (or conflated away).
    last_odds: u64,
    /// Everything at or below this is in what the connection was sent or is covered by
    /// a snapshot: the latest sequence when it joined, then each catch-up's and
    /// conflation's. A conflation re-sends only the races changed after it.
    covered: u64,
    /// Whether the session has waited for room in the outbox (the client not reading)
    /// since it last took an update from the ring: a place lost in the ring then is the
    /// client's doing; one lost while it kept taking is the server's.
    held_back: bool,
    last_sent_at: Instant,
    conflations: VecDeque<Instant>,
    /// The client's messages, against `messages_per_sec` and `message_burst`.
    messages: DefaultDirectRateLimiter,
    /// The key's plan, which each message and each replay is charged to.
    charge: Charge,
    /// The races whose `market` frame is due.
    market: market::MarketDue,
    /// The `replay` under way, if any (boxed: most connections never ask for one).
    playback: Option<Box<playback::Playback>>,
    /// The odds moves held for a subscriber's conflation window (`conflate_ms`).
    windows: window::Windows,
    /// The close that comes from outside (the server shutting down, the key no longer
    /// good for the connection), once it comes: looked at wherever the session waits,
    /// and between the chunks of a replay.
    ends: Ends,
}

/// Where a close from outside comes from: a code and a reason.
type Ends = futures::channel::oneshot::Receiver<(u16, &'static str)>;

/// The session's end for what `ends` gave: the close it brought, or (the watch gone with
/// the connection) nothing more to send.
fn outside(end: Result<(u16, &'static str), futures::channel::oneshot::Canceled>) -> End {
    match end {
        Ok((code, reason)) => End::Close(code, reason),
        Err(_) => End::Gone,
    }
}

/// How a session ends from outside, and whom it costs: `shutdown` (close 1001), `ended`,
/// which resolves with a close code and reason when the key of the connection is no
/// longer good for it, and `charge`, the key's plan.
pub struct Key<F> {
    /// The server shutting down.
    pub shutdown: CancellationToken,
    /// The key no longer good for the connection.
    pub ended: F,
    /// The key's plan.
    pub charge: Charge,
}

/// Runs one session until the client leaves, breaks a limit, or an end from outside
/// comes (see [`Key`]).
pub async fn run_session<Si, St, E>(
    sink: Si,
    mut stream: St,
    ctx: SessionContext,
    key: Key<impl Future<Output = (u16, &'static str)>>,
) where
    Si: Sink<Message> + Unpin,
    Si::Error: Display,
    St: Stream<Item = Result<Message, E>> + Unpin,
    E: Display,
{
    let outbox = Outbox::default();
    // Counted for as long as the session lives, however it ends: an event stream's
    // session is dropped with its response when the client goes.
    let _open = Open::counted();
    let (latest, rx) = ctx.hub.join();
    let (end_tx, end_rx) = futures::channel::oneshot::channel();
    let Key {
        shutdown,
        ended,
        charge,
    } = key;
    let mut session = Session::new(&ctx, &outbox, latest, rx, end_rx);
    session.charge = charge;
    // The client's frames, read by a part of their own: reading the socket (a lock on
    // its read half and a zeroed buffer per attempt) happens only when it is readable,
    // not each time an update wakes the session. The channel holds one frame, so a
    // client that sends faster than the session answers waits in its own TCP window.
    // (A futures channel: it allocates per frame, where tokio's allocates a block of
    // 32 slots up front, 1.3 KiB per idle connection.)
    let (mut client_tx, mut client_rx) = futures::channel::mpsc::channel(0);
    let read = async move {
        while let Some(item) = stream.next().await {
            let broken = item.is_err();
            let item = item.map_err(|e| e.to_string());
            if futures::SinkExt::send(&mut client_tx, item).await.is_err() || broken {
                break;
            }
        }
    };
    // The ends that come from outside (the server shutting down, the key no longer good
    // for the connection) wait in a part of their own, which is polled only when one of
    // them wakes it, and tell the session through a channel of its own. Waited for in
    // the session itself, they were polled on every update: each poll of a waiting
    // notification takes its lock, and the shutdown's lock is shared by every session.
    let watch = async move {
        let end = tokio::select! {
            biased;
            _ = shutdown.cancelled() => (CLOSE_GOING_AWAY, "server shutting down"),
            end = ended => end,
        };
        let _ = end_tx.send(end);
    };
    let decide = async {
        session.welcome(latest);
        match session.serve(&mut client_rx).await {
            End::Close(code, reason) => outbox.close(code, reason),
            End::Gone => outbox.stop(),
        }
    };
    let write = outbox::write(sink, &outbox, ctx.limits.send_timeout);
    // Each part is polled only when it is woken (as a `join!` would poll all three on
    // every wake): an update wakes the session, the session's frame wakes the writer.
    // Each is `true` if its end ends the connection. Each is boxed at its own size: the
    // set's slots are as large as its largest part, and three slots the size of the
    // session would triple an idle connection's memory.
    let mut parts: FuturesUnordered<_> = [
        Box::pin(decide.map(|()| true)).left_future().left_future(),
        Box::pin(write.map(|()| true)).right_future().left_future(),
        Box::pin(read.map(|()| false)).left_future().right_future(),
        Box::pin(watch.map(|()| false))
            .right_future()
            .right_future(),
    ]
    .into_iter()
    .collect();
    // The session and the writer end the connection; the reader may still be waiting on
    // a quiet client, and the watch on the ends from outside, and are dropped with the
    // rest.
    let mut left = 2;
    while let Some(ends) = parts.next().await {
        left -= usize::from(ends);
        if left == 0 {
            break;
        }
    }
}

/// One open connection in `racing_ws_connections`, while it is held.
struct Open(metrics::Gauge);

impl Open {
    fn counted() -> Open {
        let gauge = metrics::gauge!("racing_ws_connections");
        gauge.increment(1.0);
        Open(gauge)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

impl<'a> Session<'a> {
    /// A session that joined the hub at `latest`, with `rx` its place in the ring, closed
    /// by what `ends` brings.
    fn new(
        ctx: &'a SessionContext,
        outbox: &'a Outbox,
        latest: u64,
        rx: Receiver<Arc<Relay>>,
        ends: Ends,
    ) -> Session<'a> {
        Session {
            ctx,
            outbox,
            rx,
            targets: None,
            floors: Floors::default(),
            handed: Handed::default(),
            last_odds: 0,
            covered: latest,
            held_back: false,
            last_sent_at: Instant::now(),
            conflations: VecDeque::new(),
            messages: RateLimiter::direct(message_quota(&ctx.limits)),
            charge: free(),
            market: market::MarketDue::default(),
            playback: None,
            windows: window::Windows::default(),
            ends,
        }
    }

    /// Serves the connection until it ends.
    async fn serve(
        &mut self,
        client: &mut futures::channel::mpsc::Receiver<Result<Message, String>>,
    ) -> End {
        let beat = self.ctx.limits.heartbeat;
        // Both timers are armed once, not once per loop: a timer made per delta was a
        // timer-wheel insert and removal per frame per client.
        let resume = tokio::time::sleep_until(Instant::now() + self.ctx.limits.resume_window);
        let heartbeat = tokio::time::sleep_until(self.last_sent_at + beat);
        // The same for the writer's end: a cancellation future made per loop took the
        // token's lock to register.
        let gone = self.outbox.done.cancelled();
        // Armed only while a race's market is due, at the time it may go out.
        let market = tokio::time::sleep_until(Instant::now());
        let mut market_at = None;
        // Armed only while a conflation window holds moves, at the time they go.
        let window = tokio::time::sleep_until(Instant::now());
        let mut window_at = None;
        tokio::pin!(resume, heartbeat, gone, market, window);
        let mut live = false;
        loop {
            if self.market.at() != market_at {
                market_at = self.market.at();
                if let Some(at) = market_at {
                    market.as_mut().reset(at);
                }
            }
            if self.windows.at() != window_at {
                window_at = self.windows.at();
                if let Some(at) = window_at {
                    window.as_mut().reset(at);
                }
            }
            let room = self.outbox.len() < self.ctx.limits.max_pending;
            self.held_back |= !room;
            // A replay waits for its share of the outbox, which is never the client's
            // fault: live updates still have the rest.
            let replaying = self.playback.is_some();
            let replay_room = replaying && self.replay_room();
            let step = tokio::select! {
                biased;
                end = &mut self.ends => Err(outside(end)),
                _ = &mut gone => Err(End::Gone),
                // Only while there is room for the answer: a client that sends and does
                // not read waits in its own TCP window, not in this server's memory.
                incoming = client.next(), if room => match incoming {
                    Some(Ok(message)) => {
                        live = true;
                        // Boxed: answering a frame may replay from the stream, whose
                        // futures are kilobytes that an idle session would otherwise
                        // hold inline for its whole life.
                        Box::pin(self.on_client(message)).await
                    }
                    Some(Err(error)) => Err(broken(&error)),
                    None => Err(End::Gone),
                },
                _ = self.outbox.room.notified(), if !room || (replaying && !replay_room) => Ok(()),
                relayed = self.rx.recv(), if live && room => match relayed {
                    Ok(relayed) => {
                        self.held_back = false;
                        self.relay(&relayed)
                    }
                    Err(RecvError::Lagged(_)) => {
                        // Skip what is waiting in the ring: the race-day journal and
                        // fresh snapshots cover it.
                        self.rx = self.rx.resubscribe();
                        let counted = std::mem::take(&mut self.held_back);
                        Box::pin(self.fell_behind(counted)).await
                    }
                    Err(RecvError::Closed) => Err(End::Close(CLOSE_GOING_AWAY, "server shutting down")),
                },
                () = &mut market, if room && market_at.is_some() => {
                    Box::pin(self.send_markets()).await
                }
                () = &mut window, if room && window_at.is_some() => {
                    self.send_windows();
                    Ok(())
                }
                // After live updates: a replay never holds them up.
                () = playback::Playback::due(&mut self.playback), if replay_room => {
                    Box::pin(self.play()).await
                }
                _ = &mut resume, if !live => {
                    live = true;
                    Ok(())
                }
                _ = &mut heartbeat => {
                    // Frames sent since the timer was armed put the heartbeat off, and so
                    // do deltas waiting for room: its `seq` would be ahead of them.
                    if room && Instant::now() >= self.last_sent_at + beat {
                        let seq = self.ctx.hub.latest();
                        self.send(frame(&HeartbeatFrame {
                            r#type: Default::default(),
                            seq,
                        }));
                    }
                    heartbeat.as_mut().reset(self.last_sent_at + beat);
                    Ok(())
                }
            };
            if let Err(end) = step {
                return end;
            }
        }
    }

    /// Queues a frame that is not an odds delta (never conflated away).
    fn send(&mut self, text: Utf8Bytes) {
        self.outbox.push(Pending { text, race: None });
        self.last_sent_at = Instant::now();
    }

    /// Queues an odds delta.
    fn send_delta(&mut self, seq: u64, text: Utf8Bytes, date: Arc<str>, race_number: u8) {
        self.outbox.push(Pending {
            text,
            race: Some((date, race_number)),
        });
        self.last_odds = seq;
        self.last_sent_at = Instant::now();
    }

    /// Waits until the outbox has room, so that a replay cannot pile up in memory; a
    /// close from outside ends the wait, and so does one that came before it.
    async fn make_room(&mut self) -> Result<(), End> {
        self.still_open()?;
        while self.outbox.len() >= self.ctx.limits.max_pending {
            tokio::select! {
                biased;
                end = &mut self.ends => return Err(outside(end)),
                _ = self.outbox.room.notified() => {}
                _ = self.outbox.done.cancelled() => return Err(End::Gone),
            }
        }
        Ok(())
    }

    /// The close from outside, if one has come: what a long piece of work (a replay, a
    /// catch-up) asks between its chunks, so that a revoked key's connection does not
    /// last as long as the work.
    fn still_open(&mut self) -> Result<(), End> {
        match self.ends.try_recv() {
            Ok(None) => Ok(()),
            Ok(Some((code, reason))) => Err(End::Close(code, reason)),
            Err(futures::channel::oneshot::Canceled) => Err(End::Gone),
        }
    }

    fn wants(&self, date: &str, race_number: u8, seq: u64) -> bool {
        let followed = self
            .targets
            .as_ref()
            .is_none_or(|t| t.follows(date, race_number));
        followed && seq > self.floors.of(date, race_number)
    }

    /// Passes on what the hub relayed.
    fn relay(&mut self, relayed: &Relay) -> Result<(), End> {
        match relayed {
            Relay::Delta(delta) => {
                self.market_moved(&delta.date, delta.race_number);
                self.deliver(delta)
            }
            Relay::CaughtUp(caught_up) => {
                self.caught_up(caught_up);
                Ok(())
            }
            Relay::Day(day) => {
                // A scratching takes a runner out of its race's market.
                if day.kind == racing_projections::DayKind::Scratching {
                    self.market_moved(&day.date, day.race_number);
                }
                self.deliver_day(day);
                Ok(())
            }
        }
    }

    /// Sends a live delta if the connection follows its race and has not had it.
    fn deliver(&mut self, delta: &OddsDelta) -> Result<(), End> {
        if delta.seq <= self.last_odds || !self.wants(&delta.date, delta.race_number, delta.seq) {
            return Ok(());
        }
        let every = self
            .targets
            .as_ref()
            .map_or(0, |t| t.conflate_ms(&delta.date, delta.race_number));
        if every > 0 {
            self.hold(delta, Duration::from_millis(every));
            return Ok(());
        }
        self.send_delta(
            delta.seq,
            delta.frame.clone(),
            delta.date.clone(),
            delta.race_number,
        );
        Ok(())
    }
}

impl Session<'_> {
    /// Runs `read` over the store in use on a blocking thread, so that no read of the
    /// store (a snapshot, a chunk of a journal) holds up a runtime worker, and gives up
    /// on it after [`Limits::read_timeout`]: the connection is then closed with 1013
    /// (try again later) and the client resumes with `since`. A close from outside that
    /// comes meanwhile ends the wait.
    async fn read<T: Send + 'static>(
        &mut self,
        read: impl FnOnce(&racing_projections::Reader) -> Result<T, racing_projections::StoreError>
            + Send
            + 'static,
    ) -> Result<T, End> {
        let store = self.ctx.read_models.reader();
        self.read_in(store, read).await
    }

    /// [`Session::read`] of `store`, a store in use when a longer piece of work began.
    async fn read_in<T: Send + 'static>(
        &mut self,
        store: racing_projections::Reader,
        read: impl FnOnce(&racing_projections::Reader) -> Result<T, racing_projections::StoreError>
            + Send
            + 'static,
    ) -> Result<T, End> {
        let task = tokio::task::spawn_blocking(move || read(&store));
        let deadline = tokio::time::sleep(self.ctx.limits.read_timeout);
        tokio::select! {
            biased;
            end = &mut self.ends => Err(outside(end)),
            done = task => match done {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Err(internal(e)),
                Err(e) => Err(internal(e)),
            },
            () = deadline => {
                metrics::counter!("racing_ws_reads_timed_out_total").increment(1);
                Err(End::Close(CLOSE_TRY_LATER, "the read models are slow; resume with since"))
            }
        }
    }

    /// Charges a request to the key's plan: an `error` frame (`rate_limited`) and `false`
    /// if the plan refuses it, so that the message is not acted on.
    fn pay(&mut self, what: &str) -> Result<bool, End> {
        let Some(wait) = (self.charge.take)() else {
            return Ok(true);
        };
        let secs = wait.as_secs().max(1);
        let message = format!(
            "{what} is over the API key's request rate; it was not acted on (retry in {})",
            crate::text::count(secs, "second", "seconds")
        );
        self.error("rate_limited", &message)?;
        Ok(false)
    }
}

/// The quota of a connection's messages.
fn message_quota(limits: &Limits) -> Quota {
    let rate = NonZeroU32::new(limits.messages_per_sec).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(limits.message_burst).unwrap_or(rate);
    Quota::per_second(rate).allow_burst(burst)
}
