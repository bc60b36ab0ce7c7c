//! A horse's names of one date as stored (`keys::horse_names_on`): what each card and
//! result of the date gives it, and its date before with one, in a short binary record
//! (`names.rs` keeps the list of them).

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

    /// The record of `horse`'s names of `date` in `s`, if any.
    pub(super) fn read(
        s: &impl Records,
        horse: &str,
        date: &str,
    ) -> Result<Option<Dated>, StoreError> {
        let key = keys::horse_names_on(horse, date);
        s.get(&key)?
            .map(|stored| Dated::decode(&key, &stored))
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
        let key = keys::horse_names_on("A024", "2026-11-29");
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
}
