//! The odds of a race, a venue's or every venue's, and their market.

use super::*;

#[test]
fn odds_keep_the_last_price_of_runners_not_listed() {
    let s = fold_each([
        env(odds("2026-11-21", 3, &[("A1", 3.5), ("B2", 8.0)])),
        env(odds("2026-11-21", 3, &[("A1", 3.2)])),
    ]);
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(
        1,
        0,
        &env(odds("2026-11-21", 3, &[("A1", 3.5), ("B2", 8.0)])),
    )
    .expect("apply");
    b.apply(2, 0, &env(odds("2026-11-21", 3, &[("A1", 3.2)])))
        .expect("apply");
    b.commit().expect("commit");
    let race = store
        .odds("2026-11-21", 3, None)
        .expect("read")
        .expect("odds");
    assert_eq!(race.seq, 2);
    assert_eq!(race.runners["A1"], (3.2, 2));
    assert_eq!(race.runners["B2"], (8.0, 1));
    // The pure fold and the store agree.
    let folded = s
        .records
        .iter()
        .find(|(k, _)| k.starts_with(b"odds"))
        .expect("odds record");
    let folded: RaceOdds = serde_json::from_slice(folded.1).expect("json");
    assert_eq!(folded, race);
}

#[test]
fn the_odds_document_is_the_snapshot_and_changes_are_found_by_sequence() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    b.apply(
        1,
        0,
        &env(odds("2026-11-21", 2, &[("B2", 8.0), ("A1", 3.5)])),
    )
    .expect("apply");
    b.apply(2, 0, &env(odds("2026-11-22", 1, &[("C3", 2.0)])))
        .expect("apply");
    b.apply(3, 0, &env(odds("2026-11-21", 2, &[("A1", 3.1)])))
        .expect("apply");
    b.apply(4, 0, &env(profile("E271", "NOT ODDS")))
        .expect("apply");
    b.commit().expect("commit");
    let doc = store
        .doc(DocKey::Odds {
            date: "2026-11-21",
            race_number: 2,
            venue: None,
        })
        .expect("read")
        .expect("doc");
    assert_eq!(
        std::str::from_utf8(&doc).expect("utf8"),
        r#"{"date":"2026-11-21","venue":null,"race_number":2,"seq":3,"odds":[{"horse_no":"A1","win_odds":3.1,"win_prob":0.3226,"first_win_odds":3.5,"win_move_pct":-11.43},{"horse_no":"B2","win_odds":8.0,"win_prob":0.125,"first_win_odds":8.0,"win_move_pct":0.0}],"market":{"clock":"2026-11-21T12:00:00.000Z","win_book_pct":44.76,"favourites":["A1"],"steamers":[],"drifters":[]}}"#
    );
    assert_eq!(store.latest_odds_seq().expect("seq"), 3);
    let all = store.odds_changed_since(None, 0).expect("scan");
    assert_eq!(
        all,
        [("2026-11-21".to_owned(), 2), ("2026-11-22".to_owned(), 1)]
    );
    assert_eq!(
        store.odds_changed_since(None, 2).expect("scan"),
        [("2026-11-21".to_owned(), 2)]
    );
    assert!(store
        .odds_changed_since(Some("2026-11-22"), 2)
        .expect("scan")
        .is_empty());
}

fn odds_doc(s: &MemState, race_number: u8, venue: Option<&str>) -> Value {
    doc(
        s,
        DocKey::Odds {
            date: DAY,
            race_number,
            venue,
        },
    )
}

