//! The facts feeders publish: the seven event bodies, their fields with what the schema
//! says of each, and the subject each goes to. How a body is validated is `validate`'s;
//! how it travels, `envelope`'s.

use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::patterns;
use crate::transport::{race_subject, SUBJECT_ROOT};
use crate::values::RaceStatus;

/// The facts feeders publish, named in the past tense.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A whole horse profile; replaces the previous one.
    HorseProfileUpdated(Box<HorseProfile>),
    /// A race card; replaces that race's card.
    RaceCardDeclared(RaceCard),
    /// A runner withdrawn from a declared race.
    RunnerScratched(RunnerScratched),
    /// A whole race result; an amendment is published again, whole.
    RaceResultPublished(RaceResult),
    /// New win odds for some runners of a race.
    OddsUpdated(OddsUpdated),
    /// A venue's race withdrawn from every read model: card, result and form entries.
    RaceRetracted(RaceRetracted),
    /// A race's status changed: betting open or suspended, off, finished, abandoned,
    /// void (v1.2).
    RaceStatusChanged(RaceStatusChanged),
}

/// A horse profile, exactly the fields of the API's horse profile (docs/api.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HorseProfile {
    /// Brand number, e.g. `E271`.
    #[schemars(regex(pattern = patterns::HORSE_NO))]
    pub horse_no: String,
    /// Registered name.
    #[schemars(regex(pattern = patterns::TEXT))]
    pub horse_name: String,
    /// Short country code, e.g. `NZ`.
    pub country_of_origin: String,
    /// Coat colour, e.g. `Bay`.
    pub colour: String,
    /// e.g. `Gelding`.
    pub sex: String,
    /// Years.
    #[schemars(range(min = 0, max = 40))]
    pub age: i64,
    /// Current trainer.
    pub trainer: String,
    /// Current owner.
    pub owner: String,
    /// Career prize money in whole Hong Kong dollars.
    #[schemars(range(min = 0))]
    pub total_stakes: i64,
    /// Career starts.
    #[schemars(range(min = 0))]
    pub starts: i64,
    /// Career wins, no more than `starts`.
    #[schemars(range(min = 0))]
    pub wins: i64,
    /// Career places, no more than `starts`: finishes in the first three, wins included
    /// (what a place bet pays on). With `seconds` and `thirds` (v1.3), their sum with
    /// `wins`.
    #[schemars(range(min = 0))]
    pub places: i64,
    /// Career seconds (v1.3, optional, with `thirds`), 0 or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0), extend("x-since" = "1.3"))]
    pub seconds: Option<i64>,
    /// Career thirds (v1.3, optional, with `seconds`), 0 or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0), extend("x-since" = "1.3"))]
    pub thirds: Option<i64>,
    /// Sire (v1.1, optional): 1 to 64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64), regex(pattern = patterns::TEXT), extend("x-since" = "1.1"))]
    pub sire: Option<String>,
    /// Dam (v1.1, optional): 1 to 64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64), regex(pattern = patterns::TEXT), extend("x-since" = "1.1"))]
    pub dam: Option<String>,
    /// The dam's sire (v1.1, optional): 1 to 64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64), regex(pattern = patterns::TEXT), extend("x-since" = "1.1"))]
    pub dam_sire: Option<String>,
    /// Import type (v1.1, optional), e.g. `PP`, `PPG`, `ISG`, `VIS`: 1 to 8 upper-case
    /// letters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = patterns::IMPORT_TYPE), extend("x-since" = "1.1"))]
    pub import_type: Option<String>,
    /// Current rating (v1.1, optional), 0 to 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 200), extend("x-since" = "1.1"))]
    pub current_rating: Option<i64>,
    /// Rating at the start of the season (v1.1, optional), 0 to 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 200), extend("x-since" = "1.1"))]
    pub season_start_rating: Option<i64>,
    /// Prize money this season (v1.1, optional), whole Hong Kong dollars, 0 or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0), extend("x-since" = "1.1"))]
    pub season_stakes: Option<i64>,
}

/// A declared race: race details and its runners, as the API's race card (docs/api.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RaceCard {
    /// Meeting date, `YYYY-MM-DD`.
    #[schemars(regex(pattern = patterns::DATE), extend("format" = "date"))]
    pub date: String,
    /// Racecourse, e.g. `Sha Tin`.
    #[schemars(regex(pattern = patterns::TEXT))]
    pub venue: String,
    /// 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    pub race_number: i64,
    /// e.g. `THE SHA TIN TROPHY`.
    pub race_name: String,
    /// Metres, 100 to 10,000.
    #[schemars(range(min = 100, max = 10000))]
    pub distance: i64,
    /// Race class, carried as a string (`Class 4`, `Group 1`, `Griffin`).
    pub class: String,
    /// Declared runners.
    #[serde(deserialize_with = "objects")]
    pub runners: Vec<CardRunner>,
}

