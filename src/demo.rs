//! Deterministic demo data: one Hong Kong-style racing season as feed events, so that the
//! service can be shown and exercised without a real feeder.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use jiff::civil::{Date, Weekday};
use racing_events::{
    CardRunner, Envelope, Event, HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceRetracted,
    ResultRunner, RunnerOdds, RunnerScratched,
};
use rand::seq::{index, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A generated demo feed: events in the order a feeder would publish them.
#[derive(Debug, Clone)]
pub struct DemoFeed {
    /// Of a season: profiles first, then each meeting in date order: cards, scratchings,
    /// then results (past meetings) or opening odds (today's meeting). The last meeting
    /// run shows a feeder's correction: its first result is published under the other
    /// racecourse, retracted there (`RaceRetracted`), then published right. Of a meeting
    /// that [`Calendar::next_meeting`] declares: that meeting's cards, scratchings and
    /// opening odds. Odds and scratchings name their venue.
    pub events: Vec<Envelope>,
    /// The date of the last meeting, `YYYY-MM-DD`: declared, not yet run.
    pub today: String,
    /// How many meetings the demo has declared, today's included.
    pub meetings: usize,
    /// How many horses have a profile.
    pub horses: usize,
}

/// A race of the feed's last run meeting, for the start-up banner's examples: the demo's
/// dates move with the day it is run on, so fixed dates in a README would not answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The meeting's date, `YYYY-MM-DD`.
    pub date: String,
    /// Its last race.
    pub race_number: i64,
    /// That race's winner (a horse with a profile and form).
    pub horse_no: String,
}

impl DemoFeed {
    /// The last race with a result, and its winner.
    pub fn example(&self) -> Option<Example> {
        self.events.iter().rev().find_map(|e| match &e.event {
            Event::RaceResultPublished(r) => Some(Example {
                date: r.date.clone(),
                race_number: r.race_number,
                horse_no: r
                    .runners
                    .iter()
                    .find(|x| x.position == Some(1))?
                    .horse_no
                    .clone(),
            }),
            _ => None,
        })
    }
}

/// Generates one season ending with a meeting declared for `today`.
pub fn season(seed: u64, today: Date) -> DemoFeed {
    season_and_calendar(seed, today).0
}

/// The season of `season`, and the calendar that goes on from it: the meetings after
/// today's, declared one at a time from the same horses, so that a demo can run for as
/// long as it is left running.
pub fn season_and_calendar(seed: u64, today: Date) -> (DemoFeed, Calendar) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let horses = make_horses(&mut rng);
    let mut pattern: Vec<(&str, u8, i64)> = PATTERN_RACES.to_vec();
    pattern.shuffle(&mut rng);
    let plans = plan_meetings(&mut rng, today, &mut pattern);
    let past_races = plans.iter().rev().skip(1).map(|m| m.races.len()).sum();
    let mut incidents = plan_incidents(&mut rng, past_races).into_iter();
    let mut generator = Generator {
        rng,
        horses,
        events: Vec::new(),
    };
    let last = plans.len() - 1;
    for (index, plan) in plans.iter().enumerate() {
        if index == last {
            generator.live_meeting(index, plan);
        } else {
            generator.past_meeting(index, plan, &mut incidents);
        }
    }
    let mut racing = std::mem::take(&mut generator.events);
    if let Some(last_run) = plans.len().checked_sub(2).and_then(|i| plans.get(i)) {
        misfile_first_result(seed, &mut racing, last_run);
    }
    generator.publish_profiles(today);
    generator.events.extend(racing);
    let feed = DemoFeed {
        events: std::mem::take(&mut generator.events),
        today: today.to_string(),
        meetings: plans.len(),
        horses: generator.horses.len(),
    };
    let calendar = Calendar {
        generator,
        pattern,
        meetings: plans.len(),
        date: today,
    };
    (feed, calendar)
}

/// Publishes the first result of `meeting` under the other racecourse first and retracts
/// it there, as a feeder that corrects a slip does, just before the right one. Its event
/// ids come from a stream of their own, so the rest of the season is what it would be
/// without it.
fn misfile_first_result(seed: u64, events: &mut Vec<Envelope>, meeting: &MeetingPlan) {
    let date = meeting.date.to_string();
    let Some(at) = events
        .iter()
        .position(|e| matches!(&e.event, Event::RaceResultPublished(r) if r.date == date))
    else {
        return;
    };
    let Event::RaceResultPublished(right) = &events[at].event else {
        return;
    };
    let other = match meeting.venue {
        Venue::ShaTin => Venue::HappyValley,
        Venue::HappyValley => Venue::ShaTin,
    };
    let wrong = RaceResult {
        venue: other.name().to_owned(),
        ..right.clone()
    };
    let retracted = RaceRetracted {
        date: wrong.date.clone(),
        venue: wrong.venue.clone(),
        race_number: wrong.race_number,
        reason: format!("published under {} in error", wrong.venue),
    };
    let occurred_at = events[at].occurred_at.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // The season's stream is 0 and the simulator's are dates' digits.
    rng.set_stream(1);
    let slip = [
        Event::RaceResultPublished(wrong),
        Event::RaceRetracted(retracted),
    ]
    .map(|e| envelope(&mut rng, e, occurred_at.clone()));
    events.splice(at..at, slip);
}

