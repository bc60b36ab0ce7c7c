//! What a date's documents (its results, its cards) share: its meetings as they hold
//! them, the one that answers when no venue is asked for, the venues they list, and the
//! documents a date renders.

/// Everything of a date's meetings that a date document needs.
pub(crate) struct Meeting<T> {
    pub venue: String,
    pub races: Vec<T>,
}

/// The documents of one date, each with the key it is stored under.
pub(crate) struct Rendered {
    /// `(venue or None for the day's main meeting, bytes)`.
    pub days: Vec<(Option<String>, Vec<u8>)>,
    /// `(race number, venue or None, bytes)`.
    pub races: Vec<(u8, Option<String>, Vec<u8>)>,
}

/// The meeting that answers when no venue is asked for: the most races, then the first
/// venue in alphabetical order, so the choice never depends on arrival order.
pub(crate) fn main_meeting<T>(meetings: &[Meeting<T>]) -> usize {
    let mut best = 0;
    for (i, m) in meetings.iter().enumerate() {
        if m.races.len() > meetings[best].races.len() {
            best = i;
        }
    }
    best
}

/// Every venue of the day, on a date with more than one meeting: the `meetings` field.
pub(crate) fn venues<T>(meetings: &[Meeting<T>]) -> Option<Vec<String>> {
    (meetings.len() > 1).then(|| meetings.iter().map(|m| m.venue.clone()).collect())
}
