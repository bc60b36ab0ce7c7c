//! Race cards and their scratchings, for a venue or for every venue.

use super::*;

#[test]
fn scratchings_remove_runners_whether_they_come_before_or_after_the_card() {
    let s = fold_each([
        env(scratch("2026-11-21", 1, "A1")),
        env(card("2026-11-21", "Sha Tin", 2, &["D4"])),
        env(card("2026-11-21", "Sha Tin", 1, &["A1", "B2", "C3"])),
        env(scratch("2026-11-21", 1, "C3")),
    ]);
    let c = doc(
        &s,
        DocKey::Card {
            date: "2026-11-21",
            venue: None,
        },
    );
    assert_eq!(c["races"][0]["race_number"], 1);
    assert_eq!(horses(&c["races"][0], "runners"), ["B2"]);
    assert_eq!(c["races"][1]["race_number"], 2);
    assert_eq!(c["races"][0]["class"], "Class 4");
    assert_eq!(c["races"][0]["runners"][0]["draw"], 2);
}

#[test]
fn a_scratching_for_a_venue_leaves_the_other_venues_race_alone() {
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1", "B2", "Z9"])),
        env(card(DAY, HV, 3, &["A1", "B2", "Z9"])),
        env(scratch_at(DAY, HV, 3, "B2")),
        // A v1 scratching: race 3 at every venue.
        env(scratch(DAY, 3, "Z9")),
    ]);
    let runners = |venue| {
        let card = doc(&s, DocKey::Card { date: DAY, venue });
        horses(&card["races"][0], "runners")
    };
    assert_eq!(runners(Some(ST)), ["A1", "B2"]);
    assert_eq!(runners(Some(HV)), ["A1"]);
}
