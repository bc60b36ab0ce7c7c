//! The fan-out point every session reads from ([`OddsHub`]), and what it relays: odds
//! updates, race-day events, and a catch-up's races.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::broadcast;

use super::snapshot::RaceSnapshot;

/// One odds update as every session receives it.
#[derive(Debug)]
pub struct OddsDelta {
    /// Meeting date, shared by every frame queued for the update.
    pub date: Arc<str>,
    /// Race within the meeting.
    pub race_number: u8,
    /// JetStream stream sequence of the `OddsUpdated` event.
    pub seq: u64,
    /// The `odds` frame, ready to send.
    pub frame: Utf8Bytes,
}

/// A race-day event (a status change, scratching, result, card or retraction) as every
/// session receives it.
#[derive(Debug)]
pub struct DayDelta {
    /// Meeting date.
    pub date: Arc<str>,
    /// Race within the meeting.
    pub race_number: u8,
    /// JetStream stream sequence of the event.
    pub seq: u64,
    /// What it was, for the topics that follow it.
    pub kind: racing_projections::DayKind,
    /// The frame, ready to send.
    pub frame: Utf8Bytes,
}

/// What the hub relays to every session.
#[derive(Debug)]
pub enum Relay {
    /// One odds update, as it was applied.
    Delta(OddsDelta),
    /// Many updates applied at once (the projector catching up after an outage, or a
    /// burst larger than the ring carries well): instead of each of them, the races they
    /// changed, each as it stands after them.
    CaughtUp(CaughtUp),
    /// One race-day event, as it was applied. Never conflated: a session that loses its
    /// place reads the ones it missed back from the store.
    Day(DayDelta),
}

impl Relay {
    /// Where it stands in the stream: the update's `seq`, or a catch-up's last.
    pub fn seq(&self) -> u64 {
        match self {
            Relay::Delta(delta) => delta.seq,
            Relay::CaughtUp(caught_up) => caught_up.upto,
            Relay::Day(day) => day.seq,
        }
    }
}

/// The races a catch-up changed, as snapshots every session shares.
#[derive(Debug)]
pub struct CaughtUp {
    /// The last odds update the catch-up applied.
    pub upto: u64,
    /// Each race it changed, as it stands at `upto`.
    pub races: Vec<RaceSnapshot>,
}

/// Copies of the hub's ring; sessions join them in turn.
const RINGS: usize = 16;

/// The fan-out point: a broadcast ring that every session reads from. A session that
/// falls more than the ring's capacity behind loses its place and is sent fresh snapshots
/// instead, so its memory is bounded whatever it does. The ring is kept in [`RINGS`]
/// copies, each update sent to all of them in the same order and each session reading
/// one: every receiver of a ring registers under the ring's one lock each time it waits,
/// and a thousand sessions on both cores waiting on one lock made each update a queue
/// on it. The hub also keeps, for each race
/// whose odds changed since the process started, the `seq` of its latest change, so that
/// a session that lost its place re-sends only the races that changed since.
pub struct OddsHub {
    state: Mutex<HubState>,
    rings: Vec<broadcast::Sender<Arc<Relay>>>,
    /// The ring the next session joins.
    next: std::sync::atomic::AtomicUsize,
    /// Updates in one commit above which they go out as a catch-up.
    burst: usize,
}

#[derive(Default)]
struct HubState {
    /// The latest sequence published.
    latest: u64,
    /// Each race that changed, by the `seq` of its latest change.
    by_seq: BTreeMap<u64, (Arc<str>, u8)>,
    /// Each date's races, by race number: the `seq` of its latest change (0: none).
    by_date: HashMap<Arc<str>, Box<[u64; 100]>>,
}

impl HubState {
    fn changed(&mut self, date: &str, race_number: u8, seq: u64) {
        self.latest = self.latest.max(seq);
        let slot = usize::from(race_number);
        if slot >= 100 {
            return;
        }
        let date: Arc<str> = match self.by_date.get_key_value(date) {
            Some((d, _)) => d.clone(),
            None => date.into(),
        };
        let races = self
            .by_date
            .entry(date.clone())
            .or_insert_with(|| Box::new([0; 100]));
        let before = races[slot];
        races[slot] = before.max(seq);
        if before < seq {
            self.by_seq.remove(&before);
            self.by_seq.insert(seq, (date, race_number));
        }
    }
}

