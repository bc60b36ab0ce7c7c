//! The market of a race, derived from its prices: each runner's implied probability, the
//! book of the win and place markets, the favourites, and each runner's move since its
//! first price and over the last 5 and 15 minutes of the market's clock, with the biggest
//! shortenings (steamers) and lengthenings (drifters).
//!
//! The market's clock is the latest `occurred_at` of the race's price moves: when the
//! prices were given at their source, so that a replay, a backfill and an answer `as_of`
//! a point all read the same market (a move's `occurred_at` counted as no later than when
//! JetStream stored it: a price is not given after it was published). The moves over 5 and 15 minutes are read against the
//! prices at the start of the clock's minute less 5 and 15 minutes; a runner's price at a
//! moment is the one set by the last move (in log order) given at or before it. What a
//! race's record keeps for that ([`Trail`]) is at most a price a runner a minute of the
//! last 15, however fast its prices move.
//!
//! Figures are rounded as served: probabilities to 4 decimal places, percentages to 2.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A minute, in milliseconds: the moves' windows start on one.
const MINUTE_MS: i64 = 60_000;
/// The longer window of the moves, in milliseconds: what the trail keeps.
const LONG_MS: i64 = 15 * MINUTE_MS;
/// The shorter one.
const SHORT_MS: i64 = 5 * MINUTE_MS;
/// How many steamers and drifters a market names.
pub const MOVERS: usize = 3;

/// A price and the stream sequence of the move that set it.
type Priced = (f64, u64);

/// What a race's odds record keeps of its win prices' past: the first price of each
/// runner, and the prices of the last 15 minutes of the clock, with the price each runner
/// had when they began. Left out of the record while empty.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trail {
    /// The market's clock: the latest `occurred_at` of its moves, in milliseconds since
    /// the epoch.
    pub clock: i64,
    /// Each runner's first win price.
    pub first: BTreeMap<String, Priced>,
    /// Each runner's win price at the start of the clock's minute less 15 minutes, from
    /// the moves before it.
    pub base: BTreeMap<String, Priced>,
    /// The win prices set by moves since: `(the first minute's start at or after its
    /// occurred_at, in milliseconds, seq, horse, price)`, in log order; of a runner's
    /// moves, only those no later move was given before.
    pub recent: Vec<(i64, u64, String, f64)>,
}

/// The start of the minute `at` is in (milliseconds).
fn minute_of(at: i64) -> i64 {
    at.div_euclid(MINUTE_MS) * MINUTE_MS
}

/// The first start of a minute at or after `at`: the first window start that a move
/// given at `at` is before.
fn next_minute(at: i64) -> i64 {
    minute_of(at + MINUTE_MS - 1)
}

impl Trail {
    /// Whether no move reached it.
    pub fn is_empty(&self) -> bool {
        self.clock == 0 && self.first.is_empty() && self.recent.is_empty()
    }

    /// Takes in the win prices of one move at `seq`, given at `at` (milliseconds).
    pub(crate) fn apply(&mut self, seq: u64, at: i64, wins: impl Iterator<Item = (String, f64)>) {
        let seen = next_minute(at);
        for (horse, price) in wins {
            // (Each runner's name copied once, when it is first priced: a move of every
            // runner copied each twice, and this is most of the log's events.)
            if !self.first.contains_key(&horse) {
                self.first.insert(horse.clone(), (price, seq));
            }
            // A move of the runner's that no window could see before this one is
            // replaced by it. (The minute first: most of the moves kept are of minutes
            // before, and need no name compared.)
            self.recent.retain(|(m, _, h, _)| *m < seen || *h != horse);
            self.recent.push((seen, seq, horse, price));
        }
        self.clock = self.clock.max(at);
        self.trim();
    }

    /// The start of the long window: the clock's minute less 15 minutes.
    fn long_start(&self) -> i64 {
        minute_of(self.clock) - LONG_MS
    }

    /// Folds the moves that fell out of the long window into `base`.
    fn trim(&mut self) {
        let start = self.long_start();
        if self.recent.iter().all(|(at, ..)| *at > start) {
            return;
        }
        let (old, recent): (Vec<_>, Vec<_>) = std::mem::take(&mut self.recent)
            .into_iter()
            .partition(|(at, ..)| *at <= start);
        for (_, seq, horse, price) in old {
            set_later(&mut self.base, horse, (price, seq));
        }
        self.recent = recent;
    }

