//! A horse's names of each date as stored: what each card and result of the date gives
//! it, and its date before with one, in a short binary record ([`Dated`]; `names.rs` keeps
//! the list of them), and the dates of one year in one record ([`Year`],
//! `keys::horse_names_in`). A horse has a card and a result on some ten dates a year, and
//! sled takes some hundreds of bytes of disk and of writes a record whatever its size
//! (BENCHMARKS.md, "What was tried"): a year's dates share one record.

use std::collections::BTreeMap;

use crate::encoding::{number, part, put_number, put_part};
use crate::keys;
use crate::kv::StoreError;
use crate::state::Records;

/// What the cards and results of one date give a horse, and its date before with some.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Dated {
    pub(super) prev: Option<String>,
    /// In order of race number, venue and kind.
    pub(super) races: Vec<Given>,
}

/// The name one race's card or result gives: race number, venue, `c` or `r`, the name,
/// and the sequence of the event.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Given(
    pub(super) i64,
    pub(super) String,
    pub(super) char,
    pub(super) String,
    pub(super) u64,
);

impl Given {
    pub(super) fn race(&self) -> (i64, &str, char) {
        (self.0, &self.1, self.2)
    }
}

/// Of a stored [`Given`]'s flags: given by a result (else by a card).
const BY_RESULT: u8 = 1;
/// Of its flags: the venue is that of the one before it in the record.
const SAME_VENUE: u8 = 2;
/// Of its flags: the name is that of the one before it in the record.
const SAME_NAME: u8 = 4;

impl Dated {
    /// The record as stored: whether a date before follows (1) or not (0), then that date
    /// as a part; then each race's name given: its flags, its race number (zigzag), its
    /// venue and its name as parts where they differ from the one before's (a card and
    /// the result of a race mostly give the same), and its sequence. About half the size
    /// of the JSON it replaces, which named no field but repeated every venue and name.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 32 * self.races.len());
        match &self.prev {
            Some(prev) => {
                out.push(1);
                put_part(&mut out, prev.as_bytes());
            }
            None => out.push(0),
        }
        let mut before: Option<&Given> = None;
        for g in &self.races {
            let same_venue = before.is_some_and(|b| b.1 == g.1);
            let same_name = before.is_some_and(|b| b.3 == g.3);
            let mut flags = 0;
            if g.2 == 'r' {
                flags |= BY_RESULT;
            }
            if same_venue {
                flags |= SAME_VENUE;
            }
            if same_name {
                flags |= SAME_NAME;
            }
            out.push(flags);
            put_number(&mut out, ((g.0 << 1) ^ (g.0 >> 63)) as u64);
            if !same_venue {
                put_part(&mut out, g.1.as_bytes());
            }
            if !same_name {
                put_part(&mut out, g.3.as_bytes());
            }
            put_number(&mut out, g.4);
            before = Some(g);
        }
        out
    }

    /// The record stored under `key` ([`Dated::encode`]).
    pub(super) fn decode(key: &[u8], stored: &[u8]) -> Result<Dated, StoreError> {
        let corrupt = || {
            StoreError::Corrupt(format!(
                "{}: a horse's names of a date",
                String::from_utf8_lossy(key)
            ))
        };
        let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).map_err(|_| corrupt());
        let (&has_prev, mut rest) = stored.split_first().ok_or_else(corrupt)?;
        let prev = match has_prev {
            0 => None,
            1 => Some(text(part(&mut rest).ok_or_else(corrupt)?)?),
            _ => return Err(corrupt()),
        };
        let mut races: Vec<Given> = Vec::new();
        while let Some((&flags, after)) = rest.split_first() {
            rest = after;
            if flags & !(BY_RESULT | SAME_VENUE | SAME_NAME) != 0 {
                return Err(corrupt());
            }
            let zigzag = number(&mut rest).ok_or_else(corrupt)?;
            let n = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
            let before = races.last();
            let venue = match before {
                Some(b) if flags & SAME_VENUE != 0 => b.1.clone(),
                _ if flags & SAME_VENUE != 0 => return Err(corrupt()),
                _ => text(part(&mut rest).ok_or_else(corrupt)?)?,
            };
            let name = match before {
                Some(b) if flags & SAME_NAME != 0 => b.3.clone(),
                _ if flags & SAME_NAME != 0 => return Err(corrupt()),
                _ => text(part(&mut rest).ok_or_else(corrupt)?)?,
            };
            let kind = if flags & BY_RESULT != 0 { 'r' } else { 'c' };
            let seq = number(&mut rest).ok_or_else(corrupt)?;
            races.push(Given(n, venue, kind, name, seq));
        }
        Ok(Dated { prev, races })
    }
}

/// The records of a horse's dates of one year, each as [`Dated::encode`] makes it, by date.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Year(pub(super) BTreeMap<String, Vec<u8>>);

impl Year {
    /// The record as stored: each date in date order, as a part, then its record as a
    /// part.
    pub(super) fn encode(&self) -> Vec<u8> {
        let size: usize = self.0.iter().map(|(d, r)| 2 + d.len() + r.len()).sum();
        let mut out = Vec::with_capacity(size);
        for (date, dated) in &self.0 {
            put_part(&mut out, date.as_bytes());
            put_part(&mut out, dated);
        }
        out
    }

