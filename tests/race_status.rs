//! The race day of feed v1.2 over HTTP and the socket, end to end: race statuses in the
//! day's card and the odds document (and as of a point), place prices beside win prices
//! in the odds document, its history and the live frames, and late prices counted.

use racing_events::samples::{
    card, envelope, odds, odds_at, odds_with_place, result, runner, status,
};
use racing_events::{Envelope, Event, RaceStatus};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::live::Client;
use crate::support::{service_with, without_market, App, Nats};

const DAY: &str = "2026-11-25";
const ST: &str = "Sha Tin";
const HV: &str = "Happy Valley";

/// `event` as the feeder stamped it at `at`.
fn stamped(event: Event, at: &str) -> Envelope {
    Envelope::new(event, at)
}

/// Publishes `events` and waits for them to be projected; the last one's sequence.
async fn publish(nats: &Nats, app: &mut App, events: &[Envelope]) -> u64 {
    let last = nats.publish(events).await;
    app.projected(last).await;
    last
}

async fn ok(app: &App, path: &str) -> Value {
    let (code, body) = app.get(path).await;
    assert_eq!(code, StatusCode::OK, "{path}: {body}");
    body
}

/// Race `n` of a card document.
fn race(card: &Value, n: i64) -> Value {
    card["races"]
        .as_array()
        .expect("races")
        .iter()
        .find(|r| r["race_number"] == n)
        .cloned()
        .unwrap_or_else(|| panic!("no race {n} in {card}"))
}

/// `(status, status_at, status_reason)` of a race or an odds document; `Null` for each
/// field left out.
fn status_of(v: &Value) -> [Value; 3] {
    ["status", "status_at", "status_reason"].map(|f| v.get(f).cloned().unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_card_and_the_odds_document_carry_a_race_status_for_a_venue_or_every_venue() {
    let events = [
        envelope(card(DAY, ST, 1, &["A1", "B2"])),
        envelope(card(DAY, ST, 2, &["C3"])),
        envelope(card(DAY, HV, 1, &["D4"])),
        envelope(odds_at(DAY, ST, 1, &[("A1", 2.5)])),
        envelope(odds(DAY, 2, &[("C3", 4.0)])),
        stamped(
            status(DAY, Some(ST), 1, RaceStatus::Suspended, Some("reweigh")),
            "2026-11-25T12:01:00Z",
        ),
        // Without a venue: race 2 wherever it is run.
        stamped(
            status(DAY, None, 2, RaceStatus::Open, None),
            "2026-11-25T11:00:00Z",
        ),
    ];
    let (_nats, app, _dir) = service_with(&events).await;
    let suspended = [
        json!("suspended"),
        json!("2026-11-25T12:01:00.000Z"),
        json!("reweigh"),
    ];
    let open = [
        json!("open"),
        json!("2026-11-25T11:00:00.000Z"),
        Value::Null,
    ];

    let card = ok(&app, &format!("/api/v1/racecards/{DAY}")).await;
    assert_eq!(card["venue"], ST);
    assert_eq!(status_of(&race(&card, 1)), suspended);
    assert_eq!(status_of(&race(&card, 2)), open);
    let hv = ok(&app, &format!("/api/v1/racecards/{DAY}?venue=Happy+Valley")).await;
    assert_eq!(
        race(&hv, 1).get("status"),
        None,
        "Happy Valley's race 1 was given no status"
    );

    let odds1 = ok(&app, &format!("/api/v1/odds/{DAY}/1")).await;
    assert_eq!(status_of(&odds1), suspended);
    let odds2 = ok(&app, &format!("/api/v1/odds/{DAY}/2?venue=Sha+Tin")).await;
    assert_eq!(status_of(&odds2), open);
    // The fields stand between the sequence and the prices.
    let fields: Vec<&String> = odds1.as_object().expect("object").keys().collect();
    assert_eq!(
        fields,
        [
            "date",
            "venue",
            "meetings",
            "race_number",
            "seq",
            "status",
            "status_at",
            "status_reason",
            "odds",
            "market"
        ]
    );
}

#[tokio::test]
async fn todays_card_carries_the_race_status() {
    let zone = "Asia/Hong_Kong";
    let tz = jiff::tz::TimeZone::get(zone).expect("zone");
    let today = || {
        jiff::Timestamp::now()
            .to_zoned(tz.clone())
            .date()
            .to_string()
    };
    let day = today();
    let nats = Nats::start().await;
    let dir = tempfile::TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.timezone = tz.clone();
        c.timezone_name = zone.into();
    })
    .await;
    publish(
        &nats,
        &mut app,
        &[
            envelope(card(&day, ST, 1, &["A1"])),
            stamped(
                status(&day, None, 1, RaceStatus::Open, None),
                "2026-11-25T11:00:00Z",
            ),
        ],
    )
    .await;
    let (code, body) = app.get("/api/v1/racecards/today").await;
    // The day may have turned since: then today's card is another date's.
    if today() == day {
        assert_eq!(code, StatusCode::OK);
        assert_eq!(
            status_of(&race(&body, 1)),
            [
                json!("open"),
                json!("2026-11-25T11:00:00.000Z"),
                Value::Null
            ]
        );
    }
}

