//! The values the contract has a rule for, each as one type whose rule is written here
//! once: a race number, a date and lengths behind the winner. Feed validation, HTTP input, live odds messages, the
//! fold and the OpenAPI description all use these, so the rule cannot differ between them.
//! Also the one way outside text is cut short before it is echoed back.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The number of a race within its meeting: 1 to 99.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RaceNumber(u8);

impl RaceNumber {
    /// The lowest race number.
    pub const MIN: u8 = 1;
    /// The highest race number.
    pub const MAX: u8 = 99;
    /// The rule in words, as error messages and the API description give it.
    pub const RULE: &'static str = "an integer from 1 to 99";

    /// The race number `n`, if it is one.
    pub fn new(n: i64) -> Option<RaceNumber> {
        u8::try_from(n)
            .ok()
            .filter(|n| (Self::MIN..=Self::MAX).contains(n))
            .map(RaceNumber)
    }

    /// A race number as a URL writes it: digits only, without sign or leading zero, so
    /// that each race has one path.
    pub fn parse(text: &str) -> Option<RaceNumber> {
        let canonical =
            !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && !text.starts_with('0');
        if !canonical || text.len() > 2 {
            return None;
        }
        text.parse().ok().and_then(RaceNumber::new)
    }

    /// The number.
    pub fn get(self) -> u8 {
        self.0
    }
}

impl TryFrom<i64> for RaceNumber {
    type Error = String;

    fn try_from(n: i64) -> Result<RaceNumber, String> {
        RaceNumber::new(n).ok_or_else(|| format!("must be {}, got {n}", RaceNumber::RULE))
    }
}

impl fmt::Display for RaceNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for RaceNumber {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.0)
    }
}

impl<'de> Deserialize<'de> for RaceNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i64::deserialize(d)?;
        RaceNumber::try_from(n).map_err(|e| serde::de::Error::custom(format!("race_number {e}")))
    }
}

/// A real calendar date written `YYYY-MM-DD`, years 1000 to 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date([u8; 10]);

impl Date {
    /// The rule in words, as error messages and the API description give it.
    pub const RULE: &'static str = "a real calendar date written YYYY-MM-DD";

    /// The date `text` writes, if it is one.
    pub fn parse(text: &str) -> Option<Date> {
        if !is_calendar_date(text) {
            return None;
        }
        text.as_bytes().try_into().ok().map(Date)
    }

    /// The date as written.
    pub fn as_str(&self) -> &str {
        // Only ASCII digits and dashes get in (`parse`).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<str> for Date {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        Date::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("date must be {}", Date::RULE)))
    }
}

/// Lengths behind the winner as officially written (feed contract, "The full Hong Kong
/// record"): 1 to 8 characters of `0-9 A-Z - /`. `-` for the winner, a margin code
/// (`NOSE`, `SH`, `HD`, `N`), lengths with an optional fraction (`3/4`, `1-1/4`, `10-3/4`),
/// or another code where there is no margin (`ML`, `DIST`, `---`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lbw<'a>(&'a str);

impl<'a> Lbw<'a> {
    /// The rule in words, as error messages and the API description give it.
    pub const RULE: &'static str = "1 to 8 characters of 0-9 A-Z - /";

    /// The lengths behind `text` writes, if it follows the rule.
    pub fn parse(text: &'a str) -> Option<Lbw<'a>> {
        let ok = (1..=8).contains(&text.len())
            && text
                .bytes()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase() || c == b'-' || c == b'/');
        ok.then_some(Lbw(text))
    }

