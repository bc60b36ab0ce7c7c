//! The `replay` message: a past meeting's recorded odds played back on a connection at
//! the pace they were given (their `occurred_at`), or faster, beside its live updates.
//! Moves are read from the odds journal a chunk at a time as they fall due and the client
//! takes them, so a replay holds no more than one chunk whatever the length of the day.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use racing_projections::OddsMove;
use serde::Deserialize;
use tokio::time::{Instant, Sleep};

use super::end::{internal, End};
use super::limits::CHUNK;
use super::subscriptions::Target;
use super::Session;
use crate::live::frames::ReplayEndFrame;
use crate::live::frames::{frame, replayed_odds_frame_of};

/// How late a move may go out before the pace starts again from it: a replay held up
/// (its client not reading, or a `since` replay answered meanwhile) resumes at its pace
/// rather than hurrying through what fell due while it waited.
const SLACK: Duration = Duration::from_millis(100);

/// How many times faster than its prices were given a replay plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Speed(f64);

impl Speed {
    /// The rule in words, as the error message gives it.
    pub const RULE: &'static str = "a number from 1 to 100 (fractions such as 2.5 allowed)";

    /// The speed `x`, if it is one.
    pub fn new(x: f64) -> Option<Speed> {
        (1.0..=100.0).contains(&x).then_some(Speed(x))
    }

    /// A gap of `nanos` nanoseconds between two moves' times, played at this speed (none
    /// for a gap that runs backwards).
    fn scale(self, nanos: i128) -> Duration {
        let secs = nanos.max(0) as f64 / 1e9 / self.0;
        // At most a year: a feeder may date its prices far apart, and an `Instant` this
        // far ahead still adds.
        Duration::try_from_secs_f64(secs.min(365.0 * 86_400.0)).unwrap_or_default()
    }
}

/// A replay under way on a connection.
pub(super) struct Playback {
    date: Arc<str>,
    race: Option<u8>,
    speed: Speed,
    /// The latest update when it was asked for: a meeting still running is replayed as
    /// far as it had gone then, so every replay ends.
    upto: u64,
    /// The `seq` of the last move read from the journal.
    after: u64,
    /// Moves read and not yet sent: at most a chunk.
    moves: VecDeque<OddsMove>,
    /// Whether the journal holds nothing more for it.
    exhausted: bool,
    /// The latest time a move sent was given (its `occurred_at`, nanoseconds since the
    /// epoch), and when the move that set it was due: the next is due its gap from that
    /// time later, divided by the speed; one given earlier (moves are played in stream
    /// order, and a feeder may publish a race's history after another's) at once.
    last: Option<(i128, Instant)>,
    /// Moves sent.
    sent: u64,
    /// When the next step is due. Here rather than in the session's loop, so that a
    /// connection without a replay holds no timer for one.
    timer: Pin<Box<Sleep>>,
}

/// What a replay does next.
enum Step {
    /// Send this frame.
    Frame(axum::extract::ws::Utf8Bytes),
    /// Nothing is due until `due`.
    Wait,
    /// Every move has gone out.
    End,
}

#[derive(Deserialize)]
struct Given<'a> {
    occurred_at: &'a str,
}

/// When a journal move's prices were given at their source (its `occurred_at`, not when
/// the log stored it: a history published at once was stored within a second), in
/// nanoseconds since the epoch.
fn given_at(m: &OddsMove) -> Result<i128, End> {
    let given: Given<'_> = serde_json::from_slice(&m.body).map_err(internal)?;
    let at: jiff::Timestamp = given.occurred_at.parse().map_err(internal)?;
    Ok(at.as_nanosecond())
}

impl Playback {
    fn new(t: Target, speed: Speed, upto: u64) -> Playback {
        Playback {
            date: t.0.as_str().into(),
            race: t.1,
            speed,
            upto,
            after: 0,
            moves: VecDeque::new(),
            exhausted: false,
            last: None,
            sent: 0,
            timer: Box::pin(tokio::time::sleep_until(Instant::now())),
        }
    }