#[tokio::test]
async fn a_result_finishes_a_race_with_a_status_and_leaves_one_without_none() {
    let events = [
        envelope(card(DAY, ST, 1, &["A1", "B2"])),
        envelope(card(DAY, ST, 2, &["C3"])),
        envelope(odds_at(DAY, ST, 1, &[("A1", 2.5)])),
        envelope(odds_at(DAY, ST, 2, &[("C3", 3.1)])),
        stamped(
            status(DAY, Some(ST), 1, RaceStatus::Off, None),
            "2026-11-25T12:00:00Z",
        ),
        stamped(
            result(DAY, ST, 1, vec![runner(Some(1), "A1")]),
            "2026-11-25T12:04:00Z",
        ),
        stamped(
            result(DAY, ST, 2, vec![runner(Some(1), "C3")]),
            "2026-11-25T12:40:00Z",
        ),
    ];
    let (_nats, app, _dir) = service_with(&events).await;
    let finished = [
        json!("finished"),
        json!("2026-11-25T12:04:00.000Z"),
        Value::Null,
    ];
    let card = ok(&app, &format!("/api/v1/racecards/{DAY}")).await;
    assert_eq!(status_of(&race(&card, 1)), finished);
    assert_eq!(
        status_of(&ok(&app, &format!("/api/v1/odds/{DAY}/1")).await),
        finished
    );
    // Race 2 was never given a status: its result gives it none, and its documents are
    // byte for byte a v1 service's.
    assert_eq!(race(&card, 2).get("status"), None);
    let res = app.response(&format!("/api/v1/odds/{DAY}/2")).await;
    let body = res.text().await.expect("body");
    assert_eq!(
        body,
        r#"{"date":"2026-11-25","venue":"Sha Tin","race_number":2,"seq":4,"odds":[{"horse_no":"C3","win_odds":3.1,"win_prob":0.3226,"first_win_odds":3.1,"win_move_pct":0.0}],"market":{"clock":"2026-11-21T12:00:00.000Z","win_book_pct":32.26,"favourites":["C3"],"steamers":[],"drifters":[]}}"#
    );
}

