//! A batch in the making: the messages taken off the stream folded in, dead letters kept,
//! and what it applied held for the live sessions until it commits.

use racing_events::{Event, RaceNumber};
use racing_projections::{Batch, Outcome, Store};

use super::decoded::Decoded;
use super::live::{LiveUpdate, OddsUpdate};
use crate::refusals::{event_id_of, is_feeder_name, Refusal};

/// A batch in progress: messages are folded in as they arrive, and nothing of them is
/// visible until it commits.
pub(super) struct Taken<'a> {
    pub batch: Batch<'a>,
    /// The odds updates and race-day events applied, to go live after the commit.
    pub live: Vec<LiveUpdate>,
    /// Messages the stream held past the last one taken.
    pub pending: u64,
    /// Whose batch it is: what it keeps for the live sessions and of its refusals.
    whose: Whose,
    /// The odds updates applied.
    odds: usize,
    /// The refusals of events whose feeder is named, to keep for it; only the projector's.
    refusals: Vec<Refusal>,
}

/// Whose batch a [`Taken`] is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Whose {
    /// The projector's: its refusals are logged and kept for their feeders, and what it
    /// applied goes live. The sessions take up to `one_by_one` odds updates of a commit
    /// one by one ([`crate::live::hub::OddsHub::one_by_one`]); past that many the batch
    /// keeps only the race each moved, which is all a catch-up relays of them.
    Projector { one_by_one: usize },
    /// A rebuild's: nothing of it goes live, and what it refuses was refused (and logged)
    /// when the projector first took it.
    Rebuild,
}

impl<'a> Taken<'a> {
    /// A batch of `store`, [`Store::prompt_batch`] if `prompt`.
    pub(super) fn new(store: &'a Store, whose: Whose, prompt: bool) -> anyhow::Result<Taken<'a>> {
        let batch = if prompt {
            store.prompt_batch()?
        } else {
            store.batch()?
        };
        Ok(Taken::over(batch, whose))
    }

    /// `batch` (a store's or a loader's), with nothing taken yet.
    pub(super) fn over(batch: Batch<'a>, whose: Whose) -> Taken<'a> {
        Taken {
            batch,
            live: Vec::new(),
            pending: 0,
            whose,
            odds: 0,
            refusals: Vec::new(),
        }
    }

    /// The refusals taken so far, to keep for their feeders; the batch keeps none.
    pub(super) fn drain_refusals(&mut self) -> Vec<Refusal> {
        std::mem::take(&mut self.refusals)
    }

    /// Folds one message in, or records it as a dead letter.
    pub(super) fn take(&mut self, m: Decoded) -> anyhow::Result<()> {
        self.pending = m.pending;
        let seq = m.seq;
        match m.envelope {
            Ok(env) => {
                let outcome = self.batch.apply(seq, m.published, &env)?;
                let Whose::Projector { one_by_one } = self.whose else {
                    return Ok(());
                };
                if outcome != Some(Outcome::Applied) {
                    return Ok(());
                }
                let date = match env.event {
                    Event::OddsUpdated(o) => {
                        // Applied, so validated: its race number is one.
                        let race_number = RaceNumber::try_from(o.race_number)
                            .map_err(|problem| anyhow::anyhow!("race_number {problem}"))?
                            .get();
                        self.odds += 1;
                        if self.odds > one_by_one {
                            self.live.push(LiveUpdate::Moved {
                                date: o.date,
                                race_number,
                                seq,
                            });
                            return Ok(());
                        }
                        self.live.push(LiveUpdate::Odds(Box::new(OddsUpdate {
                            race_number,
                            date: o.date,
                            venue: o.venue,
                            seq,
                            published: m.published,
                            // Written as the service serves an instant when decoded
                            // ([`Decoded::new`]).
                            occurred_at: env.occurred_at,
                            odds: o.odds,
                            book: self.batch.book().cloned().unwrap_or_default(),
                        })));
                        return Ok(());
                    }
                    Event::HorseProfileUpdated(_) => return Ok(()),
                    Event::RaceCardDeclared(c) => c.date,
                    Event::RunnerScratched(x) => x.date,
                    Event::RaceResultPublished(r) => r.date,
                    Event::RaceRetracted(r) => r.date,
                    Event::RaceStatusChanged(x) => x.date,
                };
                self.live.push(LiveUpdate::Day { date, seq });
            }
            Err((reason, payload)) => {
                let subject = m.subject.as_str();
                if matches!(self.whose, Whose::Projector { .. }) {
                    tracing::warn!(seq, subject, %reason, "dead letter");
                    if let Some((feeder, msg_id)) = m.sender.filter(|(f, _)| is_feeder_name(f)) {
                        self.refusals.push(Refusal {
                            feeder,
                            seq,
                            // A subject may be as long as a NATS line: clipped, so that
                            // the quota of refusals a name bounds its bytes too.
                            subject: racing_events::clip(subject, 128),
                            event_id: event_id_of(&payload, msg_id.as_deref()),
                            reason: reason.clone(),
                            published_at: racing_projections::published_at(m.published),
                        });
                    }
                }
                self.batch.dead_letter(seq, subject, &reason, &payload);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use racing_events::samples::{card, envelope, odds};
    use racing_events::Event;

    use super::*;

    const DAY: &str = "2026-11-21";

    fn taken_in(store: &Store, whose: Whose, events: Vec<Event>) -> Vec<String> {
        let mut taken = Taken::new(store, whose, false).expect("batch");
        for (seq, event) in (1..).zip(events) {
            let e = envelope(event);
            let payload = bytes::Bytes::from(e.to_json().into_bytes());
            let m = Decoded::new(seq, 0, 0, e.subject().into(), payload);
            taken.take(m).expect("taken");
        }
        taken
            .live
            .iter()
            .map(|update| match update {
                LiveUpdate::Odds(u) => format!("odds {} {} {}", u.race_number, u.seq, u.odds.len()),
                LiveUpdate::Moved {
                    date,
                    race_number,
                    seq,
                } => format!("moved {date} {race_number} {seq}"),
                LiveUpdate::Day { date, seq } => format!("day {date} {seq}"),
            })
            .collect()
    }

    /// The projector's batch keeps each odds update whole for the live sessions up to as
    /// many as they take one by one, past that only the race each moved, and each
    /// race-day event, all in stream order; a rebuild's batch keeps nothing.
    #[test]
    fn past_what_goes_one_by_one_a_batch_keeps_only_the_race_each_update_moved() {
        let events = || {
            vec![
                odds(DAY, 1, &[("A1", 3.5), ("B2", 2.1)]),
                card(DAY, "Sha Tin", 2, &["C3"]),
                odds(DAY, 2, &[("C3", 4.0)]),
                odds(DAY, 3, &[("D4", 5.0)]),
                odds(DAY, 1, &[("A1", 3.0)]),
            ]
        };
        let dir = tempfile::TempDir::new().expect("temp dir");
        let store = Store::open(dir.path()).expect("store");
        let kept = taken_in(&store, Whose::Projector { one_by_one: 2 }, events());
        assert_eq!(
            kept,
            [
                "odds 1 1 2",
                &format!("day {DAY} 2"),
                "odds 2 3 1",
                &format!("moved {DAY} 3 4"),
                &format!("moved {DAY} 1 5"),
            ]
        );
        let all = taken_in(&store, Whose::Projector { one_by_one: 4 }, events());
        assert!(all.iter().all(|u| !u.starts_with("moved")), "{all:?}");
        assert!(taken_in(&store, Whose::Rebuild, events()).is_empty());
    }
}