/// A declared runner of a race card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CardRunner {
    /// Brand number.
    #[schemars(regex(pattern = patterns::HORSE_NO))]
    pub horse_no: String,
    /// Registered name.
    #[schemars(regex(pattern = patterns::TEXT))]
    pub horse_name: String,
    /// Declared jockey.
    pub jockey: String,
    /// Trainer.
    pub trainer: String,
    /// Barrier draw, 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    pub draw: i64,
    /// Weight carried, pounds.
    #[schemars(range(min = 50, max = 200))]
    pub weight: i64,
}

/// A runner withdrawn from a race card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunnerScratched {
    /// Meeting date, `YYYY-MM-DD`.
    #[schemars(regex(pattern = patterns::DATE), extend("format" = "date"))]
    pub date: String,
    /// The racecourse whose race it is; without it (a v1 feeder), the race of that number
    /// at every venue of the date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = patterns::TEXT), extend("x-since" = "1.1"))]
    pub venue: Option<String>,
    /// Race within the meeting, 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    pub race_number: i64,
    /// The withdrawn horse.
    #[schemars(regex(pattern = patterns::HORSE_NO))]
    pub horse_no: String,
}

/// The official result of one race, as the API's race result, with the feed's rules
/// (docs/feeding.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RaceResult {
    /// Meeting date, `YYYY-MM-DD`.
    #[schemars(regex(pattern = patterns::DATE), extend("format" = "date"))]
    pub date: String,
    /// Racecourse.
    #[schemars(regex(pattern = patterns::TEXT))]
    pub venue: String,
    /// Race within the meeting, 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    pub race_number: i64,
    /// Race name.
    pub race_name: String,
    /// Metres, 100 to 10,000.
    #[schemars(range(min = 100, max = 10000))]
    pub distance: i64,
    /// Track condition, e.g. `GOOD TO FIRM`.
    pub going: String,
    /// Every runner, placed or not.
    #[serde(deserialize_with = "objects")]
    pub runners: Vec<ResultRunner>,
    /// Race class (v1.1, optional), as in a card (`Class 4`, `Group 1`, `Griffin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-since" = "1.1"))]
    pub class: Option<String>,
}

/// One runner of a race result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResultRunner {
    /// Placing from 1; shared in a dead heat; `null` for no placing.
    #[serde(deserialize_with = "nullable")]
    #[schemars(with = "patterns::Nullable<i64>", range(min = 1, max = 99))]
    pub position: Option<i64>,
    /// Brand number.
    #[schemars(regex(pattern = patterns::HORSE_NO))]
    pub horse_no: String,
    /// Registered name.
    #[schemars(regex(pattern = patterns::TEXT))]
    pub horse_name: String,
    /// Jockey who rode.
    pub jockey: String,
    /// Trainer.
    pub trainer: String,
    /// `m:ss.cc`, or `null` where there is none.
    #[serde(deserialize_with = "nullable")]
    #[schemars(with = "patterns::Nullable<String>", regex(pattern = patterns::FINISH_TIME))]
    pub finish_time: Option<String>,
    /// Final decimal win odds, or `null`.
    #[serde(deserialize_with = "nullable")]
    #[schemars(with = "patterns::Nullable<f64>", range(min = 1.0))]
    pub win_odds: Option<f64>,
    /// `true` when the position is shared.
    #[serde(default)]
    pub dead_heat: bool,
    /// `null` for a normal finisher, otherwise the official code (`PU`, `WV-A`, ...).
    #[serde(deserialize_with = "nullable")]
    #[schemars(with = "patterns::Nullable<String>", regex(pattern = patterns::STATUS_CODE))]
    pub status: Option<String>,
    /// Lengths behind the winner as officially written (v1.1, optional): 1 to 8 of
    /// `0-9 A-Z - /`, such as `-` (the winner), `SH`, `3/4` or `1-1/4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = patterns::LBW), extend("x-since" = "1.1"))]
    pub lbw: Option<String>,
    /// Position at each call of the race (v1.1, optional): 1 to 6 integers of 1 to 99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 6), inner(range(min = 1, max = 99)), extend("x-since" = "1.1"))]
    pub running_positions: Option<Vec<i64>>,
    /// Weight carried in pounds (v1.1, optional), 90 to 160.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 90, max = 160), extend("x-since" = "1.1"))]
    pub actual_weight: Option<i64>,
    /// The horse's body weight declared before the race, pounds (v1.1, optional), 700 to
    /// 1,500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 700, max = 1500), extend("x-since" = "1.1"))]
    pub declared_weight: Option<i64>,
    /// Barrier draw (v1.1, optional), 1 to 99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 99), extend("x-since" = "1.1"))]
    pub draw: Option<i64>,
}

