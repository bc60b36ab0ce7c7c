//! The season as generated: the feed contract, its horses, its meetings and results.

use super::*;

#[test]
fn every_event_passes_the_feed_contract() {
    for env in &feed().events {
        assert_eq!(env.event.validate(), Ok(()), "{}", env.to_json());
        let parsed = Envelope::decode(&env.subject(), env.to_json().as_bytes());
        assert!(parsed.is_ok(), "{parsed:?} for {}", env.to_json());
    }
}

#[test]
fn every_horse_number_is_a_valid_unique_brand() {
    let mut seen = BTreeSet::new();
    for env in &feed().events {
        if let Event::HorseProfileUpdated(p) = &env.event {
            assert!(racing_events::is_horse_no(&p.horse_no), "{}", p.horse_no);
            let (letters, digits) = p.horse_no.split_at(p.horse_no.len() - 3);
            assert!((1..=2).contains(&letters.len()), "{}", p.horse_no);
            assert!(letters.bytes().all(|b| b.is_ascii_uppercase()));
            assert!(digits.bytes().all(|b| b.is_ascii_digit()));
            assert!(seen.insert(p.horse_no.clone()), "{} twice", p.horse_no);
        }
    }
}

#[test]
fn the_example_is_the_last_race_run_and_its_winner() {
    let example = feed().example().expect("a past result");
    assert!(example.date.as_str() < TODAY, "{example:?}");
    let last = feed()
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.event {
            Event::RaceResultPublished(r) => Some(r),
            _ => None,
        })
        .expect("a result");
    assert_eq!(
        (&last.date, last.race_number),
        (&example.date, example.race_number)
    );
    let winner = last.runners.iter().find(|r| r.horse_no == example.horse_no);
    assert_eq!(winner.and_then(|r| r.position), Some(1));
    let profiled = feed().events.iter().any(
        |e| matches!(&e.event, Event::HorseProfileUpdated(p) if p.horse_no == example.horse_no),
    );
    assert!(profiled, "{example:?}");
    let seq = example.opening_seq.expect("the race's market opened");
    let opening = usize::try_from(seq - 1)
        .ok()
        .and_then(|i| feed().events.get(i));
    let opening = opening.map(odds_of).expect("an odds update");
    assert_eq!(
        (&opening.date, opening.race_number, opening.odds.len()),
        (&last.date, last.race_number, priced(last).len())
    );
}

/// The runners of a result that had a price, with it.
fn priced(result: &RaceResult) -> BTreeMap<&str, f64> {
    result
        .runners
        .iter()
        .filter_map(|r| Some((r.horse_no.as_str(), r.win_odds?)))
        .collect()
}

#[test]
fn every_past_race_trades_before_the_off_and_closes_at_its_starting_prices() {
    /// A race's board, folded from its moves as they come, and how many moves it had.
    type Board<'a> = (BTreeMap<&'a str, f64>, usize);
    let mut boards: BTreeMap<(&str, &str, i64), Board> = BTreeMap::new();
    let mut checked = 0;
    for env in &feed().events {
        match &env.event {
            Event::OddsUpdated(o) if o.date != TODAY => {
                let venue = o.venue.as_deref().expect("past odds name their venue");
                let key = (o.date.as_str(), venue, o.race_number);
                let (board, moves) = boards.entry(key).or_default();
                assert!(
                    *moves > 0 || o.odds.len() > 1,
                    "a market opens with the field: {}",
                    env.to_json()
                );
                for r in &o.odds {
                    let win = r.win_odds.expect("the demo prices every runner to win");
                    board.insert(r.horse_no.as_str(), win);
                }
                *moves += 1;
            }
            Event::RaceResultPublished(r) => {
                let key = (r.date.as_str(), r.venue.as_str(), r.race_number);
                let Some((board, moves)) = boards.get(&key) else {
                    // Only the result misfiled under the other racecourse has no market.
                    continue;
                };
                assert!(*moves >= 2, "{moves} moves before {}", env.to_json());
                assert_eq!(board, &priced(r), "{}", env.to_json());
                checked += 1;
            }
            _ => {}
        }
    }
    assert_eq!(
        checked,
        results().count(),
        "every standing result had a market"
    );
}

#[test]
fn same_seed_and_day_give_the_same_feed() {
    let json = |f: &DemoFeed| f.events.iter().map(Envelope::to_json).collect::<Vec<_>>();
    assert_eq!(json(&season(42, today())), json(feed()));
    assert_ne!(json(&season(43, today())), json(feed()));
}

