//! `racing import hk-results` end to end, as a user runs it: the command reads the two
//! files and publishes as the feeder to a real NATS, and the service serves what it wrote.
//! The fixtures imported in one command and again (all duplicates); the report the
//! feeding guide shows; two seasons of generated results in the public files' layout,
//! with every spelling of a missing value, every race written and every value served; and
//! a race corrected in the files and imported again, as the guide shows, replacing that
//! race and nothing else.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats};

/// The fixtures of `tests/fixtures/hk/`.
fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hk")
}

/// The races and runners files in `dir`, by the public files' names.
fn files(dir: &Path) -> [PathBuf; 2] {
    [
        dir.join("race-result-race.csv"),
        dir.join("race-result-horse.csv"),
    ]
}

/// Runs `racing import hk-results` on the two files with `extra` arguments; its output.
async fn import(files: &[PathBuf; 2], extra: &[String]) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["import", "hk-results", "--races"])
        .arg(&files[0])
        .arg("--runners")
        .arg(&files[1])
        .args(extra)
        .env_remove("RACING_NATS_URL")
        .output()
        .await
        .expect("racing runs")
}

/// The arguments that publish to `nats` as its feeder.
fn publish_to(nats: &Nats) -> Vec<String> {
    let dir = nats.credentials_dir();
    let data_dir = dir.parent().expect("the server's directory");
    vec![
        "--publish".to_owned(),
        "--nats-url".to_owned(),
        nats.url(),
        "--data-dir".to_owned(),
        data_dir.display().to_string(),
    ]
}

/// The stream's last sequence, as the service sees it.
pub(crate) async fn last_seq(nats: &Nats) -> u64 {
    let mut stream = nats.service.get_stream("RACING").await.expect("the stream");
    stream
        .info()
        .await
        .expect("stream info")
        .state
        .last_sequence
}

#[tokio::test]
async fn hong_kong_history_is_imported_in_one_command_and_again_changes_nothing() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let fixtures = files(&fixtures());
    // Written as NDJSON, each line as `racing publish --check` takes it.
    let written = import(&fixtures, &[]).await;
    assert_eq!(
        written.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let lines: Vec<String> = String::from_utf8_lossy(&written.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 3);
    for line in &lines {
        racing_events::Envelope::parse(line.as_bytes()).expect("valid");
    }
    // Published as the feeder, and served.
    let published = import(&fixtures, &publish_to(&nats)).await;
    let said = String::from_utf8_lossy(&published.stderr).to_string();
    assert_eq!(published.status.code(), Some(0), "{said}");
    assert!(said.contains(": 3 new, 0 duplicate, 0 refused"), "{said}");
    app.projected(last_seq(&nats).await).await;
    let (status, served) = app.get("/api/v1/results/2016-09-11/1").await;
    assert_eq!(status, StatusCode::OK, "{served}");
    assert_eq!(served["venue"], "Sha Tin", "{served}");
    let runners = served["runners"].as_array().expect("runners");
    assert_eq!(runners.len(), 5);
    assert_eq!(runners[0]["horse_no"], "T101");
    assert_eq!(runners[0]["lbw"], "-");
    let (status, form) = app.get("/api/v1/horses/T101/form").await;
    assert_eq!(status, StatusCode::OK, "{form}");
    // Imported again: the same events, each a duplicate.
    let again = import(&fixtures, &publish_to(&nats)).await;
    let said = String::from_utf8_lossy(&again.stderr).to_string();
    assert_eq!(again.status.code(), Some(0), "{said}");
    assert!(said.contains(": 0 new, 3 duplicate, 0 refused"), "{said}");
}

/// The command and the lines of an example of `docs/feeding.md` (see
/// [`crate::feeding::block`]): the `$ racing ...` line's words after `racing`, and the
/// lines it shows printed.
pub(crate) fn example(name: &str) -> (Vec<String>, Vec<String>) {
    let lines = crate::feeding::block(name);
    let command = lines[0]
        .strip_prefix("$ racing ")
        .unwrap_or_else(|| panic!("the example {name} starts with `$ racing `"));
    (
        command.split_whitespace().map(str::to_owned).collect(),
        lines[1..].to_vec(),
    )
}