/// The demo's racing after its season: the horses as the season left them (every one
/// with a profile), the pattern races not yet run, and the last meeting declared.
pub struct Calendar {
    generator: Generator,
    pattern: Vec<(&'static str, u8, i64)>,
    /// How many meetings are declared; the next one's index.
    meetings: usize,
    /// The last meeting's date.
    date: Date,
}

impl Calendar {
    /// Declares the meeting of the next racing day after the last meeting, as HK races:
    /// a Wednesday evening (most often at Happy Valley), or one day of a weekend (most
    /// often Sunday at Sha Tin), outside the summer break. Its fields are drawn from the
    /// season's rested horses, as the season's meetings were. The feed holds its cards,
    /// its scratchings and its opening odds, with `today` its date, ready for
    /// [`Simulator::new`].
    ///
    /// The calendar goes on from one seed's season the same way every time. `None` only
    /// past the year 9999.
    pub fn next_meeting(&mut self) -> Option<DemoFeed> {
        let generator = &mut self.generator;
        let date = next_meeting_day(&mut generator.rng, self.date)?;
        let plan = plan_meeting(&mut generator.rng, date, &mut self.pattern);
        generator.live_meeting(self.meetings, &plan);
        self.meetings += 1;
        self.date = date;
        Some(DemoFeed {
            events: std::mem::take(&mut generator.events),
            today: date.to_string(),
            meetings: self.meetings,
            horses: generator.horses.len(),
        })
    }
}

/// Live simulation of today's meeting: drifting win odds for each race, then its result.
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

/// One of today's races as the simulation holds it.
#[derive(Debug, Clone)]
struct LiveRace {
    card: RaceCard,
    /// The card's runners still in the race, with their prices.
    starters: Vec<Starter>,
    /// Indices into the card's runners of those scratched, which the result lists as WV.
    scratched: Vec<usize>,
    /// Rebuilt from the card, for the helpers that time a race.
    plan: RacePlan,
    going: &'static str,
}

/// A starter's prices in tenths, as the tote board shows them to one decimal.
#[derive(Debug, Clone, Copy)]
struct Starter {
    /// Index into the card's runners.
    runner: usize,
    opening: i64,
    price: i64,
}

/// The live simulation's price board, in tenths: 1.1 to 199.0.
const MIN_PRICE: i64 = 11;
const MAX_PRICE: i64 = 1_990;
/// Spread of one price move in log terms: a few percent either way.
const DRIFT: f64 = 0.04;
/// Share of its distance from the opening price that a price gives back on each move, so
/// that a demo left running for hours keeps a believable market rather than wandering
/// the whole field out to the limits.
const REVERSION: f64 = 0.02;
/// The most prices one update moves.
const MAX_MOVES: usize = 4;

impl Simulator {
    /// Today's races of `feed` (cards minus scratched runners, opening prices from its
    /// `OddsUpdated` events), in race-number order. `seed` drives the drift, the going and
    /// the results.
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
        let mut opening: BTreeMap<(i64, String), f64> = BTreeMap::new();
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
                        opening.insert((o.race_number, r.horse_no.clone()), r.win_odds);
                    }
                }
                _ => {}
            }
        }
        let races = cards
            .into_values()
            .map(|(card, out)| LiveRace::new(card, &out, &opening, ground))
            .collect();
        Simulator {
            rng,
            date: feed.today.clone(),
            races,
        }
    }

    /// How many races today has: the bound of the `race` index of `tick` and `result`.
    pub fn races(&self) -> usize {
        self.races.len()
    }

    /// The date of the meeting it runs, `YYYY-MM-DD`: the feed's `today`.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// The next price movement of race `race` (index from 0; past the last race, the last
    /// race): an `OddsUpdated` envelope for today's date and that race number listing the
    /// 1 to 4 runners whose price changed, each once, in card order, with a fresh
    /// deterministic `event_id` and `occurred_at` = `now`, an RFC 3339 timestamp that the
    /// caller vouches for.
    ///
    /// `None` when today has no races, or the race has no runner left to price (an
    /// `OddsUpdated` must list at least one).
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
        let odds = moved
            .into_iter()
            .map(|i| {
                let starter = &mut live.starters[i];
                starter.price = drift(&mut self.rng, starter.price, starter.opening);
                RunnerOdds {
                    horse_no: live.card.runners[starter.runner].horse_no.clone(),
                    win_odds: decimal(starter.price),
                }
            })
            .collect();
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
    /// `win_odds` the final prices; then every scratched runner as withdrawn (`WV`, with
    /// no position, time or price). Venue, race name and distance come from the card,
    /// `occurred_at` is `now`.
    ///
    /// Each call runs the race again from the same prices: the caller decides when a race
    /// is over. `None` when today has no races.
    pub fn result(&mut self, race: usize, now: &str) -> Option<Envelope> {
        let index = self.index(race)?;
        let live = &self.races[index];
        // A runner's log-weight is -ln(odds), so its chance to win goes as 1/odds.
        let strength: Vec<f64> = live
            .starters
            .iter()
            .map(|s| -decimal(s.price).ln())
            .collect();
        let order = finishing_order(&mut self.rng, &strength);
        let winner = winning_time(&mut self.rng, &live.plan, live.going);
        let lines = placings(&mut self.rng, &order, None, winner, live.plan.kind.prize());
        let runners = &live.card.runners;
        let finishers = lines.into_iter().map(|p| {
            let starter = live.starters[p.starter];
            ResultRunner {
                position: Some(p.position),
                finish_time: Some(finish_time(p.time)),
                win_odds: Some(decimal(starter.price)),
                dead_heat: p.dead_heat,
                ..unplaced(&runners[starter.runner])
            }
        });
        let withdrawn = live.scratched.iter().map(|&i| ResultRunner {
            status: Some("WV".to_owned()),
            ..unplaced(&runners[i])
        });
        let result = RaceResult {
            date: self.date.clone(),
            venue: live.card.venue.clone(),
            race_number: live.card.race_number,
            race_name: live.card.race_name.clone(),
            distance: live.card.distance,
            going: live.going.to_owned(),
            runners: finishers.chain(withdrawn).collect(),
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

impl LiveRace {
    fn new(
        card: RaceCard,
        out: &BTreeSet<String>,
        opening: &BTreeMap<(i64, String), f64>,
        ground: Ground,
    ) -> LiveRace {
        let (scratched, running): (Vec<usize>, Vec<usize>) =
            (0..card.runners.len()).partition(|&i| out.contains(&card.runners[i].horse_no));
        let level = PAYOUT_RATE * running.len() as f64;
        let starters = running
            .into_iter()
            .map(|runner| {
                let key = (card.race_number, card.runners[runner].horse_no.clone());
                let price = tenths(opening.get(&key).copied().unwrap_or(level));
                Starter {
                    runner,
                    opening: price,
                    price,
                }
            })
            .collect();
        // Cards do not say which track a race is on; a trip that Sha Tin's turf does not
        // stage (1650 m) can only be the all-weather.
        let all_weather = card.venue == Venue::ShaTin.name()
            && !SHA_TIN_TURF.iter().any(|&(d, _)| d == card.distance);
        // Only pace and distance matter for timing; an unknown class runs at Class 3 pace.
        let kind = Kind::parse(&card.class).unwrap_or(Kind::Handicap(3));
        let plan = race_plan(
            card.race_number,
            &card.race_name,
            kind,
            card.distance,
            all_weather,
        );
        LiveRace {
            going: ground.going(&plan),
            card,
            starters,
            scratched,
            plan,
        }
    }
}

/// A result line for a card runner, with no placing, time or price yet.
fn unplaced(runner: &CardRunner) -> ResultRunner {
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
    }
}

/// Decimal odds on the simulator's board, in tenths.
fn tenths(odds: f64) -> i64 {
    // `as` saturates, and maps NaN to 0, so the clamp bounds every input.
    ((odds * 10.0).round() as i64).clamp(MIN_PRICE, MAX_PRICE)
}

fn decimal(tenths: i64) -> f64 {
    tenths as f64 / 10.0
}

/// One move of a price in tenths: a multiplicative step of a few percent, pulled gently
/// back toward the opening price.
fn drift(rng: &mut ChaCha8Rng, price: i64, opening: i64) -> i64 {
    let pull = -REVERSION * (price as f64 / opening as f64).ln();
    let step = pull + DRIFT * normal(rng);
    let moved = tenths(decimal(price) * step.exp());
    if moved != price {
        return moved;
    }
    // An update lists only prices that changed: too small a step still moves one tenth,
    // back off the limit if it would cross it.
    let nudge = if step < 0.0 { -1 } else { 1 };
    if (MIN_PRICE..=MAX_PRICE).contains(&(price + nudge)) {
        price + nudge
    } else {
        price - nudge
    }
}

/// About one season: HK runs 88 meetings from September to July.
const MEETINGS: usize = 80;
/// Somewhat fewer than HK's ~1,350 horses in training, so each still runs 7-8 times.
const HORSES: usize = 1_200;
/// A horse sits out this many meetings after running: HK horses race every 2-4 weeks.
const REST_MEETINGS: usize = 3;
/// Handicap weights in pounds, as in HK: the top-rated runner carries the most.
const TOP_WEIGHT: i64 = 133;
const BOTTOM_WEIGHT: i64 = 113;
/// The HK prize split for 1st to 5th, in thousandths of the purse.
const PRIZE_SHARES: [i64; 5] = [570, 220, 115, 60, 35];
/// The pool kept by the totalisator, so decimal odds pay back less than fair.
const PAYOUT_RATE: f64 = 0.825;

const TRAINERS: &[&str] = &[
    "F C Lor",
    "J Size",
    "C S Shum",
    "P F Yiu",
    "K W Lui",
    "A S Cruz",
    "C Fownes",
    "D J Hall",
    "D Eustace",
    "J Richards",
    "K L Man",
    "C H Yip",
    "P C Ng",
    "D A Hayes",
    "M Newnham",
    "W Y So",
    "Y S Tsui",
    "K H Ting",
    "T P Yung",
    "W K Mo",
];

/// Jockeys with how much riding they get; the busiest are the best, as in HK.
const JOCKEYS: &[(&str, u32)] = &[
    ("Z Purton", 12),
    ("J Moreira", 11),
    ("H Bowman", 10),
    ("K Teetan", 8),
    ("A Atzeni", 8),
    ("L Ferraris", 7),
    ("A Badel", 7),
    ("J McDonald", 7),
    ("B Avdulla", 6),
    ("L Hewitson", 6),
    ("C Y Ho", 6),
    ("M Chadwick", 5),
    ("K C Leung", 5),
    ("A Hamelin", 5),
    ("H T Mo", 4),
    ("E C W Wong", 4),
    ("M L Yeung", 4),
    ("Y L Chung", 4),
    ("K De Melo", 4),
    ("R Kingscote", 4),
    ("A Pouchin", 3),
    ("C L Chau", 3),
    ("H Bentley", 3),
    ("M F Poon", 3),
    ("B Thompson", 3),
];

const NAME_FIRST: &[&str] = &[
    "GOLDEN",
    "ROMANTIC",
    "LUCKY",
    "HAPPY",
    "CALIFORNIA",
    "JADE",
    "MIGHTY",
    "SUPER",
    "SILVER",
    "FLYING",
    "SMART",
    "BRILLIANT",
    "CIRCUIT",
    "WINNING",
    "HARBOUR",
    "NOBLE",
    "ROYAL",
    "SPEEDY",
    "AMAZING",
    "BRAVE",
    "DASHING",
    "ETERNAL",
    "FIERY",
    "GALLANT",
    "GLORIOUS",
    "GRAND",
    "IMPERIAL",
    "JOYFUL",
    "LIGHTNING",
    "MAGIC",
    "MERRY",
    "ORIENTAL",
    "PRIME",
    "RAPID",
    "RED",
    "SACRED",
    "SKY",
    "SOLAR",
    "SUNNY",
    "TALENTED",
    "TOP",
    "UNIVERSAL",
    "VIVA",
    "WONDER",
    "YOUNG",
    "ZEN",
    "STORM",
    "BEAUTY",
    "DRAGON",
    "FORTUNE",
];

const NAME_SECOND: &[&str] = &[
    "SIXTY", "WARRIOR", "STAR", "PHOENIX", "LEGEND", "HERO", "SPIRIT", "GLORY", "TIGER", "EMPEROR",
    "KNIGHT", "DELIGHT", "MISSION", "VOYAGE", "RUNNER", "ARROW", "COMET", "EXPRESS", "CHAMPION",
    "TREASURE", "WISDOM", "MOMENT", "JOY", "POWER", "RAINBOW", "THUNDER", "VICTORY", "SUNRISE",
    "DESTINY", "MASTER", "GENERAL", "PRINCE", "WIND", "JET", "FLAME", "BLOSSOM", "HARMONY", "GEM",
    "PEARL", "RUBY", "ACE", "BOSS", "CHARM", "DREAM", "EAGLE", "FALCON", "DRAGON", "FORTUNE",
    "BEAUTY", "STORM",
];

const COUNTRIES: &[(&str, u32)] = &[
    ("AUS", 40),
    ("NZ", 25),
    ("IRE", 12),
    ("GB", 9),
    ("FR", 4),
    ("USA", 3),
    ("GER", 2),
    ("SAF", 2),
    ("JPN", 2),
    ("ARG", 1),
];

const COLOURS: &[(&str, u32)] = &[
    ("Bay", 45),
    ("Brown", 24),
    ("Chestnut", 20),
    ("Grey", 6),
    ("Dark Bay or Brown", 4),
    ("Black", 1),
];

const AGES: &[(i64, u32)] = &[
    (3, 5),
    (4, 15),
    (5, 22),
    (6, 22),
    (7, 17),
    (8, 10),
    (9, 6),
    (10, 3),
];

/// Horses' classes by share of the population, best first (HK: Class 1 is the top).
const HORSE_CLASSES: &[(u8, u32)] = &[(1, 6), (2, 12), (3, 25), (4, 32), (5, 25)];

const SURNAMES: &[&str] = &[
    "Chan", "Wong", "Lee", "Cheung", "Lau", "Ho", "Ng", "Leung", "Lam", "Tsang", "Kwok", "Yip",
    "Tang", "Fung", "Chow", "Li", "Lo", "Yeung", "Siu", "Mak",
];
const GIVEN_NAMES: &[&str] = &[
    "Ka Chun",
    "Wai Man",
    "Chi Keung",
    "Siu Ming",
    "Kwok Wing",
    "Tak Sing",
    "Man Kit",
    "Yiu Fai",
    "Hon Kwan",
    "Chun Wah",
    "Wing Hong",
    "Kin Man",
];
const SYNDICATE_WORDS: &[&str] = &[
    "Lucky",
    "Golden",
    "Happy",
    "Fortune",
    "Jade",
    "Dragon",
    "Harbour",
    "Victoria",
    "Pearl",
    "Phoenix",
    "Evergreen",
    "Rising",
];
const SYNDICATE_KINDS: &[&str] = &["Syndicate", "Partnership", "Racing Syndicate", "Stable"];

/// HK names a meeting's races after one theme: streets, flowers, islands and so on.
const THEMES: &[&[&str]] = &[
    &[
        "CHATER",
        "PEDDER",
        "ICE HOUSE",
        "WYNDHAM",
        "ARBUTHNOT",
        "LOCKHART",
        "HENNESSY",
        "GLOUCESTER",
        "NATHAN",
        "SALISBURY",
        "CAINE",
        "DES VOEUX",
    ],
    &[
        "TAI PO",
        "SAI KUNG",
        "TSUEN WAN",
        "TUEN MUN",
        "YUEN LONG",
        "KWAI CHUNG",
        "SHEUNG WAN",
        "WAN CHAI",
        "CAUSEWAY BAY",
        "MONG KOK",
        "YAU MA TEI",
        "FANLING",
    ],
    &[
        "AZALEA",
        "BEGONIA",
        "CAMELLIA",
        "CHRYSANTHEMUM",
        "DAFFODIL",
        "GARDENIA",
        "HIBISCUS",
        "JASMINE",
        "LOTUS",
        "MAGNOLIA",
        "ORCHID",
        "PEONY",
    ],
    &[
        "LANTAU",
        "LAMMA",
        "CHEUNG CHAU",
        "PENG CHAU",
        "PO TOI",
        "TUNG LUNG",
        "TSING YI",
        "MA WAN",
        "KAU YI CHAU",
        "HEI LING CHAU",
        "GREEN ISLAND",
        "STONECUTTERS",
    ],
    &[
        "TAI MO SHAN",
        "LION ROCK",
        "KOWLOON PEAK",
        "SHARP PEAK",
        "LANTAU PEAK",
        "SUNSET PEAK",
        "VICTORIA PEAK",
        "MOUNT PARKER",
        "JARDINE'S LOOKOUT",
        "ROBIN'S NEST",
        "PAT SIN LENG",
        "MA ON SHAN",
    ],
    &[
        "EGRET",
        "KINGFISHER",
        "MAGPIE",
        "ORIOLE",
        "BULBUL",
        "HERON",
        "SANDPIPER",
        "SPOONBILL",
        "WHITE-EYE",
        "SUNBIRD",
        "DRONGO",
        "KITE",
    ],
    &[
        "ORION",
        "PEGASUS",
        "ANDROMEDA",
        "CASSIOPEIA",
        "PERSEUS",
        "AQUARIUS",
        "CAPRICORN",
        "SAGITTARIUS",
        "SCORPIO",
        "LIBRA",
        "VIRGO",
        "GEMINI",
    ],
];

/// HK's pattern races: name, group and distance. Each is run at most once a season.
const PATTERN_RACES: &[(&str, u8, i64)] = &[
    ("THE HONG KONG GOLD CUP", 1, 2000),
    ("THE STEWARDS' CUP", 1, 1600),
    ("THE CENTENARY SPRINT CUP", 1, 1000),
    ("THE QUEEN'S SILVER JUBILEE CUP", 1, 1400),
    ("THE CHAMPIONS MILE", 1, 1600),
    ("THE CHAIRMAN'S SPRINT PRIZE", 1, 1200),
    ("THE QUEEN ELIZABETH II CUP", 1, 2000),
    ("THE CHAMPIONS & CHATER CUP", 1, 2400),
    ("THE HONG KONG CUP", 1, 2000),
    ("THE HONG KONG MILE", 1, 1600),
    ("THE HONG KONG SPRINT", 1, 1200),
    ("THE HONG KONG VASE", 1, 2400),
    ("THE JOCKEY CLUB CUP", 2, 2000),
    ("THE JOCKEY CLUB MILE", 2, 1600),
    ("THE JOCKEY CLUB SPRINT", 2, 1200),
    ("THE PREMIER BOWL", 2, 1200),
    ("THE SHA TIN TROPHY", 2, 1600),
    ("THE PREMIER CUP", 2, 1800),
    ("THE CHAIRMAN'S TROPHY", 2, 1600),
    ("THE NATIONAL DAY CUP", 3, 1000),
    ("THE CELEBRATION CUP", 3, 1400),
    ("THE CHINESE CLUB CHALLENGE CUP", 3, 1400),
    ("THE CENTENARY VASE", 3, 1800),
    ("THE BAUHINIA SPRINT TROPHY", 3, 1000),
    ("THE LUNAR NEW YEAR CUP", 3, 1800),
    ("THE QUEEN MOTHER MEMORIAL CUP", 3, 2400),
];

const SHA_TIN_TURF: &[(i64, u32)] = &[
    (1000, 8),
    (1200, 26),
    (1400, 20),
    (1600, 20),
    (1800, 12),
    (2000, 9),
    (2200, 3),
    (2400, 2),
];
const SHA_TIN_ALL_WEATHER: &[(i64, u32)] = &[(1200, 45), (1650, 40), (1800, 15)];
const HAPPY_VALLEY: &[(i64, u32)] = &[(1000, 10), (1200, 40), (1650, 35), (1800, 10), (2200, 5)];
const GRIFFIN_DISTANCES: &[(i64, u32)] = &[(1000, 30), (1200, 70)];

const TURF_GOING: &[(&str, u32)] = &[
    ("GOOD TO FIRM", 25),
    ("GOOD", 45),
    ("GOOD TO YIELDING", 17),
    ("YIELDING", 9),
    ("SOFT", 4),
];

const NON_FINISHES: &[(&str, u32)] = &[("PU", 35), ("UR", 20), ("FE", 10), ("DNF", 35)];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Venue {
    ShaTin,
    HappyValley,
}

impl Venue {
    fn name(self) -> &'static str {
        match self {
            Venue::ShaTin => "Sha Tin",
            Venue::HappyValley => "Happy Valley",
        }
    }

    /// Happy Valley's tight track takes at most 12 runners; Sha Tin takes 14.
    fn max_field(self) -> usize {
        match self {
            Venue::ShaTin => 14,
            Venue::HappyValley => 12,
        }
    }
}

