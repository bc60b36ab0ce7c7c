//! The market and the form, analysed, end to end: every figure of an odds document's
//! market, of a card's form and of the records by condition is compared with a count made
//! here, directly from the events the test published, through a real JetStream stream, the
//! projector and HTTP; and each as of a point of the log.

use std::collections::BTreeMap;

use racing_events::samples::{card, odds_at, result, runner};
use racing_events::{Envelope, Event, RaceResult, ResultRunner};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{service_with, App};

const ST: &str = "Sha Tin";
const HV: &str = "Happy Valley";
const JOCKEYS: [&str; 4] = ["Z Purton", "H Bowman", "J McDonald", "K Teetan"];
const TRAINERS: [&str; 3] = ["J Size", "C S Shum", "F C Lor"];
const GOINGS: [&str; 3] = ["GOOD", "GOOD TO FIRM", "YIELDING"];
const DISTANCES: [i64; 3] = [1000, 1200, 1650];

/// `YYYY-MM-DD` of `days` after 2026-08-20 (the season before the one that starts on
/// 2026-09-01, so that the figures cross a season).
fn date(days: i64) -> String {
    jiff::civil::date(2026, 8, 20)
        .checked_add(jiff::Span::new().days(days))
        .expect("date")
        .to_string()
}

fn env_at(event: Event, at: &str) -> Envelope {
    Envelope::new(event, at.to_owned())
}

async fn get_ok(app: &App, path: &str) -> Value {
    let (status, body) = app.get(path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

fn pct(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (f64::from(part) * 1000.0 / f64::from(whole)).round() / 10.0
    }
}

// ---- The market. ----

/// One price move as published: minutes after the market opened, and win prices.
type Move = (i64, Vec<(&'static str, f64)>);

/// The market after `moves`, counted here: `(runners, book, favourites, steamers,
/// drifters)` as the odds document serves them.
fn market_of(moves: &[Move]) -> Value {
    let clock = moves.iter().map(|(at, _)| *at).max().expect("a move");
    let price_at = |horse: &str, minute: Option<i64>| -> Option<f64> {
        moves
            .iter()
            .filter(|(at, _)| minute.is_none_or(|m| *at <= m))
            .flat_map(|(_, prices)| prices.iter())
            .filter(|(h, _)| *h == horse)
            .map(|(_, p)| *p)
            .next_back()
    };
    let mut horses: Vec<&str> = moves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(h, _)| *h))
        .collect();
    horses.sort_unstable();
    horses.dedup();
    let mv = |then: f64, now: f64| round((now / then - 1.0) * 100.0, 2);
    let mut runners = Vec::new();
    let mut long_moves = Vec::new();
    for h in &horses {
        let now = price_at(h, None).expect("priced");
        let first = moves
            .iter()
            .flat_map(|(_, p)| p.iter())
            .find(|(x, _)| x == h)
            .map(|(_, p)| *p)
            .expect("first");
        let mut r = json!({"horse_no": h, "win_odds": now, "win_prob": round(1.0 / now, 4),
            "first_win_odds": first, "win_move_pct": mv(first, now)});
        if let Some(then) = price_at(h, Some(clock - 15)) {
            r["win_move_15m_pct"] = json!(mv(then, now));
            long_moves.push((*h, mv(then, now)));
        }
        if let Some(then) = price_at(h, Some(clock - 5)) {
            r["win_move_5m_pct"] = json!(mv(then, now));
        }
        runners.push(r);
    }
    let prices: Vec<f64> = horses.iter().filter_map(|h| price_at(h, None)).collect();
    let shortest = prices.iter().copied().fold(f64::MAX, f64::min);
    let movers = |shorter: bool| -> Vec<&str> {
        let mut m: Vec<(&str, f64)> = long_moves
            .iter()
            .copied()
            .filter(|(_, p)| if shorter { *p < 0.0 } else { *p > 0.0 })
            .collect();
        m.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(b.0)));
        m.into_iter().take(3).map(|(h, _)| h).collect()
    };
    let opened = jiff::Timestamp::from_second(1_795_262_400).expect("moment");
    let clock_at = opened
        .checked_add(jiff::SignedDuration::from_mins(clock))
        .expect("clock");
    json!({
        "runners": runners,
        "market": {
            "clock": racing_events::Instant::text(clock_at),
            "win_book_pct": round(prices.iter().map(|p| 1.0 / p).sum::<f64>() * 100.0, 2),
            "favourites": horses.iter().filter(|h| price_at(h, None) == Some(shortest)).collect::<Vec<_>>(),
            "steamers": movers(true),
            "drifters": movers(false),
        }
    })
}

