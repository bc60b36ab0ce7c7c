//! One season of the demo, the same for a seed and a day: its horses, its meetings up to
//! today's, each race's prices and result, and one correction, generated in the order a
//! feeder publishes them; and the calendar that goes on from it.

use jiff::civil::Date;
use jiff::{Timestamp, Zoned};
use racing_events::{Envelope, Event, RaceResult, RaceRetracted};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::after_season::Calendar;
use crate::calendar::{self, plan_incidents, plan_meetings, MeetingPlan, PATTERN_RACES};
use crate::draw::envelope;
use crate::feed::DemoFeed;
use crate::generator::Generator;
use crate::horses::make_horses;
use crate::races::Venue;

/// Generates one season ending with a meeting declared for `today`, every event at the
/// time it is planned for: the season as published once today's races are open (from
/// 09:11 in Hong Kong).
pub fn season(seed: u64, today: Date) -> DemoFeed {
    let end_of_today = today
        .at(23, 59, 59, 0)
        .to_zoned(calendar::hong_kong())
        .map_or(Timestamp::MAX, |t| t.timestamp());
    season_published(seed, today, end_of_today).0
}

/// The season of `season` as published at `now`, today being `now`'s date, and the
/// calendar that goes on from it: the meetings after today's, declared one at a time from
/// the same horses, so that a demo can run for as long as it is left running.
///
/// No event is dated after `now`: a fact planned for later (today's races open from 09:01
/// in Hong Kong) is dated `now`, when it is published. The events are otherwise those of
/// `season` for the day.
pub fn season_and_calendar(seed: u64, now: &Zoned) -> (DemoFeed, Calendar) {
    season_published(seed, now.date(), now.timestamp())
}

fn season_published(seed: u64, today: Date, now: Timestamp) -> (DemoFeed, Calendar) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let horses = make_horses(&mut rng);
    let mut pattern: Vec<(&str, u8, i64)> = PATTERN_RACES.to_vec();
    pattern.shuffle(&mut rng);
    let plans = plan_meetings(&mut rng, today, &mut pattern);
    let past_races = plans.iter().rev().skip(1).map(|m| m.races.len()).sum();
    let mut incidents = plan_incidents(&mut rng, past_races).into_iter();
    let mut market = ChaCha8Rng::seed_from_u64(seed);
    // The season's stream is 0, the misfiled result's 1, the simulator's dates' digits.
    market.set_stream(2);
    let mut generator = Generator {
        rng,
        market,
        horses,
        events: Vec::new(),
        now,
        season: calendar::season_of(today),
    };
    let last = plans.len() - 1;
    for (index, plan) in plans.iter().enumerate() {
        if index == last {
            generator.live_meeting(index, plan);
        } else {
            generator.past_meeting(index, plan, &mut incidents);
        }
    }
    let mut racing = std::mem::take(&mut generator.events);
    if let Some(last_run) = plans.len().checked_sub(2).and_then(|i| plans.get(i)) {
        misfile_first_result(seed, &mut racing, last_run);
    }
    generator.publish_profiles(today);
    generator.events.extend(racing);
    let feed = DemoFeed {
        events: std::mem::take(&mut generator.events),
        today: today.to_string(),
        meetings: plans.len(),
        horses: generator.horses.len(),
    };
    let calendar = Calendar::new(seed, generator, pattern, plans.len(), today);
    (feed, calendar)
}

/// Publishes the first result of `meeting` under the other racecourse first and retracts
/// it there, as a feeder that corrects a slip does, just before the right one. Its event
/// ids come from a stream of their own, so the rest of the season is what it would be
/// without it.
fn misfile_first_result(seed: u64, events: &mut Vec<Envelope>, meeting: &MeetingPlan) {
    let date = meeting.date.to_string();
    let Some(at) = events
        .iter()
        .position(|e| matches!(&e.event, Event::RaceResultPublished(r) if r.date == date))
    else {
        return;
    };
    let Event::RaceResultPublished(right) = &events[at].event else {
        return;
    };
    let other = match meeting.venue {
        Venue::ShaTin => Venue::HappyValley,
        Venue::HappyValley => Venue::ShaTin,
    };
    let wrong = RaceResult {
        venue: other.name().to_owned(),
        ..right.clone()
    };
    let retracted = RaceRetracted {
        date: wrong.date.clone(),
        venue: wrong.venue.clone(),
        race_number: wrong.race_number,
        reason: format!("published under {} in error", wrong.venue),
    };
    let occurred_at = events[at].occurred_at.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // See `season_and_calendar` for the other streams.
    rng.set_stream(1);
    let slip = [
        Event::RaceResultPublished(wrong),
        Event::RaceRetracted(retracted),
    ]
    .map(|e| envelope(&mut rng, e, occurred_at.clone()));
    events.splice(at..at, slip);
}
