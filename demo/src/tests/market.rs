//! The market as the demo makes it: every board, from a race's first prices to its off,
//! has a win book in Hong Kong's band and place prices that go with its win prices, live
//! (today's races traded as the live demo trades them) and recorded (the season's races).

use crate::tote::{self, place_prices, places_paid};

use super::*;

/// Seconds of trading of each race: the live demo's default.
const RACE_SECS: u64 = 120;

/// The band a race's win book keeps: Hong Kong's win pool pays back 82.5%, a book of about
/// 121%, give or take what the board's tenths and a move's few percent make of it.
const WIN_BOOK: std::ops::RangeInclusive<f64> = 115.0..=130.0;

/// A race's board as the feed gives it: each runner's last win and place prices, a
/// scratched runner left out.
#[derive(Debug, Default)]
struct Board(BTreeMap<String, (f64, f64)>);

/// What the boards of a day came to.
#[derive(Debug, Default)]
struct Seen {
    boards: usize,
    lowest: f64,
    highest: f64,
}

impl Board {
    /// Takes a move's prices, and checks the board it leaves: see the module's rules.
    fn take(&mut self, o: &OddsUpdated, what: &str, seen: &mut Seen) {
        for r in &o.odds {
            let win = r.win_odds.expect("the demo prices every runner to win");
            let place = r.place_odds.expect("and to place");
            self.0.insert(r.horse_no.clone(), (win, place));
        }
        let win: Vec<f64> = self.0.values().map(|&(w, _)| w).collect();
        let book = tote::book(win.iter().copied());
        assert!(
            WIN_BOOK.contains(&book),
            "{what}: a win book of {book:.2}% after {o:?}: {self:?}"
        );
        seen.boards += 1;
        seen.lowest = if seen.boards == 1 {
            book
        } else {
            seen.lowest.min(book)
        };
        seen.highest = seen.highest.max(book);
        // The place prices the board's win prices give: a runner the move listed shows
        // them, any other is at most a few percent (or under a tenth) away.
        for ((horse, &(win, place)), fair) in self.0.iter().zip(place_prices(&win)) {
            assert!(
                (1.0..=win).contains(&place),
                "{what}: {horse} at {win} to win, {place} to place"
            );
            let listed = o.odds.iter().any(|r| &r.horse_no == horse);
            let near = (place - fair).abs() < 0.1 - 1e-9 || (place / fair - 1.0).abs() <= 0.03;
            assert!(
                if listed { place == fair } else { near },
                "{what}: {horse} at {win} to win shows {place} to place where the board gives {fair}: {self:?}"
            );
        }
        // The place book: the places paid, over the place pool's payout, less what the
        // floor of evens keeps from the shortest.
        let places = places_paid(win.len()) as f64;
        let place_book = tote::book(self.0.values().map(|&(_, p)| p));
        assert!(
            (places * 100.0..=places * 100.0 / tote::PAYOUT_RATE + 10.0).contains(&place_book),
            "{what}: a place book of {place_book:.2}% for {places} places: {self:?}"
        );
    }
}

/// Today's race day as the live demo runs it with `seed`, from the feed's opening prices
/// to each race's off, every board checked; what the boards came to.
fn live_day(seed: u64) -> Seen {
    let events = race_day(seed, RACE_SECS);
    let mut boards: BTreeMap<i64, Board> = BTreeMap::new();
    let mut seen = Seen::default();
    for e in &events {
        match &e.event {
            Event::RunnerScratched(s) => {
                boards
                    .entry(s.race_number)
                    .or_default()
                    .0
                    .remove(&s.horse_no);
            }
            Event::OddsUpdated(o) => {
                let what = format!("seed {seed}, race {}", o.race_number);
                let board = boards.entry(o.race_number).or_default();
                board.take(o, &what, &mut seen);
            }
            _ => {}
        }
    }
    seen
}

#[test]
fn every_board_of_a_live_demo_day_keeps_the_book_and_place_prices_that_go_with_it() {
    for seed in 1..=4 {
        let seen = live_day(seed);
        let races = simulator(seed).races();
        assert!(
            seen.boards > races * RACE_SECS as usize,
            "seed {seed}: {seen:?}"
        );
    }
}

#[test]
fn every_board_of_the_season_s_races_keeps_the_book_and_place_prices_that_go_with_it() {
    let mut boards: BTreeMap<(&str, &str, i64), Board> = BTreeMap::new();
    let mut seen = Seen::default();
    for e in &feed().events {
        if let Event::OddsUpdated(o) = &e.event {
            if o.date == TODAY {
                continue;
            }
            let venue = o.venue.as_deref().unwrap_or_default();
            let what = format!("{} {venue} race {}", o.date, o.race_number);
            let board = boards.entry((&o.date, venue, o.race_number)).or_default();
            board.take(o, &what, &mut seen);
        }
    }
    assert!(seen.boards > 1_500, "{seen:?}");
}

#[test]
fn a_late_scratching_prices_the_field_left_again_as_betting_reopens() {
    let mut repriced = 0;
    for seed in 1..=6 {
        let mut sim = simulator(seed);
        for race in 0..sim.races() {
            let day: Vec<Envelope> = (0..RACE_SECS)
                .flat_map(|second| sim.trade(race, second, RACE_SECS, NOW))
                .collect();
            let Some(out) = day
                .iter()
                .position(|e| matches!(e.event, Event::RunnerScratched(_)))
            else {
                continue;
            };
            let open = matches!(&day[out + 1].event,
                Event::RaceStatusChanged(s) if s.status() == Some(racing_events::RaceStatus::Open));
            assert!(open, "{:?}", &day[out..out + 2]);
            let Event::OddsUpdated(o) = &day[out + 2].event else {
                panic!("the field priced again at once: {:?}", &day[out..out + 3]);
            };
            let Event::RunnerScratched(gone) = &day[out].event else {
                unreachable!("found as one")
            };
            assert!(o.odds.iter().all(|r| r.horse_no != gone.horse_no), "{o:?}");
            repriced += 1;
        }
    }
    assert!(repriced > 0, "no late scratching in six days");
}

#[test]
fn the_tote_s_chances_add_up_within_the_board_and_place_chances_to_the_places_paid() {
    // A heavy favourite and two no-hopers: held at the board's limits, the rest sharing
    // what is left.
    let weights = [6.0, 1.0, 0.5, 0.0, -5.0, -6.0, -0.5, 0.2];
    let chances = tote::chances(&weights);
    assert!(
        (chances.iter().sum::<f64>() - 1.0).abs() < 1e-9,
        "{chances:?}"
    );
    let win = tote::win_prices(&chances);
    assert_eq!(
        (win[0], win[4], win[5]),
        (tote::MIN_WIN, tote::MAX_WIN, tote::MAX_WIN),
        "{win:?}"
    );
    assert!(
        WIN_BOOK.contains(&tote::book(win.iter().copied())),
        "{win:?}"
    );
    // Place prices never above the win price nor below evens; shorter to win, shorter to
    // place; the favourite at evens.
    let place = place_prices(&win);
    assert_eq!(place[0], 1.0, "{place:?}");
    let mut by_win: Vec<(f64, f64)> = win.iter().copied().zip(place.iter().copied()).collect();
    by_win.sort_by(|a, b| a.0.total_cmp(&b.0));
    for pair in by_win.windows(2) {
        assert!(pair[0].1 <= pair[1].1, "{by_win:?}");
    }
    assert_eq!((places_paid(7), places_paid(6), places_paid(3)), (3, 2, 1));
}
