//! The race-card documents: a date's card, its scratched runners left out; and their
//! digests, which change exactly where their bytes do.

use std::collections::BTreeMap;
use std::sync::Arc;

use racing_events::{CardRunner, RaceCard};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use xxhash_rust::xxh3::Xxh3;

use super::json::to_json;
use super::meeting::{main_meeting, venues, Meeting};
#[cfg(feature = "openapi")]
use super::status::RaceStatusName;
use crate::status::Status;

/// The race card of a date: races in ascending race number,
/// scratched runners removed.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RaceCard, examples(json!({
    "date": "2026-11-21", "venue": "Sha Tin",
    "races": [{
        "race_number": 1, "race_name": "THE SHA TIN TROPHY", "distance": 1600,
        "class": "Group 3",
        "runners": [
            {"horse_no": "E271", "horse_name": "GOLDEN SIXTY", "jockey": "Z Purton",
             "trainer": "F C Lor", "draw": 4, "weight": 133,
             "form": {"figures": "11/2131", "runs": 24, "days_since_run": 21,
                      "c": true, "d": true, "cd": true,
                      "course": {"runs": 14, "wins": 11, "places": 13},
                      "distance": {"runs": 12, "wins": 10, "places": 12},
                      "going": [{"going": "GOOD", "runs": 18, "wins": 15, "places": 17},
                                {"going": "GOOD TO FIRM", "runs": 6, "wins": 4, "places": 6}],
                      "jockey_14d": {"rides": 31, "wins": 8, "strike_rate": 25.8},
                      "trainer_14d": {"rides": 12, "wins": 2, "strike_rate": 16.7}}}
        ]
    }]
}))))]
pub struct CardDoc<'a> {
    /// Meeting date, `YYYY-MM-DD`; for `/racecards/today`, the day it is in the service's
    /// time zone.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse.
    venue: &'a str,
    /// Only on a date with more than one meeting: every venue of the day.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// The meeting's races, ascending race number: each as [`card_race`] rendered it.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<CardRace>))]
    races: &'a [&'a RawValue],
}

/// One race of a race card.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardRace<'a> {
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: i64,
    /// Race name.
    race_name: &'a str,
    /// Race distance in metres.
    distance: i64,
    /// Race class, carried as a string (`Class 4`, `Group 1`, `Griffin`).
    class: &'a str,
    /// The race's status: left out for a race never given one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = RaceStatusName, required = false))]
    status: Option<&'a str>,
    /// When the race took its status (the `occurred_at` of the event that gave it, or of
    /// the result that finished it); left out with `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = String, format = DateTime, required = false)
    )]
    status_at: Option<&'a str>,
    /// Why, where the feed said; left out where it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    status_reason: Option<&'a str>,
    /// Declared runners, scratched ones removed.
    runners: Vec<CardRunnerDoc<'a>>,
}

/// A declared runner of a race card.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = CardRunner))]
pub struct CardRunnerDoc<'a> {
    /// Brand number.
    horse_no: &'a str,
    /// Registered name.
    horse_name: &'a str,
    /// Declared jockey.
    jockey: &'a str,
    /// Trainer.
    trainer: &'a str,
    /// Barrier draw, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    draw: i64,
    /// Weight carried, in pounds.
    weight: i64,
    /// The runner's form as of the race's date: only results of earlier dates count,
    /// whenever they were published (`docs/api.md`, "Form on the card").
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = RunnerForm, nullable = false))]
    form: Option<Box<RawValue>>,
}

impl<'a> CardRunnerDoc<'a> {
    fn new(r: &'a CardRunner, form: Option<Box<RawValue>>) -> Self {
        CardRunnerDoc {
            horse_no: &r.horse_no,
            horse_name: &r.horse_name,
            jockey: &r.jockey,
            trainer: &r.trainer,
            draw: r.draw,
            weight: r.weight,
            form,
        }
    }
}

