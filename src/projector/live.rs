//! The hand-off to the live sessions: what a committed batch applied, odds updates and
//! race-day events, relayed to the hub in stream order once it is in the store, or held
//! until a catch-up's commits go live together ([`Held`]).

use racing_events::RunnerOdds;
use racing_projections::OddsMoveDoc;

use super::Projector;
use crate::live::frames::odds_frame;
use crate::live::hub::{DayDelta, OddsDelta};
use crate::live::snapshot::race_snapshot;

impl Projector {
    /// Hands a committed batch's odds updates and race-day events to the live sessions,
    /// in stream order. Odds updates go one by one, or, when there are more than the ring
    /// carries well (catching up after an outage), as one catch-up that sends each session
    /// the races they changed as they now stand; race-day events always go one by one
    /// (before such a catch-up), as none may be conflated away. Where a batch, or the
    /// commits held together ([`Held`]), had more odds updates than go one by one, they
    /// were kept only as the race each moved ([`LiveUpdate::Moved`]): any of them makes a
    /// catch-up.
    /// Odds updates handed on one by one are timed from JetStream's storing them to now in
    /// `racing_live_delay_seconds`: the live path's share that comes before the relay
    /// (a catch-up's updates are as late as its outage, and are not timed).
    pub(super) fn go_live(&self, updates: Vec<LiveUpdate>) {
        let (odds, moved) = updates.iter().fold((0, false), |(odds, moved), u| match u {
            LiveUpdate::Odds(_) => (odds + 1, moved),
            LiveUpdate::Moved { .. } => (odds + 1, true),
            LiveUpdate::Day { .. } => (odds, moved),
        });
        if moved || self.parts.hub.is_burst(odds) {
            let mut changes: Vec<(&str, u8, u64)> = Vec::with_capacity(odds);
            for update in &updates {
                match update {
                    LiveUpdate::Odds(u) => changes.push((u.date.as_str(), u.race_number, u.seq)),
                    LiveUpdate::Moved {
                        date,
                        race_number,
                        seq,
                    } => changes.push((date.as_str(), *race_number, *seq)),
                    LiveUpdate::Day { date, seq } => self.day_live(date, *seq),
                }
            }
            let store = self.parts.read_models.reader();
            self.parts.hub.publish_caught_up(&changes, |races| {
                races
                    .iter()
                    .filter_map(|(date, n)| match race_snapshot(&store, date, *n) {
                        Ok(snapshot) => Some(snapshot),
                        Err(e) => {
                            tracing::error!(error = %e, date = %date, race = n, "odds snapshot after a catch-up");
                            None
                        }
                    })
                    .collect()
            });
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let delay = metrics::histogram!("racing_live_delay_seconds");
        for update in updates {
            let update = match update {
                LiveUpdate::Odds(update) => update,
                LiveUpdate::Day { date, seq } => {
                    self.day_live(&date, seq);
                    continue;
                }
                // None here: any made the updates a catch-up, above.
                LiveUpdate::Moved { .. } => continue,
            };
            // Nanoseconds to seconds: the clocks of the NATS server and of this host.
            delay.record(now.saturating_sub(update.published).max(0) as f64 / 1e9);
            self.parts
                .hub
                .publish_with(&update.date, update.race_number, update.seq, || OddsDelta {
                    frame: odds_frame(&OddsMoveDoc {
                        date: &update.date,
                        venue: update.venue.as_deref(),
                        race_number: update.race_number,
                        seq: update.seq,
                        published_at: &racing_projections::published_at(update.published),
                        occurred_at: &update.occurred_at,
                        odds: &update.odds,
                        market: &update.book,
                    }),
                    date: update.date.as_str().into(),
                    race_number: update.race_number,
                    seq: update.seq,
                });
        }
    }

    /// Hands one committed race-day event to the live sessions, its frame read from the
    /// race-day journal: the same bytes as a session that resumes reads there.
    fn day_live(&self, date: &str, seq: u64) {
        self.parts.hub.publish_day(seq, || {
            let store = self.parts.read_models.load();
            match store.race_day(date, seq.saturating_sub(1), 1) {
                Ok(mut events) if events.first().is_some_and(|e| e.seq == seq) => {
                    let e = events.swap_remove(0);
                    Some(DayDelta {
                        date: date.into(),
                        race_number: e.race_number,
                        seq,
                        kind: e.kind,
                        frame: e.frame.into(),
                    })
                }
                Ok(_) => {
                    tracing::error!(
                        date,
                        seq,
                        "a committed race-day event is not in the journal"
                    );
                    None
                }
                Err(e) => {
                    tracing::error!(error = %e, date, seq, "race-day event for the live sessions");
                    None
                }
            }
        });
    }
}

/// What committed batches hand to the live sessions and has not gone live yet, in stream
/// order: a catch-up's commits go live together ([`Projector::go_live`]).
pub(super) struct Held {
    updates: Vec<LiveUpdate>,
    /// The odds updates among them.
    odds: usize,
    /// How many odds updates go live one by one ([`crate::live::hub::OddsHub::one_by_one`]).
    one_by_one: usize,
}

impl Held {
    /// None yet, where the sessions take `one_by_one` odds updates of a commit one by one.
    pub(super) fn new(one_by_one: usize) -> Held {
        Held {
            updates: Vec::new(),
            odds: 0,
            one_by_one,
        }
    }