#[test]
fn odds_given_for_a_venue_are_that_venues_race_only() {
    let s = fold_each([
        env(card(DAY, ST, 3, &["A1"])),
        env(card(DAY, ST, 4, &["E5"])),
        env(card(DAY, HV, 3, &["C3"])),
        env(odds_at(DAY, ST, 3, &[("A1", 2.5)])),
        env(odds_at(DAY, HV, 3, &[("C3", 4.0)])),
    ]);
    assert_eq!(
        without_market(odds_doc(&s, 3, Some(ST))),
        json!({"date": DAY, "venue": ST, "meetings": [HV, ST], "race_number": 3, "seq": 4,
               "odds": [{"horse_no": "A1", "win_odds": 2.5}]})
    );
    assert_eq!(
        without_market(odds_doc(&s, 3, Some(HV))),
        json!({"date": DAY, "venue": HV, "meetings": [HV, ST], "race_number": 3, "seq": 5,
               "odds": [{"horse_no": "C3", "win_odds": 4.0}]})
    );
    // Without a venue: the day's main meeting (Sha Tin, two races).
    assert_eq!(odds_doc(&s, 3, None), odds_doc(&s, 3, Some(ST)));
}

#[test]
fn odds_without_a_venue_are_for_that_race_at_every_venue_whatever_the_order() {
    // A v1 feeder's prices for race 3, on a date with two meetings that both run a race 3.
    let events = [
        odds(DAY, 3, &[("A1", 3.0), ("C3", 6.0)]),
        card(DAY, ST, 3, &["A1"]),
        card(DAY, HV, 3, &["C3"]),
        odds_at(DAY, HV, 3, &[("C3", 5.0)]),
        odds(DAY, 3, &[("A1", 2.8)]),
    ];
    let s = fold_each(events.iter().cloned().map(env));
    let prices = |venue| prices(&odds_doc(&s, 3, venue));
    // Each runner at its latest price for the venue: C3's Happy Valley price is newer
    // than the price given for every venue, A1's newest price was given for every venue.
    assert_eq!(
        prices(Some(HV)),
        json!([{"horse_no": "A1", "win_odds": 2.8}, {"horse_no": "C3", "win_odds": 5.0}])
    );
    assert_eq!(
        prices(Some(ST)),
        json!([{"horse_no": "A1", "win_odds": 2.8}, {"horse_no": "C3", "win_odds": 6.0}])
    );
    assert_eq!(odds_doc(&s, 3, Some(ST))["seq"], 5);
    assert_eq!(odds_doc(&s, 3, Some(HV))["seq"], 5);
    // Before any card, the same prices were the race's without a venue.
    let early = fold_each([env(events[0].clone())]);
    assert_eq!(
        without_market(odds_doc(&early, 3, None)),
        json!({"date": DAY, "venue": null, "race_number": 3, "seq": 1,
               "odds": [{"horse_no": "A1", "win_odds": 3.0}, {"horse_no": "C3", "win_odds": 6.0}]})
    );
    // The cards first or last, the documents are the same.
    let cards_first = fold_each([1, 2, 0, 3, 4].map(|i| env(events[i].clone())));
    for venue in [Some(ST), Some(HV), None] {
        let mut first = odds_doc(&cards_first, 3, venue);
        let mut last = odds_doc(&s, 3, venue);
        // The sequence is the fold's position, which the reordering moved.
        first["seq"] = Value::Null;
        last["seq"] = Value::Null;
        assert_eq!(first, last, "{venue:?}");
    }
}

#[test]
fn the_odds_of_a_race_are_one_document_a_venue_and_changes_are_found_once_a_race() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let mut b = store.batch().expect("batch");
    for (seq, e) in [
        odds(DAY, 2, &[("A1", 3.5)]),
        card(DAY, ST, 3, &["A1"]),
        card(DAY, HV, 3, &["C3"]),
        odds_at(DAY, HV, 3, &[("C3", 4.0)]),
        odds_at(DAY, ST, 3, &[("A1", 2.0)]),
        odds(DAY, 3, &[("B2", 9.0)]),
    ]
    .into_iter()
    .enumerate()
    {
        b.apply(seq as u64 + 1, 0, &env(e)).expect("apply");
    }
    b.commit().expect("commit");
    let venues = |n| -> Vec<Value> {
        store
            .odds_docs(DAY, n)
            .expect("read")
            .iter()
            .map(|d| serde_json::from_slice::<Value>(d).expect("json")["venue"].clone())
            .collect()
    };
    assert_eq!(venues(2), [Value::Null]);
    assert_eq!(venues(3), [json!(HV), json!(ST)]);
    assert!(venues(4).is_empty());
    assert_eq!(
        store.odds_changed_since(Some(DAY), 0).expect("scan"),
        [(DAY.to_owned(), 2), (DAY.to_owned(), 3)]
    );
    assert_eq!(
        store.odds_changed_since(None, 5).expect("scan"),
        [(DAY.to_owned(), 3)]
    );
    let st = store.odds(DAY, 3, Some(ST)).expect("read").expect("odds");
    assert_eq!(st.runners["A1"], (2.0, 5));
    assert!(!st.runners.contains_key("B2"), "given for every venue");
}

