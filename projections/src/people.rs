//! Jockeys and trainers: each one's rides, kept by the fold from the results, and the
//! documents made from them, their record and the list of them all.
//!
//! A person is known by the slug of their name (their `id`). Their rides, a ride by race
//! and horse, are kept a record a Hong Kong season (`keys::person_season`), so that what
//! a result costs grows with a season, not with a career: a result replaces that race's
//! rides of everyone in it, before and after, in the record of its season only (an
//! amendment that changes a jockey takes the ride from one and gives it to the other),
//! and a retraction removes them. Each person's summary (`keys::person_summary`) holds
//! their figures by season, recounted for the seasons a batch touched; a document's
//! totals and seasons come from it, its name and recent rides from the newest seasons'
//! records. The season records a batch touches are held decoded until it renders, then
//! each touched person's summary, document and the lists are written once.

use std::collections::{BTreeMap, BTreeSet};

use racing_events::{RaceResult, ResultRunner};
use serde::{Deserialize, Serialize};

use crate::docs::{same_answer, seal, Doc};
use crate::fold::{read, Records, State};
use crate::keys;
use crate::store::Store;
use crate::StoreError;

/// A jockey or a trainer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

/// Statuses of a runner that is no ride: withdrawn, or took no part.
const NOT_RIDES: [&str; 6] = ["WV", "WV-A", "WX", "WX-A", "WXNR", "TNP"];

/// Whether a result's runner counts as a ride.
pub fn is_ride(r: &ResultRunner) -> bool {
    r.status
        .as_deref()
        .is_none_or(|status| !NOT_RIDES.contains(&status))
}

/// One ride of a person, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Ride {
    date: String,
    venue: String,
    race_number: i64,
    horse_no: String,
    horse_name: String,
    position: Option<i64>,
    status: Option<String>,
    win_odds: Option<f64>,
    /// The person's name as this result gave it.
    name: String,
}

impl Ride {
    /// The ride of `runner` in `result`, its person named `name`.
    fn new(result: &RaceResult, runner: &ResultRunner, name: &str) -> Ride {
        Ride {
            date: result.date.clone(),
            venue: result.venue.clone(),
            race_number: result.race_number,
            horse_no: runner.horse_no.clone(),
            horse_name: runner.horse_name.clone(),
            position: runner.position,
            status: runner.status.clone(),
            win_odds: runner.win_odds,
            name: name.to_owned(),
        }
    }

    /// Rides of one race are the same race.
    fn race(&self) -> (&str, i64, &str) {
        (&self.date, self.race_number, &self.venue)
    }

    /// Newest first: date, then race number, descending (then venue and horse).
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
    let year: u32 = date.get(..4)?.parse().ok()?;
    let month: u32 = date.get(5..7)?.parse().ok()?;
    let start = if month >= 9 {
        year
    } else {
        year.checked_sub(1)?
    };
    Some(format!("{start}/{:02}", (start + 1) % 100))
}

/// `part` of `whole` in percent, rounded to one decimal place; 0.0 of nothing.
fn percent(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (f64::from(part) * 1000.0 / f64::from(whole)).round() / 10.0
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
#[derive(Debug, Serialize)]
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
#[derive(Debug, Serialize)]
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

/// A person's figures in one season, as their summary keeps them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Counts {
    rides: u32,
    wins: u32,
    seconds: u32,
    thirds: u32,
}

