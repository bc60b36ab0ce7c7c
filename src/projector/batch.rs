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
    /// Whether refused events are logged (a rebuild refuses them again, quietly).
    pub log_dead_letters: bool,
    /// The refusals of events whose feeder is named, to keep for it; only where logged.
    refusals: Vec<Refusal>,
}

impl<'a> Taken<'a> {
    /// A batch of `store`, [`Store::prompt_batch`] if `prompt`.
    pub(super) fn new(
        store: &'a Store,
        log_dead_letters: bool,
        prompt: bool,
    ) -> anyhow::Result<Taken<'a>> {
        let batch = if prompt {
            store.prompt_batch()?
        } else {
            store.batch()?
        };
        Ok(Taken::over(batch, log_dead_letters))
    }

    /// `batch` (a store's or a loader's), with nothing taken yet.
    pub(super) fn over(batch: Batch<'a>, log_dead_letters: bool) -> Taken<'a> {
        Taken {
            batch,
            live: Vec::new(),
            pending: 0,
            log_dead_letters,
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
                if outcome != Some(Outcome::Applied) {
                    return Ok(());
                }
                let date = match env.event {
                    Event::OddsUpdated(o) => {
                        // Applied, so validated: its race number is one.
                        let race_number = RaceNumber::try_from(o.race_number)
                            .map_err(|problem| anyhow::anyhow!("race_number {problem}"))?;
                        self.live.push(LiveUpdate::Odds(OddsUpdate {
                            race_number: race_number.get(),
                            date: o.date,
                            venue: o.venue,
                            seq,
                            published: m.published,
                            // Served as every instant is: UTC, `Z`, milliseconds.
                            occurred_at: racing_events::Instant::of(&env.occurred_at)
                                .unwrap_or(env.occurred_at),
                            odds: o.odds,
                            book: self.batch.book().cloned().unwrap_or_default(),
                        }));
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
                if self.log_dead_letters {
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
