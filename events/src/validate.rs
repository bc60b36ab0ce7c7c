//! The rules of the feed contract's Validation section, one function a rule, so that the
//! HTTP layer can reuse the same date and horse-number checks for its paths.

use std::collections::HashSet;

use crate::event::{
    CardRunner, Event, HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceRetracted,
    RaceStatusChanged, ResultRunner,
};
use crate::values::clip;
use crate::values::{Date, Lbw, RaceNumber, RaceStatus};

/// Why an event was refused. The `Display` text is the dead letter's reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidationError {
    /// The payload is over the 1 MiB limit; the feeder must split or trim it.
    #[error("payload of {0} bytes is over the 1 MiB limit")]
    TooLarge(usize),
    /// Not a JSON object with the envelope's fields; the feeder's encoder is broken.
    #[error("envelope: {0}")]
    Json(String),
    /// The envelope's `type` is none of the contract's; maybe a newer feeder.
    #[error("unknown event type `{0}`")]
    UnknownType(String),
    /// The body does not have the fields and types its event type requires.
    #[error("data: {0}")]
    Data(String),
    /// A field is present with the right type but a value outside the contract.
    #[error("{field} {problem}")]
    Field {
        /// Path of the field, e.g. `runners[3].draw`.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The subject does not repeat the payload's values.
    #[error("subject `{got}` does not match the event, expected `{expected}`")]
    Subject {
        /// The subject the message came on.
        got: String,
        /// The subject the event belongs on.
        expected: String,
    },
}

impl ValidationError {
    pub(crate) fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        ValidationError::Field {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

type Check = Result<(), ValidationError>;

/// Whether `s` is a horse number: 1 to 32 of `A-Z a-z 0-9 _ -`, starting with a letter
/// or digit, so that it is always a safe subject token.
pub fn is_horse_no(s: &str) -> bool {
    let b = s.as_bytes();
    (1..=32).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

/// `occurred_at`: an RFC 3339 timestamp, `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`,
/// and a real moment. The shape is checked here because the parser underneath also
/// reads other ISO 8601 and Temporal forms (`20310305T120000Z`, `...+08:00[Asia/Hong_Kong]`).
pub(crate) fn occurred_at(v: &str) -> Check {
    let b = v.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let at = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    let mut ok = digits(0..4)
        && at(4, b"-")
        && digits(5..7)
        && at(7, b"-")
        && digits(8..10)
        && at(10, b"Tt")
        && digits(11..13)
        && at(13, b":")
        && digits(14..16)
        && at(16, b":")
        && digits(17..19);
    let mut i = 19;
    if ok && at(i, b".") {
        let fraction = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        ok = fraction > 0;
        i += 1 + fraction;
    }
    ok = ok
        && match b.get(i) {
            Some(b'Z' | b'z') => b.len() == i + 1,
            Some(b'+' | b'-') => {
                b.len() == i + 6 && digits(i + 1..i + 3) && at(i + 3, b":") && digits(i + 4..i + 6)
            }
            _ => false,
        };
    if ok && v.parse::<jiff::Timestamp>().is_ok() {
        Ok(())
    } else {
        Err(ValidationError::field(
            "occurred_at",
            "is not an RFC 3339 timestamp such as 2026-11-21T13:05:41Z",
        ))
    }
}

fn date(field: &str, v: &str) -> Check {
    match Date::parse(v) {
        Some(_) => Ok(()),
        None => Err(ValidationError::field(
            field,
            format!("is not {}", Date::RULE),
        )),
    }
}

fn race_number(v: i64) -> Check {
    RaceNumber::try_from(v)
        .map(|_| ())
        .map_err(|problem| ValidationError::field("race_number", problem))
}

fn horse_no(field: &str, v: &str) -> Check {
    if is_horse_no(v) {
        Ok(())
    } else {
        Err(ValidationError::field(
            field,
            "must be 1 to 32 of A-Z a-z 0-9 _ -, starting with a letter or digit",
        ))
    }
}

fn range(field: &str, v: i64, lo: i64, hi: i64) -> Check {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(ValidationError::field(
            field,
            format!("must be from {lo} to {hi}, got {v}"),
        ))
    }
}

fn not_negative(field: &str, v: i64) -> Check {
    range(field, v, 0, i64::MAX)
}

fn text(field: &str, v: &str) -> Check {
    if v.trim().is_empty() {
        Err(ValidationError::field(field, "must not be empty"))
    } else {
        Ok(())
    }
}

/// Free text of `lo` to `hi` characters (Unicode scalar values), not only white space.
fn text_of(field: &str, v: &str, lo: usize, hi: usize) -> Check {
    text(field, v)?;
    let n = v.chars().count();
    if (lo..=hi).contains(&n) {
        Ok(())
    } else {
        Err(ValidationError::field(
            field,
            format!("must be {lo} to {hi} characters, got {n}"),
        ))
    }
}

/// An optional `venue` (v1.1), checked as every other venue when it is given.
fn optional_venue(v: Option<&str>) -> Check {
    v.map_or(Ok(()), |v| text("venue", v))
}

fn odds(field: &str, v: f64) -> Check {
    if v.is_finite() && v >= 1.0 {
        Ok(())
    } else {
        Err(ValidationError::field(
            field,
            "must be finite decimal odds of at least 1.0",
        ))
    }
}

/// `m:ss.cc`: minutes of one or more digits, seconds below 60, hundredths.
fn finish_time(field: &str, v: &str) -> Check {
    let ok = v.split_once(':').is_some_and(|(m, rest)| {
        let b = rest.as_bytes();
        !m.is_empty()
            && m.len() <= 3
            && m.bytes().all(|c| c.is_ascii_digit())
            && b.len() == 5
            && b[2] == b'.'
            && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit())
            && b[0] < b'6'
    });
    if ok {
        Ok(())
    } else {
        Err(ValidationError::field(
            field,
            "must be m:ss.cc with seconds below 60",
        ))
    }
}

/// Official codes are upper case, up to 8 characters, such as `PU` or `WV-A`.
fn status(field: &str, v: &str) -> Check {
    let b = v.as_bytes();
    let ok = (1..=8).contains(&b.len())
        && b[0].is_ascii_uppercase()
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'-');
    if ok {
        Ok(())
    } else {
        Err(ValidationError::field(
            field,
            "must be an upper-case code of up to 8 characters",
        ))
    }
}