// As a card serves it: its horse's part as stored ([`HorseForm`]) and its people's
// strike rates, summed where the card is rendered ([`served_form`], which writes what this
// would serialise to). This type is what the OpenAPI document describes.
/// A runner's form as of its race's date, from the results of earlier dates alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(not(feature = "openapi"), allow(dead_code))]
pub struct RunnerForm {
    /// Form figures: the horse's last six races before this one, newest last, one
    /// character each: its position (`1` to `9`, `0` for tenth or worse or no placing),
    /// or a letter for a runner with an official code: `P` pulled up, `U` unseated rider,
    /// `F` fell, `X` did not finish, `D` disqualified, `W` withdrawn, `T` took no part,
    /// otherwise the code's first letter. A `/` stands between races of two Hong Kong
    /// seasons (September to August). Empty for a horse that has raced nowhere.
    pub figures: String,
    /// Races it took part in before this one (withdrawals and `TNP` left out).
    pub runs: u32,
    /// Days from its last race taken part in to this race's date; `null` for none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub days_since_run: Option<i64>,
    /// `C`: it has won at this racecourse.
    pub c: bool,
    /// `D`: it has won over this distance.
    pub d: bool,
    /// `CD`: it has won at this racecourse over this distance, in one race.
    pub cd: bool,
    /// Its record at this racecourse.
    pub course: Record,
    /// Its record over this distance.
    pub distance: Record,
    /// Its record on each going it has raced on, in the going's name order.
    pub going: Vec<GoingRecord>,
    /// The declared jockey's rides in the 14 days before the race's date.
    pub jockey_14d: Strike,
    /// The trainer's runners in the 14 days before the race's date.
    pub trainer_14d: Strike,
}

/// The horse's part of a runner's form, as a race's form record stores it: every field of
/// [`RunnerForm`] but its people's strike rates, which follow it there, and change with
/// every result of their 14 days where this changes only with the horse's own runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct HorseForm {
    pub figures: String,
    pub runs: u32,
    pub days_since_run: Option<i64>,
    pub c: bool,
    pub d: bool,
    pub cd: bool,
    pub course: Record,
    pub distance: Record,
    pub going: Vec<GoingRecord>,
}

/// A runner's form as a card serves it ([`RunnerForm`]): `horse`, its part as stored (a
/// JSON object), with the jockey's and the trainer's strike rates after its fields.
pub(crate) fn served_form(horse: &RawValue, jockey: Strike, trainer: Strike) -> Box<RawValue> {
    let fields = horse.get().strip_suffix('}').unwrap_or(horse.get());
    let mut json = String::with_capacity(fields.len() + 128);
    json.push_str(fields);
    for (name, strike) in [(",\"jockey_14d\":", jockey), (",\"trainer_14d\":", trainer)] {
        json.push_str(name);
        // Plain data: serialising it cannot fail.
        json.push_str(&serde_json::to_string(&strike).unwrap_or_default());
    }
    json.push('}');
    // An object closed again: it parses as the one it was made from did.
    RawValue::from_string(json).unwrap_or_else(|_| horse.to_owned())
}

/// Runs, wins and places (the first three) of some runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Record {
    /// Races taken part in (withdrawals and `TNP` left out).
    pub runs: u32,
    /// Of them, won (dead heats for first included).
    pub wins: u32,
    /// Of them, finished first, second or third.
    pub places: u32,
}

/// A runner's record on one going.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GoingRecord {
    /// The going, as results give it (`GOOD`, `GOOD TO FIRM`).
    pub going: String,
    /// Races taken part in on it.
    pub runs: u32,
    /// Of them, won.
    pub wins: u32,
    /// Of them, first, second or third.
    pub places: u32,
}

/// A jockey's or a trainer's rides and wins over a span, and the strike rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Strike {
    /// Rides (for a trainer, runners) that took part.
    pub rides: u32,
    /// Of them, won.
    pub wins: u32,
    /// Wins in percent of rides, 1 decimal place (0.0 without rides).
    pub strike_rate: f64,
}

