//! The live simulation of today's meeting: its odds moves and its results.

use crate::races::{Kind, TURF_GOING};

use super::*;

#[test]
fn the_simulator_runs_todays_races_in_race_number_order() {
    let mut sim = simulator(1);
    let races = cards().filter(|c| c.date == TODAY).count();
    assert_eq!(sim.races(), races);
    for race in 0..sim.races() {
        let tick = sim.tick(race, NOW).expect("today has races");
        assert_eq!(odds_of(&tick).race_number, race as i64 + 1);
        assert_eq!(odds_of(&tick).date, TODAY);
        assert_eq!(tick.occurred_at, NOW);
    }
}

#[test]
fn simulated_odds_and_results_pass_the_feed_contract() {
    let mut sim = simulator(1);
    let mut ids = BTreeSet::new();
    for race in 0..sim.races() {
        for _ in 0..20 {
            let tick = sim.tick(race, NOW).expect("today has races");
            assert_contract(&tick);
            assert!(ids.insert(tick.event_id));
        }
        let result = sim.result(race, NOW).expect("today has races");
        assert_contract(&result);
        assert!(ids.insert(result.event_id));
    }
}

#[test]
fn the_same_seed_replays_the_same_afternoon() {
    let afternoon = |seed| {
        let mut sim = simulator(seed);
        let mut json = Vec::new();
        for race in 0..sim.races() {
            for _ in 0..5 {
                json.extend(sim.tick(race, NOW).map(|e| e.to_json()));
            }
            json.extend(sim.result(race, NOW).map(|e| e.to_json()));
        }
        json
    };
    assert_eq!(afternoon(1), afternoon(1));
    assert_ne!(afternoon(1), afternoon(2));
}

#[test]
fn ticks_move_prices_on_the_board_a_few_percent_at_a_time() {
    let opening = opening_odds();
    let mut sim = simulator(3);
    let mut sizes = BTreeMap::new();
    for race in 0..sim.races() {
        let number = race as i64 + 1;
        let mut board: BTreeMap<&str, (f64, Option<f64>)> = opening
            .iter()
            .filter(|((n, _), _)| *n == number)
            .map(|(&(_, horse), &odds)| (horse, (odds, None)))
            .collect();
        for _ in 0..500 {
            let tick = sim.tick(race, NOW).expect("today has races");
            let odds = &odds_of(&tick).odds;
            assert!(!odds.is_empty(), "{}", tick.to_json());
            *sizes.entry(odds.len()).or_insert(0) += 1;
            let listed: BTreeSet<&str> = odds.iter().map(|r| r.horse_no.as_str()).collect();
            assert_eq!(listed.len(), odds.len(), "{}", tick.to_json());
            for r in odds {
                let price = r.win_odds.expect("the demo prices every runner to win");
                assert!((1.1..=99.0).contains(&price), "{price}");
                assert_eq!((price * 10.0).round() / 10.0, price);
                let last = board.get_mut(r.horse_no.as_str());
                let last = last.expect("only a priced starter moves");
                assert_ne!(
                    *last,
                    (price, r.place_odds),
                    "{} listed unchanged",
                    r.horse_no
                );
                // A few percent a move, or the one-tenth step a small price needs; at most
                // about a quarter where a heavy favourite moves a tenth and the rest of
                // the pool's shares move with it.
                let ratio = price / last.0;
                assert!(
                    (0.7..1.43).contains(&ratio) || (price - last.0).abs() < 0.15,
                    "{} from {} to {price}",
                    r.horse_no,
                    last.0
                );
                *last = (price, r.place_odds);
            }
        }
    }
    // Most moves list the one to four runners the money moved on.
    let few: usize = (1..=4).filter_map(|n| sizes.get(&n)).sum();
    let all: usize = sizes.values().sum();
    assert!(few * 100 >= all * 85, "{sizes:?}");
}

#[test]
fn a_result_places_every_starter_once_and_withdraws_the_scratched() {
    let scratched = scratched_today();
    let mut sim = simulator(4);
    for race in 0..sim.races() {
        for _ in 0..10 {
            sim.tick(race, NOW);
        }
        let env = sim.result(race, NOW).expect("today has races");
        let result = result_of(&env);
        let card = today_card(result.race_number);
        assert_eq!(result.venue, card.venue);
        assert_eq!(result.race_name, card.race_name);
        assert_eq!(result.distance, card.distance);
        assert!(
            TURF_GOING.iter().any(|&(g, _)| g == result.going)
                || ["GOOD", "WET FAST", "WET SLOW"].contains(&result.going.as_str())
        );
        let listed: Vec<&str> = result.runners.iter().map(|r| r.horse_no.as_str()).collect();
        let declared: BTreeSet<&str> = card.runners.iter().map(|r| r.horse_no.as_str()).collect();
        assert_eq!(listed.iter().copied().collect::<BTreeSet<_>>(), declared);
        assert_eq!(listed.len(), declared.len());
        let (out, placed): (Vec<&ResultRunner>, Vec<&ResultRunner>) = result
            .runners
            .iter()
            .partition(|r| scratched.contains(&(result.race_number, r.horse_no.as_str())));
        let positions: Vec<Option<i64>> = placed.iter().map(|r| r.position).collect();
        let expected: Vec<Option<i64>> = (1..=placed.len() as i64).map(Some).collect();
        assert_eq!(positions, expected);
        for pair in placed.windows(2) {
            assert!(
                pair[0].finish_time < pair[1].finish_time,
                "{}",
                env.to_json()
            );
        }
        assert!(placed
            .iter()
            .all(|r| r.status.is_none() && r.win_odds.is_some()));
        for r in out {
            assert_eq!(r.status.as_deref(), Some("WV"));
            assert_eq!(
                (r.position, &r.finish_time, r.win_odds),
                (None, &None, None)
            );
        }
    }
    assert!(!scratched.is_empty());
}