impl OddsHub {
    /// A hub whose ring holds `capacity` updates, starting from the store's latest odds
    /// sequence. A commit of more than a quarter of the ring's updates goes out as a
    /// catch-up (see [`OddsHub::is_burst`]).
    pub fn new(capacity: usize, latest: u64) -> OddsHub {
        let capacity = capacity.max(1);
        OddsHub {
            state: Mutex::new(HubState {
                latest,
                ..HubState::default()
            }),
            rings: (0..RINGS).map(|_| broadcast::channel(capacity).0).collect(),
            next: std::sync::atomic::AtomicUsize::new(0),
            burst: (capacity / 4).max(1),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any session listens.
    fn listened(&self) -> bool {
        self.rings.iter().any(|ring| ring.receiver_count() > 0)
    }

    /// Sends `relay` to every ring, in the order of the calls (each is made under the
    /// state lock). A ring no session reads refuses it and keeps nothing.
    fn send(&self, relay: Relay) {
        let relay = Arc::new(relay);
        for ring in &self.rings {
            let _ = ring.send(relay.clone());
        }
    }

    /// Whether `updates` applied in one commit go out as a catch-up rather than one by
    /// one: that many would push every session's place out of the ring at once, which is
    /// the server's doing, not any client's.
    pub fn is_burst(&self, updates: usize) -> bool {
        updates > self.burst
    }

    /// How many odds updates of one commit go out one by one: more are a burst.
    pub fn one_by_one(&self) -> usize {
        self.burst
    }

    /// Sends the update `delta` builds to every session. With no session listening it
    /// only records the sequence: replaying the log builds no frame that nobody reads.
    /// (A session joins under the same lock, so it never misses an update sent after.)
    pub fn publish_with(
        &self,
        date: &str,
        race_number: u8,
        seq: u64,
        delta: impl FnOnce() -> OddsDelta,
    ) {
        let mut state = self.state();
        state.changed(date, race_number, seq);
        if self.listened() {
            self.send(Relay::Delta(delta()));
        }
    }

    /// Sends the race-day event `day` builds (`None`: it cannot be read) to every
    /// session; built only if a session listens. Its `seq` is a position like an odds
    /// update's: heartbeats and `welcome` give it.
    pub fn publish_day(&self, seq: u64, day: impl FnOnce() -> Option<DayDelta>) {
        // Built before the lock: it reads the store (a result renders its document),
        // which heartbeats and joins must not wait for. A session that joins between the
        // two follows from a position past it, or resumes it from the journal.
        let day = if self.listened() { day() } else { None };
        let mut state = self.state();
        state.latest = state.latest.max(seq);
        if let Some(day) = day {
            self.send(Relay::Day(day));
        }
    }

    /// Sends a catch-up: the updates `changes` names (`(date, race_number, seq)` each)
    /// are recorded, and every session gets the snapshots `snapshots` builds of the races
    /// they changed instead of each update. Built only if a session listens.
    pub fn publish_caught_up(
        &self,
        changes: &[(&str, u8, u64)],
        snapshots: impl FnOnce(&[(Arc<str>, u8)]) -> Vec<RaceSnapshot>,
    ) {
        let mut state = self.state();
        let mut upto = 0;
        for &(date, race_number, seq) in changes {
            state.changed(date, race_number, seq);
            upto = upto.max(seq);
        }
        if !self.listened() || changes.is_empty() {
            return;
        }
        let races: BTreeSet<(&str, u8)> = changes.iter().map(|&(d, n, _)| (d, n)).collect();
        let races: Vec<(Arc<str>, u8)> = races.into_iter().map(|(d, n)| (d.into(), n)).collect();
        let races = snapshots(&races);
        self.send(Relay::CaughtUp(CaughtUp { upto, races }));
    }

    /// Joins the fan-out: the latest sequence published and a receiver of everything
    /// relayed after it, taken together so that nothing falls between them.
    pub fn join(&self) -> (u64, broadcast::Receiver<Arc<Relay>>) {
        let state = self.state();
        let ring = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % RINGS;
        (state.latest, self.rings[ring].subscribe())
    }

    /// The latest sequence published.
    pub fn latest(&self) -> u64 {
        self.state().latest
    }

    /// The races whose odds changed after `after`, in the order of their latest change.
    /// Only changes published since the process started are known, which is all a
    /// session ever needs: it joined after them.
    pub fn races_changed_since(&self, after: u64) -> Vec<(Arc<str>, u8)> {
        self.state()
            .by_seq
            .range(after.saturating_add(1)..)
            .map(|(_, race)| race.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(date: &str, race_number: u8, seq: u64) -> OddsDelta {
        OddsDelta {
            date: date.into(),
            race_number,
            seq,
            frame: "{}".into(),
        }
    }

    #[test]
    fn the_hub_knows_which_races_changed_since_a_sequence_each_once() {
        let hub = OddsHub::new(16, 10);
        for (date, race, seq) in [
            ("2026-11-21", 1, 11),
            ("2026-11-21", 2, 12),
            ("2026-11-21", 1, 13),
            ("2026-11-22", 1, 14),
        ] {
            hub.publish_with(date, race, seq, || delta(date, race, seq));
        }
        let named = |after| -> Vec<(String, u8)> {
            hub.races_changed_since(after)
                .into_iter()
                .map(|(d, n)| (d.to_string(), n))
                .collect()
        };
        assert_eq!(
            named(10),
            [
                ("2026-11-21".to_owned(), 2),
                ("2026-11-21".to_owned(), 1),
                ("2026-11-22".to_owned(), 1)
            ]
        );
        assert_eq!(
            named(12),
            [("2026-11-21".to_owned(), 1), ("2026-11-22".to_owned(), 1)]
        );
        assert!(named(14).is_empty());
        assert_eq!(hub.latest(), 14);
    }

    #[test]
    fn a_commit_of_more_than_a_quarter_of_the_ring_goes_out_as_one_catch_up() {
        let hub = OddsHub::new(16, 0);
        assert!(!hub.is_burst(4));
        assert!(hub.is_burst(5));
        let (_, mut rx) = hub.join();
        let changes: Vec<(&str, u8, u64)> = (1..=40)
            .map(|seq| ("2026-11-21", (seq % 2 + 1) as u8, seq))
            .collect();
        hub.publish_caught_up(&changes, |races| {
            assert_eq!(races.len(), 2, "each race once: {races:?}");
            races
                .iter()
                .map(|(date, n)| RaceSnapshot {
                    date: date.clone(),
                    race_number: *n,
                    seq: 40,
                    frames: vec!["{}".into()],
                })
                .collect()
        });
        match rx.try_recv().as_deref() {
            Ok(Relay::CaughtUp(c)) => {
                assert_eq!(c.upto, 40);
                assert_eq!(c.races.len(), 2);
            }
            other => panic!("one catch-up, got {other:?}"),
        }
        assert!(rx.try_recv().is_err(), "and nothing else");
        assert_eq!(hub.latest(), 40);
        assert_eq!(hub.races_changed_since(38).len(), 2);
    }
}
