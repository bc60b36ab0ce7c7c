//! Discovery end to end: the meetings of a range of dates, horses by name, jockeys and
//! trainers, through a real JetStream stream, the projector and HTTP; amendments and
//! retractions included, and every 400 and 404 of these endpoints.

use racing_events::samples::{card, envelope, profile, result, retraction, runner};
use racing_events::{Envelope, ResultRunner};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{service_with, App};

/// Today in the service's default zone, moved by `days`.
fn day(days: i64) -> String {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::get("Asia/Hong_Kong").expect("zone"))
        .date();
    today
        .checked_add(jiff::Span::new().days(days))
        .expect("date")
        .to_string()
}

async fn bad_request(app: &App, path: &str) -> String {
    let (status, body) = app.get(path).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
    assert_eq!(body["error"], "bad_request", "{path}");
    body["message"].as_str().expect("message").to_owned()
}

fn ride(
    position: Option<i64>,
    horse: &str,
    name: &str,
    jockey: &str,
    trainer: &str,
) -> ResultRunner {
    let mut r = runner(position, horse);
    r.horse_name = name.into();
    r.jockey = jockey.into();
    r.trainer = trainer.into();
    r
}

#[tokio::test]
async fn meetings_are_listed_by_date_for_a_range_or_around_today() {
    let (hv, st) = ("Happy Valley", "Sha Tin");
    let events: Vec<Envelope> = [
        card(&day(-5), hv, 1, &["A1"]),
        card(&day(-5), hv, 2, &["B2"]),
        result(&day(-5), hv, 1, vec![runner(Some(1), "A1")]),
        result(&day(-5), st, 3, vec![runner(Some(1), "C3")]),
        card(&day(3), st, 1, &["D4"]),
        // Outside the default range: 40 days ago and 20 days ahead.
        result(&day(-40), st, 1, vec![runner(Some(1), "E5")]),
        card(&day(20), st, 1, &["F6"]),
        // Retracted: no meeting left that day.
        card(&day(-2), st, 1, &["G7"]),
        retraction(&day(-2), st, 1, "void"),
        // Years from now, for a range of more than 366 days, a page at a time.
        card("2031-01-10", st, 1, &["H8"]),
        card("2031-06-01", hv, 1, &["J9"]),
        card("2032-08-01", st, 1, &["K1"]),
        card("2035-02-02", st, 1, &["L2"]),
    ]
    .into_iter()
    .map(envelope)
    .collect();
    let (_nats, app, _dir) = service_with(&events).await;

    let (status, body) = app.get("/api/v1/meetings").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({
            "from": day(-30), "to": day(14),
            "meetings": [
                {"date": day(-5), "venue": hv, "races": 2, "card": true, "results": 1},
                {"date": day(-5), "venue": st, "races": 1, "card": false, "results": 1},
                {"date": day(3), "venue": st, "races": 1, "card": true, "results": 0}
            ],
            "next": null
        })
    );
    let path = format!("/api/v1/meetings?from={}&to={}", day(-40), day(-5));
    let (status, body) = app.get(&path).await;
    assert_eq!(status, StatusCode::OK);
    let dates: Vec<&str> = body["meetings"]
        .as_array()
        .expect("meetings")
        .iter()
        .map(|m| m["date"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(dates, [day(-40), day(-5), day(-5)]);
    // Only `from`: to 14 days ahead; only `to`: from 30 days back.
    let (_, body) = app.get(&format!("/api/v1/meetings?from={}", day(10))).await;
    assert_eq!(
        (&body["to"], &body["meetings"]),
        (&json!(day(14)), &json!([]))
    );
    let (_, body) = app.get(&format!("/api/v1/meetings?to={}", day(25))).await;
    assert_eq!(body["from"], json!(day(-30)));
    assert_eq!(body["meetings"].as_array().map(Vec::len), Some(4));
    // A page covers 366 days: a longer range answers its first 366 days and where it
    // goes on, the first date after them with a meeting, skipping the years without.
    let (status, body) = app
        .get("/api/v1/meetings?from=2024-01-01&to=2024-12-31")
        .await;
    assert_eq!(status, StatusCode::OK, "2024 has 366 days");
    assert_eq!(
        (&body["to"], &body["next"]),
        (&json!("2024-12-31"), &Value::Null)
    );
    let mut pages = Vec::new();
    let mut from = "2031-01-01".to_owned();
    loop {
        let path = format!("/api/v1/meetings?from={from}&to=2099-12-31");
        let (status, body) = app.get(&path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        let dates: Vec<String> = body["meetings"]
            .as_array()
            .expect("meetings")
            .iter()
            .map(|m| m["date"].as_str().unwrap_or_default().to_owned())
            .collect();
        pages.push((body["from"].clone(), body["to"].clone(), dates));
        match body["next"].as_str() {
            Some(next) => from = next.to_owned(),
            None => break,
        }
        assert!(pages.len() < 10, "paging ends: {pages:?}");
    }
    assert_eq!(
        pages,
        [
            (
                json!("2031-01-01"),
                json!("2032-01-01"),
                vec!["2031-01-10".to_owned(), "2031-06-01".to_owned()]
            ),
            (
                json!("2032-08-01"),
                json!("2033-08-01"),
                vec!["2032-08-01".to_owned()]
            ),
            (
                json!("2035-02-02"),
                json!("2036-02-02"),
                vec!["2035-02-02".to_owned()]
            ),
        ]
    );
    // The range of the calendar's widest schema-valid request, and one from a year past.
    let (status, body) = app
        .get("/api/v1/meetings?from=2026-11-01&to=6230-11-14")
        .await;
    assert_eq!(
        (status, &body["to"]),
        (StatusCode::OK, &json!("2027-11-01"))
    );
    let (status, body) = app.get("/api/v1/meetings?from=2000-01-01").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["meetings"], json!([]));
    assert!(body["next"].is_string(), "it goes on to today's: {body}");
    // A `from` after `to` is a range of no dates.
    let (status, body) = app
        .get("/api/v1/meetings?from=2031-02-01&to=2031-01-31")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"from": "2031-02-01", "to": "2031-01-31", "meetings": [], "next": null})
    );

    let message = bad_request(&app, "/api/v1/meetings?from=2026-02-30").await;
    assert!(message.contains("2026-02-30"), "{message}");
    bad_request(&app, "/api/v1/meetings?to=tomorrow").await;
    bad_request(&app, "/api/v1/meetings?venue=Sha+Tin").await;
}

