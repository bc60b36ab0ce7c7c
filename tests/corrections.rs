//! Race identity and corrections end to end (feed contract v1.1): a retraction removes one
//! venue's race from every read model, and odds and scratchings name the venue they are
//! for, over HTTP and in live frames.

use racing_events::samples::{card, envelope, odds, odds_at, result, retraction, runner};
use racing_events::Envelope;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::live::Client;
use crate::support::{service_with, without_market, App, Nats, KEY};

const DAY: &str = "2026-11-25";
const ST: &str = "Sha Tin";
const HV: &str = "Happy Valley";

async fn publish(
    nats: &Nats,
    app: &mut App,
    events: impl IntoIterator<Item = racing_events::Event>,
) {
    let events: Vec<Envelope> = events.into_iter().map(envelope).collect();
    let last = nats.publish(&events).await;
    app.projected(last).await;
}

fn races(v: &Value) -> Vec<i64> {
    v["races"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["race_number"].as_i64()).collect())
        .unwrap_or_default()
}

fn form(v: &Value) -> Vec<(String, i64, String)> {
    v["form"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|e| {
                    (
                        e["date"].as_str().unwrap_or_default().to_owned(),
                        e["race_number"].as_i64().unwrap_or_default(),
                        e["venue"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_retraction_removes_one_venues_race_from_the_results_the_race_and_the_form() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    publish(
        &nats,
        &mut app,
        [
            result("2026-11-10", ST, 2, vec![runner(Some(3), "A1")]),
            card(DAY, ST, 3, &["A1", "B2"]),
            card(DAY, HV, 3, &["C3"]),
            result(
                DAY,
                ST,
                3,
                vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
            ),
            result(DAY, HV, 3, vec![runner(Some(1), "C3")]),
            result(DAY, ST, 5, vec![runner(Some(1), "E5")]),
        ],
    )
    .await;
    let (_, day) = app.get(&format!("/api/v1/results/{DAY}")).await;
    assert_eq!((day["venue"].as_str(), races(&day)), (Some(ST), vec![3, 5]));
    let (_, a1) = app.get("/api/v1/horses/A1/form").await;
    assert_eq!(form(&a1).len(), 2);

    publish(
        &nats,
        &mut app,
        [retraction(DAY, ST, 3, "published under the wrong venue")],
    )
    .await;

    // The day's results: Sha Tin keeps race 5, Happy Valley race 3.
    let (_, st) = app
        .get(&format!("/api/v1/results/{DAY}?venue=Sha%20Tin"))
        .await;
    assert_eq!(races(&st), [5]);
    let (_, hv) = app
        .get(&format!("/api/v1/results/{DAY}?venue=Happy%20Valley"))
        .await;
    assert_eq!(races(&hv), [3]);
    assert_eq!(hv["meetings"], json!([HV, ST]));
    // The single race: gone at Sha Tin; without a venue, Happy Valley's.
    let (status, body) = app
        .get(&format!("/api/v1/results/{DAY}/3?venue=Sha%20Tin"))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body["message"],
        format!("no result for race 3 on {DAY} at Sha Tin")
    );
    let (status, race) = app.get(&format!("/api/v1/results/{DAY}/3")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (
            race["venue"].as_str(),
            race["runners"][0]["horse_no"].as_str()
        ),
        (Some(HV), Some("C3"))
    );
    // Its card went with it; Happy Valley's stays.
    let (status, _) = app
        .get(&format!("/api/v1/racecards/{DAY}?venue=Sha%20Tin"))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, cards) = app.get(&format!("/api/v1/racecards/{DAY}")).await;
    assert_eq!(
        (cards["venue"].as_str(), races(&cards)),
        (Some(HV), vec![3])
    );
    assert!(cards.get("meetings").is_none(), "{cards}");
    // Form: A1 keeps its other race; B2 ran in no other and appears nowhere now.
    let (_, a1) = app.get("/api/v1/horses/A1/form").await;
    assert_eq!(form(&a1), [("2026-11-10".to_owned(), 2, ST.to_owned())]);
    let (status, _) = app.get("/api/v1/horses/B2/form").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A retraction that breaks a rule is a dead letter, and nothing of it is applied.
    let mut bad = envelope(retraction(DAY, HV, 3, "void"));
    if let racing_events::Event::RaceRetracted(r) = &mut bad.event {
        r.reason = "x".repeat(201);
    }
    let seq = nats.publish(&[bad]).await;
    app.projected(seq).await;
    let dead = app.store().dead_letters(seq, 1).expect("dead letters");
    assert!(
        dead.first()
            .is_some_and(|d| d.seq == seq && d.reason.contains("reason")),
        "{dead:?}"
    );
    let (status, _) = app
        .get(&format!("/api/v1/results/{DAY}/3?venue=Happy%20Valley"))
        .await;
    assert_eq!(status, StatusCode::OK);

    // Published again, the race is back, and in its runners' form.
    publish(
        &nats,
        &mut app,
        [result(DAY, ST, 3, vec![runner(Some(1), "B2")])],
    )
    .await;
    let (status, race) = app
        .get(&format!("/api/v1/results/{DAY}/3?venue=Sha%20Tin"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(race["runners"][0]["horse_no"], "B2");
    let (_, b2) = app.get("/api/v1/horses/B2/form").await;
    assert_eq!(form(&b2), [(DAY.to_owned(), 3, ST.to_owned())]);
}

#[tokio::test]
async fn odds_name_their_venue_over_http_and_in_live_frames() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    publish(
        &nats,
        &mut app,
        [
            card(DAY, ST, 3, &["A1"]),
            card(DAY, ST, 4, &["E5"]),
            card(DAY, HV, 3, &["C3"]),
        ],
    )
    .await;
    let mut client = Client::try_connect(&app.base, KEY).await.expect("upgrade");
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 3}))
        .await;
    let empty = client.next_message().await;
    assert_eq!(
        empty,
        json!({"type": "snapshot", "date": DAY, "venue": null, "race_number": 3, "seq": 0, "odds": []})
    );

    // Given for Happy Valley's race 3, then (a v1 feeder) for race 3 at every venue.
    publish(&nats, &mut app, [odds_at(DAY, HV, 3, &[("C3", 4.0)])]).await;
    let frame = client.next_message().await;
    assert_eq!(
        (frame["type"].as_str(), frame["venue"].as_str()),
        (Some("odds"), Some(HV))
    );
    publish(&nats, &mut app, [odds(DAY, 3, &[("A1", 2.5)])]).await;
    let frame = client.next_message().await;
    assert_eq!(frame["type"], "odds");
    assert_eq!(frame["venue"], Value::Null);
    assert_eq!(frame["odds"], json!([{"horse_no": "A1", "win_odds": 2.5}]));
    let seq = frame["seq"].as_u64().expect("seq");

    let odds_at_venue = |venue: &str| format!("/api/v1/odds/{DAY}/3?venue={venue}");
    let (status, hv) = app.get(&odds_at_venue("Happy%20Valley")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        without_market(hv),
        json!({"date": DAY, "venue": HV, "meetings": [HV, ST], "race_number": 3, "seq": seq,
               "odds": [{"horse_no": "A1", "win_odds": 2.5}, {"horse_no": "C3", "win_odds": 4.0}]})
    );
    let (_, st) = app.get(&odds_at_venue("Sha+Tin")).await;
    assert_eq!(st["venue"], ST);
    assert_eq!(
        without_market(st.clone())["odds"],
        json!([{"horse_no": "A1", "win_odds": 2.5}])
    );
    // Without a venue: the day's main meeting, Sha Tin with two races.
    let (_, main) = app.get(&format!("/api/v1/odds/{DAY}/3")).await;
    assert_eq!(main, st);
    // The same rules and answers as the other date endpoints.
    let (status, body) = app.get(&odds_at_venue("Kranji")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body["message"],
        format!("no odds for race 3 on {DAY} at Kranji")
    );
    let (status, body) = app.get(&odds_at_venue("")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["message"], "query parameter `venue` is empty");
    let (status, body) = app.get(&format!("/api/v1/odds/{DAY}/3?meeting=x")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("bad_request"))
    );

    // A snapshot of the race is one for each venue that runs it.
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 3}))
        .await;
    let first = client.next_message().await;
    let second = client.next_message().await;
    assert_eq!(
        (first["type"].as_str(), first["venue"].as_str()),
        (Some("snapshot"), Some(HV))
    );
    assert_eq!(
        (second["type"].as_str(), second["venue"].as_str()),
        (Some("snapshot"), Some(ST))
    );
    assert_eq!(second["odds"], st["odds"]);
}
