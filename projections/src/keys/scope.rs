//! What a bulk load ([`crate::load::Loader`]) needs to know of a key to hold no more than the
//! days being replayed: whether a fold ever reads the record back, and which race date
//! the record belongs to.
//!
//! A race's records (its card, odds, result, documents, and the rides it gives) are
//! settled once the log has moved past its day, a horse's form entries and names of a
//! year once it has moved past the year; horses, people and the name search live as long
//! as the log. Versions, journals and the name index are written and never read
//! by a fold: the endpoints read them.

use super::parts::{SEP, YEAR_LEN};

/// What a load makes of a key, or of a scan's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope<'k> {
    /// Written by the folds and never read back by one.
    Unread,
    /// Of the race date (`YYYY-MM-DD`, its bytes).
    Dated(&'k [u8]),
    /// A prefix of one kind of dated record that ends where the date starts: the records
    /// under it follow one another in date order (a person's rides, a horse's form).
    ByDate,
    /// A prefix that spans records of several kinds or dates in no date order.
    Mixed,
    /// Of a record that lives as long as the log.
    Lasting,
}

/// The kinds of record the folds write and never read: the versions `as_of` reads, the
/// horse-name index, the odds and race-day journals, the past versions of form entries,
/// the change feed, the dead letters, and the applied ids (read by their own structure,
/// not by a fold's reads).
const UNREAD: [&[u8]; 10] = [
    b"h\0", b"hw\0", b"hx\0", b"oj\0", b"rd\0", b"rdo\0", b"fc\0", b"chg\0", b"dead\0", b"seen\0",
];

/// The dated kinds: the prefix of the kind, how many parts stand between it and the
/// date, and the date's length: a day's ([`DATE`]), or a year's ([`YEAR`]: a record of all
/// the year's days, settled once the log has moved past the year).
const DATED: [(&[u8], usize, usize); 17] = [
    (b"card\0", 0, DATE),
    (b"cf\0", 0, DATE),
    (b"dr\0", 0, DATE),
    (b"scr\0", 0, DATE),
    (b"rst\0", 0, DATE),
    (b"res\0", 0, DATE),
    (b"day\0", 0, DATE),
    (b"odds\0", 0, DATE),
    (b"mtg\0", 0, DATE),
    (b"on\0", 0, DATE),
    (b"doc\0race\0", 0, DATE),
    (b"doc\0results\0", 0, DATE),
    (b"doc\0odds\0", 0, DATE),
    (b"doc\0cards\0", 0, DATE),
    // A horse's form entries and its names, of each year, under the horse.
    (b"fe\0", 1, YEAR),
    (b"hd\0", 1, YEAR),
    // A jockey's or a trainer's rides, under the role and the person.
    (b"ppl\0ride\0", 2, DATE),
];

/// The dated kind of which each horse's newest record is read again whenever the horse
/// runs, however long ago its last run was: its names of its latest year with a card or
/// a result (`search/names.rs`).
pub(crate) const NEWEST_READ_AGAIN: &[u8] = b"hd\0";

/// The horse of a [`NEWEST_READ_AGAIN`] key: what stands before its year.
pub(crate) fn newest_of(key: &[u8]) -> Option<&[u8]> {
    let rest = key.strip_prefix(NEWEST_READ_AGAIN)?;
    let end = rest.iter().position(|&b| b == SEP)?;
    Some(&rest[..end])
}

/// Bytes of a date, `YYYY-MM-DD`.
const DATE: usize = 10;

/// Bytes of a year, `YYYY`.
const YEAR: usize = YEAR_LEN;

/// The scope of `key`, a record's key or a scan's prefix.
pub(crate) fn scope(key: &[u8]) -> Scope<'_> {
    if UNREAD.iter().any(|kind| key.starts_with(kind)) {
        return Scope::Unread;
    }
    for (kind, before, len) in DATED {
        if let Some(rest) = key.strip_prefix(kind) {
            return dated(rest, before, len);
        }
    }
    // A prefix cut inside or before the name of a kind spans several.
    let cut = |kind: &[u8]| kind.starts_with(key);
    if UNREAD.into_iter().any(cut) || DATED.iter().any(|(kind, ..)| cut(kind)) {
        return Scope::Mixed;
    }
    Scope::Lasting
}

/// The scope of what follows a dated kind's prefix: `before` parts, then the date of `len`
/// bytes.
fn dated(mut rest: &[u8], before: usize, len: usize) -> Scope<'_> {
    for _ in 0..before {
        match rest.iter().position(|&b| b == SEP) {
            Some(end) => rest = &rest[end + 1..],
            None => return Scope::Mixed,
        }
    }
    match rest.get(..len) {
        _ if rest.is_empty() => Scope::ByDate,
        Some(date) if rest.get(len).is_none_or(|&b| b == SEP) => Scope::Dated(date),
        _ => Scope::Mixed,
    }
}