    /// How many are held.
    pub(super) fn len(&self) -> usize {
        self.updates.len()
    }

    /// Adds a committed batch's. Once they hold more odds updates than go one by one
    /// (so that they will go as a catch-up), each is kept only as the race it moved
    /// ([`LiveUpdate::Moved`]), as a batch of that many keeps them: a catch-up's small
    /// commits while the API answers hold up to [`super::catch_up::CATCH_UP_BATCH`] of them.
    pub(super) fn extend(&mut self, live: Vec<LiveUpdate>) {
        let from = if self.odds > self.one_by_one {
            self.updates.len()
        } else {
            0
        };
        self.odds += live
            .iter()
            .filter(|u| !matches!(u, LiveUpdate::Day { .. }))
            .count();
        self.updates.extend(live);
        if self.odds > self.one_by_one {
            self.updates[from..]
                .iter_mut()
                .for_each(LiveUpdate::lighten);
        }
    }

    /// Those held, none left.
    pub(super) fn take(&mut self) -> Vec<LiveUpdate> {
        self.odds = 0;
        std::mem::take(&mut self.updates)
    }
}

/// What a committed batch hands to the live sessions, in stream order.
pub(super) enum LiveUpdate {
    /// An applied odds update (boxed: a replay's batch holds tens of thousands of these
    /// enums, nearly all the small ones below).
    Odds(Box<OddsUpdate>),
    /// An applied odds update of a batch, or of commits held together, with more than the
    /// sessions take one by one: only the race it moved, which is all a catch-up relays of
    /// it.
    Moved {
        date: String,
        race_number: u8,
        seq: u64,
    },
    /// An applied race-day event (status, scratching, result, card, retraction), whose
    /// frame is read from the store once committed.
    Day { date: String, seq: u64 },
}

impl LiveUpdate {
    /// A whole odds update made only the race it moved.
    fn lighten(&mut self) {
        if let LiveUpdate::Odds(update) = self {
            *self = LiveUpdate::Moved {
                date: std::mem::take(&mut update.date),
                race_number: update.race_number,
                seq: update.seq,
            };
        }
    }
}

/// An applied odds update, waiting for its batch to commit.
pub(super) struct OddsUpdate {
    pub date: String,
    pub venue: Option<String>,
    pub race_number: u8,
    pub seq: u64,
    /// When JetStream stored it, in nanoseconds since the epoch.
    pub published: i128,
    /// The envelope's `occurred_at`, as the service serves an instant: when the prices
    /// were given at their source.
    pub occurred_at: String,
    pub odds: Vec<RunnerOdds>,
    /// The book of the race's prices after it.
    pub book: racing_projections::Book,
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: &str = "2026-11-21";

    fn odds(seq: u64) -> LiveUpdate {
        LiveUpdate::Odds(Box::new(OddsUpdate {
            date: DAY.into(),
            venue: None,
            race_number: (seq % 3 + 1) as u8,
            seq,
            published: 0,
            occurred_at: String::new(),
            odds: Vec::new(),
            book: Default::default(),
        }))
    }

    fn day(seq: u64) -> LiveUpdate {
        LiveUpdate::Day {
            date: DAY.into(),
            seq,
        }
    }

    fn kept(held: &Held) -> Vec<String> {
        held.updates
            .iter()
            .map(|update| match update {
                LiveUpdate::Odds(u) => format!("odds {}", u.seq),
                LiveUpdate::Moved {
                    date,
                    race_number,
                    seq,
                } => format!("moved {date} {race_number} {seq}"),
                LiveUpdate::Day { seq, .. } => format!("day {seq}"),
            })
            .collect()
    }

    /// Commits held to go live together keep their odds updates whole while they are no
    /// more than go one by one, and every one only as the race it moved once they are
    /// more; race-day events as they are, all in stream order; and once taken, the count
    /// starts again.
    #[test]
    fn held_commits_past_what_goes_one_by_one_keep_only_the_race_each_update_moved() {
        let mut held = Held::new(3);
        held.extend(vec![odds(1), day(2), odds(3)]);
        held.extend(vec![odds(4)]);
        assert_eq!(kept(&held), ["odds 1", "day 2", "odds 3", "odds 4"]);
        held.extend(vec![odds(5)]);
        let moved = |race: u64, seq: u64| format!("moved {DAY} {race} {seq}");
        let all = [
            moved(2, 1),
            "day 2".into(),
            moved(1, 3),
            moved(2, 4),
            moved(3, 5),
        ];
        assert_eq!(kept(&held), all);
        held.extend(vec![day(6), odds(7)]);
        assert_eq!(kept(&held)[5..], ["day 6".to_owned(), moved(2, 7)]);
        assert_eq!(held.take().len(), 7);
        assert_eq!(held.len(), 0);
        held.extend(vec![odds(8)]);
        assert_eq!(kept(&held), ["odds 8"]);
    }
}