    /// As written.
    pub fn as_str(&self) -> &'a str {
        self.0
    }

    /// The same as a number of lengths, where it is one: `-` (the winner) is 0, `1-1/4`
    /// is 1.25, `3/4` is 0.75; `NOSE`, `SH`, `HD` and `N` are 0.05, 0.1, 0.2 and 0.3.
    /// `None` for codes that are no margin (`ML`, `DIST`, `---`, ...).
    pub fn lengths(&self) -> Option<f64> {
        match self.0 {
            "-" => return Some(0.0),
            "NOSE" => return Some(0.05),
            "SH" => return Some(0.1),
            "HD" => return Some(0.2),
            "N" => return Some(0.3),
            _ => {}
        }
        let whole = |t: &str| -> Option<u32> {
            (!t.is_empty() && t.len() <= 3 && t.bytes().all(|c| c.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
        };
        let fraction = |t: &str| -> Option<f64> {
            let (n, d) = t.split_once('/')?;
            let (n, d) = (whole(n)?, whole(d)?);
            (n > 0 && n < d).then(|| f64::from(n) / f64::from(d))
        };
        match self.0.split_once('-') {
            Some((w, f)) => Some(f64::from(whole(w)?) + fraction(f)?),
            None if self.0.contains('/') => fraction(self.0),
            None => whole(self.0).map(f64::from),
        }
    }
}

/// Whether `s` is a real calendar date written `YYYY-MM-DD` (years 1000 to 9999).
fn is_calendar_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    y >= 1000 && (1..=days).contains(&d)
}

/// `text` cut to `max` characters, with `…` where it was cut: outside text echoed into a
/// reason or an error message stays small.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// An instant as the service serves it, in every document, frame and admin answer: UTC,
/// written with `Z` and to the millisecond (`2026-11-21T04:10:02.113Z`), whatever offset
/// and precision the feed or the clock gave it. A date is written as a date
/// (`YYYY-MM-DD`), never as an instant.
pub struct Instant;

impl Instant {
    /// The pattern every served instant matches, as the OpenAPI and AsyncAPI documents
    /// give it.
    pub const PATTERN: &'static str =
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$";

    /// `t` as the service serves it: UTC, `Z`, milliseconds (cut, not rounded, so an
    /// instant is never written later than it was).
    ///
    /// Written field by field: the projector writes a few instants for every event it
    /// folds, and `strftime`'s interpreter took 5% of its threads under a live feed of
    /// odds moves. A year that four digits cannot hold goes through `strftime`.
    pub fn text(t: jiff::Timestamp) -> String {
        let civil = jiff::tz::Offset::UTC.to_datetime(t);
        let Some(year) = u32::try_from(civil.year()).ok().filter(|y| *y <= 9999) else {
            return t.strftime(Instant::FORMAT).to_string();
        };
        // Every other field is within its range, so never negative.
        let field = |n: i8| u32::from(n.unsigned_abs());
        let mut text = *b"0000-00-00T00:00:00.000Z";
        for (at, width, mut n) in [
            (0, 4, year),
            (5, 2, field(civil.month())),
            (8, 2, field(civil.day())),
            (11, 2, field(civil.hour())),
            (14, 2, field(civil.minute())),
            (17, 2, field(civil.second())),
            (20, 3, u32::from(civil.millisecond().unsigned_abs())),
        ] {
            for digit in text[at..at + width].iter_mut().rev() {
                *digit = b'0' + (n % 10) as u8;
                n /= 10;
            }
        }
        // ASCII digits and punctuation: one allocation, where collecting the bytes as
        // `char`s grew the string as it went.
        String::from_utf8_lossy(&text).into_owned()
    }

    /// [`Instant::text`]'s shape as a `strftime` format.
    const FORMAT: &'static str = "%Y-%m-%dT%H:%M:%S%.3fZ";

    /// An RFC 3339 instant of any offset and precision (an envelope's `occurred_at`) as
    /// the service serves it; `None` where it is not one. One already written so (as the
    /// projector's decoder leaves every event's) is taken as it is, not parsed and written
    /// again: the fold asks this of every event, and parsing and writing them took 2.6 %
    /// of the projector's thread under a live feed of odds moves.
    pub fn of(rfc3339: &str) -> Option<String> {
        if Instant::is_served(rfc3339) {
            return Some(rfc3339.to_owned());
        }
        rfc3339.parse::<jiff::Timestamp>().ok().map(Instant::text)
    }