    /// Each runner's win price at `at` (milliseconds): the last set by a move given at or
    /// before it; a runner with none then is left out.
    fn at(&self, at: i64) -> ByRunner<'_, Priced> {
        let mut prices = ByRunner(self.base.iter().map(|(h, &p)| (h.as_str(), p)).collect());
        for (given, seq, horse, price) in &self.recent {
            if *given <= at {
                prices.set_later(horse, (*price, *seq));
            }
        }
        prices
    }

    /// Two races' trails as one, as their prices are merged (the later move wins): the
    /// odds given for a venue and those given for every venue.
    pub(crate) fn merged(&self, other: &Trail) -> Trail {
        let mut out = Trail {
            clock: self.clock.max(other.clock),
            first: self.first.clone(),
            base: self.base.clone(),
            recent: Vec::new(),
        };
        for (horse, &(price, seq)) in &other.first {
            let slot = out.first.entry(horse.clone()).or_insert((price, seq));
            if seq < slot.1 {
                *slot = (price, seq);
            }
        }
        for (horse, &priced) in &other.base {
            set_later(&mut out.base, horse.clone(), priced);
        }
        let mut recent: Vec<_> = self.recent.iter().chain(&other.recent).cloned().collect();
        recent.sort_by_key(|&(_, seq, ..)| seq);
        for (seen, seq, horse, price) in recent {
            out.recent.retain(|(m, _, h, _)| *h != horse || *m < seen);
            out.recent.push((seen, seq, horse, price));
        }
        out.trim();
        out
    }
}

/// Values by runner, in horse-number order, the names borrowed: what a render of a race's
/// documents works out of its trail (each runner's prices 15 and 5 minutes back, its
/// moves) and reads a few times.
#[derive(Debug)]
pub(crate) struct ByRunner<'a, T>(Vec<(&'a str, T)>);

impl<'a, T> ByRunner<'a, T> {
    /// `horse`'s value, if it has one.
    pub(crate) fn get(&self, horse: &str) -> Option<&T> {
        let i = self.0.binary_search_by(|(h, _)| (*h).cmp(horse)).ok()?;
        self.0.get(i).map(|(_, v)| v)
    }

    /// Every runner's value, in horse-number order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'a str, &T)> {
        self.0.iter().map(|(h, v)| (*h, v))
    }
}

impl<'a> ByRunner<'a, Priced> {
    /// Sets `horse`'s price unless the one it has was set later.
    fn set_later(&mut self, horse: &'a str, priced: Priced) {
        match self.0.binary_search_by(|(h, _)| (*h).cmp(horse)) {
            Ok(i) => {
                if let Some((_, slot)) = self.0.get_mut(i) {
                    if slot.1 <= priced.1 {
                        *slot = priced;
                    }
                }
            }
            Err(i) => self.0.insert(i, (horse, priced)),
        }
    }
}

#[cfg(test)]
impl<T> std::ops::Index<&str> for ByRunner<'_, T> {
    type Output = T;

    fn index(&self, horse: &str) -> &T {
        self.get(horse).expect("a runner with a value")
    }
}

/// Sets `horse`'s price unless the one it has was set later.
fn set_later(prices: &mut BTreeMap<String, Priced>, horse: String, priced: Priced) {
    match prices.get_mut(&horse) {
        Some(slot) if slot.1 > priced.1 => {}
        Some(slot) => *slot = priced,
        None => {
            prices.insert(horse, priced);
        }
    }
}

/// Milliseconds since the epoch of an RFC 3339 moment (validated before it reaches a
/// fold); `None` where it is not one.
pub(crate) fn millis(rfc3339: &str) -> Option<i64> {
    rfc3339
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// The book of a race's market after a move: what the odds document's `market`, every
/// move of the odds history and every `odds` frame carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Book {
    /// The win market's book: the sum of the implied probabilities (1 / win odds) of every
    /// runner with a win price that is not scratched, in percent, 2 decimal places. Over
    /// 100 by the operator's margin. Left out where no such runner has a win price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub win_book_pct: Option<f64>,
    /// The place market's book: the same sum over place prices. A place bet pays on any
    /// of the first three (two with fewer than seven starters), so a fair place book is
    /// near 300 (200); left out where no runner not scratched has a place price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub place_book_pct: Option<f64>,
    /// The runners not scratched with the shortest win price, joint favourites all
    /// listed, in horse number order; empty where no such runner has a win price.
    pub favourites: Vec<String>,
}

