//! Each race's part of its date's documents (a result's; for a card, the digest of its
//! part and of what it lists), kept with the hash of the records it was made from. A
//! date's documents are made again at every event that changes one of their races, at
//! that event's position, some ten or twenty times a meeting: the races an event left
//! alone are copied from here. A part is used where the records it would be made from
//! hash the same as those it was, so that it is not stale whatever wrote them, or,
//! without reading them, where the fold knows that no event changed them since it was
//! last checked so ([`Parts::kept`]: the cards' races a result does not reach,
//! `cards.rs`); a fold keeps the parts of the last dates it made, and hands them on only
//! to the next batch of its store, which starts where they were made (`fold.rs`,
//! [`crate::fold::Kept`]).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::value::RawValue;
use xxhash_rust::xxh3::Xxh3;

use crate::kv::StoreError;

/// Dates whose parts are kept: a replay renders a meeting's documents at each of its
/// cards and results, and a result the cards of the later races of its horses and of the
/// 14 days after its date whose form it changed, in date order. Where those are more than
/// are kept, each result's dates go round the list and every race of them is rendered
/// again, not only the amended ones (16 were fewer than an amending season's results
/// reach: BENCHMARKS.md, "What was tried").
const DATES: usize = 128;

/// The races' parts of the last dates made, by date, venue and race number: a result's
/// rendered, or the digest of a card's, or of its listing.
#[derive(Debug)]
pub(crate) struct Parts<T = Arc<RawValue>> {
    dates: HashMap<String, OfDate<T>>,
    /// The dates kept, in the order their first part was kept.
    order: VecDeque<String>,
}

impl<T> Default for Parts<T> {
    fn default() -> Self {
        Parts {
            dates: HashMap::new(),
            order: VecDeque::new(),
        }
    }
}

/// A date's parts, by venue and race number.
type OfDate<T> = HashMap<(String, u8), Part<T>>;

#[derive(Debug)]
struct Part<T> {
    /// The hash of the records it was made from ([`hash`]).
    sources: u128,
    value: T,
}

impl<T: Clone> Parts<T> {
    /// The part of race `n` of `date` at `venue` whose records hash to `sources`: the one
    /// kept where it was made from those, else what `make` makes of them (`None`: the race
    /// has no part).
    pub(crate) fn of(
        &mut self,
        (date, n, venue): (&str, u8, &str),
        sources: u128,
        make: impl FnOnce() -> Result<Option<T>, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let parts = self.of_date(date);
        if let Some(part) = parts.get(&(venue.to_owned(), n)) {
            if part.sources == sources {
                return Ok(Some(part.value.clone()));
            }
        }
        let Some(value) = make()? else {
            return Ok(None);
        };
        parts.insert(
            (venue.to_owned(), n),
            Part {
                sources,
                value: value.clone(),
            },
        );
        Ok(Some(value))
    }

    /// The part of race `n` of `date` at `venue` as last kept, whatever it was made from:
    /// for a fold that knows nothing it was made from changed since.
    pub(crate) fn kept(&self, (date, n, venue): (&str, u8, &str)) -> Option<T> {
        let part = self.dates.get(date)?.get(&(venue.to_owned(), n))?;
        Some(part.value.clone())
    }

    /// The parts kept of `date`, the oldest date's given up to make room.
    fn of_date(&mut self, date: &str) -> &mut OfDate<T> {
        if !self.dates.contains_key(date) {
            if self.order.len() == DATES {
                if let Some(oldest) = self.order.pop_front() {
                    self.dates.remove(&oldest);
                }
            }
            self.order.push_back(date.to_owned());
        }
        self.dates.entry(date.to_owned()).or_default()
    }
}

/// The 128-bit xxh3 of `records` as stored, each framed by whether it is there and its
/// length, so that no two lists of records hash alike by their bytes running on.
pub(crate) fn hash<'a>(records: impl IntoIterator<Item = Option<&'a [u8]>>) -> u128 {
    let mut h = Xxh3::new();
    for record in records {
        match record {
            Some(bytes) => {
                h.update(&[1]);
                h.update(&(bytes.len() as u64).to_le_bytes());
                h.update(bytes);
            }
            None => h.update(&[0]),
        }
    }
    h.digest128()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Result<Option<Arc<RawValue>>, StoreError> {
        Ok(Some(
            RawValue::from_string(json.into()).expect("json").into(),
        ))
    }

    #[test]
    fn a_part_is_rendered_again_when_its_records_hash_otherwise() {
        let mut parts = Parts::default();
        let race = ("2026-11-01", 1, "Sha Tin");
        let first = hash([Some(&b"a"[..]), None]);
        let got = parts.of(race, first, || raw("1")).expect("rendered");
        assert_eq!(got.map(|j| j.get().to_owned()).as_deref(), Some("1"));
        let kept = parts
            .of(race, first, || panic!("rendered again"))
            .expect("kept");
        assert_eq!(kept.map(|j| j.get().to_owned()).as_deref(), Some("1"));
        let other = hash([Some(&b"b"[..]), None]);
        let again = parts.of(race, other, || raw("2")).expect("rendered");
        assert_eq!(again.map(|j| j.get().to_owned()).as_deref(), Some("2"));
        // Another race, venue or date is another part.
        let elsewhere = parts
            .of(("2026-11-01", 1, "Happy Valley"), other, || raw("3"))
            .expect("rendered");
        assert_eq!(elsewhere.map(|j| j.get().to_owned()).as_deref(), Some("3"));
    }

    #[test]
    fn a_part_is_taken_as_kept_whatever_it_was_rendered_from() {
        let mut parts: Parts = Parts::default();
        let race = ("2026-11-01", 1, "Sha Tin");
        assert!(parts.kept(race).is_none());
        parts.of(race, 7, || raw("1")).expect("rendered");
        parts.of(race, 8, || raw("2")).expect("rendered");
        assert_eq!(
            parts.kept(race).map(|j| j.get().to_owned()).as_deref(),
            Some("2")
        );
        assert!(parts.kept(("2026-11-01", 2, "Sha Tin")).is_none());
        assert!(parts.kept(("2026-11-02", 1, "Sha Tin")).is_none());
    }

    #[test]
    fn records_framed_alike_hash_otherwise() {
        let h = |r: [Option<&[u8]>; 2]| hash(r);
        assert_ne!(h([Some(b"ab"), Some(b"c")]), h([Some(b"a"), Some(b"bc")]));
        assert_ne!(h([Some(b""), None]), h([None, Some(b"")]));
        assert_eq!(h([Some(b"x"), None]), h([Some(b"x"), None]));
    }

    #[test]
    fn only_the_last_few_dates_are_kept() {
        let mut parts = Parts::default();
        let dates: Vec<String> = (1..=DATES + 1).map(|d| format!("2026-11-{d:02}")).collect();
        for date in &dates {
            parts
                .of((date, 1, "Sha Tin"), 7, || raw("1"))
                .expect("rendered");
        }
        assert_eq!(parts.dates.len(), DATES);
        assert_eq!(parts.order.len(), DATES);
        let mut rendered = false;
        parts
            .of((&dates[0], 1, "Sha Tin"), 7, || {
                rendered = true;
                raw("1")
            })
            .expect("rendered");
        assert!(rendered, "the oldest date's parts were given up");
    }
}