#[tokio::test]
async fn a_document_as_of_a_point_has_the_race_status_of_that_point() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let before = publish(
        &nats,
        &mut app,
        &[
            envelope(card(DAY, ST, 1, &["A1"])),
            envelope(odds_at(DAY, ST, 1, &[("A1", 2.5)])),
        ],
    )
    .await;
    let opened = publish(
        &nats,
        &mut app,
        &[stamped(
            status(DAY, None, 1, RaceStatus::Open, None),
            "2026-11-25T11:00:00Z",
        )],
    )
    .await;
    let off = publish(
        &nats,
        &mut app,
        &[stamped(
            status(DAY, Some(ST), 1, RaceStatus::Off, Some("on time")),
            "2026-11-25T12:00:00Z",
        )],
    )
    .await;
    let odds = |at: u64| format!("/api/v1/odds/{DAY}/1?as_of={at}");
    let card = |at: u64| format!("/api/v1/racecards/{DAY}?as_of={at}");
    let open = [
        json!("open"),
        json!("2026-11-25T11:00:00.000Z"),
        Value::Null,
    ];
    let is_off = [
        json!("off"),
        json!("2026-11-25T12:00:00.000Z"),
        json!("on time"),
    ];
    assert_eq!(ok(&app, &odds(before)).await.get("status"), None);
    assert_eq!(race(&ok(&app, &card(before)).await, 1).get("status"), None);
    assert_eq!(status_of(&ok(&app, &odds(opened)).await), open);
    assert_eq!(status_of(&race(&ok(&app, &card(opened)).await, 1)), open);
    assert_eq!(status_of(&ok(&app, &odds(off)).await), is_off);
    assert_eq!(status_of(&race(&ok(&app, &card(off)).await, 1)), is_off);
}

#[tokio::test]
async fn place_prices_are_served_in_the_odds_document_its_history_and_live_frames() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let first = publish(
        &nats,
        &mut app,
        &[
            envelope(odds_with_place(
                DAY,
                Some(ST),
                1,
                &[("A1", Some(2.5), Some(1.3)), ("B2", Some(6.0), None)],
            )),
            stamped(
                status(DAY, Some(ST), 1, RaceStatus::Open, None),
                "2026-11-25T11:00:00Z",
            ),
        ],
    )
    .await;
    let mut client = Client::connect(&app).await;
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1}))
        .await;
    assert_eq!(
        without_market(client.next_message().await),
        json!({"type": "snapshot", "date": DAY, "venue": ST, "race_number": 1, "seq": first - 1,
               "status": "open", "status_at": "2026-11-25T11:00:00.000Z",
               "odds": [{"horse_no": "A1", "win_odds": 2.5, "place_odds": 1.3},
                        {"horse_no": "B2", "win_odds": 6.0}]})
    );
    // A runner given one of the two keeps its last other one.
    let second = publish(
        &nats,
        &mut app,
        &[envelope(odds_with_place(
            DAY,
            Some(ST),
            1,
            &[("A1", None, Some(1.2)), ("C3", None, Some(3.0))],
        ))],
    )
    .await;
    let frame = client.next_message().await;
    assert_eq!(frame["type"], "odds");
    assert_eq!(frame["seq"], second);
    assert_eq!(
        frame["odds"],
        json!([{"horse_no": "A1", "place_odds": 1.2}, {"horse_no": "C3", "place_odds": 3.0}])
    );
    let doc = ok(&app, &format!("/api/v1/odds/{DAY}/1")).await;
    // The place book: 1 / 1.2 + 1 / 3.0, in percent.
    assert_eq!(doc["market"]["place_book_pct"], 116.67);
    assert_eq!(
        without_market(doc)["odds"],
        json!([{"horse_no": "A1", "win_odds": 2.5, "place_odds": 1.2},
               {"horse_no": "B2", "win_odds": 6.0},
               {"horse_no": "C3", "place_odds": 3.0}])
    );
    let history = ok(&app, &format!("/api/v1/odds/{DAY}/1/history")).await;
    let moves: Vec<&Value> = history["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| &m["odds"])
        .collect();
    assert_eq!(
        moves,
        [
            &json!([{"horse_no": "A1", "win_odds": 2.5, "place_odds": 1.3},
                    {"horse_no": "B2", "win_odds": 6.0}]),
            &frame["odds"],
        ]
    );
    // As of the first move, the place price of then.
    let then = ok(&app, &format!("/api/v1/odds/{DAY}/1?as_of={first}")).await;
    assert_eq!(
        without_market(then)["odds"][0],
        json!({"horse_no": "A1", "win_odds": 2.5, "place_odds": 1.3})
    );
}