/// A move dated in the future by mistake counts as given when it was published: the
/// market's clock does not run ahead of the moves after it, so their 5-minute moves are
/// still read against the prices of 5 minutes before, live and as of any point.
#[test]
fn a_move_dated_in_the_future_does_not_freeze_the_markets_windows() {
    let at = |hhmm: &str| format!("{DAY}T{hhmm}:00Z");
    let nanos =
        |hhmm: &str| i128::from(crate::market::millis(&at(hhmm)).expect("a time")) * 1_000_000;
    let moves = [
        ("10:00", "10:00", 4.0),
        ("10:01", "2030-01-01T00:00:00Z", 4.0),
        ("10:06", "10:06", 3.0),
    ];
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    for (i, (published, given, price)) in moves.into_iter().enumerate() {
        let given = if given.contains('T') {
            given.to_owned()
        } else {
            at(given)
        };
        let e = Envelope::new(odds_at(DAY, ST, 1, &[("A1", price)]), &given);
        let mut b = store.batch().expect("batch");
        b.apply(i as u64 + 1, nanos(published), &e).expect("apply");
        b.commit().expect("commit");
    }
    let key = DocKey::Odds {
        date: DAY,
        race_number: 1,
        venue: Some("Sha Tin"),
    };
    let five_minutes = |doc: &[u8]| -> Value {
        let doc: Value = serde_json::from_slice(doc).expect("json");
        doc["odds"][0]["win_move_5m_pct"].clone()
    };
    let now = store.doc(key).expect("read").expect("the odds");
    assert_eq!(five_minutes(&now), serde_json::json!(-25.0));
    let then = store.doc_as_of(key, 3).expect("read").expect("the odds");
    assert_eq!(five_minutes(&then), serde_json::json!(-25.0));
}

