//! The log the benchmark replays: demo seasons with different seeds, each one a year
//! (52 weeks) before the next, and in each meeting the price movements of every race
//! before its result, so that the mix is a feed's: mostly odds, then profiles, cards,
//! scratchings and results. Generated once and published into a nats-server whose
//! store is kept under `target/`, so that later runs start at once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use async_nats::jetstream;
use jiff::civil::Date;
use jiff::{SignedDuration, Span};
use racing::nats::{Credentials, Role};
use racing_demo::{DemoFeed, Simulator};
use racing_events::{Envelope, Event};
use serde::{Deserialize, Serialize};

use crate::scale::Scale;

/// The stream the service reads (its default).
pub const STREAM: &str = "RACING";
/// Local hour, in the zone the benchmark picks for its "today", when it starts: far from
/// the next midnight, so that no run (a full one takes about an hour) sees today's card
/// turn into tomorrow's absent one.
const START_HOUR: i64 = 2;
/// Seed of the most recent season; older seasons count up from it.
const SEASON_SEED: u64 = 42;
/// Seeds of the simulated trading, apart from the seasons' so that no two generators
/// share a random stream (event ids come from it).
const TRADING_SEED: u64 = 1_000_000;
/// Seed of the live odds the benchmark publishes for today.
pub const LIVE_SEED: u64 = 9_000_000;
/// Seeds of the season ahead the reads-while-writing part publishes live, and of its
/// trading: apart from every other generator's.
const AHEAD_SEEDS: (u64, u64) = (8_000_000, 8_100_000);
/// Seconds between two price moves of one meeting in the generated log.
const TICK_SECS: i64 = 5;
/// Bumped when the generator changes, so that a cached log is not reused (2: the logs of
/// version 1 were run on, and hold every earlier run's updates; 3: the set-up makes the
/// key-value buckets beside the stream, which the service no longer makes; 4: what it
/// holds names the jockey with the most rides).
const VERSION: u32 = 4;

/// What the benchmark needs to know about the log it generated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogInfo {
    /// Events in the log.
    pub events: u64,
    /// Bytes of their payloads.
    pub bytes: u64,
    /// Events per `type`.
    pub mix: BTreeMap<String, u64>,
    /// The day of the newest season's last meeting: today in the benchmark's zone when
    /// generated.
    pub today: String,
    /// The horse with the most runs (the profile and form endpoints ask for it).
    pub top_horse: String,
    /// Its runs.
    pub top_runs: u64,
    /// The id of the jockey with the most rides (the person endpoint asks for them).
    pub top_jockey: String,
    /// Their runners in results.
    pub top_jockey_rides: u64,
    /// The date of a meeting with the most races, all run (the results endpoint).
    pub meeting_date: String,
    /// Its races.
    pub meeting_races: u64,
}

/// A log ready to serve: the nats-server store that holds it and what it holds.
pub struct Log {
    /// The nats-server store directory.
    pub nats_dir: PathBuf,
    /// What it holds.
    pub info: LogInfo,
}