/// The market's part of an odds document: its runners and its market.
fn served_market(doc: &Value) -> Value {
    json!({"runners": doc["odds"], "market": doc["market"]})
}

#[tokio::test]
async fn the_market_is_counted_from_the_moves_and_stands_as_of_any_point() {
    let day = "2026-11-21";
    let moves: Vec<Move> = vec![
        (0, vec![("A1", 3.0), ("B2", 4.0), ("C3", 6.0), ("D4", 12.0)]),
        (3, vec![("A1", 2.8), ("D4", 14.0)]),
        (7, vec![("C3", 5.0)]),
        (12, vec![("B2", 4.5), ("A1", 2.6)]),
        (20, vec![("D4", 9.0), ("C3", 5.5)]),
        (24, vec![("A1", 2.6), ("B2", 2.6)]),
    ];
    let opened = 1_795_262_400;
    let mut events = vec![env_at(
        card(day, ST, 1, &["A1", "B2", "C3", "D4"]),
        "2026-11-21T01:00:00Z",
    )];
    for (minute, prices) in &moves {
        let at = jiff::Timestamp::from_second(opened + minute * 60).expect("moment");
        events.push(env_at(odds_at(day, ST, 1, prices), &at.to_string()));
    }
    let (_nats, app, _dir) = service_with(&events).await;

    let doc = get_ok(&app, &format!("/api/v1/odds/{day}/1?venue=Sha%20Tin")).await;
    assert_eq!(served_market(&doc), market_of(&moves), "{doc}");
    // Joint favourites: A1 and B2 both at 2.6.
    assert_eq!(doc["market"]["favourites"], json!(["A1", "B2"]));

    // Each move of the history carries the book after it.
    let history = get_ok(
        &app,
        &format!("/api/v1/odds/{day}/1/history?venue=Sha%20Tin"),
    )
    .await;
    let served = history["moves"].as_array().expect("moves");
    assert_eq!(served.len(), moves.len());
    for (i, m) in served.iter().enumerate() {
        let then = market_of(&moves[..=i]);
        let book = json!({
            "win_book_pct": then["market"]["win_book_pct"],
            "favourites": then["market"]["favourites"],
        });
        assert_eq!(m["market"], book, "move {i}");
    }

    // As of each move's position: the market as it stood then.
    for (i, m) in served.iter().enumerate() {
        let seq = m["seq"].as_u64().expect("seq");
        let then = get_ok(
            &app,
            &format!("/api/v1/odds/{day}/1?venue=Sha%20Tin&as_of={seq}"),
        )
        .await;
        assert_eq!(served_market(&then), market_of(&moves[..=i]), "as of {seq}");
    }
}

// ---- The form and the records. ----

/// A history of `meetings` meetings four days apart from [`date`]`(0)`, two races each of
/// eight of twelve horses, drawn from `seed`: positions, a runner pulled up or withdrawn
/// now and then, jockeys, trainers, venues, distances, goings, classes, draws, odds.
fn history(seed: u64, meetings: i64) -> Vec<RaceResult> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for m in 0..meetings {
        let venue = if m % 3 == 2 { HV } else { ST };
        for race in 1..=2 {
            let mut horses: Vec<usize> = (1..=12).collect();
            for i in (1..horses.len()).rev() {
                horses.swap(i, rng.random_range(0..=i));
            }
            let mut runners: Vec<ResultRunner> = Vec::new();
            for (place, h) in horses.iter().take(8).enumerate() {
                let mut r = runner(Some(place as i64 + 1), &format!("H{h:02}"));
                r.jockey = JOCKEYS[rng.random_range(0..JOCKEYS.len())].into();
                r.trainer = TRAINERS[(h + m as usize) % TRAINERS.len()].into();
                r.draw = Some(rng.random_range(1..=8));
                r.win_odds = Some(f64::from(rng.random_range(15..=150)) / 10.0);
                match rng.random_range(0..20) {
                    0 => {
                        r.position = None;
                        r.status = Some("PU".into());
                        r.finish_time = None;
                    }
                    1 => {
                        r.position = None;
                        r.status = Some("WV".into());
                        r.finish_time = None;
                        r.win_odds = None;
                    }
                    _ => {}
                }
                runners.push(r);
            }
            // Positions after those with none closed up.
            let mut next = 1;
            for r in &mut runners {
                if r.position.is_some() {
                    r.position = Some(next);
                    next += 1;
                }
            }
            let Event::RaceResultPublished(mut result) = result(&date(m * 4), venue, race, runners)
            else {
                unreachable!("a result")
            };
            result.distance = DISTANCES[rng.random_range(0..DISTANCES.len())];
            result.going = GOINGS[rng.random_range(0..GOINGS.len())].into();
            result.class =
                [Some("Class 3"), Some("Class 4"), None][rng.random_range(0..3)].map(Into::into);
            out.push(result);
        }
    }
    out
}

