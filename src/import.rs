//! Real Hong Kong racing history as feed events: the two-file CSV format in which public
//! Hong Kong results datasets (the 2014 to 2017 seasons) are shared, one file of races and
//! one of runners, mapped to one `RaceResultPublished` a race. `docs/feeding.md` maps
//! every column. Pure: files in, events and problems out; `racing import hk-results`
//! writes or publishes them.
//!
//! A race is written whole or not at all, as a result is published whole: a runner row
//! whose required value cannot be read keeps its race out, and both are reported. A bad
//! optional value (a running position, a weight) is left out of its runner and reported.
//! Nothing is dropped without a line saying so.

use std::collections::HashMap;
use std::io::Read;

use racing_events::{Envelope, Event, Lbw, RaceResult, ResultRunner};
use uuid::Uuid;

/// The namespace of the events' ids: `event_id` is UUID v5 of the source's race id in
/// it, so that importing the same race again publishes the same event, which the
/// service ignores.
pub const HK_RESULTS_NAMESPACE: Uuid = Uuid::from_u128(0x8c1e_33a4_5b7d_4e0f_9a61_2d3c_4b5e_6f70);

/// The columns of the races file the importer reads.
const RACE_COLUMNS: [&str; 8] = [
    "race_id",
    "race_date",
    "race_course",
    "race_number",
    "race_class",
    "race_distance",
    "track_condition",
    "race_name",
];

/// The columns of the runners file the importer reads (`running_position_1` to `_6` as
/// well, where present).
const RUNNER_COLUMNS: [&str; 13] = [
    "race_id",
    "finishing_position",
    "horse_name",
    "horse_id",
    "jockey",
    "trainer",
    "actual_weight",
    "declared_horse_weight",
    "draw",
    "length_behind_winner",
    "finish_time",
    "win_odds",
    "horse_number",
];

/// A row that could not be mapped, or a value left out: which file, which line (the
/// header is line 1), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `races` or `runners`.
    pub file: &'static str,
    /// The line of the file, from 1 (the header).
    pub line: u64,
    /// What could not be mapped, and what became of it.
    pub reason: String,
}

/// What an import made of the two files.
#[derive(Debug, Default)]
pub struct Imported {
    /// One result a race, in the races file's order.
    pub events: Vec<Envelope>,
    /// Every row not mapped and every value left out.
    pub problems: Vec<Problem>,
    /// Races of the races file.
    pub races: u64,
    /// Runner rows of the runners file.
    pub runners: u64,
}

/// One CSV file, its header's columns by name.
struct Table {
    columns: HashMap<String, usize>,
    rows: Vec<(u64, csv::StringRecord)>,
}

impl Table {
    fn read(file: &'static str, input: impl Read, needed: &[&str]) -> anyhow::Result<Table> {
        let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(input);
        let header = reader
            .headers()
            .map_err(|e| anyhow::anyhow!("the {file} file: its header: {e}"))?;
        let columns: HashMap<String, usize> = header
            .iter()
            .enumerate()
            .map(|(i, name)| (name.trim().to_owned(), i))
            .collect();
        let missing: Vec<&str> = needed
            .iter()
            .filter(|c| !columns.contains_key(**c))
            .copied()
            .collect();
        anyhow::ensure!(
            missing.is_empty(),
            "the {file} file has no column {} (its header: {})",
            missing.join(", "),
            header.iter().collect::<Vec<_>>().join(",")
        );
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| anyhow::anyhow!("the {file} file: {e}"))?;
            let line = record.position().map_or(0, |p| p.line());
            rows.push((line, record));
        }
        Ok(Table { columns, rows })
    }

    /// The value of `column` in `row`, trimmed; empty where the row is short.
    fn get<'r>(&self, row: &'r csv::StringRecord, column: &str) -> &'r str {
        self.columns
            .get(column)
            .and_then(|&i| row.get(i))
            .map_or("", str::trim)
    }
}

/// Whether a cell says "no value": empty, `---` (the source's dash), `NaN` or `nan`
/// (written by the tools the datasets were scraped with).
fn blank(v: &str) -> bool {
    v.is_empty() || v.chars().all(|c| c == '-') && v.len() > 1 || v.eq_ignore_ascii_case("nan")
}

/// A whole number, also as the tools that wrote the datasets write one (`7.0`).
fn whole(v: &str) -> Option<i64> {
    let v = v.strip_suffix(".0").unwrap_or(v);
    v.parse().ok()
}