/// The cached log of this scale and day, generating and publishing it if there is none.
pub async fn ensure(
    work: &Path,
    scale: &Scale,
    day: &Day,
    nats_server: &str,
) -> anyhow::Result<Log> {
    let today = day.date;
    let name = format!(
        "log-{}-{}x{}-{today}-v{VERSION}",
        scale.name, scale.seasons, scale.ticks_per_race
    );
    let data = work.join("data");
    let dir = data.join(&name);
    let marker = dir.join("log.json");
    let nats_dir = dir.join("nats");
    if let Some(info) = std::fs::read(&marker)
        .ok()
        .and_then(|b| serde_json::from_slice::<LogInfo>(&b).ok())
    {
        eprintln!(
            "bench: reusing the log in {} ({} events)",
            dir.display(),
            info.events
        );
        return Ok(Log { nats_dir, info });
    }
    // Older logs of this scale (another day, another version) are of no more use.
    if let Ok(entries) = std::fs::read_dir(&data) {
        let prefix = format!("log-{}-", scale.name);
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(&prefix) && n != name {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;

    eprintln!(
        "bench: generating and publishing the log ({} seasons, {} price moves per race) into {}",
        scale.seasons,
        scale.ticks_per_race,
        dir.display()
    );
    let credentials = credentials(&nats_dir)?;
    let nats = racing::nats::LocalNats::start(nats_server, &nats_dir, None, &credentials).await?;
    let setup = set_up(&nats).await?;
    let js = jetstream::new(nats.connect(Role::Feeder).await?);
    let mut tally = Tally::default();
    let started = Instant::now();
    // Oldest season first, so that the log reads forward in time.
    for s in (0..scale.seasons).rev() {
        let events = season_events(s, day, scale.ticks_per_race)?;
        tally.add(&events)?;
        let counts = racing::publish::publish_events(&js, None, &events).await?;
        ensure!(
            counts.rejected == 0 && counts.duplicate == 0,
            "season {s}: {} rejected, {} duplicate: {:?}",
            counts.rejected,
            counts.duplicate,
            counts.reasons
        );
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "bench:   season {:>2}: {} events; {} in {secs:.0} s ({:.0} events/s)",
            scale.seasons - s,
            events.len(),
            tally.events,
            tally.events as f64 / secs.max(1e-9)
        );
    }
    let mut stream = setup.jetstream().get_stream(STREAM).await?;
    let state = stream.info().await?.state.clone();
    ensure!(
        state.messages == tally.events,
        "the stream holds {} messages, {} were published",
        state.messages,
        tally.events
    );
    let info = tally.finish(today);
    std::fs::write(&marker, serde_json::to_vec_pretty(&info)?)?;
    nats.stop(Duration::from_secs(10)).await;
    Ok(Log { nats_dir, info })
}

/// Makes the stream and its buckets on `nats`, or brings them up to date, as `racing
/// setup` does (the service may not): each run does it again on its copy of the log, since
/// a log cached by an older version lacks the buckets made since (the snapshots').
pub async fn set_up(nats: &racing::nats::LocalNats) -> anyhow::Result<racing::nats::Connection> {
    let setup = racing::nats::Connection::open(
        &nats.url(),
        &nats.auth(Role::Setup)?,
        Role::Setup,
        racing::retry::PATIENCE,
    )
    .await?;
    let settings = racing::nats::StreamSettings {
        name: STREAM.to_owned(),
        duplicate_window: Duration::from_secs(120),
        replicas: None,
        link_ttl: racing::nats::buckets::LINK_TTL,
    };
    racing::nats::set_up(&setup, &settings).await?;
    Ok(setup)
}

/// A copy of `log`'s nats-server store in `dir`, made afresh: the parts that publish
/// (live, catch-up, stall) add to the stream they run on, and a run on the cached store
/// itself would leave every later run a longer log to replay.
pub fn fresh_copy(log: &Log, dir: &Path) -> anyhow::Result<PathBuf> {
    let _ = std::fs::remove_dir_all(dir);
    copy_tree(&log.nats_dir, dir)
        .with_context(|| format!("copying {} to {}", log.nats_dir.display(), dir.display()))?;
    Ok(dir.to_path_buf())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)?;
        }
    }
    Ok(())
}

/// The benchmark's "today" and the zone the service under test is told defines it.
#[derive(Debug, Clone)]
pub struct Day {
    /// An IANA name of a whole-hour offset from UTC (`Etc/GMT-8` is 8 hours ahead).
    pub zone_name: String,
    /// That zone.
    pub zone: jiff::tz::TimeZone,
    /// Today there.
    pub date: Date,
}

impl Day {
    /// Today in the zone where it is now about [`START_HOUR`] o'clock. The service's own
    /// default zone (Hong Kong) would end its day at 16:00 UTC, and a run across that
    /// midnight asks for a card of a day the log has none of.
    pub fn now() -> anyhow::Result<Self> {
        Self::at(jiff::Timestamp::now())
    }

