//! The race-day journal: every applied status change, scratching, result, card and
//! retraction, a record each under its date and stream sequence, so that a live session
//! that resumes (`since`) or falls behind reads back, in stream order, each one it has not
//! had. None of them may be conflated away the way odds are, so none is kept only in
//! memory.
//!
//! A record is the event's kind, its race number, then its frame as it goes out
//! (`{"type":"status",...}`), written when the event is folded. A result or a card frame
//! carries a document; the record holds the frame without it, and the document is added
//! when the frame is read ([`crate::store::Store::race_day`]), rendered as of the event's
//! sequence: the journal keeps no second copy of either, and the frame is the same bytes
//! whenever it is read.

use racing_events::{Event, RaceCard, RaceResult, RaceRetracted, RaceStatusChanged};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::docs::odds::published_at;
use crate::facts::{Change, Facts};
use crate::keys;
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::state::{race_no, State};

/// What a race-day event was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DayKind {
    /// A race's status changed (`status` frame).
    Status,
    /// A runner was withdrawn (`scratching` frame).
    Scratching,
    /// A race's result, first or amended (`result` frame).
    Result,
    /// A race declared or amended (`card` frame).
    Card,
    /// A venue's race withdrawn from the read models (`retraction` frame).
    Retraction,
}

impl DayKind {
    const ALL: [DayKind; 5] = [
        DayKind::Status,
        DayKind::Scratching,
        DayKind::Result,
        DayKind::Card,
        DayKind::Retraction,
    ];

    fn byte(self) -> u8 {
        match self {
            DayKind::Status => b's',
            DayKind::Scratching => b'x',
            DayKind::Result => b'r',
            DayKind::Card => b'c',
            DayKind::Retraction => b't',
        }
    }

    fn of_byte(b: u8) -> Option<DayKind> {
        DayKind::ALL.into_iter().find(|k| k.byte() == b)
    }
}

/// One race-day event as a live session sends it.
#[derive(Debug, Clone)]
pub struct DayEvent {
    /// Its stream sequence.
    pub seq: u64,
    /// Its race.
    pub race_number: u8,
    /// What it was.
    pub kind: DayKind,
    /// The frame, `{"type":...}`, whole.
    pub frame: String,
}

/// The fields every race-day frame starts with.
#[derive(Serialize)]
struct Head<'a> {
    r#type: &'static str,
    date: &'a str,
    venue: Option<&'a str>,
    race_number: u8,
    seq: u64,
    published_at: &'a str,
}

#[derive(Serialize)]
struct StatusFrame<'a> {
    #[serde(flatten)]
    head: Head<'a>,
    status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

#[derive(Serialize)]
struct ScratchingFrame<'a> {
    #[serde(flatten)]
    head: Head<'a>,
    horse_no: &'a str,
}

#[derive(Serialize)]
struct RetractionFrame<'a> {
    #[serde(flatten)]
    head: Head<'a>,
    reason: &'a str,
}

/// The race-day journal as a read model: a record an event, written as it is folded.
#[derive(Debug, Default)]
pub(crate) struct RaceDay;

impl ReadModel for RaceDay {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        note(s, change.seq, change.published, change.event)
    }

    fn render<S: State>(&mut self, _: &mut S, _: u64, _: &Facts) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Writes the race-day record of an applied event, if it is one: every event but a
