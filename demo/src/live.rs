//! The demo run live, as a feeder runs: today's meeting raced (a price move a second, a
//! late scratching or two, then each race off, finished and its result), then the next
//! racing day's declared and raced, and so on until told to stop. Where the events go is the feeder's to say: anything that can [`Publish`].

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use jiff::Timestamp;
use racing_events::Envelope;

use crate::after_season::Calendar;
use crate::feed::DemoFeed;
use crate::simulator::Simulator;

/// Where a feeder's events go: the service's stream in demo mode, a test's `Vec`.
pub trait Publish {
    /// A failure that ends the run (the destination is gone), unlike an event refused.
    type Error;

    /// Publishes `events` in order, and says which of them the destination refused.
    fn publish(
        &mut self,
        events: &[Envelope],
    ) -> impl Future<Output = Result<Refused, Self::Error>> + Send;
}

/// The events of one batch that the destination refused, the run going on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Refused {
    /// How many it refused.
    pub count: u64,
    /// The first refusals: `(place in the batch from 1, reason)`.
    pub reasons: Vec<(u64, String)>,
}

/// The demo run live: the meeting being run, the calendar of the ones after it, and the
/// clock that dates what it publishes.
pub struct LiveDemo {
    simulator: Simulator,
    calendar: Calendar,
    clock: Clock,
}

/// Where the demo reads the time: the system's clock, or a test's.
type Clock = Box<dyn Fn() -> Timestamp + Send + Sync>;

impl LiveDemo {
    /// The demo from `season`'s meeting of today on, with `calendar`: the two that
    /// [`season_and_calendar`](crate::season::season_and_calendar) gave. The calendar's seed drives
    /// every meeting's simulation.
    pub fn new(season: &DemoFeed, calendar: Calendar) -> LiveDemo {
        LiveDemo {
            simulator: Simulator::new(season, calendar.seed()),
            calendar,
            clock: Box::new(Timestamp::now),
        }
    }

    /// The same demo reading the time from `clock` instead of the system's: each event
    /// is dated by it when it is published, and a meeting declared then is declared at
    /// that time.
    pub fn with_clock(self, clock: impl Fn() -> Timestamp + Send + Sync + 'static) -> LiveDemo {
        LiveDemo {
            clock: Box::new(clock),
            ..self
        }
    }

    /// Runs the demo's meetings live through `publisher`, one after another, until
    /// `shutdown` completes: today's first, then the next racing day's, declared (cards,
    /// scratchings, opening odds) as soon as the one before is run, and so on, so that
    /// odds are always moving somewhere. Each race trades for `race_secs`, a price move a
    /// second (or the day's late scratching, see [`Simulator::trade`]), then goes `off`
    /// (or is abandoned), is run for a twentieth of that, and is `finished` with its
    /// result.
    ///
    /// Ends with the calendar (past the year 9999), or with the first error of
    /// `publisher`; refused events are logged and the run goes on.
    pub async fn run<P: Publish>(
        mut self,
        publisher: &mut P,
        race_secs: u64,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), P::Error> {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut meeting = format!("today's demo meeting ({})", self.simulator.date());
        loop {
            let run = run_meeting(
                publisher,
                &mut self.simulator,
                &self.clock,
                race_secs,
                &mut shutdown,
            );
            if !run.await? || stopped(&mut shutdown).await {
                return Ok(());
            }
            let Some(next) = self.calendar.next_meeting((self.clock)()) else {
                tracing::info!("{meeting} is run; the demo's calendar has no later date");
                return Ok(());
            };
            tracing::info!(
                "{meeting} is run; declaring the next meeting, {}",
                next.today
            );
            let refused = publisher.publish(&next.events).await?;
            if refused.count > 0 {
                let reasons = format!("{:?}", refused.reasons);
                tracing::warn!(
                    rejected = refused.count,
                    reasons,
                    "demo meeting declared in part"
                );
            }
            self.simulator = Simulator::new(&next, self.calendar.seed());
            meeting = format!("the demo meeting of {}", next.today);
        }
    }
}

/// How much shorter a race's running is than its trading: real races take a minute or two
/// of the half hour between them.
const RUNNING_SHARE: u64 = 20;

/// Runs one meeting live: each race trades for `race_secs` (a price move, or its late
/// scratching, every second), goes off (or is abandoned), and after its running is
/// finished with its result. `false` when `shutdown` came first.
async fn run_meeting<P: Publish, F: Future<Output = ()>>(
    publisher: &mut P,
    simulator: &mut Simulator,
    clock: &Clock,
    race_secs: u64,
    shutdown: &mut Pin<&mut F>,
) -> Result<bool, P::Error> {
    for race in 0..simulator.races() {
        for second in 0..race_secs {
            if !pause(shutdown, 1).await {
                return Ok(false);
            }
            let now = clock().to_string();
            let events = simulator.trade(race, second, race_secs, &now);
            if !events.is_empty() {
                publisher.publish(&events).await?;
            }
        }
        let now = clock().to_string();
        let date = simulator.date().to_owned();
        if let Some(off) = simulator.off(race, &now) {
            publisher.publish(&[off]).await?;
        }
        if !pause(shutdown, race_secs / RUNNING_SHARE).await {
            return Ok(false);
        }
        let now = clock().to_string();
        let finished = simulator.finish(race, &now);
        if finished.is_empty() {
            tracing::info!(date, race = race + 1, "demo race abandoned");
        } else {
            publisher.publish(&finished).await?;
            tracing::info!(date, race = race + 1, "demo race run; result published");
        }
    }
    Ok(true)
}

/// Waits `secs` seconds; `false` when `shutdown` came first. No wait at all for 0.
async fn pause<F: Future<Output = ()>>(shutdown: &mut Pin<&mut F>, secs: u64) -> bool {
    if secs == 0 {
        return true;
    }
    tokio::select! {
        () = shutdown.as_mut() => false,
        () = tokio::time::sleep(Duration::from_secs(secs)) => true,
    }
}

/// Whether `shutdown` has completed, without waiting for it: a meeting's last result may
/// be published after it did. (Not polled again once it has.)
async fn stopped<F: Future<Output = ()>>(shutdown: &mut Pin<&mut F>) -> bool {
    std::future::poll_fn(|cx| Poll::Ready(shutdown.as_mut().poll(cx).is_ready())).await
}
