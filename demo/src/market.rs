//! The betting market of a past race as it was recorded before the off: its prices half an
//! hour before the off, a move, and the starting prices that its result lists, so that a
//! past meeting has odds, an odds history and a replay as today's has (a race's replay at
//! speed 100 takes about 17 s).

use racing_events::{OddsUpdated, RaceResult, RunnerOdds};
use rand::seq::index;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::draw::normal;
use crate::tote;

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
/// The most runners whose chances one intermediate move shifts, as the live simulation
/// moves them.
const MAX_MOVES: usize = 4;

/// When the market of a race opens and moves, in Hong Kong time (minutes after midnight),
/// and the race's post time.
pub(crate) struct Times {
    pub(crate) opening: i64,
    pub(crate) post: i64,
}

/// The price moves of `result`'s race before the off, each with its minutes after
/// midnight in Hong Kong: the opening (every runner with a starting price, each chance a
/// little off its starting one), a move of a few runners' chances part of the way to
/// their starting ones, then the last call, which brings every runner to its starting
/// price. Every board is the tote's (see `tote`): a win book of about 121% and the place
/// prices that go with the win prices; a move lists the runners whose prices it changed.
/// Ids and prices come from `rng` alone, so that the rest of the season is what it would
/// be without them.
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
    // Each chance as a log-weight: the starting price's, and the opening's off it.
    let closing: Vec<f64> = starting.iter().map(|&(_, sp)| -sp.ln()).collect();
    let mut weights: Vec<f64> = closing
        .iter()
        .map(|w| w + OPENING_SPREAD * normal(rng))
        .collect();
    let win = tote::win_prices(&tote::chances(&weights));
    let mut board: Vec<(f64, f64)> = win.iter().copied().zip(tote::place_prices(&win)).collect();
    let update = |board: &[(f64, f64)], listed: &[usize]| OddsUpdated {
        date: result.date.clone(),
        venue: Some(result.venue.clone()),
        race_number: result.race_number,
        odds: listed
            .iter()
            .map(|&i| RunnerOdds {
                horse_no: starting[i].0.to_owned(),
                win_odds: Some(board[i].0),
                place_odds: Some(board[i].1),
            })
            .collect(),
    };
    let everyone: Vec<usize> = (0..board.len()).collect();
    let mut moves = vec![(times.opening, update(&board, &everyone))];
    for before in MOVES_BEFORE_OFF {
        let count = rng.random_range(1..=MAX_MOVES).min(board.len());
        let mut picked = index::sample(rng, board.len(), count).into_vec();
        picked.sort_unstable();
        for &i in &picked {
            // Half way to the starting chance.
            weights[i] = (weights[i] + closing[i]) / 2.0;
        }
        let market = tote::win_prices(&tote::chances(&weights));
        let changed = tote::reprice(&mut board, &market, &picked);
        if !changed.is_empty() {
            moves.push((times.post - before, update(&board, &changed)));
        }
    }
    let starting_prices: Vec<f64> = starting.iter().map(|&(_, sp)| sp).collect();
    let changed = tote::reprice(&mut board, &starting_prices, &everyone);
    if !changed.is_empty() {
        moves.push((times.post - LAST_CALL, update(&board, &changed)));
    }
    moves
}