#[test]
fn an_unmoved_race_finishes_at_its_opening_prices() {
    let opening = opening_odds();
    let mut sim = simulator(5);
    let env = sim.result(0, NOW).expect("today has races");
    let result = result_of(&env);
    for r in result.runners.iter().filter(|r| r.status.is_none()) {
        let key = (result.race_number, r.horse_no.as_str());
        assert_eq!(r.win_odds, opening.get(&key).copied(), "{}", r.horse_no);
    }
}

#[test]
fn a_winning_time_suits_the_trip() {
    let mut sim = simulator(6);
    for race in 0..sim.races() {
        let env = sim.result(race, NOW).expect("today has races");
        let result = result_of(&env);
        let time = result.runners[0].finish_time.as_deref().unwrap_or_default();
        let (minutes, seconds) = time.split_once(':').unwrap_or_default();
        let seconds = minutes.parse::<f64>().unwrap_or_default() * 60.0
            + seconds.parse::<f64>().unwrap_or_default();
        // HK's fastest and slowest pars run from about 56 to 63 seconds a kilometre.
        let per_km = seconds / (result.distance as f64 / 1000.0);
        assert!(
            (54.0..66.0).contains(&per_km),
            "{time} for {}",
            result.distance
        );
    }
}

#[test]
fn short_prices_win_in_proportion_to_their_chance() {
    let mut sim = simulator(7);
    let runs = 2_000;
    let mut wins: BTreeMap<String, usize> = BTreeMap::new();
    let mut chance: BTreeMap<String, f64> = BTreeMap::new();
    for _ in 0..runs {
        let env = sim.result(0, NOW).expect("today has races");
        let result = result_of(&env);
        for r in &result.runners {
            if let Some(odds) = r.win_odds {
                *chance.entry(r.horse_no.clone()).or_default() = 1.0 / odds;
            }
        }
        *wins.entry(result.runners[0].horse_no.clone()).or_default() += 1;
    }
    let book: f64 = chance.values().sum();
    for (horse, c) in &chance {
        let expected = c / book;
        let seen = wins.get(horse).copied().unwrap_or(0) as f64 / runs as f64;
        assert!(
            (seen - expected).abs() < 0.04,
            "{horse}: {seen} won, {expected} expected"
        );
    }
}

#[test]
fn a_race_index_past_the_end_means_the_last_race() {
    let mut sim = simulator(8);
    let last = sim.races() as i64;
    let tick = sim.tick(99, NOW).expect("today has races");
    assert_eq!(odds_of(&tick).race_number, last);
    let result = sim.result(usize::MAX, NOW).expect("today has races");
    assert_eq!(result_of(&result).race_number, last);
}

#[test]
fn a_day_without_races_simulates_nothing() {
    let empty = DemoFeed {
        events: Vec::new(),
        today: TODAY.to_owned(),
        meetings: 0,
        horses: 0,
    };
    let mut sim = Simulator::new(&empty, 1);
    assert_eq!(sim.races(), 0);
    assert_eq!(sim.tick(0, NOW), None);
    assert_eq!(sim.result(0, NOW), None);
    // A feed whose cards are all for other days has no races today either.
    let past = DemoFeed {
        today: "2026-11-22".to_owned(),
        ..feed().clone()
    };
    assert_eq!(Simulator::new(&past, 1).races(), 0);
}

#[test]
fn a_card_class_reads_back_as_its_kind() {
    for kind in [Kind::Handicap(4), Kind::Group(1), Kind::Griffin] {
        assert_eq!(Kind::parse(&kind.class()), Some(kind));
    }
    assert_eq!(Kind::parse("Restricted Race"), None);
}

#[test]
fn a_live_result_carries_a_record_that_agrees_with_the_race() {
    let mut sim = simulator(9);
    for race in 0..sim.races() {
        let env = sim.result(race, NOW).expect("today has races");
        let result = result_of(&env);
        let card = today_card(result.race_number);
        assert_eq!(result.class.as_deref(), Some(card.class.as_str()));
        assert_record(result, card.runners.len());
        for x in &result.runners {
            let declared = card.runners.iter().find(|c| c.horse_no == x.horse_no);
            assert_eq!(
                declared.map(|c| (c.draw, c.weight)),
                x.draw.zip(x.actual_weight)
            );
        }
    }
}