impl Counts {
    /// The figures of `rides`.
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
    fn total(summary: &Summary) -> Counts {
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

/// A person's summary record: the figures of each season they have rides in, by season.
type Summary = BTreeMap<String, Counts>;

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
fn render_person(id: &str, summary: &Summary, newest: &[Ride]) -> Vec<u8> {
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
                rides.push(Ride::new(result, runner, role.of(runner)));
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
const RECENT: usize = 20;

/// One season's rides of a person, as a batch holds them.
#[derive(Debug, Default)]
struct SeasonRides {
    rides: Vec<Ride>,
    /// Whether the store holds a record of them (to remove once none is left).
    stored: bool,
}

/// The season records a batch has touched, decoded: by role and id, then by season.
#[derive(Debug, Default)]
pub(crate) struct People {
    touched: BTreeMap<(Role, String), BTreeMap<String, SeasonRides>>,
}

impl People {
    /// The rides of `(role, id)` in `season`, loaded into the batch on first use.
    fn rides(
        &mut self,
        s: &impl Records,
        (role, id): (Role, &str),
        season: &str,
    ) -> Result<&mut Vec<Ride>, StoreError> {
        use std::collections::btree_map::Entry;
        let seasons = self.touched.entry((role, id.to_owned())).or_default();
        Ok(match seasons.entry(season.to_owned()) {
            Entry::Occupied(e) => &mut e.into_mut().rides,
            Entry::Vacant(e) => {
                let stored = read(s, &keys::person_season(role.name(), id, season))?;
                let loaded = SeasonRides {
                    stored: stored.is_some(),
                    rides: stored.unwrap_or_default(),
                };
                &mut e.insert(loaded).rides
            }
        })
    }

    /// One race's result replaced: `old` (the result stored before, if any) by `new`
    /// (`None`: retracted). Everyone in either loses their rides of the race, and those
    /// in `new` are given theirs. Both are of the same race, so only the records of its
    /// season are read.
    pub(crate) fn replace(
        &mut self,
        s: &impl Records,
        old: Option<&RaceResult>,
        new: Option<&RaceResult>,
    ) -> Result<(), StoreError> {
        let Some(race) = new.or(old) else {
            return Ok(());
        };
        let key = (race.date.as_str(), race.race_number, race.venue.as_str());
        let season = season(&race.date).unwrap_or_default();
        let mut people: BTreeSet<(Role, String)> = BTreeSet::new();
        for result in old.into_iter().chain(new) {
            for runner in &result.runners {
                for role in Role::ALL {
                    let id = slug(role.of(runner));
                    if !id.is_empty() {
                        people.insert((role, id));
                    }
                }
            }
        }
        for (role, id) in &people {
            self.rides(s, (*role, id), &season)?
                .retain(|r| r.race() != key);
        }
        let Some(new) = new else {
            return Ok(());
        };
        for runner in new.runners.iter().filter(|r| is_ride(r)) {
            for role in Role::ALL {
                let name = role.of(runner);
                let id = slug(name);
                if id.is_empty() {
                    continue;
                }
                self.rides(s, (role, &id), &season)?
                    .push(Ride::new(new, runner, name));
            }
        }
        Ok(())
    }

    /// Writes the touched season records and the summaries of their people (recounting
    /// only those seasons), renders each touched person's document and the lists of
    /// their roles; `seq` is what the documents reflect.
    pub(crate) fn render(&mut self, s: &mut impl State, seq: u64) -> Result<(), StoreError> {
        let touched = std::mem::take(&mut self.touched);
        let mut lists: BTreeMap<Role, BTreeMap<String, PersonRow>> = BTreeMap::new();
        for ((role, id), mut seasons) in touched {
            let list = match lists.entry(role) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    let key = keys::people(role.name());
                    e.insert(read(s, &key)?.unwrap_or_default())
                }
            };
            let (summary_key, doc) = (
                keys::person_summary(role.name(), &id),
                keys::person_doc(role.name(), &id),
            );
            let stored: Option<Summary> = read(s, &summary_key)?;
            let mut summary = stored.clone().unwrap_or_default();
            for (season, record) in &mut seasons {
                let key = keys::person_season(role.name(), &id, season);
                if record.rides.is_empty() {
                    summary.remove(season);
                    if record.stored {
                        s.delete(key);
                    }
                    continue;
                }
                record.rides.sort_by(Ride::newest_first);
                // Plain data: serialising it cannot fail.
                s.put(key, serde_json::to_vec(&record.rides).unwrap_or_default());
                summary.insert(season.clone(), Counts::of(&record.rides));
            }
            if summary.is_empty() {
                if stored.is_some() {
                    s.delete(summary_key);
                    s.delete(doc);
                }
                list.remove(&id);
                continue;
            }
            if stored.as_ref() != Some(&summary) {
                s.put(
                    summary_key,
                    serde_json::to_vec(&summary).unwrap_or_default(),
                );
            }
            let newest = newest_rides(s, (role, &id), &summary, &seasons)?;
            put_sealed(s, doc, &render_person(&id, &summary, &newest), seq)?;
            let name = newest.first().map(|r| r.name.clone()).unwrap_or_default();
            let rides = Counts::total(&summary).rides;
            list.insert(id.clone(), PersonRow { id, name, rides });
        }
        for (role, list) in lists {
            let key = keys::people(role.name());
            if list.is_empty() {
                if s.get(&key)?.is_some() {
                    s.delete(key);
                    s.delete(keys::people_doc(role.name()));
                }
                continue;
            }
            s.put(key, serde_json::to_vec(&list).unwrap_or_default());
            let body = render_list(role, list.into_values().collect());
            put_sealed(s, keys::people_doc(role.name()), &body, seq)?;
        }
        Ok(())
    }
}

/// The [`RECENT`] newest rides of `(role, id)`, newest first: from their newest season's
/// record back, as far as it takes. `touched` holds the seasons the batch wrote, sorted.
fn newest_rides(
    s: &impl Records,
    (role, id): (Role, &str),
    summary: &Summary,
    touched: &BTreeMap<String, SeasonRides>,
) -> Result<Vec<Ride>, StoreError> {
    let mut newest = Vec::with_capacity(RECENT);
    for season in newest_seasons(summary) {
        let left = RECENT - newest.len();
        match touched.get(season) {
            Some(record) => newest.extend(record.rides.iter().take(left).cloned()),
            None => {
                let key = keys::person_season(role.name(), id, season);
                let rides: Vec<Ride> = read(s, &key)?.unwrap_or_default();
                newest.extend(rides.into_iter().take(left));
            }
        }
        if newest.len() >= RECENT {
            break;
        }
    }
    Ok(newest)
}

/// Stores a document sealed with its `ETag` and `seq`, unless it answers the same as the
/// one stored (whose sequence then stays that of its last change).
fn put_sealed(s: &mut impl State, key: Vec<u8>, doc: &[u8], seq: u64) -> Result<(), StoreError> {
    let sealed = seal(false, doc, seq);
    if !s
        .get(&key)?
        .is_some_and(|stored| same_answer(&stored, &sealed))
    {
        s.put(key, sealed);
    }
    Ok(())
}

impl Store {
    /// The record of the jockey or trainer `id`, as stored.
    pub fn person(&self, role: Role, id: &str) -> Result<Option<Doc>, StoreError> {
        self.sealed(&keys::person_doc(role.name(), id))
    }

    /// The list of every jockey (or trainer), as stored; `None` before the first ride.
    pub fn people(&self, role: Role) -> Result<Option<Doc>, StoreError> {
        self.sealed(&keys::people_doc(role.name()))
    }

    fn sealed(&self, key: &[u8]) -> Result<Option<Doc>, StoreError> {
        let Some(stored) = self.tree.get(key)? else {
            return Ok(None);
        };
        Doc::new(stored).map(Some).ok_or_else(|| {
            StoreError::Corrupt(format!("{} has no ETag", String::from_utf8_lossy(key)))
        })
    }
}