/// What kind of race it is, which decides its class, field and prize.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A rated handicap of Class 1 (best) to 5.
    Handicap(u8),
    /// A pattern race of Group 1 (best) to 3, at set weights.
    Group(u8),
    /// A race for unraced newcomers, at set weights.
    Griffin,
}

impl Kind {
    fn class(self) -> String {
        match self {
            Kind::Handicap(c) => format!("Class {c}"),
            Kind::Group(g) => format!("Group {g}"),
            Kind::Griffin => "Griffin".to_owned(),
        }
    }

    /// Reads back what `class` writes on a card; `None` for any other class.
    fn parse(class: &str) -> Option<Kind> {
        if class == "Griffin" {
            return Some(Kind::Griffin);
        }
        let (word, number) = class.split_once(' ')?;
        let number = number.parse().ok()?;
        match word {
            "Class" => Some(Kind::Handicap(number)),
            "Group" => Some(Kind::Group(number)),
            _ => None,
        }
    }

    /// The purse in whole HK dollars.
    fn prize(self) -> i64 {
        match self {
            Kind::Group(1) => 14_000_000,
            Kind::Group(2) => 5_400_000,
            Kind::Group(_) => 4_000_000,
            Kind::Handicap(1) => 3_200_000,
            Kind::Handicap(2) => 2_200_000,
            Kind::Handicap(3) => 1_500_000,
            Kind::Handicap(4) => 1_100_000,
            Kind::Handicap(_) => 875_000,
            Kind::Griffin => 800_000,
        }
    }

    /// Better horses run faster: seconds gained or lost per 1000 m against Class 3.
    fn pace(self) -> f64 {
        match self {
            Kind::Group(1) => -0.8,
            Kind::Group(2) => -0.6,
            Kind::Group(_) => -0.5,
            Kind::Handicap(1) => -0.4,
            Kind::Handicap(2) => -0.2,
            Kind::Handicap(3) => 0.0,
            Kind::Handicap(4) => 0.2,
            Kind::Handicap(_) => 0.4,
            Kind::Griffin => 0.5,
        }
    }
}

#[derive(Debug, Clone)]
struct RacePlan {
    number: i64,
    /// The theme word of a handicap or griffin, or a pattern race's whole name.
    label: String,
    kind: Kind,
    distance: i64,
    all_weather: bool,
}

impl RacePlan {
    fn name(&self) -> String {
        match self.kind {
            Kind::Handicap(_) => format!("{} HANDICAP", self.label),
            Kind::Group(_) => self.label.clone(),
            Kind::Griffin => format!("{} GRIFFIN PLATE", self.label),
        }
    }
}