/// The horse's part of the form of each runner of a race, by horse number: what a race's
/// card form record holds.
pub(crate) type RaceForm = BTreeMap<String, HorseForm>;

/// A race's card form record as a card renders it: each runner's horse's part as stored,
/// by horse number, copied into the card as it is.
pub(crate) type StoredRaceForm = BTreeMap<String, Box<RawValue>>;

/// Renders one race of a card, without its scratched runners, with its status where it has
/// one and each runner's form where it has one: its horse's part as stored, with the
/// strike rates of its jockey and trainer, `strikes[i]` for the card's runner `i`. The
/// race as a card document lists it.
pub(crate) fn card_race(
    c: &RaceCard,
    scratched: impl Fn(&str) -> bool,
    status: Option<&Status>,
    forms: Option<&StoredRaceForm>,
    strikes: &[(Strike, Strike)],
) -> Box<RawValue> {
    let served = |form: Option<ServedParts<'_>>| {
        form.map(|(horse, jockey, trainer)| served_form(horse, jockey, trainer))
    };
    let race = race_doc(c, scratched, status, (forms, strikes), served);
    // A race is strings, integers and the stored forms: serialising it cannot fail.
    serde_json::value::to_raw_value(&race).unwrap_or_default()
}

/// The digest of the part [`card_race`] renders of the same race, worked out without
/// rendering it: the 128-bit xxh3 of the race's listing's digest ([`card_race_listing`]),
/// then of each listed runner's form's parts (its horse's part as stored, the strike
/// rates). The part is those parts put together in a fixed place each, so that two races
/// digest alike where their parts are the same bytes, and otherwise not (but for the
/// hash's collisions).
pub(crate) fn card_race_digest(
    c: &RaceCard,
    listing: &Listing,
    forms: Option<&StoredRaceForm>,
    strikes: &[(Strike, Strike)],
) -> u128 {
    // The parts laid end to end and hashed at once: the same digest as hashing them one
    // by one, without the many short updates.
    let mut parts = Vec::with_capacity(16 + 256 * listing.listed.len());
    parts.extend_from_slice(&listing.digest.to_le_bytes());
    for &i in listing.listed.iter() {
        let horse = c.runners.get(i).map(|r| &r.horse_no);
        let Some(horse) = horse.and_then(|horse| forms?.get(horse)) else {
            parts.push(0);
            continue;
        };
        let (jockey, trainer) = strikes.get(i).copied().unwrap_or_default();
        parts.push(1);
        parts.extend_from_slice(&(horse.get().len() as u64).to_le_bytes());
        parts.extend_from_slice(horse.get().as_bytes());
        for strike in [jockey, trainer] {
            parts.extend_from_slice(&strike.rides.to_le_bytes());
            parts.extend_from_slice(&strike.wins.to_le_bytes());
            parts.extend_from_slice(&strike.strike_rate.to_bits().to_le_bytes());
        }
    }
    xxhash_rust::xxh3::xxh3_128(&parts)
}

/// What a race's part shows besides its runners' forms, digested: the race as
/// [`card_race`] serialises it without any runner's form, and the card's runners it lists
/// (its scratched ones left out). It changes only with the race's card, scratchings and
/// status, so that a fold keeps it while their records stay the same.
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    /// The 128-bit xxh3 of the race without its runners' forms, as serde writes it.
    digest: u128,
    /// The card's runners it lists, by their place on the card, in order.
    listed: Arc<[usize]>,
}

/// The listing of a race ([`Listing`]), from its card, scratched runners and status.
pub(crate) fn card_race_listing(
    c: &RaceCard,
    scratched: impl Fn(&str) -> bool,
    status: Option<&Status>,
) -> Listing {
    let listed = c
        .runners
        .iter()
        .enumerate()
        .filter(|(_, r)| !scratched(&r.horse_no))
        .map(|(i, _)| i)
        .collect();
    let race = race_doc(c, scratched, status, (None, &[]), |_| None);
    let mut h = Xxh3::new();
    super::json::hash_into(&mut h, &race);
    Listing {
        digest: h.digest128(),
        listed,
    }
}

