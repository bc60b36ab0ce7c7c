//! Who a jockey or a trainer is and what is served of them: their id, what counts as a
//! ride and in which season, a ride as the fold keeps it, a season's figures, and the
//! documents, their record and the list of them all, rendered from those.

use std::collections::BTreeMap;

use racing_events::{RaceResult, ResultRunner};
use serde::{Deserialize, Serialize};

use crate::horse_runs::percent;

/// A jockey or a trainer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Who rode the horse.
    Jockey,
    /// Who trained it.
    Trainer,
}

impl Role {
    /// Both, in order.
    pub const ALL: [Role; 2] = [Role::Jockey, Role::Trainer];

    /// Its name in keys and messages: `jockey`, `trainer`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Jockey => "jockey",
            Role::Trainer => "trainer",
        }
    }

    /// The other role of a ride: a jockey's trainer, a trainer's jockey.
    pub(crate) fn other(self) -> Role {
        match self {
            Role::Jockey => Role::Trainer,
            Role::Trainer => Role::Jockey,
        }
    }

    /// The runner's person of this role.
    pub(crate) fn of(self, r: &ResultRunner) -> &str {
        match self {
            Role::Jockey => &r.jockey,
            Role::Trainer => &r.trainer,
        }
    }
}

/// The id of a name: lower-case ASCII letters and digits, every other run of characters
/// one `-`, none at either end (`Z Purton` -> `z-purton`). Empty for a name with no
/// ASCII letter or digit.
pub fn slug(name: &str) -> String {
    let mut id = String::with_capacity(name.len());
    let mut gap = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if gap && !id.is_empty() {
                id.push('-');
            }
            gap = false;
            id.push(c.to_ascii_lowercase());
        } else {
            gap = true;
        }
    }
    id
}

/// Whether `id` is of slug form: what [`slug`] makes of some name, and not empty.
pub fn is_slug(id: &str) -> bool {
    !id.is_empty() && slug(id) == id
}

/// Whether a result's runner counts as a ride.
pub fn is_ride(r: &ResultRunner) -> bool {
    crate::horse_runs::took_part(r.status.as_deref())
}

/// One ride of a person.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ride {
    pub(super) date: String,
    pub(super) venue: String,
    pub(super) race_number: i64,
    pub(super) horse_no: String,
    pub(super) horse_name: String,
    pub(super) position: Option<i64>,
    pub(super) status: Option<String>,
    pub(super) win_odds: Option<f64>,
    /// The person's name as this result gave it.
    pub(super) name: String,
    /// The other role's name in the ride as the result gave it: the trainer's of a
    /// jockey's ride, the jockey's of a trainer's.
    pub(super) partner: String,
    /// The race's conditions as the result gave them, which the person's records by
    /// condition count the ride under (`analysis.rs`).
    pub(super) distance: i64,
    pub(super) going: String,
    pub(super) class: Option<String>,
    pub(super) draw: Option<i64>,
}

impl Ride {
    /// The ride of `runner` in `result` of its person in `role`.
    pub(super) fn new(result: &RaceResult, runner: &ResultRunner, role: Role) -> Ride {
        Ride {
            date: result.date.clone(),
            venue: result.venue.clone(),
            race_number: result.race_number,
            horse_no: runner.horse_no.clone(),
            horse_name: runner.horse_name.clone(),
            position: runner.position,
            status: runner.status.clone(),
            win_odds: runner.win_odds,
            name: role.of(runner).to_owned(),
            partner: role.other().of(runner).to_owned(),
            distance: result.distance,
            going: result.going.clone(),
            class: result.class.clone(),
            draw: runner.draw,
        }
    }

    /// The run the ride is, as its horse's form entry records it
    /// ([`crate::horse_runs::Run::of_result`]), with its person in `role`.
    pub(super) fn run(self, role: Role) -> crate::horse_runs::Run {
        let (jockey, trainer) = match role {
            Role::Jockey => (self.name, self.partner),
            Role::Trainer => (self.partner, self.name),
        };
        crate::horse_runs::Run {
            date: self.date,
            venue: self.venue,
            race_number: self.race_number,
            distance: self.distance,
            position: self.position,
            win_odds: self.win_odds,
            jockey,
            status: self.status,
            going: self.going,
            class: self.class,
            trainer,
            draw: self.draw,
            horse_name: self.horse_name,
        }
    }

    /// Newest first: date, then race number, descending (then venue and horse).
    #[cfg(test)]
    fn newest_first(a: &Ride, b: &Ride) -> std::cmp::Ordering {
        (&b.date, b.race_number, &b.venue, &b.horse_no).cmp(&(
            &a.date,
            a.race_number,
            &a.venue,
            &a.horse_no,
        ))
    }
}