fn took_part(r: &ResultRunner) -> bool {
    !matches!(
        r.status.as_deref(),
        Some("WV" | "WV-A" | "WX" | "WX-A" | "WXNR" | "TNP")
    )
}

/// The card of one race on `day` at `venue` over `distance` for `horses`, each with a
/// jockey and a trainer.
fn card_of(day: &str, venue: &str, distance: i64, horses: &[&str]) -> Event {
    let Event::RaceCardDeclared(mut c) = card(day, venue, 1, horses) else {
        unreachable!("a card")
    };
    c.distance = distance;
    for (i, r) in c.runners.iter_mut().enumerate() {
        r.jockey = JOCKEYS[i % JOCKEYS.len()].into();
        r.trainer = TRAINERS[i % TRAINERS.len()].into();
    }
    Event::RaceCardDeclared(c)
}

/// The Hong Kong season of a date.
fn season(d: &str) -> i32 {
    let (year, month): (i32, u32) = (
        d[..4].parse().expect("year"),
        d[5..7].parse().expect("month"),
    );
    if month >= 9 {
        year
    } else {
        year - 1
    }
}

/// The form of every runner of `card` counted here from `results`: only those dated
/// before the card.
fn forms_of(card: &Event, results: &[RaceResult]) -> Value {
    let Event::RaceCardDeclared(c) = card else {
        unreachable!("a card")
    };
    let before: Vec<&RaceResult> = results.iter().filter(|r| r.date < c.date).collect();
    let record = |runs: &[(&RaceResult, &ResultRunner)], keep: &dyn Fn(&RaceResult) -> bool| {
        let kept: Vec<_> = runs
            .iter()
            .filter(|(r, x)| keep(r) && took_part(x))
            .collect();
        json!({
            "runs": kept.len(),
            "wins": kept.iter().filter(|(_, x)| x.position == Some(1)).count(),
            "places": kept.iter().filter(|(_, x)| x.position.is_some_and(|p| p <= 3)).count(),
        })
    };
    let strike = |person: &dyn Fn(&ResultRunner) -> &str, name: &str| {
        let window: Vec<String> = (1..=14)
            .map(|i| {
                c.date
                    .parse::<jiff::civil::Date>()
                    .expect("date")
                    .checked_sub(jiff::Span::new().days(i))
                    .expect("date")
                    .to_string()
            })
            .collect();
        let rides: Vec<&ResultRunner> = results
            .iter()
            .filter(|r| window.contains(&r.date))
            .flat_map(|r| &r.runners)
            .filter(|x| person(x) == name && took_part(x))
            .collect();
        let wins = rides.iter().filter(|x| x.position == Some(1)).count() as u32;
        json!({"rides": rides.len(), "wins": wins, "strike_rate": pct(wins, rides.len() as u32)})
    };
    let mut out = serde_json::Map::new();
    for runner in &c.runners {
        let mut runs: Vec<(&RaceResult, &ResultRunner)> = before
            .iter()
            .flat_map(|r| {
                r.runners
                    .iter()
                    .filter(|x| x.horse_no == runner.horse_no)
                    .map(move |x| (*r, x))
            })
            .collect();
        runs.sort_by(|a, b| {
            (&a.0.date, a.0.race_number, &a.0.venue).cmp(&(&b.0.date, b.0.race_number, &b.0.venue))
        });
        let mut figures = String::new();
        let last = &runs[runs.len().saturating_sub(6)..];
        for (i, (r, x)) in last.iter().enumerate() {
            if i > 0 && season(&last[i - 1].0.date) != season(&r.date) {
                figures.push('/');
            }
            figures.push(match (x.status.as_deref(), x.position) {
                (Some("PU"), _) => 'P',
                (Some("WV"), _) => 'W',
                (None, Some(p)) if p <= 9 => char::from(b'0' + p as u8),
                _ => '0',
            });
        }
        let ran: Vec<&(&RaceResult, &ResultRunner)> =
            runs.iter().filter(|(_, x)| took_part(x)).collect();
        let days_since = ran.last().map(|(r, _)| {
            let from: jiff::civil::Date = r.date.parse().expect("date");
            i64::from(
                from.until(c.date.parse::<jiff::civil::Date>().expect("date"))
                    .expect("span")
                    .get_days(),
            )
        });
        let won = |keep: &dyn Fn(&RaceResult) -> bool| {
            ran.iter().any(|(r, x)| keep(r) && x.position == Some(1))
        };
        let mut going = Vec::new();
        for g in GOINGS {
            if ran.iter().any(|(r, _)| r.going == g) {
                let mut row = json!({"going": g});
                let counted = record(&runs, &|r| r.going == g);
                for (k, v) in counted.as_object().expect("a record") {
                    row[k] = v.clone();
                }
                going.push(row);
            }
        }
        out.insert(
            runner.horse_no.clone(),
            json!({
                "figures": figures,
                "runs": ran.len(),
                "days_since_run": days_since,
                "c": won(&|r| r.venue == c.venue),
                "d": won(&|r| r.distance == c.distance),
                "cd": won(&|r| r.venue == c.venue && r.distance == c.distance),
                "course": record(&runs, &|r| r.venue == c.venue),
                "distance": record(&runs, &|r| r.distance == c.distance),
                "going": going,
                "jockey_14d": strike(&|x| x.jockey.as_str(), &runner.jockey),
                "trainer_14d": strike(&|x| x.trainer.as_str(), &runner.trainer),
            }),
        );
    }
    Value::Object(out)
}