/// `1.22.33` (the datasets' way) or `1:22.33` as `1:22.33`.
fn finish_time(v: &str) -> Option<String> {
    let (minutes, rest) = v.split_once(['.', ':'])?;
    let ok = !minutes.is_empty()
        && minutes.len() <= 3
        && minutes.bytes().all(|c| c.is_ascii_digit())
        && rest.len() == 5
        && rest.as_bytes()[2] == b'.'
        && rest
            .bytes()
            .enumerate()
            .all(|(i, c)| i == 2 || c.is_ascii_digit())
        && rest.as_bytes()[0] < b'6';
    ok.then(|| format!("{minutes}:{rest}"))
}

/// Reads the races and the runners, and maps each race with its runners to a result.
pub fn hk_results(races: impl Read, runners: impl Read) -> anyhow::Result<Imported> {
    let races = Table::read("races", races, &RACE_COLUMNS)?;
    let runners = Table::read("runners", runners, &RUNNER_COLUMNS)?;
    let mut imported = Imported {
        races: races.rows.len() as u64,
        runners: runners.rows.len() as u64,
        ..Imported::default()
    };
    let mut by_race: HashMap<&str, Vec<&(u64, csv::StringRecord)>> = HashMap::new();
    for row in &runners.rows {
        by_race
            .entry(runners.get(&row.1, "race_id"))
            .or_default()
            .push(row);
    }
    let mut seen: HashMap<String, u64> = HashMap::new();
    for (line, race) in &races.rows {
        let id = races.get(race, "race_id");
        let problem = |reason: String| Problem {
            file: "races",
            line: *line,
            reason,
        };
        if id.is_empty() {
            imported
                .problems
                .push(problem("no race_id: race not written".into()));
            continue;
        }
        if let Some(first) = seen.insert(id.to_owned(), *line) {
            imported.problems.push(problem(format!(
                "race_id {id} again (first on line {first}): race not written twice"
            )));
            continue;
        }
        let rows = by_race.remove(id).unwrap_or_default();
        match race_result(&races, race, &runners, &rows, &mut imported.problems) {
            Ok(result) => {
                let envelope = Envelope {
                    event_id: Uuid::new_v5(&HK_RESULTS_NAMESPACE, format!("race:{id}").as_bytes()),
                    occurred_at: format!("{}T00:00:00+08:00", result.date),
                    event: Event::RaceResultPublished(result),
                };
                // The service's own validation: what it would refuse is reported here.
                match Envelope::parse(envelope.to_json().as_bytes()) {
                    Ok(_) => imported.events.push(envelope),
                    Err(e) => imported
                        .problems
                        .push(problem(format!("race {id} not written: {e}"))),
                }
            }
            Err(reason) => imported
                .problems
                .push(problem(format!("race {id} not written: {reason}"))),
        }
    }
    let mut orphans: Vec<_> = by_race.into_values().flatten().collect();
    orphans.sort_by_key(|(line, _)| *line);
    for (line, row) in orphans {
        imported.problems.push(Problem {
            file: "runners",
            line: *line,
            reason: format!(
                "race_id `{}` is in no row of the races file: runner not written",
                runners.get(row, "race_id")
            ),
        });
    }
    imported.problems.sort_by_key(|p| (p.file, p.line));
    Ok(imported)
}

/// The result of one race row and its runner rows; `Err` says why the race cannot be
/// written whole.
fn race_result(
    races: &Table,
    race: &csv::StringRecord,
    runners: &Table,
    rows: &[&(u64, csv::StringRecord)],
    problems: &mut Vec<Problem>,
) -> Result<RaceResult, String> {
    let cell = |column: &str| races.get(race, column);
    let date = cell("race_date");
    if racing_events::Date::parse(date).is_none() {
        return Err(format!(
            "race_date `{date}` is not a YYYY-MM-DD calendar date"
        ));
    }
    let number = |column: &str| {
        whole(cell(column))
            .ok_or_else(|| format!("{column} `{}` is not a whole number", cell(column)))
    };
    let race_number = number("race_number")?;
    let distance = number("race_distance")?;
    if rows.is_empty() {
        return Err("no runner rows in the runners file".into());
    }
    let class = Some(cell("race_class").to_owned()).filter(|c| !blank(c));
    let mut result = RaceResult {
        date: date.to_owned(),
        venue: cell("race_course").to_owned(),
        race_number,
        race_name: cell("race_name").to_owned(),
        distance,
        going: cell("track_condition").to_owned(),
        runners: Vec::with_capacity(rows.len()),
        class,
    };
    let mut unmapped = Vec::new();
    for (line, row) in rows {
        match runner(runners, row) {
            Ok((runner, left_out)) => {
                for reason in left_out {
                    problems.push(Problem {
                        file: "runners",
                        line: *line,
                        reason,
                    });
                }
                result.runners.push(runner);
            }
            Err(reason) => {
                problems.push(Problem {
                    file: "runners",
                    line: *line,
                    reason: format!("{reason}: its race is not written"),
                });
                unmapped.push(line.to_string());
            }
        }
    }
    if !unmapped.is_empty() {
        return Err(format!(
            "runner lines {} cannot be mapped",
            unmapped.join(", ")
        ));
    }
    Ok(result)
}