/// Five runners priced, then two of them scratched after their moves (one for its
/// venue, one for every venue), then a move of another: the books, the favourites and the
/// movers are those of the three left, counted here from their prices; the two keep their
/// last prices, marked `scratched`. The documents are the same, as of every point, whether
/// the log came one event a batch or in one batch, where a scratching follows the moves
/// it changes the market of.
#[test]
fn the_market_leaves_scratched_runners_out_of_its_books_favourites_and_movers() {
    let prices = |p: &[(&str, f64, f64)]| {
        let p: Vec<_> = p.iter().map(|&(h, w, pl)| (h, Some(w), Some(pl))).collect();
        samples::odds_with_place(DAY, Some(ST), 3, &p)
    };
    let log = [
        ("10:00", card(DAY, ST, 3, &["A1", "B2", "C3", "D4", "E5"])),
        (
            "10:00",
            prices(&[
                ("A1", 2.0, 1.2),
                ("B2", 4.0, 1.6),
                ("C3", 8.0, 2.4),
                ("D4", 10.0, 3.0),
                ("E5", 20.0, 5.0),
            ]),
        ),
        (
            "10:20",
            prices(&[
                ("A1", 1.8, 1.1),
                ("B2", 3.6, 1.5),
                ("C3", 5.0, 1.8),
                ("E5", 30.0, 7.0),
            ]),
        ),
        ("10:21", scratch_at(DAY, ST, 3, "A1")),
        ("10:22", scratch(DAY, 3, "C3")),
        ("10:23", prices(&[("D4", 9.0, 2.8)])),
    ];
    let log: Vec<(u64, i128, Envelope)> = log
        .into_iter()
        .enumerate()
        .map(|(i, (hhmm, event))| {
            let at = format!("{DAY}T{hhmm}:00Z");
            let nanos = i128::from(crate::market::millis(&at).expect("a time")) * 1_000_000;
            (i as u64 + 1, nanos, Envelope::new(event, &at))
        })
        .collect();
    let key = DocKey::Odds {
        date: DAY,
        race_number: 3,
        venue: Some(ST),
    };

    // One event a batch, keeping the document after each; and the whole log in one.
    let (each_dir, one_dir) = (tempdir(), tempdir());
    let each = Store::open(each_dir.path()).expect("open");
    let one = Store::open(one_dir.path()).expect("open");
    let mut after = Vec::new();
    let mut whole = one.batch().expect("batch");
    for (seq, published, e) in &log {
        let mut b = each.batch().expect("batch");
        b.apply(*seq, *published, e).expect("apply");
        b.commit().expect("commit");
        whole.apply(*seq, *published, e).expect("apply");
        let doc = each.doc(key).expect("read").map(|d| d.to_vec());
        after.push((*seq, doc));
    }
    whole.commit().expect("commit");

    let doc: Value = serde_json::from_slice(&after[5].1.clone().expect("the odds")).expect("json");
    let runners = doc["odds"].as_array().expect("odds");
    let marked: Vec<&str> = runners
        .iter()
        .filter(|r| r["scratched"] == json!(true))
        .map(|r| r["horse_no"].as_str().expect("a number"))
        .collect();
    assert_eq!(runners.len(), 5, "every runner priced is listed: {doc}");
    assert_eq!(marked, ["A1", "C3"], "{doc}");
    let a1 = &runners[0];
    assert_eq!(
        (&a1["win_odds"], &a1["place_odds"]),
        (&json!(1.8), &json!(1.1))
    );
    // The book counted here over the three left: B2 at 3.6, D4 at 9.0, E5 at 30.0.
    let left: Vec<&Value> = runners
        .iter()
        .filter(|r| r["scratched"].is_null())
        .collect();
    assert_eq!(left.len(), 3);
    let book = |field: &str| {
        let sum: f64 = left
            .iter()
            .map(|r| 1.0 / r[field].as_f64().expect("a price"))
            .sum();
        (sum * 10_000.0).round() / 100.0
    };
    let market = &doc["market"];
    assert_eq!(market["win_book_pct"], json!(book("win_odds")));
    assert_eq!(market["win_book_pct"], json!(42.22));
    assert_eq!(market["place_book_pct"], json!(book("place_odds")));
    assert_eq!(market["favourites"], json!(["B2"]));
    // Over the last 15 minutes C3 shortened most and A1 as much as B2 and D4: both gone.
    assert_eq!(market["steamers"], json!(["B2", "D4"]));
    assert_eq!(market["drifters"], json!(["E5"]));

    // The move after the scratchings carries the book of the three left, live and in the
    // journal.
    let moves = each.odds_moves(DAY, 0, Some(3), 100).expect("journal");
    let last: Value = serde_json::from_slice(&moves[2].body).expect("json");
    assert_eq!(
        last["market"],
        json!({"win_book_pct": 42.22, "place_book_pct": book("place_odds"), "favourites": ["B2"]})
    );

    // Before its scratching A1 was the favourite; each scratching changed the document at
    // its own position; and every point answers as it was served then, in both stores.
    let at = |seq: usize| -> Value {
        serde_json::from_slice(after[seq - 1].1.as_deref().expect("the odds")).expect("json")
    };
    assert_eq!(at(3)["market"]["favourites"], json!(["A1"]));
    assert_eq!(at(4)["market"]["favourites"], json!(["B2"]));
    assert_ne!(at(5), at(4), "the scratching for every venue changed it");
    for (seq, served) in &after {
        for store in [&each, &one] {
            let then = store
                .doc_as_of(key, *seq)
                .expect("read")
                .map(|d| d.to_vec());
            assert_eq!(&then, served, "as of {seq}");
        }
    }
    assert_eq!(
        one.doc(key).expect("read").map(|d| d.to_vec()),
        after[5].1,
        "one batch answers as one event a batch"
    );
}
