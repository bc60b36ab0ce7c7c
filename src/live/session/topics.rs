//! The race day beyond odds: a subscription's `topics` (`status`, `scratchings`,
//! `results`, `cards` beside `odds`), and how their frames reach the connection. They are
//! never conflated: a session that falls behind (loses its place in the ring) reads back
//! from the race-day journal in the store each one it missed, a chunk at a time as the
//! client takes them; a client that stops reading is closed by the writer's send timeout,
//! as for odds, and resumes with `since`. So what one connection holds for them is at most
//! its outbox and one chunk, and nothing is lost while it is open.

use std::collections::BTreeMap;

use racing_projections::{DayEvent, DayKind};
use serde::de::value::StrDeserializer;
use serde::Deserialize;

use super::replay::CHUNK;
use super::subscriptions::Targets;
use super::{End, Session};
use crate::live::frames::Topic;
use crate::live::DayDelta;

/// The topics a subscription follows, as a set: a bit for each [`Topic`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Topics(u8);

/// Every topic, in the order an error lists them.
const ALL: [Topic; 5] = [
    Topic::Odds,
    Topic::Status,
    Topic::Scratchings,
    Topic::Results,
    Topic::Cards,
];

fn bit(topic: Topic) -> u8 {
    1 << topic as u8
}

/// A topic's name, as the protocol writes it (the schema type's own serialisation).
fn name(topic: Topic) -> String {
    serde_json::to_value(topic)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl Topics {
    /// Odds only: a subscribe without `topics`, and the connection before its first.
    pub(crate) const ODDS: Topics = Topics(1 << Topic::Odds as u8);

    /// The topics a `subscribe` names: odds where it names none.
    pub(crate) fn parse(names: Option<&[String]>) -> Result<Topics, String> {
        let Some(names) = names else {
            return Ok(Topics::ODDS);
        };
        let known = || ALL.map(name).join(", ");
        let mut bits = 0;
        for given in names {
            let read = Topic::deserialize(StrDeserializer::<serde::de::value::Error>::new(given));
            match read {
                Ok(topic) => bits |= bit(topic),
                Err(_) => {
                    let given = racing_events::clip(given, 32);
                    return Err(format!(
                        "topics: `{given}` is not a topic; they are {}",
                        known()
                    ));
                }
            }
        }
        if bits == 0 {
            return Err(format!("topics must name at least one of {}", known()));
        }
        Ok(Topics(bits))
    }

    fn has_topic(self, topic: Topic) -> bool {
        self.0 & bit(topic) != 0
    }

    /// Whether odds frames (snapshots, deltas) are followed.
    pub(crate) fn odds(self) -> bool {
        self.has_topic(Topic::Odds)
    }

    /// Whether any topic other than odds is.
    pub(crate) fn race_day(self) -> bool {
        self.0 & !bit(Topic::Odds) != 0
    }

    /// Whether a race-day event of this kind is followed; a retraction is both a results
    /// and a cards matter.
    pub(crate) fn has(self, kind: DayKind) -> bool {
        match kind {
            DayKind::Status => self.has_topic(Topic::Status),
            DayKind::Scratching => self.has_topic(Topic::Scratchings),
            DayKind::Result => self.has_topic(Topic::Results),
            DayKind::Card => self.has_topic(Topic::Cards),
            DayKind::Retraction => self.has_topic(Topic::Results) || self.has_topic(Topic::Cards),
        }
    }

    /// These topics but those of `other`, if any are left.
    pub(crate) fn without(self, other: Topics) -> Option<Topics> {
        Some(Topics(self.0 & !other.0)).filter(|t| t.0 != 0)
    }
}

/// Per date, the `seq` up to which the connection has been given every race-day event it
/// follows: a live one at or below it is not sent again, and a session that falls behind
/// reads back from there.
#[derive(Default)]
pub(super) struct Handed(BTreeMap<String, u64>);

impl Handed {
    pub(super) fn of(&self, date: &str) -> u64 {
        self.0.get(date).copied().unwrap_or(0)
    }

    fn raise(&mut self, date: &str, seq: u64) {
        match self.0.get_mut(date) {
            Some(handed) => *handed = (*handed).max(seq),
            None => {
                self.0.insert(date.to_owned(), seq);
            }
        }
    }

    /// A date starts being followed from `from` on, unless it already was.
    pub(super) fn start(&mut self, date: &str, from: u64) {
        self.0.entry(date.to_owned()).or_insert(from);
    }

    /// A date no longer followed for any race-day topic.
    pub(super) fn forget(&mut self, date: &str) {
        self.0.remove(date);
    }

    /// How many dates are held.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

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
    async fn read_days(&mut self, date: &str, after: u64) -> Result<Vec<DayEvent>, End> {
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