    /// `date` in UTC: a day fixed by the caller, for a log that is the same at any hour.
    pub fn utc(date: Date) -> Self {
        Self {
            zone_name: "Etc/GMT".to_owned(),
            zone: jiff::tz::TimeZone::UTC,
            date,
        }
    }

    fn at(now: jiff::Timestamp) -> anyhow::Result<Self> {
        let utc_hour = i64::from(now.to_zoned(jiff::tz::TimeZone::UTC).hour());
        // In -12..=11, which the `Etc/GMT` names cover.
        let ahead = (START_HOUR - utc_hour + 36).rem_euclid(24) - 12;
        // POSIX's sign: `Etc/GMT-8` is UTC+8.
        let zone_name = match ahead {
            0 => "Etc/GMT".to_owned(),
            a if a > 0 => format!("Etc/GMT-{a}"),
            a => format!("Etc/GMT+{}", -a),
        };
        let zone = jiff::tz::TimeZone::get(&zone_name)
            .with_context(|| format!("the time zone {zone_name}"))?;
        let date = now.to_zoned(zone.clone()).date();
        Ok(Self {
            zone_name,
            zone,
            date,
        })
    }

    /// The day as a run says it: the zone by its offset from UTC first, since the
    /// `Etc/GMT` names count it backwards (POSIX's sign: `Etc/GMT-8` is UTC+8), and why
    /// it is not the service's default zone.
    pub fn describe(&self) -> String {
        let offset = self.zone.to_offset(jiff::Timestamp::now());
        format!(
            "{} in UTC{} (the service under test runs with RACING_TIMEZONE={}, where it \
             is about {START_HOUR:02}:00 at the start: Asia/Hong_Kong's midnight could fall \
             in a run)",
            self.date,
            offset_text(offset),
            self.zone_name
        )
    }
}

