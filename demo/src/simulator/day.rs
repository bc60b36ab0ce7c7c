//! A race's day around its prices, as the feed reports it (v1.2 statuses): a late
//! scratching suspends betting and reopens it, the race goes `off` at its time and is
//! `finished` before its result, and now and then a race is abandoned and has none.

use racing_events::{Envelope, Event, OddsUpdated, RaceStatus, RaceStatusChanged, RunnerScratched};
use rand::seq::index;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::race::LiveRace;
use super::Simulator;
use crate::draw::envelope;

/// Why a runner is withdrawn on the day, as the stewards announce it.
const LATE_REASONS: &[&str] = &[
    "lame on the way to the start",
    "found lame at the veterinary inspection",
    "injured in the starting stalls",
    "unruly in the starting stalls",
];
/// Why a race is not run.
const ABANDONED_REASONS: &[&str] = &[
    "Typhoon Signal No. 8 hoisted",
    "the track is waterlogged after a black rainstorm warning",
    "the course is unsafe after a fall in the previous race",
];
/// The most late scratchings of one day; each day has at least one.
const MOST_LATE: usize = 2;
/// The chance that a day abandons one of its races.
const ABANDON_CHANCE: f64 = 0.25;
/// A late scratching leaves at least this many starters: below it the race keeps its field.
const SMALLEST_FIELD: usize = 5;

/// Draws the day: a late scratching or two in distinct races, and sometimes one race
/// abandoned.
pub(super) fn plan(rng: &mut ChaCha8Rng, races: &mut [LiveRace]) {
    if races.is_empty() {
        return;
    }
    let count = rng.random_range(1..=MOST_LATE).min(races.len());
    for i in index::sample(rng, races.len(), count) {
        let why = LATE_REASONS[rng.random_range(0..LATE_REASONS.len())];
        races[i].plan.scratching = Some((rng.random_range(0.2..0.8), why));
    }
    if rng.random_bool(ABANDON_CHANCE) {
        let i = rng.random_range(0..races.len());
        let why = ABANDONED_REASONS[rng.random_range(0..ABANDONED_REASONS.len())];
        races[i].plan.abandoned = Some(why);
    }
}

impl Simulator {
    /// What race `race` (index as for [`Simulator::tick`]) does in second `second` (from
    /// 0) of its `race_secs` of trading: where the day has its late scratching due then,
    /// betting suspended with the reason, the `RunnerScratched`, betting open again and
    /// the board priced again for the field left (the runner then out of the prices and
    /// listed `WX` in the result); else the next
    /// price move, as `tick` gives it. Each event at `now`. Empty when nothing happens.
    pub fn trade(&mut self, race: usize, second: u64, race_secs: u64, now: &str) -> Vec<Envelope> {
        let Some(index) = self.index(race) else {
            return Vec::new();
        };
        let due = self.races[index]
            .plan
            .scratching
            .is_some_and(|(share, _)| second == (share * race_secs as f64) as u64);
        if due {
            if let Some(events) = self.scratch(index, now) {
                return events;
            }
        }
        self.tick(race, now).into_iter().collect()
    }

    /// The race at its time: `off`, or `abandoned` with the reason where the day abandons
    /// it. `None` when today has no races.
    pub fn off(&mut self, race: usize, now: &str) -> Option<Envelope> {
        let index = self.index(race)?;
        Some(match self.races[index].plan.abandoned {
            Some(why) => self.status(index, RaceStatus::Abandoned, Some(why), now),
            None => self.status(index, RaceStatus::Off, None, now),
        })
    }

    /// The race run: `finished`, then its result (see [`Simulator::result`]), both at
    /// `now`. Empty for a race the day abandons, and when today has no races.
    pub fn finish(&mut self, race: usize, now: &str) -> Vec<Envelope> {
        let Some(index) = self.index(race) else {
            return Vec::new();
        };
        if self.races[index].plan.abandoned.is_some() {
            return Vec::new();
        }
        let finished = self.status(index, RaceStatus::Finished, None, now);
        std::iter::once(finished)
            .chain(self.result(race, now))
            .collect()
    }

    /// Withdraws one starter of race `index` on the day, once: betting suspended, the
    /// `RunnerScratched`, betting open again, and the board priced again without it (the
    /// pool shared among those left, and place terms for the smaller field). `None` once
    /// done, or when the field is too small to lose one.
    fn scratch(&mut self, index: usize, now: &str) -> Option<Vec<Envelope>> {
        let live = &mut self.races[index];
        let (_, why) = live.plan.scratching.take()?;
        if live.starters.len() <= SMALLEST_FIELD {
            return None;
        }
        let out = live
            .starters
            .remove(self.rng.random_range(0..live.starters.len()));
        live.late.push(out.runner);
        let horse_no = live.card.runners[out.runner].horse_no.clone();
        let reason = format!("{horse_no} withdrawn: {why}");
        let scratched = Event::RunnerScratched(RunnerScratched {
            date: self.date.clone(),
            venue: Some(live.card.venue.clone()),
            race_number: live.card.race_number,
            horse_no,
        });
        let suspended = self.status(index, RaceStatus::Suspended, Some(&reason), now);
        let scratched = envelope(&mut self.rng, scratched, now.to_owned());
        let open = self.status(index, RaceStatus::Open, None, now);
        let live = &mut self.races[index];
        let everyone: Vec<usize> = (0..live.starters.len()).collect();
        let changed = live.reprice(&everyone);
        let mut events = vec![suspended, scratched, open];
        if !changed.is_empty() {
            let priced = Event::OddsUpdated(OddsUpdated {
                date: self.date.clone(),
                venue: Some(live.card.venue.clone()),
                race_number: live.card.race_number,
                odds: live.priced(&changed),
            });
            events.push(envelope(&mut self.rng, priced, now.to_owned()));
        }
        Some(events)
    }

    fn status(
        &mut self,
        index: usize,
        status: RaceStatus,
        reason: Option<&str>,
        now: &str,
    ) -> Envelope {
        let card = &self.races[index].card;
        let event = Event::RaceStatusChanged(RaceStatusChanged {
            date: self.date.clone(),
            venue: Some(card.venue.clone()),
            race_number: card.race_number,
            status: status.as_str().to_owned(),
            reason: reason.map(str::to_owned),
        });
        envelope(&mut self.rng, event, now.to_owned())
    }
}