    /// Resolves when the replay's next step is due; never without a replay.
    pub async fn due(playback: &mut Option<Box<Playback>>) {
        match playback {
            Some(p) => p.timer.as_mut().await,
            None => std::future::pending().await,
        }
    }

    /// What to read next, when it holds no move and the journal may have more: the date,
    /// the sequence after which, and the race if one.
    fn wants(&self) -> Option<(String, u64, Option<u8>)> {
        (self.moves.is_empty() && !self.exhausted)
            .then(|| (self.date.to_string(), self.after, self.race))
    }

    /// Takes a chunk read after [`Playback::wants`].
    fn fill(&mut self, chunk: Vec<OddsMove>) {
        self.exhausted = chunk.len() < CHUNK;
        for m in chunk {
            self.after = m.seq;
            if m.seq > self.upto {
                self.exhausted = true;
                break;
            }
            self.moves.push_back(m);
        }
    }

    /// The next move if it is due at `now`.
    fn step(&mut self, now: Instant) -> Result<Step, End> {
        let Some(m) = self.moves.front() else {
            return Ok(Step::End);
        };
        let at = given_at(m)?;
        let due = match self.last {
            None => now,
            Some((before, due)) => due + self.speed.scale(at - before),
        };
        if due > now {
            self.timer.as_mut().reset(due);
            return Ok(Step::Wait);
        }
        let text = replayed_odds_frame_of(&m.body).map_err(internal)?;
        self.moves.pop_front();
        let due = if now.saturating_duration_since(due) > SLACK {
            now
        } else {
            due
        };
        let at = self.last.map_or(at, |(before, _)| at.max(before));
        self.last = Some((at, due));
        self.sent += 1;
        self.timer.as_mut().reset(now);
        Ok(Step::Frame(text))
    }

    /// Its `replay_end` frame.
    fn end(&self, stopped: bool) -> axum::extract::ws::Utf8Bytes {
        frame(&ReplayEndFrame {
            r#type: Default::default(),
            date: &self.date,
            race_number: self.race,
            moves: self.sent,
            stopped,
        })
    }
}

impl Session<'_> {
    /// Starts a replay of the target's recorded odds, unless one is under way.
    pub(super) fn start_replay(&mut self, t: Target, speed: Speed) -> Result<(), End> {
        if let Some(running) = &self.playback {
            let message = format!(
                "a replay of {} is under way on this connection; one at a time (send replay_stop to end it)",
                running.date
            );
            return self.error("replay_running", &message);
        }
        let upto = self.ctx.hub.latest();
        self.playback = Some(Box::new(Playback::new(t, speed, upto)));
        Ok(())
    }

    /// Ends the replay under way with a `replay_end` marked stopped.
    pub(super) fn stop_replay(&mut self) -> Result<(), End> {
        match self.playback.take() {
            Some(playback) => {
                self.send(playback.end(true));
                Ok(())
            }
            None => self.error("not_replaying", "no replay is under way on this connection"),
        }
    }

    /// Whether a replay may queue a frame: it takes at most half of the outbox, so that
    /// live updates always find room beside it.
    pub(super) fn replay_room(&self) -> bool {
        self.outbox.len() < (self.ctx.limits.max_pending / 2).max(1)
    }

    /// Sends what of the replay is due, as far as it has room; at its end, `replay_end`.
    /// Its moves are read a chunk at a time on a blocking thread ([`Session::read`]).
    pub(super) async fn play(&mut self) -> Result<(), End> {
        let now = Instant::now();
        while self.replay_room() {
            let Some(mut playback) = self.playback.take() else {
                return Ok(());
            };
            if let Some((date, after, race)) = playback.wants() {
                let chunk = self
                    .read(move |store| store.odds_moves(&date, after, race, CHUNK))
                    .await?;
                playback.fill(chunk);
            }
            match playback.step(now)? {
                Step::Frame(text) => self.send(text),
                Step::Wait => {
                    self.playback = Some(playback);
                    return Ok(());
                }
                Step::End => {
                    self.send(playback.end(false));
                    return Ok(());
                }
            }
            self.playback = Some(playback);
        }
        Ok(())
    }
}