/// Each runner's form on the card of `day` as served (`as_of` if given).
async fn served_forms(app: &App, day: &str, as_of: Option<u64>) -> Value {
    let at = as_of.map(|s| format!("&as_of={s}")).unwrap_or_default();
    let doc = get_ok(app, &format!("/api/v1/racecards/{day}?venue=Sha%20Tin{at}")).await;
    let mut out = serde_json::Map::new();
    for r in doc["races"][0]["runners"].as_array().expect("runners") {
        out.insert(
            r["horse_no"].as_str().expect("horse").into(),
            r["form"].clone(),
        );
    }
    Value::Object(out)
}

fn published(results: &[RaceResult]) -> Vec<Envelope> {
    results
        .iter()
        .map(|r| {
            env_at(
                Event::RaceResultPublished(r.clone()),
                "2026-11-21T12:00:00Z",
            )
        })
        .collect()
}

#[tokio::test]
async fn form_on_a_card_is_counted_as_of_its_date_whatever_comes_after() {
    // Twelve meetings across the start of a season, then a card three days after the
    // last.
    let results = history(7, 12);
    let day = date(11 * 4 + 3);
    let horses = ["H01", "H02", "H03", "H04", "H05", "H06", "H07", "H08"];
    let today = card_of(&day, ST, 1200, &horses);
    let mut events = published(&results);
    events.push(env_at(today.clone(), "2026-11-21T12:00:00Z"));
    let (nats, mut app, _dir) = service_with(&events).await;
    let checkpoint = app.store().checkpoint().expect("checkpoint");

    let expected = forms_of(&today, &results);
    assert_eq!(served_forms(&app, &day, None).await, expected);
    let before = app
        .response(&format!("/api/v1/racecards/{day}?venue=Sha%20Tin"))
        .await;
    let etag = before.headers()["etag"].clone();

    // Results of the card's own date and of a later one change nothing of it.
    let mut later = history(8, 1);
    later[0].date.clone_from(&day);
    later[1].date = date(11 * 4 + 5);
    for r in &mut later {
        r.race_number += 4;
    }
    let last = nats.publish(&published(&later)).await;
    app.projected(last).await;
    let after = app
        .response(&format!("/api/v1/racecards/{day}?venue=Sha%20Tin"))
        .await;
    assert_eq!(
        after.headers()["etag"],
        etag,
        "a later result changed a past card"
    );
    assert_eq!(served_forms(&app, &day, None).await, expected);

    // A card published before the results it depends on: a backfill of an earlier
    // meeting's results fills it in; as of before the backfill, it stood without them.
    let early = date(6 * 4 + 2);
    let backfilled = card_of(&early, ST, 1650, &horses);
    let last = nats
        .publish(&[env_at(backfilled.clone(), "2026-11-21T12:00:00Z")])
        .await;
    app.projected(last).await;
    let mut backfill = history(9, 1);
    for r in &mut backfill {
        r.date = date(6 * 4 + 1);
        r.race_number += 2;
    }
    let before_backfill = last;
    let last = nats.publish(&published(&backfill)).await;
    app.projected(last).await;
    let all: Vec<RaceResult> = results
        .iter()
        .chain(&later)
        .chain(&backfill)
        .cloned()
        .collect();
    assert_eq!(
        served_forms(&app, &early, None).await,
        forms_of(&backfilled, &all)
    );
    let crossing = forms_of(&backfilled, &all);
    let figures: Vec<&str> = crossing
        .as_object()
        .expect("forms")
        .values()
        .filter_map(|f| f["figures"].as_str())
        .collect();
    assert!(
        figures.iter().any(|f| f.contains('/')),
        "the figures cross a season: {figures:?}"
    );
    let without: Vec<RaceResult> = results.iter().chain(&later).cloned().collect();
    assert_eq!(
        served_forms(&app, &early, Some(before_backfill)).await,
        forms_of(&backfilled, &without),
    );
    assert_ne!(
        forms_of(&backfilled, &all),
        forms_of(&backfilled, &without),
        "the backfill counts"
    );
    // And the first card, as of before anything after it, is what it showed then.
    assert_eq!(served_forms(&app, &day, Some(checkpoint)).await, expected);
}

