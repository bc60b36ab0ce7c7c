//! `subscribe` with `since`: the target's odds updates after `since`, read from the odds
//! journal in the read models a few at a time as the outbox has room (never the whole
//! replay in memory), in sequence with the live updates relayed meanwhile, then live.

use std::sync::Arc;

use tokio::sync::broadcast::error::TryRecvError;

use super::subscriptions::Target;
use super::{internal, End, Session};
use crate::live::{odds_frame_of, Relay};

/// Moves read from the journal at a time, here and by a `replay` (`playback`).
pub(super) const CHUNK: usize = 64;

impl Session<'_> {
    /// Replays what the target missed after `since`. A replay of more than the limit's
    /// updates is a snapshot instead.
    pub(super) async fn replay(&mut self, t: Target, since: u64) -> Result<(), End> {
        let store = self.ctx.read_models.load_full();
        let max = self.ctx.limits.max_replay;
        // Sequences count every event, so only a long stretch needs the journal counted.
        if self.ctx.hub.latest().saturating_sub(since) > max
            && store
                .count_odds_moves(&t.0, since, t.1, max + 1)
                .map_err(internal)?
                > max
        {
            self.floors.raise(&t, since);
            return self.snapshots(&t);
        }
        // What a snapshot already covered stays covered: an earlier `subscribe` to one of
        // the meeting's races sent its odds as of some `seq`, and nothing at or below it
        // may follow.
        let covered = self.floors.of_date(&t.0);
        self.floors.raise(&t, since);
        let date: Arc<str> = t.0.as_str().into();
        let mut next_live = None;
        let mut after = since;
        loop {
            let moves = store
                .odds_moves(&t.0, after, t.1, CHUNK)
                .map_err(internal)?;
            if moves.is_empty() {
                break;
            }
            for m in moves {
                after = m.seq;
                if !self.live_before(m.seq, &mut next_live).await? {
                    return Ok(());
                }
                if m.seq > self.last_odds && m.seq > covered.of(&t.0, m.race_number) {
                    self.make_room().await?;
                    let frame = odds_frame_of(&m.body).map_err(internal)?;
                    self.send_delta(m.seq, frame, date.clone(), m.race_number);
                }
            }
        }
        // Every update up to the journal's end has gone out; later ones come live.
        self.floors.raise(&t, after);
        if let Some(relayed) = next_live {
            self.make_room().await?;
            self.relay(&relayed)?;
        }
        Ok(())
    }

    /// Relays the live updates waiting in the ring that come before `seq`, keeping the
    /// first one after it in `next` for later: replayed and live updates go out in one
    /// increasing sequence. `false` if the session lost its place in the ring meanwhile
    /// (then it is conflated, which ends the replay).
    async fn live_before(&mut self, seq: u64, next: &mut Option<Arc<Relay>>) -> Result<bool, End> {
        loop {
            let relayed = match next.take() {
                Some(relayed) => relayed,
                None => match self.rx.try_recv() {
                    Ok(relayed) => relayed,
                    Err(TryRecvError::Empty | TryRecvError::Closed) => return Ok(true),
                    Err(TryRecvError::Lagged(_)) => {
                        // The replay held the session, not the client.
                        self.rx = self.rx.resubscribe();
                        self.conflate(false)?;
                        return Ok(false);
                    }
                },
            };
            if relayed.seq() >= seq {
                *next = Some(relayed);
                return Ok(true);
            }
            self.make_room().await?;
            self.relay(&relayed)?;
        }
    }
}
