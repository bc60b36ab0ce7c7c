//! The horses and the people around them: names, brands, owners, trainers and jockeys,
//! and each horse's rating and record as the season moves them.

use racing_events::HorseProfile;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::calendar::MEETINGS;
use crate::draw::{normal, weighted};
use crate::races::Kind;

/// Somewhat fewer than HK's ~1,350 horses in training, so each still runs 7-8 times.
const HORSES: usize = 1_200;
/// A horse sits out this many meetings after running: HK horses race every 2-4 weeks.
const REST_MEETINGS: usize = 3;

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
pub(crate) const JOCKEYS: &[(&str, u32)] = &[
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

/// Stallions whose stock races in Hong Kong: sires, and sires of dams.
const SIRES: &[&str] = &[
    "Written Tycoon",
    "Snitzel",
    "I Am Invincible",
    "Street Boss",
    "Exceed And Excel",
    "Zoustar",
    "Savabeel",
    "Pierro",
    "Dundeel",
    "Fastnet Rock",
    "Sebring",
    "So You Think",
    "Frankel",
    "Dubawi",
    "Galileo",
    "Not A Single Doubt",
    "Deep Field",
    "Capitalist",
    "Redoute's Choice",
    "More Than Ready",
];

/// Words of dams' names, two a name.
const DAM_WORDS: &[&str] = &[
    "Silver", "Lady", "Moon", "Rose", "Star", "Belle", "Queen", "Dancer", "Grace", "Misty", "Ruby",
    "Whisper", "Jade", "Velvet", "Aurora", "Magic",
];

/// How horses come to Hong Kong: private purchase, as a griffin, from the international
/// sale.
const IMPORT_TYPES: &[(&str, u32)] = &[("PP", 45), ("PPG", 40), ("ISG", 15)];

/// A stable number from a horse's brand and a salt, so that a record detail the season
/// does not change (pedigree, body weight) is the same wherever it is drawn, without
/// drawing on the season's generator.
fn stable(no: &str, salt: u64) -> u64 {
    no.bytes().fold(0xcbf2_9ce4_8422_2325 ^ salt, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// How a horse came to Hong Kong, by brand, in the shares of `IMPORT_TYPES`.
fn import_type(no: &str) -> &'static str {
    let total: u32 = IMPORT_TYPES.iter().map(|&(_, w)| w).sum();
    let mut roll = (stable(no, 5) % u64::from(total)) as u32;
    for &(kind, w) in IMPORT_TYPES {
        if roll < w {
            return kind;
        }
        roll -= w;
    }
    "PP"
}

fn pick<'a>(list: &[&'a str], no: &str, salt: u64) -> &'a str {
    list[(stable(no, salt) % list.len() as u64) as usize]
}

/// A horse's body weight on race day in pounds, declared before the race: about its own
/// weight (1,058 to 1,192 lb, by brand) give or take a few pounds.
pub(crate) fn body_weight(rng: &mut ChaCha8Rng, horse_no: &str) -> i64 {
    1058 + (stable(horse_no, 7) % 135) as i64 + rng.random_range(-8..=8)
}

#[derive(Debug)]
pub(crate) struct Horse {
    pub(crate) no: String,
    pub(crate) name: String,
    country: &'static str,
    colour: &'static str,
    pub(crate) sex: &'static str,
    age: i64,
    pub(crate) trainer: &'static str,
    owner: String,
    /// The handicapper's rating, which places the horse in a class and moves with results.
    pub(crate) rating: i64,
    /// The rating at the start of the current season: as its last run before the season
    /// left it.
    pub(crate) start_rating: i64,
    /// How the horse came to Hong Kong: `PP`, `PPG` or `ISG`.
    import_type: &'static str,
    /// Ability the rating has not caught: what makes a horse well or badly handicapped.
    pub(crate) edge: f64,
    /// The first meeting the horse can run at: some newcomers join during the season.
    arrival: usize,
    pub(crate) last_meeting: Option<usize>,
    pub(crate) starts: i64,
    pub(crate) wins: i64,
    pub(crate) seconds: i64,
    pub(crate) thirds: i64,
    /// Prize money of its career: every run the feed has a result of.
    pub(crate) stakes: i64,
    /// Prize money of the current season's runs.
    pub(crate) season_stakes: i64,
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

    pub(crate) fn rested(&self, meeting: usize) -> bool {
        self.last_meeting
            .is_none_or(|last| meeting - last > REST_MEETINGS)
    }

    pub(crate) fn available(&self, meeting: usize) -> bool {
        meeting >= self.arrival
    }

    pub(crate) fn griffin(&self) -> bool {
        self.starts == 0 && self.age <= 4
    }

    /// How well the horse suits a race: 0 fits, 1 is a class away, 2 is a poor fit.
    pub(crate) fn fit(&self, kind: Kind) -> u8 {
        match kind {
            // Newcomers wait for a griffin race if there is one.
            Kind::Handicap(_) if self.griffin() => 2,
            Kind::Handicap(c) => self.class().abs_diff(c).min(2),
            Kind::Group(_) => self.class().saturating_sub(1).min(2),
            Kind::Griffin if self.griffin() => 0,
            Kind::Griffin => 2,
        }
    }

    pub(crate) fn profile(&self) -> HorseProfile {
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
            // The first three, as a place bet pays: wins, seconds and thirds.
            places: self.wins + self.seconds + self.thirds,
            seconds: Some(self.seconds),
            thirds: Some(self.thirds),
            sire: Some(pick(SIRES, &self.no, 1).to_owned()),
            dam: Some(format!(
                "{} {}",
                pick(DAM_WORDS, &self.no, 2),
                pick(DAM_WORDS, &self.no, 3)
            )),
            dam_sire: Some(pick(SIRES, &self.no, 4).to_owned()),
            import_type: Some(self.import_type.to_owned()),
            current_rating: Some(self.rating.clamp(0, 200)),
            season_start_rating: Some(self.start_rating.clamp(0, 200)),
            season_stakes: Some(self.season_stakes),
        }
    }
}

pub(crate) fn make_horses(rng: &mut ChaCha8Rng) -> Vec<Horse> {
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
        import_type: import_type(&no),
        no,
        name,
        country: weighted(rng, COUNTRIES),
        colour: weighted(rng, COLOURS),
        sex,
        age,
        trainer: TRAINERS[rng.random_range(0..TRAINERS.len())],
        owner: owner(rng),
        rating,
        start_rating: rating,
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
        seconds: 0,
        thirds: 0,
        stakes: 0,
        season_stakes: 0,
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