/// `+09:00`, `-03:00`, `+00:00`: an offset as RFC 3339 writes it.
fn offset_text(offset: jiff::tz::Offset) -> String {
    let seconds = offset.seconds();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// Season `s` (0: the newest, ending today; each older one 52 weeks earlier, so that
/// meetings keep their weekdays), with the trading of every meeting.
pub(crate) fn season_events(s: u64, day: &Day, ticks: usize) -> anyhow::Result<Vec<Envelope>> {
    season_events_apart(s, 0, day, ticks)
}

/// Season `s` as [`season_events`] dates it, made from the seeds of the bench's season
/// `s + apart`: where `apart` is past every season a log of the bench holds, a log of the
/// same kind with other horses, races and prices (`dictionaries.rs` trains on one).
pub(crate) fn season_events_apart(
    s: u64,
    apart: u64,
    day: &Day,
    ticks: usize,
) -> anyhow::Result<Vec<Envelope>> {
    let weeks = i64::try_from(52 * s)?;
    let last_day = day.date.checked_sub(Span::new().weeks(weeks))?;
    let seeded = s + apart;
    let seeds = (SEASON_SEED + seeded, TRADING_SEED + seeded * 1_000);
    traded_season(seeds, last_day, &day.zone, ticks, s > 0)
}

/// A season the log does not hold, the one after its newest (ending 52 weeks after
/// `today`), traded as the log's are and every race run: what a feeder sends live
/// (profiles, cards, scratchings, each race's price moves, results), each event new to
/// the service and of races it has not seen.
pub fn season_ahead(today: &str, ticks: usize) -> anyhow::Result<Vec<Envelope>> {
    let last_day = today.parse::<Date>()?.checked_add(Span::new().weeks(52))?;
    traded_season(AHEAD_SEEDS, last_day, &jiff::tz::TimeZone::UTC, ticks, true)
}

/// The demo's season of seed `seeds.0` ending on `last_day`, with the trading of every
/// meeting (seeds from `seeds.1` up); its last meeting run too where `run_last`.
fn traded_season(
    seeds: (u64, u64),
    last_day: Date,
    zone: &jiff::tz::TimeZone,
    ticks: usize,
    run_last: bool,
) -> anyhow::Result<Vec<Envelope>> {
    let feed = racing_demo::season(seeds.0, last_day);
    // What the simulator needs of each meeting: its cards, scratchings and opening odds.
    let mut declared: HashMap<String, Vec<Envelope>> = HashMap::new();
    for env in &feed.events {
        let date = match &env.event {
            Event::RaceCardDeclared(c) => &c.date,
            Event::RunnerScratched(x) => &x.date,
            Event::OddsUpdated(o) => &o.date,
            _ => continue,
        };
        declared.entry(date.clone()).or_default().push(env.clone());
    }
    let seed = |meeting: u64| seeds.1 + meeting;
    let mut out = Vec::with_capacity(feed.events.len() + 800 * ticks);
    let mut traded = HashSet::new();
    let mut meeting = 0;
    let today_events = declared.remove(&feed.today).unwrap_or_default();
    for env in feed.events {
        if let Event::RaceResultPublished(r) = &env.event {
            // A meeting trades between its cards and its first result.
            if traded.insert(r.date.clone()) {
                let cards = declared.remove(&r.date).unwrap_or_default();
                out.extend(trading(&r.date, zone, cards, seed(meeting), ticks, false)?);
                meeting += 1;
            }
        }
        out.push(env);
    }
    // The season's last meeting trades too; in older seasons it is also run.
    out.extend(trading(
        &feed.today,
        zone,
        today_events,
        seed(meeting),
        ticks,
        run_last,
    )?);
    Ok(out)
}

/// `ticks` price moves of every race of the meeting on `date`, races taking turns, then
/// (if `run`) each race's result.
fn trading(
    date: &str,
    zone: &jiff::tz::TimeZone,
    declared: Vec<Envelope>,
    seed: u64,
    ticks: usize,
    run: bool,
) -> anyhow::Result<Vec<Envelope>> {
    let feed = DemoFeed {
        events: declared,
        today: date.to_owned(),
        meetings: 1,
        horses: 0,
    };
    let mut sim = Simulator::new(&feed, seed);
    let open = date
        .parse::<Date>()?
        .at(11, 0, 0, 0)
        .to_zoned(zone.clone())?
        .timestamp();
    let mut k = 0i64;
    let mut at = || {
        k += 1;
        open.checked_add(SignedDuration::from_secs(k * TICK_SECS))
            .unwrap_or(open)
            .to_string()
    };
    let mut out = Vec::with_capacity(ticks * sim.races() + sim.races());
    for _ in 0..ticks {
        for race in 0..sim.races() {
            out.extend(sim.tick(race, &at()));
        }
    }
    if run {
        for race in 0..sim.races() {
            out.extend(sim.result(race, &at()));
        }
    }
    Ok(out)
}

/// The live odds the benchmark publishes: `count` price moves of today's races, taking
/// turns. They stay in the log, like any feed's, so each run gives them fresh event ids:
/// the service ignores an event id it has applied before.
pub fn live_odds(today: &str, count: usize) -> anyhow::Result<Vec<Envelope>> {
    Ok(LiveOdds::new(today)?.take(count).collect())
}

/// Price moves of today's races for as long as they are asked for, taking turns, each
/// with a fresh event id ([`live_odds`] without its count); ends only where no race has a
/// runner left whose price can move.
pub struct LiveOdds {
    sim: Simulator,
    now: String,
    turn: usize,
}

impl LiveOdds {
    /// Today's races of the demo season.
    pub fn new(today: &str) -> anyhow::Result<LiveOdds> {
        let feed = racing_demo::season(SEASON_SEED, today.parse()?);
        let sim = Simulator::new(&feed, LIVE_SEED);
        ensure!(sim.races() > 0, "no races today in the demo season");
        Ok(LiveOdds {
            sim,
            now: jiff::Timestamp::now().to_string(),
            turn: 0,
        })
    }
}

impl Iterator for LiveOdds {
    type Item = Envelope;

    fn next(&mut self) -> Option<Envelope> {
        // Each race once at most: none of them moving ends the moves.
        for _ in 0..self.sim.races() {
            let race = self.turn % self.sim.races();
            self.turn += 1;
            if let Some(e) = self.sim.tick(race, &self.now) {
                return Some(Envelope {
                    event_id: uuid::Uuid::new_v4(),
                    ..e
                });
            }
        }
        None
    }
}

/// Counts of the generated log.
#[derive(Default)]
struct Tally {
    events: u64,
    bytes: u64,
    mix: BTreeMap<String, u64>,
    ids: HashSet<uuid::Uuid>,
    runs: HashMap<String, u64>,
    rides: HashMap<String, u64>,
    races_by_date: HashMap<String, u64>,
}

impl Tally {
    fn add(&mut self, events: &[Envelope]) -> anyhow::Result<()> {
        for env in events {
            ensure!(
                self.ids.insert(env.event_id),
                "event id {} generated twice",
                env.event_id
            );
            self.events += 1;
            self.bytes += env.to_json().len() as u64;
            *self
                .mix
                .entry(env.event.type_name().to_owned())
                .or_default() += 1;
            if let Event::RaceResultPublished(r) = &env.event {
                *self.races_by_date.entry(r.date.clone()).or_default() += 1;
                for runner in &r.runners {
                    *self.runs.entry(runner.horse_no.clone()).or_default() += 1;
                    let jockey = racing_projections::slug(&runner.jockey);
                    *self.rides.entry(jockey).or_default() += 1;
                }
            }
        }
        Ok(())
    }

    fn finish(self, today: Date) -> LogInfo {
        let (top_horse, top_runs) = self
            .runs
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .unwrap_or_default();
        let (top_jockey, top_jockey_rides) = self
            .rides
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .unwrap_or_default();
        let (meeting_date, meeting_races) = self
            .races_by_date
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
            .unwrap_or_default();
        LogInfo {
            events: self.events,
            bytes: self.bytes,
            mix: self.mix,
            today: today.to_string(),
            top_horse,
            top_runs,
            top_jockey,
            top_jockey_rides,
            meeting_date,
            meeting_races,
        }
    }
}

/// The users of the benchmark's nats-server, kept with its store.
pub fn credentials(nats_dir: &Path) -> anyhow::Result<Credentials> {
    Credentials::ensure(&nats_dir.join("credentials"), STREAM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmarks_day_starts_far_from_its_midnight_at_every_hour() {
        let midnight: jiff::Timestamp = "2026-11-25T00:00:00Z".parse().expect("a time");
        for h in 0..24 {
            let now = midnight + SignedDuration::from_mins(h * 60 + 59);
            let day = Day::at(now).expect("a zone");
            let local = now.to_zoned(day.zone.clone());
            assert_eq!(
                i64::from(local.hour()),
                START_HOUR,
                "{now} in {}",
                day.zone_name
            );
            assert_eq!(local.date(), day.date);
        }
    }

    #[test]
    fn the_benchmarks_day_names_its_zone_by_its_offset_from_utc() {
        // 17:30 UTC is 02:30 at UTC+9, which POSIX names Etc/GMT-9; 05:30 UTC is 02:30 at
        // UTC-3, Etc/GMT+3.
        for (utc, today, name) in [
            ("17:30", "2026-11-26 in UTC+09:00 ", "Etc/GMT-9"),
            ("05:30", "2026-11-25 in UTC-03:00 ", "Etc/GMT+3"),
            ("02:30", "2026-11-25 in UTC+00:00 ", "Etc/GMT"),
        ] {
            let now = format!("2026-11-25T{utc}:00Z");
            let day = Day::at(now.parse().expect("a time")).expect("a zone");
            let said = day.describe();
            assert!(said.starts_with(today), "{said}");
            assert!(said.contains(&format!("RACING_TIMEZONE={name},")), "{said}");
        }
    }
}