/// One runner row; `Err` where a required value cannot be read. The reasons beside it
/// name the optional values left out.
fn runner(t: &Table, row: &csv::StringRecord) -> Result<(ResultRunner, Vec<String>), String> {
    let cell = |column: &str| t.get(row, column);
    let mut left_out = Vec::new();
    let mut optional = |column: &str, lo: i64, hi: i64| -> Option<i64> {
        let v = cell(column);
        if blank(v) {
            return None;
        }
        let n = whole(v).filter(|n| (lo..=hi).contains(n));
        if n.is_none() {
            left_out.push(format!(
                "{column} `{v}` is not a whole number from {lo} to {hi}: left out"
            ));
        }
        n
    };
    let actual_weight = optional("actual_weight", 90, 160);
    let declared_weight = optional("declared_horse_weight", 700, 1500);
    let draw = optional("draw", 1, 99);
    let mut calls = Vec::new();
    for i in 1..=6 {
        if let Some(p) = optional(&format!("running_position_{i}"), 1, 99) {
            calls.push(p);
        }
    }
    let lbw = cell("length_behind_winner");
    let lbw = if blank(lbw) && lbw != "---" {
        None
    } else if Lbw::parse(lbw).is_some() {
        Some(lbw.to_owned())
    } else {
        left_out.push(format!(
            "length_behind_winner `{lbw}` is not lengths behind: left out"
        ));
        None
    };
    let horse_no = cell("horse_id");
    if !racing_events::is_horse_no(horse_no) {
        return Err(format!("horse_id `{horse_no}` is not a brand number"));
    }
    let placing = cell("finishing_position");
    let (position, dead_heat, status) = position(placing).ok_or_else(|| {
        format!("finishing_position `{placing}` is neither a placing nor an official code")
    })?;
    let time = cell("finish_time");
    let finish_time = if blank(time) {
        None
    } else {
        Some(finish_time(time).ok_or_else(|| format!("finish_time `{time}` is not m.ss.cc"))?)
    };
    let odds = cell("win_odds");
    let win_odds = if blank(odds) {
        None
    } else {
        let price = odds
            .parse::<f64>()
            .ok()
            .filter(|o| o.is_finite() && *o >= 1.0);
        Some(price.ok_or_else(|| format!("win_odds `{odds}` is not decimal odds of 1.0 or more"))?)
    };
    Ok((
        ResultRunner {
            position,
            horse_no: horse_no.to_owned(),
            horse_name: cell("horse_name").to_owned(),
            jockey: cell("jockey").to_owned(),
            trainer: cell("trainer").to_owned(),
            finish_time,
            win_odds,
            dead_heat,
            status,
            lbw,
            running_positions: (!calls.is_empty()).then_some(calls),
            actual_weight,
            declared_weight,
            draw,
        },
        left_out,
    ))
}

/// `finishing_position`: a placing (`3`), a dead heat (`3 DH`), or an official code
/// (`WV`, `PU`, `WV-A`, ...): `(position, dead_heat, status)`.
fn position(v: &str) -> Option<(Option<i64>, bool, Option<String>)> {
    let (placing, dead_heat) = match v.strip_suffix("DH") {
        Some(p) => (p.trim(), true),
        None => (v, false),
    };
    if let Some(p) = whole(placing).filter(|p| (1..=99).contains(p)) {
        return Some((Some(p), dead_heat, None));
    }
    let code = (1..=8).contains(&v.len())
        && v.as_bytes()[0].is_ascii_uppercase()
        && v.bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'-');
    code.then(|| (None, false, Some(v.to_owned())))
}

#[cfg(test)]
mod tests;