#[test]
fn a_season_has_enough_meetings_and_horses() {
    let feed = feed();
    assert!(feed.meetings >= 75, "{} meetings", feed.meetings);
    assert!(feed.horses >= 1000, "{} horses", feed.horses);
    let dates: BTreeSet<&str> = cards().map(|c| c.date.as_str()).collect();
    assert_eq!(dates.len(), feed.meetings);
    let profiles = feed
        .events
        .iter()
        .filter(|e| matches!(e.event, Event::HorseProfileUpdated(_)))
        .count();
    assert_eq!(profiles, feed.horses);
}

#[test]
fn profiles_are_published_before_anything_else() {
    let first_other = feed()
        .events
        .iter()
        .position(|e| !matches!(e.event, Event::HorseProfileUpdated(_)));
    assert_eq!(first_other, Some(feed().horses));
}

#[test]
fn the_last_meeting_is_today_with_cards_odds_and_no_results() {
    let last = cards().map(|c| c.date.as_str()).max();
    assert_eq!(last, Some(TODAY));
    assert_eq!(feed().today, TODAY);
    let races = cards().filter(|c| c.date == TODAY).count();
    assert!((8..=11).contains(&races), "{races} races today");
    assert_eq!(results().filter(|r| r.date == TODAY).count(), 0);
    let odds = feed()
        .events
        .iter()
        .filter(|e| matches!(&e.event, Event::OddsUpdated(o) if o.date == TODAY))
        .count();
    assert_eq!(odds, races);
    let scratched = feed()
        .events
        .iter()
        .filter(|e| matches!(&e.event, Event::RunnerScratched(s) if s.date == TODAY))
        .count();
    assert!(
        (1..=2).contains(&scratched),
        "{scratched} scratchings today"
    );
}

#[test]
fn the_last_meeting_run_corrects_a_result_published_under_the_wrong_venue() {
    let events = &feed().events;
    let retractions: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.event, Event::RaceRetracted(_)))
        .map(|(i, _)| i)
        .collect();
    let [at] = retractions[..] else {
        panic!("{} retractions", retractions.len())
    };
    let (
        Event::RaceResultPublished(wrong),
        Event::RaceRetracted(r),
        Event::RaceResultPublished(right),
    ) = (
        &events[at - 1].event,
        &events[at].event,
        &events[at + 1].event,
    )
    else {
        panic!("a misfiled result, its retraction and the right result in a row")
    };
    assert_eq!(
        (&wrong.date, &wrong.venue, wrong.race_number),
        (&r.date, &r.venue, r.race_number)
    );
    assert_eq!((&right.date, right.race_number), (&r.date, r.race_number));
    assert_ne!(right.venue, wrong.venue);
    assert_eq!(right.runners, wrong.runners);
    let card = cards()
        .find(|c| c.date == right.date && c.race_number == right.race_number)
        .expect("declared");
    assert_eq!(card.venue, right.venue);
    let last_run = results().map(|r| r.date.as_str()).max();
    assert_eq!(last_run, Some(r.date.as_str()));
    // The slip's ids are its own: the season around it is unchanged by it.
    let without: Vec<&Envelope> = events
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at && *i != at - 1)
        .map(|(_, e)| e)
        .collect();
    let ids: BTreeSet<_> = without.iter().map(|e| e.event_id).collect();
    assert_eq!(ids.len(), without.len());
    assert!(!ids.contains(&events[at].event_id));
}

#[test]
fn odds_and_scratchings_name_the_venue_of_their_race() {
    let venue_of: BTreeMap<(&str, i64), &str> = cards()
        .map(|c| ((c.date.as_str(), c.race_number), c.venue.as_str()))
        .collect();
    let mut sim = simulator(7);
    let ticked: Vec<Envelope> = (0..sim.races()).filter_map(|r| sim.tick(r, NOW)).collect();
    let mut named = 0;
    for env in feed().events.iter().chain(&ticked) {
        let (date, race, venue) = match &env.event {
            Event::OddsUpdated(o) => (&o.date, o.race_number, &o.venue),
            Event::RunnerScratched(s) => (&s.date, s.race_number, &s.venue),
            _ => continue,
        };
        assert_eq!(
            venue.as_deref(),
            venue_of.get(&(date.as_str(), race)).copied(),
            "{}",
            env.to_json()
        );
        named += 1;
    }
    assert!(named > ticked.len(), "{named} odds and scratchings");
}

#[test]
fn every_past_race_has_a_result() {
    let declared: BTreeSet<(&str, i64)> = cards()
        .filter(|c| c.date != TODAY)
        .map(|c| (c.date.as_str(), c.race_number))
        .collect();
    let run: BTreeSet<(&str, i64)> = results()
        .map(|r| (r.date.as_str(), r.race_number))
        .collect();
    assert_eq!(declared, run);
}

