//! `subscribe` with `since`: the target's odds updates and race-day events after `since`,
//! read from the odds and race-day journals in the read models a few at a time as the
//! outbox has room (never the whole replay in memory), in one stream order with the live
//! updates relayed meanwhile, then live.
//!
//! Both journals are read up to the checkpoint the replay began at, never past it: the
//! projector commits while the replay reads, and a batch committed meanwhile is in the
//! journals before the hub relays it. Read from one journal and not yet from the other
//! (whose cursor had found its end), it would go out of stream order, its odds moves
//! ahead of its race-day events; it comes live instead, from the ring the session
//! joined before the checkpoint was read.

use std::collections::VecDeque;
use std::sync::Arc;

use racing_projections::{DayEvent, OddsMove};
use tokio::sync::broadcast::error::TryRecvError;

use super::end::{internal, End};
use super::limits::CHUNK;
use super::subscriptions::{races_of, Target, Targets};
use super::topics::Topics;
use super::Session;
use crate::live::frames::odds_frame_of;
use crate::live::hub::Relay;

/// What a `since` replay reads next: the odds journal's move or the race-day journal's
/// event with the lower `seq`, each read a chunk at a time up to the same checkpoint.
struct Merged {
    odds: Option<Cursor<OddsMove>>,
    days: Option<Cursor<DayEvent>>,
}

struct Cursor<T> {
    after: u64,
    /// The checkpoint the replay began at: nothing after it is read.
    upto: u64,
    read: VecDeque<T>,
    done: bool,
}

impl<T> Cursor<T> {
    fn from(after: u64, upto: u64) -> Cursor<T> {
        Cursor {
            after,
            upto,
            read: VecDeque::new(),
            done: after >= upto,
        }
    }

    /// Where its next chunk is read from, when it holds none and the journal may have
    /// more.
    fn wants(&self) -> Option<u64> {
        (self.read.is_empty() && !self.done).then_some(self.after)
    }

    /// Takes the chunk read after [`Cursor::wants`], up to its checkpoint; an empty one,
    /// or one that reaches past the checkpoint, ends it.
    fn fill(&mut self, mut chunk: Vec<T>, seq: impl Fn(&T) -> u64) {
        let read = chunk.len();
        chunk.retain(|item| seq(item) <= self.upto);
        self.done = chunk.is_empty() || chunk.len() < read;
        if let Some(last) = chunk.last() {
            self.after = seq(last);
        }
        self.read.extend(chunk);
    }

    /// Its next item's `seq`.
    fn head(&self, seq: impl Fn(&T) -> u64) -> Option<u64> {
        self.read.front().map(seq)
    }
}

enum Next {
    Odds(OddsMove),
    Day(DayEvent),
}

