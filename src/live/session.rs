//! One WebSocket session of the live odds protocol, written against a `Sink` and a
//! `Stream` of messages so that it runs over an axum socket in the service and over
//! channels in unit tests.
//!
//! Guarantees on a connection: `odds` frames come in strictly increasing `seq`; a race's
//! `snapshot` comes before any delta for it, and no delta at or below a snapshot's `seq`
//! follows it; a `since` replay hands over to live updates with no gap and no duplicate.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use axum::extract::ws::{Message, Utf8Bytes};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, Sink, Stream, StreamExt};
use racing_events::{is_calendar_date, Envelope, Event};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::broadcast::Receiver;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::read_models::ReadModels;

use super::outbox::{self, Outbox, Pending};
use super::{
    frame, odds_frame, race_snapshot, CaughtUp, OddsDelta, OddsHub, RaceSnapshot, Relay,
    CLOSE_GOING_AWAY, CLOSE_POLICY, CLOSE_PROTOCOL, CLOSE_TOO_BIG,
};

/// The limits of a session; all configurable.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest inbound frame, bytes.
    pub max_frame_bytes: usize,
    /// Most subscriptions on one connection.
    pub max_subscriptions: usize,
    /// Quiet time after which a heartbeat is sent.
    pub heartbeat: Duration,
    /// How long live updates wait on a new connection for its first message, so that a
    /// client resuming with `subscribe` + `since` gets its replay with nothing before it.
    pub resume_window: Duration,
    /// Longest one frame may take to go out before the client counts as stalled.
    pub send_timeout: Duration,
    /// Frames waiting to go out to one client; while this many wait, it takes no more
    /// live updates from the shared ring.
    pub max_pending: usize,
    /// Conflations allowed within `conflation_window` before the client is closed; only
    /// those the client caused count (it held the session back by not reading), never a
    /// catch-up of the server's.
    pub max_conflations: usize,
    /// See `max_conflations`.
    pub conflation_window: Duration,
    /// Most updates one `since` replays; further back gets a snapshot instead.
    pub max_replay: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: 4096,
            max_subscriptions: 256,
            heartbeat: Duration::from_secs(5),
            resume_window: Duration::from_millis(250),
            send_timeout: Duration::from_secs(10),
            max_pending: 64,
            max_conflations: 3,
            conflation_window: Duration::from_secs(60),
            max_replay: 100_000,
        }
    }
}

/// What every session shares.
#[derive(Clone)]
pub struct SessionContext {
    /// The fan-out of live updates.
    pub hub: Arc<OddsHub>,
    /// The read models, for snapshots.
    pub read_models: Arc<ReadModels>,
    /// JetStream, for `since` replays.
    pub js: jetstream::Context,
    /// Stream name.
    pub stream: String,
    /// Limits.
    pub limits: Limits,
}

/// Why a session ends.
enum End {
    /// The client closed or the connection broke; nothing more to send.
    Gone,
    /// Close with this code and reason.
    Close(u16, &'static str),
}

/// A subscription target: a race, or a whole meeting (`None`).
type Target = (String, Option<u8>);

/// What a connection follows: per date, the whole meeting (`None`) and/or some races.
/// Keyed by date so that the per-delta look-ups borrow the delta's date.
#[derive(Default)]
struct Targets(std::collections::BTreeMap<String, BTreeSet<Option<u8>>>);

impl Targets {
    fn follows(&self, date: &str, race_number: u8) -> bool {
        self.0
            .get(date)
            .is_some_and(|set| set.contains(&None) || set.contains(&Some(race_number)))
    }

    fn contains(&self, t: &Target) -> bool {
        self.0.get(&t.0).is_some_and(|set| set.contains(&t.1))
    }

    fn len(&self) -> usize {
        self.0.values().map(BTreeSet::len).sum()
    }

    fn insert(&mut self, t: &Target) {
        self.0.entry(t.0.clone()).or_default().insert(t.1);
    }