/// `words` with each `--races`, `--runners`, `--out` and `--data-dir` value the example
/// names replaced by the test's own: `files`, a file in `dir`, and `data_dir`.
fn with_paths(
    words: &[String],
    files: &[PathBuf; 2],
    dir: &Path,
    data_dir: Option<&Path>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        out.push(word.clone());
        let path = match word.as_str() {
            "--races" => files[0].clone(),
            "--runners" => files[1].clone(),
            "--out" => dir.join("out.ndjson"),
            "--data-dir" => data_dir.expect("a data directory").to_path_buf(),
            _ => continue,
        };
        words.next();
        out.push(path.display().to_string());
    }
    out
}

/// Standard error with its varying parts as the guide writes them: the time the files
/// took to read, and `url` as the guide's NATS.
pub(crate) fn as_the_guide_shows(stderr: &[u8], url: Option<&str>) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(|line| {
            let line = match line.split_once(" read in ") {
                Some((read, _)) => format!("{read} read in 0.00 s"),
                None => line.to_owned(),
            };
            match url {
                Some(url) => line.replace(url, "nats://127.0.0.1:4222"),
                None => line,
            }
        })
        .collect()
}

#[tokio::test]
async fn the_report_the_feeding_guide_shows_is_what_the_importer_prints() {
    let (words, shown) = example("an import's report");
    assert_eq!(words[..2], ["import", "hk-results"]);
    let dir = TempDir::new().expect("temp dir");
    let files = files(&fixtures().join("missing"));
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(with_paths(&words, &files, dir.path(), None))
        .output()
        .await
        .expect("racing runs");
    assert_eq!(as_the_guide_shows(&run.stderr, None), shown);
    // A runner row left out: exit 3, as the guide says.
    assert_eq!(run.status.code(), Some(3));
    let written = std::fs::read_to_string(dir.path().join("out.ndjson")).expect("written");
    assert_eq!(written.lines().count(), 3);
}

/// Spellings of a missing value, in turn; dashes only where a number or a name is due.
const MISSING: [&str; 7] = ["NA", "N/A", "NaN", "---", "-", "", "nan"];
const MISSING_WORDS: [&str; 4] = ["NA", "N/A", "NaN", ""];
const WITHDRAWN: [&str; 6] = ["WV", "WV-A", "WX", "WX-A", "WXNR", "TNP"];
const RAN_NO_PLACE: [&str; 4] = ["PU", "UR", "FE", "DNF"];
const MARGINS: [&str; 16] = [
    "SH", "HD", "N", "NOSE", "1/2", "3/4", "1", "1-1/4", "1-1/2", "2", "2-3/4", "3-1/2", "5",
    "7-1/4", "10", "DIST",
];
const JOCKEYS: [&str; 12] = [
    "J Moreira",
    "Z Purton",
    "K Teetan",
    "N Callan",
    "D Whyte",
    "C Y Ho",
    "K C Leung",
    "B Prebble",
    "M L Yeung",
    "H W Lai",
    "T H So",
    "C Schofield",
];
const TRAINERS: [&str; 10] = [
    "J Size", "C Fownes", "A S Cruz", "R Gibson", "P F Yiu", "T P Yung", "C H Yip", "D J Hall",
    "K W Lui", "J Moore",
];
const GOINGS: [&str; 5] = [
    "GOOD",
    "GOOD TO FIRM",
    "GOOD TO YIELDING",
    "YIELDING",
    "WET SLOW",
];
const CLASSES: [&str; 7] = [
    "Class 1",
    "Class 2",
    "Class 3",
    "Class 4",
    "Class 5",
    "Group One",
    "Griffin",
];
const DISTANCES: [i64; 9] = [1000, 1200, 1400, 1600, 1650, 1800, 2000, 2200, 2400];

/// Two seasons in the public files' layout, and what the service should serve of each race.
struct Seasons {
    races_csv: String,
    runners_csv: String,
    /// The served result of each race, as its values should come back: `(path, race)`.
    races: Vec<(String, Value)>,
    rows: usize,
}

/// The spellings of missing values, taken in turn so that each is used all along.
struct Spellings(usize);

impl Spellings {
    /// `value`, or a spelling of a missing value of `from` where `gone`.
    fn cell(&mut self, value: impl ToString, gone: bool, from: &[&str]) -> String {
        if gone {
            self.0 += 1;
            from[self.0 % from.len()].to_owned()
        } else {
            value.to_string()
        }
    }
}