/// The figures of `runs` counted here.
fn figures_of(runs: &[(&RaceResult, &ResultRunner)]) -> Value {
    let ran: Vec<_> = runs.iter().filter(|(_, x)| took_part(x)).collect();
    let wins = ran.iter().filter(|(_, x)| x.position == Some(1)).count() as u32;
    let seconds = ran.iter().filter(|(_, x)| x.position == Some(2)).count();
    let thirds = ran.iter().filter(|(_, x)| x.position == Some(3)).count();
    let places = ran
        .iter()
        .filter(|(_, x)| x.position.is_some_and(|p| p <= 3))
        .count() as u32;
    let bets: Vec<_> = ran
        .iter()
        .filter_map(|(_, x)| Some((x.win_odds?, x.position == Some(1))))
        .collect();
    let stake: f64 = bets
        .iter()
        .map(|(odds, won)| if *won { odds - 1.0 } else { -1.0 })
        .sum();
    json!({
        "runs": ran.len(), "wins": wins, "seconds": seconds, "thirds": thirds, "places": places,
        "strike_rate": pct(wins, ran.len() as u32), "place_rate": pct(places, ran.len() as u32),
        "bets": bets.len(), "level_stake": round(stake, 2),
    })
}

/// The rows of a breakdown of `runs` by `key`, in key order.
fn rows_of<K: Ord + Into<Value> + Clone>(
    runs: &[(&RaceResult, &ResultRunner)],
    key: impl Fn(&RaceResult, &ResultRunner) -> Option<K>,
) -> Value {
    let mut by: BTreeMap<K, Vec<(&RaceResult, &ResultRunner)>> = BTreeMap::new();
    for &(r, x) in runs.iter().filter(|(_, x)| took_part(x)) {
        if let Some(k) = key(r, x) {
            by.entry(k).or_default().push((r, x));
        }
    }
    Value::Array(
        by.into_iter()
            .map(|(k, runs)| {
                let mut row = figures_of(&runs);
                row["value"] = k.into();
                row
            })
            .collect(),
    )
}

/// People rows: most runs first, then by name.
fn people_rows(
    runs: &[(&RaceResult, &ResultRunner)],
    person: impl Fn(&ResultRunner) -> String,
) -> Value {
    let mut rows = rows_of(runs, |_, x| Some(person(x)))
        .as_array()
        .cloned()
        .unwrap_or_default();
    rows.sort_by(|a, b| {
        b["runs"]
            .as_u64()
            .cmp(&a["runs"].as_u64())
            .then(a["value"].as_str().cmp(&b["value"].as_str()))
    });
    Value::Array(rows)
}