/// profile and an odds update.
fn note(s: &mut impl State, seq: u64, published: i128, event: &Event) -> Result<(), StoreError> {
    let at = published_at(published);
    let head = |r#type, date, venue, race_number| Head {
        r#type,
        date,
        venue,
        race_number,
        seq,
        published_at: &at,
    };
    let (date, n, kind, frame) = match event {
        Event::HorseProfileUpdated(_) | Event::OddsUpdated(_) => return Ok(()),
        Event::RaceStatusChanged(RaceStatusChanged {
            date,
            venue,
            race_number,
            status,
            reason,
        }) => {
            let n = race_no(*race_number)?;
            let frame = StatusFrame {
                head: head("status", date, venue.as_deref(), n),
                status,
                reason: reason.as_deref(),
            };
            (date, n, DayKind::Status, to_json(&frame)?)
        }
        Event::RunnerScratched(x) => {
            let n = race_no(x.race_number)?;
            let frame = ScratchingFrame {
                head: head("scratching", &x.date, x.venue.as_deref(), n),
                horse_no: &x.horse_no,
            };
            (&x.date, n, DayKind::Scratching, to_json(&frame)?)
        }
        Event::RaceRetracted(RaceRetracted {
            date,
            venue,
            race_number,
            reason,
        }) => {
            let n = race_no(*race_number)?;
            let frame = RetractionFrame {
                head: head("retraction", date, Some(venue), n),
                reason,
            };
            (date, n, DayKind::Retraction, to_json(&frame)?)
        }
        // The document is added when the frame is read: the head only, open at its end.
        Event::RaceResultPublished(RaceResult {
            date,
            venue,
            race_number,
            ..
        }) => {
            let n = race_no(*race_number)?;
            let open = to_json(&head("result", date, Some(venue), n))?;
            (date, n, DayKind::Result, open)
        }
        Event::RaceCardDeclared(RaceCard {
            date,
            venue,
            race_number,
            ..
        }) => {
            let n = race_no(*race_number)?;
            let open = to_json(&head("card", date, Some(venue), n))?;
            (date, n, DayKind::Card, open)
        }
    };
    let mut record = Vec::with_capacity(2 + frame.len());
    record.push(kind.byte());
    record.push(n);
    record.extend_from_slice(frame.as_bytes());
    s.put(keys::race_day(date, seq), record);
    s.put(keys::race_day_order(seq), date.as_bytes().to_vec());
    Ok(())
}

fn to_json<T: Serialize>(frame: &T) -> Result<String, StoreError> {
    serde_json::to_string(frame).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The venue of a frame's head, to find its document.
#[derive(Deserialize)]
struct Venue<'a> {
    #[serde(borrow)]
    venue: Option<std::borrow::Cow<'a, str>>,
}

/// The races of a card document, each kept as its bytes.
#[derive(Deserialize)]
struct Races<'a> {
    #[serde(borrow)]
    races: Vec<&'a RawValue>,
}

/// A race's number, read from its bytes.
#[derive(Deserialize)]
struct Numbered {
    race_number: u8,
}