/// The problems of one event, each rule's in the order the rules are checked: a rule that
/// holds adds none. Every rule is checked, so that a feeder hears of every problem of an
/// event at once; the first is the one the service gives as its refusal's reason.
#[derive(Debug, Default)]
struct Problems(Vec<ValidationError>);

impl Problems {
    fn check(&mut self, check: Check) {
        if let Err(e) = check {
            self.0.push(e);
        }
    }

    fn field(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.0.push(ValidationError::field(field, problem));
    }
}

/// Each horse listed more than once, once.
fn unique_horses<'a>(out: &mut Problems, field: &str, horses: impl Iterator<Item = &'a str>) {
    let mut seen = HashSet::new();
    let mut repeated = HashSet::new();
    for h in horses {
        if !seen.insert(h) && repeated.insert(h) {
            out.field(field, format!("lists horse {h} more than once"));
        }
    }
}

/// The first problem of `e`: the reason the service refuses it with.
pub(crate) fn event(e: &Event) -> Check {
    problems(e).into_iter().next().map_or(Ok(()), Err)
}

/// Every problem of `e`, in the order of its fields; none where it passes.
pub(crate) fn problems(e: &Event) -> Vec<ValidationError> {
    let mut out = Problems::default();
    match e {
        Event::HorseProfileUpdated(p) => profile(&mut out, p),
        Event::RaceCardDeclared(c) => card(&mut out, c),
        Event::RunnerScratched(s) => {
            out.check(date("date", &s.date));
            out.check(optional_venue(s.venue.as_deref()));
            out.check(race_number(s.race_number));
            out.check(horse_no("horse_no", &s.horse_no));
        }
        Event::RaceResultPublished(r) => result(&mut out, r),
        Event::OddsUpdated(o) => odds_updated(&mut out, o),
        Event::RaceRetracted(r) => retracted(&mut out, r),
        Event::RaceStatusChanged(s) => status_changed(&mut out, s),
    }
    out.0
}