/// The records by condition of whoever `pick` keeps, counted here.
fn analysis_of(
    results: &[RaceResult],
    pick: impl Fn(&ResultRunner) -> bool,
    (from, to): (Option<&str>, Option<&str>),
) -> Value {
    let mut runs: Vec<(&RaceResult, &ResultRunner)> = results
        .iter()
        .filter(|r| {
            from.is_none_or(|f| r.date.as_str() >= f) && to.is_none_or(|t| r.date.as_str() <= t)
        })
        .flat_map(|r| r.runners.iter().filter(|x| pick(x)).map(move |x| (r, x)))
        .collect();
    runs.sort_by(|a, b| (&a.0.date, a.0.race_number).cmp(&(&b.0.date, b.0.race_number)));
    json!({
        "overall": figures_of(&runs),
        "by_venue": rows_of(&runs, |r, _| Some(r.venue.clone())),
        "by_distance": rows_of(&runs, |r, _| Some(r.distance)),
        "by_going": rows_of(&runs, |r, _| Some(r.going.clone())),
        "by_class": rows_of(&runs, |r, _| r.class.clone()),
        "by_draw": rows_of(&runs, |_, x| x.draw),
        "by_jockey": people_rows(&runs, |x| x.jockey.clone()),
        "by_trainer": people_rows(&runs, |x| x.trainer.clone()),
    })
}

/// An analysis as served, without what names it.
fn figures_served(mut doc: Value, keep: &[&str]) -> Value {
    let d = doc.as_object_mut().expect("an object");
    d.retain(|k, _| k == "overall" || k.starts_with("by_"));
    for k in ["by_jockey", "by_trainer"] {
        if !keep.contains(&k) {
            d.remove(k);
        }
    }
    doc
}

fn only(mut expected: Value, keep: &[&str]) -> Value {
    let d = expected.as_object_mut().expect("an object");
    for k in ["by_jockey", "by_trainer"] {
        if !keep.contains(&k) {
            d.remove(k);
        }
    }
    expected
}