#[test]
fn the_season_has_dead_heats_non_finishers_and_withdrawals() {
    let runners = || results().flat_map(|r| &r.runners);
    assert!(runners().any(|r| r.dead_heat));
    assert!(runners().any(|r| {
        r.position.is_none() && !withdrawn(r) && r.win_odds.is_some() && r.finish_time.is_none()
    }));
    assert!(runners().any(|r| withdrawn(r) && r.win_odds.is_none() && r.finish_time.is_none()));
}

#[test]
fn positions_follow_finish_times_and_dead_heats_skip_a_place() {
    for race in results() {
        let placed: Vec<&ResultRunner> = race
            .runners
            .iter()
            .filter(|r| r.position.is_some())
            .collect();
        for (i, pair) in placed.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            if b.dead_heat && b.position == a.position {
                assert_eq!(a.finish_time, b.finish_time);
            } else {
                assert_eq!(b.position, Some(i as i64 + 2), "{race:?}");
                assert!(a.finish_time < b.finish_time, "{race:?}");
            }
        }
    }
}

#[test]
fn a_horse_runs_at_most_once_a_meeting() {
    let mut by_day: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for card in cards() {
        let day = by_day.entry(card.date.as_str()).or_default();
        for runner in &card.runners {
            assert!(
                day.insert(&runner.horse_no),
                "{} twice on {}",
                runner.horse_no,
                card.date
            );
        }
    }
}

#[test]
fn a_scratched_runner_is_withdrawn_in_its_result() {
    for env in &feed().events {
        let Event::RunnerScratched(s) = &env.event else {
            continue;
        };
        let Some(result) = results().find(|r| r.date == s.date && r.race_number == s.race_number)
        else {
            assert_eq!(s.date, TODAY);
            continue;
        };
        let runner = result.runners.iter().find(|r| r.horse_no == s.horse_no);
        assert_eq!(runner.and_then(|r| r.status.as_deref()), Some("WV"));
    }
}

#[test]
fn profiles_count_the_starts_wins_seconds_thirds_and_places_of_the_results() {
    // Places are the first three, wins included, as a place bet pays.
    let mut counted: BTreeMap<&str, (i64, i64, i64, i64, i64)> = BTreeMap::new();
    for runner in results().flat_map(|r| &r.runners).filter(|r| !withdrawn(r)) {
        let tally = counted.entry(runner.horse_no.as_str()).or_default();
        tally.0 += 1;
        tally.1 += i64::from(runner.position == Some(1));
        tally.2 += i64::from(runner.position == Some(2));
        tally.3 += i64::from(runner.position == Some(3));
        tally.4 += i64::from(matches!(runner.position, Some(1..=3)));
    }
    for env in &feed().events {
        if let Event::HorseProfileUpdated(p) = &env.event {
            let tally = counted
                .get(p.horse_no.as_str())
                .copied()
                .unwrap_or_default();
            let given = (
                p.starts,
                p.wins,
                p.seconds.unwrap_or(-1),
                p.thirds.unwrap_or(-1),
                p.places,
            );
            assert_eq!(given, tally, "{}", p.horse_no);
            if p.starts == 0 {
                assert_eq!(p.total_stakes, 0, "{}", p.horse_no);
            }
            if p.wins > 0 {
                assert!(p.total_stakes > 0, "{}", p.horse_no);
            }
        }
    }
}

#[test]
fn every_result_carries_a_record_that_agrees_with_the_race() {
    let fields: BTreeMap<(&str, &str, i64), usize> = cards()
        .map(|c| {
            (
                (c.date.as_str(), c.venue.as_str(), c.race_number),
                c.runners.len(),
            )
        })
        .collect();
    let mut checked = 0;
    for r in results() {
        let field = fields[&(r.date.as_str(), r.venue.as_str(), r.race_number)];
        assert_record(r, field);
        checked += 1;
    }
    assert!(checked > 500, "{checked} results");
    // Every margin the record writes turns up over a season.
    let written: BTreeSet<String> = results()
        .flat_map(|r| r.runners.iter().filter_map(|x| x.lbw.clone()))
        .collect();
    for code in ["-", "SH", "HD", "N", "1/2", "3/4", "1-1/4", "---"] {
        assert!(written.contains(code), "no {code} in {written:?}");
    }
}

