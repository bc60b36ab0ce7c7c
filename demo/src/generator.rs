//! The season's generator: fields picked from the horses, cards, scratchings, opening
//! odds, and the price moves and results of past meetings, as feed events in publishing
//! order.

use std::cmp::Reverse;

use jiff::civil::Date;
use jiff::Timestamp;
use racing_events::{
    CardRunner, Envelope, Event, HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceStatus,
    RaceStatusChanged, ResultRunner, RunnerOdds, RunnerScratched,
};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::calendar::{hong_kong, season_of, Incident, MeetingPlan};
use crate::draw::{envelope, normal, weighted};
use crate::horses::{body_weight, Horse, JOCKEYS};
use crate::market::{self, Times};
use crate::races::{Kind, RacePlan, Venue};
use crate::running::{
    calls, finish_time, finishing_order, lbw, placings, running_positions, unplaced, winning_time,
    NON_FINISHES,
};
use crate::tote;

/// Handicap weights in pounds, as in HK: the top-rated runner carries the most.
const TOP_WEIGHT: i64 = 133;
const BOTTOM_WEIGHT: i64 = 113;

#[derive(Debug)]
struct Runner {
    horse: usize,
    /// Index into `JOCKEYS`.
    jockey: usize,
    draw: i64,
    weight: i64,
}

#[derive(Debug)]
struct Race {
    plan: RacePlan,
    runners: Vec<Runner>,
}

/// One horse's part in a race, as its career record counts it.
struct Start {
    horse: usize,
    position: Option<i64>,
    stakes: i64,
    field: usize,
}

/// The one RNG and the state that the season builds up: horses' records and the events.
pub(crate) struct Generator {
    pub(crate) rng: ChaCha8Rng,
    /// Past races' price moves draw from a stream of their own, so that the rest of the
    /// season is what it was before they were recorded.
    pub(crate) market: ChaCha8Rng,
    pub(crate) horses: Vec<Horse>,
    pub(crate) events: Vec<Envelope>,
    /// The moment the events are published: none is dated after it (see [`Generator::at`]).
    pub(crate) now: Timestamp,
    /// The season the profiles count as the current one (see [`season_of`]): today's.
    pub(crate) season: i16,
}

impl Generator {
    fn push(&mut self, event: Event, occurred_at: String) {
        let envelope = envelope(&mut self.rng, event, occurred_at);
        self.events.push(envelope);
    }

    pub(crate) fn publish_profiles(&mut self, today: Date) {
        let profiles: Vec<HorseProfile> = self.horses.iter().map(Horse::profile).collect();
        for profile in profiles {
            let at = self.at(today, 7 * 60, 0);
            self.push(Event::HorseProfileUpdated(Box::new(profile)), at);
        }
    }

    pub(crate) fn past_meeting(
        &mut self,
        index: usize,
        plan: &MeetingPlan,
        incidents: &mut impl Iterator<Item = Incident>,
    ) {
        let races = self.declare(index, plan);
        let count = usize::from(self.rng.random_bool(0.25));
        let scratched = self.scratch(plan, &races, count);
        for race in &races {
            let out: Vec<usize> = scratched_from(&scratched, race);
            let incident = incidents.next().unwrap_or_default();
            let (result, starts) = self.run(plan, race, &out, incident);
            self.record(&starts, season_of(plan.date) == self.season);
            let post = plan.post_time(race.plan.number);
            let times = Times {
                opening: post - market::OPENS_BEFORE_OFF,
                post,
            };
            for (minutes, odds) in market::moves(&mut self.market, &result, &times) {
                let at = self.at(plan.date, minutes, 0);
                let moved = envelope(&mut self.market, Event::OddsUpdated(odds), at);
                self.events.push(moved);
            }
            let seconds = self.rng.random_range(0..60);
            let at = self.at(plan.date, plan.post_time(race.plan.number) + 3, seconds);
            self.push(Event::RaceResultPublished(result), at);
        }
    }

