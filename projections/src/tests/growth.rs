//! What a live event writes does not grow with the store's history: each event of a race
//! day, folded as a batch of its own as the live path folds it, writes as many bytes after
//! ten seasons of the same horses, jockeys and trainers as after one, the horses named
//! anew each season (as the bench's log names anew a brand number it reuses).

use super::*;
use crate::counting_state::Tally;

/// The horses of every race, each ridden by one of four jockeys for one of three
/// trainers.
const HORSES: [&str; 12] = [
    "A01", "A02", "A03", "A04", "A05", "A06", "A07", "A08", "A09", "A10", "A11", "A12",
];

/// Who rides the runners, in turn.
const JOCKEYS: [&str; 4] = ["Z Purton", "H Bowman", "K Teetan", "A Badel"];

/// Who trains them, in turn.
const TRAINERS: [&str; 3] = ["J Size", "C S Shum", "F C Lor"];

/// Races a meeting.
const RACES: i64 = 8;

/// The runners of a result of every horse, finishing in an order that turns with `n`.
fn runners(n: usize) -> Vec<ResultRunner> {
    (0..HORSES.len())
        .map(|i| {
            let horse = HORSES[(i + n) % HORSES.len()];
            let mut r = runner(Some(i as i64 + 1), horse);
            r.jockey = JOCKEYS[i % JOCKEYS.len()].into();
            r.trainer = TRAINERS[i % TRAINERS.len()].into();
            r
        })
        .collect()
}

/// A meeting on `date` of the season its date is in: every race's card, three price
/// moves and result.
pub(super) fn meeting(date: &str) -> Vec<Envelope> {
    let mut events = Vec::new();
    for race in 1..=RACES {
        events.push(card(date, "Sha Tin", race, &HORSES));
        for m in 0..3 {
            let price = 2.0 + f64::from(m);
            events.push(odds_at(
                date,
                "Sha Tin",
                race,
                &[("A01", price), ("A02", 9.0)],
            ));
        }
        events.push(result(date, "Sha Tin", race, runners(race as usize)));
    }
    events.into_iter().map(env).collect()
}

/// The event with its runners named as in `season`.
fn named_in(mut e: Envelope, season: i32) -> Envelope {
    let name = |horse: &str| format!("NAME {horse} {season}");
    match &mut e.event {
        Event::RaceCardDeclared(c) => {
            for r in &mut c.runners {
                r.horse_name = name(&r.horse_no);
            }
        }
        Event::RaceResultPublished(r) => {
            for r in &mut r.runners {
                r.horse_name = name(&r.horse_no);
            }
        }
        _ => {}
    }
    e
}

/// A store of `seasons` seasons of ten meetings each, from 2000/01, each meeting a batch,
/// each season's cards and results naming the horses anew.
fn history(seasons: i32) -> MemState {
    let mut s = MemState::default();
    let mut seq = 0;
    for season in 0..seasons {
        for week in 0..10 {
            let date = jiff::civil::date(2000 + season as i16, 10, 1)
                + jiff::Span::new().weeks(i64::from(week));
            let mut f = Fold::default();
            for e in meeting(&date.to_string()) {
                seq += 1;
                f.apply(&mut s, seq, 0, &named_in(e, season))
                    .expect("apply");
            }
            f.render(&mut s).expect("render");
        }
    }
    s
}

/// Today's race day, as it comes: each event a batch of its own.
fn race_day() -> Vec<(&'static str, Envelope)> {
    const TODAY: &str = "2040-10-03";
    let mut card = card(TODAY, "Sha Tin", 1, &HORSES);
    if let Event::RaceCardDeclared(c) = &mut card {
        for (i, r) in c.runners.iter_mut().enumerate() {
            r.jockey = JOCKEYS[i % JOCKEYS.len()].into();
            r.trainer = TRAINERS[i % TRAINERS.len()].into();
        }
    }
    let off = samples::status(TODAY, Some("Sha Tin"), 1, RaceStatus::Off, None);
    let mut result = result(TODAY, "Sha Tin", 1, runners(5));
    if let Event::RaceResultPublished(r) = &mut result {
        r.runners.retain(|r| r.horse_no != "A12");
    }
    [
        ("profile", profile("A01", "NAME A01")),
        ("card", card),
        (
            "odds",
            odds_at(TODAY, "Sha Tin", 1, &[("A01", 3.5), ("A02", 8.0)]),
        ),
        ("scratching", scratch_at(TODAY, "Sha Tin", 1, "A12")),
        ("status", off),
        ("result", result),
    ]
    .into_iter()
    .map(|(name, e)| (name, env(e)))
    .collect()
}

/// The bytes (keys and values) each event of [`race_day`] writes into `s`, by its name.
fn written_by_race_day(mut s: MemState) -> Vec<(&'static str, usize)> {
    let mut seq = 1_000_000;
    race_day()
        .into_iter()
        .map(|(name, e)| {
            seq += 1;
            let mut tally = Tally::new(&mut s);
            let mut f = Fold::default();
            f.apply(&mut tally, seq, 0, &e).expect("apply");
            f.render(&mut tally).expect("render");
            (name, tally.bytes(|_| true))
        })
        .collect()
}

#[test]
fn a_live_event_writes_as_much_after_ten_seasons_as_after_one() {
    let after_one = written_by_race_day(history(1));
    let after_ten = written_by_race_day(history(10));
    for ((name, one), (_, ten)) in after_one.iter().zip(&after_ten) {
        // The counts in the records (a person's rides, 80 against 800) may take a digit
        // more; a record of the history (a season's row in a person's record, a race in a
        // form) is tens of bytes, and ten seasons bring hundreds of them.
        // A card's form holds a dozen counts a runner (its runs, its records at the
        // course, over the distance and on each going), and a horse's career, which a
        // result writes, some fifty: a digit more each, however long the history.
        let digits = match *name {
            "odds" | "profile" => 0,
            "result" => 96 * HORSES.len(),
            _ => 16 * HORSES.len(),
        };
        assert!(
            *ten <= one + 64 + digits,
            "{name}: {ten} bytes written after ten seasons, {one} after one"
        );
        assert!(*one > 0, "{name} writes something");
    }
}
