//! How a race is run and priced: the market's odds, the finishing order, times, margins,
//! dead heats and prize money.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::races::RacePlan;

/// The HK prize split for 1st to 5th, in thousandths of the purse.
const PRIZE_SHARES: [i64; 5] = [570, 220, 115, 60, 35];
/// The pool kept by the totalisator, so decimal odds pay back less than fair.
pub(crate) const PAYOUT_RATE: f64 = 0.825;

/// How a runner that did not finish is shown: pulled up, unseated, fell, did not finish.
pub(crate) const NON_FINISHES: &[(&str, u32)] = &[("PU", 35), ("UR", 20), ("FE", 10), ("DNF", 35)];

/// One finisher's line: which starter, its placing, time in hundredths and prize money.
pub(crate) struct Placing {
    pub(crate) starter: usize,
    pub(crate) position: i64,
    pub(crate) time: i64,
    pub(crate) dead_heat: bool,
    pub(crate) stakes: i64,
}

/// Places the finishers in `order`; with a `tie` at index t, the runners at t and t + 1
/// share the placing, the time and the two prizes, and the next placing is skipped.
pub(crate) fn placings(
    rng: &mut ChaCha8Rng,
    order: &[usize],
    tie: Option<usize>,
    winning_time: i64,
    purse: i64,
) -> Vec<Placing> {
    let mut time = winning_time;
    let mut lines = Vec::with_capacity(order.len());
    for (place, &starter) in order.iter().enumerate() {
        let second_of_tie = tie.is_some_and(|t| place == t + 1);
        let dead_heat = second_of_tie || tie == Some(place);
        if place > 0 && !second_of_tie {
            time += margin(rng, place);
        }
        let stakes = match tie {
            Some(t) if dead_heat => (share(purse, t) + share(purse, t + 1)) / 2,
            _ => share(purse, place),
        };
        lines.push(Placing {
            starter,
            position: (if second_of_tie { place } else { place + 1 }) as i64,
            time,
            dead_heat,
            stakes,
        });
    }
    lines
}

/// Decimal odds from log-weights: the fair price less the totalisator's take, in HK's
/// range of 1.4 (say) to 99, to one decimal.
pub(crate) fn prices(market: &[f64]) -> Vec<f64> {
    let top = market.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = market.iter().map(|m| (m - top).exp()).collect();
    let total: f64 = weights.iter().sum();
    weights
        .iter()
        .map(|w| ((PAYOUT_RATE * total / w).clamp(1.4, 99.0) * 10.0).round() / 10.0)
        .collect()
}

/// Adding Gumbel noise to log-weights and sorting gives each runner a chance of winning
/// in proportion to its weight (a Plackett-Luce race), so favourites win most often.
pub(crate) fn finishing_order(rng: &mut ChaCha8Rng, truth: &[f64]) -> Vec<usize> {
    let mut run: Vec<(f64, usize)> = truth
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
            (t - (-u.ln()).ln(), i)
        })
        .collect();
    run.sort_by(|a, b| b.0.total_cmp(&a.0));
    run.into_iter().map(|(_, i)| i).collect()
}

/// The winner's time in hundredths: par for the trip, adjusted for class and ground.
pub(crate) fn winning_time(rng: &mut ChaCha8Rng, race: &RacePlan, going: &str) -> i64 {
    let par = match race.distance {
        1000 => 57.0,
        1200 => 70.0,
        1400 => 82.6,
        1600 => 95.0,
        1650 => 100.0,
        1800 => 108.8,
        2000 => 122.0,
        2200 => 135.0,
        2400 => 148.5,
        other => other as f64 * 0.061,
    };
    let km = race.distance as f64 / 1000.0;
    let ground = match going {
        "GOOD TO FIRM" | "WET FAST" => 0.996,
        "GOOD TO YIELDING" => 1.006,
        "YIELDING" | "WET SLOW" => 1.012,
        "SOFT" => 1.025,
        _ => 1.0,
    };
    let pace = rng.random_range(-0.4..0.4) * km;
    (((par + race.kind.pace() * km) * ground + pace) * 100.0).round() as i64
}

/// Hundredths between one finisher and the next: close up front, strung out behind.
fn margin(rng: &mut ChaCha8Rng, place: usize) -> i64 {
    let close = rng.random_range(1..=16);
    if place >= 5 {
        close + rng.random_range(0..=18)
    } else {
        close
    }
}

fn share(purse: i64, place: usize) -> i64 {
    PRIZE_SHARES.get(place).map_or(0, |s| purse * s / 1000)
}

/// `m:ss.cc` from hundredths of a second.
pub(crate) fn finish_time(hundredths: i64) -> String {
    format!(
        "{}:{:02}.{:02}",
        hundredths / 6000,
        hundredths / 100 % 60,
        hundredths % 100
    )
}