#[tokio::test]
async fn records_by_condition_are_counted_from_the_results_as_of_any_point() {
    let mut results = history(11, 12);
    let (nats, mut app, _dir) = service_with(&published(&results)).await;
    let before_amendment = app.store().checkpoint().expect("checkpoint");
    let both = ["by_jockey", "by_trainer"];

    let horse = get_ok(&app, "/api/v1/horses/H03/analysis").await;
    assert_eq!(
        (&horse["subject"], &horse["id"], &horse["name"]),
        (&json!("horse"), &json!("H03"), &json!("NAME H03"))
    );
    assert_eq!(
        figures_served(horse, &both),
        analysis_of(&results, |x| x.horse_no == "H03", (None, None))
    );

    let jockey = get_ok(&app, "/api/v1/jockeys/z-purton/analysis").await;
    assert_eq!(jockey["name"], "Z Purton");
    let expected = only(
        analysis_of(&results, |x| x.jockey == "Z Purton", (None, None)),
        &["by_trainer"],
    );
    assert_eq!(figures_served(jockey, &["by_trainer"]), expected);

    let (from, to) = (date(8), date(32));
    let path = format!("/api/v1/trainers/c-s-shum/analysis?from={from}&to={to}");
    let trainer = get_ok(&app, &path).await;
    assert_eq!(
        (&trainer["from"], &trainer["to"]),
        (&json!(from), &json!(to))
    );
    let expected = only(
        analysis_of(
            &results,
            |x| x.trainer == "C S Shum",
            (Some(&from), Some(&to)),
        ),
        &["by_jockey"],
    );
    assert_eq!(figures_served(trainer, &["by_jockey"]), expected);

    // An amended result: Z Purton's first winner of the history loses the race. Now and
    // as of before, each counted from the results of then.
    let amended = results
        .iter()
        .position(|r| {
            let rode = |p| {
                r.runners
                    .iter()
                    .any(|x| x.jockey == "Z Purton" && x.position == Some(p))
            };
            rode(1) && !rode(2)
        })
        .expect("a winner of Z Purton");
    let was = results[amended].clone();
    for x in &mut results[amended].runners {
        x.position = x.position.map(|p| {
            if p == 1 {
                2
            } else if p == 2 {
                1
            } else {
                p
            }
        });
    }
    let last = nats.publish(&published(&results[amended..=amended])).await;
    app.projected(last).await;
    let now = get_ok(&app, "/api/v1/jockeys/z-purton/analysis").await;
    let expected = only(
        analysis_of(&results, |x| x.jockey == "Z Purton", (None, None)),
        &["by_trainer"],
    );
    assert_eq!(figures_served(now.clone(), &["by_trainer"]), expected);
    let path = format!("/api/v1/jockeys/z-purton/analysis?as_of={before_amendment}");
    let then = get_ok(&app, &path).await;
    let mut old = results.clone();
    old[amended] = was;
    let expected = only(
        analysis_of(&old, |x| x.jockey == "Z Purton", (None, None)),
        &["by_trainer"],
    );
    assert_eq!(figures_served(then.clone(), &["by_trainer"]), expected);
    assert_ne!(now["overall"], then["overall"], "the amendment counts");

    // What is not there, and what is asked wrongly.
    for path in [
        "/api/v1/horses/ZZ99/analysis",
        "/api/v1/jockeys/nobody/analysis",
        "/api/v1/trainers/nobody/analysis",
    ] {
        let (status, body) = app.get(path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    }
    // A newcomer's first ride, on a horse's first run: as of the point before it, neither
    // had a run (404), and both have a record after it.
    let mut first_ride = results[0].clone();
    first_ride.date = date(60);
    first_ride.runners.truncate(2);
    first_ride.runners[0].horse_no = "H99".into();
    first_ride.runners[0].jockey = "N Newcomer".into();
    // And a horse withdrawn from it, ridden by no one else: in a result with no run.
    first_ride.runners[1].horse_no = "H98".into();
    first_ride.runners[1].jockey = "W Withdrawn".into();
    first_ride.runners[1].position = None;
    first_ride.runners[1].status = Some("WV".into());
    let before_first_ride = last;
    let last = nats.publish(&published(&[first_ride])).await;
    app.projected(last).await;
    let path = "/api/v1/horses/H98/analysis";
    let (status, body) = app.get(path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    assert_eq!(body["overall"]["runs"], 0, "{path}: {body}");
    assert_eq!(body["name"], Value::Null, "{path}: {body}");
    // Its jockey has no ride.
    let path = "/api/v1/jockeys/w-withdrawn/analysis";
    let (status, body) = app.get(path).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    for path in [
        "/api/v1/jockeys/n-newcomer/analysis",
        "/api/v1/horses/H99/analysis",
    ] {
        for (at, status) in [
            (format!("?as_of={before_first_ride}"), StatusCode::NOT_FOUND),
            (String::new(), StatusCode::OK),
        ] {
            let path = format!("{path}{at}");
            let (got, body) = app.get(&path).await;
            assert_eq!(got, status, "{path}: {body}");
        }
    }
    // The newcomer's second ride, on a date nothing was published of before: as of the
    // point before it, the first ride alone counts.
    let mut second_ride = results[0].clone();
    second_ride.date = date(61);
    second_ride.runners.truncate(1);
    second_ride.runners[0].horse_no = "H99".into();
    second_ride.runners[0].jockey = "N Newcomer".into();
    let before_second_ride = last;
    let last = nats.publish(&published(&[second_ride])).await;
    app.projected(last).await;
    for (at, runs) in [
        (format!("?as_of={before_second_ride}"), 1),
        (String::new(), 2),
    ] {
        let path = format!("/api/v1/jockeys/n-newcomer/analysis{at}");
        let body = get_ok(&app, &path).await;
        assert_eq!(body["overall"]["runs"], runs, "{path}: {body}");
    }
    // A position past the end of the log: a 404 that says where it ends.
    let path = format!("/api/v1/trainers/j-size/analysis?as_of={}", last + 100);
    let (status, body) = app.get(&path).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("it ends at {last}"))),
        "{body}"
    );
    // A `from` after `to`: a range of no dates, with no run counted.
    let path = format!(
        "/api/v1/horses/H03/analysis?from={}&to={}",
        date(9),
        date(2)
    );
    let (status, body) = app.get(&path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    assert_eq!(body["overall"]["runs"], 0, "{body}");
    for path in [
        "/api/v1/horses/H03/analysis?from=2026-02-30",
        "/api/v1/jockeys/Z%20Purton/analysis",
        "/api/v1/horses/H03/analysis?limit=3",
    ] {
        let (status, body) = app.get(path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
    }
}

/// Records by condition are worked out on a long reads' thread once; asked again, with
/// no form changed since, they are sent from memory without the hand-over; a result that
/// changes a form makes the next ask work them out again.
#[tokio::test]
async fn records_by_condition_asked_again_are_sent_from_memory_where_they_are_asked() {
    let results = history(7, 6);
    let (nats, mut app, _dir) = service_with(&published(&results)).await;
    let route = "/api/v1/trainers/{id}/analysis";
    let path = format!("/api/v1/trainers/j-size/analysis?from={}", date(3));
    let answer = |response: reqwest::Response| async move {
        assert_eq!(response.status(), StatusCode::OK);
        let etag = response.headers().get("etag").cloned().expect("an ETag");
        (etag, response.bytes().await.expect("body"))
    };
    let before = app.long_reads(route).await;
    let first = answer(app.response(&path).await).await;
    assert_eq!(app.long_reads(route).await, before + 1, "worked out apart");
    let again = answer(app.response(&path).await).await;
    assert_eq!(again, first, "the same answer");
    assert_eq!(app.long_reads(route).await, before + 1, "sent from memory");
    // Asked for compressed, it goes through the router: from memory all the same.
    assert_eq!(app.gzipped(&path).await.status(), StatusCode::OK);
    assert_eq!(
        app.long_reads(route).await,
        before + 1,
        "compressed, from memory"
    );

    let mut amended = results[results.len() - 1].clone();
    for x in &mut amended.runners {
        x.position = x.position.map(|p| match p {
            1 => 2,
            2 => 1,
            p => p,
        });
    }
    let last = nats.publish(&published(&[amended])).await;
    app.projected(last).await;
    assert_eq!(app.response(&path).await.status(), StatusCode::OK);
    assert_eq!(app.long_reads(route).await, before + 2, "worked out again");
}

// ---- The market on the socket. ----

#[tokio::test]
async fn the_market_topic_sends_a_race_at_most_once_a_second_as_it_stands() {
    use crate::live::{service, Client, DAY};
    use racing_events::samples::{envelope, odds};

    let (nats, mut app, _dir) = service(|_| {}).await;
    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1, "topics": ["market"]}))
        .await;
    assert!(
        client.barrier().await.is_empty(),
        "no snapshot for the market alone"
    );

    // Twenty moves a tenth of a second apart: about two seconds of prices, read as they
    // come until the market of the last.
    let (last_tx, mut last_rx) = tokio::sync::watch::channel(u64::MAX);
    let reader = tokio::spawn(async move {
        let mut frames: Vec<(std::time::Instant, Value)> = Vec::new();
        let mut target = u64::MAX;
        loop {
            if frames
                .last()
                .is_some_and(|(_, f)| f["seq"].as_u64() == Some(target))
            {
                return frames;
            }
            tokio::select! {
                frame = client.next_message() => {
                    assert_eq!(frame["type"], "market", "only market frames: {frame}");
                    frames.push((std::time::Instant::now(), frame));
                }
                changed = last_rx.changed(), if target == u64::MAX => {
                    changed.expect("the publisher");
                    target = *last_rx.borrow();
                }
            }
        }
    });
    let started = std::time::Instant::now();
    let mut last = 0;
    for i in 0..20 {
        let price = 3.0 + f64::from(i) / 10.0;
        let prices = [("A1", price), ("B2", 9.0 - price)];
        last = nats.publish(&[envelope(odds(DAY, 1, &prices))]).await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    app.projected(last).await;
    last_tx.send(last).expect("the reader waits");
    let frames = reader.await.expect("the reader");
    let elapsed = started.elapsed().as_secs_f64();
    assert!(
        frames.len() as f64 <= elapsed.ceil() + 1.0 && frames.len() < 20,
        "{} market frames in {elapsed:.1} s for 20 moves",
        frames.len()
    );
    for pair in frames.windows(2) {
        let gap = pair[1].0.duration_since(pair[0].0);
        assert!(
            gap >= std::time::Duration::from_millis(800),
            "two market frames {gap:?} apart"
        );
    }
    // The last is the race's market as the odds document has it.
    let doc = get_ok(&app, &format!("/api/v1/odds/{DAY}/1")).await;
    let (_, newest) = frames.last().expect("a frame");
    assert_eq!(newest["market"], doc["market"]);
    assert_eq!(newest["odds"], doc["odds"]);
    assert_eq!(
        (&newest["venue"], &newest["race_number"]),
        (&doc["venue"], &doc["race_number"])
    );
}