/// Whether the `n`th of a kind lacks a value one time in `every`.
fn now_and_then(n: usize, every: usize) -> bool {
    n.is_multiple_of(every)
}

/// Two seasons of Hong Kong results: `races` races and `rows` runner rows, at Sha Tin on
/// Sundays (10 races) and Happy Valley on Wednesdays (8), September to mid-July.
fn two_seasons(races: usize, rows: usize) -> Seasons {
    let mut out = Seasons {
        races_csv: "race_id,race_date,race_course,race_number,race_class,race_distance,\
                    track_condition,race_name,track,sectional_time,incident_report\n"
            .to_owned(),
        runners_csv: "finishing_position,horse_number,horse_name,horse_id,jockey,trainer,\
                      actual_weight,declared_horse_weight,draw,length_behind_winner,\
                      running_position_1,running_position_2,running_position_3,\
                      running_position_4,finish_time,win_odds,running_position_5,\
                      running_position_6,race_id\n"
            .to_owned(),
        races: Vec::with_capacity(races),
        rows,
    };
    let mut spell = Spellings(0);
    let mut day: jiff::civil::Date = "2014-09-07".parse().expect("a date");
    let (mut season, mut in_season) = (2014, 0);
    while out.races.len() < races {
        let wednesday = day.weekday() == jiff::civil::Weekday::Wednesday;
        let (venue, meeting) = if wednesday {
            ("Happy Valley", 8)
        } else {
            ("Sha Tin", 10)
        };
        for number in 1..=meeting {
            let i = out.races.len();
            if i == races {
                break;
            }
            in_season += 1;
            let id = format!("{season}-{in_season:03}");
            // Runners a race, so that the rows come to `rows` in all.
            let extra = rows - 12 * races;
            let field = 12 + (i + 1) * extra / races - i * extra / races;
            let at = Race {
                i,
                id: &id,
                day: &day.to_string(),
                venue,
                number,
                field,
            };
            let race = at.write(&mut out, &mut spell);
            out.races
                .push((format!("/api/v1/results/{day}/{number}"), race));
        }
        // Wednesday to Sunday, Sunday to Wednesday; the summer off.
        let days = if wednesday { 4 } else { 3 };
        day = day
            .checked_add(jiff::Span::new().days(days))
            .expect("a day");
        if day.month() == 7 && day.day() > 12 {
            season += 1;
            in_season = 0;
            day = jiff::civil::date(season, 9, 6);
            while !matches!(
                day.weekday(),
                jiff::civil::Weekday::Sunday | jiff::civil::Weekday::Wednesday
            ) {
                day = day.tomorrow().expect("a day");
            }
        }
    }
    out
}

/// The `i`th race of the seasons, of `field` runners.
struct Race<'a> {
    i: usize,
    id: &'a str,
    day: &'a str,
    venue: &'a str,
    number: i64,
    field: usize,
}

