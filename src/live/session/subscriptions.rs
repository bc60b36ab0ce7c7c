//! What a connection follows, and the snapshots that start it: `subscribe` and
//! `unsubscribe`, and per target the sequence at or below which nothing is sent again.

use std::collections::{BTreeMap, BTreeSet};

use racing_projections::{DayKind, Reader, StoreError};

use super::end::End;
use super::topics::Topics;
use super::Session;
use crate::live::snapshot::{race_snapshot, RaceSnapshot};

/// The odds moves a `since` replay sends for one request of the key's plan: a page of
/// odds history over HTTP holds as many by default.
pub(super) const REPLAY_PAGE: u64 = 1_000;

/// How many times the snapshots are read where commits keep coming between the two reads
/// of the checkpoint around them.
const SNAPSHOT_READS: u32 = 3;

/// A subscription target: a race, or a whole meeting (`None`).
pub(super) type Target = (String, Option<u8>);

/// What a connection follows: per date, the whole meeting (`None`) and/or some races,
/// each with its topics. Keyed by date so that the per-delta look-ups borrow the delta's
/// date.
#[derive(Default, Clone)]
pub(super) struct Targets(BTreeMap<String, BTreeMap<Option<u8>, Follow>>);

/// What one target follows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Follow {
    pub topics: Topics,
    /// Race-day events at or below this `seq` are not its: it was subscribed after them
    /// (or resumed `since` it).
    pub day_from: u64,
    /// Its conflation window, milliseconds; 0: every move.
    pub conflate_ms: u64,
}

impl Targets {
    /// Whether the race's odds are followed.
    pub(super) fn follows(&self, date: &str, race_number: u8) -> bool {
        self.0.get(date).is_some_and(|set| {
            [None, Some(race_number)]
                .iter()
                .any(|t| set.get(t).is_some_and(|f| f.topics.odds()))
        })
    }

    /// The conflation window of the race's odds: the shortest of the targets that
    /// follow them (0 where one takes every move).
    pub(super) fn conflate_ms(&self, date: &str, race_number: u8) -> u64 {
        self.0.get(date).map_or(0, |set| {
            [None, Some(race_number)]
                .iter()
                .filter_map(|t| set.get(t).filter(|f| f.topics.odds()))
                .map(|f| f.conflate_ms)
                .min()
                .unwrap_or(0)
        })
    }

    /// Whether the race's market is followed.
    pub(super) fn follows_market(&self, date: &str, race_number: u8) -> bool {
        self.0.get(date).is_some_and(|set| {
            [None, Some(race_number)]
                .iter()
                .any(|t| set.get(t).is_some_and(|f| f.topics.market()))
        })
    }

    /// Whether a race-day event of the race is followed.
    pub(super) fn follows_day(&self, date: &str, race_number: u8, kind: DayKind, seq: u64) -> bool {
        self.0.get(date).is_some_and(|set| {
            [None, Some(race_number)].iter().any(|t| {
                set.get(t)
                    .is_some_and(|f| f.topics.has(kind) && f.day_from < seq)
            })
        })
    }

    /// The dates followed for a race-day topic.
    pub(super) fn race_day_dates(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(|(_, set)| set.values().any(|f| f.topics.race_day()))
            .map(|(date, _)| date.as_str())
    }

    fn get(&self, t: &Target) -> Option<Follow> {
        self.0.get(&t.0).and_then(|set| set.get(&t.1)).copied()
    }

    pub(super) fn len(&self) -> usize {
        self.0.values().map(BTreeMap::len).sum()
    }

    fn insert(&mut self, t: &Target, follow: Follow) {
        self.0.entry(t.0.clone()).or_default().insert(t.1, follow);
    }