/// The book of `wins` and `places` (the current price of each runner that can still run).
pub(crate) fn book<'a>(
    wins: impl Iterator<Item = (&'a String, f64)> + Clone,
    places: impl Iterator<Item = f64>,
) -> Book {
    let shortest = wins.clone().map(|(_, p)| p).reduce(f64::min);
    let mut favourites: Vec<String> = match shortest {
        Some(short) => wins
            .clone()
            .filter(|&(_, p)| p == short)
            .map(|(h, _)| h.clone())
            .collect(),
        None => Vec::new(),
    };
    favourites.sort_unstable();
    Book {
        win_book_pct: book_pct(wins.map(|(_, p)| p)),
        place_book_pct: book_pct(places),
        favourites,
    }
}

/// The sum of `1 / price` over `prices` in percent, 2 decimal places; `None` for none.
fn book_pct(prices: impl Iterator<Item = f64>) -> Option<f64> {
    let mut any = false;
    let sum: f64 = prices
        .inspect(|_| any = true)
        .filter(|p| *p > 0.0)
        .map(|p| 1.0 / p)
        .sum();
    any.then(|| round(sum * 100.0, 2))
}

/// `x` rounded to `places` decimal places.
pub fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

/// The implied probability of decimal odds `price`: `1 / price`, 4 decimal places.
pub fn implied(price: f64) -> f64 {
    round(1.0 / price, 4)
}

/// The move from `then` to `now` in percent of `then`, 2 decimal places: below 0 a
/// shortening, above 0 a lengthening.
pub fn move_pct(then: f64, now: f64) -> f64 {
    round((now / then - 1.0) * 100.0, 2)
}

/// A runner's win price then and now: its moves as the odds document serves them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Moves {
    pub(crate) first: Option<f64>,
    pub(crate) since_first: Option<f64>,
    pub(crate) last_15m: Option<f64>,
    pub(crate) last_5m: Option<f64>,
}

/// Each runner's moves, from `trail` and its current win prices `now`.
pub(crate) fn moves<'a>(
    trail: &Trail,
    now: &'a BTreeMap<String, (f64, u64)>,
) -> ByRunner<'a, Moves> {
    let long = trail.at(trail.long_start());
    let short = trail.at(minute_of(trail.clock) - SHORT_MS);
    let moves = now
        .iter()
        .map(|(horse, &(price, _))| {
            let horse = horse.as_str();
            let first = trail.first.get(horse).map(|&(p, _)| p);
            let from = |then: &ByRunner<'_, Priced>| then.get(horse).map(|&(p, _)| p);
            let m = Moves {
                first,
                since_first: first.map(|f| move_pct(f, price)),
                last_15m: from(&long).map(|t| move_pct(t, price)),
                last_5m: from(&short).map(|t| move_pct(t, price)),
            };
            (horse, m)
        })
        .collect();
    // In horse-number order, as `now` is.
    ByRunner(moves)
}