impl Race<'_> {
    /// Its rows written to `out`; the race as it should be served. Withdrawn runners
    /// (every seventh race), runners that ran unplaced (every 23rd), dead heats for second
    /// (every 17th), short races' calls missing, and each optional value missing now and
    /// then.
    fn write(&self, out: &mut Seasons, spell: &mut Spellings) -> Value {
        let Race {
            i,
            id,
            day,
            venue,
            number,
            field,
        } = *self;
        let distance = DISTANCES[i % DISTANCES.len()];
        let class = CLASSES[i % CLASSES.len()];
        let going = GOINGS[i % GOINGS.len()];
        let name = format!("RACE {i} HANDICAP");
        let (class_gone, name_gone) = (i % 50 == 7, i % 97 == 3);
        writeln!(
            out.races_csv,
            "{id},{day},{venue},{number},{},{distance},{going},{},\"TURF - \"\"A\"\" COURSE\",\
             NA,\"Inquiry, with a comma.\"",
            spell.cell(class, class_gone, &MISSING),
            spell.cell(&name, name_gone, &MISSING_WORDS),
        )
        .expect("written");
        let runners: Vec<Value> = (0..field)
            .map(|j| self.runner(j, distance, out, spell))
            .collect();
        serde_json::json!({
            "date": day,
            "venue": venue,
            "race_number": number,
            "race_name": if name_gone { "" } else { name.as_str() },
            "distance": distance,
            "going": going,
            "class": (!class_gone).then_some(class),
            "runners": runners,
        })
    }

    /// Its `j`th runner's row written to `out`; the runner as it should be served.
    fn runner(&self, j: usize, distance: i64, out: &mut Seasons, spell: &mut Spellings) -> Value {
        let (i, field) = (self.i, self.field);
        let withdrawn = i % 7 == 3 && j == field - 1;
        let unplaced = i % 23 == 5 && j == field - 2;
        let dead_heat = i % 17 == 2 && (j == 1 || j == 2);
        let place = if dead_heat { 2 } else { j as i64 + 1 };
        let status = if withdrawn {
            Some(WITHDRAWN[(i / 7) % WITHDRAWN.len()])
        } else if unplaced {
            Some(RAN_NO_PLACE[(i / 23) % RAN_NO_PLACE.len()])
        } else {
            None
        };
        let horse = (i * 7 + j * 131) % 2400;
        let letter = ['K', 'L', 'M', 'N', 'P', 'S', 'T', 'V'][horse / 300];
        let horse_no = format!("{letter}{:03}", horse % 300);
        let adjective = ["LUCKY", "GOLDEN", "HAPPY", "SUPER"][horse % 4];
        let horse_name = format!("{adjective} {horse_no}");
        let placing = match status {
            Some(code) => code.to_owned(),
            None if dead_heat => format!("{place} DH"),
            None => place.to_string(),
        };
        // A withdrawn runner has none of these; a runner that ran lacks one now and then.
        let gone = |salt: usize, every: usize| withdrawn || now_and_then(i * 3 + j * salt, every);
        let weight = 113 + ((i + j * 3) % 21) as i64;
        let declared = 980 + ((i * 5 + j * 17) % 280) as i64;
        let draw = ((i + j * 5) % field) as i64 + 1;
        let behind = if dead_heat { 1 } else { j };
        let hundredths = (distance * 6) as usize + behind * 16 + i % 40;
        let time = format!(
            "{}.{:02}.{:02}",
            hundredths / 6000,
            hundredths % 6000 / 100,
            hundredths % 100
        );
        let odds = format!("{:.1}", 1.5 + ((i * 37 + j * 11) % 980) as f64 / 10.0);
        let margin = match status {
            Some(code) if WITHDRAWN.contains(&code) => None,
            Some(_) => Some("---".to_owned()),
            None if j == 0 => Some("-".to_owned()),
            None if dead_heat => Some("1/2".to_owned()),
            None => Some(MARGINS[(i + j) % MARGINS.len()].to_owned()),
        };
        let calls = match distance {
            ..=1200 => 3,
            1201..=1650 => 4,
            1651..=2000 => 5,
            _ => 6,
        };
        let called: Vec<Option<i64>> = (0..6)
            .map(|c| {
                let ran = c < calls && !withdrawn && !(unplaced && c + 2 > calls);
                let at = if c + 1 == calls && status.is_none() {
                    place
                } else {
                    ((i + j + c * 3) % field) as i64 + 1
                };
                (ran && !now_and_then(i + j * 7 + c, 61)).then_some(at)
            })
            .collect();
        let (weight_gone, declared_gone, draw_gone) = (gone(7, 29), gone(11, 31), gone(13, 37));
        let (time_gone, odds_gone) = (gone(17, 43) || status.is_some(), gone(19, 41));
        let (jockey_gone, trainer_gone) = (gone(23, 53), gone(29, 59));
        let margin_gone = margin.is_none() || now_and_then(i * 3 + j * 31, 47);
        let jockey = JOCKEYS[(i + j) % JOCKEYS.len()];
        let trainer = TRAINERS[(i * 3 + j) % TRAINERS.len()];
        let calls: Vec<String> = called
            .iter()
            .map(|c| spell.cell(c.unwrap_or_default(), c.is_none(), &MISSING))
            .collect();
        writeln!(
            out.runners_csv,
            "{placing},{},{horse_name},{horse_no},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            if withdrawn {
                "NA".to_owned()
            } else {
                (j + 1).to_string()
            },
            spell.cell(jockey, jockey_gone, &MISSING),
            spell.cell(trainer, trainer_gone, &MISSING),
            spell.cell(weight, weight_gone, &MISSING),
            spell.cell(declared, declared_gone, &MISSING),
            spell.cell(draw, draw_gone, &MISSING),
            spell.cell(
                margin.clone().unwrap_or_default(),
                margin_gone,
                &MISSING_WORDS
            ),
            calls[0],
            calls[1],
            calls[2],
            calls[3],
            spell.cell(&time, time_gone, &MISSING),
            spell.cell(&odds, odds_gone, &MISSING),
            calls[4],
            calls[5],
            self.id,
        )
        .expect("written");
        let given: Vec<i64> = called.iter().flatten().copied().collect();
        serde_json::json!({
            "position": status.is_none().then_some(place),
            "horse_no": horse_no,
            "horse_name": horse_name,
            "jockey": if jockey_gone { "" } else { jockey },
            "trainer": if trainer_gone { "" } else { trainer },
            "finish_time": (!time_gone).then(|| time.replacen('.', ":", 1)),
            "win_odds": (!odds_gone).then(|| odds.parse::<f64>().expect("odds")),
            "status": status,
            "dead_heat": dead_heat,
            "lbw": if margin_gone { None } else { margin },
            "running_positions": (!given.is_empty()).then_some(given),
            "actual_weight": (!weight_gone).then_some(weight),
            "declared_weight": (!declared_gone).then_some(declared),
            "draw": (!draw_gone).then_some(draw),
        })
    }
}

