//! `racing publish --check` and `--dry-run`: an NDJSON file checked line by line with the
//! service's own validation, offline (no NATS). Each problem of a refused line is printed
//! with the line's number, in the words of the service's refusal (the first of a line's
//! is the reason the service would refuse it with); `--dry-run` also prints the subject
//! each valid line would go to. A summary ends the report.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::Instant;

use racing_events::Envelope;
use uuid::Uuid;

/// Most lines named for an `event_id` that repeats an earlier line's (each is counted).
const MAX_REPEATS_SHOWN: u64 = 20;

/// What a check found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Non-blank lines read.
    pub lines: u64,
    /// Lines the service would refuse.
    pub refused: u64,
    /// Valid lines whose `event_id` an earlier line of the file has: the service applies
    /// only the first.
    pub repeated: u64,
}

/// Checks every line of `reader`, writing each problem of each refused line (and, with
/// `subjects`, each valid line's subject) to `out`, then the summary.
pub fn check(
    reader: impl BufRead,
    subjects: bool,
    out: &mut impl Write,
) -> anyhow::Result<Checked> {
    let started = Instant::now();
    let mut checked = Checked::default();
    let mut first_line: HashMap<Uuid, u64> = HashMap::new();
    for item in crate::publish::ndjson_lines(reader) {
        let (number, payload) = item?;
        checked.lines += 1;
        match Envelope::check(&payload) {
            Err(problems) => {
                checked.refused += 1;
                for problem in problems {
                    writeln!(out, "line {number}: {problem}")?;
                }
            }
            Ok(envelope) => {
                if subjects {
                    writeln!(
                        out,
                        "line {number}: {} {} {}",
                        envelope.subject(),
                        envelope.event.type_name(),
                        envelope.event_id
                    )?;
                }
                if let Some(first) = first_line.get(&envelope.event_id) {
                    checked.repeated += 1;
                    if checked.repeated <= MAX_REPEATS_SHOWN {
                        writeln!(
                            out,
                            "line {number}: event_id repeats line {first}'s: the service applies only the first"
                        )?;
                    }
                } else {
                    first_line.insert(envelope.event_id, number);
                }
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 {
        checked.lines as f64 / seconds
    } else {
        0.0
    };
    writeln!(
        out,
        "checked {} lines in {seconds:.2} s ({rate:.0} a second): {} valid, {} refused, {} with a repeated event_id",
        checked.lines,
        checked.lines - checked.refused,
        checked.refused,
        checked.repeated
    )?;
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use racing_events::samples::{self, envelope};

    use super::*;

    fn run(file: &str, subjects: bool) -> (Checked, String) {
        let mut out = Vec::new();
        let checked = check(file.as_bytes(), subjects, &mut out).expect("checked");
        (checked, String::from_utf8(out).expect("UTF-8"))
    }

    #[test]
    fn each_refused_line_is_named_with_its_field_and_reason_then_a_summary() {
        let good = envelope(samples::odds("2026-11-21", 3, &[("E271", 3.5)])).to_json();
        let bad_draw = envelope(samples::card("2026-11-21", "Sha Tin", 3, &["E271"]))
            .to_json()
            .replace("\"draw\":1", "\"draw\":0");
        let file = format!("{good}\n\n{bad_draw}\nnot json\n{good}\n");
        let (checked, out) = run(&file, false);
        assert_eq!(
            checked,
            Checked {
                lines: 4,
                refused: 2,
                repeated: 1
            }
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "line 3: runners[0].draw must be from 1 to 99, got 0"
        );
        assert!(lines[1].starts_with("line 4: envelope: expected"), "{out}");
        assert_eq!(
            lines[2],
            "line 5: event_id repeats line 1's: the service applies only the first"
        );
        assert!(lines[3].starts_with("checked 4 lines in "), "{out}");
        assert!(
            lines[3].ends_with(": 2 valid, 2 refused, 1 with a repeated event_id"),
            "{out}"
        );
    }

    #[test]
    fn a_dry_run_names_the_subject_of_each_valid_line() {
        let e = envelope(samples::status(
            "2026-11-21",
            None,
            4,
            racing_events::RaceStatus::Off,
            None,
        ));
        let (checked, out) = run(&format!("{}\n", e.to_json()), true);
        assert_eq!(checked.refused, 0);
        assert_eq!(
            out.lines().next(),
            Some(
                format!(
                    "line 1: racing.status.2026-11-21.4 RaceStatusChanged {}",
                    e.event_id
                )
                .as_str()
            )
        );
    }

    #[test]
    fn every_refused_sample_is_refused_by_the_check_first_in_the_words_of_the_refusal() {
        let all = samples::refused();
        let file: String = all.iter().map(|r| format!("{}\n", r.payload)).collect();
        let (checked, out) = run(&file, false);
        assert_eq!(checked.refused, all.len() as u64, "{out}");
        for (number, sample) in (1..).zip(&all) {
            // The projector's dead letter gives `Envelope::decode`'s error, which for a
            // payload on its own subject is `parse`'s.
            let refusal = Envelope::parse(sample.payload.as_bytes())
                .err()
                .map(|e| e.to_string());
            let first = out
                .lines()
                .find_map(|l| l.strip_prefix(&format!("line {number}: ")));
            assert_eq!(first, refusal.as_deref(), "{}: {out}", sample.rule);
        }
    }

    #[test]
    fn every_problem_of_a_line_is_named_in_the_words_of_the_refusal() {
        let card = envelope(samples::card("2026-11-21", "Sha Tin", 3, &["E271", "D123"]));
        let mut json: serde_json::Value =
            serde_json::from_str(&card.to_json()).expect("a sample's JSON");
        json["event_id"] = "not-a-uuid".into();
        json["data"]["distance"] = 50.into();
        json["data"]["runners"][0]["draw"] = 0.into();
        json["data"]["runners"][1]["weight"] = 300.into();
        json["data"]["runners"][1]["horse_no"] = "E271".into();
        let line = json.to_string();
        let (checked, out) = run(&format!("{line}\n"), false);
        assert_eq!(checked.refused, 1);
        let said: Vec<&str> = out.lines().take_while(|l| l.starts_with("line ")).collect();
        assert_eq!(
            said,
            [
                "line 1: event_id is not a UUID",
                "line 1: distance must be from 100 to 10000, got 50",
                "line 1: runners[0].draw must be from 1 to 99, got 0",
                "line 1: runners[1].weight must be from 50 to 200, got 300",
                "line 1: runners lists horse E271 more than once",
            ]
        );
        let refusal = Envelope::parse(line.as_bytes())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            said.first().and_then(|l| l.strip_prefix("line 1: ")),
            refusal.as_deref(),
            "the first is the service's reason"
        );
    }
}
