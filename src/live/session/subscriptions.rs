//! What a connection follows, and the snapshots that start it: `subscribe` and
//! `unsubscribe`, and per target the sequence at or below which nothing is sent again.

use std::collections::{BTreeMap, BTreeSet};

use super::{internal, End, Session};
use crate::live::{race_snapshot, RaceSnapshot};

/// A subscription target: a race, or a whole meeting (`None`).
pub(super) type Target = (String, Option<u8>);

/// What a connection follows: per date, the whole meeting (`None`) and/or some races.
/// Keyed by date so that the per-delta look-ups borrow the delta's date.
#[derive(Default)]
pub(super) struct Targets(BTreeMap<String, BTreeSet<Option<u8>>>);

impl Targets {
    pub(super) fn follows(&self, date: &str, race_number: u8) -> bool {
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
/// or a replay, and must not be sent again. B-trees, not hash maps: every session looks
/// its floor up for every delta, and a connection follows a date or a few, each of a
/// dozen races, where a comparison or two is cheaper than hashing the date and the race
/// with SipHash (the hash maps were 4% of the service's CPU relaying odds to 1,000
/// clients).
#[derive(Default, Clone)]
pub(super) struct Floors(BTreeMap<String, BTreeMap<Option<u8>, u64>>);

impl Floors {
    /// The floor that applies to a delta of this race: its own or its meeting's.
    pub(super) fn of(&self, date: &str, race_number: u8) -> u64 {
        self.0.get(date).map_or(0, |m| {
            let race = m.get(&Some(race_number)).copied().unwrap_or(0);
            race.max(m.get(&None).copied().unwrap_or(0))
        })
    }

    pub(super) fn raise(&mut self, t: &Target, seq: u64) {
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

    /// The floors of one date only.
    pub(super) fn of_date(&self, date: &str) -> Floors {
        Floors(
            self.0
                .get(date)
                .map(|m| BTreeMap::from([(date.to_owned(), m.clone())]))
                .unwrap_or_default(),
        )
    }
}

impl Session<'_> {
    pub(super) async fn subscribe(&mut self, t: Target, since: Option<u64>) -> Result<(), End> {
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
            // a `since` past the log applied here (from another stream, or a later run of
            // it) names nothing this stream can replay. Up to there it is a position, an
            // HTTP answer's `Racing-Seq` as much as an odds update's `seq`.
            Some(since) if since >= self.last_odds && since <= self.applied()? => {
                self.replay(t, since).await
            }
            _ => self.snapshots(&t),
        }
    }

    /// How far the log has been applied here: the store's checkpoint, or the latest
    /// update relayed if that is further (an update goes live after its commit).
    fn applied(&self) -> Result<u64, End> {
        let checkpoint = self.ctx.read_models.load().checkpoint().map_err(internal)?;
        Ok(checkpoint.max(self.ctx.hub.latest()))
    }

    pub(super) fn unsubscribe(&mut self, t: Target) -> Result<(), End> {
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
    pub(super) fn snapshots(&mut self, t: &Target) -> Result<(), End> {
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
    pub(super) fn snapshot(&mut self, date: &str, race_number: u8) -> Result<(), End> {
        let snapshot =
            race_snapshot(&self.ctx.read_models.load(), date, race_number).map_err(internal)?;
        self.send_snapshot(&snapshot);
        Ok(())
    }

    /// Queues a race's snapshot frames; no delta at or below them follows.
    pub(super) fn send_snapshot(&mut self, snapshot: &RaceSnapshot) {
        self.floors.raise(
            &(snapshot.date.to_string(), Some(snapshot.race_number)),
            snapshot.seq,
        );
        for frame in &snapshot.frames {
            self.send(frame.clone());
        }
    }
}

fn describe(t: &Target) -> String {
    match t.1 {
        Some(n) => format!("race {n} on {}", t.0),
        None => format!("the meeting on {}", t.0),
    }
}
