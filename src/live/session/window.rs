//! The conflation a subscriber chooses (`conflate_ms` on `subscribe`): the odds moves of a
//! race within the window go out as one `odds` frame holding each runner's latest prices,
//! with the `seq` and the book of the last move it covers. A move that comes after a quiet
//! window goes at once; those that follow it wait for the window's end, merged. So a
//! race is sent at most one frame a window, and a client that applies them ends at the
//! prices of one sent every move. Race-day frames are never held here.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use tokio::time::Instant;

use super::Session;
use crate::live::frames::{OddsFrame, RunnerPrice};
use crate::live::hub::OddsDelta;

/// A race's moves as one venue gives them: its date, number and venue.
type RaceKey = (Arc<str>, u8, Option<String>);

/// Each race's window.
#[derive(Default)]
pub(super) struct Windows {
    races: BTreeMap<RaceKey, Window>,
}

struct Window {
    /// When its last frame went out.
    sent: Instant,
    /// The window's length.
    every: Duration,
    /// The moves since, merged, and when they go.
    held: Option<(Instant, Held)>,
}

/// Moves merged: the last one's frame, and each runner's latest win and place prices.
struct Held {
    last: OddsFrame,
    runners: BTreeMap<String, (Option<f64>, Option<f64>)>,
}

impl Held {
    fn start(frame: OddsFrame) -> Held {
        let mut held = Held {
            last: frame,
            runners: BTreeMap::new(),
        };
        held.note();
        held
    }

    fn merge(&mut self, frame: OddsFrame) {
        self.last = frame;
        self.note();
    }

    /// Each runner's prices in the last move over what came before.
    fn note(&mut self) {
        for price in &self.last.odds {
            let runner = self.runners.entry(price.horse_no.clone()).or_default();
            runner.0 = price.win_odds.or(runner.0);
            runner.1 = price.place_odds.or(runner.1);
        }
    }

    fn into_frame(self) -> Option<String> {
        let mut frame = self.last;
        frame.odds = self
            .runners
            .into_iter()
            .map(|(horse_no, (win_odds, place_odds))| RunnerPrice {
                horse_no,
                win_odds,
                place_odds,
            })
            .collect();
        serde_json::to_string(&frame).ok()
    }
}

impl Windows {
    /// When the next held frame is due: `None` while none is held.
    pub(super) fn at(&self) -> Option<Instant> {
        self.races
            .values()
            .filter_map(|w| w.held.as_ref().map(|(due, _)| *due))
            .min()
    }

    /// Drops what is held for the race `race_number` of `date` (every venue's): a
    /// snapshot of it covers it.
    pub(super) fn forget(&mut self, date: &str, race_number: u8) {
        for ((d, n, _), window) in self.races.iter_mut() {
            if **d == *date && *n == race_number {
                window.held = None;
            }
        }
    }

    /// Drops everything held, and names the races it was for (to be sent as snapshots).
    pub(super) fn take(&mut self) -> Vec<(String, u8)> {
        let mut races: Vec<(String, u8)> = self
            .races
            .iter_mut()
            .filter_map(|((d, n, _), w)| w.held.take().map(|_| (d.to_string(), *n)))
            .collect();
        races.dedup();
        races
    }
}

impl Session<'_> {
    /// Takes a live delta of a race the connection follows with a window of `every`:
    /// sent at once after a quiet window, else merged into what waits for the window's
    /// end.
    pub(super) fn hold(&mut self, delta: &OddsDelta, every: Duration) {
        let Ok(frame) = serde_json::from_str::<OddsFrame>(delta.frame.as_str()) else {
            // A frame this code cannot read goes as it is.
            self.send_delta(
                delta.seq,
                delta.frame.clone(),
                delta.date.clone(),
                delta.race_number,
            );
            return;
        };
        let now = Instant::now();
        let key = (delta.date.clone(), delta.race_number, frame.venue.clone());
        let window = self.windows.races.entry(key).or_insert(Window {
            sent: now.checked_sub(every).unwrap_or(now),
            every,
            held: None,
        });
        window.every = every;
        match &mut window.held {
            Some((_, held)) => held.merge(frame),
            None if now >= window.sent + every => {
                window.sent = now;
                self.send_delta(
                    delta.seq,
                    delta.frame.clone(),
                    delta.date.clone(),
                    delta.race_number,
                );
                return;
            }
            None => window.held = Some((window.sent + every, Held::start(frame))),
        }
        self.last_odds = delta.seq;
    }

    /// Sends every held frame that is due, each as one `odds` frame of the last move it
    /// covers; a race no longer followed is dropped.
    pub(super) fn send_windows(&mut self) {
        let now = Instant::now();
        let mut due = Vec::new();
        for ((date, n, _), window) in self.windows.races.iter_mut() {
            if window.held.as_ref().is_some_and(|(at, _)| *at <= now) {
                if let Some((_, held)) = window.held.take() {
                    window.sent = now;
                    due.push((date.clone(), *n, held));
                }
            }
        }
        // A window long quiet is forgotten: the next move goes at once all the same.
        self.windows
            .races
            .retain(|_, w| w.held.is_some() || now < w.sent + w.every);
        for (date, n, held) in due {
            let seq = held.last.seq;
            if !self.wants(&date, n, seq) {
                continue;
            }
            if let Some(text) = held.into_frame() {
                self.send_delta(seq, Utf8Bytes::from(text), date, n);
            }
        }
    }
}
