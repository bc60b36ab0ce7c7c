//! Real Hong Kong racing history as feed events: the two-file CSV format in which public
//! Hong Kong results datasets (the 2014 to 2017 seasons) are shared, one file of races and
//! one of runners, mapped to one `RaceResultPublished` a race. `docs/feeding.md` maps
//! every column. Pure: files in, events, refusals and counts out; `racing import
//! hk-results` writes or publishes them.
//!
//! A race is written whole or not at all, as a result is published whole: a required value
//! that is missing or wrong (a brand number, a placing, the time or odds of a runner that
//! ran) keeps its race out, and the race is reported on one line with the reason. The files
//! write a missing value as `NA`, `N/A`, `NaN`, `---`, `-` or an empty cell: an optional
//! one is left out and counted, not reported. An optional value that is there but wrong is
//! left out and reported with its line. A runner withdrawn or that took no part needs no
//! time, odds, draw or weights. Nothing is dropped without a line or a count saying so.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use racing_events::{Envelope, Event, Lbw, RaceResult, ResultRunner};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The namespace of the events' ids (see [`event_id`]).
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
/// well, where present). `horse_number`, the saddle cloth, is not among them: the contract
/// has no field for it.
const RUNNER_COLUMNS: [&str; 12] = [
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
];

/// The words the datasets' tools write for a missing value (R's `NA`, pandas' `NaN`).
const MISSING_WORDS: [&str; 3] = ["NA", "N/A", "NaN"];

/// A row not written, or a value left out that was there: which file, which line (the
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

/// How many values of one column were left out of the races written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut {
    /// Written as missing (`NA`, `---`, an empty cell, ...): none, as the file says.
    pub missing: u64,
    /// There but not a value of the column; each is also a [`Problem`].
    pub unreadable: u64,
}

/// What an import made of the two files.
#[derive(Debug, Default)]
pub struct Imported {
    /// One result a race written, in the races file's order.
    pub events: Vec<Envelope>,
    /// The races not written, each with the reason, and the runner rows of no race.
    pub not_written: Vec<Problem>,
    /// The values there but unreadable, left out of a race written, and the runner rows
    /// left out of one (no finishing position).
    pub problems: Vec<Problem>,
    /// The values left out of the races written, by column. A withdrawn runner's values
    /// are not counted: it has none to give.
    pub left_out: BTreeMap<String, LeftOut>,
    /// Races of the races file.
    pub races: u64,
    /// Runner rows of the runners file.
    pub runners: u64,
}

impl Imported {
    /// Races written, races not written and values left out, a line each: `written: 3
    /// races, 13 runners`, `not written: 1 race, 0 runner rows of no race`, `left out:
    /// draw 2 missing, win_odds 1 unreadable` (or `left out: nothing`).
    pub fn summary(&self) -> String {
        let runners: usize = self
            .events
            .iter()
            .map(|e| match &e.event {
                Event::RaceResultPublished(r) => r.runners.len(),
                _ => 0,
            })
            .sum();
        let races_out = self
            .not_written
            .iter()
            .filter(|p| p.file == "races")
            .count();
        let rows_out = self.not_written.len() - races_out;
        let kinds: Vec<String> = self
            .left_out
            .iter()
            .map(|(column, n)| {
                let counts = [(n.missing, "missing"), (n.unreadable, "unreadable")]
                    .iter()
                    .filter(|(count, _)| *count > 0)
                    .map(|(count, what)| format!("{count} {what}"))
                    .collect::<Vec<_>>()
                    .join(" and ");
                format!("{column} {counts}")
            })
            .collect();
        let left_out = if kinds.is_empty() {
            "nothing".to_owned()
        } else {
            kinds.join(", ")
        };
        format!(
            "written: {} {}, {runners} {}\nnot written: {races_out} {}, {rows_out} {} of no \
             race\nleft out: {left_out}",
            self.events.len(),
            plural(self.events.len(), "race"),
            plural(runners, "runner"),
            plural(races_out, "race"),
            plural(rows_out, "runner row"),
        )
    }
}