    /// Whether `t` is an instant written as the service serves it, so that [`Instant::of`]
    /// would give it back the same: [`Instant::PATTERN`]'s shape, a real date of a year
    /// from 1000 to 9998 and a real time of day. A leap second (`:60`), which parsing
    /// takes as the second before it, is not; nor are the last hours of 9999, past the
    /// latest instant parsing takes.
    fn is_served(t: &str) -> bool {
        let b = t.as_bytes();
        let shaped = b.len() == 24
            && [(10, b'T'), (13, b':'), (16, b':'), (19, b'.'), (23, b'Z')]
                .iter()
                .all(|&(at, c)| b[at] == c);
        if !shaped {
            return false;
        }
        let number = |r: std::ops::Range<usize>| -> Option<u32> {
            b[r].iter().try_fold(0u32, |acc, c| {
                c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
            })
        };
        let within = |r, most| number(r).is_some_and(|n| n <= most);
        // Byte 10 is a `T`, so the date ends on a character's boundary.
        is_calendar_date(&t[..10])
            && !t.starts_with("9999")
            && within(11..13, 23)
            && within(14..16, 59)
            && within(17..19, 59)
            && number(20..23).is_some()
    }

    /// Nanoseconds since the epoch (when JetStream stored a message) as the service
    /// serves them; the empty text where out of range.
    pub fn of_nanos(unix_nanos: i128) -> String {
        jiff::Timestamp::from_nanosecond(unix_nanos)
            .map(Instant::text)
            .unwrap_or_default()
    }

    /// Now, as the service serves it.
    pub fn now() -> String {
        Instant::text(jiff::Timestamp::now())
    }
}

/// Where a race stands on its day (v1.2). Any transition is accepted: feeds correct
/// themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RaceStatus {
    /// Betting open.
    Open,
    /// Betting stopped for a while: a scratching, a reweigh.
    Suspended,
    /// The race has started; no more price moves are expected.
    Off,
    /// Run; the result is to come.
    Finished,
    /// Will not be run.
    Abandoned,
    /// Run but declared void.
    Void,
}

impl RaceStatus {
    /// Every status, in the order of a race's day.
    pub const ALL: [RaceStatus; 6] = [
        RaceStatus::Open,
        RaceStatus::Suspended,
        RaceStatus::Off,
        RaceStatus::Finished,
        RaceStatus::Abandoned,
        RaceStatus::Void,
    ];

    /// The status as the wire writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceStatus::Open => "open",
            RaceStatus::Suspended => "suspended",
            RaceStatus::Off => "off",
            RaceStatus::Finished => "finished",
            RaceStatus::Abandoned => "abandoned",
            RaceStatus::Void => "void",
        }
    }

    /// Reads the wire's word for a status.
    pub fn parse(text: &str) -> Option<RaceStatus> {
        RaceStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether prices are no longer expected: an odds update for such a race is a late
    /// price (applied, and counted).
    pub fn is_past_betting(self) -> bool {
        matches!(
            self,
            RaceStatus::Off | RaceStatus::Finished | RaceStatus::Abandoned | RaceStatus::Void
        )
    }
}

