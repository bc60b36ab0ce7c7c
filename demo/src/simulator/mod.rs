//! The live simulation of one meeting: each race's market moving (the runners' chances
//! drifting, the tote board's win and place prices following them within the pool's book),
//! then its result; `day` adds what happens around the prices (statuses, late scratchings,
//! an abandoned race).

mod day;
mod race;

use std::collections::{BTreeMap, BTreeSet};

use racing_events::{Envelope, Event, OddsUpdated, RaceCard, RaceResult, ResultRunner};
use rand::seq::index;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::draw::{envelope, normal};
use crate::feed::DemoFeed;
use crate::horses::body_weight;
use crate::races::Ground;
use crate::running::{
    calls, finish_time, finishing_order, lbw, placings, running_positions, unplaced, winning_time,
};
use race::LiveRace;

/// Live simulation of today's meeting: drifting win and place odds for each race, then its
/// result, and the race day around them (see [`Simulator::trade`]).
///
/// It starts from what `feed` declared for its `today` and draws everything else from its
/// own seed, so that one seed replays the same afternoon. Races are addressed by index
/// from 0 in race-number order; an index past the last race means the last race.
#[derive(Debug, Clone)]
pub struct Simulator {
    rng: ChaCha8Rng,
    date: String,
    races: Vec<LiveRace>,
}

/// Spread of one move of a runner's chance in log terms: a few percent either way.
const DRIFT: f64 = 0.04;
/// Share of its distance from the opening chance that a runner's chance gives back on
/// each move, so that a demo left running for hours keeps a believable market rather than
/// wandering the whole field out to the limits.
const REVERSION: f64 = 0.02;
/// The most runners the money moves on at once.
const MAX_MOVES: usize = 4;
/// How many times a move that changes no price on the board is drawn again: a small step
/// on a short price stays on the same tenth.
const REDRAWS: usize = 16;

impl Simulator {
    /// Today's races of `feed` (cards minus scratched runners, opening prices from its
    /// `OddsUpdated` events), in race-number order. `seed` drives the drift, the going, the
    /// day's late scratchings and abandoned race, and the results.
    ///
    /// Events are applied in order as the projections would: a card replaces the race's
    /// card and its scratchings, a price replaces that runner's price. A starter with no
    /// price opens as if every starter had the same chance. A day with no cards is a
    /// simulator with no races.
    pub fn new(feed: &DemoFeed, seed: u64) -> Simulator {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // A stream of its own for each date (its digits), apart from the season's (0):
        // the same seed drives every meeting of a demo, and no meeting's event ids may
        // repeat another's, nor the season's.
        let date = feed.today.bytes().filter(u8::is_ascii_digit);
        rng.set_stream(date.fold(0, |n, d| n * 10 + u64::from(d - b'0')));
        // The feed does not publish the going, so the day's weather is the simulator's own.
        let ground = Ground::draw(&mut rng);
        let mut cards: BTreeMap<i64, (RaceCard, BTreeSet<String>)> = BTreeMap::new();
        let mut opening: BTreeMap<(i64, String), (f64, Option<f64>)> = BTreeMap::new();
        for env in &feed.events {
            match &env.event {
                Event::RaceCardDeclared(c) if c.date == feed.today => {
                    cards.insert(c.race_number, (c.clone(), BTreeSet::new()));
                }
                Event::RunnerScratched(s) if s.date == feed.today => {
                    if let Some((card, out)) = cards.get_mut(&s.race_number) {
                        if s.venue.as_deref().is_none_or(|v| v == card.venue) {
                            out.insert(s.horse_no.clone());
                        }
                    }
                }
                Event::OddsUpdated(o) if o.date == feed.today => {
                    for r in &o.odds {
                        if let Some(win) = r.win_odds {
                            opening
                                .insert((o.race_number, r.horse_no.clone()), (win, r.place_odds));
                        }
                    }
                }
                _ => {}
            }
        }
        let mut races: Vec<LiveRace> = cards
            .into_values()
            .map(|(card, out)| LiveRace::new(card, &out, &opening, ground))
            .collect();
        day::plan(&mut rng, &mut races);
        Simulator {
            rng,
            date: feed.today.clone(),
            races,
        }
    }

    /// How many races today has: the bound of the `race` index of every method.
    pub fn races(&self) -> usize {
        self.races.len()
    }