/// The Hong Kong season of a date `YYYY-MM-DD`: September to August, written `2019/20`.
pub fn season(date: &str) -> Option<String> {
    let start = season_start(date)?;
    Some(format!("{start}/{:02}", (start + 1) % 100))
}

/// The year the Hong Kong season of a date `YYYY-MM-DD` starts in: 2019 for `2019/20`.
pub(crate) fn season_start(date: &str) -> Option<u32> {
    let year: u32 = date.get(..4)?.parse().ok()?;
    let month: u32 = date.get(5..7)?.parse().ok()?;
    if month >= 9 {
        Some(year)
    } else {
        year.checked_sub(1)
    }
}

/// A jockey's or a trainer's record as served.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = PersonRecord, examples(json!({
    "id": "z-purton", "name": "Z Purton", "rides": 412, "wins": 98, "seconds": 61,
    "thirds": 50, "win_pct": 23.8, "top3_pct": 50.7,
    "seasons": [{"season": "2026/27", "rides": 120, "wins": 30, "seconds": 18, "thirds": 15}],
    "recent": [{"date": "2026-11-18", "venue": "Happy Valley", "race_number": 9,
        "horse_no": "K307", "horse_name": "ROMANTIC WARRIOR", "position": 1,
        "status": null, "win_odds": 2.3}]
}))))]
pub struct PersonDoc {
    /// The slug of the name: the id in the path.
    id: String,
    /// The name as the newest result gives it.
    name: String,
    /// Runners in results, except those withdrawn (`WV`, `WV-A`, `WX`, `WX-A`, `WXNR`)
    /// or that took no part (`TNP`).
    rides: u32,
    /// Rides that finished first (dead heats included).
    wins: u32,
    /// Rides that finished second.
    seconds: u32,
    /// Rides that finished third.
    thirds: u32,
    /// Wins in percent of rides, one decimal place (0.0 without rides).
    win_pct: f64,
    /// First, second or third in percent of rides, one decimal place.
    top3_pct: f64,
    /// The figures of each Hong Kong season (September to August), newest first.
    seasons: Vec<SeasonDoc>,
    /// The 20 newest rides, newest first (date, then race number, descending).
    recent: Vec<RideDoc>,
}

/// A person's figures in one season.
#[derive(Debug, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeasonDoc {
    /// The season, September to August, e.g. `2019/20` (2019-09-01 to 2020-08-31).
    season: String,
    /// Rides in the season.
    rides: u32,
    /// Wins.
    wins: u32,
    /// Seconds.
    seconds: u32,
    /// Thirds.
    thirds: u32,
}

/// One ride in a person's record.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RideDoc {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: String,
    /// Racecourse.
    venue: String,
    /// Race number within the meeting.
    race_number: i64,
    /// Brand number of the horse.
    horse_no: String,
    /// The horse's name in that result.
    horse_name: String,
    /// Finishing position; `null` when it did not finish.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    position: Option<i64>,
    /// The result's special status (`PU`, `DISQ`, ...), `null` for an ordinary finish.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    status: Option<String>,
    /// Final win odds; `null` where the result gave none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    win_odds: Option<f64>,
}

/// One person in a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PersonRow {
    /// The slug of the name: `/api/v1/jockeys/{id}` (or trainers).
    pub id: String,
    /// The name as the newest result gives it.
    pub name: String,
    /// Rides (see the person's record).
    pub rides: u32,
}

/// Every jockey, by name.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({
    "jockeys": [{"id": "h-bowman", "name": "H Bowman", "rides": 380},
        {"id": "z-purton", "name": "Z Purton", "rides": 412}]
}))))]
pub struct JockeyList {
    /// Every jockey with a ride, by name (then id).
    pub jockeys: Vec<PersonRow>,
}

/// Every trainer, by name.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({
    "trainers": [{"id": "c-s-shum", "name": "C S Shum", "rides": 240}]
}))))]
pub struct TrainerList {
    /// Every trainer with a runner that rode, by name (then id).
    pub trainers: Vec<PersonRow>,
}

/// The list document of `role` from its rows (sorted here).
pub fn render_list(role: Role, mut rows: Vec<PersonRow>) -> Vec<u8> {
    rows.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    // Plain data: serialising it cannot fail.
    match role {
        Role::Jockey => serde_json::to_vec(&JockeyList { jockeys: rows }),
        Role::Trainer => serde_json::to_vec(&TrainerList { trainers: rows }),
    }
    .unwrap_or_default()
}

