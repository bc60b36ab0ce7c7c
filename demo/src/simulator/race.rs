//! One of today's races as the simulation holds it: its starters with their prices, and
//! what its day holds besides them.

use std::collections::{BTreeMap, BTreeSet};

use racing_events::{RaceCard, RunnerOdds};

use crate::races::{race_plan, Ground, Kind, RacePlan, Venue, SHA_TIN_TURF};
use crate::tote::{self, PAYOUT_RATE};

/// One of today's races as the simulation holds it.
#[derive(Debug, Clone)]
pub(super) struct LiveRace {
    pub(super) card: RaceCard,
    /// The card's runners still in the race, with their prices.
    pub(super) starters: Vec<Starter>,
    /// Indices into the card's runners of those scratched, which the result lists as WV.
    pub(super) scratched: Vec<usize>,
    /// Indices into the card's runners of those scratched on the day, listed as WX.
    pub(super) late: Vec<usize>,
    /// What the day holds for the race besides its prices.
    pub(super) plan: DayPlan,
    /// Rebuilt from the card, for the helpers that time a race.
    pub(super) race: RacePlan,
    pub(super) going: &'static str,
}

/// A starter as the market holds it: its chance, as a log-weight, and the prices the board
/// shows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Starter {
    /// Index into the card's runners.
    pub(super) runner: usize,
    /// Its chance of winning as the money has it now, as a log-weight among the field's
    /// (see [`tote::chances`]), and as it opened.
    pub(super) weight: f64,
    pub(super) opening: f64,
    /// Its win and place prices on the board.
    pub(super) win: f64,
    pub(super) place: f64,
}

impl LiveRace {
    pub(super) fn new(
        card: RaceCard,
        out: &BTreeSet<String>,
        opening: &BTreeMap<(i64, String), (f64, Option<f64>)>,
        ground: Ground,
    ) -> LiveRace {
        let (scratched, running): (Vec<usize>, Vec<usize>) =
            (0..card.runners.len()).partition(|&i| out.contains(&card.runners[i].horse_no));
        // A starter with no opening price opens as if every starter had the same chance.
        let level = PAYOUT_RATE * running.len() as f64;
        let win: Vec<f64> = running
            .iter()
            .map(|&runner| {
                let key = (card.race_number, card.runners[runner].horse_no.clone());
                let price = opening.get(&key).map_or(level, |&(win, _)| win);
                price.clamp(tote::MIN_WIN, tote::MAX_WIN)
            })
            .collect();
        let fair = tote::place_prices(&win);
        let starters = running
            .into_iter()
            .zip(win.into_iter().zip(fair))
            .map(|(runner, (win, fair))| {
                let key = (card.race_number, card.runners[runner].horse_no.clone());
                let place = opening.get(&key).and_then(|&(_, place)| place);
                Starter {
                    runner,
                    weight: -win.ln(),
                    opening: -win.ln(),
                    win,
                    place: place.unwrap_or(fair),
                }
            })
            .collect();
        // Cards do not say which track a race is on; a trip that Sha Tin's turf does not
        // stage (1650 m) can only be the all-weather.
        let all_weather = card.venue == Venue::ShaTin.name()
            && !SHA_TIN_TURF.iter().any(|&(d, _)| d == card.distance);
        // Only pace and distance matter for timing; an unknown class runs at Class 3 pace.
        let kind = Kind::parse(&card.class).unwrap_or(Kind::Handicap(3));
        let race = race_plan(
            card.race_number,
            &card.race_name,
            kind,
            card.distance,
            all_weather,
        );
        LiveRace {
            going: ground.going(&race),
            card,
            starters,
            scratched,
            late: Vec::new(),
            plan: DayPlan::default(),
            race,
        }
    }
}

impl LiveRace {
    /// Moves the board toward the market's prices after the money moved on the starters
    /// of `moved` (see [`tote::reprice`]); the starters whose prices changed.
    pub(super) fn reprice(&mut self, moved: &[usize]) -> Vec<usize> {
        let weights: Vec<f64> = self.starters.iter().map(|s| s.weight).collect();
        let market = tote::win_prices(&tote::chances(&weights));
        let mut board: Vec<(f64, f64)> = self.starters.iter().map(|s| (s.win, s.place)).collect();
        let changed = tote::reprice(&mut board, &market, moved);
        for (starter, (win, place)) in self.starters.iter_mut().zip(board) {
            (starter.win, starter.place) = (win, place);
        }
        changed
    }

    /// The prices of the starters at `changed`, as an update lists them.
    pub(super) fn priced(&self, changed: &[usize]) -> Vec<RunnerOdds> {
        changed
            .iter()
            .map(|&i| {
                let starter = &self.starters[i];
                RunnerOdds {
                    horse_no: self.card.runners[starter.runner].horse_no.clone(),
                    win_odds: Some(starter.win),
                    place_odds: Some(starter.place),
                }
            })
            .collect()
    }
}

/// What a race's day holds besides its prices, drawn when the simulator starts.
#[derive(Debug, Clone, Default)]
pub(super) struct DayPlan {
    /// A late scratching still to come: the share of the race's trading after which it
    /// comes, and why the runner is withdrawn.
    pub(super) scratching: Option<(f64, &'static str)>,
    /// Why the race is abandoned at its time, if it is.
    pub(super) abandoned: Option<&'static str>,
}