#[tokio::test]
async fn horses_are_found_by_part_of_a_name_old_or_new() {
    let events: Vec<Envelope> = [
        profile("E271", "GOLDEN SIXTY"),
        result(
            "2026-11-01",
            "Sha Tin",
            1,
            vec![
                ride(
                    Some(1),
                    "K307",
                    "ROMANTIC WARRIOR",
                    "J McDonald",
                    "C S Shum",
                ),
                ride(Some(2), "A101", "SIXTY SPIRIT", "Z Purton", "J Size"),
                ride(Some(3), "B202", "GOLDEN EMPIRE", "H Bowman", "J Size"),
            ],
        ),
        // Renamed by a later result.
        result(
            "2026-11-08",
            "Sha Tin",
            2,
            vec![ride(Some(1), "B202", "SILVER EMPIRE", "H Bowman", "J Size")],
        ),
    ]
    .into_iter()
    .map(envelope)
    .collect();
    let (_nats, app, _dir) = service_with(&events).await;

    let (status, body) = app.get("/api/v1/horses?name=sixty").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"horses": [
            {"horse_no": "A101", "horse_name": "SIXTY SPIRIT"},
            {"horse_no": "E271", "horse_name": "GOLDEN SIXTY"}
        ]})
    );
    let (_, body) = app.get("/api/v1/horses?name=GoLdEn").await;
    assert_eq!(
        body,
        json!({"horses": [
            {"horse_no": "E271", "horse_name": "GOLDEN SIXTY"},
            {"horse_no": "B202", "horse_name": "SILVER EMPIRE"}
        ]}),
        "found by its old name, listed under its new one"
    );
    let (_, body) = app.get("/api/v1/horses?name=empire&limit=1").await;
    assert_eq!(
        body,
        json!({"horses": [{"horse_no": "B202", "horse_name": "SILVER EMPIRE"}]})
    );
    let (_, body) = app.get("/api/v1/horses?name=nobody").await;
    assert_eq!(body, json!({"horses": []}));

    for path in [
        "/api/v1/horses",
        "/api/v1/horses?name=x",
        "/api/v1/horses?name=",
        "/api/v1/horses?limit=5",
        "/api/v1/horses?name=sixty&limit=0",
        "/api/v1/horses?name=sixty&limit=101",
        "/api/v1/horses?name=sixty&limit=05",
        "/api/v1/horses?name=sixty&page=2",
    ] {
        bad_request(&app, path).await;
    }
    let long = "a".repeat(51);
    let message = bad_request(&app, &format!("/api/v1/horses?name={long}")).await;
    assert!(message.contains("2 to 50"), "{message}");
    let (status, _) = app
        .get(&format!("/api/v1/horses?name={}", "a".repeat(50)))
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn jockeys_and_trainers_have_records_kept_through_amendments_and_retractions() {
    let mut withdrawn = ride(None, "W1", "WITHDRAWN ONE", "Z Purton", "J Size");
    withdrawn.status = Some("WV".into());
    let events: Vec<Envelope> = [
        result(
            "2026-08-30",
            "Sha Tin",
            1,
            vec![
                ride(Some(1), "A1", "ALPHA", "Z Purton", "J Size"),
                ride(Some(2), "B2", "BRAVO", "H Bowman", "C S Shum"),
                withdrawn,
            ],
        ),
        result(
            "2026-09-06",
            "Sha Tin",
            1,
            vec![
                ride(Some(3), "A1", "ALPHA", "Z Purton", "J Size"),
                ride(Some(1), "B2", "BRAVO", "H Bowman", "C S Shum"),
            ],
        ),
        result(
            "2026-09-13",
            "Happy Valley",
            4,
            vec![ride(Some(1), "A1", "ALPHA", "Z Purton", "J Size")],
        ),
        // Amended: Bowman rode A1 in that race, and it was second.
        result(
            "2026-09-13",
            "Happy Valley",
            4,
            vec![ride(Some(2), "A1", "ALPHA", "H Bowman", "J Size")],
        ),
        result(
            "2026-09-20",
            "Sha Tin",
            2,
            vec![ride(Some(1), "B2", "BRAVO", "Z Purton", "C S Shum")],
        ),
        retraction("2026-09-20", "Sha Tin", 2, "void race"),
    ]
    .into_iter()
    .map(envelope)
    .collect();
    let (_nats, app, _dir) = service_with(&events).await;

    let (status, z) = app.get("/api/v1/jockeys/z-purton").await;
    assert_eq!(status, StatusCode::OK, "{z}");
    assert_eq!(
        z,
        json!({
            "id": "z-purton", "name": "Z Purton", "rides": 2, "wins": 1, "seconds": 0,
            "thirds": 1, "win_pct": 50.0, "top3_pct": 100.0,
            "seasons": [
                {"season": "2026/27", "rides": 1, "wins": 0, "seconds": 0, "thirds": 1},
                {"season": "2025/26", "rides": 1, "wins": 1, "seconds": 0, "thirds": 0}
            ],
            "recent": [
                {"date": "2026-09-06", "venue": "Sha Tin", "race_number": 1, "horse_no": "A1",
                 "horse_name": "ALPHA", "position": 3, "status": null, "win_odds": 4.5},
                {"date": "2026-08-30", "venue": "Sha Tin", "race_number": 1, "horse_no": "A1",
                 "horse_name": "ALPHA", "position": 1, "status": null, "win_odds": 4.5}
            ]
        })
    );
    let (_, h) = app.get("/api/v1/jockeys/h-bowman").await;
    assert_eq!(
        (
            &h["rides"],
            &h["wins"],
            &h["seconds"],
            &h["win_pct"],
            &h["top3_pct"]
        ),
        (&json!(3), &json!(1), &json!(2), &json!(33.3), &json!(100.0))
    );
    assert_eq!(h["recent"][0]["date"], "2026-09-13");
    let (status, shum) = app.get("/api/v1/trainers/c-s-shum").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (&shum["name"], &shum["rides"]),
        (&json!("C S Shum"), &json!(2))
    );
    let (_, size) = app.get("/api/v1/trainers/j-size").await;
    assert_eq!((&size["rides"], &size["wins"]), (&json!(3), &json!(1)));

    let (status, list) = app.get("/api/v1/jockeys").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        list,
        json!({"jockeys": [
            {"id": "h-bowman", "name": "H Bowman", "rides": 3},
            {"id": "z-purton", "name": "Z Purton", "rides": 2}
        ]})
    );
    let (_, list) = app.get("/api/v1/jockeys?name=PURT").await;
    assert_eq!(
        list,
        json!({"jockeys": [{"id": "z-purton", "name": "Z Purton", "rides": 2}]})
    );
    let (_, list) = app.get("/api/v1/trainers").await;
    assert_eq!(
        list,
        json!({"trainers": [
            {"id": "c-s-shum", "name": "C S Shum", "rides": 2},
            {"id": "j-size", "name": "J Size", "rides": 3}
        ]})
    );
    let (_, list) = app.get("/api/v1/trainers?name=nobody").await;
    assert_eq!(list, json!({"trainers": []}));

    // A stored document answers with its ETag, and 304 to it.
    let res = app.response("/api/v1/jockeys/z-purton").await;
    let etag = res.headers()["etag"].clone();
    let again = app
        .client
        .get(format!("{}/api/v1/jockeys/z-purton", app.base))
        .header("X-API-Key", crate::support::KEY)
        .header("If-None-Match", etag)
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    for path in ["/api/v1/jockeys/nobody", "/api/v1/trainers/z-purton"] {
        let (status, body) = app.get(path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_eq!(body["error"], "not_found");
    }
    for path in [
        "/api/v1/jockeys/Z-Purton",
        "/api/v1/jockeys/z--purton",
        "/api/v1/jockeys/-z",
        "/api/v1/jockeys/z%20purton",
        "/api/v1/trainers/j_size",
        "/api/v1/trainers/j-size-",
        "/api/v1/jockeys/z-purton?limit=5",
        "/api/v1/jockeys?name=z",
        "/api/v1/trainers?name=",
        "/api/v1/trainers?id=j-size",
    ] {
        bad_request(&app, path).await;
    }
    let (status, _) = app
        .get(&format!("/api/v1/jockeys/{}", "a".repeat(101)))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn people_lists_are_empty_before_any_result() {
    let (_nats, app, _dir) = service_with(&[envelope(profile("E271", "GOLDEN SIXTY"))]).await;
    let (status, body) = app.get("/api/v1/jockeys").await;
    assert_eq!((status, body), (StatusCode::OK, json!({"jockeys": []})));
    let (status, body) = app.get("/api/v1/trainers?name=size").await;
    assert_eq!((status, body), (StatusCode::OK, json!({"trainers": []})));
    let (status, body): (StatusCode, Value) = app.get("/api/v1/horses?name=golden").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["horses"][0]["horse_no"], "E271");
}

