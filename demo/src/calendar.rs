//! The season's calendar: HK's racing days, and each meeting's plan (venue, races,
//! pattern races, the going).

use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use rand::seq::{index, SliceRandom};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::draw::weighted;
use crate::races::{
    race_plan, Ground, Kind, RacePlan, Venue, GRIFFIN_DISTANCES, HAPPY_VALLEY, SHA_TIN_ALL_WEATHER,
    SHA_TIN_TURF,
};

/// About one season: HK runs 88 meetings from September to July.
pub(crate) const MEETINGS: usize = 80;

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
pub(crate) const PATTERN_RACES: &[(&str, u8, i64)] = &[
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

#[derive(Debug)]
pub(crate) struct MeetingPlan {
    pub(crate) date: Date,
    pub(crate) venue: Venue,
    /// Wednesday meetings race under lights.
    evening: bool,
    ground: Ground,
    pub(crate) races: Vec<RacePlan>,
}

impl MeetingPlan {
    pub(crate) fn going(&self, race: &RacePlan) -> &'static str {
        self.ground.going(race)
    }

    /// Minutes after midnight, HK time, at which a race jumps.
    pub(crate) fn post_time(&self, race_number: i64) -> i64 {
        if self.evening {
            18 * 60 + 45 + (race_number - 1) * 30
        } else {
            13 * 60 + (race_number - 1) * 35
        }
    }
}

/// Hong Kong's time, UTC+8 all year: the zone of every planned time of the demo.
pub(crate) fn hong_kong() -> TimeZone {
    TimeZone::fixed(jiff::tz::offset(8))
}

/// What goes wrong in one past race, chosen up front so that every season has some.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Incident {
    pub(crate) dead_heat: bool,
    pub(crate) non_finisher: bool,
    pub(crate) late_withdrawal: bool,
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
pub(crate) fn next_meeting_day(rng: &mut ChaCha8Rng, after: Date) -> Option<Date> {
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

/// The season `date` races in, by the year it starts: HK's seasons start in September
/// (the service counts a season's figures the same way).
pub(crate) fn season_of(date: Date) -> i16 {
    if date.month() >= 9 {
        date.year()
    } else {
        date.year() - 1
    }
}

/// HK's season runs from early September to mid-July.
pub(crate) fn off_season(date: Date) -> bool {
    matches!((date.month(), date.day()), (7, 17..) | (8, _) | (9, ..=6))
}

/// The season's meetings up to `today`'s, drawing their pattern races from `pattern`.
pub(crate) fn plan_meetings(
    rng: &mut ChaCha8Rng,
    today: Date,
    pattern: &mut Vec<(&'static str, u8, i64)>,
) -> Vec<MeetingPlan> {
    meeting_days(rng, today)
        .into_iter()
        .map(|date| plan_meeting(rng, date, pattern))
        .collect()
}

pub(crate) fn plan_meeting(
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

/// Picks the past races that get a dead heat, a faller and a late withdrawal.
pub(crate) fn plan_incidents(rng: &mut ChaCha8Rng, races: usize) -> Vec<Incident> {
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