/// `word`, with an `s` unless there is one.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// The `event_id` of a race's result: UUID v5, in [`HK_RESULTS_NAMESPACE`], of
/// `race:{race_id}:` followed by the SHA-256 of the result's `data` as published. The
/// same race with the same content is the same event, a duplicate the service ignores; a
/// race whose content changed (a corrected file) is a new event, which replaces the
/// race's result as any later result does.
pub fn event_id(race_id: &str, result: &RaceResult) -> Uuid {
    // Serialising a plain struct of strings and numbers cannot fail.
    let data = serde_json::to_vec(result).unwrap_or_default();
    let mut name = format!("race:{race_id}:").into_bytes();
    name.extend_from_slice(&Sha256::digest(&data));
    Uuid::new_v5(&HK_RESULTS_NAMESPACE, &name)
}

/// One CSV file, its header's columns by name.
struct Table {
    file: &'static str,
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
        Ok(Table {
            file,
            columns,
            rows,
        })
    }

    /// The value of `column` in `row`, trimmed; empty where the row is short.
    fn get<'r>(&self, row: &'r csv::StringRecord, column: &str) -> &'r str {
        self.columns
            .get(column)
            .and_then(|&i| row.get(i))
            .map_or("", str::trim)
    }
}

/// Whether a cell is one of the files' ways of writing "no value": empty, `NA`, `N/A` or
/// `NaN` in any case.
fn missing(v: &str) -> bool {
    v.is_empty() || MISSING_WORDS.iter().any(|w| v.eq_ignore_ascii_case(w))
}

/// [`missing`], or dashes alone (`-`, `---`): "no value" where a number or a name is due.
/// (In `length_behind_winner` dashes are values: `-` is the winner's.)
fn none(v: &str) -> bool {
    missing(v) || v.bytes().all(|c| c == b'-')
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

/// Decimal odds of 1.0 or more.
fn odds(v: &str) -> Option<f64> {
    v.parse::<f64>().ok().filter(|o| o.is_finite() && *o >= 1.0)
}

/// One row's values as they are read: those left out, to be counted (and those that were
/// there, reported) once the row's race is written.
struct Row<'a> {
    table: &'a Table,
    row: &'a csv::StringRecord,
    /// Whether the runner took part (always, for a race's row): where it did not (it was
    /// withdrawn), a value it lacks is not counted, and a time or odds that cannot be read
    /// is only left out, since it has none to give.
    took_part: bool,
    missing: Vec<&'static str>,
    unreadable: Vec<(String, String)>,
}

impl<'a> Row<'a> {
    fn new(table: &'a Table, row: &'a csv::StringRecord) -> Row<'a> {
        Row {
            table,
            row,
            took_part: true,
            missing: Vec::new(),
            unreadable: Vec::new(),
        }
    }

    /// The cell of `column` as written.
    fn cell(&self, column: &str) -> &'a str {
        self.table.get(self.row, column)
    }

    /// The cell of `column`, or `None` where it says "no value" (counted).
    fn given(&mut self, column: &'static str, none_is: fn(&str) -> bool) -> Option<&'a str> {
        if !self.table.columns.contains_key(column) {
            return None;
        }
        let v = self.cell(column);
        if none_is(v) {
            if self.took_part {
                self.missing.push(column);
            }
            return None;
        }
        Some(v)
    }

    /// A name or label: empty where the file gives none.
    fn text(&mut self, column: &'static str) -> String {
        self.given(column, none).unwrap_or_default().to_owned()
    }

    /// An optional value read by `read`, where `none_is` says it is not given; one that
    /// is there and cannot be read is left out with `reason`.
    fn optional<T>(
        &mut self,
        column: &'static str,
        none_is: fn(&str) -> bool,
        read: impl FnOnce(&str) -> Option<T>,
        reason: &str,
    ) -> Option<T> {
        let v = self.given(column, none_is)?;
        let value = read(v);
        if value.is_none() {
            self.unreadable.push((
                column.to_owned(),
                format!("{column} `{v}` {reason}: left out"),
            ));
        }
        value
    }

    /// A value of the runner's result, read by `read`: where the runner ran, one that is
    /// there and cannot be read keeps its race out (`Err`); a withdrawn runner's is left
    /// out, and reported.
    fn of_result<T>(
        &mut self,
        column: &'static str,
        read: impl FnOnce(&str) -> Option<T>,
        what: &str,
    ) -> Result<Option<T>, String> {
        if !self.took_part {
            return Ok(self.optional(column, none, read, &format!("is not {what}")));
        }
        match self.given(column, none) {
            None => Ok(None),
            Some(v) => read(v)
                .map(Some)
                .ok_or_else(|| format!("{column} `{v}` is not {what}")),
        }
    }

    /// An optional whole number from `lo` to `hi`.
    fn number(&mut self, column: &'static str, lo: i64, hi: i64) -> Option<i64> {
        self.optional(
            column,
            none,
            |v| whole(v).filter(|n| (lo..=hi).contains(n)),
            &format!("is not a whole number from {lo} to {hi}"),
        )
    }

    /// Counts what was left out into `imported` and reports what was there, at `line`.
    fn count_into(self, line: u64, imported: &mut Imported) {
        for column in self.missing {
            imported
                .left_out
                .entry(column.to_owned())
                .or_default()
                .missing += 1;
        }
        for (column, reason) in self.unreadable {
            imported.left_out.entry(column).or_default().unreadable += 1;
            imported.problems.push(Problem {
                file: self.table.file,
                line,
                reason,
            });
        }
    }
}