    /// Declares a meeting to be run live (today's, or one the calendar declares after
    /// it): cards, a scratching or two, and each race opened for betting (`open`) with its
    /// opening win and place odds.
    pub(crate) fn live_meeting(&mut self, index: usize, plan: &MeetingPlan) {
        let races = self.declare(index, plan);
        let count = self.rng.random_range(1..=2);
        let scratched = self.scratch(plan, &races, count);
        for race in &races {
            let out = scratched_from(&scratched, race);
            let starters: Vec<&Runner> = race
                .runners
                .iter()
                .filter(|r| !out.contains(&r.horse))
                .collect();
            let (_, market) = self.form(plan, &race.plan, &starters);
            let win = tote::win_prices(&tote::chances(&market));
            let place = tote::place_prices(&win);
            let odds = starters
                .iter()
                .zip(win.into_iter().zip(place))
                .map(|(r, (win, place))| RunnerOdds {
                    horse_no: self.horses[r.horse].no.clone(),
                    win_odds: Some(win),
                    place_odds: Some(place),
                })
                .collect();
            let venue = Some(plan.venue.name().to_owned());
            let opened = self.at(plan.date, 9 * 60 + race.plan.number, 0);
            let open = Event::RaceStatusChanged(RaceStatusChanged {
                date: plan.date.to_string(),
                venue: venue.clone(),
                race_number: race.plan.number,
                status: RaceStatus::Open.as_str().to_owned(),
                reason: None,
            });
            self.push(open, opened.clone());
            let event = Event::OddsUpdated(OddsUpdated {
                date: plan.date.to_string(),
                venue,
                race_number: race.plan.number,
                odds,
            });
            self.push(event, opened);
        }
    }

    /// Picks every race's field and publishes the cards, two days ahead as HK declares.
    fn declare(&mut self, meeting: usize, plan: &MeetingPlan) -> Vec<Race> {
        let mut taken = vec![false; self.horses.len()];
        let mut races = Vec::with_capacity(plan.races.len());
        for race in &plan.races {
            let mut race = race.clone();
            let newcomers = self
                .horses
                .iter()
                .zip(&taken)
                .filter(|(h, t)| !**t && h.available(meeting) && h.griffin())
                .count();
            if race.kind == Kind::Griffin && newcomers < 8 {
                race.kind = Kind::Handicap(5);
            }
            let size = field_size(&mut self.rng, plan.venue, race.kind);
            let field = self.pick_field(meeting, &taken, race.kind, size);
            for &h in &field {
                taken[h] = true;
                self.horses[h].last_meeting = Some(meeting);
            }
            let race = Race {
                runners: self.saddle(race.kind, field),
                plan: race,
            };
            let card = self.card(plan, &race);
            let at = self.at(days_before(plan.date, 2), 10 * 60 + 30, race.plan.number);
            self.push(Event::RaceCardDeclared(card), at);
            races.push(race);
        }
        races
    }

    /// The best-suited free horses, rested ones first, in a random order within each tier.
    fn pick_field(
        &mut self,
        meeting: usize,
        taken: &[bool],
        kind: Kind,
        size: usize,
    ) -> Vec<usize> {
        let mut ranked: Vec<(u8, u32, usize)> = Vec::with_capacity(self.horses.len());
        for (i, horse) in self.horses.iter().enumerate() {
            if !taken[i] && horse.available(meeting) {
                let tier = horse.fit(kind) * 2 + u8::from(!horse.rested(meeting));
                ranked.push((tier, self.rng.random(), i));
            }
        }
        ranked.sort_unstable();
        ranked.into_iter().take(size).map(|(_, _, i)| i).collect()
    }

    /// Gives each horse of a field its jockey, draw and weight, top weight first as a
    /// card lists them.
    fn saddle(&mut self, kind: Kind, mut field: Vec<usize>) -> Vec<Runner> {
        field.sort_by_key(|&h| Reverse(self.horses[h].rating));
        let top = field.first().map_or(0, |&h| self.horses[h].rating);
        let mut draws: Vec<i64> = (1..=field.len() as i64).collect();
        draws.shuffle(&mut self.rng);
        let jockeys = self.book_jockeys(&field);
        field
            .iter()
            .zip(draws)
            .zip(jockeys)
            .map(|((&horse, draw), jockey)| Runner {
                horse,
                jockey,
                draw,
                weight: weight(kind, &self.horses[horse], top),
            })
            .collect()
    }

