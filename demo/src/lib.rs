//! The demo feeder: one Hong Kong-style racing season as feed events, the same for a seed
//! and a day, the calendar of the meetings after it, and a simulator that runs a meeting
//! live, so that the service can be shown and exercised without a real feeder. A feeder
//! like any other, it depends on `racing-events` alone: `racing serve --demo` runs it
//! live (see [`LiveDemo`]), and `racing demo` writes its season as NDJSON.

mod after_season;
mod calendar;
mod draw;
mod feed;
mod generator;
mod horses;
mod live;
mod market;
mod races;
mod running;
mod season;
mod simulator;
#[cfg(test)]
mod tests;
mod tote;

pub use after_season::Calendar;
pub use feed::{DemoFeed, Example};
pub use live::{LiveDemo, Publish, Refused};
pub use season::{season, season_and_calendar};
pub use simulator::Simulator;
