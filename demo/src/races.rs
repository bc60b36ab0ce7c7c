//! What a race is: its venue and track, its kind (class, group or griffin), its trip,
//! and the going.

use rand_chacha::ChaCha8Rng;

use crate::draw::weighted;

pub(crate) const SHA_TIN_TURF: &[(i64, u32)] = &[
    (1000, 8),
    (1200, 26),
    (1400, 20),
    (1600, 20),
    (1800, 12),
    (2000, 9),
    (2200, 3),
    (2400, 2),
];
pub(crate) const SHA_TIN_ALL_WEATHER: &[(i64, u32)] = &[(1200, 45), (1650, 40), (1800, 15)];
pub(crate) const HAPPY_VALLEY: &[(i64, u32)] =
    &[(1000, 10), (1200, 40), (1650, 35), (1800, 10), (2200, 5)];
pub(crate) const GRIFFIN_DISTANCES: &[(i64, u32)] = &[(1000, 30), (1200, 70)];

pub(crate) const TURF_GOING: &[(&str, u32)] = &[
    ("GOOD TO FIRM", 25),
    ("GOOD", 45),
    ("GOOD TO YIELDING", 17),
    ("YIELDING", 9),
    ("SOFT", 4),
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Venue {
    ShaTin,
    HappyValley,
}

impl Venue {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Venue::ShaTin => "Sha Tin",
            Venue::HappyValley => "Happy Valley",
        }
    }

    /// Happy Valley's tight track takes at most 12 runners; Sha Tin takes 14.
    pub(crate) fn max_field(self) -> usize {
        match self {
            Venue::ShaTin => 14,
            Venue::HappyValley => 12,
        }
    }
}

/// What kind of race it is, which decides its class, field and prize.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// A rated handicap of Class 1 (best) to 5.
    Handicap(u8),
    /// A pattern race of Group 1 (best) to 3, at set weights.
    Group(u8),
    /// A race for unraced newcomers, at set weights.
    Griffin,
}

impl Kind {
    pub(crate) fn class(self) -> String {
        match self {
            Kind::Handicap(c) => format!("Class {c}"),
            Kind::Group(g) => format!("Group {g}"),
            Kind::Griffin => "Griffin".to_owned(),
        }
    }

    /// Reads back what `class` writes on a card; `None` for any other class.
    pub(crate) fn parse(class: &str) -> Option<Kind> {
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
    pub(crate) fn prize(self) -> i64 {
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
    pub(crate) fn pace(self) -> f64 {
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
pub(crate) struct RacePlan {
    pub(crate) number: i64,
    /// The theme word of a handicap or griffin, or a pattern race's whole name.
    label: String,
    pub(crate) kind: Kind,
    pub(crate) distance: i64,
    all_weather: bool,
}

impl RacePlan {
    pub(crate) fn name(&self) -> String {
        match self.kind {
            Kind::Handicap(_) => format!("{} HANDICAP", self.label),
            Kind::Group(_) => self.label.clone(),
            Kind::Griffin => format!("{} GRIFFIN PLATE", self.label),
        }
    }
}

/// A meeting's going on each of its tracks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ground {
    turf: &'static str,
    all_weather: &'static str,
}

impl Ground {
    /// The day's weather: the turf's going, and the all-weather's to match it.
    pub(crate) fn draw(rng: &mut ChaCha8Rng) -> Ground {
        let turf = weighted(rng, TURF_GOING);
        Ground {
            turf,
            all_weather: all_weather_going(rng, turf),
        }
    }

    pub(crate) fn going(&self, race: &RacePlan) -> &'static str {
        if race.all_weather {
            self.all_weather
        } else {
            self.turf
        }
    }
}

pub(crate) fn race_plan(
    number: i64,
    label: &str,
    kind: Kind,
    distance: i64,
    all_weather: bool,
) -> RacePlan {
    RacePlan {
        number,
        label: label.to_owned(),
        kind,
        distance,
        all_weather,
    }
}

/// The all-weather track drains fast, so it only turns wet when the turf is soft.
fn all_weather_going(rng: &mut ChaCha8Rng, turf: &str) -> &'static str {
    match turf {
        "GOOD TO YIELDING" => "WET FAST",
        "YIELDING" | "SOFT" => "WET SLOW",
        _ => weighted(rng, &[("GOOD", 85), ("WET FAST", 15)]),
    }
}