    /// Distinct jockeys for a field, the busiest riding the most fancied horses, as HK
    /// stables book the top riders for their best chances.
    fn book_jockeys(&mut self, field: &[usize]) -> Vec<usize> {
        // Weighted sampling without replacement: the largest u^(1/w) keys win.
        let mut keyed: Vec<(f64, usize)> = JOCKEYS
            .iter()
            .enumerate()
            .map(|(j, &(_, w))| (self.rng.random::<f64>().powf(1.0 / f64::from(w)), j))
            .collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut booked: Vec<usize> = keyed.iter().take(field.len()).map(|&(_, j)| j).collect();
        booked.sort_by_key(|&j| Reverse(JOCKEYS[j].1));
        let mut fancied: Vec<(f64, usize)> = field
            .iter()
            .enumerate()
            .map(|(i, &h)| {
                let horse = &self.horses[h];
                let view = horse.rating as f64 * 0.04 + horse.edge + normal(&mut self.rng);
                (view, i)
            })
            .collect();
        fancied.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut jockeys = vec![0; field.len()];
        for ((_, i), j) in fancied.into_iter().zip(booked) {
            jockeys[i] = j;
        }
        jockeys
    }

    fn card(&self, plan: &MeetingPlan, race: &Race) -> RaceCard {
        RaceCard {
            date: plan.date.to_string(),
            venue: plan.venue.name().to_owned(),
            race_number: race.plan.number,
            race_name: race.plan.name(),
            distance: race.plan.distance,
            class: race.plan.kind.class(),
            runners: race.runners.iter().map(|r| self.card_runner(r)).collect(),
        }
    }

    /// Withdraws `count` declared runners the day before the meeting.
    fn scratch(&mut self, plan: &MeetingPlan, races: &[Race], count: usize) -> Vec<(i64, usize)> {
        let date = plan.date;
        let mut scratched = Vec::new();
        while scratched.len() < count {
            let race = &races[self.rng.random_range(0..races.len())];
            let runner = &race.runners[self.rng.random_range(0..race.runners.len())];
            let pick = (race.plan.number, runner.horse);
            if scratched.contains(&pick) {
                continue;
            }
            scratched.push(pick);
            let event = Event::RunnerScratched(RunnerScratched {
                date: date.to_string(),
                venue: Some(plan.venue.name().to_owned()),
                race_number: race.plan.number,
                horse_no: self.horses[runner.horse].no.clone(),
            });
            let minutes = self.rng.random_range(9 * 60..18 * 60);
            let seconds = self.rng.random_range(0..60);
            let at = self.at(days_before(date, 1), minutes, seconds);
            self.push(event, at);
        }
        scratched
    }

    /// Each starter's true chance for the day and the market's view of it, as log-weights.
    fn form(
        &mut self,
        plan: &MeetingPlan,
        race: &RacePlan,
        starters: &[&Runner],
    ) -> (Vec<f64>, Vec<f64>) {
        // Handicap weights cancel most of the gap in ratings; set weights cancel none.
        let per_point = match race.kind {
            Kind::Handicap(_) => 0.03,
            Kind::Group(_) | Kind::Griffin => 0.08,
        };
        // A wide draw costs ground on Happy Valley's tight turns and in Sha Tin sprints.
        let per_draw = if plan.venue == Venue::HappyValley || race.distance <= 1400 {
            0.03
        } else {
            0.01
        };
        let mean = starters
            .iter()
            .map(|r| self.horses[r.horse].rating as f64)
            .sum::<f64>()
            / starters.len() as f64;
        starters
            .iter()
            .map(|r| {
                let horse = &self.horses[r.horse];
                let base =
                    per_point * (horse.rating as f64 - mean) + horse.edge + jockey_skill(r.jockey)
                        - per_draw * (r.draw - 1) as f64;
                let truth = base + 0.4 * normal(&mut self.rng);
                let market = base + 0.3 * normal(&mut self.rng);
                (truth, market)
            })
            .unzip()
    }