/// The running positions' columns, in order.
const CALLS: [&str; 6] = [
    "running_position_1",
    "running_position_2",
    "running_position_3",
    "running_position_4",
    "running_position_5",
    "running_position_6",
];

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
        let not_written = |reason: String| Problem {
            file: "races",
            line: *line,
            reason,
        };
        if none(id) {
            imported
                .not_written
                .push(not_written("no race_id: race not written".into()));
            continue;
        }
        if let Some(first) = seen.insert(id.to_owned(), *line) {
            imported.not_written.push(not_written(format!(
                "race_id {id} again (first on line {first}): race not written twice"
            )));
            continue;
        }
        let rows = by_race.remove(id).unwrap_or_default();
        match race_result(&races, race, &runners, &rows) {
            Ok(written) => {
                let envelope = Envelope {
                    event_id: event_id(id, &written.result),
                    occurred_at: format!("{}T00:00:00+08:00", written.result.date),
                    event: Event::RaceResultPublished(written.result),
                };
                // The service's own validation: what it would refuse is reported here.
                match Envelope::parse(envelope.to_json().as_bytes()) {
                    Ok(_) => {
                        imported.events.push(envelope);
                        written.race.count_into(*line, &mut imported);
                        for (line, row) in written.runners {
                            row.count_into(line, &mut imported);
                        }
                        for (line, reason) in written.runners_left_out {
                            imported.problems.push(Problem {
                                file: "runners",
                                line,
                                reason: format!("{reason}: runner left out of race {id}"),
                            });
                        }
                    }
                    Err(e) => imported
                        .not_written
                        .push(not_written(format!("race {id} not written: {e}"))),
                }
            }
            Err(reason) => imported
                .not_written
                .push(not_written(format!("race {id} not written: {reason}"))),
        }
    }
    let mut orphans: Vec<_> = by_race.into_values().flatten().collect();
    orphans.sort_by_key(|(line, _)| *line);
    for (line, row) in orphans {
        imported.not_written.push(Problem {
            file: "runners",
            line: *line,
            reason: format!(
                "race_id `{}` is in no row of the races file: runner not written",
                runners.get(row, "race_id")
            ),
        });
    }
    imported.not_written.sort_by_key(|p| (p.file, p.line));
    imported.problems.sort_by_key(|p| (p.file, p.line));
    Ok(imported)
}

/// A race that can be written: its result, and what its rows left out.
struct Written<'a> {
    result: RaceResult,
    race: Row<'a>,
    runners: Vec<(u64, Row<'a>)>,
    /// Runner rows with no finishing position, by line, and why.
    runners_left_out: Vec<(u64, String)>,
}

