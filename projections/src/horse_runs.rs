//! A horse's runs as the analyses read them (the form on a card, the records by
//! condition): its form entries (`form.rs`) decoded to the fields that count, and what a
//! run counts as.

use racing_events::{RaceResult, ResultRunner};
use serde::Deserialize;

use crate::kv::StoreError;
use crate::state::Records;

/// One race of a horse's form, as the analyses read it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Run {
    pub(crate) date: String,
    pub(crate) venue: String,
    pub(crate) race_number: i64,
    pub(crate) distance: i64,
    pub(crate) position: Option<i64>,
    pub(crate) win_odds: Option<f64>,
    pub(crate) jockey: String,
    pub(crate) status: Option<String>,
    #[serde(default)]
    pub(crate) going: String,
    #[serde(default)]
    pub(crate) class: Option<String>,
    #[serde(default)]
    pub(crate) trainer: String,
    #[serde(default)]
    pub(crate) draw: Option<i64>,
    /// The horse's name as the result gave it (beside the entry's JSON).
    #[serde(skip)]
    pub(crate) horse_name: String,
}

impl Run {
    /// The run of a form entry's stored value.
    pub(crate) fn of_entry(key: &[u8], value: &[u8]) -> Result<Run, StoreError> {
        let (name, json) = crate::form::entry_parts(value)?;
        let mut run: Run = serde_json::from_slice(json)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(key))))?;
        run.horse_name = String::from_utf8_lossy(name).into_owned();
        Ok(run)
    }

    /// The run of `runner` in `result`, as its form entry records it.
    pub(crate) fn of_result(result: &RaceResult, runner: &ResultRunner) -> Run {
        Run {
            date: result.date.clone(),
            venue: result.venue.clone(),
            race_number: result.race_number,
            distance: result.distance,
            position: runner.position,
            win_odds: runner.win_odds,
            jockey: runner.jockey.clone(),
            status: runner.status.clone(),
            going: result.going.clone(),
            class: result.class.clone(),
            trainer: runner.trainer.clone(),
            draw: runner.draw,
            horse_name: runner.horse_name.clone(),
        }
    }

    /// Whether the horse took part: it was neither withdrawn nor took no part.
    pub(crate) fn took_part(&self) -> bool {
        took_part(self.status.as_deref())
    }

    /// Whether it won (a dead heat for first included).
    pub(crate) fn won(&self) -> bool {
        self.position == Some(1)
    }

    /// Whether it finished in the first three.
    pub(crate) fn placed(&self) -> bool {
        self.position.is_some_and(|p| (1..=3).contains(&p))
    }
}

/// The figure in form figures of a run of this status and position (`docs/api.md`, "Form
/// on the card").
pub(crate) fn figure(status: Option<&str>, position: Option<i64>) -> char {
    match (status, position) {
        (Some("PU"), _) => 'P',
        (Some("UR"), _) => 'U',
        (Some("FE"), _) => 'F',
        (Some("DNF"), _) => 'X',
        (Some("DISQ"), _) => 'D',
        (Some("TNP"), _) => 'T',
        (Some(code), _) if code.starts_with("WV") || code.starts_with("WX") => 'W',
        (Some(code), _) => code.chars().next().unwrap_or('0'),
        (None, Some(p @ 1..=9)) => char::from(b'0' + p as u8),
        (None, _) => '0',
    }
}

/// Statuses of a runner that took no part in its race: withdrawn, or took no part.
const NO_PART: [&str; 6] = ["WV", "WV-A", "WX", "WX-A", "WXNR", "TNP"];

/// Whether a runner of this status (`None`: a finisher) took part in its race: not one
/// withdrawn (`WV`, `WV-A`, `WX`, `WX-A`, `WXNR`) nor one that took no part (`TNP`).
pub fn took_part(status: Option<&str>) -> bool {
    status.is_none_or(|status| !NO_PART.contains(&status))
}

/// Every run of `horse`, oldest first (date, race number, venue).
pub(crate) fn runs_of(s: &impl Records, horse: &str) -> Result<Vec<Run>, StoreError> {
    crate::form::entries(s, horse)?
        .iter()
        .map(|(key, value)| Run::of_entry(key, value))
        .collect()
}

/// `part` of `whole` in percent, 1 decimal place; 0.0 of nothing.
pub(crate) fn percent(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (f64::from(part) * 1000.0 / f64::from(whole)).round() / 10.0
}

/// The days from `from` to `to` (`YYYY-MM-DD`), negative where `to` is earlier; `None`
/// where either is no date.
pub(crate) fn days_between(from: &str, to: &str) -> Option<i64> {
    let (from, to): (jiff::civil::Date, jiff::civil::Date) = (from.parse().ok()?, to.parse().ok()?);
    Some(i64::from(from.until(to).ok()?.get_days()))
}

/// The `n` dates after `date` (`n` < 0: before it), nearest first.
pub(crate) fn dates_from(date: &str, n: i64) -> Vec<String> {
    let Ok(day) = date.parse::<jiff::civil::Date>() else {
        return Vec::new();
    };
    let step = n.signum();
    (1..=n.abs())
        .filter_map(|i| day.checked_add(jiff::Span::new().days(i * step)).ok())
        .map(|d| d.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_counted_across_months_and_years() {
        assert_eq!(days_between("2026-11-20", "2026-12-04"), Some(14));
        assert_eq!(days_between("2026-12-31", "2027-01-01"), Some(1));
        assert_eq!(days_between("2026-11-21", "2026-11-20"), Some(-1));
        assert_eq!(
            dates_from("2026-03-02", -3),
            ["2026-03-01", "2026-02-28", "2026-02-27"]
        );
        assert_eq!(dates_from("2026-12-31", 1), ["2027-01-01"]);
    }
}