/// The differences between the race the service serves and the race the files give: each
/// field of `expected` (a `null` one left out or `null`), by runner brand number.
fn differences(path: &str, served: &Value, expected: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut compare = |what: String, got: &Value, want: &Value| {
        let same = got == want || (want.is_null() && got.is_null());
        if !same {
            found.push(format!(
                "{path} {what}: served {got}, the files give {want}"
            ));
        }
    };
    for (field, want) in expected.as_object().expect("an object") {
        if field != "runners" {
            compare(field.clone(), &served[field], want);
        }
    }
    let served_runners = served["runners"].as_array().cloned().unwrap_or_default();
    let expected_runners = expected["runners"].as_array().expect("runners");
    compare(
        "runners".into(),
        &served_runners.len().into(),
        &expected_runners.len().into(),
    );
    for want in expected_runners {
        let horse = &want["horse_no"];
        let Some(got) = served_runners.iter().find(|r| &r["horse_no"] == horse) else {
            compare(format!("{horse}"), &Value::Null, &"served".into());
            continue;
        };
        for (field, value) in want.as_object().expect("an object") {
            compare(format!("{horse} {field}"), &got[field], value);
        }
    }
    found
}

#[tokio::test]
async fn two_seasons_in_the_public_layout_are_all_written_and_every_value_is_served() {
    let started = Instant::now();
    let seasons = two_seasons(1561, 19_996);
    assert_eq!(seasons.races.len(), 1561);
    assert_eq!(seasons.runners_csv.lines().count() - 1, seasons.rows);
    let dir = TempDir::new().expect("temp dir");
    let paths = files(dir.path());
    std::fs::write(&paths[0], &seasons.races_csv).expect("written");
    std::fs::write(&paths[1], &seasons.runners_csv).expect("written");

    let nats = Nats::start().await;
    let mut app = App::start(&nats, &dir.path().join("data")).await;
    let run = import(&paths, &publish_to(&nats)).await;
    let said = String::from_utf8_lossy(&run.stderr).to_string();
    // Every race written, nothing reported: a missing value is only counted.
    assert_eq!(run.status.code(), Some(0), "{said}");
    let report: Vec<&str> = said.lines().collect();
    assert!(
        report[0].starts_with("1561 races and 19996 runner rows read in "),
        "{said}"
    );
    assert_eq!(report[1], "written: 1561 races, 19996 runners", "{said}");
    assert_eq!(report[2], "not written: 0 races, 0 runner rows of no race");
    assert!(report[3].starts_with("left out: "), "{said}");
    assert!(
        report[4].ends_with(": 1561 new, 0 duplicate, 0 refused"),
        "{said}"
    );
    assert_eq!(report.len(), 5, "{said}");
    eprintln!("{said}");
    let imported = started.elapsed();

    let progress = app.projected(last_seq(&nats).await).await;
    assert_eq!((progress.applied, progress.dead_letters), (1561, 0));
    let projected = started.elapsed();

    // Every value back through the API.
    let app = &app;
    let differences: Vec<String> = futures::stream::iter(&seasons.races)
        .map(|(path, expected)| async move {
            let (status, served) = app.get(path).await;
            if status != StatusCode::OK {
                return vec![format!("{path}: {status}")];
            }
            differences(path, &served, expected)
        })
        .buffer_unordered(8)
        .flat_map(futures::stream::iter)
        .collect()
        .await;
    assert_eq!(
        differences[..differences.len().min(20)],
        Vec::<String>::new(),
        "{} differences in all",
        differences.len()
    );
    eprintln!(
        "two seasons: generated and imported in {:.1} s, projected by {:.1} s, read back by {:.1} s",
        imported.as_secs_f64(),
        projected.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// The paths the change feed lists after `since`, with the position of each.
async fn changes_since(app: &App, since: u64) -> Vec<(u64, String)> {
    let (status, page) = app
        .get(&format!("/api/v1/changes?since={since}&limit=1000"))
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["next"], Value::Null, "one page: {page}");
    page["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            let seq = c["seq"].as_u64().expect("a seq");
            (seq, c["path"].as_str().expect("a path").to_owned())
        })
        .collect()
}