    /// The dates of the record `stored` under `key` ([`Year::encode`]), each with its
    /// record as stored, in date order.
    pub(super) fn entries<'a>(
        key: &[u8],
        stored: &'a [u8],
    ) -> Result<Vec<(&'a str, &'a [u8])>, StoreError> {
        let corrupt = || {
            StoreError::Corrupt(format!(
                "{}: a horse's names of a year",
                String::from_utf8_lossy(key)
            ))
        };
        let year = keys::parse_horse_names_year(key);
        let mut rest = stored;
        let mut out: Vec<(&str, &[u8])> = Vec::new();
        while !rest.is_empty() {
            let date = part(&mut rest).ok_or_else(corrupt)?;
            let date = std::str::from_utf8(date).map_err(|_| corrupt())?;
            let dated = part(&mut rest).ok_or_else(corrupt)?;
            // Each date once, in order, and of the record's year.
            if out.last().is_some_and(|(before, _)| *before >= date)
                || year.is_some_and(|year| keys::year_of(date) != year)
            {
                return Err(corrupt());
            }
            out.push((date, dated));
        }
        Ok(out)
    }

    /// The record of `horse`'s names of the year of `date` in `s` (empty: none).
    pub(super) fn read(s: &impl Records, horse: &str, date: &str) -> Result<Year, StoreError> {
        let key = keys::horse_names_in(horse, date);
        let Some(stored) = s.get(&key)? else {
            return Ok(Year::default());
        };
        let entries = Year::entries(&key, &stored)?;
        Ok(Year(
            entries
                .into_iter()
                .map(|(date, dated)| (date.to_owned(), dated.to_vec()))
                .collect(),
        ))
    }

    /// The record of `date` in it, decoded, if any; `key` is the year's.
    pub(super) fn dated(&self, key: &[u8], date: &str) -> Result<Option<Dated>, StoreError> {
        self.0
            .get(date)
            .map(|stored| Dated::decode(key, stored))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(n: i64, venue: &str, kind: char, name: &str, seq: u64) -> Given {
        Given(n, venue.into(), kind, name.into(), seq)
    }

    #[test]
    fn a_date_record_reads_back_as_written() {
        let key = keys::horse_names_in("A024", "2026-11-29");
        let dated = [
            Dated::default(),
            Dated {
                prev: Some("2026-11-22".into()),
                races: vec![
                    given(3, "Sha Tin", 'c', "GLORIOUS SUNRISE", 7),
                    given(3, "Sha Tin", 'r', "GLORIOUS SUNRISE", u64::MAX),
                    given(-1, "Sha Tin", 'r', "GLORIOUS DAWN", 9),
                    given(i64::MAX, "Happy Valley", 'c', "GLORIOUS DAWN", 0),
                    given(i64::MIN, "", 'c', &"LONG ".repeat(80), 1 << 40),
                ],
            },
        ];
        for d in dated {
            let stored = d.encode();
            assert_eq!(Dated::decode(&key, &stored).expect("decodes"), d);
            // Cut short anywhere, it is damaged or a shorter list (a record ends after
            // any race).
            for end in 0..stored.len() {
                if let Ok(shorter) = Dated::decode(&key, &stored[..end]) {
                    assert!(shorter.races.len() < d.races.len(), "{end}");
                }
            }
        }
        // A card and its result of the same name cost their flags, race and sequence.
        let pair = Dated {
            prev: None,
            races: vec![
                given(3, "Sha Tin", 'c', "GLORIOUS SUNRISE", 1_000_000),
                given(3, "Sha Tin", 'r', "GLORIOUS SUNRISE", 1_000_100),
            ],
        };
        assert_eq!(pair.encode().len(), 1 + (1 + 1 + 8 + 17 + 3) + (1 + 1 + 3));
        for damaged in [&b""[..], &[2][..], &[0, 8, 6][..], &[0, 2, 6, 7][..]] {
            assert!(Dated::decode(&key, damaged).is_err(), "{damaged:?}");
        }
    }

    #[test]
    fn a_year_record_holds_its_dates_in_order_and_no_other_years() {
        let key = keys::horse_names_in("A024", "2026-11-29");
        assert_eq!(key, keys::horse_names_in("A024", "2026-01-01"));
        assert_ne!(key, keys::horse_names_in("A024", "2025-12-31"));
        let one = Dated {
            prev: Some("2026-11-22".into()),
            races: vec![given(3, "Sha Tin", 'c', "GLORIOUS SUNRISE", 7)],
        };
        let mut year = Year::default();
        year.0.insert("2026-11-29".into(), one.encode());
        year.0
            .insert("2026-11-22".into(), Dated::default().encode());
        let stored = year.encode();
        let entries = Year::entries(&key, &stored).expect("decodes");
        let dates: Vec<&str> = entries.iter().map(|(date, _)| *date).collect();
        assert_eq!(dates, ["2026-11-22", "2026-11-29"]);
        assert_eq!(year.dated(&key, "2026-11-29").expect("decodes"), Some(one));
        assert_eq!(year.dated(&key, "2026-11-30").expect("decodes"), None);
        assert_eq!(Year::entries(&key, b"").expect("decodes"), []);
        // Cut short, a date out of order or of another year: damaged.
        assert!(Year::entries(&key, &stored[..stored.len() - 1]).is_err());
        let mut swapped = Vec::new();
        for (date, dated) in entries.iter().rev() {
            put_part(&mut swapped, date.as_bytes());
            put_part(&mut swapped, dated);
        }
        assert!(Year::entries(&key, &swapped).is_err());
        let mut other = Year::default();
        other
            .0
            .insert("2025-11-29".into(), Dated::default().encode());
        assert!(Year::entries(&key, &other.encode()).is_err());
    }
}