impl Session<'_> {
    /// Replays what the target missed after `since`, for its topics: odds moves and
    /// race-day events in one stream order. Odds go as a snapshot instead where a replay
    /// of them would go out of order (the connection had a later odds update already:
    /// `moves` is `None`), is over the limit's updates (`moves`, as counted) or the
    /// subscription is conflated; race-day events always replay, and before the
    /// snapshots, as when a session falls behind: a race's status in a snapshot is never
    /// followed by an older one, and a client that keeps the last `seq` it was handed
    /// and drops again resumes after every race-day event it had. `before` is what the
    /// connection followed before, with the `seq` up to which it had been handed the
    /// date's race-day events: none of those is sent twice. Both journals are read up
    /// to the store's checkpoint as the replay begins; what is committed after it comes
    /// live.
    pub(super) async fn replay(
        &mut self,
        t: Target,
        topics: Topics,
        (since, moves): (u64, Option<u64>),
        before: (&Option<Targets>, u64),
    ) -> Result<(), End> {
        // Every chunk is read from the store the replay began with, up to its checkpoint
        // then. The session joined the hub before (as it opened), and the hub relays a
        // batch after its commit: whatever is past the checkpoint is in the ring.
        let store = self.ctx.read_models.reader();
        let upto = self
            .read_in(store.clone(), |store| store.checkpoint())
            .await?;
        let odds = moves.is_some_and(|m| m <= self.ctx.limits.max_replay);
        if moves.is_some() && !odds {
            self.floors.raise(&t, since);
        }
        let snapshots = topics.odds() && !odds;
        // What a snapshot already covered stays covered: an earlier `subscribe` to one of
        // the meeting's races sent its odds as of some `seq`, and nothing at or below it
        // may follow.
        let covered = self.floors.of_date(&t.0);
        if odds {
            self.floors.raise(&t, since);
        }
        let date: Arc<str> = t.0.as_str().into();
        let mut merged = Merged {
            odds: odds.then(|| Cursor::from(since, upto)),
            days: topics.race_day().then(|| Cursor::from(since, upto)),
        };
        let mut next_live = None;
        while let Some(next) = self.next_replayed(&store, &t, &mut merged).await? {
            self.still_open()?;
            let seq = match &next {
                Next::Odds(m) => m.seq,
                Next::Day(e) => e.seq,
            };
            if !self.live_before(seq, &mut next_live).await? {
                // Fallen behind: the race-day events were read back from the journal
                // and the odds conflated; the target's snapshots still follow.
                if snapshots {
                    self.snapshots_after_days(&t, merged.days.as_ref(), before)
                        .await?;
                }
                return Ok(());
            }
            match next {
                Next::Odds(m) => {
                    if m.seq > self.last_odds && m.seq > covered.of(&t.0, m.race_number) {
                        self.make_room().await?;
                        let frame = odds_frame_of(&m.body).map_err(internal)?;
                        self.send_delta(m.seq, frame, date.clone(), m.race_number);
                    }
                }
                Next::Day(e) => self.replay_day(&t.0, before, e).await?,
            }
        }
        // Every update up to the checkpoint has gone out; later ones come live.
        if let Some(cursor) = &merged.odds {
            self.floors.raise(&t, cursor.after);
        }
        if let Some(relayed) = next_live {
            self.make_room().await?;
            self.relay(&relayed)?;
        }
        // A delta held in a conflation window is dropped by the snapshot that covers it
        // (`send_snapshot`); one already in the outbox goes before it, at a lower `seq`.
        if snapshots {
            self.snapshots_after_days(&t, merged.days.as_ref(), before)
                .await?;
        }
        Ok(())
    }

    /// The target's snapshots, after every race-day event they show. A snapshot shows the
    /// store at the checkpoint it was read at, which may be past the end of the journal
    /// as the replay read it (`days`: the date's race-day events were committed since):
    /// those events go first, read from the journal up to that checkpoint, and their
    /// live relays are not sent again (`handed`). A race's status in a snapshot is never
    /// followed by an older event, and a client that keeps the last `seq` it was handed
    /// resumes after every race-day event it had.
    async fn snapshots_after_days(
        &mut self,
        t: &Target,
        days: Option<&Cursor<DayEvent>>,
        before: (&Option<Targets>, u64),
    ) -> Result<(), End> {
        self.ctx.faults.replay_before_snapshots().await;
        let (checkpoint, snapshots) = self.read_snapshots(races_of(t)).await?;
        if let Some(days) = days {
            let mut after = days.after.max(self.handed.of(&t.0));
            while after < checkpoint {
                let chunk = self.read_days(&t.0, after).await?;
                let Some(last) = chunk.last().map(|e| e.seq) else {
                    break;
                };
                for e in chunk.into_iter().take_while(|e| e.seq <= checkpoint) {
                    if e.seq > self.handed.of(&t.0) {
                        self.replay_day(&t.0, before, e).await?;
                    }
                }
                after = last;
            }
        }
        for snapshot in &snapshots {
            self.send_snapshot(snapshot);
        }
        Ok(())
    }

    /// The next item of a replay, in stream order, reading a chunk of a journal from
    /// `store` (on a blocking thread) where a cursor has none in hand.
    async fn next_replayed(
        &mut self,
        store: &racing_projections::Reader,
        t: &Target,
        merged: &mut Merged,
    ) -> Result<Option<Next>, End> {
        if let Some(after) = merged.odds.as_ref().and_then(Cursor::wants) {
            let (date, race) = (t.0.clone(), t.1);
            let chunk = self
                .read_in(store.clone(), move |store| {
                    store.odds_moves(&date, after, race, CHUNK)
                })
                .await?;
            if let Some(cursor) = &mut merged.odds {
                cursor.fill(chunk, |m| m.seq);
            }
        }
        if let Some(after) = merged.days.as_ref().and_then(Cursor::wants) {
            let date = t.0.clone();
            let chunk = self
                .read_in(store.clone(), move |store| {
                    store.race_day(&date, after, CHUNK)
                })
                .await?;
            if let Some(cursor) = &mut merged.days {
                cursor.fill(chunk, |e| e.seq);
            }
        }
        let odds = merged.odds.as_ref().and_then(|c| c.head(|m| m.seq));
        let days = merged.days.as_ref().and_then(|c| c.head(|e| e.seq));
        let next = match (odds, days) {
            (Some(o), Some(d)) if d < o => merged
                .days
                .as_mut()
                .and_then(|c| c.read.pop_front())
                .map(Next::Day),
            (Some(_), _) => merged
                .odds
                .as_mut()
                .and_then(|c| c.read.pop_front())
                .map(Next::Odds),
            (None, Some(_)) => merged
                .days
                .as_mut()
                .and_then(|c| c.read.pop_front())
                .map(Next::Day),
            (None, None) => None,
        };
        Ok(next)
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
                        self.fell_behind(false).await?;
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