    /// Runs a race: who was withdrawn, the finishing order, times, prices and prize money.
    fn run(
        &mut self,
        plan: &MeetingPlan,
        race: &Race,
        scratched: &[usize],
        incident: Incident,
    ) -> (RaceResult, Vec<Start>) {
        let (mut starters, gone): (Vec<&Runner>, Vec<&Runner>) = race
            .runners
            .iter()
            .partition(|r| !scratched.contains(&r.horse));
        // A runner scratched beforehand shows as a vet's withdrawal, a late one as WX.
        let mut withdrawn: Vec<(&Runner, &str)> = gone.into_iter().map(|r| (r, "WV")).collect();
        if incident.late_withdrawal && starters.len() > 6 {
            let i = self.rng.random_range(0..starters.len());
            withdrawn.push((starters.remove(i), "WX"));
        }
        let (truth, market) = self.form(plan, &race.plan, &starters);
        let odds = tote::win_prices(&tote::chances(&market));
        let mut order = finishing_order(&mut self.rng, &truth);
        let fallen = incident
            .non_finisher
            .then(|| order.remove(self.rng.random_range(1..order.len())));
        let tie = incident
            .dead_heat
            .then(|| self.rng.random_range(0..(order.len() - 1).min(3)));
        let winner = winning_time(&mut self.rng, &race.plan, plan.going(&race.plan));
        let placings = placings(&mut self.rng, &order, tie, winner, race.plan.kind.prize());
        let finish: Vec<(usize, i64)> = placings.iter().map(|p| (p.starter, p.position)).collect();
        let mut calls = running_positions(
            &mut self.rng,
            calls(race.plan.distance),
            starters.len(),
            &finish,
            fallen,
        );
        let mut runners = Vec::with_capacity(race.runners.len());
        let mut starts = Vec::with_capacity(starters.len());
        for p in placings {
            let ran = self.ran(starters[p.starter]);
            runners.push(ResultRunner {
                position: Some(p.position),
                finish_time: Some(finish_time(p.time)),
                win_odds: Some(odds[p.starter]),
                dead_heat: p.dead_heat,
                lbw: Some(lbw(p.time - winner)),
                running_positions: Some(std::mem::take(&mut calls[p.starter])),
                ..ran
            });
            starts.push(Start {
                horse: starters[p.starter].horse,
                position: Some(p.position),
                stakes: p.stakes,
                field: starters.len(),
            });
        }
        if let Some(s) = fallen {
            let ran = self.ran(starters[s]);
            runners.push(ResultRunner {
                win_odds: Some(odds[s]),
                status: Some(weighted(&mut self.rng, NON_FINISHES).to_owned()),
                running_positions: Some(std::mem::take(&mut calls[s])),
                ..ran
            });
            starts.push(Start {
                horse: starters[s].horse,
                position: None,
                stakes: 0,
                field: starters.len(),
            });
        }
        for (runner, code) in withdrawn {
            runners.push(ResultRunner {
                status: Some(code.to_owned()),
                ..self.result_runner(runner)
            });
        }
        let result = RaceResult {
            date: plan.date.to_string(),
            venue: plan.venue.name().to_owned(),
            race_number: race.plan.number,
            race_name: race.plan.name(),
            distance: race.plan.distance,
            going: plan.going(&race.plan).to_owned(),
            runners,
            class: Some(race.plan.kind.class()),
        };
        (result, starts)
    }

    /// A runner as the card declares it.
    fn card_runner(&self, runner: &Runner) -> CardRunner {
        let horse = &self.horses[runner.horse];
        CardRunner {
            horse_no: horse.no.clone(),
            horse_name: horse.name.clone(),
            jockey: JOCKEYS[runner.jockey].0.to_owned(),
            trainer: horse.trainer.to_owned(),
            draw: runner.draw,
            weight: runner.weight,
        }
    }