#[tokio::test]
async fn a_race_corrected_in_the_files_and_imported_again_replaces_that_race_alone() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, &dir.path().join("data")).await;
    let copies = files(dir.path());
    for (from, to) in files(&fixtures()).iter().zip(&copies) {
        std::fs::copy(from, to).expect("copied");
    }
    let files = copies;
    let first = import(&files, &publish_to(&nats)).await;
    let said = String::from_utf8_lossy(&first.stderr).to_string();
    assert!(said.contains(": 3 new, 0 duplicate, 0 refused"), "{said}");
    let before = last_seq(&nats).await;
    app.projected(before).await;
    // Every document the import made, as served.
    let paths: Vec<String> = changes_since(&app, 0)
        .await
        .into_iter()
        .map(|(_, path)| path)
        .collect();
    let mut served = Vec::new();
    for path in &paths {
        served.push(app.get(path).await);
    }
    let race = "/api/v1/results/2016-09-11/1";
    let (_, result) = app.get(race).await;
    assert_eq!(result["runners"][1]["horse_no"], "T202");
    assert_eq!(result["runners"][1]["finish_time"], "1:09.66");

    // JADE ORCHID's time corrected in the file, then the guide's command run again.
    let runners = std::fs::read_to_string(&files[1]).expect("read");
    assert_eq!(runners.matches(",1.09.66,").count(), 1);
    std::fs::write(&files[1], runners.replace(",1.09.66,", ",1.09.76,")).expect("written");
    let (words, shown) = example("correcting an imported race");
    let data_dir = nats.credentials_dir();
    let data_dir = data_dir.parent().expect("the server's directory");
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(with_paths(&words, &files, dir.path(), Some(data_dir)))
        .env("RACING_NATS_URL", nats.url())
        .output()
        .await
        .expect("racing runs");
    assert_eq!(as_the_guide_shows(&run.stderr, Some(&nats.url())), shown);
    assert_eq!(run.status.code(), Some(0));

    // One event more, and the API serves the corrected time.
    let after = last_seq(&nats).await;
    assert_eq!(after, before + 1);
    app.projected(after).await;
    let (_, corrected) = app.get(race).await;
    assert_eq!(corrected["runners"][1]["finish_time"], "1:09.76");
    let (_, form) = app.get("/api/v1/horses/T202/form").await;
    assert_eq!(form["form"][0]["finish_time"], "1:09.76", "{form}");
    // The change feed lists the race once more, at the new event, and nothing of the
    // other races.
    let changed = changes_since(&app, before).await;
    assert!(changed.iter().all(|(seq, _)| *seq == after), "{changed:?}");
    let changed: Vec<&str> = changed.iter().map(|(_, p)| p.as_str()).collect();
    assert!(changed.contains(&race), "{changed:?}");
    for other in [
        "/api/v1/results/2016-09-11/2",
        "/api/v1/results/2016-09-14/1",
    ] {
        assert!(!changed.contains(&other), "{changed:?}");
    }
    // Nothing else changes: every document the first import made answers as it did,
    // but those of the corrected race.
    for (path, (status, body)) in paths.iter().zip(&served) {
        if changed.contains(&path.as_str()) {
            continue;
        }
        assert_eq!(&app.get(path).await, &(*status, body.clone()), "{path}");
    }
}
