//! The keys of what the analyses keep: the form on each race card (`cards/form.rs`), the
//! cards each horse is declared on, by which a result finds the cards whose form it
//! changes, and every race each jockey and trainer was in a result of, which their
//! records by condition are read from (`analysis.rs`).

use super::parts::{key, race, split_at_sep, SEP};

/// The form of the runners of one venue's race card, as of the race's date: a source
/// record that the card documents are rendered from, versioned as they are.
pub fn card_form(date: &str, race_number: u8, venue: &str) -> Vec<u8> {
    key(&[b"cf", date.as_bytes(), &race(race_number), venue.as_bytes()])
}

/// A horse declared on one venue's race card: under the horse, in date order.
pub fn card_entry(horse_no: &str, date: &str, race_number: u8, venue: &str) -> Vec<u8> {
    key(&[
        b"cx",
        horse_no.as_bytes(),
        date.as_bytes(),
        &race(race_number),
        venue.as_bytes(),
    ])
}

/// The prefix of the cards a horse is declared on.
pub fn card_entries_of(horse_no: &str) -> Vec<u8> {
    let mut k = key(&[b"cx", horse_no.as_bytes()]);
    k.push(SEP);
    k
}

/// The race of a card entry's key: `(date, race number, venue)`.
pub fn parse_card_entry(key: &[u8]) -> Option<(&str, u8, &str)> {
    let (_horse, rest) = split_at_sep(key.strip_prefix(b"cx\0")?)?;
    race_of(rest)
}

/// `date \0 nn \0 venue` read back.
fn race_of(rest: &[u8]) -> Option<(&str, u8, &str)> {
    let (date, race_number) = (rest.get(..10)?, rest.get(11..13)?);
    let n = std::str::from_utf8(race_number).ok()?.parse().ok()?;
    let venue = std::str::from_utf8(rest.get(14..)?).ok()?;
    Some((std::str::from_utf8(date).ok()?, n, venue))
}

/// A horse's career: every run it made, summed (`cards/career.rs`).
pub fn horse_career(horse_no: &str) -> Vec<u8> {
    key(&[b"hc", horse_no.as_bytes()])
}

/// A jockey's or a trainer's rides and wins of their last days with rides
/// (`cards/career.rs`).
pub fn person_recent(role: &str, id: &str) -> Vec<u8> {
    key(&[b"pr", role.as_bytes(), id.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back() {
        let entry = card_entry("A01", "2026-11-22", 3, "Sha Tin");
        assert!(entry.starts_with(&card_entries_of("A01")));
        assert_eq!(parse_card_entry(&entry), Some(("2026-11-22", 3, "Sha Tin")));
    }
}