impl fmt::Display for RaceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_race_number_is_1_to_99_and_written_one_way() {
        assert_eq!(RaceNumber::new(1).map(RaceNumber::get), Some(1));
        assert_eq!(RaceNumber::new(99).map(RaceNumber::get), Some(99));
        for n in [0, 100, -1, 256, i64::MAX] {
            assert_eq!(RaceNumber::new(n), None, "{n}");
        }
        assert_eq!(RaceNumber::parse("7").map(RaceNumber::get), Some(7));
        assert_eq!(RaceNumber::parse("99").map(RaceNumber::get), Some(99));
        for bad in ["", "0", "07", "100", "+7", "-7", "7 ", "x", "0099"] {
            assert_eq!(RaceNumber::parse(bad), None, "{bad:?}");
        }
        let n: RaceNumber = serde_json::from_str("12").expect("12");
        assert_eq!(serde_json::to_string(&n).expect("json"), "12");
        let bad = serde_json::from_str::<RaceNumber>("100").expect_err("100");
        assert!(bad.to_string().contains(RaceNumber::RULE), "{bad}");
    }

    #[test]
    fn a_date_is_a_real_calendar_day() {
        assert_eq!(
            Date::parse("2024-02-29").map(|d| d.to_string()).as_deref(),
            Some("2024-02-29")
        );
        for bad in [
            "2023-02-29",
            "2026-13-01",
            "2026-1-01",
            "0999-01-01",
            "2026-11-21T",
            "",
            "2026/11/21",
        ] {
            assert_eq!(Date::parse(bad), None, "{bad:?}");
        }
        let d: Date = serde_json::from_str("\"2026-11-21\"").expect("date");
        assert_eq!(d.as_str(), "2026-11-21");
        assert!(serde_json::from_str::<Date>("\"2026-02-30\"").is_err());
    }

    #[test]
    fn lengths_behind_follow_the_official_writing() {
        let cases = [
            ("-", Some(0.0)),
            ("1-1/4", Some(1.25)),
            ("3/4", Some(0.75)),
            ("1/2", Some(0.5)),
            ("10-3/4", Some(10.75)),
            ("2", Some(2.0)),
            ("NOSE", Some(0.05)),
            ("SH", Some(0.1)),
            ("HD", Some(0.2)),
            ("N", Some(0.3)),
            ("ML", None),
            ("DIST", None),
            ("---", None),
            ("1-", None),
            ("4/3", None),
        ];
        for (text, lengths) in cases {
            let lbw = Lbw::parse(text).unwrap_or_else(|| panic!("{text} is valid"));
            assert_eq!(lbw.as_str(), text);
            assert_eq!(lbw.lengths(), lengths, "{text}");
        }
        for bad in ["", "123456789", "1 1/4", "sh", "1.25", "½"] {
            assert_eq!(Lbw::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn outside_text_is_clipped_on_a_character_boundary() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("ééé", 2), "éé…");
    }

    #[test]
    fn an_instant_is_served_in_utc_with_z_to_the_millisecond() {
        // The shape `Instant::PATTERN` gives, a `9` for a digit.
        let shaped = |t: &str| {
            t.len() == 24
                && t.chars()
                    .zip("9999-99-99T99:99:99.999Z".chars())
                    .all(|(c, s)| if s == '9' { c.is_ascii_digit() } else { c == s })
        };
        for (given, served) in [
            ("2026-11-21T12:10:02+08:00", "2026-11-21T04:10:02.000Z"),
            ("2026-11-21T04:10:02.113456789Z", "2026-11-21T04:10:02.113Z"),
            ("2026-11-21T04:10:02.1Z", "2026-11-21T04:10:02.100Z"),
            ("2026-11-20T23:59:59.9999-04:30", "2026-11-21T04:29:59.999Z"),
        ] {
            assert_eq!(Instant::of(given).as_deref(), Some(served), "{given}");
            assert!(shaped(served), "{served}");
        }
        assert_eq!(
            Instant::of_nanos(1_763_698_202_113_456_789),
            "2025-11-21T04:10:02.113Z"
        );
        assert!(shaped(&Instant::now()));
        assert_eq!(Instant::of("2026-11-21"), None);
    }

    /// Text already written as an instant is served is taken as it is, and answers as
    /// parsing it would: served instants across the years, each changed at every place to
    /// every other character of its shape (impossible dates and times, leap days, leap
    /// seconds, the end of the range), and other writings of instants.
    #[test]
    fn an_instant_already_served_answers_as_parsing_it_would() {
        let parsed = |t: &str| t.parse::<jiff::Timestamp>().ok().map(Instant::text);
        let mut checked = 0;
        let mut taken_as_is = 0;
        let mut check = |t: &str| {
            assert_eq!(Instant::of(t), parsed(t), "{t:?}");
            checked += 1;
            taken_as_is += usize::from(Instant::is_served(t));
        };
        let first = jiff::Timestamp::from_second(-30_610_224_000).expect("year 1000");
        let last = jiff::Timestamp::from_second(253_402_207_200).expect("the latest instant");
        let span = last.as_millisecond() - first.as_millisecond();
        for i in 0..600_i64 {
            let at = first.as_millisecond() + span / 600 * i + i * 86_399_937;
            let t = Instant::text(jiff::Timestamp::from_millisecond(at).expect("in range"));
            check(&t);
            for place in 0..t.len() {
                for c in "0123456789T:.-Z+ ".chars() {
                    let mut changed = t.clone();
                    changed.replace_range(place..=place, &c.to_string());
                    check(&changed);
                }
            }
        }
        for t in [
            "2000-02-29T23:59:59.999Z",
            "1900-02-29T00:00:00.000Z",
            "2024-02-29T12:00:00.000Z",
            "2023-02-29T12:00:00.000Z",
            "2026-04-31T12:00:00.000Z",
            "2026-12-31T23:59:59.999Z",
            "2026-11-21T24:00:00.000Z",
            "2026-11-21T23:59:60.000Z",
            "2016-12-31T23:59:60.500Z",
            "9998-12-31T23:59:59.999Z",
            "9999-01-01T00:00:00.000Z",
            "9999-12-30T21:59:59.999Z",
            "9999-12-31T00:00:00.000Z",
            "0999-12-31T23:59:59.999Z",
            "1000-01-01T00:00:00.000Z",
            "2026-11-21t04:10:02.113z",
            "2026-11-21T04:10:02.113+00:00",
            "2026-11-21T04:10:02.11Z",
            "2026-11-21T04:10:02.1130Z",
            "2026-11-21T04:10:02Z",
            "2026-11-21 04:10:02.113Z",
            "２026-11-21T04:10:02.113Z",
            "",
        ] {
            check(t);
        }
        assert!(
            checked > 100_000 && taken_as_is > 600,
            "{checked} {taken_as_is}"
        );
    }

    #[test]
    fn an_instant_is_written_as_strftime_writes_it() {
        let by_strftime = |t: jiff::Timestamp| t.strftime(Instant::FORMAT).to_string();
        let mut checked = 0;
        // Instants across the whole range (years -9999 to 9999), each with its own time
        // of day and fraction of a second, and both ends.
        let (first, last) = (jiff::Timestamp::MIN, jiff::Timestamp::MAX);
        let span = last.as_nanosecond() - first.as_nanosecond();
        for step in 0..=20_000_i128 {
            let nanos = first.as_nanosecond() + span / 20_000 * step + step * 7_919_003;
            let Ok(t) = jiff::Timestamp::from_nanosecond(nanos.min(last.as_nanosecond())) else {
                continue;
            };
            assert_eq!(Instant::text(t), by_strftime(t), "{nanos}");
            checked += 1;
        }
        // Every day of 1970 to 2099, each at another time of day and fraction.
        for day in 0..47_482_i64 {
            let second = day * 86_400 + day * 3_607 % 86_400;
            let nanos = i32::try_from(day * 123_457 % 1_000_000_000).expect("under a second");
            let t = jiff::Timestamp::new(second, nanos).expect("in range");
            assert_eq!(Instant::text(t), by_strftime(t), "{t}");
            checked += 1;
        }
        for t in [first, last, jiff::Timestamp::UNIX_EPOCH] {
            assert_eq!(Instant::text(t), by_strftime(t));
        }
        let whole = jiff::Timestamp::from_second(1_764_547_200).expect("in range");
        assert_eq!(Instant::text(whole), "2025-12-01T00:00:00.000Z");
        assert!(checked > 66_000, "{checked}");
    }
}