/// The value of the counter `name` on the service's `/metrics`; 0 before it is first met.
#[tokio::test]
async fn a_race_not_priced_yet_is_snapshotted_with_its_status() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    publish(
        &nats,
        &mut app,
        &[
            envelope(card(DAY, ST, 1, &["A1"])),
            envelope(card(DAY, ST, 2, &["B2"])),
            stamped(
                status(
                    DAY,
                    Some(ST),
                    2,
                    RaceStatus::Suspended,
                    Some("a \"late\" scratching"),
                ),
                "2026-11-25T11:00:00Z",
            ),
            stamped(
                status(DAY, None, 3, RaceStatus::Abandoned, None),
                "2026-11-25T11:05:00Z",
            ),
        ],
    )
    .await;
    let suspended = json!({"type": "snapshot", "date": DAY, "venue": ST, "race_number": 2,
        "seq": 0, "status": "suspended", "status_at": "2026-11-25T11:00:00.000Z",
        "status_reason": "a \"late\" scratching", "odds": []});
    let abandoned = json!({"type": "snapshot", "date": DAY, "venue": null, "race_number": 3,
        "seq": 0, "status": "abandoned", "status_at": "2026-11-25T11:05:00.000Z", "odds": []});
    let mut client = Client::connect(&app).await;
    // Neither priced nor given a status: the one empty snapshot, as ever.
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1}))
        .await;
    assert_eq!(
        client.next_message().await,
        json!({"type": "snapshot", "date": DAY, "venue": null, "race_number": 1, "seq": 0,
               "odds": []})
    );
    // Given a status: the status, with no odds.
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 2}))
        .await;
    assert_eq!(client.next_message().await, suspended);
    // The meeting: each race priced or given a status, in race order.
    let mut meeting = Client::connect(&app).await;
    meeting
        .send(json!({"type": "subscribe", "date": DAY}))
        .await;
    assert_eq!(meeting.next_message().await, suspended);
    assert_eq!(meeting.next_message().await, abandoned);
}

async fn counter(app: &App, name: &str) -> f64 {
    let (_, metrics) = crate::projector::admin_answer(app, "/metrics").await;
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn odds_for_a_race_already_off_are_applied_and_counted_as_late_prices() {
    const LATE: &str = "racing_late_prices_total";
    let (nats, mut app, _dir) = service_with(&[]).await;
    publish(
        &nats,
        &mut app,
        &[
            envelope(odds_at(DAY, ST, 1, &[("A1", 2.5)])),
            envelope(status(DAY, Some(ST), 1, RaceStatus::Suspended, None)),
            envelope(odds_at(DAY, ST, 1, &[("A1", 2.4)])),
        ],
    )
    .await;
    // The recorder is the process's: other tests' late prices may count meanwhile.
    let before = counter(&app, LATE).await;
    publish(
        &nats,
        &mut app,
        &[
            envelope(status(DAY, None, 1, RaceStatus::Off, None)),
            envelope(odds_at(DAY, ST, 1, &[("A1", 2.3)])),
            envelope(odds(DAY, 1, &[("B2", 7.0)])),
        ],
    )
    .await;
    // Counted once the batch's commit is done, a moment after its checkpoint is seen.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let after = counter(&app, LATE).await;
        if after - before >= 2.0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{LATE} went from {before} to {after}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Applied as usual: the log is the truth.
    let doc = ok(&app, &format!("/api/v1/odds/{DAY}/1")).await;
    assert_eq!(
        without_market(doc)["odds"],
        json!([{"horse_no": "A1", "win_odds": 2.3}, {"horse_no": "B2", "win_odds": 7.0}])
    );
}