/// New win odds for some runners of a race; unlisted runners keep their last price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OddsUpdated {
    /// Meeting date, `YYYY-MM-DD`.
    #[schemars(regex(pattern = patterns::DATE), extend("format" = "date"))]
    pub date: String,
    /// The racecourse whose race it is; without it (a v1 feeder), the race of that number
    /// at every venue of the date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = patterns::TEXT), extend("x-since" = "1.1"))]
    pub venue: Option<String>,
    /// Race within the meeting, 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    pub race_number: i64,
    /// The prices that changed.
    #[serde(deserialize_with = "objects")]
    #[schemars(length(min = 1))]
    pub odds: Vec<RunnerOdds>,
}

/// A race that should never have been published at this venue (a wrong date, number or
/// venue, or a race declared void): its card and result leave every read model. Its odds
/// events stay in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-since" = "1.1"))]
pub struct RaceRetracted {
    /// Meeting date, `YYYY-MM-DD`.
    #[schemars(regex(pattern = patterns::DATE), extend("format" = "date"))]
    pub date: String,
    /// Racecourse of the race withdrawn; another venue's race of that number stays.
    #[schemars(regex(pattern = patterns::TEXT))]
    pub venue: String,
    /// Race within the meeting, 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    pub race_number: i64,
    /// Why, for people: 1 to 200 characters.
    #[schemars(length(min = 1, max = 200), regex(pattern = patterns::TEXT))]
    pub reason: String,
}

/// A race's status as the feed sets it (v1.2): the status and, for people, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-since" = "1.2"))]
pub struct RaceStatusChanged {
    /// Meeting date, `YYYY-MM-DD`.
    #[schemars(regex(pattern = patterns::DATE), extend("format" = "date"))]
    pub date: String,
    /// The racecourse whose race it is; without it, the race of that number at every venue
    /// of the date (as for odds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = patterns::TEXT))]
    pub venue: Option<String>,
    /// Race within the meeting, 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    pub race_number: i64,
    /// One of [`RaceStatus::ALL`], as written on the wire; [`RaceStatusChanged::status`]
    /// gives it typed. Kept as text so that a value outside the list is a dead letter
    /// naming the field, not a parse error naming a column.
    #[schemars(transform = patterns::race_status)]
    pub status: String,
    /// Why, for people (a reweigh, a false start): 1 to 200 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200), regex(pattern = patterns::TEXT))]
    pub reason: Option<String>,
}

impl RaceStatusChanged {
    /// The status, typed; `None` only for an event that has not been validated.
    pub fn status(&self) -> Option<RaceStatus> {
        RaceStatus::parse(&self.status)
    }
}

/// A runner's current decimal prices: win, place, or both (v1.2 adds place and makes
/// win optional when place is given).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = patterns::win_or_place)]
pub struct RunnerOdds {
    /// Brand number.
    #[schemars(regex(pattern = patterns::HORSE_NO))]
    pub horse_no: String,
    /// Decimal win odds, stake included; at least 1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1.0))]
    pub win_odds: Option<f64>,
    /// Decimal place odds, stake included; at least 1.0 (v1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1.0), extend("x-since" = "1.2"))]
    pub place_odds: Option<f64>,
}

impl Event {
    /// The `type` name of the envelope.
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::HorseProfileUpdated(_) => "HorseProfileUpdated",
            Event::RaceCardDeclared(_) => "RaceCardDeclared",
            Event::RunnerScratched(_) => "RunnerScratched",
            Event::RaceResultPublished(_) => "RaceResultPublished",
            Event::OddsUpdated(_) => "OddsUpdated",
            Event::RaceRetracted(_) => "RaceRetracted",
            Event::RaceStatusChanged(_) => "RaceStatusChanged",
        }
    }

    /// The subject this event must be published on; its tokens repeat the payload.
    pub fn subject(&self) -> String {
        match self {
            Event::HorseProfileUpdated(p) => format!("{SUBJECT_ROOT}.horses.{}", p.horse_no),
            Event::RaceCardDeclared(c) => race_subject("cards", &c.date, c.race_number),
            Event::RunnerScratched(s) => race_subject("cards", &s.date, s.race_number),
            Event::RaceResultPublished(r) => race_subject("results", &r.date, r.race_number),
            Event::OddsUpdated(o) => race_subject("odds", &o.date, o.race_number),
            Event::RaceRetracted(r) => race_subject("results", &r.date, r.race_number),
            Event::RaceStatusChanged(s) => race_subject("status", &s.date, s.race_number),
        }
    }
}

/// A JSON object and nothing else. serde's derived structs also accept an array of their
/// fields in order (`["E271", "GOLDEN SIXTY", ...]`), which the contract does not: a
/// feeder that sends one has a broken encoder, and the positions would be guesses.
pub(crate) struct Object<T>(pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Fields(PhantomData)).map(Object)
    }
}

/// A list of JSON objects (`runners`, `odds`), each refused if it is an array.
fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    let list = Vec::<Object<T>>::deserialize(d)?;
    Ok(list.into_iter().map(|Object(item)| item).collect())
}

/// A field that must be present but may be `null`: serde would read an absent `Option`
/// as `None`, and the contract makes only `dead_heat` optional.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::deserialize(d)
}