fn status_changed(out: &mut Problems, s: &RaceStatusChanged) {
    out.check(date("date", &s.date));
    out.check(optional_venue(s.venue.as_deref()));
    out.check(race_number(s.race_number));
    if RaceStatus::parse(&s.status).is_none() {
        let words: Vec<&str> = RaceStatus::ALL.iter().map(|s| s.as_str()).collect();
        out.field(
            "status",
            format!(
                "must be one of {}, got `{}`",
                words.join(", "),
                clip(&s.status, 32)
            ),
        );
    }
    if let Some(r) = s.reason.as_deref() {
        out.check(text_of("reason", r, 1, 200));
    }
}

fn retracted(out: &mut Problems, r: &RaceRetracted) {
    out.check(date("date", &r.date));
    out.check(text("venue", &r.venue));
    out.check(race_number(r.race_number));
    out.check(text_of("reason", &r.reason, 1, 200));
}

fn profile(out: &mut Problems, p: &HorseProfile) {
    out.check(horse_no("horse_no", &p.horse_no));
    out.check(text("horse_name", &p.horse_name));
    out.check(range("age", p.age, 0, 40));
    out.check(not_negative("starts", p.starts));
    out.check(not_negative("wins", p.wins));
    out.check(not_negative("places", p.places));
    out.check(not_negative("total_stakes", p.total_stakes));
    if p.wins > p.starts {
        out.field("wins", "is more than starts");
    }
    if p.places > p.starts {
        out.field("places", "is more than starts");
    }
    for (field, count) in [("seconds", p.seconds), ("thirds", p.thirds)] {
        if let Some(count) = count {
            out.check(not_negative(field, count));
        }
    }
    match (p.seconds, p.thirds) {
        (Some(seconds), Some(thirds)) => {
            if p.places != p.wins.saturating_add(seconds).saturating_add(thirds) {
                out.field("places", "is not wins + seconds + thirds");
            }
        }
        (Some(_), None) => out.field("seconds", "is given without thirds"),
        (None, Some(_)) => out.field("thirds", "is given without seconds"),
        (None, None) => {}
    }
    for (field, name) in [
        ("sire", &p.sire),
        ("dam", &p.dam),
        ("dam_sire", &p.dam_sire),
    ] {
        if let Some(name) = name {
            out.check(text_of(field, name, 1, 64));
        }
    }
    if let Some(t) = &p.import_type {
        out.check(import_type(t));
    }
    if let Some(r) = p.current_rating {
        out.check(range("current_rating", r, 0, 200));
    }
    if let Some(r) = p.season_start_rating {
        out.check(range("season_start_rating", r, 0, 200));
    }
    if let Some(s) = p.season_stakes {
        out.check(not_negative("season_stakes", s));
    }
}

/// `import_type`: 1 to 8 upper-case letters, such as `PP` or `ISG`.
fn import_type(v: &str) -> Check {
    if (1..=8).contains(&v.len()) && v.bytes().all(|c| c.is_ascii_uppercase()) {
        Ok(())
    } else {
        Err(ValidationError::field(
            "import_type",
            "must be 1 to 8 upper-case letters, such as PP or ISG",
        ))
    }
}

fn card(out: &mut Problems, c: &RaceCard) {
    out.check(date("date", &c.date));
    out.check(text("venue", &c.venue));
    out.check(race_number(c.race_number));
    out.check(range("distance", c.distance, 100, 10_000));
    for (i, r) in c.runners.iter().enumerate() {
        card_runner(out, i, r);
    }
    unique_horses(
        out,
        "runners",
        c.runners.iter().map(|r| r.horse_no.as_str()),
    );
}

fn card_runner(out: &mut Problems, i: usize, r: &CardRunner) {
    let f = |name: &str| format!("runners[{i}].{name}");
    out.check(horse_no(&f("horse_no"), &r.horse_no));
    out.check(text(&f("horse_name"), &r.horse_name));
    out.check(range(&f("draw"), r.draw, 1, 99));
    out.check(range(&f("weight"), r.weight, 50, 200));
}

