//! The calendar after the season: the meetings it declares, and on which days.

use jiff::civil::Weekday;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::calendar::{next_meeting_day, off_season};

use super::*;

/// A month and more of meetings after today's, from one seed's calendar.
fn calendar(seed: u64) -> Vec<DemoFeed> {
    let (_, mut calendar) = season_and_calendar(seed, &now());
    (0..16)
        .map(|_| {
            calendar
                .next_meeting(now().timestamp())
                .expect("dates stay in range")
        })
        .collect()
}

#[test]
fn the_calendar_declares_later_meetings_on_racing_days_that_run_live() {
    let next = calendar(42);
    let profiled: BTreeSet<&str> = feed()
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::HorseProfileUpdated(p) => Some(p.horse_no.as_str()),
            _ => None,
        })
        .collect();
    let mut ids: BTreeSet<uuid::Uuid> = feed().events.iter().map(|e| e.event_id).collect();
    let mut last = today();
    let mut weekdays = BTreeSet::new();
    for (n, meeting) in next.iter().enumerate() {
        let date: Date = meeting.today.parse().expect("a calendar date");
        assert!(date > last, "{date} after {last}");
        let weekday = date.weekday();
        let racing_day = [Weekday::Wednesday, Weekday::Saturday, Weekday::Sunday];
        assert!(racing_day.contains(&weekday) && !off_season(date), "{date}");
        // One meeting a weekend: never the Sunday after a Saturday meeting.
        assert!(weekday != Weekday::Sunday || last.tomorrow().ok() != Some(date));
        weekdays.insert(weekday.to_monday_one_offset());
        assert_eq!(meeting.meetings, feed().meetings + n + 1);
        assert_eq!(meeting.horses, feed().horses);
        for env in &meeting.events {
            assert_contract(env);
            assert!(ids.insert(env.event_id), "{} twice", env.event_id);
        }
        let cards: Vec<&RaceCard> = meeting
            .events
            .iter()
            .filter_map(|e| match &e.event {
                Event::RaceCardDeclared(c) => Some(c),
                _ => None,
            })
            .collect();
        assert!((8..=11).contains(&cards.len()), "{} races", cards.len());
        let mut runners = BTreeSet::new();
        for card in &cards {
            assert_eq!(card.date, meeting.today);
            for r in &card.runners {
                assert!(profiled.contains(r.horse_no.as_str()), "{}", r.horse_no);
                assert!(runners.insert(&r.horse_no), "{} twice", r.horse_no);
            }
        }
        assert!(!meeting
            .events
            .iter()
            .any(|e| matches!(e.event, Event::RaceResultPublished(_))));
        last = date;
    }
    // Wednesday evenings and weekend days, a month and more of them.
    assert!(weekdays.contains(&3), "{weekdays:?}");
    assert!(
        weekdays.contains(&6) || weekdays.contains(&7),
        "{weekdays:?}"
    );
    // Every meeting runs live with the demo's one seed, today's too, and no odds or
    // result repeats another meeting's event id.
    for meeting in std::iter::once(feed()).chain(&next) {
        let mut sim = Simulator::new(meeting, 42);
        assert_eq!(sim.date(), meeting.today);
        assert!(sim.races() >= 8);
        for race in 0..sim.races() {
            for _ in 0..3 {
                let tick = sim.tick(race, NOW).expect("the meeting has races");
                assert_eq!(odds_of(&tick).date, meeting.today);
                assert_contract(&tick);
                assert!(ids.insert(tick.event_id), "{} twice", tick.event_id);
            }
            let result = sim.result(race, NOW).expect("the meeting has races");
            assert_contract(&result);
            assert!(ids.insert(result.event_id), "{} twice", result.event_id);
        }
    }
}

#[test]
fn the_same_seed_declares_the_same_meetings() {
    let json = |meetings: &[DemoFeed]| {
        let events = meetings.iter().flat_map(|m| &m.events);
        events.map(Envelope::to_json).collect::<Vec<_>>()
    };
    let next = calendar(42);
    assert_eq!(json(&calendar(42)), json(&next));
    assert_ne!(json(&calendar(43)), json(&next));
}

#[test]
fn the_next_meeting_day_skips_the_summer_break_and_the_weekends_other_day() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut next = |after| next_meeting_day(&mut rng, after).expect("in range");
    // The season's last Wednesday; the next racing is in September.
    let resumed = next(Date::constant(2027, 7, 14));
    assert!(resumed > Date::constant(2027, 9, 6), "{resumed}");
    assert!(!off_season(resumed));
    // After a Saturday meeting, the Wednesday; after a Tuesday, the Wednesday.
    assert_eq!(
        next(Date::constant(2026, 11, 21)),
        Date::constant(2026, 11, 25)
    );
    assert_eq!(
        next(Date::constant(2026, 11, 24)),
        Date::constant(2026, 11, 25)
    );
    // After a Wednesday, that weekend's Saturday or Sunday.
    let weekend = next(Date::constant(2026, 11, 25));
    assert!(
        [Date::constant(2026, 11, 28), Date::constant(2026, 11, 29)].contains(&weekend),
        "{weekend}"
    );
    assert_eq!(
        next_meeting_day(&mut ChaCha8Rng::seed_from_u64(1), Date::MAX),
        None
    );
}
