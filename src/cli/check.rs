//! `racing publish --check` and `--dry-run`: an NDJSON file checked line by line with the
//! service's own validation, offline (no NATS). Each refused line is printed with its
//! number, the field and the reason; `--dry-run` also prints the subject each valid line
//! would go to. A summary ends the report.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::Instant;

use racing_events::{Envelope, ValidationError};
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

/// The field a refusal is about, and the reason: `("runners[3].draw", "must be from 1
/// to 99, got 0")`; the envelope's parts (`payload`, `envelope`, `type`, `data`,
/// `subject`) where no single field is named.
pub fn field_and_reason(e: &ValidationError) -> (String, String) {
    match e {
        ValidationError::Field { field, problem } => (field.clone(), problem.clone()),
        ValidationError::TooLarge(_) => ("payload".into(), e.to_string()),
        ValidationError::Json(reason) => ("envelope".into(), reason.clone()),
        ValidationError::UnknownType(_) => ("type".into(), e.to_string()),
        ValidationError::Data(reason) => ("data".into(), reason.clone()),
        ValidationError::Subject { .. } => ("subject".into(), e.to_string()),
    }
}

/// Checks every line of `reader`, writing each refused line (and, with `subjects`, each
/// valid line's subject) to `out`, then the summary.
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
        match Envelope::parse(&payload) {
            Err(e) => {
                checked.refused += 1;
                let (field, reason) = field_and_reason(&e);
                writeln!(out, "line {number}: {field}: {reason}")?;
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
            "line 3: runners[0].draw: must be from 1 to 99, got 0"
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
    fn every_refused_sample_is_refused_by_the_check() {
        let all = samples::refused();
        let file: String = all.iter().map(|r| format!("{}\n", r.payload)).collect();
        let (checked, out) = run(&file, false);
        assert_eq!(checked.refused, all.len() as u64, "{out}");
    }
}