/// The result of one race row and its runner rows; `Err` says why the race cannot be
/// written whole.
fn race_result<'a>(
    races: &'a Table,
    race: &'a csv::StringRecord,
    runners: &'a Table,
    rows: &[&'a (u64, csv::StringRecord)],
) -> Result<Written<'a>, String> {
    let mut cells = Row::new(races, race);
    let date = cells.cell("race_date");
    if racing_events::Date::parse(date).is_none() {
        return Err(format!(
            "race_date `{date}` is not a YYYY-MM-DD calendar date"
        ));
    }
    let number = |column: &str| {
        let v = cells.cell(column);
        whole(v).ok_or_else(|| format!("{column} `{v}` is not a whole number"))
    };
    let race_number = number("race_number")?;
    let distance = number("race_distance")?;
    let venue = cells.text("race_course");
    if venue.is_empty() {
        return Err("no race_course".into());
    }
    if rows.is_empty() {
        return Err("no runner rows in the runners file".into());
    }
    let mut result = RaceResult {
        date: date.to_owned(),
        venue,
        race_number,
        race_name: cells.text("race_name"),
        distance,
        going: cells.text("track_condition"),
        runners: Vec::with_capacity(rows.len()),
        class: Some(cells.text("race_class")).filter(|c| !c.is_empty()),
    };
    let mut written = Vec::with_capacity(rows.len());
    let mut left_out = Vec::new();
    let mut refused = Vec::new();
    for (line, row) in rows {
        match runner(runners, row) {
            Ok(Some((runner, cells))) => {
                result.runners.push(runner);
                written.push((*line, cells));
            }
            Ok(None) => left_out.push((
                *line,
                format!(
                    "no finishing_position (`{}`)",
                    runners.get(row, "finishing_position")
                ),
            )),
            Err(reason) => refused.push(format!("runners line {line}: {reason}")),
        }
    }
    if !refused.is_empty() {
        return Err(refused.join("; "));
    }
    if result.runners.is_empty() {
        return Err("no runner row with a finishing position".into());
    }
    Ok(Written {
        result,
        race: cells,
        runners: written,
        runners_left_out: left_out,
    })
}

/// One runner row, with what it left out; `None` where it gives no finishing position
/// (the runner is left out of its race); `Err` where a required value is wrong.
fn runner<'a>(
    t: &'a Table,
    row: &'a csv::StringRecord,
) -> Result<Option<(ResultRunner, Row<'a>)>, String> {
    let mut cells = Row::new(t, row);
    let horse_no = cells.cell("horse_id");
    if !racing_events::is_horse_no(horse_no) {
        return Err(format!("horse_id `{horse_no}` is not a brand number"));
    }
    let placing = cells.cell("finishing_position");
    if none(placing) {
        return Ok(None);
    }
    let (position, dead_heat, status) = position(placing).ok_or_else(|| {
        format!("finishing_position `{placing}` is neither a placing nor an official code")
    })?;
    cells.took_part = racing_projections::took_part(status.as_deref());
    let horse_name = cells.text("horse_name");
    if horse_name.is_empty() {
        return Err("no horse_name".into());
    }
    let finish_time = cells.of_result("finish_time", finish_time, "m.ss.cc")?;
    let win_odds = cells.of_result("win_odds", odds, "decimal odds of 1.0 or more")?;
    // Dashes are a margin here (`-` the winner's, `---` none given), not "no value".
    let lbw = cells.optional(
        "length_behind_winner",
        missing,
        |v| Lbw::parse(v).map(|l| l.as_str().to_owned()),
        "is not lengths behind",
    );
    let calls: Vec<i64> = CALLS
        .iter()
        .filter_map(|column| cells.number(column, 1, 99))
        .collect();
    Ok(Some((
        ResultRunner {
            position,
            horse_no: horse_no.to_owned(),
            horse_name,
            jockey: cells.text("jockey"),
            trainer: cells.text("trainer"),
            finish_time,
            win_odds,
            dead_heat,
            status,
            lbw,
            running_positions: (!calls.is_empty()).then_some(calls),
            actual_weight: cells.number("actual_weight", 90, 160),
            declared_weight: cells.number("declared_horse_weight", 700, 1500),
            draw: cells.number("draw", 1, 99),
        },
        cells,
    )))
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