    fn remove(&mut self, t: &Target) -> bool {
        let Some(set) = self.0.get_mut(&t.0) else {
            return false;
        };
        let removed = set.remove(&t.1).is_some();
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
/// with SipHash (the hash maps were a visible share of the service's CPU relaying odds to
/// many clients).
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

    /// Keeps only the floors of what `targets` follows: a date no target names goes
    /// whole, and a date whose meeting is not followed keeps only its followed races'
    /// (a meeting's snapshots raise a floor for each of its races). So a connection holds
    /// floors for what it follows now, never for what it followed once.
    fn retain_followed(&mut self, targets: &Targets) {
        self.0.retain(|date, races| {
            let Some(followed) = targets.0.get(date) else {
                return false;
            };
            if !followed.contains_key(&None) {
                races.retain(|race, _| followed.contains_key(race));
            }
            !races.is_empty()
        });
    }

    /// How many floors are held, dates and races together.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.values().map(|races| 1 + races.len()).sum()
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
    /// Follows `t` for `topics` (replacing what it followed), from `since` if given:
    /// every odds update and race-day event of those topics after it, then live. A
    /// `since` that replays odds is charged to the key's plan as the same moves would be
    /// over HTTP, a request per page of [`REPLAY_PAGE`], with the message that asked for
    /// it: however many pages, past the plan's burst too, so that a large replay costs in
    /// proportion to a small one; what the key had not left is a debt its next requests
    /// wait out. (A replay cannot be split, so one refused for being over the burst could
    /// never be had; and pacing it at the plan's rate would hold the connection's live
    /// updates behind it.)
    pub(super) async fn subscribe(
        &mut self,
        t: Target,
        (topics, conflate_ms): (Topics, u64),
        since: Option<u64>,
    ) -> Result<(), End> {
        let applied = self.applied().await?;
        let held = self.targets.as_ref().map_or(0, Targets::len);
        let existing = self.targets.as_ref().and_then(|set| set.get(&t));
        if existing.is_none() && held >= self.ctx.limits.max_subscriptions {
            let message = format!(
                "at most {} on one connection",
                crate::text::count(
                    self.ctx.limits.max_subscriptions,
                    "subscription",
                    "subscriptions"
                )
            );
            return self.error("too_many_subscriptions", &message);
        }
        // A position past the log applied here (from another stream, or a later run of
        // it) names nothing this stream can replay. Up to there it is a position, an HTTP
        // answer's `Racing-Seq` as much as an update's `seq`.
        let since = since.filter(|&s| s <= applied);
        // The odds moves a replay would send, counted from the journal's counts; none
        // where the odds go as a snapshot (the connection had a later update already, or
        // takes them conflated: its odds frames of different races go out of `seq` order,
        // so its prices resume as they stand).
        let moves = match since {
            Some(since) if topics.odds() && since >= self.last_odds && conflate_ms == 0 => {
                let (date, race) = (t.0.clone(), t.1);
                Some(
                    self.read(move |store| store.count_odds_moves(&date, since, race))
                        .await?,
                )
            }
            _ => None,
        };
        if let Some(moves) = moves.filter(|&m| m <= self.ctx.limits.max_replay) {
            let pages = u32::try_from(moves.div_ceil(REPLAY_PAGE)).unwrap_or(u32::MAX);
            if pages > 0 {
                (self.charge.owe)(pages);
            }
        }
        let before = self.targets.clone();
        let handed = self.handed.of(&t.0);
        let day_from = since.unwrap_or(applied);
        self.targets.get_or_insert_with(Targets::default).insert(
            &t,
            Follow {
                topics,
                day_from,
                conflate_ms,
            },
        );
        if topics.race_day() {
            self.handed.start(&t.0, day_from);
        }
        match since {
            Some(since) => {
                self.replay(t, topics, (since, moves), (&before, handed))
                    .await
            }
            None if topics.odds() => self.snapshots(&t).await,
            None => Ok(()),
        }
    }

    /// How far the log has been applied here: the store's checkpoint, or the latest
    /// update relayed if that is further (an update goes live after its commit).
    pub(super) async fn applied(&mut self) -> Result<u64, End> {
        let checkpoint = self.read(|store| store.checkpoint()).await?;
        Ok(checkpoint.max(self.ctx.hub.latest()))
    }

    /// Stops following `t`, or (`topics`) only those of its topics.
    pub(super) fn unsubscribe(&mut self, t: Target, topics: Option<Topics>) -> Result<(), End> {
        let followed = self.targets.as_ref().and_then(|set| set.get(&t));
        let Some(follow) = followed else {
            let message = match &self.targets {
                None => "the connection follows every race until its first subscribe".to_owned(),
                Some(_) => format!("not subscribed to {}", describe(&t)),
            };
            return self.error("not_subscribed", &message);
        };
        let left = topics.and_then(|topics| follow.topics.without(topics));
        let Some(targets) = self.targets.as_mut() else {
            return Ok(());
        };
        match left {
            Some(topics) => targets.insert(&t, Follow { topics, ..follow }),
            None => {
                targets.remove(&t);
                self.floors.retain_followed(targets);
            }
        }
        if !targets.race_day_dates().any(|d| d == t.0) {
            self.handed.forget(&t.0);
        }
        Ok(())
    }

    /// Sends the current odds of the target's race, or of each race of its meeting that
    /// has odds or a status.
    pub(super) async fn snapshots(&mut self, t: &Target) -> Result<(), End> {
        self.send_snapshots(races_of(t)).await
    }

    /// Sends the current odds of each race (date, race number) that `races` names: a
    /// `snapshot` for each venue that runs it (one with `venue` null where none is known),
    /// or an empty one.
    pub(super) async fn send_snapshots(
        &mut self,
        races: impl Fn(&Reader) -> Result<Vec<(String, u8)>, StoreError> + Send + 'static,
    ) -> Result<(), End> {
        let (_, snapshots) = self.read_snapshots(races).await?;
        for snapshot in &snapshots {
            self.send_snapshot(snapshot);
        }
        Ok(())
    }

    /// The snapshots of the races `races` names, and the checkpoint they show the store
    /// at: the races and their odds are read in one go between two reads of the
    /// checkpoint, again where a commit came between them (a few times at most; then the
    /// later checkpoint, so that nothing the snapshots may show is past it).
    pub(super) async fn read_snapshots(
        &mut self,
        races: impl Fn(&Reader) -> Result<Vec<(String, u8)>, StoreError> + Send + 'static,
    ) -> Result<(u64, Vec<RaceSnapshot>), End> {
        self.read(move |store| {
            let mut tries = 0;
            loop {
                let before = store.checkpoint()?;
                let snapshots = races(store)?
                    .iter()
                    .map(|(date, n)| race_snapshot(store, date, *n))
                    .collect::<Result<Vec<_>, _>>()?;
                let after = store.checkpoint()?;
                tries += 1;
                if before == after || tries == SNAPSHOT_READS {
                    return Ok((after, snapshots));
                }
            }
        })
        .await
    }

    /// Queues a race's snapshot frames; no delta at or below them follows.
    pub(super) fn send_snapshot(&mut self, snapshot: &RaceSnapshot) {
        self.windows.forget(&snapshot.date, snapshot.race_number);
        self.floors.raise(
            &(snapshot.date.to_string(), Some(snapshot.race_number)),
            snapshot.seq,
        );
        for frame in &snapshot.frames {
            self.send(frame.clone());
        }
    }
}

/// The races of `t` that have a snapshot: its race, or the meeting's races with odds and
/// those not priced yet that have a status.
pub(super) fn races_of(t: &Target) -> impl Fn(&Reader) -> Result<Vec<(String, u8)>, StoreError> {
    let (date, race) = (t.0.clone(), t.1);
    move |store| {
        let races: BTreeSet<u8> = match race {
            Some(n) => [n].into(),
            None => {
                let priced = store.odds_changed_since(Some(&date), 0)?;
                let statuses = store.race_statuses(&date, None)?;
                priced
                    .into_iter()
                    .map(|(_, n)| n)
                    .chain(statuses.into_iter().map(|row| row.race_number))
                    .collect()
            }
        };
        Ok(races.into_iter().map(|n| (date.clone(), n)).collect())
    }
}

fn describe(t: &Target) -> String {
    match t.1 {
        Some(n) => format!("race {n} on {}", t.0),
        None => format!("the meeting on {}", t.0),
    }
}