#[derive(Debug)]
struct MeetingPlan {
    date: Date,
    venue: Venue,
    /// Wednesday meetings race under lights.
    evening: bool,
    ground: Ground,
    races: Vec<RacePlan>,
}

impl MeetingPlan {
    fn going(&self, race: &RacePlan) -> &'static str {
        self.ground.going(race)
    }

    /// Minutes after midnight, HK time, at which a race jumps.
    fn post_time(&self, race_number: i64) -> i64 {
        if self.evening {
            18 * 60 + 45 + (race_number - 1) * 30
        } else {
            13 * 60 + (race_number - 1) * 35
        }
    }
}

/// A meeting's going on each of its tracks.
#[derive(Debug, Clone, Copy)]
struct Ground {
    turf: &'static str,
    all_weather: &'static str,
}

impl Ground {
    /// The day's weather: the turf's going, and the all-weather's to match it.
    fn draw(rng: &mut ChaCha8Rng) -> Ground {
        let turf = weighted(rng, TURF_GOING);
        Ground {
            turf,
            all_weather: all_weather_going(rng, turf),
        }
    }

    fn going(&self, race: &RacePlan) -> &'static str {
        if race.all_weather {
            self.all_weather
        } else {
            self.turf
        }
    }
}

/// What goes wrong in one past race, chosen up front so that every season has some.
#[derive(Debug, Clone, Copy, Default)]
struct Incident {
    dead_heat: bool,
    non_finisher: bool,
    late_withdrawal: bool,
}

#[derive(Debug)]
struct Horse {
    no: String,
    name: String,
    country: &'static str,
    colour: &'static str,
    sex: &'static str,
    age: i64,
    trainer: &'static str,
    owner: String,
    /// The handicapper's rating, which places the horse in a class and moves with results.
    rating: i64,
    /// Ability the rating has not caught: what makes a horse well or badly handicapped.
    edge: f64,
    /// The first meeting the horse can run at: some newcomers join during the season.
    arrival: usize,
    last_meeting: Option<usize>,
    starts: i64,
    wins: i64,
    places: i64,
    stakes: i64,
}

impl Horse {
    /// HK's rating bands: Class 1 is 100 and up, each class below spans 20 points.
    fn class(&self) -> u8 {
        match self.rating {
            100.. => 1,
            80..=99 => 2,
            60..=79 => 3,
            40..=59 => 4,
            _ => 5,
        }
    }

    fn rested(&self, meeting: usize) -> bool {
        self.last_meeting
            .is_none_or(|last| meeting - last > REST_MEETINGS)
    }

    fn available(&self, meeting: usize) -> bool {
        meeting >= self.arrival
    }

    fn griffin(&self) -> bool {
        self.starts == 0 && self.age <= 4
    }

    /// How well the horse suits a race: 0 fits, 1 is a class away, 2 is a poor fit.
    fn fit(&self, kind: Kind) -> u8 {
        match kind {
            // Newcomers wait for a griffin race if there is one.
            Kind::Handicap(_) if self.griffin() => 2,
            Kind::Handicap(c) => self.class().abs_diff(c).min(2),
            Kind::Group(_) => self.class().saturating_sub(1).min(2),
            Kind::Griffin if self.griffin() => 0,
            Kind::Griffin => 2,
        }
    }

    fn profile(&self) -> HorseProfile {
        HorseProfile {
            horse_no: self.no.clone(),
            horse_name: self.name.clone(),
            country_of_origin: self.country.to_owned(),
            colour: self.colour.to_owned(),
            sex: self.sex.to_owned(),
            age: self.age,
            trainer: self.trainer.to_owned(),
            owner: self.owner.clone(),
            total_stakes: self.stakes,
            starts: self.starts,
            wins: self.wins,
            places: self.places,
        }
    }
}

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
struct Generator {
    rng: ChaCha8Rng,
    horses: Vec<Horse>,
    events: Vec<Envelope>,
}

impl Generator {
    fn push(&mut self, event: Event, occurred_at: String) {
        let envelope = envelope(&mut self.rng, event, occurred_at);
        self.events.push(envelope);
    }

    fn publish_profiles(&mut self, today: Date) {
        let profiles: Vec<HorseProfile> = self.horses.iter().map(Horse::profile).collect();
        for profile in profiles {
            self.push(
                Event::HorseProfileUpdated(profile),
                hk_time(today, 7 * 60, 0),
            );
        }
    }