impl crate::store::Store {
    /// Up to `limit` race-day events of `date` after stream sequence `after`, in stream
    /// order, each with its frame whole. A result's or a card's frame carries its
    /// document as it stood right after the event (`null` where a later retraction's
    /// versions leave none).
    pub fn race_day(
        &self,
        date: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<DayEvent>, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("a race-day record: {what}"));
        let mut out = Vec::new();
        let from = keys::race_day(date, after.saturating_add(1));
        let prefix = keys::race_days_of(date);
        for item in self.kv.range(from..) {
            if out.len() >= limit {
                break;
            }
            let (key, value) = item?;
            if !key.starts_with(&prefix) {
                break;
            }
            let seq = keys::race_day_seq(&key).ok_or_else(|| corrupt("its key"))?;
            out.push(self.day_event(date, seq, &value)?);
        }
        Ok(out)
    }

    /// Up to `limit` race-day events of every date after stream sequence `after`, in
    /// stream order, each with its date: [`crate::store::Store::race_day`] across dates, read
    /// through the journal's order (a record an event, by sequence alone).
    pub fn race_day_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(String, DayEvent)>, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("the race-day order: {what}"));
        let mut out = Vec::new();
        for item in self
            .kv
            .range(keys::race_day_order(after.saturating_add(1))..)
        {
            if out.len() >= limit {
                break;
            }
            let (key, date) = item?;
            let Some(seq) = key.strip_prefix(keys::RACE_DAY_ORDER) else {
                break;
            };
            let seq = <[u8; 8]>::try_from(seq).map_err(|_| corrupt("its key"))?;
            let seq = u64::from_be_bytes(seq);
            let date = std::str::from_utf8(&date).map_err(|_| corrupt("a date"))?;
            let value = self
                .kv
                .get(keys::race_day(date, seq))?
                .ok_or_else(|| corrupt("an event not in the journal"))?;
            out.push((date.to_owned(), self.day_event(date, seq, &value)?));
        }
        Ok(out)
    }

    /// The race-day event of `date` at `seq` from its journal record.
    fn day_event(&self, date: &str, seq: u64, value: &[u8]) -> Result<DayEvent, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("a race-day record: {what}"));
        let (&[kind, race_number], frame) = value.split_at(2.min(value.len())) else {
            return Err(corrupt("too short"));
        };
        let kind = DayKind::of_byte(kind).ok_or_else(|| corrupt("its kind"))?;
        let frame = std::str::from_utf8(frame).map_err(|_| corrupt("not UTF-8"))?;
        let frame = match kind {
            DayKind::Result | DayKind::Card => {
                self.with_document(date, race_number, seq, kind, frame)?
            }
            _ => frame.to_owned(),
        };
        Ok(DayEvent {
            seq,
            race_number,
            kind,
            frame,
        })
    }

    /// A result's or a card's frame: its head, then its document as of `seq`.
    fn with_document(
        &self,
        date: &str,
        race_number: u8,
        seq: u64,
        kind: DayKind,
        head: &str,
    ) -> Result<String, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("a race-day frame: {what}"));
        let venue: Venue<'_> = serde_json::from_str(head).map_err(|e| corrupt(&e.to_string()))?;
        let venue = venue.venue.as_deref();
        let open = head.strip_suffix('}').ok_or_else(|| corrupt("its head"))?;
        let (field, doc) = match kind {
            DayKind::Result => {
                let key = DocKey::Race {
                    date,
                    race_number,
                    venue,
                };
                let doc = self.doc_as_of(key, seq)?;
                ("result", doc.map(|d| d.to_vec()))
            }
            _ => {
                let key = DocKey::Card { date, venue };
                let race = match self.doc_as_of(key, seq)? {
                    Some(card) => {
                        let races: Races<'_> =
                            serde_json::from_slice(&card).map_err(|e| corrupt(&e.to_string()))?;
                        races.races.into_iter().find_map(|race| {
                            let n: Numbered = serde_json::from_str(race.get()).ok()?;
                            (n.race_number == race_number).then(|| race.get().as_bytes().to_vec())
                        })
                    }
                    None => None,
                };
                ("card", race)
            }
        };
        let doc = match &doc {
            Some(doc) => std::str::from_utf8(doc).map_err(|_| corrupt("a document"))?,
            None => "null",
        };
        Ok(format!("{open},\"{field}\":{doc}}}"))
    }
}

#[cfg(test)]
mod tests {
    use racing_events::samples::{
        card, envelope, odds_at, profile, result, retraction, runner, scratch_at, status,
    };
    use racing_events::RaceStatus;
    use serde_json::Value;

    use super::DayKind;
    use crate::keys::doc::DocKey;
    use crate::store::Store;
    use crate::tests::tempdir;

    const DAY: &str = "2026-11-25";