    /// The date of the meeting it runs, `YYYY-MM-DD`: the feed's `today`.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// The next price movement of race `race` (index from 0; past the last race, the last
    /// race): the money moves on 1 to 4 of its starters, their chances drifting a few
    /// percent (pulled gently back toward where they opened), and the board follows: an
    /// `OddsUpdated` envelope for today's date and that race number listing the runners
    /// whose prices changed, each once, in card order, each with its win price and the
    /// place price that goes with it. Those the money moved take their new prices; any
    /// other the move left more than a few percent off its price takes its new one too,
    /// so that the board's win book stays near the pool's (about 121%) however long the
    /// race trades. With a fresh deterministic `event_id` and `occurred_at` = `now`, an
    /// RFC 3339 timestamp that the caller vouches for.
    ///
    /// `None` when today has no races, or the race has no runner left whose price can
    /// move (an `OddsUpdated` must list at least one).
    pub fn tick(&mut self, race: usize, now: &str) -> Option<Envelope> {
        let index = self.index(race)?;
        let live = &mut self.races[index];
        if live.starters.is_empty() {
            return None;
        }
        let count = self
            .rng
            .random_range(1..=MAX_MOVES)
            .min(live.starters.len());
        let mut moved = index::sample(&mut self.rng, live.starters.len(), count).into_vec();
        moved.sort_unstable();
        let mut changed = Vec::new();
        for _ in 0..REDRAWS {
            for &i in &moved {
                let starter = &mut live.starters[i];
                starter.weight = drift(&mut self.rng, starter.weight, starter.opening);
            }
            changed = live.reprice(&moved);
            if !changed.is_empty() {
                break;
            }
        }
        // Still on the same tenths: a runner moved (or, where each of those is held at a
        // limit of the board, another) takes a step of a tenth or two of its price, back
        // toward where it opened, or the other way from a limit.
        let others = (0..live.starters.len()).filter(|i| !moved.contains(i));
        for i in moved.iter().copied().chain(others) {
            let starter = live.starters[i];
            let back = if starter.weight > starter.opening {
                -1.0
            } else {
                1.0
            };
            for way in [back, -back] {
                if !changed.is_empty() {
                    break;
                }
                live.starters[i].weight = starter.weight + way * 0.4 / starter.win;
                changed = live.reprice(&[i]);
            }
            if changed.is_empty() {
                live.starters[i].weight = starter.weight;
            } else {
                break;
            }
        }
        if changed.is_empty() {
            // A field the board cannot price otherwise (a walkover at the shortest price).
            return None;
        }
        let odds = live.priced(&changed);
        let event = Event::OddsUpdated(OddsUpdated {
            date: self.date.clone(),
            venue: Some(live.card.venue.clone()),
            race_number: live.card.race_number,
            odds,
        });
        Some(envelope(&mut self.rng, event, now.to_owned()))
    }

    /// The race's official result from the current prices (index as for `tick`): a
    /// `RaceResultPublished` envelope with every starter placed 1..n in an order drawn
    /// with win chances in proportion to 1/odds, times for the trip and going, and
    /// `win_odds` the final prices; then every runner scratched before the day as withdrawn
    /// (`WV`, with no position, time or price), and every one scratched on the day (`WX`). Venue, race name and distance come from the card,
    /// `occurred_at` is `now`.
    ///
    /// Each call runs the race again from the same prices: the caller decides when a race
    /// is over. `None` when today has no races.
    pub fn result(&mut self, race: usize, now: &str) -> Option<Envelope> {
        let index = self.index(race)?;
        let live = &self.races[index];
        // A runner's log-weight is -ln(odds), so its chance to win goes as 1/odds.
        let strength: Vec<f64> = live.starters.iter().map(|s| -s.win.ln()).collect();
        let order = finishing_order(&mut self.rng, &strength);
        let winner = winning_time(&mut self.rng, &live.race, live.going);
        let lines = placings(&mut self.rng, &order, None, winner, live.race.kind.prize());
        let finish: Vec<(usize, i64)> = lines.iter().map(|p| (p.starter, p.position)).collect();
        let mut calls = running_positions(
            &mut self.rng,
            calls(live.card.distance),
            live.starters.len(),
            &finish,
            None,
        );
        let runners = &live.card.runners;
        let mut finishers = Vec::with_capacity(lines.len());
        for p in lines {
            let starter = live.starters[p.starter];
            let card = &runners[starter.runner];
            finishers.push(ResultRunner {
                position: Some(p.position),
                finish_time: Some(finish_time(p.time)),
                win_odds: Some(starter.win),
                dead_heat: p.dead_heat,
                lbw: Some(lbw(p.time - winner)),
                running_positions: Some(std::mem::take(&mut calls[p.starter])),
                declared_weight: Some(body_weight(&mut self.rng, &card.horse_no)),
                ..unplaced(card)
            });
        }
        let before = live.scratched.iter().map(|&i| (i, "WV"));
        let withdrawn = before
            .chain(live.late.iter().map(|&i| (i, "WX")))
            .map(|(i, code)| ResultRunner {
                status: Some(code.to_owned()),
                ..unplaced(&runners[i])
            });
        let result = RaceResult {
            date: self.date.clone(),
            venue: live.card.venue.clone(),
            race_number: live.card.race_number,
            race_name: live.card.race_name.clone(),
            distance: live.card.distance,
            going: live.going.to_owned(),
            runners: finishers.into_iter().chain(withdrawn).collect(),
            class: Some(live.card.class.clone()),
        };
        let event = Event::RaceResultPublished(result);
        Some(envelope(&mut self.rng, event, now.to_owned()))
    }

    /// The index of race `race`, or of the last race past the end, so always in bounds;
    /// `None` on a day without races.
    fn index(&self, race: usize) -> Option<usize> {
        let last = self.races.len().checked_sub(1)?;
        Some(race.min(last))
    }
}

/// One move of a runner's chance, as a log-weight: a step of a few percent, pulled gently
/// back toward where it opened.
fn drift(rng: &mut ChaCha8Rng, weight: f64, opening: f64) -> f64 {
    weight - REVERSION * (weight - opening) + DRIFT * normal(rng)
}