/// The date (a day or a year) of a record under a [`Scope::ByDate`] prefix: the bytes that
/// follow it, to the next separator.
pub(crate) fn date_after<'k>(prefix: &[u8], key: &'k [u8]) -> Option<&'k [u8]> {
    let rest = key.get(prefix.len()..)?;
    let end = rest.iter().position(|&b| b == SEP).unwrap_or(rest.len());
    rest.get(..end).filter(|date| !date.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys;

    const D: &[u8] = b"2026-11-22";

    #[test]
    fn race_records_are_of_their_date() {
        for key in [
            keys::card("2026-11-22", 3, "Sha Tin"),
            keys::scratched("2026-11-22", 3, None),
            keys::status("2026-11-22", 3, Some("Sha Tin")),
            keys::result("2026-11-22", 3, "Happy Valley"),
            keys::day("2026-11-22"),
            keys::analysis::day_rides("2026-11-22"),
            keys::odds("2026-11-22", 3, None),
            keys::meetings("2026-11-22"),
            keys::odds_race_counts("2026-11-22", 3),
            keys::DocKey::Odds {
                date: "2026-11-22",
                race_number: 3,
                venue: None,
            }
            .key(),
            keys::DocKey::Results {
                date: "2026-11-22",
                venue: Some("Sha Tin"),
            }
            .key(),
            keys::person_rides_on("jockey", "z-purton", "2026-11-22"),
        ] {
            assert_eq!(
                scope(&key),
                Scope::Dated(D),
                "{}",
                String::from_utf8_lossy(&key)
            );
        }
        // A horse's names and form entries are of the year.
        let names = keys::horse_names_in("A01", "2026-11-22");
        assert_eq!(scope(&names), Scope::Dated(b"2026"));
        let form = keys::form_year("A01", "2026-11-22");
        assert_eq!(scope(&form), Scope::Dated(b"2026"));
    }

    #[test]
    fn a_horses_and_a_persons_records_read_in_date_order() {
        let rides = keys::person_rides("jockey", "z-purton");
        assert_eq!(scope(&rides), Scope::ByDate);
        assert_eq!(scope(&keys::form_entries_of("A01")), Scope::ByDate);
        assert_eq!(scope(keys::ODDS_PREFIX), Scope::ByDate);
        let day = keys::person_rides_on("jockey", "z-purton", "2026-11-22");
        assert_eq!(date_after(&rides, &day), Some(D));
        let names = keys::horse_names_in("A01", "2026-11-22");
        assert_eq!(newest_of(&names), Some(&b"A01"[..]));
        let horse = keys::horse_names_dates("A01");
        assert_eq!(scope(&horse), Scope::ByDate);
        assert_eq!(date_after(&horse, &names), Some(&b"2026"[..]));
    }

    #[test]
    fn what_spans_kinds_or_dates_is_mixed() {
        for prefix in [&b""[..], b"d", b"doc\0", b"ppl\0", b"ppl\0ride\0jockey\0"] {
            assert_eq!(
                scope(prefix),
                Scope::Mixed,
                "{}",
                String::from_utf8_lossy(prefix)
            );
        }
        assert_eq!(scope(b"card\x002026-11"), Scope::Mixed);
    }

    #[test]
    fn horses_people_and_names_last_and_versions_are_not_read() {
        for key in [
            keys::DocKey::Profile("A01").key(),
            keys::DocKey::Form("A01").key(),
            keys::horse_names("A01"),
            keys::person_season("jockey", "z-purton", "2026/27"),
            keys::person_doc("trainer", "j-size"),
            keys::person_row("jockey", "z-purton"),
            keys::ODDS_SEQ.to_vec(),
        ] {
            assert_eq!(
                scope(&key),
                Scope::Lasting,
                "{}",
                String::from_utf8_lossy(&key)
            );
        }
        for key in [
            keys::versions::history(&keys::card("2026-11-22", 3, "Sha Tin"), 9),
            keys::name_index(true, "golden", "A01"),
            keys::odds_chunk("2026-11-22", 3, 9),
            keys::race_day("2026-11-22", 9),
            keys::change(9, 0),
            keys::dead(9),
            keys::IDS_MANIFEST.to_vec(),
        ] {
            assert_eq!(
                scope(&key),
                Scope::Unread,
                "{}",
                String::from_utf8_lossy(&key)
            );
        }
    }
}
