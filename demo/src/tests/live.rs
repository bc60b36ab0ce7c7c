//! The demo run live through a destination of the test's own, on a paused clock.

use std::time::Duration;

use jiff::{Span, Timestamp, Zoned};
use racing_events::RaceStatus;

use crate::{LiveDemo, Publish, Refused};

use super::*;

/// A destination that keeps each batch it is given, up to `limit` batches: past it, the
/// run ends with an error, so that a run that would not stop ends all the same.
struct Kept {
    batches: Vec<Vec<Envelope>>,
    limit: usize,
}

/// A run that went on past the batches a test expected.
#[derive(Debug, PartialEq)]
struct TooMany;

impl Publish for Kept {
    type Error = TooMany;

    async fn publish(&mut self, events: &[Envelope]) -> Result<Refused, TooMany> {
        if self.batches.len() == self.limit {
            return Err(TooMany);
        }
        self.batches.push(events.to_vec());
        Ok(Refused::default())
    }
}

fn kept(limit: usize) -> Kept {
    Kept {
        batches: Vec::new(),
        limit,
    }
}

/// What a batch says, apart from the time it was published at.
fn facts(events: &[Envelope]) -> Vec<(uuid::Uuid, Event)> {
    events
        .iter()
        .map(|e| (e.event_id, e.event.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_live_demo_races_todays_meeting_then_declares_and_races_the_next() {
    let (season, calendar) = season_and_calendar(42, &now());
    let race_secs = 3;
    // Today's races take `race_secs` each; stop half a second after the next meeting's
    // first price move.
    let races = Simulator::new(&season, 42).races();
    let stop = Duration::from_millis((races as u64 * race_secs + 1) * 1000 + 500);
    let mut kept = kept(1_000);
    let run = LiveDemo::new(&season, calendar).run(&mut kept, race_secs, tokio::time::sleep(stop));
    assert_eq!(run.await, Ok(()));

    // Each second a batch of trading, then the off and, the race run, its end: at
    // three seconds a race, its running takes no time of its own.
    let mut expected = Vec::new();
    let mut sim = Simulator::new(&season, 42);
    for race in 0..races {
        for second in 0..race_secs {
            expected.push(sim.trade(race, second, race_secs, NOW));
        }
        expected.extend(sim.off(race, NOW).map(|e| vec![e]));
        expected.push(sim.finish(race, NOW));
    }
    expected.retain(|batch| !batch.is_empty());
    let (_, mut calendar) = season_and_calendar(42, &now());
    let next = calendar
        .next_meeting(now().timestamp())
        .expect("dates stay in range");
    expected.push(next.events.clone());
    let first_move = Simulator::new(&next, 42).tick(0, NOW);
    expected.push(vec![first_move.expect("the next meeting has races")]);

    let seen: Vec<_> = kept.batches.iter().map(|b| facts(b)).collect();
    let expected: Vec<_> = expected.iter().map(|b| facts(b)).collect();
    assert_eq!(seen, expected);
    let late = seen.iter().flatten().filter(|(_, e)| {
        matches!(e, Event::RaceStatusChanged(s) if s.status() == Some(RaceStatus::Suspended))
    });
    assert!(late.count() >= 1, "a late scratching in the day");
}

#[tokio::test(start_paused = true)]
async fn a_live_demo_told_to_stop_ends_with_the_meeting_it_runs() {
    let (season, calendar) = season_and_calendar(42, &now());
    let races = Simulator::new(&season, 42).races();
    // With no trading, nothing waits: each race goes off and its end goes out at once,
    // and the stop is seen after them, before the next meeting is declared.
    let mut kept = kept(2 * races + 1);
    let run = LiveDemo::new(&season, calendar).run(&mut kept, 0, std::future::ready(()));
    assert_eq!(run.await, Ok(()));
    let ends = kept
        .batches
        .iter()
        .flatten()
        .filter_map(|e| match &e.event {
            Event::RaceResultPublished(r) => Some(r.race_number),
            Event::RaceStatusChanged(s) if s.status() == Some(RaceStatus::Abandoned) => {
                Some(s.race_number)
            }
            Event::RaceStatusChanged(_) => None,
            other => panic!("only the races' ends, got {other:?}"),
        });
    let ends: Vec<i64> = ends.collect();
    assert_eq!(ends, (1..=races as i64).collect::<Vec<_>>());
}

/// A destination that keeps each batch with the time the demo's clock read when it came.
struct Timed<C> {
    clock: C,
    batches: Vec<(Timestamp, Vec<Envelope>)>,
}

impl<C: Fn() -> Timestamp + Send> Publish for Timed<C> {
    type Error = TooMany;

    async fn publish(&mut self, events: &[Envelope]) -> Result<Refused, TooMany> {
        self.batches.push(((self.clock)(), events.to_vec()));
        Ok(Refused::default())
    }
}

/// Moments of today in Hong Kong that a demo may start at: half past every other hour,
/// and while today's races are opening (09:01 to 09:11). (A season takes a second or
/// two to generate in a debug build.)
fn starts() -> impl Iterator<Item = Zoned> {
    let midnight = today()
        .at(0, 0, 0, 0)
        .to_zoned(crate::calendar::hong_kong())
        .expect("a day in range");
    let minutes = (0..24).step_by(2).map(|h| h * 60 + 30).chain([9 * 60 + 5]);
    minutes.map(move |m| {
        midnight
            .checked_add(Span::new().minutes(m))
            .expect("a day in range")
    })
}

fn time_of(e: &Envelope) -> Timestamp {
    e.occurred_at.parse().expect("an RFC 3339 time")
}

#[test]
fn a_season_and_the_meetings_after_it_date_nothing_after_they_are_published_at_any_hour() {
    for start in starts() {
        let now = start.timestamp();
        let (season, mut calendar) = season_and_calendar(42, &start);
        assert_eq!(season.today, start.date().to_string());
        for e in &season.events {
            assert!(time_of(e) <= now, "published at {start}: {}", e.to_json());
        }
        let later = now + Span::new().hours(1);
        let next = calendar.next_meeting(later).expect("dates stay in range");
        for e in &next.events {
            assert!(time_of(e) <= later, "declared at {later}: {}", e.to_json());
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_live_demo_dates_nothing_after_the_moment_it_publishes_it_at_any_hour() {
    let race_secs = 3;
    for start in starts().step_by(3) {
        let (season, calendar) = season_and_calendar(42, &start);
        let from = start.timestamp();
        let started = tokio::time::Instant::now();
        let clock = move || {
            from.checked_add(started.elapsed())
                .expect("a clock in range")
        };
        // Today's meeting, the next one declared, and its first price move.
        let races = Simulator::new(&season, 42).races();
        let stop = Duration::from_millis((races as u64 * race_secs + 1) * 1000 + 500);
        let mut timed = Timed {
            clock,
            batches: Vec::new(),
        };
        let run = LiveDemo::new(&season, calendar).with_clock(clock).run(
            &mut timed,
            race_secs,
            tokio::time::sleep(stop),
        );
        assert_eq!(run.await, Ok(()));
        let mut statuses = 0;
        for (published, batch) in &timed.batches {
            for e in batch {
                statuses += usize::from(matches!(e.event, Event::RaceStatusChanged(_)));
                assert!(
                    time_of(e) <= *published,
                    "started at {start}, published at {published}: {}",
                    e.to_json()
                );
            }
        }
        assert!(statuses > races, "{statuses} statuses from {start}");
        let declared = timed.batches.iter().flat_map(|(_, b)| b);
        assert!(declared
            .clone()
            .any(|e| matches!(&e.event, Event::RaceCardDeclared(c) if c.date != season.today)));
    }
}