fn result(out: &mut Problems, r: &RaceResult) {
    out.check(date("date", &r.date));
    out.check(text("venue", &r.venue));
    out.check(race_number(r.race_number));
    out.check(range("distance", r.distance, 100, 10_000));
    for (i, runner) in r.runners.iter().enumerate() {
        result_runner(out, i, runner);
    }
    unique_horses(
        out,
        "runners",
        r.runners.iter().map(|r| r.horse_no.as_str()),
    );
    dead_heats(out, &r.runners);
}

fn result_runner(out: &mut Problems, i: usize, r: &ResultRunner) {
    let f = |name: &str| format!("runners[{i}].{name}");
    out.check(horse_no(&f("horse_no"), &r.horse_no));
    out.check(text(&f("horse_name"), &r.horse_name));
    if let Some(p) = r.position {
        out.check(range(&f("position"), p, 1, 99));
    }
    if let Some(t) = &r.finish_time {
        out.check(finish_time(&f("finish_time"), t));
    }
    if let Some(o) = r.win_odds {
        out.check(odds(&f("win_odds"), o));
    }
    if let Some(lbw) = &r.lbw {
        if Lbw::parse(lbw).is_none() {
            out.field(
                f("lbw"),
                format!("must be {}, such as -, SH, 3/4 or 1-1/4", Lbw::RULE),
            );
        }
    }
    if let Some(calls) = &r.running_positions {
        if !(1..=6).contains(&calls.len()) {
            out.field(
                f("running_positions"),
                format!("must list 1 to 6 positions, got {}", calls.len()),
            );
        }
        for (j, p) in calls.iter().enumerate() {
            out.check(range(&f(&format!("running_positions[{j}]")), *p, 1, 99));
        }
    }
    if let Some(w) = r.actual_weight {
        out.check(range(&f("actual_weight"), w, 90, 160));
    }
    if let Some(w) = r.declared_weight {
        out.check(range(&f("declared_weight"), w, 700, 1500));
    }
    if let Some(d) = r.draw {
        out.check(range(&f("draw"), d, 1, 99));
    }
    match &r.status {
        Some(s) => out.check(status(&f("status"), s)),
        None if r.position.is_none() => out.field(
            f("position"),
            "is null for a runner with no status; a normal finisher has a placing",
        ),
        None => {}
    }
}

/// A shared position is a dead heat, and a dead heat is a shared position.
fn dead_heats(out: &mut Problems, runners: &[ResultRunner]) {
    for (i, r) in runners.iter().enumerate() {
        let shared = r.position.is_some()
            && runners
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && o.position == r.position);
        if shared != r.dead_heat {
            let problem = if shared {
                "shares its position but dead_heat is not true"
            } else {
                "has dead_heat true but no other runner shares its position"
            };
            out.field(format!("runners[{i}]"), problem);
        }
    }
}

fn odds_updated(out: &mut Problems, o: &OddsUpdated) {
    out.check(date("date", &o.date));
    out.check(optional_venue(o.venue.as_deref()));
    out.check(race_number(o.race_number));
    if o.odds.is_empty() {
        out.field("odds", "must list at least one runner");
    }
    for (i, r) in o.odds.iter().enumerate() {
        out.check(horse_no(&format!("odds[{i}].horse_no"), &r.horse_no));
        if r.win_odds.is_none() && r.place_odds.is_none() {
            out.field(
                format!("odds[{i}]"),
                "must give win_odds, place_odds or both",
            );
        }
        if let Some(o) = r.win_odds {
            out.check(odds(&format!("odds[{i}].win_odds"), o));
        }
        if let Some(o) = r.place_odds {
            out.check(odds(&format!("odds[{i}].place_odds"), o));
        }
    }
    unique_horses(out, "odds", o.odds.iter().map(|r| r.horse_no.as_str()));
}

impl Event {
    /// Checks every rule of the feed contract's Validation that the body alone decides:
    /// the first problem, as [`Event::problems`] lists them.
    pub fn validate(&self) -> Result<(), ValidationError> {
        event(self)
    }

    /// Every problem of the body by the rules [`Event::validate`] checks, in the order of
    /// its fields; empty where it passes.
    pub fn problems(&self) -> Vec<ValidationError> {
        problems(self)
    }
}