#[tokio::test]
async fn a_persons_record_and_list_read_before_a_result_are_read_anew_after_it() {
    let first = result(
        "2026-09-06",
        "Sha Tin",
        1,
        vec![ride(Some(1), "A1", "ALPHA", "Z Purton", "J Size")],
    );
    let (nats, mut app, _dir) = service_with(&[envelope(first)]).await;
    // Read, and so kept in memory by the service.
    for _ in 0..2 {
        let (_, z) = app.get("/api/v1/jockeys/z-purton").await;
        assert_eq!((&z["rides"], &z["wins"]), (&json!(1), &json!(1)));
        let (_, list) = app.get("/api/v1/jockeys").await;
        assert_eq!(list["jockeys"].as_array().map(Vec::len), Some(1));
    }
    let before = app.response("/api/v1/jockeys/z-purton").await;
    let etag = before.headers()["etag"].clone();

    let next = result(
        "2026-09-13",
        "Sha Tin",
        2,
        vec![
            ride(Some(2), "A1", "ALPHA", "Z Purton", "J Size"),
            ride(Some(1), "B2", "BRAVO", "H Bowman", "C S Shum"),
        ],
    );
    let seq = nats.publish(&[envelope(next)]).await;
    app.projected(seq).await;

    let (_, z) = app.get("/api/v1/jockeys/z-purton").await;
    assert_eq!((&z["rides"], &z["seconds"]), (&json!(2), &json!(1)));
    assert_eq!(z["recent"][0]["date"], "2026-09-13");
    let after = app.response("/api/v1/jockeys/z-purton").await;
    assert_ne!(after.headers()["etag"], etag, "a new ETag for a new record");
    let (_, list) = app.get("/api/v1/jockeys").await;
    assert_eq!(
        list,
        json!({"jockeys": [
            {"id": "h-bowman", "name": "H Bowman", "rides": 1},
            {"id": "z-purton", "name": "Z Purton", "rides": 2}
        ]})
    );
}
