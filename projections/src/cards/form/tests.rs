//! A card's form as the fold keeps it, worked out whole where its card changes and
//! amended where a result changes it ([`amend`]), against the form worked out whole from
//! the facts alone: after every batch of a log of cards, results amended out of date
//! order, retractions and scratchings, each race's stored form is the one [`refresh`]
//! gives from every horse's entries, and each card the one rendered afresh, its strike
//! rates counted from the results alone.

use racing_events::samples::{card, result, retraction, runner, scratch_at};
use racing_events::Event;

use super::*;
use crate::batch::MemState;
use crate::fold::Kept;
use crate::tests::fold_resumed;

const VENUES: [&str; 2] = ["Sha Tin", "Happy Valley"];
const DATES: usize = 12;
const RACES: i64 = 3;
const HORSES: usize = 14;
const JOCKEYS: [&str; 4] = ["Z Purton", "H Bowman", "K Teetan", "A Badel"];
const TRAINERS: [&str; 3] = ["J Size", "C S Shum", "F C Lor"];

/// The `i`th race date, three days apart: a 14-day strike rate spans four or five.
fn date(i: usize) -> String {
    format!("2026-10-{:02}", 1 + 3 * i)
}

/// A small seeded generator (xorshift), so the log is the same at every run.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// `count` different horses.
    fn horses(&mut self, count: usize) -> Vec<String> {
        let mut all: Vec<String> = (1..=HORSES).map(|h| format!("H{h:02}")).collect();
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            out.push(all.remove(self.below(all.len())));
        }
        out
    }

    fn race(&mut self) -> (String, &'static str, i64) {
        (
            date(self.below(DATES)),
            VENUES[self.below(VENUES.len())],
            self.below(RACES as usize) as i64 + 1,
        )
    }
}

/// A log of `len` events: cards, results (most of them published again, amended, in no
/// order of date), scratchings and retractions over the same few races, horses, jockeys
/// and trainers, so that most results change the form of some later card.
fn log(seed: u64, len: usize) -> Vec<Event> {
    let mut draw = Draw(seed);
    let mut out = Vec::with_capacity(len);
    for _ in 0..len {
        let (date, venue, n) = draw.race();
        let runners = 4 + draw.below(4);
        let horses = draw.horses(runners);
        let event = match draw.below(10) {
            0..=3 => {
                let named: Vec<&str> = horses.iter().map(String::as_str).collect();
                let mut e = card(&date, venue, n, &named);
                if let Event::RaceCardDeclared(c) = &mut e {
                    for r in &mut c.runners {
                        r.jockey = JOCKEYS[draw.below(JOCKEYS.len())].into();
                        r.trainer = TRAINERS[draw.below(TRAINERS.len())].into();
                    }
                }
                e
            }
            4..=7 => {
                let mut places: Vec<i64> = (1..=runners as i64).collect();
                let runners = horses
                    .iter()
                    .map(|h| {
                        let place = places.remove(draw.below(places.len()));
                        let mut r = runner((draw.below(8) > 0).then_some(place), h);
                        r.jockey = JOCKEYS[draw.below(JOCKEYS.len())].into();
                        r.trainer = TRAINERS[draw.below(TRAINERS.len())].into();
                        r
                    })
                    .collect();
                result(&date, venue, n, runners)
            }
            8 => scratch_at(&date, venue, n, &horses[0]),
            _ => retraction(&date, venue, n, "amended"),
        };
        out.push(event);
    }
    out
}

/// The first race whose stored form in `s` is not the one worked out whole from the
/// facts alone, if any: each horse's career counted from all its entries, nothing kept
/// beside them.
fn stale_form(s: &MemState) -> Option<Race> {
    let mut whole = s.clone();
    let mut pasts = Pasts::default();
    for h in 1..=HORSES {
        let horse = format!("H{h:02}");
        let career = Career::of(&runs_of(s, &horse).expect("runs"));
        pasts.careers.insert(horse, career);
    }
    for i in 0..DATES {
        for venue in VENUES {
            for n in 1..=RACES as u8 {
                let race = (date(i), n, venue.to_owned());
                if refresh(&mut whole, &race, &mut pasts).expect("refresh") {
                    return Some(race);
                }
            }
        }
    }
    None
}

/// Folds `log` in batches of `size`, each starting from what the one before it handed
/// on, as a store's batches do, checking every race's form after each batch.
fn fold_checked(log: &[Event], size: usize) {
    let mut s = MemState::default();
    let mut kept = Kept::default();
    // Each card's stored head and body after the batch before.
    let mut cards: std::collections::HashMap<Vec<u8>, (Vec<u8>, Vec<u8>)> = Default::default();
    for (b, batch) in log.chunks(size).enumerate() {
        kept = fold_resumed(&mut s, b * size, batch, kept);
        let after = b * size + batch.len();
        if let Some(race) = stale_form(&s) {
            panic!(
                "after event {after} (batches of {size}), race {race:?}'s form is not what it \
                 is worked out whole"
            );
        }
        // The cards the fold rendered, with the strike rates it summed from the days it
        // handed on, are those rendered afresh where they are read (a document is served
        // only where its body has the `ETag` the fold gave it); each date's rides are
        // those its results count.
        for i in 0..DATES {
            let date = date(i);
            let day = crate::facts::Day::read(&s, &date).expect("day");
            let mut results = Vec::new();
            for (venue, races) in &day.results {
                for &n in races {
                    let key = crate::keys::result(&date, n, venue);
                    results.extend(crate::state::read(&s, &key).expect("result"));
                }
            }
            let key = crate::keys::analysis::day_rides(&date);
            let stored: Option<strikes::DayTally> = crate::state::read(&s, &key).expect("rides");
            assert_eq!(
                stored.unwrap_or_default(),
                strikes::DayTally::of(&results),
                "after event {after} (batches of {size}), the rides of {date}"
            );
            for (venue, _) in crate::facts::Day::read(&s, &date).expect("day").cards {
                let key = crate::keys::doc::DocKey::Card {
                    date: &date,
                    venue: Some(&venue),
                };
                let body = s.doc(key).unwrap_or_else(|| {
                    panic!(
                        "after event {after} (batches of {size}), the card of {date} at \
                         {venue} is not the one rendered afresh"
                    )
                });
                // Its head changed exactly where its bytes did: the tag of its digest,
                // which the fold works out without rendering it, tells the change of
                // every race's part, strike rates and forms included.
                let head = crate::state::Records::get(&s, &key.key())
                    .expect("head")
                    .expect("a head");
                let now = (head[..crate::docs::ETAG_LEN].to_vec(), body.into_owned());
                if let Some((tag, body)) = cards.insert(key.key(), now.clone()) {
                    assert_eq!(
                        tag == now.0,
                        body == now.1,
                        "after event {after} (batches of {size}), the card of {date} at \
                         {venue}: its head's tag and its bytes did not change together"
                    );
                }
            }
        }
    }
}

#[test]
fn a_stored_form_is_the_form_worked_out_whole() {
    for seed in [7, 1_234_567, 0x9e37_79b9] {
        let log = log(seed, 300);
        let later_cards = log.iter().filter(|e| {
            let Event::RaceResultPublished(r) = e else {
                return false;
            };
            log.iter()
                .any(|c| matches!(c, Event::RaceCardDeclared(c) if c.date > r.date))
        });
        assert!(later_cards.count() > 80, "results before later cards");
        for size in [1, 5] {
            fold_checked(&log, size);
        }
    }
}