/// What a listed runner's served form is made of ([`served_form`]): its horse's part as
/// stored, its jockey's and its trainer's strike rates.
type ServedParts<'a> = (&'a RawValue, Strike, Strike);

/// One race of a card as [`card_race`] serialises it, each listed runner's form what
/// `form` makes of its parts (`None`: the runner has no form).
fn race_doc<'a>(
    c: &'a RaceCard,
    scratched: impl Fn(&str) -> bool,
    status: Option<&'a Status>,
    (forms, strikes): (Option<&'a StoredRaceForm>, &[(Strike, Strike)]),
    mut form: impl FnMut(Option<ServedParts<'a>>) -> Option<Box<RawValue>>,
) -> CardRace<'a> {
    let [status, status_at, status_reason] = Status::fields(status);
    CardRace {
        race_number: c.race_number,
        race_name: &c.race_name,
        distance: c.distance,
        class: &c.class,
        status,
        status_at,
        status_reason,
        runners: c
            .runners
            .iter()
            .enumerate()
            .filter(|(_, r)| !scratched(&r.horse_no))
            .map(|(i, r)| {
                let parts = forms.and_then(|f| f.get(&r.horse_no)).map(|horse| {
                    let (jockey, trainer) = strikes.get(i).copied().unwrap_or_default();
                    (&**horse, jockey, trainer)
                });
                CardRunnerDoc::new(r, form(parts))
            })
            .collect(),
    }
}

/// The race-card documents of a date, per venue and for the day's main meeting (`None`),
/// from its meetings' races, each as [`card_race`] rendered it.
pub(crate) fn render_cards<R: AsRef<RawValue>>(
    date: &str,
    meetings: &[Meeting<R>],
) -> Vec<(Option<String>, Vec<u8>)> {
    cards_by_venue(date, meetings, |head, races| {
        let races: Vec<&RawValue> = races.iter().map(AsRef::as_ref).collect();
        to_json(&head.with(&races))
    })
}

/// The digests of the documents [`render_cards`] renders, from those of their races'
/// parts ([`card_race_digest`]): of each document, the 128-bit xxh3 of it as serde writes
/// it without its races, then of its races' digests in order. So a document's digest
/// changes exactly where its bytes do, and the fold works it out without rendering a race.
pub(crate) fn card_digests(date: &str, meetings: &[Meeting<u128>]) -> Vec<(Option<String>, u128)> {
    cards_by_venue(date, meetings, |head, races| {
        let mut h = Xxh3::new();
        super::json::hash_into(&mut h, &head.with(&[]));
        for digest in races {
            h.update(&digest.to_le_bytes());
        }
        h.digest128()
    })
}

/// What a race-card document holds besides its races.
struct DocHead<'a> {
    date: &'a str,
    venue: &'a str,
    meetings: Option<&'a [String]>,
}

impl<'a> DocHead<'a> {
    fn with(&self, races: &'a [&'a RawValue]) -> CardDoc<'a> {
        CardDoc {
            date: self.date,
            venue: self.venue,
            meetings: self.meetings,
            races,
        }
    }
}