    /// A result line with no placing, time or price yet.
    fn result_runner(&self, runner: &Runner) -> ResultRunner {
        unplaced(&self.card_runner(runner))
    }

    /// The result line of a starter: as `result_runner`, with the body weight it was
    /// declared at before the race.
    fn ran(&mut self, runner: &Runner) -> ResultRunner {
        let declared = body_weight(&mut self.rng, &self.horses[runner.horse].no);
        ResultRunner {
            declared_weight: Some(declared),
            ..self.result_runner(runner)
        }
    }

    /// Adds a race to the runners' records (its prize money to the season's too when it
    /// is run `this_season`), and moves ratings as a handicapper would.
    fn record(&mut self, starts: &[Start], this_season: bool) {
        for start in starts {
            let horse = &mut self.horses[start.horse];
            horse.starts += 1;
            horse.stakes += start.stakes;
            if this_season {
                horse.season_stakes += start.stakes;
            }
            match start.position {
                Some(1) => {
                    horse.wins += 1;
                    horse.rating += 6;
                }
                Some(2) => {
                    horse.seconds += 1;
                    horse.rating += 2;
                }
                Some(3) => {
                    horse.thirds += 1;
                    horse.rating += 2;
                }
                Some(p) if p as usize > start.field / 2 => horse.rating -= 2,
                _ => {}
            }
            horse.rating = horse.rating.clamp(0, 140);
            if !this_season {
                horse.start_rating = horse.rating;
            }
        }
    }
}

fn scratched_from(scratched: &[(i64, usize)], race: &Race) -> Vec<usize> {
    scratched
        .iter()
        .filter(|(number, _)| *number == race.plan.number)
        .map(|&(_, horse)| horse)
        .collect()
}

fn field_size(rng: &mut ChaCha8Rng, venue: Venue, kind: Kind) -> usize {
    let size = match kind {
        Kind::Handicap(_) => weighted(
            rng,
            &[
                (14, 50),
                (13, 10),
                (12, 18),
                (11, 8),
                (10, 7),
                (9, 4),
                (8, 3),
            ],
        ),
        Kind::Group(_) => rng.random_range(8..=14),
        Kind::Griffin => rng.random_range(8..=12),
    };
    size.min(venue.max_field())
}

fn weight(kind: Kind, horse: &Horse, top_rating: i64) -> i64 {
    let allowance = if horse.sex == "Mare" { 4 } else { 0 };
    match kind {
        Kind::Handicap(_) => {
            (TOP_WEIGHT - (top_rating - horse.rating)).clamp(BOTTOM_WEIGHT, TOP_WEIGHT)
        }
        Kind::Group(_) => 126 - allowance,
        Kind::Griffin => 123 - allowance,
    }
}

fn jockey_skill(jockey: usize) -> f64 {
    (f64::from(JOCKEYS[jockey].1) - 5.0) * 0.05
}

impl Generator {
    /// The RFC 3339 time of a fact planned for `minutes` and `seconds` after midnight of
    /// `date` in Hong Kong, or `now` (to the second) where that is later: a fact is
    /// published when it happens, so one planned for later happens as it is published.
    /// (Today's races open from 09:01, and a demo started at 01:00 publishes them then.)
    fn at(&self, date: Date, minutes: i64, seconds: i64) -> String {
        let planned = hk_time(date, minutes, seconds);
        match planned.parse::<Timestamp>() {
            Ok(at) if at > self.now => self
                .now
                .to_zoned(hong_kong())
                .strftime("%Y-%m-%dT%H:%M:%S%:z")
                .to_string(),
            _ => planned,
        }
    }
}

/// An RFC 3339 time in Hong Kong, which keeps UTC+8 all year.
fn hk_time(date: Date, minutes: i64, seconds: i64) -> String {
    format!(
        "{date}T{:02}:{:02}:{seconds:02}+08:00",
        minutes / 60,
        minutes % 60
    )
}

fn days_before(date: Date, days: i64) -> Date {
    date.checked_sub(jiff::Span::new().days(days))
        .expect("a few days back from a four-digit year stays in range")
}
