//! The betting market of a past race as it was recorded before the off: its prices half an
//! hour before the off, a move, and the starting prices that its result lists, so that a
//! past meeting has odds, an odds history and a replay as today's has (a race's replay at
//! speed 100 takes about 17 s).

use racing_events::{OddsUpdated, RaceResult, RunnerOdds};
use rand::seq::index;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::draw::normal;

/// How many minutes before the off a past race's record starts: its first prices.
pub(crate) const OPENS_BEFORE_OFF: i64 = 30;
/// How far an opening price strays from the starting price, in log terms.
const OPENING_SPREAD: f64 = 0.15;
/// The moves between the opening and the last call, each by how many minutes before the
/// off it comes: one, so that a race's market is three updates at most and the season's
/// log stays small.
const MOVES_BEFORE_OFF: [i64; 1] = [15];
/// The last move, which brings every price to its starting price: minutes before the off.
const LAST_CALL: i64 = 2;
/// The most runners one intermediate move prices, as the live simulation moves them.
const MAX_MOVES: usize = 4;

/// When the market of a race opens and moves, in Hong Kong time (minutes after midnight),
/// and the race's post time.
pub(crate) struct Times {
    pub(crate) opening: i64,
    pub(crate) post: i64,
}

/// The price moves of `result`'s race before the off, each with its minutes after
/// midnight in Hong Kong: the opening (every runner with a starting price), a move of a
/// few runners part of the way to their starting prices, then the last call,
/// which lists every runner whose price was not yet its starting price. Ids and prices come
/// from `rng` alone, so that the rest of the season is what it would be without them.
pub(crate) fn moves(
    rng: &mut ChaCha8Rng,
    result: &RaceResult,
    times: &Times,
) -> Vec<(i64, OddsUpdated)> {
    let starting: Vec<(&str, f64)> = result
        .runners
        .iter()
        .filter_map(|r| Some((r.horse_no.as_str(), r.win_odds?)))
        .collect();
    if starting.is_empty() {
        return Vec::new();
    }
    let mut board: Vec<f64> = starting
        .iter()
        .map(|&(_, sp)| tenth(sp * (OPENING_SPREAD * normal(rng)).exp()))
        .collect();
    let update = |odds: Vec<RunnerOdds>| OddsUpdated {
        date: result.date.clone(),
        venue: Some(result.venue.clone()),
        race_number: result.race_number,
        odds,
    };
    let field = starting.len();
    let priced = |i: usize, price: f64| RunnerOdds {
        horse_no: starting[i].0.to_owned(),
        win_odds: Some(price),
        place_odds: Some(crate::running::place_price(price, field)),
    };
    let mut moves = vec![(
        times.opening,
        update(
            board
                .iter()
                .enumerate()
                .map(|(i, &p)| priced(i, p))
                .collect(),
        ),
    )];
    for before in MOVES_BEFORE_OFF {
        let count = rng.random_range(1..=MAX_MOVES).min(board.len());
        let mut picked = index::sample(rng, board.len(), count).into_vec();
        picked.sort_unstable();
        let odds: Vec<RunnerOdds> = picked
            .into_iter()
            .filter_map(|i| {
                // Half way to the starting price, in log terms.
                let price = tenth((board[i] * starting[i].1).sqrt());
                (price != board[i]).then(|| {
                    board[i] = price;
                    priced(i, price)
                })
            })
            .collect();
        if !odds.is_empty() {
            moves.push((times.post - before, update(odds)));
        }
    }
    let last: Vec<RunnerOdds> = (0..board.len())
        .filter(|&i| board[i] != starting[i].1)
        .map(|i| priced(i, starting[i].1))
        .collect();
    if !last.is_empty() {
        moves.push((times.post - LAST_CALL, update(last)));
    }
    moves
}

/// A price on the board: one decimal place, and never below evens.
fn tenth(price: f64) -> f64 {
    ((price * 10.0).round() / 10.0).max(1.0)
}