/// What `each` makes of the race-card document of each meeting of a date (given what it
/// holds besides its races, and its races), and of the day's main meeting's again without
/// its venue.
fn cards_by_venue<R, T: Clone>(
    date: &str,
    meetings: &[Meeting<R>],
    mut each: impl FnMut(DocHead<'_>, &[R]) -> T,
) -> Vec<(Option<String>, T)> {
    let listed = venues(meetings);
    let main = main_meeting(meetings);
    let mut out = Vec::with_capacity(meetings.len() + 1);
    for (i, m) in meetings.iter().enumerate() {
        let head = DocHead {
            date,
            venue: &m.venue,
            meetings: listed.as_deref(),
        };
        let day = each(head, &m.races);
        if i == main {
            out.push((None, day.clone()));
        }
        out.push((Some(m.venue.clone()), day));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A form whose every field differs from its default: a field of one that the other
    /// lacked, or in another place, shows.
    fn horse() -> HorseForm {
        let record = |runs| Record {
            runs,
            wins: 2,
            places: 3,
        };
        HorseForm {
            figures: "12/3\"x".into(),
            runs: 7,
            days_since_run: Some(21),
            c: true,
            d: false,
            cd: true,
            course: record(4),
            distance: record(5),
            going: vec![GoingRecord {
                going: "GOOD TO FIRM".into(),
                runs: 6,
                wins: 1,
                places: 2,
            }],
        }
    }

    #[test]
    fn a_served_form_is_its_horse_s_part_with_the_strike_rates_after_it() {
        let jockey = Strike {
            rides: 31,
            wins: 8,
            strike_rate: 25.8,
        };
        let trainer = Strike {
            rides: 3,
            wins: 0,
            strike_rate: 0.0,
        };
        for horse in [HorseForm::default(), horse()] {
            let stored = serde_json::value::to_raw_value(&horse).expect("encoded");
            let served = served_form(&stored, jockey, trainer);
            // Field by field, with no `..`: a field of one that the other lacks does not
            // compile.
            let HorseForm {
                figures,
                runs,
                days_since_run,
                c,
                d,
                cd,
                course,
                distance,
                going,
            } = horse;
            let whole = RunnerForm {
                figures,
                runs,
                days_since_run,
                c,
                d,
                cd,
                course,
                distance,
                going,
                jockey_14d: jockey,
                trainer_14d: trainer,
            };
            let expected = serde_json::to_string(&whole).expect("encoded");
            assert_eq!(served.get(), expected);
        }
    }

    #[test]
    fn a_race_s_digest_is_its_parts_hashed_one_after_another() {
        let runner = |horse_no: &str, draw| racing_events::CardRunner {
            horse_no: horse_no.into(),
            horse_name: format!("HORSE {horse_no}"),
            jockey: "Z Purton".into(),
            trainer: "J Size".into(),
            draw,
            weight: 126,
        };
        let card = RaceCard {
            date: "2026-11-01".into(),
            venue: "Sha Tin".into(),
            race_number: 3,
            race_name: "THE JOCKEY CLUB MILE".into(),
            distance: 1600,
            class: "Class 4".into(),
            runners: vec![runner("A007", 1), runner("B001", 2), runner("C003", 3)],
        };
        // B001 is scratched; C003 has no form.
        let listing = card_race_listing(&card, |horse| horse == "B001", None);
        let mut forms = StoredRaceForm::new();
        for horse_no in ["A007", "B001"] {
            let json = serde_json::value::to_raw_value(&horse()).expect("json");
            forms.insert(horse_no.into(), json);
        }
        let strike = |rides, wins| Strike {
            rides,
            wins,
            strike_rate: 12.5,
        };
        let strikes = [
            (strike(8, 1), strike(3, 0)),
            (strike(16, 2), strike(3, 0)),
            (strike(0, 0), strike(40, 5)),
        ];
        // The card's `ETag` is made of these digests, and a card's head keeps its tag: the
        // parts, in this order, hashed as one stream, are what every stored head was made of.
        let mut h = Xxh3::new();
        h.update(&listing.digest.to_le_bytes());
        for i in [0, 2] {
            match forms.get(&card.runners[i].horse_no) {
                Some(horse) => {
                    h.update(&[1]);
                    h.update(&(horse.get().len() as u64).to_le_bytes());
                    h.update(horse.get().as_bytes());
                    for s in [strikes[i].0, strikes[i].1] {
                        h.update(&s.rides.to_le_bytes());
                        h.update(&s.wins.to_le_bytes());
                        h.update(&s.strike_rate.to_bits().to_le_bytes());
                    }
                }
                None => h.update(&[0]),
            }
        }
        assert_eq!(listing.listed.as_ref(), [0, 2]);
        assert_eq!(
            card_race_digest(&card, &listing, Some(&forms), &strikes),
            h.digest128()
        );
    }
}