/// A person's figures in one season, as the record of the season keeps them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(super) struct Counts {
    pub(super) rides: u32,
    pub(super) wins: u32,
    pub(super) seconds: u32,
    pub(super) thirds: u32,
}

impl Counts {
    /// The figures of `rides`.
    #[cfg(test)]
    fn of<'a>(rides: impl IntoIterator<Item = &'a Ride>) -> Counts {
        let mut c = Counts::default();
        for r in rides {
            c.rides = c.rides.saturating_add(1);
            match r.position {
                Some(1) => c.wins += 1,
                Some(2) => c.seconds += 1,
                Some(3) => c.thirds += 1,
                _ => {}
            }
        }
        c
    }

    /// The figures of every season of `summary` added up.
    pub(super) fn total(summary: &Summary) -> Counts {
        let mut t = Counts::default();
        for c in summary.values() {
            t.rides = t.rides.saturating_add(c.rides);
            t.wins = t.wins.saturating_add(c.wins);
            t.seconds = t.seconds.saturating_add(c.seconds);
            t.thirds = t.thirds.saturating_add(c.thirds);
        }
        t
    }
}

/// A person's figures in each season they have rides in, by season.
pub(super) type Summary = BTreeMap<String, Counts>;

/// The seasons of `summary`, newest first. Their names sort as their dates do except
/// `999/00` (January to August of the year 1000, the earliest a date can be), so they are
/// ordered by the year they start.
fn newest_seasons(summary: &Summary) -> Vec<&str> {
    let mut seasons: Vec<&str> = summary.keys().map(String::as_str).collect();
    let start = |s: &str| s.split('/').next().and_then(|y| y.parse::<u32>().ok());
    seasons.sort_by_key(|s| std::cmp::Reverse(start(s)));
    seasons
}

/// A person's record as served: the totals and `seasons` from their summary, `name` and
/// `recent` from their newest rides (newest first, at most [`RECENT`]; at least one).
pub(super) fn render_person(id: &str, summary: &Summary, newest: &[Ride]) -> Vec<u8> {
    let total = Counts::total(summary);
    let doc = PersonDoc {
        id: id.to_owned(),
        name: newest.first().map(|r| r.name.clone()).unwrap_or_default(),
        rides: total.rides,
        wins: total.wins,
        seconds: total.seconds,
        thirds: total.thirds,
        win_pct: percent(total.wins, total.rides),
        top3_pct: percent(total.wins + total.seconds + total.thirds, total.rides),
        seasons: newest_seasons(summary)
            .into_iter()
            .filter_map(|season| Some((season, summary.get(season)?)))
            .map(|(season, c)| SeasonDoc {
                season: season.to_owned(),
                rides: c.rides,
                wins: c.wins,
                seconds: c.seconds,
                thirds: c.thirds,
            })
            .collect(),
        recent: newest
            .iter()
            .take(RECENT)
            .map(|r| RideDoc {
                date: r.date.clone(),
                venue: r.venue.clone(),
                race_number: r.race_number,
                horse_no: r.horse_no.clone(),
                horse_name: r.horse_name.clone(),
                position: r.position,
                status: r.status.clone(),
                win_odds: r.win_odds,
            })
            .collect(),
    };
    // Plain data: serialising it cannot fail.
    serde_json::to_vec(&doc).unwrap_or_default()
}

/// The record of the jockey or trainer `id` rendered from every ride of theirs in
/// `results` at once, all sorted newest first (`None` without a ride): what a fold must
/// serve, whatever batches and seasons the results came in.
#[cfg(test)]
pub(crate) fn render_from_results<'a>(
    role: Role,
    id: &str,
    results: impl IntoIterator<Item = &'a RaceResult>,
) -> Option<Vec<u8>> {
    let mut rides = Vec::new();
    for result in results {
        for runner in result.runners.iter().filter(|r| is_ride(r)) {
            if slug(role.of(runner)) == id {
                rides.push(Ride::new(result, runner, role));
            }
        }
    }
    rides.sort_by(Ride::newest_first);
    let mut by_season: BTreeMap<String, Vec<&Ride>> = BTreeMap::new();
    for r in &rides {
        let season = season(&r.date).unwrap_or_default();
        by_season.entry(season).or_default().push(r);
    }
    let summary = by_season
        .into_iter()
        .map(|(season, rides)| (season, Counts::of(rides)))
        .collect();
    (!rides.is_empty()).then(|| render_person(id, &summary, &rides))
}

/// Rides in a person's `recent`.
pub(super) const RECENT: usize = 20;
