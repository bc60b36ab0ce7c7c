//! The race day beyond odds as a subscription names it: its `topics` (`status`,
//! `scratchings`, `results`, `cards` and `market` beside `odds`) as a set, and per date how far the
//! connection has been handed their events (`Handed`). How those events reach the
//! connection is `days`'s.

use std::collections::BTreeMap;

use racing_projections::DayKind;
use serde::de::value::StrDeserializer;
use serde::Deserialize;

use crate::live::frames::Topic;

/// The topics a subscription follows, as a set: a bit for each [`Topic`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Topics(u8);

/// Every topic, in the order an error lists them.
const ALL: [Topic; 6] = [
    Topic::Odds,
    Topic::Status,
    Topic::Scratchings,
    Topic::Results,
    Topic::Cards,
    Topic::Market,
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

    /// Whether a race's market is followed (`market.rs`).
    pub(crate) fn market(self) -> bool {
        self.has_topic(Topic::Market)
    }

    /// Whether a topic of the race-day journal is: any but odds and the market.
    pub(crate) fn race_day(self) -> bool {
        self.0 & !(bit(Topic::Odds) | bit(Topic::Market)) != 0
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

    /// Every event of `date` up to `seq` has been handed.
    pub(super) fn raise(&mut self, date: &str, seq: u64) {
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
