//! The race day's frames beyond odds on a connection: live ones as the hub relays them,
//! those missed while behind, and those a `since` replay reads. They are never conflated:
//! a session that falls behind (loses its place in the ring) reads back from the race-day
//! journal in the store each one it missed, a chunk at a time as the client takes them; a
//! client that stops reading is closed by the writer's send timeout, as for odds, and
//! resumes with `since`. So what one connection holds for them is at most its outbox and
//! one chunk, and nothing is lost while it is open.

use racing_projections::DayEvent;

use super::end::End;
use super::limits::CHUNK;
use super::subscriptions::Targets;
use super::Session;
use crate::live::hub::DayDelta;

impl Session<'_> {
    /// Sends a live race-day event if the connection follows it and has not had it.
    pub(super) fn deliver_day(&mut self, day: &DayDelta) {
        if day.seq <= self.handed.of(&day.date) {
            return;
        }
        let followed = self
            .targets
            .as_ref()
            .is_some_and(|t| t.follows_day(&day.date, day.race_number, day.kind, day.seq));
        if followed {
            self.send(day.frame.clone());
            self.handed.raise(&day.date, day.seq);
        }
    }

    /// After the session lost its place in the ring: every race-day event it follows that
    /// went by meanwhile, read back from the journal in stream order.
    pub(super) async fn recover_days(&mut self) -> Result<(), End> {
        let dates: Vec<String> = match &self.targets {
            Some(targets) => targets.race_day_dates().map(str::to_owned).collect(),
            None => return Ok(()),
        };
        for date in dates {
            loop {
                self.still_open()?;
                let after = self.handed.of(&date);
                let events = self.read_days(&date, after).await?;
                let Some(last) = events.last().map(|e| e.seq) else {
                    break;
                };
                for e in events {
                    let followed = self
                        .targets
                        .as_ref()
                        .is_some_and(|t| t.follows_day(&date, e.race_number, e.kind, e.seq));
                    if followed {
                        self.make_room().await?;
                        self.send(e.frame.into());
                    }
                }
                self.handed.raise(&date, last);
            }
        }
        Ok(())
    }

    /// A chunk of `date`'s race-day events after `after`.
    pub(super) async fn read_days(&mut self, date: &str, after: u64) -> Result<Vec<DayEvent>, End> {
        let date = date.to_owned();
        self.read(move |store| store.race_day(&date, after, CHUNK))
            .await
    }

    /// Sends a race-day event of `date` that a `since` replay read from the journal, if
    /// the connection follows it and was not given it already: `before` is what it
    /// followed before the `subscribe`, and had been handed every event of the date up to
    /// `handed` then. The replay hands on the date's events for every target, not only
    /// the new one: live relays at or below it are not sent again.
    pub(super) async fn replay_day(
        &mut self,
        date: &str,
        (before, handed): (&Option<Targets>, u64),
        e: DayEvent,
    ) -> Result<(), End> {
        let follows = |t: &Option<Targets>| {
            t.as_ref()
                .is_some_and(|t| t.follows_day(date, e.race_number, e.kind, e.seq))
        };
        let had = e.seq <= handed && follows(before);
        if follows(&self.targets) && !had {
            self.make_room().await?;
            self.send(e.frame.into());
        }
        self.handed.raise(date, e.seq);
        Ok(())
    }
}
