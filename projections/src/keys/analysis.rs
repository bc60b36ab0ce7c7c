//! The keys of what the analyses keep: the form on each race card (`cards/form.rs`), and
//! each horse's career and each date's rides by person, which the form on the cards is
//! worked out from.

use super::parts::{key, race};

/// The form of the runners of one venue's race card, as of the race's date: a source
/// record that the card documents are rendered from, versioned as they are.
pub fn card_form(date: &str, race_number: u8, venue: &str) -> Vec<u8> {
    key(&[b"cf", date.as_bytes(), &race(race_number), venue.as_bytes()])
}

/// A date's rides and wins by jockey and trainer, as its results count them
/// (`cards/form/strikes.rs`): versioned as the source records are, so that a card's
/// strike rates as of any point are those it showed then.
pub fn day_rides(date: &str) -> Vec<u8> {
    key(&[b"dr", date.as_bytes()])
}

/// A horse's career: every run it made, summed (`cards/career.rs`).
pub fn horse_career(horse_no: &str) -> Vec<u8> {
    key(&[b"hc", horse_no.as_bytes()])
}