    fn remove(&mut self, t: &Target) -> bool {
        let Some(set) = self.0.get_mut(&t.0) else {
            return false;
        };
        let removed = set.remove(&t.1);
        if set.is_empty() {
            self.0.remove(&t.0);
        }
        removed
    }
}

/// Per target, the sequence at or below which deltas are already covered by a snapshot
/// or a replay, and must not be sent again.
#[derive(Default)]
struct Floors(HashMap<String, HashMap<Option<u8>, u64>>);

impl Floors {
    /// The floor that applies to a delta of this race: its own or its meeting's.
    fn of(&self, date: &str, race_number: u8) -> u64 {
        self.0.get(date).map_or(0, |m| {
            let race = m.get(&Some(race_number)).copied().unwrap_or(0);
            race.max(m.get(&None).copied().unwrap_or(0))
        })
    }

    fn set(&mut self, t: &Target, seq: u64) {
        self.0.entry(t.0.clone()).or_default().insert(t.1, seq);
    }

    fn raise(&mut self, t: &Target, seq: u64) {
        let floor = self
            .0
            .entry(t.0.clone())
            .or_default()
            .entry(t.1)
            .or_default();
        *floor = (*floor).max(seq);
    }

    fn remove(&mut self, t: &Target) {
        if let Some(m) = self.0.get_mut(&t.0) {
            m.remove(&t.1);
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum ClientMessage {
    Subscribe {
        date: String,
        #[serde(default)]
        race_number: Option<i64>,
        #[serde(default)]
        since: Option<u64>,
    },
    Unsubscribe {
        date: String,
        #[serde(default)]
        race_number: Option<i64>,
    },
    Ping,
}

#[derive(Serialize)]
struct ErrorFrame<'a> {
    r#type: &'static str,
    error: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct SeqFrame {
    r#type: &'static str,
    seq: u64,
}

struct Session<'a> {
    ctx: &'a SessionContext,
    outbox: &'a Outbox,
    rx: Receiver<Arc<Relay>>,
    /// `None`: every race (until the first subscribe).
    targets: Option<Targets>,
    floors: Floors,
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
}

/// Runs one session until the client leaves, breaks a limit, `shutdown` (close 1001), or
/// `ended` resolves with a close code and reason (the key of the connection is no longer
/// good for it).
pub async fn run_session<Si, St, E>(
    sink: Si,
    mut stream: St,
    ctx: SessionContext,
    shutdown: CancellationToken,
    ended: impl Future<Output = (u16, &'static str)>,
) where
    Si: Sink<Message> + Unpin,
    Si::Error: Display,
    St: Stream<Item = Result<Message, E>> + Unpin,
    E: Display,
{
    let outbox = Outbox::default();
    let connections = metrics::gauge!("racing_ws_connections");
    connections.increment(1.0);
    let (latest, rx) = ctx.hub.join();
    let mut session = Session {
        ctx: &ctx,
        outbox: &outbox,
        rx,
        targets: None,
        floors: Floors::default(),
        last_odds: 0,
        covered: latest,
        held_back: false,
        last_sent_at: Instant::now(),
        conflations: VecDeque::new(),
    };
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
    let decide = async {
        // Pinned once here, as the other ends are in `serve`.
        let ended = std::pin::pin!(ended);
        session.welcome(latest);
        match session.serve(&mut client_rx, &shutdown, ended).await {
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
        Box::pin(read.map(|()| false)).right_future(),
    ]
    .into_iter()
    .collect();
    // The session and the writer end the connection; the reader may still be waiting on
    // a quiet client, and is dropped with the rest.
    let mut left = 2;
    while let Some(ends) = parts.next().await {
        left -= usize::from(ends);
        if left == 0 {
            break;
        }
    }
    drop(parts);
    connections.decrement(1.0);
}

impl Session<'_> {
    fn welcome(&mut self, latest: u64) {
        #[derive(Serialize)]
        struct Welcome {
            r#type: &'static str,
            seq: u64,
            heartbeat_ms: u128,
        }
        self.send(frame(&Welcome {
            r#type: "welcome",
            seq: latest,
            heartbeat_ms: self.ctx.limits.heartbeat.as_millis(),
        }));
    }

    async fn serve(
        &mut self,
        client: &mut futures::channel::mpsc::Receiver<Result<Message, String>>,
        shutdown: &CancellationToken,
        mut ended: std::pin::Pin<&mut impl Future<Output = (u16, &'static str)>>,
    ) -> End {
        let beat = self.ctx.limits.heartbeat;
        // Both timers are armed once, not once per loop: a timer made per delta was a
        // timer-wheel insert and removal per frame per client.
        let resume = tokio::time::sleep_until(Instant::now() + self.ctx.limits.resume_window);
        let heartbeat = tokio::time::sleep_until(self.last_sent_at + beat);
        // The same for the two ends: a cancellation future made per loop took the token's
        // lock to register.
        let outbox = self.outbox;
        let (stopping, gone) = (shutdown.cancelled(), outbox.done.cancelled());
        tokio::pin!(resume, heartbeat, stopping, gone);
        let mut live = false;
        loop {
            let room = self.outbox.len() < self.ctx.limits.max_pending;
            self.held_back |= !room;
            let step = tokio::select! {
                biased;
                _ = &mut stopping => Err(End::Close(CLOSE_GOING_AWAY, "server shutting down")),
                _ = &mut gone => Err(End::Gone),
                (code, reason) = &mut ended => Err(End::Close(code, reason)),
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
                _ = self.outbox.room.notified(), if !room => Ok(()),
                relayed = self.rx.recv(), if live && room => match relayed {
                    Ok(relayed) => {
                        self.held_back = false;
                        self.relay(&relayed)
                    }
                    Err(RecvError::Lagged(_)) => {
                        // Skip what is waiting in the ring: fresh snapshots cover it.
                        self.rx = self.rx.resubscribe();
                        let counted = std::mem::take(&mut self.held_back);
                        self.conflate(counted)
                    }
                    Err(RecvError::Closed) => Err(End::Close(CLOSE_GOING_AWAY, "server shutting down")),
                },
                _ = &mut resume, if !live => {
                    live = true;
                    Ok(())
                }
                _ = &mut heartbeat => {
                    // Frames sent since the timer was armed put the heartbeat off, and so
                    // do deltas waiting for room: its `seq` would be ahead of them.
                    if room && Instant::now() >= self.last_sent_at + beat {
                        let seq = self.ctx.hub.latest();
                        self.send(frame(&SeqFrame { r#type: "heartbeat", seq }));
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

    /// Waits until the outbox has room, so that a replay cannot pile up in memory.
    async fn make_room(&self) -> Result<(), End> {
        while self.outbox.len() >= self.ctx.limits.max_pending {
            tokio::select! {
                _ = self.outbox.room.notified() => {}
                _ = self.outbox.done.cancelled() => return Err(End::Gone),
            }
        }
        Ok(())
    }

    fn error(&mut self, error: &str, message: &str) -> Result<(), End> {
        self.send(frame(&ErrorFrame {
            r#type: "error",
            error,
            message,
        }));
        Ok(())
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
            Relay::Delta(delta) => self.deliver(delta),
            Relay::CaughtUp(caught_up) => {
                self.caught_up(caught_up);
                Ok(())
            }
        }
    }

    /// Sends a live delta if the connection follows its race and has not had it.
    fn deliver(&mut self, delta: &OddsDelta) -> Result<(), End> {
        if delta.seq <= self.last_odds || !self.wants(&delta.date, delta.race_number, delta.seq) {
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

    async fn on_client(&mut self, message: Message) -> Result<(), End> {
        let text = match message {
            Message::Text(t) => t,
            Message::Binary(_) => return self.error("bad_request", "frames must be JSON text"),
            Message::Close(_) => return Err(End::Gone),
            // The protocol layer answers pings itself.
            Message::Ping(_) | Message::Pong(_) => return Ok(()),
        };
        if text.len() > self.ctx.limits.max_frame_bytes {
            let message = format!(
                "frames are limited to {} bytes",
                self.ctx.limits.max_frame_bytes
            );
            return self.error("frame_too_large", &message);
        }
        match serde_json::from_str::<ClientMessage>(&text) {
            Err(e) => self.error("bad_request", &e.to_string()),
            Ok(ClientMessage::Ping) => {
                self.send(frame(&PongFrame { r#type: "pong" }));
                Ok(())
            }
            Ok(ClientMessage::Subscribe {
                date,
                race_number,
                since,
            }) => match target(date, race_number) {
                Ok(t) => self.subscribe(t, since).await,
                Err(message) => self.error("bad_request", &message),
            },
            Ok(ClientMessage::Unsubscribe { date, race_number }) => match target(date, race_number)
            {
                Ok(t) => self.unsubscribe(t),
                Err(message) => self.error("bad_request", &message),
            },
        }
    }

    async fn subscribe(&mut self, t: Target, since: Option<u64>) -> Result<(), End> {
        let targets = self.targets.get_or_insert_with(Targets::default);
        if !targets.contains(&t) && targets.len() >= self.ctx.limits.max_subscriptions {
            let message = format!(
                "at most {} subscriptions on one connection",
                self.ctx.limits.max_subscriptions
            );
            return self.error("too_many_subscriptions", &message);
        }
        targets.insert(&t);
        match since {
            // A replay can go out in order only if nothing newer went out before it, and
            // a `since` past the latest update (from another stream, or a later run of
            // it) names nothing this stream can replay.
            Some(since) if since >= self.last_odds && since <= self.ctx.hub.latest() => {
                self.replay(t, since).await
            }
            _ => self.snapshots(&t),
        }
    }

    fn unsubscribe(&mut self, t: Target) -> Result<(), End> {
        let removed = self.targets.as_mut().is_some_and(|set| set.remove(&t));
        if removed {
            self.floors.remove(&t);
            return Ok(());
        }
        let message = match &self.targets {
            None => "the connection follows every race until its first subscribe".to_owned(),
            Some(_) => format!("not subscribed to {}", describe(&t)),
        };
        self.error("not_subscribed", &message)
    }

    /// Sends the current odds of the target's race, or of each race of its meeting that
    /// has odds.
    fn snapshots(&mut self, t: &Target) -> Result<(), End> {
        let races = match t.1 {
            Some(n) => vec![n],
            None => self
                .ctx
                .read_models
                .load()
                .odds_changed_since(Some(&t.0), 0)
                .map_err(internal)?
                .into_iter()
                .map(|(_, n)| n)
                .collect(),
        };
        for n in races {
            self.snapshot(&t.0, n)?;
        }
        Ok(())
    }

    /// Sends the current odds of a race: a `snapshot` for each venue that runs it (one
    /// with `venue` null where none is known), or an empty one.
    fn snapshot(&mut self, date: &str, race_number: u8) -> Result<(), End> {
        let snapshot =
            race_snapshot(&self.ctx.read_models.load(), date, race_number).map_err(internal)?;
        self.send_snapshot(&snapshot);
        Ok(())
    }

    /// Queues a race's snapshot frames; no delta at or below them follows.
    fn send_snapshot(&mut self, snapshot: &RaceSnapshot) {
        self.floors.raise(
            &(snapshot.date.to_string(), Some(snapshot.race_number)),
            snapshot.seq,
        );
        for frame in &snapshot.frames {
            self.send(frame.clone());
        }
    }

    /// The server caught up on many updates at once: the races they changed that this
    /// connection follows, as they now stand, in place of each update. Not a conflation
    /// of the client's: it counts against nothing.
    fn caught_up(&mut self, caught_up: &CaughtUp) {
        for race in &caught_up.races {
            if self.wants(&race.date, race.race_number, race.seq) {
                self.send_snapshot(race);
            }
        }
        self.covered = self.covered.max(caught_up.upto);
    }

    /// Replays the target's updates after `since` from the stream, merged in sequence
    /// with whatever live updates are waiting, then goes on live.
    async fn replay(&mut self, t: Target, since: u64) -> Result<(), End> {
        // Every update up to `upto` has already been handed to this session's receiver:
        // the hub sends under the same lock that `latest` reads.
        let upto = self.ctx.hub.latest();
        // What a snapshot already covered stays covered: an earlier `subscribe` to one of
        // the meeting's races sent its odds as of some `seq`, and nothing at or below it
        // may follow.
        let covered = Floors(
            self.floors
                .0
                .get(&t.0)
                .map(|m| HashMap::from([(t.0.clone(), m.clone())]))
                .unwrap_or_default(),
        );
        self.floors.set(&t, upto.max(since));
        let replayed = match self.read_stream(&t, since, upto).await {
            Ok(Some(frames)) => frames,
            Ok(None) => {
                self.floors.set(&t, since);
                return self.snapshots(&t);
            }
            Err(e) => {
                tracing::warn!(error = %e, "odds replay failed; sending a snapshot");
                self.floors.set(&t, since);
                return self.snapshots(&t);
            }
        };
        let mut waiting = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(relayed) => waiting.push(relayed),
                Err(TryRecvError::Empty) | Err(TryRecvError::Closed) => break,
                Err(TryRecvError::Lagged(_)) => {
                    // Not the client's doing: it has been sent nothing since.
                    self.rx = self.rx.resubscribe();
                    return self.conflate(false);
                }
            }
        }
        let date: Arc<str> = t.0.as_str().into();
        let mut replayed = replayed.into_iter().peekable();
        let mut waiting = waiting.into_iter().peekable();
        loop {
            let take_replay = match (replayed.peek(), waiting.peek()) {
                (Some((a, _, _)), Some(b)) => *a < b.seq(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return Ok(()),
            };
            self.make_room().await?;
            if take_replay {
                if let Some((seq, race_number, text)) = replayed.next() {
                    if seq > self.last_odds && seq > covered.of(&t.0, race_number) {
                        self.send_delta(seq, text, date.clone(), race_number);
                    }
                }
            } else if let Some(relayed) = waiting.next() {
                self.relay(&relayed)?;
            }
        }
    }

    /// The target's odds frames in `(since, upto]`, read from the stream; `None` when
    /// there are more than a replay may hold.
    async fn read_stream(
        &self,
        t: &Target,
        since: u64,
        upto: u64,
    ) -> anyhow::Result<Option<Vec<(u64, u8, Utf8Bytes)>>> {
        if since >= upto {
            return Ok(Some(Vec::new()));
        }
        let filter = match t.1 {
            Some(n) => format!("racing.odds.{}.{n}", t.0),
            None => format!("racing.odds.{}.*", t.0),
        };
        let stream = self.ctx.js.get_stream(&self.ctx.stream).await?;
        let consumer = stream
            .create_consumer(consumer::pull::OrderedConfig {
                filter_subject: filter,
                deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                    start_sequence: since + 1,
                },
                ..Default::default()
            })
            .await?;
        if consumer.cached_info().num_pending > self.ctx.limits.max_replay {
            return Ok(None);
        }
        if consumer.cached_info().num_pending == 0 {
            return Ok(Some(Vec::new()));
        }
        // Updates the projector ignored as duplicates never went live: skipped here too.
        let ignored = self.ctx.read_models.load().ignored_odds(since, upto)?;
        let mut messages = consumer.messages().await?;
        let mut frames = Vec::new();
        let deadline = Instant::now() + self.ctx.limits.send_timeout;
        while let Some(message) = tokio::time::timeout_at(deadline, messages.next()).await? {
            let message = message?;
            let info = message.info().map_err(|e| anyhow::anyhow!("{e}"))?;
            let seq = info.stream_sequence;
            if seq > upto {
                break;
            }
            // Refused events were never live either: a replay skips them too.
            let event = if ignored.contains(&seq) {
                None
            } else {
                Envelope::decode(message.subject.as_str(), &message.payload).ok()
            };
            if let Some(Envelope {
                event: Event::OddsUpdated(o),
                ..
            }) = event
            {
                let published = published_at(info.published.unix_timestamp_nanos());
                let race = u8::try_from(o.race_number).unwrap_or(0);
                frames.push((
                    seq,
                    race,
                    odds_frame(&o.date, o.venue.as_deref(), race, seq, &published, &o.odds),
                ));
            }
            if seq >= upto || info.pending == 0 {
                break;
            }
        }
        Ok(Some(frames))
    }

    /// The session lost its place in the ring: its pending deltas, and the updates it
    /// missed, are replaced by one fresh snapshot for each race they were for (the races
    /// the hub knows changed since the connection was last covered, not every race). A
    /// client that causes this too often (`counted`: it held the session back by not
    /// reading) is closed.
    fn conflate(&mut self, counted: bool) -> Result<(), End> {
        if counted {
            let now = Instant::now();
            let window = self.ctx.limits.conflation_window;
            self.conflations.retain(|t| now.duration_since(*t) < window);
            self.conflations.push_back(now);
            if self.conflations.len() > self.ctx.limits.max_conflations {
                return Err(End::Close(
                    CLOSE_POLICY,
                    "too slow: fell behind the odds stream repeatedly",
                ));
            }
        }
        let mut races = self.outbox.take_deltas();
        let horizon = self.covered.max(self.last_odds);
        self.covered = self.ctx.hub.latest();
        races.extend(
            self.ctx
                .hub
                .races_changed_since(horizon)
                .into_iter()
                .map(|(date, n)| (date.to_string(), n)),
        );
        for (date, n) in races {
            if self.targets.as_ref().is_none_or(|t| t.follows(&date, n)) {
                self.snapshot(&date, n)?;
            }
        }
        Ok(())
    }
}

#[derive(Serialize)]
struct PongFrame {
    r#type: &'static str,
}

/// How a connection whose client side broke is closed: a frame over the protocol layer's
/// limit with 1009 (the client may still read it), anything else with 1002.
fn broken(error: &str) -> End {
    tracing::debug!(error, "live odds client frame unreadable");
    // tungstenite's words for a frame over `max_message_size` / `max_frame_size`.
    if error.contains("too long") {
        End::Close(CLOSE_TOO_BIG, "frame over the 64 KiB limit")
    } else {
        End::Close(CLOSE_PROTOCOL, "unreadable frame")
    }
}

fn internal(e: impl Display) -> End {
    tracing::error!(error = %e, "odds session");
    End::Close(1011, "internal error")
}

fn target(date: String, race_number: Option<i64>) -> Result<Target, String> {
    if !is_calendar_date(&date) {
        return Err("date must be a real calendar date written YYYY-MM-DD".into());
    }
    match race_number {
        None => Ok((date, None)),
        Some(n @ 1..=99) => Ok((date, Some(n as u8))),
        Some(_) => Err("race_number must be an integer from 1 to 99".into()),
    }
}

fn describe(t: &Target) -> String {
    match t.1 {
        Some(n) => format!("race {n} on {}", t.0),
        None => format!("the meeting on {}", t.0),
    }
}

/// RFC 3339 text of a JetStream publish time.
pub fn published_at(unix_nanos: i128) -> String {
    jiff::Timestamp::from_nanosecond(unix_nanos)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::nats::LocalNats;

    /// A session's surroundings: a nats-server and a store of its own, and a hub whose
    /// ring holds `ring` updates.
    struct Fixture {
        ctx: SessionContext,
        nats: LocalNats,
        _dir: tempfile::TempDir,
    }

    impl Fixture {
        async fn new(ring: usize, limits: Limits) -> Fixture {
            let dir = tempfile::TempDir::new().expect("temp dir");
            let credentials =
                crate::nats::Credentials::ensure(&dir.path().join("credentials"), "RACING")
                    .expect("credentials");
            let nats =
                LocalNats::start("nats-server", &dir.path().join("nats"), None, &credentials)
                    .await
                    .expect("nats-server starts");
            let js = jetstream::new(
                nats.connect(crate::nats::Role::Service)
                    .await
                    .expect("connect"),
            );
            let store = racing_projections::Store::open(&dir.path().join("read-models"))
                .expect("store opens");
            let ctx = SessionContext {
                hub: Arc::new(OddsHub::new(ring, 0)),
                read_models: ReadModels::new(store, dir.path()),
                js,
                stream: "RACING".into(),
                limits,
            };
            Fixture {
                ctx,
                nats,
                _dir: dir,
            }
        }
    }

    /// A client that sends frame after frame and reads nothing: once the answers that
    /// wait for it fill its outbox, its frames are no longer read, so what it costs the
    /// server stays bounded however much it sends.
    #[tokio::test]
    async fn a_client_that_never_reads_is_not_read_without_end() {
        let limits = Limits {
            send_timeout: Duration::from_secs(600),
            ..Limits::default()
        };
        let max_pending = limits.max_pending;
        let Fixture { ctx, nats, _dir } = Fixture::new(64, limits).await;
        let pulled = Arc::new(AtomicUsize::new(0));
        let counter = pulled.clone();
        let frames = futures::stream::iter(0..100_000).map(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
            Ok::<_, std::convert::Infallible>(Message::Text(r#"{"type":"ping"}"#.into()))
        });
        // A socket whose peer reads nothing: the first frame fills it.
        let (sink, _unread) = futures::channel::mpsc::channel::<Message>(0);
        let shutdown = CancellationToken::new();
        let session = run_session(sink, frames, ctx, shutdown.clone(), std::future::pending());
        let ended = tokio::time::timeout(Duration::from_millis(500), session).await;
        assert!(ended.is_err(), "the session waits for the client");
        let pulled = pulled.load(Ordering::Relaxed);
        assert!(
            pulled <= max_pending + 4,
            "{pulled} frames read with {max_pending} answers allowed to wait"
        );
        nats.kill().await;
    }

    /// Publishes `n` updates of one race at once, faster than any session takes them
    /// from a small ring.
    fn burst(hub: &OddsHub, from: u64, n: u64) -> u64 {
        for seq in from..from + n {
            hub.publish_with("2026-11-21", 1, seq, || OddsDelta {
                date: "2026-11-21".into(),
                race_number: 1,
                seq,
                frame: format!("{{\"type\":\"odds\",\"seq\":{seq}}}").into(),
            });
        }
        from + n
    }

    /// A session that loses its place in the ring while it keeps taking from it (the
    /// server published faster than it was scheduled) is conflated, and that does not
    /// count against its client; one whose client does not read is held back, and its
    /// conflations count until it is closed.
    #[tokio::test]
    async fn only_a_conflation_the_client_caused_counts_against_it() {
        let limits = Limits {
            resume_window: Duration::ZERO,
            max_pending: 4,
            max_conflations: 2,
            ..Limits::default()
        };
        let Fixture { ctx, nats, _dir } = Fixture::new(8, limits).await;
        let hub = ctx.hub.clone();
        // A client that reads every frame at once.
        let (sink, mut read) = futures::channel::mpsc::unbounded::<Message>();
        let frames = futures::stream::pending::<Result<Message, std::convert::Infallible>>();
        let shutdown = CancellationToken::new();
        let session = tokio::spawn(run_session(
            sink,
            frames,
            ctx.clone(),
            shutdown.clone(),
            std::future::pending(),
        ));
        let welcome = read.next().await.expect("a welcome");
        assert!(matches!(&welcome, Message::Text(t) if t.contains("welcome")));
        let mut seq = 1;
        let mut snapshots = 0;
        for _ in 0..6 {
            // Five times the ring at once: its place is lost before it can take any.
            seq = burst(&hub, seq, 40);
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let frame = tokio::time::timeout_at(deadline, read.next())
                    .await
                    .expect("a snapshot after the burst")
                    .expect("connection open");
                match frame {
                    Message::Text(t) if t.contains("\"snapshot\"") => {
                        snapshots += 1;
                        break;
                    }
                    Message::Close(c) => panic!("closed: {c:?}"),
                    _ => {}
                }
            }
        }
        assert_eq!(snapshots, 6);
        assert!(
            !session.is_finished(),
            "a client that reads is never closed"
        );

        // A client that reads slower than updates come, one at a time: its session waits
        // for room, and loses its place meanwhile.
        let (sink, mut slow) = futures::channel::mpsc::channel::<Message>(0);
        let frames = futures::stream::pending::<Result<Message, std::convert::Infallible>>();
        let held = tokio::spawn(run_session(
            sink,
            frames,
            ctx.clone(),
            shutdown.clone(),
            std::future::pending(),
        ));
        let welcome = slow.next().await.expect("a welcome");
        assert!(matches!(&welcome, Message::Text(t) if t.contains("welcome")));
        let deadline = Instant::now() + Duration::from_secs(10);
        let close = 'read: loop {
            assert!(
                Instant::now() < deadline,
                "the slow client was never closed"
            );
            for _ in 0..10 {
                seq = burst(&hub, seq, 1);
                tokio::task::yield_now().await;
            }
            match slow.next().await {
                Some(Message::Close(c)) => break 'read c,
                Some(_) => {}
                None => panic!("the connection ended without a close frame"),
            }
        };
        let close = close.expect("a close frame with a reason");
        assert_eq!(close.code, CLOSE_POLICY);
        assert!(close.reason.contains("fell behind"), "{}", close.reason);
        let _ = held.await;
        shutdown.cancel();
        let _ = session.await;
        nats.kill().await;
    }
}