    fn past_meeting(
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
            self.record(&starts);
            let at = hk_time(
                plan.date,
                plan.post_time(race.plan.number) + 3,
                self.rng.random_range(0..60),
            );
            self.push(Event::RaceResultPublished(result), at);
        }
    }

    /// Declares a meeting to be run live (today's, or one the calendar declares after
    /// it): cards, a scratching or two, and each race's opening odds.
    fn live_meeting(&mut self, index: usize, plan: &MeetingPlan) {
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
            let odds = starters
                .iter()
                .zip(prices(&market))
                .map(|(r, win_odds)| RunnerOdds {
                    horse_no: self.horses[r.horse].no.clone(),
                    win_odds,
                })
                .collect();
            let event = Event::OddsUpdated(OddsUpdated {
                date: plan.date.to_string(),
                venue: Some(plan.venue.name().to_owned()),
                race_number: race.plan.number,
                odds,
            });
            self.push(event, hk_time(plan.date, 9 * 60 + race.plan.number, 0));
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
            let at = hk_time(days_before(plan.date, 2), 10 * 60 + 30, race.plan.number);
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
            runners: race
                .runners
                .iter()
                .map(|r| {
                    let horse = &self.horses[r.horse];
                    CardRunner {
                        horse_no: horse.no.clone(),
                        horse_name: horse.name.clone(),
                        jockey: JOCKEYS[r.jockey].0.to_owned(),
                        trainer: horse.trainer.to_owned(),
                        draw: r.draw,
                        weight: r.weight,
                    }
                })
                .collect(),
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
            let at = hk_time(days_before(date, 1), minutes, self.rng.random_range(0..60));
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
        let odds = prices(&market);
        let mut order = finishing_order(&mut self.rng, &truth);
        let fallen = incident
            .non_finisher
            .then(|| order.remove(self.rng.random_range(1..order.len())));
        let tie = incident
            .dead_heat
            .then(|| self.rng.random_range(0..(order.len() - 1).min(3)));
        let winner = winning_time(&mut self.rng, &race.plan, plan.going(&race.plan));
        let placings = placings(&mut self.rng, &order, tie, winner, race.plan.kind.prize());
        let mut runners = Vec::with_capacity(race.runners.len());
        let mut starts = Vec::with_capacity(starters.len());
        for p in placings {
            runners.push(ResultRunner {
                position: Some(p.position),
                finish_time: Some(finish_time(p.time)),
                win_odds: Some(odds[p.starter]),
                dead_heat: p.dead_heat,
                ..self.result_runner(starters[p.starter])
            });
            starts.push(Start {
                horse: starters[p.starter].horse,
                position: Some(p.position),
                stakes: p.stakes,
                field: starters.len(),
            });
        }
        if let Some(s) = fallen {
            runners.push(ResultRunner {
                win_odds: Some(odds[s]),
                status: Some(weighted(&mut self.rng, NON_FINISHES).to_owned()),
                ..self.result_runner(starters[s])
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
        };
        (result, starts)
    }

    /// A result line with no placing, time or price yet.
    fn result_runner(&self, runner: &Runner) -> ResultRunner {
        let horse = &self.horses[runner.horse];
        ResultRunner {
            position: None,
            horse_no: horse.no.clone(),
            horse_name: horse.name.clone(),
            jockey: JOCKEYS[runner.jockey].0.to_owned(),
            trainer: horse.trainer.to_owned(),
            finish_time: None,
            win_odds: None,
            dead_heat: false,
            status: None,
        }
    }

    /// Adds a race to the runners' records, and moves ratings as a handicapper would.
    fn record(&mut self, starts: &[Start]) {
        for start in starts {
            let horse = &mut self.horses[start.horse];
            horse.starts += 1;
            horse.stakes += start.stakes;
            match start.position {
                Some(1) => {
                    horse.wins += 1;
                    horse.rating += 6;
                }
                Some(2 | 3) => {
                    horse.places += 1;
                    horse.rating += 2;
                }
                Some(p) if p as usize > start.field / 2 => horse.rating -= 2,
                _ => {}
            }
            horse.rating = horse.rating.clamp(0, 140);
        }
    }
}

/// One finisher's line: which starter, its placing, time in hundredths and prize money.
struct Placing {
    starter: usize,
    position: i64,
    time: i64,
    dead_heat: bool,
    stakes: i64,
}

/// Places the finishers in `order`; with a `tie` at index t, the runners at t and t + 1
/// share the placing, the time and the two prizes, and the next placing is skipped.
fn placings(
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

fn scratched_from(scratched: &[(i64, usize)], race: &Race) -> Vec<usize> {
    scratched
        .iter()
        .filter(|(number, _)| *number == race.plan.number)
        .map(|&(_, horse)| horse)
        .collect()
}

/// Meeting dates going back from `today` on HK's pattern (`races_on`).
fn meeting_days(rng: &mut ChaCha8Rng, today: Date) -> Vec<Date> {
    let mut days = vec![today];
    let mut date = today;
    let mut saturday_instead = false;
    while days.len() < MEETINGS {
        date = date
            .yesterday()
            .expect("a season back from a four-digit year stays in range");
        // Walking backwards, a weekend's Sunday comes first and decides for it.
        if date.weekday() == Weekday::Sunday && !off_season(date) {
            saturday_instead = rng.random_bool(0.2);
        }
        if races_on(date, saturday_instead) {
            days.push(date);
        }
    }
    days.reverse();
    days
}

/// The first racing day after `after` (a meeting's date) on HK's pattern (`races_on`);
/// `None` past the year 9999.
fn next_meeting_day(rng: &mut ChaCha8Rng, after: Date) -> Option<Date> {
    // A weekend races once: after a Saturday meeting, its Sunday does not.
    let mut saturday_instead = after.weekday() == Weekday::Saturday;
    let mut date = after;
    loop {
        date = date.tomorrow().ok()?;
        // Walking forwards, a weekend's Saturday comes first and decides for it.
        if date.weekday() == Weekday::Saturday {
            saturday_instead = !off_season(date) && rng.random_bool(0.2);
        }
        if races_on(date, saturday_instead) {
            return Some(date);
        }
    }
}

/// Whether HK races on `date`: Wednesday nights, and a Sunday or now and then a Saturday
/// (`saturday_instead`, decided once a weekend), with no racing in the summer break.
fn races_on(date: Date, saturday_instead: bool) -> bool {
    !off_season(date)
        && match date.weekday() {
            Weekday::Wednesday => true,
            Weekday::Sunday => !saturday_instead,
            Weekday::Saturday => saturday_instead,
            _ => false,
        }
}

/// HK's season runs from early September to mid-July.
fn off_season(date: Date) -> bool {
    matches!((date.month(), date.day()), (7, 17..) | (8, _) | (9, ..=6))
}

/// The season's meetings up to `today`'s, drawing their pattern races from `pattern`.
fn plan_meetings(
    rng: &mut ChaCha8Rng,
    today: Date,
    pattern: &mut Vec<(&'static str, u8, i64)>,
) -> Vec<MeetingPlan> {
    meeting_days(rng, today)
        .into_iter()
        .map(|date| plan_meeting(rng, date, pattern))
        .collect()
}

fn plan_meeting(
    rng: &mut ChaCha8Rng,
    date: Date,
    pattern: &mut Vec<(&str, u8, i64)>,
) -> MeetingPlan {
    let evening = date.weekday() == Weekday::Wednesday;
    let happy_valley = if evening { 0.85 } else { 0.1 };
    let venue = if rng.random_bool(happy_valley) {
        Venue::HappyValley
    } else {
        Venue::ShaTin
    };
    let count: usize = if evening {
        weighted(rng, &[(9, 85), (8, 15)])
    } else {
        weighted(rng, &[(10, 55), (11, 45)])
    };
    let mut labels: Vec<&str> = THEMES[rng.random_range(0..THEMES.len())].to_vec();
    labels.shuffle(rng);
    // Pattern races are run at Sha Tin by day, as the last race but one.
    let group_slot = (venue == Venue::ShaTin && !evening && rng.random_bool(0.5))
        .then_some(count - 2)
        .filter(|_| !pattern.is_empty());
    let griffin_slot = rng.random_bool(0.25).then_some(0);
    let races = (0..count)
        .zip(labels)
        .map(|(slot, label)| {
            let number = slot as i64 + 1;
            if group_slot == Some(slot) {
                if let Some((name, group, distance)) = pattern.pop() {
                    return race_plan(number, name, Kind::Group(group), distance, false);
                }
            }
            if griffin_slot == Some(slot) {
                let distance = weighted(rng, GRIFFIN_DISTANCES);
                return race_plan(number, label, Kind::Griffin, distance, false);
            }
            handicap_plan(rng, venue, number, label)
        })
        .collect();
    MeetingPlan {
        date,
        venue,
        evening,
        ground: Ground::draw(rng),
        races,
    }
}

fn race_plan(number: i64, label: &str, kind: Kind, distance: i64, all_weather: bool) -> RacePlan {
    RacePlan {
        number,
        label: label.to_owned(),
        kind,
        distance,
        all_weather,
    }
}

fn handicap_plan(rng: &mut ChaCha8Rng, venue: Venue, number: i64, label: &str) -> RacePlan {
    let all_weather = venue == Venue::ShaTin && rng.random_bool(0.12);
    // The all-weather track stages the lower classes; Happy Valley rarely sees Class 1.
    let class = match (venue, all_weather) {
        (_, true) => weighted(rng, &[(3, 30), (4, 40), (5, 30)]),
        (Venue::HappyValley, false) => weighted(rng, &[(1, 2), (2, 8), (3, 30), (4, 35), (5, 25)]),
        (Venue::ShaTin, false) => weighted(rng, &[(1, 8), (2, 14), (3, 26), (4, 30), (5, 22)]),
    };
    let distances = match (venue, all_weather) {
        (Venue::HappyValley, _) => HAPPY_VALLEY,
        (Venue::ShaTin, true) => SHA_TIN_ALL_WEATHER,
        (Venue::ShaTin, false) => SHA_TIN_TURF,
    };
    let distance = weighted(rng, distances);
    race_plan(number, label, Kind::Handicap(class), distance, all_weather)
}

/// The all-weather track drains fast, so it only turns wet when the turf is soft.
fn all_weather_going(rng: &mut ChaCha8Rng, turf: &str) -> &'static str {
    match turf {
        "GOOD TO YIELDING" => "WET FAST",
        "YIELDING" | "SOFT" => "WET SLOW",
        _ => weighted(rng, &[("GOOD", 85), ("WET FAST", 15)]),
    }
}

/// Picks the past races that get a dead heat, a faller and a late withdrawal.
fn plan_incidents(rng: &mut ChaCha8Rng, races: usize) -> Vec<Incident> {
    let mut plan = vec![Incident::default(); races];
    let dead_heats = rng.random_range(3..=5).min(races);
    for i in index::sample(rng, races, dead_heats) {
        plan[i].dead_heat = true;
    }
    let non_finishers = rng.random_range(8..=14).min(races);
    for i in index::sample(rng, races, non_finishers) {
        plan[i].non_finisher = true;
    }
    let withdrawals = rng.random_range(3..=6).min(races);
    for i in index::sample(rng, races, withdrawals) {
        plan[i].late_withdrawal = true;
    }
    plan
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

/// Decimal odds from log-weights: the fair price less the totalisator's take, in HK's
/// range of 1.4 (say) to 99, to one decimal.
fn prices(market: &[f64]) -> Vec<f64> {
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
fn finishing_order(rng: &mut ChaCha8Rng, truth: &[f64]) -> Vec<usize> {
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
fn winning_time(rng: &mut ChaCha8Rng, race: &RacePlan, going: &str) -> i64 {
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

/// Wraps an event with an event id drawn from `rng`, so that one seed gives the same ids.
fn envelope(rng: &mut ChaCha8Rng, event: Event, occurred_at: String) -> Envelope {
    let mut bytes = [0u8; 16];
    rng.fill(&mut bytes);
    Envelope {
        event_id: uuid::Builder::from_random_bytes(bytes).into_uuid(),
        occurred_at,
        event,
    }
}

fn share(purse: i64, place: usize) -> i64 {
    PRIZE_SHARES.get(place).map_or(0, |s| purse * s / 1000)
}

/// `m:ss.cc` from hundredths of a second.
fn finish_time(hundredths: i64) -> String {
    format!(
        "{}:{:02}.{:02}",
        hundredths / 6000,
        hundredths / 100 % 60,
        hundredths % 100
    )
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

fn make_horses(rng: &mut ChaCha8Rng) -> Vec<Horse> {
    // Every two-word combination once, shuffled, so names are unique without retries.
    let mut names: Vec<String> = NAME_FIRST
        .iter()
        .flat_map(|a| NAME_SECOND.iter().map(move |b| (a, b)))
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("{a} {b}"))
        .collect();
    names.shuffle(rng);
    let mut brands = std::collections::BTreeSet::new();
    let mut horses: Vec<Horse> = names
        .into_iter()
        .take(HORSES)
        .map(|name| {
            let age = weighted(rng, AGES);
            let mut no = brand(rng, age);
            while !brands.insert(no.clone()) {
                no = brand(rng, age);
            }
            make_horse(rng, no, name, age)
        })
        .collect();
    horses.sort_by(|a, b| a.no.cmp(&b.no));
    horses
}

fn make_horse(rng: &mut ChaCha8Rng, no: String, name: String, age: i64) -> Horse {
    let class = weighted(rng, HORSE_CLASSES);
    let rating = match class {
        1 => rng.random_range(100..=125),
        2 => rng.random_range(80..=99),
        3 => rng.random_range(60..=79),
        4 => rng.random_range(40..=59),
        _ => rng.random_range(15..=39),
    };
    let sex = match rng.random_range(0..100) {
        0..86 => "Gelding",
        86..89 => "Rig",
        89..93 => "Mare",
        _ if age <= 3 => "Colt",
        _ => "Horse",
    };
    Horse {
        no,
        name,
        country: weighted(rng, COUNTRIES),
        colour: weighted(rng, COLOURS),
        sex,
        age,
        trainer: TRAINERS[rng.random_range(0..TRAINERS.len())],
        owner: owner(rng),
        rating,
        edge: normal(rng),
        // Most young horses are imported during the season and debut in a griffin race.
        arrival: if age <= 4 && rng.random_bool(0.6) {
            rng.random_range(1..MEETINGS)
        } else {
            0
        },
        last_meeting: None,
        starts: 0,
        wins: 0,
        places: 0,
        stakes: 0,
    }
}

/// An HK brand: the import season's letter (HK skips F and I) and three digits, with
/// a second letter for some seasons' later imports, e.g. `E271` or `CA206`.
fn brand(rng: &mut ChaCha8Rng, age: i64) -> String {
    const SEASONS: [char; 9] = ['K', 'J', 'H', 'G', 'E', 'D', 'C', 'B', 'A'];
    let season = usize::try_from(age - 3).unwrap_or(0) + rng.random_range(0..=1);
    let letter = SEASONS[season.min(SEASONS.len() - 1)];
    let number = rng.random_range(1..=499);
    if rng.random_bool(0.15) {
        let second = ['A', 'B'][rng.random_range(0..2)];
        format!("{letter}{second}{number:03}")
    } else {
        format!("{letter}{number:03}")
    }
}

fn owner(rng: &mut ChaCha8Rng) -> String {
    let surname = SURNAMES[rng.random_range(0..SURNAMES.len())];
    let given = GIVEN_NAMES[rng.random_range(0..GIVEN_NAMES.len())];
    match rng.random_range(0..100) {
        0..35 => format!("Mr {surname} {given}"),
        35..55 => format!("Mr & Mrs {surname} {given}"),
        55..85 => {
            let word = SYNDICATE_WORDS[rng.random_range(0..SYNDICATE_WORDS.len())];
            let kind = SYNDICATE_KINDS[rng.random_range(0..SYNDICATE_KINDS.len())];
            format!("The {word} {kind}")
        }
        _ => format!("{surname} Family Syndicate"),
    }
}

/// Picks from a table of (item, weight); the tables here are constant and non-empty.
fn weighted<T: Copy>(rng: &mut ChaCha8Rng, table: &[(T, u32)]) -> T {
    let total: u32 = table.iter().map(|&(_, w)| w).sum();
    let mut roll = rng.random_range(0..total);
    for &(item, w) in table {
        if roll < w {
            return item;
        }
        roll -= w;
    }
    unreachable!("the roll is below the sum of the weights")
}

/// A standard normal draw (Box-Muller), so that no distribution crate is needed.
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::OnceLock;

    use super::*;

    const TODAY: &str = "2026-11-21";

    fn today() -> Date {
        Date::constant(2026, 11, 21)
    }

    /// One season shared by the tests that only read it: generating is the slow part.
    fn feed() -> &'static DemoFeed {
        static FEED: OnceLock<DemoFeed> = OnceLock::new();
        FEED.get_or_init(|| season(42, today()))
    }

    /// The results that stand: not the one published under the wrong venue and retracted.
    fn results() -> impl Iterator<Item = &'static RaceResult> {
        let retracted: BTreeSet<(&str, &str, i64)> = feed()
            .events
            .iter()
            .filter_map(|e| match &e.event {
                Event::RaceRetracted(r) => Some((r.date.as_str(), r.venue.as_str(), r.race_number)),
                _ => None,
            })
            .collect();
        feed()
            .events
            .iter()
            .filter_map(|e| match &e.event {
                Event::RaceResultPublished(r) => Some(r),
                _ => None,
            })
            .filter(move |r| {
                !retracted.contains(&(r.date.as_str(), r.venue.as_str(), r.race_number))
            })
    }

    fn cards() -> impl Iterator<Item = &'static RaceCard> {
        feed().events.iter().filter_map(|e| match &e.event {
            Event::RaceCardDeclared(c) => Some(c),
            _ => None,
        })
    }

    fn withdrawn(r: &ResultRunner) -> bool {
        r.status
            .as_deref()
            .is_some_and(|s| s.starts_with("WV") || s.starts_with("WX"))
    }

    #[test]
    fn every_event_passes_the_feed_contract() {
        for env in &feed().events {
            assert_eq!(env.event.validate(), Ok(()), "{}", env.to_json());
            let parsed = Envelope::decode(&env.subject(), env.to_json().as_bytes());
            assert!(parsed.is_ok(), "{parsed:?} for {}", env.to_json());
        }
    }

    #[test]
    fn every_horse_number_is_a_valid_unique_brand() {
        let mut seen = BTreeSet::new();
        for env in &feed().events {
            if let Event::HorseProfileUpdated(p) = &env.event {
                assert!(racing_events::is_horse_no(&p.horse_no), "{}", p.horse_no);
                let (letters, digits) = p.horse_no.split_at(p.horse_no.len() - 3);
                assert!((1..=2).contains(&letters.len()), "{}", p.horse_no);
                assert!(letters.bytes().all(|b| b.is_ascii_uppercase()));
                assert!(digits.bytes().all(|b| b.is_ascii_digit()));
                assert!(seen.insert(p.horse_no.clone()), "{} twice", p.horse_no);
            }
        }
    }

    #[test]
    fn the_example_is_the_last_race_run_and_its_winner() {
        let example = feed().example().expect("a past result");
        assert!(example.date.as_str() < TODAY, "{example:?}");
        let last = feed()
            .events
            .iter()
            .rev()
            .find_map(|e| match &e.event {
                Event::RaceResultPublished(r) => Some(r),
                _ => None,
            })
            .expect("a result");
        assert_eq!(
            (&last.date, last.race_number),
            (&example.date, example.race_number)
        );
        let winner = last.runners.iter().find(|r| r.horse_no == example.horse_no);
        assert_eq!(winner.and_then(|r| r.position), Some(1));
        let profiled = feed().events.iter().any(
            |e| matches!(&e.event, Event::HorseProfileUpdated(p) if p.horse_no == example.horse_no),
        );
        assert!(profiled, "{example:?}");
    }

    #[test]
    fn same_seed_and_day_give_the_same_feed() {
        let json = |f: &DemoFeed| f.events.iter().map(Envelope::to_json).collect::<Vec<_>>();
        assert_eq!(json(&season(42, today())), json(feed()));
        assert_ne!(json(&season(43, today())), json(feed()));
    }

    #[test]
    fn a_season_has_enough_meetings_and_horses() {
        let feed = feed();
        assert!(feed.meetings >= 75, "{} meetings", feed.meetings);
        assert!(feed.horses >= 1000, "{} horses", feed.horses);
        let dates: BTreeSet<&str> = cards().map(|c| c.date.as_str()).collect();
        assert_eq!(dates.len(), feed.meetings);
        let profiles = feed
            .events
            .iter()
            .filter(|e| matches!(e.event, Event::HorseProfileUpdated(_)))
            .count();
        assert_eq!(profiles, feed.horses);
    }

    #[test]
    fn profiles_are_published_before_anything_else() {
        let first_other = feed()
            .events
            .iter()
            .position(|e| !matches!(e.event, Event::HorseProfileUpdated(_)));
        assert_eq!(first_other, Some(feed().horses));
    }

    #[test]
    fn the_last_meeting_is_today_with_cards_odds_and_no_results() {
        let last = cards().map(|c| c.date.as_str()).max();
        assert_eq!(last, Some(TODAY));
        assert_eq!(feed().today, TODAY);
        let races = cards().filter(|c| c.date == TODAY).count();
        assert!((8..=11).contains(&races), "{races} races today");
        assert_eq!(results().filter(|r| r.date == TODAY).count(), 0);
        let odds = feed()
            .events
            .iter()
            .filter(|e| matches!(&e.event, Event::OddsUpdated(o) if o.date == TODAY))
            .count();
        assert_eq!(odds, races);
        let scratched = feed()
            .events
            .iter()
            .filter(|e| matches!(&e.event, Event::RunnerScratched(s) if s.date == TODAY))
            .count();
        assert!(
            (1..=2).contains(&scratched),
            "{scratched} scratchings today"
        );
    }

    #[test]
    fn the_last_meeting_run_corrects_a_result_published_under_the_wrong_venue() {
        let events = &feed().events;
        let retractions: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.event, Event::RaceRetracted(_)))
            .map(|(i, _)| i)
            .collect();
        let [at] = retractions[..] else {
            panic!("{} retractions", retractions.len())
        };
        let (
            Event::RaceResultPublished(wrong),
            Event::RaceRetracted(r),
            Event::RaceResultPublished(right),
        ) = (
            &events[at - 1].event,
            &events[at].event,
            &events[at + 1].event,
        )
        else {
            panic!("a misfiled result, its retraction and the right result in a row")
        };
        assert_eq!(
            (&wrong.date, &wrong.venue, wrong.race_number),
            (&r.date, &r.venue, r.race_number)
        );
        assert_eq!((&right.date, right.race_number), (&r.date, r.race_number));
        assert_ne!(right.venue, wrong.venue);
        assert_eq!(right.runners, wrong.runners);
        let card = cards()
            .find(|c| c.date == right.date && c.race_number == right.race_number)
            .expect("declared");
        assert_eq!(card.venue, right.venue);
        let last_run = results().map(|r| r.date.as_str()).max();
        assert_eq!(last_run, Some(r.date.as_str()));
        // The slip's ids are its own: the season around it is unchanged by it.
        let without: Vec<&Envelope> = events
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at && *i != at - 1)
            .map(|(_, e)| e)
            .collect();
        let ids: BTreeSet<_> = without.iter().map(|e| e.event_id).collect();
        assert_eq!(ids.len(), without.len());
        assert!(!ids.contains(&events[at].event_id));
    }

    #[test]
    fn odds_and_scratchings_name_the_venue_of_their_race() {
        let venue_of: BTreeMap<(&str, i64), &str> = cards()
            .map(|c| ((c.date.as_str(), c.race_number), c.venue.as_str()))
            .collect();
        let mut sim = simulator(7);
        let ticked: Vec<Envelope> = (0..sim.races()).filter_map(|r| sim.tick(r, NOW)).collect();
        let mut named = 0;
        for env in feed().events.iter().chain(&ticked) {
            let (date, race, venue) = match &env.event {
                Event::OddsUpdated(o) => (&o.date, o.race_number, &o.venue),
                Event::RunnerScratched(s) => (&s.date, s.race_number, &s.venue),
                _ => continue,
            };
            assert_eq!(
                venue.as_deref(),
                venue_of.get(&(date.as_str(), race)).copied(),
                "{}",
                env.to_json()
            );
            named += 1;
        }
        assert!(named > ticked.len(), "{named} odds and scratchings");
    }

    #[test]
    fn every_past_race_has_a_result() {
        let declared: BTreeSet<(&str, i64)> = cards()
            .filter(|c| c.date != TODAY)
            .map(|c| (c.date.as_str(), c.race_number))
            .collect();
        let run: BTreeSet<(&str, i64)> = results()
            .map(|r| (r.date.as_str(), r.race_number))
            .collect();
        assert_eq!(declared, run);
    }

    #[test]
    fn the_season_has_dead_heats_non_finishers_and_withdrawals() {
        let runners = || results().flat_map(|r| &r.runners);
        assert!(runners().any(|r| r.dead_heat));
        assert!(runners().any(|r| {
            r.position.is_none() && !withdrawn(r) && r.win_odds.is_some() && r.finish_time.is_none()
        }));
        assert!(runners().any(|r| withdrawn(r) && r.win_odds.is_none() && r.finish_time.is_none()));
    }

    #[test]
    fn positions_follow_finish_times_and_dead_heats_skip_a_place() {
        for race in results() {
            let placed: Vec<&ResultRunner> = race
                .runners
                .iter()
                .filter(|r| r.position.is_some())
                .collect();
            for (i, pair) in placed.windows(2).enumerate() {
                let (a, b) = (pair[0], pair[1]);
                if b.dead_heat && b.position == a.position {
                    assert_eq!(a.finish_time, b.finish_time);
                } else {
                    assert_eq!(b.position, Some(i as i64 + 2), "{race:?}");
                    assert!(a.finish_time < b.finish_time, "{race:?}");
                }
            }
        }
    }

    #[test]
    fn a_horse_runs_at_most_once_a_meeting() {
        let mut by_day: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for card in cards() {
            let day = by_day.entry(card.date.as_str()).or_default();
            for runner in &card.runners {
                assert!(
                    day.insert(&runner.horse_no),
                    "{} twice on {}",
                    runner.horse_no,
                    card.date
                );
            }
        }
    }

    #[test]
    fn a_scratched_runner_is_withdrawn_in_its_result() {
        for env in &feed().events {
            let Event::RunnerScratched(s) = &env.event else {
                continue;
            };
            let Some(result) =
                results().find(|r| r.date == s.date && r.race_number == s.race_number)
            else {
                assert_eq!(s.date, TODAY);
                continue;
            };
            let runner = result.runners.iter().find(|r| r.horse_no == s.horse_no);
            assert_eq!(runner.and_then(|r| r.status.as_deref()), Some("WV"));
        }
    }

    #[test]
    fn profiles_count_the_starts_wins_and_places_of_the_results() {
        let mut counted: BTreeMap<&str, (i64, i64, i64)> = BTreeMap::new();
        for runner in results().flat_map(|r| &r.runners).filter(|r| !withdrawn(r)) {
            let tally = counted.entry(runner.horse_no.as_str()).or_default();
            tally.0 += 1;
            tally.1 += i64::from(runner.position == Some(1));
            tally.2 += i64::from(matches!(runner.position, Some(2 | 3)));
        }
        for env in &feed().events {
            if let Event::HorseProfileUpdated(p) = &env.event {
                let tally = counted
                    .get(p.horse_no.as_str())
                    .copied()
                    .unwrap_or_default();
                assert_eq!((p.starts, p.wins, p.places), tally, "{}", p.horse_no);
                if p.starts == 0 {
                    assert_eq!(p.total_stakes, 0, "{}", p.horse_no);
                }
                if p.wins > 0 {
                    assert!(p.total_stakes > 0, "{}", p.horse_no);
                }
            }
        }
    }

    const NOW: &str = "2026-11-21T12:30:00+08:00";

    fn simulator(seed: u64) -> Simulator {
        Simulator::new(feed(), seed)
    }

    fn today_card(number: i64) -> &'static RaceCard {
        cards()
            .filter(|c| c.date == TODAY && c.race_number == number)
            .last()
            .expect("the simulator only reports races declared today")
    }

    fn scratched_today() -> BTreeSet<(i64, &'static str)> {
        feed()
            .events
            .iter()
            .filter_map(|e| match &e.event {
                Event::RunnerScratched(s) if s.date == TODAY => {
                    Some((s.race_number, s.horse_no.as_str()))
                }
                _ => None,
            })
            .collect()
    }

    fn opening_odds() -> BTreeMap<(i64, &'static str), f64> {
        feed()
            .events
            .iter()
            .filter_map(|e| match &e.event {
                Event::OddsUpdated(o) if o.date == TODAY => Some(o),
                _ => None,
            })
            .flat_map(|o| {
                o.odds
                    .iter()
                    .map(move |r| ((o.race_number, r.horse_no.as_str()), r.win_odds))
            })
            .collect()
    }

    fn assert_contract(env: &Envelope) {
        assert_eq!(env.event.validate(), Ok(()), "{}", env.to_json());
        let parsed = Envelope::decode(&env.subject(), env.to_json().as_bytes());
        assert_eq!(parsed.as_ref(), Ok(env), "{}", env.to_json());
    }

    fn odds_of(env: &Envelope) -> &OddsUpdated {
        match &env.event {
            Event::OddsUpdated(o) => o,
            other => panic!("expected OddsUpdated, got {other:?}"),
        }
    }

    fn result_of(env: &Envelope) -> &RaceResult {
        match &env.event {
            Event::RaceResultPublished(r) => r,
            other => panic!("expected RaceResultPublished, got {other:?}"),
        }
    }

    #[test]
    fn the_simulator_runs_todays_races_in_race_number_order() {
        let mut sim = simulator(1);
        let races = cards().filter(|c| c.date == TODAY).count();
        assert_eq!(sim.races(), races);
        for race in 0..sim.races() {
            let tick = sim.tick(race, NOW).expect("today has races");
            assert_eq!(odds_of(&tick).race_number, race as i64 + 1);
            assert_eq!(odds_of(&tick).date, TODAY);
            assert_eq!(tick.occurred_at, NOW);
        }
    }

    #[test]
    fn simulated_odds_and_results_pass_the_feed_contract() {
        let mut sim = simulator(1);
        let mut ids = BTreeSet::new();
        for race in 0..sim.races() {
            for _ in 0..20 {
                let tick = sim.tick(race, NOW).expect("today has races");
                assert_contract(&tick);
                assert!(ids.insert(tick.event_id));
            }
            let result = sim.result(race, NOW).expect("today has races");
            assert_contract(&result);
            assert!(ids.insert(result.event_id));
        }
    }

    #[test]
    fn the_same_seed_replays_the_same_afternoon() {
        let afternoon = |seed| {
            let mut sim = simulator(seed);
            let mut json = Vec::new();
            for race in 0..sim.races() {
                for _ in 0..5 {
                    json.extend(sim.tick(race, NOW).map(|e| e.to_json()));
                }
                json.extend(sim.result(race, NOW).map(|e| e.to_json()));
            }
            json
        };
        assert_eq!(afternoon(1), afternoon(1));
        assert_ne!(afternoon(1), afternoon(2));
    }

    #[test]
    fn ticks_move_one_to_four_prices_within_the_board_limits() {
        let opening = opening_odds();
        let mut sim = simulator(3);
        for race in 0..sim.races() {
            let number = race as i64 + 1;
            let mut board: BTreeMap<&str, f64> = opening
                .iter()
                .filter(|((n, _), _)| *n == number)
                .map(|(&(_, horse), &odds)| (horse, odds))
                .collect();
            for _ in 0..500 {
                let tick = sim.tick(race, NOW).expect("today has races");
                let odds = &odds_of(&tick).odds;
                assert!((1..=4).contains(&odds.len()), "{}", tick.to_json());
                let listed: BTreeSet<&str> = odds.iter().map(|r| r.horse_no.as_str()).collect();
                assert_eq!(listed.len(), odds.len(), "{}", tick.to_json());
                for r in odds {
                    let price = r.win_odds;
                    assert!((1.1..=199.0).contains(&price), "{price}");
                    assert_eq!((price * 10.0).round() / 10.0, price);
                    let last = board.get_mut(r.horse_no.as_str());
                    let last = last.expect("only a priced starter moves");
                    assert_ne!(*last, price, "{} listed unchanged", r.horse_no);
                    // A few percent a move, or the one-tenth step a small price needs.
                    let ratio = price / *last;
                    assert!(
                        (0.8..1.25).contains(&ratio) || (price - *last).abs() < 0.15,
                        "{} from {last} to {price}",
                        r.horse_no
                    );
                    *last = price;
                }
            }
        }
    }

    #[test]
    fn a_result_places_every_starter_once_and_withdraws_the_scratched() {
        let scratched = scratched_today();
        let mut sim = simulator(4);
        for race in 0..sim.races() {
            for _ in 0..10 {
                sim.tick(race, NOW);
            }
            let env = sim.result(race, NOW).expect("today has races");
            let result = result_of(&env);
            let card = today_card(result.race_number);
            assert_eq!(result.venue, card.venue);
            assert_eq!(result.race_name, card.race_name);
            assert_eq!(result.distance, card.distance);
            assert!(
                TURF_GOING.iter().any(|&(g, _)| g == result.going)
                    || ["GOOD", "WET FAST", "WET SLOW"].contains(&result.going.as_str())
            );
            let listed: Vec<&str> = result.runners.iter().map(|r| r.horse_no.as_str()).collect();
            let declared: BTreeSet<&str> =
                card.runners.iter().map(|r| r.horse_no.as_str()).collect();
            assert_eq!(listed.iter().copied().collect::<BTreeSet<_>>(), declared);
            assert_eq!(listed.len(), declared.len());
            let (out, placed): (Vec<&ResultRunner>, Vec<&ResultRunner>) = result
                .runners
                .iter()
                .partition(|r| scratched.contains(&(result.race_number, r.horse_no.as_str())));
            let positions: Vec<Option<i64>> = placed.iter().map(|r| r.position).collect();
            let expected: Vec<Option<i64>> = (1..=placed.len() as i64).map(Some).collect();
            assert_eq!(positions, expected);
            for pair in placed.windows(2) {
                assert!(
                    pair[0].finish_time < pair[1].finish_time,
                    "{}",
                    env.to_json()
                );
            }
            assert!(placed
                .iter()
                .all(|r| r.status.is_none() && r.win_odds.is_some()));
            for r in out {
                assert_eq!(r.status.as_deref(), Some("WV"));
                assert_eq!(
                    (r.position, &r.finish_time, r.win_odds),
                    (None, &None, None)
                );
            }
        }
        assert!(!scratched.is_empty());
    }

    #[test]
    fn an_unmoved_race_finishes_at_its_opening_prices() {
        let opening = opening_odds();
        let mut sim = simulator(5);
        let env = sim.result(0, NOW).expect("today has races");
        let result = result_of(&env);
        for r in result.runners.iter().filter(|r| r.status.is_none()) {
            let key = (result.race_number, r.horse_no.as_str());
            assert_eq!(r.win_odds, opening.get(&key).copied(), "{}", r.horse_no);
        }
    }

    #[test]
    fn a_winning_time_suits_the_trip() {
        let mut sim = simulator(6);
        for race in 0..sim.races() {
            let env = sim.result(race, NOW).expect("today has races");
            let result = result_of(&env);
            let time = result.runners[0].finish_time.as_deref().unwrap_or_default();
            let (minutes, seconds) = time.split_once(':').unwrap_or_default();
            let seconds = minutes.parse::<f64>().unwrap_or_default() * 60.0
                + seconds.parse::<f64>().unwrap_or_default();
            // HK's fastest and slowest pars run from about 56 to 63 seconds a kilometre.
            let per_km = seconds / (result.distance as f64 / 1000.0);
            assert!(
                (54.0..66.0).contains(&per_km),
                "{time} for {}",
                result.distance
            );
        }
    }

    #[test]
    fn short_prices_win_in_proportion_to_their_chance() {
        let mut sim = simulator(7);
        let runs = 2_000;
        let mut wins: BTreeMap<String, usize> = BTreeMap::new();
        let mut chance: BTreeMap<String, f64> = BTreeMap::new();
        for _ in 0..runs {
            let env = sim.result(0, NOW).expect("today has races");
            let result = result_of(&env);
            for r in &result.runners {
                if let Some(odds) = r.win_odds {
                    *chance.entry(r.horse_no.clone()).or_default() = 1.0 / odds;
                }
            }
            *wins.entry(result.runners[0].horse_no.clone()).or_default() += 1;
        }
        let book: f64 = chance.values().sum();
        for (horse, c) in &chance {
            let expected = c / book;
            let seen = wins.get(horse).copied().unwrap_or(0) as f64 / runs as f64;
            assert!(
                (seen - expected).abs() < 0.04,
                "{horse}: {seen} won, {expected} expected"
            );
        }
    }

    #[test]
    fn a_race_index_past_the_end_means_the_last_race() {
        let mut sim = simulator(8);
        let last = sim.races() as i64;
        let tick = sim.tick(99, NOW).expect("today has races");
        assert_eq!(odds_of(&tick).race_number, last);
        let result = sim.result(usize::MAX, NOW).expect("today has races");
        assert_eq!(result_of(&result).race_number, last);
    }

    #[test]
    fn a_day_without_races_simulates_nothing() {
        let empty = DemoFeed {
            events: Vec::new(),
            today: TODAY.to_owned(),
            meetings: 0,
            horses: 0,
        };
        let mut sim = Simulator::new(&empty, 1);
        assert_eq!(sim.races(), 0);
        assert_eq!(sim.tick(0, NOW), None);
        assert_eq!(sim.result(0, NOW), None);
        // A feed whose cards are all for other days has no races today either.
        let past = DemoFeed {
            today: "2026-11-22".to_owned(),
            ..feed().clone()
        };
        assert_eq!(Simulator::new(&past, 1).races(), 0);
    }

    #[test]
    fn a_card_class_reads_back_as_its_kind() {
        for kind in [Kind::Handicap(4), Kind::Group(1), Kind::Griffin] {
            assert_eq!(Kind::parse(&kind.class()), Some(kind));
        }
        assert_eq!(Kind::parse("Restricted Race"), None);
    }

    /// A month and more of meetings after today's, from one seed's calendar.
    fn calendar(seed: u64) -> Vec<DemoFeed> {
        let (_, mut calendar) = season_and_calendar(seed, today());
        (0..16)
            .map(|_| calendar.next_meeting().expect("dates stay in range"))
            .collect()
    }

    #[test]
    fn the_calendar_declares_later_meetings_on_racing_days_that_run_live() {
        let next = calendar(42);
        let profiled: BTreeSet<&str> = feed()
            .events
            .iter()
            .filter_map(|e| match &e.event {
                Event::HorseProfileUpdated(p) => Some(p.horse_no.as_str()),
                _ => None,
            })
            .collect();
        let mut ids: BTreeSet<uuid::Uuid> = feed().events.iter().map(|e| e.event_id).collect();
        let mut last = today();
        let mut weekdays = BTreeSet::new();
        for (n, meeting) in next.iter().enumerate() {
            let date: Date = meeting.today.parse().expect("a calendar date");
            assert!(date > last, "{date} after {last}");
            let weekday = date.weekday();
            let racing_day = [Weekday::Wednesday, Weekday::Saturday, Weekday::Sunday];
            assert!(racing_day.contains(&weekday) && !off_season(date), "{date}");
            // One meeting a weekend: never the Sunday after a Saturday meeting.
            assert!(weekday != Weekday::Sunday || last.tomorrow().ok() != Some(date));
            weekdays.insert(weekday.to_monday_one_offset());
            assert_eq!(meeting.meetings, feed().meetings + n + 1);
            assert_eq!(meeting.horses, feed().horses);
            for env in &meeting.events {
                assert_contract(env);
                assert!(ids.insert(env.event_id), "{} twice", env.event_id);
            }
            let cards: Vec<&RaceCard> = meeting
                .events
                .iter()
                .filter_map(|e| match &e.event {
                    Event::RaceCardDeclared(c) => Some(c),
                    _ => None,
                })
                .collect();
            assert!((8..=11).contains(&cards.len()), "{} races", cards.len());
            let mut runners = BTreeSet::new();
            for card in &cards {
                assert_eq!(card.date, meeting.today);
                for r in &card.runners {
                    assert!(profiled.contains(r.horse_no.as_str()), "{}", r.horse_no);
                    assert!(runners.insert(&r.horse_no), "{} twice", r.horse_no);
                }
            }
            assert!(!meeting
                .events
                .iter()
                .any(|e| matches!(e.event, Event::RaceResultPublished(_))));
            last = date;
        }
        // Wednesday evenings and weekend days, a month and more of them.
        assert!(weekdays.contains(&3), "{weekdays:?}");
        assert!(
            weekdays.contains(&6) || weekdays.contains(&7),
            "{weekdays:?}"
        );
        // Every meeting runs live with the demo's one seed, today's too, and no odds or
        // result repeats another meeting's event id.
        for meeting in std::iter::once(feed()).chain(&next) {
            let mut sim = Simulator::new(meeting, 42);
            assert_eq!(sim.date(), meeting.today);
            assert!(sim.races() >= 8);
            for race in 0..sim.races() {
                for _ in 0..3 {
                    let tick = sim.tick(race, NOW).expect("the meeting has races");
                    assert_eq!(odds_of(&tick).date, meeting.today);
                    assert_contract(&tick);
                    assert!(ids.insert(tick.event_id), "{} twice", tick.event_id);
                }
                let result = sim.result(race, NOW).expect("the meeting has races");
                assert_contract(&result);
                assert!(ids.insert(result.event_id), "{} twice", result.event_id);
            }
        }
    }

    #[test]
    fn the_same_seed_declares_the_same_meetings() {
        let json = |meetings: &[DemoFeed]| {
            let events = meetings.iter().flat_map(|m| &m.events);
            events.map(Envelope::to_json).collect::<Vec<_>>()
        };
        let next = calendar(42);
        assert_eq!(json(&calendar(42)), json(&next));
        assert_ne!(json(&calendar(43)), json(&next));
    }

    #[test]
    fn the_next_meeting_day_skips_the_summer_break_and_the_weekends_other_day() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut next = |after| next_meeting_day(&mut rng, after).expect("in range");
        // The season's last Wednesday; the next racing is in September.
        let resumed = next(Date::constant(2027, 7, 14));
        assert!(resumed > Date::constant(2027, 9, 6), "{resumed}");
        assert!(!off_season(resumed));
        // After a Saturday meeting, the Wednesday; after a Tuesday, the Wednesday.
        assert_eq!(
            next(Date::constant(2026, 11, 21)),
            Date::constant(2026, 11, 25)
        );
        assert_eq!(
            next(Date::constant(2026, 11, 24)),
            Date::constant(2026, 11, 25)
        );
        // After a Wednesday, that weekend's Saturday or Sunday.
        let weekend = next(Date::constant(2026, 11, 25));
        assert!(
            [Date::constant(2026, 11, 28), Date::constant(2026, 11, 29)].contains(&weekend),
            "{weekend}"
        );
        assert_eq!(
            next_meeting_day(&mut ChaCha8Rng::seed_from_u64(1), Date::MAX),
            None
        );
    }
}
