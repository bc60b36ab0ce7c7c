//! Falling behind: a session that lost its place in the shared ring, or a catch-up of
//! the server's, is sent fresh snapshots of the races that changed instead of every
//! update it missed. Only what the client caused counts against it.

use std::sync::Arc;

use tokio::time::Instant;

use super::end::End;
use super::Session;
use crate::live::close::CLOSE_POLICY;
use crate::live::hub::CaughtUp;

impl Session<'_> {
    /// The server caught up on many updates at once: the races they changed that this
    /// connection follows, as they now stand, in place of each update. Not a conflation
    /// of the client's: it counts against nothing.
    pub(super) fn caught_up(&mut self, caught_up: &CaughtUp) {
        for race in &caught_up.races {
            self.market_moved(&race.date, race.race_number);
            if self.wants(&race.date, race.race_number, race.seq) {
                self.send_snapshot(race);
            }
        }
        self.covered = self.covered.max(caught_up.upto);
    }

    /// The session lost its place in the ring: the race-day events it missed are read
    /// back from the journal, then its odds are conflated (see [`Session::conflate`]).
    /// In that order, so that a race's status in a snapshot is never followed by an older
    /// one.
    pub(super) async fn fell_behind(&mut self, counted: bool) -> Result<(), End> {
        self.recover_days().await?;
        self.conflate(counted).await
    }

    /// The session lost its place in the ring: its pending deltas, and the updates it
    /// missed, are replaced by one fresh snapshot for each race they were for (the races
    /// the hub knows changed since the connection was last covered, not every race). A
    /// client that causes this too often (`counted`: it held the session back by not
    /// reading) is closed.
    pub(super) async fn conflate(&mut self, counted: bool) -> Result<(), End> {
        if counted {
            let now = Instant::now();
            let window = self.ctx.limits.conflation_window;
            self.conflations.retain(|t| now.duration_since(*t) < window);
            self.conflations.push_back(now);
            if self.conflations.len() > self.ctx.limits.max_conflations {
                return Err(End::Close(
                    CLOSE_POLICY,
                    "too slow: fell behind the odds stream repeatedly",
                ));
            }
        }
        let mut races = self.outbox.take_deltas();
        races.extend(self.windows.take());
        let horizon = self.covered.max(self.last_odds);
        self.covered = self.ctx.hub.latest();
        races.extend(
            self.ctx
                .hub
                .races_changed_since(horizon)
                .into_iter()
                .map(|(date, n): (Arc<str>, u8)| (date.to_string(), n)),
        );
        for (date, n) in &races {
            self.market_moved(&Arc::from(date.as_str()), *n);
        }
        races.retain(|(date, n)| self.targets.as_ref().is_none_or(|t| t.follows(date, *n)));
        if races.is_empty() {
            return Ok(());
        }
        self.send_snapshots(move |_| Ok(races.iter().cloned().collect()))
            .await
    }
}
