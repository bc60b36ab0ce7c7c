//! The tote board: win and place prices from the runners' chances as Hong Kong's pools pay
//! them back, so that every board the demo shows, from a race's first prices to its off,
//! has a win book of about 121% (the pools keep 17.5%) and place prices that go with its
//! win prices.

/// The share of a pool paid back: Hong Kong's win and place pools keep 17.5%.
pub(crate) const PAYOUT_RATE: f64 = 0.825;
/// The board's shortest win price.
pub(crate) const MIN_WIN: f64 = 1.1;
/// The board's longest win price.
pub(crate) const MAX_WIN: f64 = 99.0;
/// How far a runner's shown price may stray from what the market now gives it before the
/// board shows the new one, as a share of the price: a move of other runners shifts every
/// chance a little, and a board that listed each such shift would list the field every
/// second.
const TOLERANCE: f64 = 0.03;

/// Each runner's chance of winning, in proportion to `exp(weight)`, held where a price
/// would leave the board: a chance that would price a runner shorter than [`MIN_WIN`] or
/// longer than [`MAX_WIN`] is set at that price's, and the others share what is left in
/// proportion, so that the chances still add up to one and the board's book is the pool's.
pub(crate) fn chances(weights: &[f64]) -> Vec<f64> {
    let n = weights.len();
    let top = weights.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let raw: Vec<f64> = weights.iter().map(|w| (w - top).exp()).collect();
    let (low, high) = (PAYOUT_RATE / MAX_WIN, PAYOUT_RATE / MIN_WIN);
    // Runners held at a bound keep it; each pass sets those the free share pushes past one.
    let mut held: Vec<Option<f64>> = vec![None; n];
    loop {
        let left = 1.0 - held.iter().flatten().sum::<f64>();
        let free: f64 = (0..n).filter(|&i| held[i].is_none()).map(|i| raw[i]).sum();
        let share = |i: usize| held[i].unwrap_or(left * raw[i] / free);
        let past = (0..n).find_map(|i| {
            let c = share(i);
            match held[i] {
                None if c > high => Some((i, high)),
                None if c < low => Some((i, low)),
                _ => None,
            }
        });
        match past {
            Some((i, bound)) if free > 0.0 => held[i] = Some(bound),
            _ => return (0..n).map(share).collect(),
        }
    }
}

/// A price on the board: one decimal place.
fn tenth(price: f64) -> f64 {
    (price * 10.0).round() / 10.0
}

/// The win prices of `chances`: the pool paid back over each chance, on the board's tenths
/// between [`MIN_WIN`] and [`MAX_WIN`].
pub(crate) fn win_prices(chances: &[f64]) -> Vec<f64> {
    chances
        .iter()
        .map(|c| tenth(PAYOUT_RATE / c).clamp(MIN_WIN, MAX_WIN))
        .collect()
}

/// How many places a place bet pays on in a field of `starters`: the first three with
/// seven starters or more, the first two with four to six, the winner alone below.
pub(crate) fn places_paid(starters: usize) -> usize {
    match starters {
        7.. => 3,
        4..=6 => 2,
        _ => 1,
    }
}

/// The place prices that go with a board of `win` prices: each runner's chance of
/// finishing in the places paid, from the chances the win prices give (each in proportion
/// to the inverse of its price, as the win pool's stakes are), each finishing place won as
/// a race among those left (Harville's rule), and the place pool paid back over it; on the
/// board's tenths, never below evens nor above the runner's win price.
pub(crate) fn place_prices(win: &[f64]) -> Vec<f64> {
    let implied: Vec<f64> = win.iter().map(|w| 1.0 / w).collect();
    let total: f64 = implied.iter().sum();
    let chances: Vec<f64> = implied.iter().map(|c| c / total).collect();
    place_chances(&chances, places_paid(win.len()))
        .iter()
        .zip(win)
        .map(|(p, &w)| tenth(PAYOUT_RATE / p).clamp(1.0, w))
        .collect()
}

/// Each runner's chance of finishing in the first `places` (at most three), given its
/// chance of winning: the winner drawn by `chances`, each next place by the chances of
/// those left.
fn place_chances(chances: &[f64], places: usize) -> Vec<f64> {
    let n = chances.len();
    let mut placed = chances.to_vec();
    if places < 2 {
        return placed;
    }
    for first in 0..n {
        let after_first = 1.0 - chances[first];
        if after_first <= 0.0 {
            continue;
        }
        for second in (0..n).filter(|&s| s != first) {
            let p2 = chances[first] * chances[second] / after_first;
            placed[second] += p2;
            if places < 3 {
                continue;
            }
            let after_second = after_first - chances[second];
            if after_second <= 0.0 {
                continue;
            }
            for third in (0..n).filter(|&t| t != first && t != second) {
                placed[third] += p2 * chances[third] / after_second;
            }
        }
    }
    placed
}

/// Whether a shown price is far enough from the market's that the board shows the new one.
fn off(shown: f64, market: f64) -> bool {
    (shown - market).abs() >= 0.1 - 1e-9 && (shown / market - 1.0).abs() > TOLERANCE
}

/// Moves a board of `(win, place)` prices toward the market's `win` prices after the
/// money moved on the runners of `moved`: each of those takes its market price, as does
/// any other runner whose shown price is off its market price by more than a few percent;
/// then the place prices that go with the new win prices, taken by the runners of `moved`
/// and any other whose place price is that far off. Returns the runners whose prices
/// changed, in order.
pub(crate) fn reprice(board: &mut [(f64, f64)], market: &[f64], moved: &[usize]) -> Vec<usize> {
    let mut win: Vec<f64> = board.iter().map(|&(w, _)| w).collect();
    for (i, w) in win.iter_mut().enumerate() {
        if moved.contains(&i) || off(*w, market[i]) {
            *w = market[i];
        }
    }
    let place = place_prices(&win);
    let mut changed = Vec::new();
    for (i, shown) in board.iter_mut().enumerate() {
        let place = if moved.contains(&i) || shown.0 != win[i] || off(shown.1, place[i]) {
            place[i]
        } else {
            shown.1
        };
        if (win[i], place) != *shown {
            *shown = (win[i], place);
            changed.push(i);
        }
    }
    changed
}

/// The win book of `win` prices in percent: the sum of their implied chances.
#[cfg(test)]
pub(crate) fn book(win: impl IntoIterator<Item = f64>) -> f64 {
    win.into_iter().map(|w| 100.0 / w).sum()
}
