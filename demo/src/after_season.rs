//! [`Calendar`]: the demo's racing after its season, a meeting at a time, planned as the
//! season's were and run by the season's generator.

use jiff::civil::Date;
use jiff::Timestamp;

use crate::calendar::{next_meeting_day, plan_meeting};
use crate::feed::DemoFeed;
use crate::generator::Generator;

/// The demo's racing after its season: the horses as the season left them (every one
/// with a profile), the pattern races not yet run, and the last meeting declared.
pub struct Calendar {
    /// The season's seed, which drives every meeting's simulation too.
    seed: u64,
    generator: Generator,
    pattern: Vec<(&'static str, u8, i64)>,
    /// How many meetings are declared; the next one's index.
    meetings: usize,
    /// The last meeting's date.
    date: Date,
}

impl Calendar {
    /// What [`season_and_calendar`](crate::season::season_and_calendar) made it from, with the
    /// season's horses and its last meeting's date.
    pub(crate) fn new(
        seed: u64,
        generator: Generator,
        pattern: Vec<(&'static str, u8, i64)>,
        meetings: usize,
        date: Date,
    ) -> Calendar {
        Calendar {
            seed,
            generator,
            pattern,
            meetings,
            date,
        }
    }

    /// The seed of the season it goes on from.
    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    /// Declares the meeting of the next racing day after the last meeting, as HK races:
    /// a Wednesday evening (most often at Happy Valley), or one day of a weekend (most
    /// often Sunday at Sha Tin), outside the summer break. Its fields are drawn from the
    /// season's rested horses, as the season's meetings were. The feed holds its cards,
    /// its scratchings and its opening odds, with `today` its date, ready for
    /// [`Simulator::new`].
    ///
    /// The meeting is declared at `now`: none of its events is dated after it, so a
    /// meeting the demo runs ahead of the calendar has its cards, scratchings and opening
    /// odds dated `now`, not days ahead.
    ///
    /// The calendar goes on from one seed's season the same way every time. `None` only
    /// past the year 9999.
    pub fn next_meeting(&mut self, now: Timestamp) -> Option<DemoFeed> {
        let generator = &mut self.generator;
        generator.now = now;
        let date = next_meeting_day(&mut generator.rng, self.date)?;
        let plan = plan_meeting(&mut generator.rng, date, &mut self.pattern);
        generator.live_meeting(self.meetings, &plan);
        self.meetings += 1;
        self.date = date;
        Some(DemoFeed {
            events: std::mem::take(&mut generator.events),
            today: date.to_string(),
            meetings: self.meetings,
            horses: generator.horses.len(),
        })
    }
}
