//! How a race is run: the finishing order, times, margins, dead heats and prize money, and
//! what the record shows of it: lengths behind the winner and the positions at each call.
//! (Its prices are the tote board's, `tote`.)

use racing_events::{CardRunner, ResultRunner};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::draw::normal;
use crate::races::RacePlan;

/// Seconds a length takes to run, in hundredths: the usual conversion of a time gap.
pub(crate) const HUNDREDTHS_PER_LENGTH: f64 = 16.0;

/// The HK prize split for 1st to 5th, in thousandths of the purse.
const PRIZE_SHARES: [i64; 5] = [570, 220, 115, 60, 35];

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
        let position = (if second_of_tie { place } else { place + 1 }) as i64;
        lines.push(Placing {
            starter,
            position,
            time,
            dead_heat,
            stakes: prize_money(purse, position, dead_heat),
        });
    }
    lines
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

/// The prize money of the runner placed `position` (from 1) in a race of `purse`: its
/// place's share, or, in a dead heat, half of the shares of the two places it shares.
pub(crate) fn prize_money(purse: i64, position: i64, dead_heat: bool) -> i64 {
    let place = usize::try_from(position - 1).unwrap_or(usize::MAX);
    if dead_heat {
        (share(purse, place) + share(purse, place.saturating_add(1))) / 2
    } else {
        share(purse, place)
    }
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

/// Lengths behind the winner as the official result writes them, from the time gap in
/// hundredths (0.16 s a length): `-` for a winner, `NOSE`, `SH`, `HD`, `N` for the
/// smallest gaps, else lengths to the nearest quarter (`3/4`, `1-1/4`, `10-3/4`).
pub(crate) fn lbw(gap: i64) -> String {
    if gap <= 0 {
        return "-".into();
    }
    let lengths = gap as f64 / HUNDREDTHS_PER_LENGTH;
    let code = match lengths {
        l if l < 0.075 => "NOSE",
        l if l < 0.15 => "SH",
        l if l < 0.25 => "HD",
        l if l < 0.4 => "N",
        _ => "",
    };
    if !code.is_empty() {
        return code.into();
    }
    let quarters = ((lengths * 4.0).round() as i64).max(2);
    let fraction = ["", "1/4", "1/2", "3/4"][(quarters % 4) as usize];
    match (quarters / 4, fraction) {
        (0, f) => f.into(),
        (w, "") => w.to_string(),
        (w, f) => format!("{w}-{f}"),
    }
}

/// How many calls the record gives a race of `distance` metres: three in a sprint, up to
/// six over a staying trip; the last is at the finish.
pub(crate) fn calls(distance: i64) -> usize {
    match distance {
        ..=1200 => 3,
        1201..=1650 => 4,
        1651..=2000 => 5,
        _ => 6,
    }
}

/// Each starter's position at every call of a race of `calls` calls: `finish` holds the
/// finishers as (starter, official position) in finishing order, `fallen` a starter that
/// did not finish. Early calls shuffle the field around its finishing order, less so as
/// the race goes on; at the last call each finisher is at its official position. A
/// runner that did not finish has positions only for the calls before it stopped.
/// Indexed by starter (`starters` of them); empty for a starter in neither.
pub(crate) fn running_positions(
    rng: &mut ChaCha8Rng,
    calls: usize,
    starters: usize,
    finish: &[(usize, i64)],
    fallen: Option<usize>,
) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::with_capacity(calls); starters];
    let stop = fallen.map(|f| (f, rng.random_range(1..calls)));
    // Where each runner is heading: its finishing rank, or anywhere for a faller.
    let mut key: Vec<(usize, f64)> = finish
        .iter()
        .enumerate()
        .map(|(rank, &(s, _))| (s, rank as f64))
        .collect();
    if let Some(f) = fallen {
        key.push((f, rng.random_range(0.0..starters as f64)));
    }
    for call in 0..calls - 1 {
        let spread = 3.0 * (calls - 1 - call) as f64 / (calls - 1) as f64;
        let mut at: Vec<(f64, usize)> = key
            .iter()
            .filter(|&&(s, _)| stop.is_none_or(|(f, n)| s != f || call < n))
            .map(|&(s, k)| (k + spread * normal(rng), s))
            .collect();
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (place, (_, s)) in at.into_iter().enumerate() {
            out[s].push(place as i64 + 1);
        }
    }
    for &(s, position) in finish {
        out[s].push(position);
    }
    out
}

/// A result line for a card runner, with no placing, time or price yet.
pub(crate) fn unplaced(runner: &CardRunner) -> ResultRunner {
    ResultRunner {
        position: None,
        horse_no: runner.horse_no.clone(),
        horse_name: runner.horse_name.clone(),
        jockey: runner.jockey.clone(),
        trainer: runner.trainer.clone(),
        finish_time: None,
        win_odds: None,
        dead_heat: false,
        status: None,
        lbw: Some("---".into()),
        running_positions: None,
        actual_weight: Some(runner.weight),
        declared_weight: None,
        draw: Some(runner.draw),
    }
}