/// The steamers and drifters of `moves` (each runner's, in horse number order: those of
/// the runners that can still run) over the last 15 minutes: the runners whose win price
/// shortened (lengthened) most, in percent, at most [`MOVERS`] each, ties in horse number
/// order.
pub(crate) fn movers<'a>(
    moves: impl Iterator<Item = (&'a str, &'a Moves)>,
) -> (Vec<String>, Vec<String>) {
    let moved: Vec<(&str, f64)> = moves.filter_map(|(h, m)| Some((h, m.last_15m?))).collect();
    let pick = |shorter: bool| {
        let mut those: Vec<(&str, f64)> = moved
            .iter()
            .copied()
            .filter(|&(_, pct)| if shorter { pct < 0.0 } else { pct > 0.0 })
            .collect();
        those.sort_by(|a, b| a.1.abs().total_cmp(&b.1.abs()).reverse().then(a.0.cmp(b.0)));
        those
            .into_iter()
            .take(MOVERS)
            .map(|(h, _)| h.to_owned())
            .collect()
    };
    (pick(true), pick(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trail(moves: &[(i64, u64, &str, f64)]) -> Trail {
        let mut t = Trail::default();
        for &(at, seq, horse, price) in moves {
            t.apply(seq, at, std::iter::once((horse.to_owned(), price)));
        }
        t
    }

    #[test]
    fn a_price_then_is_the_last_given_at_or_before_it() {
        let min = 60_000;
        let t = trail(&[
            (0, 1, "A", 5.0),
            (4 * min, 2, "A", 4.0),
            (12 * min, 3, "A", 3.0),
            (20 * min, 4, "A", 2.5),
        ]);
        // The clock is 20 minutes: 15 minutes before is 5, when A stood at 4.0; 5 minutes
        // before is 15, when it stood at 3.0.
        let now = BTreeMap::from([("A".to_owned(), (2.5, 4))]);
        let m = &moves(&t, &now)["A"];
        assert_eq!(m.first, Some(5.0));
        assert_eq!(m.since_first, Some(-50.0));
        assert_eq!(m.last_15m, Some(-37.5));
        assert_eq!(m.last_5m, Some(move_pct(3.0, 2.5)));
        // The move at 0 fell out of the window into the base.
        assert!(t.recent.iter().all(|(at, ..)| *at > 5 * min));
    }

    #[test]
    fn windows_start_on_the_minute_and_a_fast_market_keeps_a_price_a_minute() {
        let mut t = Trail::default();
        // A price every second for twenty minutes: the trail keeps one a minute.
        for s in 0..1_200u64 {
            let price = 2.0 + (s % 7) as f64 / 10.0;
            t.apply(
                s + 1,
                s as i64 * 1_000,
                std::iter::once(("A".to_owned(), price)),
            );
        }
        assert!(t.recent.len() <= 16, "{} kept", t.recent.len());
        // The clock is 19:59; windows start at 4:00 and 14:00, whose prices were set at
        // 4:00 (second 240) and 14:00 (second 840).
        let now = BTreeMap::from([("A".to_owned(), (2.0 + (1_199 % 7) as f64 / 10.0, 1_200))]);
        let m = &moves(&t, &now)["A"];
        let price = |s: u64| 2.0 + (s % 7) as f64 / 10.0;
        assert_eq!(m.last_15m, Some(move_pct(price(240), now["A"].0)));
        assert_eq!(m.last_5m, Some(move_pct(price(840), now["A"].0)));
        assert_eq!(t.clock, 1_199 * 1_000);
    }

    #[test]
    fn a_runner_priced_inside_the_window_has_no_move_over_it() {
        let t = trail(&[(0, 1, "A", 5.0), (10 * 60_000, 2, "B", 3.0)]);
        let now = BTreeMap::from([("A".to_owned(), (5.0, 1)), ("B".to_owned(), (3.0, 2))]);
        let m = moves(&t, &now);
        assert_eq!((m["B"].last_15m, m["B"].last_5m), (None, None));
        assert_eq!((m["A"].last_15m, m["A"].last_5m), (None, Some(0.0)));
    }

    #[test]
    fn the_book_sums_implied_probabilities_and_names_joint_favourites() {
        let (a, b, c) = ("A".to_owned(), "B".to_owned(), "C".to_owned());
        let wins = [(&a, 2.0), (&b, 4.0), (&c, 2.0)];
        let b = book(wins.iter().copied(), [1.25, 2.5].into_iter());
        assert_eq!(b.win_book_pct, Some(125.0));
        assert_eq!(b.place_book_pct, Some(120.0));
        assert_eq!(b.favourites, ["A", "C"]);
        let none = book(std::iter::empty(), std::iter::empty());
        assert_eq!((none.win_book_pct, none.favourites.len()), (None, 0));
    }

    #[test]
    fn merged_trails_keep_the_earliest_first_and_the_latest_prices() {
        let min = 60_000;
        let a = trail(&[(0, 1, "A", 5.0), (2 * min, 3, "A", 4.0)]);
        let b = trail(&[(min, 2, "A", 6.0), (min, 2, "B", 9.0)]);
        let m = a.merged(&b);
        assert_eq!(m.first["A"], (5.0, 1));
        assert_eq!(m.first["B"], (9.0, 2));
        assert_eq!(m.at(2 * min)["A"], (4.0, 3));
        assert_eq!(m.at(min)["A"], (6.0, 2));
        assert_eq!(m.at(0)["A"], (5.0, 1));
    }
}