    #[test]
    fn each_race_day_event_is_read_back_in_order_with_its_document_as_it_stood() {
        let dir = tempdir();
        let store = Store::open(dir.path()).expect("open");
        let events = [
            profile("A1", "ALPHA"),
            card(DAY, "Sha Tin", 1, &["A1", "B2"]),
            odds_at(DAY, "Sha Tin", 1, &[("A1", 3.0)]),
            status(DAY, None, 1, RaceStatus::Suspended, Some("reweigh")),
            scratch_at(DAY, "Sha Tin", 1, "B2"),
            result(DAY, "Sha Tin", 1, vec![runner(Some(1), "A1")]),
            result(DAY, "Sha Tin", 1, vec![runner(Some(2), "A1")]),
            retraction(DAY, "Sha Tin", 1, "wrong venue"),
        ];
        // Two batches, so that a document is rendered as of a point inside one.
        for (batch, range) in [(0..4), (4..8)].into_iter().enumerate() {
            let mut b = store.batch().expect("batch");
            for i in range {
                b.apply(
                    i as u64 + 1,
                    1_700_000_000_000_000_000 + batch as i128,
                    &envelope(events[i].clone()),
                )
                .expect("apply");
            }
            b.commit().expect("commit");
        }
        let all = store.race_day(DAY, 0, 100).expect("read");
        let kinds: Vec<(u64, DayKind)> = all.iter().map(|e| (e.seq, e.kind)).collect();
        assert_eq!(
            kinds,
            [
                (2, DayKind::Card),
                (4, DayKind::Status),
                (5, DayKind::Scratching),
                (6, DayKind::Result),
                (7, DayKind::Result),
                (8, DayKind::Retraction),
            ]
        );
        let frame = |i: usize| -> Value { serde_json::from_str(&all[i].frame).expect("json") };
        assert_eq!(frame(0)["type"], "card");
        assert_eq!(
            frame(0)["card"]["runners"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(
            all[1].frame,
            r#"{"type":"status","date":"2026-11-25","venue":null,"race_number":1,"seq":4,"published_at":"2023-11-14T22:13:20.000Z","status":"suspended","reason":"reweigh"}"#
        );
        assert_eq!(frame(2)["horse_no"], "B2");
        // Each result as it was published, though both were amended or retracted since.
        assert_eq!(frame(3)["result"]["runners"][0]["position"], 1);
        assert_eq!(frame(4)["result"]["runners"][0]["position"], 2);
        let race = DocKey::Race {
            date: DAY,
            race_number: 1,
            venue: Some("Sha Tin"),
        };
        assert!(store.doc(race).expect("read").is_none(), "retracted");
        assert_eq!(frame(5)["reason"], "wrong venue");
        // From any point, and bounded.
        let later = store.race_day(DAY, 5, 2).expect("read");
        assert_eq!(later.iter().map(|e| e.seq).collect::<Vec<_>>(), [6, 7]);
        assert!(store.race_day(DAY, 8, 10).expect("read").is_empty());
        assert!(store
            .race_day("2026-11-26", 0, 10)
            .expect("read")
            .is_empty());
    }

    #[test]
    fn the_race_day_events_of_every_date_are_read_back_in_stream_order() {
        let dir = tempdir();
        let store = Store::open(dir.path()).expect("open");
        const OTHER: &str = "2026-11-29";
        let events = [
            card(OTHER, "Happy Valley", 2, &["C3"]),
            status(DAY, None, 1, RaceStatus::Open, None),
            odds_at(DAY, "Sha Tin", 1, &[("A1", 3.0)]),
            scratch_at(OTHER, "Happy Valley", 2, "C3"),
            result(DAY, "Sha Tin", 1, vec![runner(Some(1), "A1")]),
        ];
        let mut b = store.batch().expect("batch");
        for (i, e) in events.iter().enumerate() {
            b.apply(
                i as u64 + 1,
                1_700_000_000_000_000_000,
                &envelope(e.clone()),
            )
            .expect("apply");
        }
        b.commit().expect("commit");
        let read = |after, limit| -> Vec<(String, u64, DayKind)> {
            store
                .race_day_after(after, limit)
                .expect("read")
                .into_iter()
                .map(|(date, e)| (date, e.seq, e.kind))
                .collect()
        };
        let all = read(0, 100);
        assert_eq!(
            all,
            [
                (OTHER.to_owned(), 1, DayKind::Card),
                (DAY.to_owned(), 2, DayKind::Status),
                (OTHER.to_owned(), 4, DayKind::Scratching),
                (DAY.to_owned(), 5, DayKind::Result),
            ]
        );
        // Each frame the same bytes as its date's journal gives.
        for (date, e) in store.race_day_after(0, 100).expect("read") {
            let by_date = store.race_day(&date, e.seq - 1, 1).expect("read");
            assert_eq!(by_date[0].frame, e.frame);
        }
        assert_eq!(read(2, 1), [(OTHER.to_owned(), 4, DayKind::Scratching)]);
        assert!(read(5, 10).is_empty());
    }
}