#[test]
fn profiles_carry_pedigree_import_type_ratings_and_season_stakes() {
    let mut imports = BTreeSet::new();
    for e in &feed().events {
        let Event::HorseProfileUpdated(p) = &e.event else {
            continue;
        };
        for name in [&p.sire, &p.dam, &p.dam_sire] {
            assert!(name.as_deref().is_some_and(|n| !n.is_empty()), "{p:?}");
        }
        imports.insert(p.import_type.clone().expect("import type"));
        assert!(p.current_rating.is_some_and(|r| (0..=200).contains(&r)));
        assert!(p
            .season_start_rating
            .is_some_and(|r| (0..=200).contains(&r)));
        assert!(
            p.season_stakes.is_some_and(|s| s <= p.total_stakes),
            "{p:?}"
        );
    }
    assert_eq!(
        imports,
        ["ISG", "PP", "PPG"].map(String::from).into_iter().collect()
    );
}

#[test]
fn a_past_race_is_traded_in_the_half_hour_before_its_result() {
    let at = |e: &Envelope| e.occurred_at.parse::<jiff::Timestamp>().expect("a time");
    let mut first: BTreeMap<(&str, i64), jiff::Timestamp> = BTreeMap::new();
    let mut checked = 0;
    for env in &feed().events {
        match &env.event {
            Event::OddsUpdated(o) if o.date != TODAY => {
                first
                    .entry((o.date.as_str(), o.race_number))
                    .or_insert(at(env));
            }
            Event::RaceResultPublished(r) => {
                let Some(opened) = first.get(&(r.date.as_str(), r.race_number)) else {
                    continue;
                };
                let traded = at(env).duration_since(*opened);
                // The result comes 3 minutes (and some seconds) after the off.
                let most = jiff::SignedDuration::from_mins(34);
                assert!(
                    traded.is_positive() && traded <= most,
                    "{traded:?} from the first price to {}",
                    env.to_json()
                );
                checked += 1;
            }
            _ => {}
        }
    }
    assert!(checked > 500, "{checked} races");
}

/// The first year of Hong Kong's season `date` (`YYYY-MM-DD`) races in: seasons start in
/// September.
fn season_of(date: &str) -> i32 {
    let year: i32 = date[..4].parse().expect("a year");
    let month: u32 = date[5..7].parse().expect("a month");
    if month >= 9 {
        year
    } else {
        year - 1
    }
}

#[test]
fn profiles_carry_the_career_and_the_season_stakes_of_the_results() {
    // Each placed runner's prize money, counted from the results as published: its share
    // of its race's purse by position, a dead heat sharing two places' shares.
    let this_season = season_of(TODAY);
    let mut career: BTreeMap<&str, i64> = BTreeMap::new();
    let mut season: BTreeMap<&str, i64> = BTreeMap::new();
    for r in results() {
        let class = r.class.as_deref().expect("a class");
        let purse = crate::races::Kind::parse(class)
            .expect("a demo class")
            .prize();
        for runner in &r.runners {
            let Some(position) = runner.position else {
                continue;
            };
            let won = crate::running::prize_money(purse, position, runner.dead_heat);
            *career.entry(runner.horse_no.as_str()).or_default() += won;
            if season_of(&r.date) == this_season {
                *season.entry(runner.horse_no.as_str()).or_default() += won;
            }
        }
    }
    let (mut checked, mut earlier) = (0, 0);
    for e in &feed().events {
        let Event::HorseProfileUpdated(p) = &e.event else {
            continue;
        };
        let horse = p.horse_no.as_str();
        let total = career.get(horse).copied().unwrap_or_default();
        let this = season.get(horse).copied().unwrap_or_default();
        assert_eq!(
            (p.total_stakes, p.season_stakes),
            (total, Some(this)),
            "{horse}: career and season stakes"
        );
        checked += 1;
        earlier += usize::from(total > this);
    }
    assert_eq!(checked, feed().horses);
    assert!(
        earlier > 100,
        "{earlier} horses won prize money before this season"
    );
}

#[test]
fn a_horse_unraced_this_season_is_rated_as_it_began_the_season() {
    // Ratings move only with a horse's runs: one that has not run since the season began
    // is rated as it was then.
    let this_season = season_of(TODAY);
    let ran: BTreeSet<&str> = results()
        .filter(|r| season_of(&r.date) == this_season)
        .flat_map(|r| &r.runners)
        .filter(|r| !withdrawn(r))
        .map(|r| r.horse_no.as_str())
        .collect();
    let mut unraced = 0;
    for e in &feed().events {
        let Event::HorseProfileUpdated(p) = &e.event else {
            continue;
        };
        if !ran.contains(p.horse_no.as_str()) {
            assert_eq!(p.season_start_rating, p.current_rating, "{}", p.horse_no);
            unraced += 1;
        }
    }
    assert!(unraced > 100, "{unraced} horses unraced this season");
}
