//! The HTTP API end to end: events published to a real JetStream stream, projected into
//! sled, read back over HTTP with every rule of docs/api.md.

use racing_events::samples::{card, envelope, profile, result, runner, scratch};
use racing_events::Envelope;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::support::{service_with, App, Nats, KEY};

const DAY: &str = "2026-11-18";

/// A Happy Valley meeting of three races, one with a dead heat and a pulled-up runner,
/// and a profile for one runner.
fn meeting() -> Vec<Envelope> {
    let mut dh_a = runner(Some(1), "E271");
    let mut dh_b = runner(Some(1), "CA206");
    dh_a.dead_heat = true;
    dh_b.dead_heat = true;
    [
        profile("E271", "GOLDEN SIXTY"),
        result(
            DAY,
            "Happy Valley",
            2,
            vec![runner(Some(2), "E271"), runner(Some(1), "H101")],
        ),
        result(
            DAY,
            "Happy Valley",
            1,
            vec![runner(None, "G045"), runner(Some(3), "H102"), dh_b, dh_a],
        ),
        result("2026-11-15", "Sha Tin", 5, vec![runner(Some(4), "E271")]),
    ]
    .into_iter()
    .map(envelope)
    .collect()
}

const UNAUTHORIZED: &str = r#"{"error":"unauthorized","message":"Invalid or missing API key"}"#;

#[tokio::test]
async fn every_path_needs_the_key_before_routing() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    // An example of each route of the table, and paths that are none.
    let table = racing::http::ROUTES.iter().map(|r| r.example());
    let others = [
        "/api/v1/results/not-a-date",
        "/api/v1/nowhere",
        "/nowhere",
        "/pricing/",
    ];
    let paths: Vec<String> = table.chain(others.map(str::to_owned)).collect();
    for path in &paths {
        for key in [None, Some("wrong"), Some(""), Some("test-key-012345678")] {
            let mut req = app.client.get(format!("{}{path}", app.base));
            if let Some(k) = key {
                req = req.header("X-API-Key", k);
            }
            let res = req.send().await.expect("request");
            assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{path} {key:?}");
            assert_eq!(res.headers()["content-type"], "application/json");
            assert_eq!(res.text().await.expect("body"), UNAUTHORIZED, "{path}");
        }
    }
    // Any method, too: the key comes before the 405.
    let res = app
        .client
        .post(format!("{}/api/v1/horses/E271", app.base))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    // The header name is case-insensitive.
    let res = app
        .client
        .get(format!("{}/api/v1/horses/E271", app.base))
        .header("x-api-key", KEY)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::OK);
    // The WebSocket's query parameter is no key for the HTTP API.
    let (status, _) = app
        .get_with(&format!("/api/v1/horses/E271?api_key={KEY}"), None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn profile_answers_the_interface_fields_and_404s_an_unknown_horse() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    let (status, body) = app.get("/api/v1/horses/E271").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"horse_no":"E271","horse_name":"GOLDEN SIXTY","country_of_origin":"NZ",
               "colour":"Bay","sex":"Gelding","age":5,"trainer":"J Size","owner":"The Syndicate",
               "total_stakes":1250000,"starts":10,"wins":2,"places":3})
    );
    let (status, body) = app.get("/api/v1/horses/Z999").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "not_found");
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("Z999"));
    // Known only from results: no profile, but form.
    assert_eq!(
        app.get("/api/v1/horses/H101").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.get("/api/v1/horses/H101/form").await.0, StatusCode::OK);
    let (status, body) = app.get("/api/v1/horses/E%20271").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "bad_request");
}

#[tokio::test]
async fn form_lists_newest_race_first_and_honours_limit() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    let (status, body) = app.get("/api/v1/horses/E271/form").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["horse_no"], "E271");
    assert_eq!(body["horse_name"], "GOLDEN SIXTY");
    let races: Vec<(Value, Value, Value)> = body["form"]
        .as_array()
        .expect("form")
        .iter()
        .map(|e| {
            (
                e["date"].clone(),
                e["race_number"].clone(),
                e["position"].clone(),
            )
        })
        .collect();
    assert_eq!(
        races,
        [
            (json!(DAY), json!(2), json!(2)),
            (json!(DAY), json!(1), json!(1)),
            (json!("2026-11-15"), json!(5), json!(4)),
        ]
    );
    let entry = &body["form"][1];
    for field in [
        "venue",
        "distance",
        "finish_time",
        "win_odds",
        "jockey",
        "status",
    ] {
        assert!(entry.get(field).is_some(), "form entry lacks {field}");
    }
    assert_eq!(entry["dead_heat"], true);

    let (_, limited) = app.get("/api/v1/horses/E271/form?limit=1").await;
    assert_eq!(limited["form"].as_array().map(Vec::len), Some(1));
    assert_eq!(limited["form"][0]["race_number"], 2);
    for bad in ["0", "1001", "x", "-1", "1.5", "", "01"] {
        let (status, body) = app
            .get(&format!("/api/v1/horses/E271/form?limit={bad}"))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "limit={bad}");
        assert!(body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("limit"));
    }
    let (status, _) = app.get("/api/v1/horses/E271/form?limit=1&limit=2").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = app.get("/api/v1/horses/NOBODY/form").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn results_list_races_in_order_with_dead_heats_and_non_finishers() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    let (status, body) = app.get(&format!("/api/v1/results/{DAY}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["date"], DAY);
    assert_eq!(body["venue"], "Happy Valley");
    assert!(
        body.get("meetings").is_none(),
        "one meeting: the interface shape"
    );
    let numbers: Vec<&Value> = body["races"]
        .as_array()
        .expect("races")
        .iter()
        .map(|r| &r["race_number"])
        .collect();
    assert_eq!(numbers, [&json!(1), &json!(2)]);
    let runners = body["races"][0]["runners"].as_array().expect("runners");
    let order: Vec<(&str, &Value, &Value)> = runners
        .iter()
        .map(|r| {
            (
                r["horse_no"].as_str().unwrap_or_default(),
                &r["position"],
                &r["dead_heat"],
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("CA206", &json!(1), &json!(true)),
            ("E271", &json!(1), &json!(true)),
            ("H102", &json!(3), &json!(false)),
            ("G045", &Value::Null, &json!(false)),
        ]
    );
    assert_eq!(runners[3]["status"], "PU");
    assert_eq!(runners[3]["finish_time"], Value::Null);
    for field in ["race_name", "distance", "going"] {
        assert!(body["races"][0].get(field).is_some(), "race lacks {field}");
    }
    let (status, body) = app.get("/api/v1/results/2026-11-19").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("2026-11-19"));
}

#[tokio::test]
async fn a_single_race_has_the_meeting_date_and_venue() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    let (status, body) = app.get(&format!("/api/v1/results/{DAY}/2")).await;
    assert_eq!(status, StatusCode::OK);
    let keys: Vec<&String> = body.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "date",
            "venue",
            "race_number",
            "race_name",
            "distance",
            "going",
            "runners"
        ]
    );
    assert_eq!(body["venue"], "Happy Valley");
    assert_eq!(body["runners"][0]["horse_no"], "H101");
    let (status, body) = app.get(&format!("/api/v1/results/{DAY}/3")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("race 3"));
}

#[tokio::test]
async fn malformed_dates_and_race_numbers_are_bad_requests() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    for date in [
        "2026-02-29",
        "2026-13-01",
        "2026-1-01",
        "20261118",
        "yesterday",
        "2026-11-18x",
    ] {
        for path in [
            format!("/api/v1/results/{date}"),
            format!("/api/v1/racecards/{date}"),
            format!("/api/v1/results/{date}/1"),
        ] {
            let (status, body) = app.get(&path).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
            assert_eq!(body["error"], "bad_request");
            assert!(
                body["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("date"),
                "{path}"
            );
        }
    }
    for n in ["0", "100", "x", "-1", "1.0", "+1", "1e1", "01", "001"] {
        let (status, body) = app.get(&format!("/api/v1/results/{DAY}/{n}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "race {n}");
        assert!(body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("race number"));
    }
    let (status, body) = app.get(&format!("/api/v1/results/{DAY}?sort=asc")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("sort"));
}

#[tokio::test]
async fn race_cards_by_date_drop_scratched_runners() {
    let date = "2026-11-25";
    let events: Vec<Envelope> = [
        scratch(date, 1, "B2"),
        card(date, "Happy Valley", 2, &["D4", "E5"]),
        card(date, "Happy Valley", 1, &["A1", "B2", "C3"]),
        scratch(date, 2, "E5"),
    ]
    .into_iter()
    .map(envelope)
    .collect();
    let (_nats, app, _dir) = service_with(&events).await;
    let (status, body) = app.get(&format!("/api/v1/racecards/{date}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["venue"], "Happy Valley");
    let race1 = &body["races"][0];
    assert_eq!(race1["race_number"], 1);
    assert_eq!(race1["class"], "Class 4");
    let horses: Vec<&Value> = race1["runners"]
        .as_array()
        .expect("runners")
        .iter()
        .map(|r| &r["horse_no"])
        .collect();
    assert_eq!(horses, [&json!("A1"), &json!("C3")]);
    let runner = race1["runners"][0].as_object().expect("runner");
    let fields: Vec<&String> = runner.keys().collect();
    assert_eq!(
        fields,
        [
            "horse_no",
            "horse_name",
            "jockey",
            "trainer",
            "draw",
            "weight",
            "form"
        ]
    );
    assert_eq!(
        body["races"][1]["runners"].as_array().map(Vec::len),
        Some(1)
    );
    let (status, body) = app.get("/api/v1/racecards/2026-11-26").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("2026-11-26"));
}

#[tokio::test]
async fn todays_card_follows_the_configured_time_zone() {
    let zone = "Pacific/Kiritimati"; // UTC+14: "today" there is often tomorrow in UTC
    let tz = jiff::tz::TimeZone::get(zone).expect("zone");
    let today = jiff::Timestamp::now()
        .to_zoned(tz.clone())
        .date()
        .to_string();
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.timezone = tz;
        c.timezone_name = zone.into();
    })
    .await;
    app.projected(0).await;
    let (status, body) = app.get("/api/v1/racecards/today").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&today) && message.contains(zone),
        "{message}"
    );

    let last = nats
        .publish(&[envelope(card(&today, "Sha Tin", 1, &["A1"]))])
        .await;
    app.projected(last).await;
    let (status, body) = app.get("/api/v1/racecards/today").await;
    // The day may have turned between the two reads; then the 404 names the new day.
    let now = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::get(zone).expect("zone"))
        .date()
        .to_string();
    if now == today {
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["date"], today);
        assert_eq!(body["races"][0]["runners"][0]["horse_no"], "A1");
    }
}

#[tokio::test]
async fn other_methods_unknown_paths_and_head_answer_as_the_contract_says() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    for method in [
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
        reqwest::Method::PATCH,
    ] {
        let res = app
            .client
            .request(method.clone(), format!("{}/api/v1/horses/E271", app.base))
            .header("X-API-Key", KEY)
            .body("{}")
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(res.headers()["allow"], "GET, HEAD");
        let body: Value = res.json().await.expect("json");
        assert_eq!(body["error"], "method_not_allowed");
    }
    // A path that takes other methods names its own in `Allow`.
    let res = app
        .client
        .request(
            reqwest::Method::PUT,
            format!("{}/api/v1/webhooks", app.base),
        )
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
    let allow = res.headers()["allow"].to_str().expect("an Allow header");
    assert!(allow.contains("GET") && allow.contains("POST"), "{allow}");
    let (status, body) = app.get("/api/v1/nowhere").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "not_found");
    let res = app
        .client
        .head(format!("{}/api/v1/horses/E271", app.base))
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/json");
}

#[tokio::test]
async fn an_amended_result_replaces_the_race_and_the_forms() {
    let first = result(
        DAY,
        "Happy Valley",
        4,
        vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
    );
    let amended = result(
        DAY,
        "Happy Valley",
        4,
        vec![runner(Some(1), "B2"), runner(Some(2), "C3")],
    );
    let (nats, mut app, _dir) = service_with(&[envelope(first)]).await;
    assert_eq!(app.get("/api/v1/horses/A1/form").await.0, StatusCode::OK);
    let last = nats.publish(&[envelope(amended)]).await;
    app.projected(last).await;
    let (_, race) = app.get(&format!("/api/v1/results/{DAY}/4")).await;
    assert_eq!(race["runners"][0]["horse_no"], "B2");
    assert_eq!(race["runners"][1]["horse_no"], "C3");
    assert_eq!(
        app.get("/api/v1/horses/A1/form").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get("/api/v1/horses/B2/form").await.1["form"][0]["position"],
        1
    );
    assert_eq!(
        app.get("/api/v1/horses/C3/form").await.1["form"][0]["position"],
        2
    );
}

#[tokio::test]
async fn a_date_with_two_meetings_lists_them_and_takes_a_venue() {
    let events: Vec<Envelope> = [
        result(DAY, "Happy Valley", 1, vec![runner(Some(1), "A1")]),
        result(DAY, "Sha Tin", 1, vec![runner(Some(1), "B1")]),
        result(DAY, "Sha Tin", 2, vec![runner(Some(1), "B2")]),
    ]
    .into_iter()
    .map(envelope)
    .collect();
    let (_nats, app, _dir) = service_with(&events).await;
    let (_, body) = app.get(&format!("/api/v1/results/{DAY}")).await;
    assert_eq!(body["venue"], "Sha Tin");
    assert_eq!(body["meetings"], json!(["Happy Valley", "Sha Tin"]));
    let (_, body) = app
        .get(&format!("/api/v1/results/{DAY}?venue=Happy%20Valley"))
        .await;
    assert_eq!(body["venue"], "Happy Valley");
    let (_, body) = app
        .get(&format!("/api/v1/results/{DAY}/1?venue=Happy+Valley"))
        .await;
    assert_eq!(body["runners"][0]["horse_no"], "A1");
    let (status, body) = app
        .get(&format!("/api/v1/results/{DAY}?venue=Kranji"))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("Kranji"));
    let (status, _) = app.get(&format!("/api/v1/results/{DAY}?venue=")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn documents_carry_a_strong_etag_and_unchanged_ones_answer_304() {
    let (nats, mut app, _dir) = service_with(&meeting()).await;
    let url = format!("{}/api/v1/results/{DAY}", app.base);
    let first = app
        .client
        .get(&url)
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("request");
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(first.headers()["cache-control"], "private, no-cache");
    let etag = first.headers()["etag"].to_str().expect("ascii").to_owned();
    assert!(
        etag.starts_with('"') && !etag.starts_with("W/"),
        "strong: {etag}"
    );

    let again = app
        .client
        .get(&url)
        .header("X-API-Key", KEY)
        .header("If-None-Match", &etag)
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["etag"], etag.as_str());
    assert!(again.bytes().await.expect("body").is_empty());

    // An amendment changes the document, so the old tag no longer matches.
    let amended = result(
        DAY,
        "Happy Valley",
        2,
        vec![runner(Some(1), "E271"), runner(Some(2), "H101")],
    );
    let last = nats.publish(&[envelope(amended)]).await;
    app.projected(last).await;
    let changed = app
        .client
        .get(&url)
        .header("X-API-Key", KEY)
        .header("If-None-Match", &etag)
        .send()
        .await
        .expect("request");
    assert_eq!(changed.status(), StatusCode::OK);
    assert_ne!(changed.headers()["etag"], etag.as_str());

    // Errors are not cached, and a wrong key still gets the 401 whatever the tag.
    let missing = app
        .client
        .get(format!("{}/api/v1/horses/NOPE", app.base))
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("request");
    assert!(missing.headers().get("etag").is_none());
    let (status, _) = app
        .get_with(&format!("/api/v1/results/{DAY}"), Some("wrong"))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn gzip_and_brotli_are_served_when_asked_with_their_own_etags() {
    let (_nats, app, _dir) = service_with(&meeting()).await;
    let url = format!("{}/api/v1/results/{DAY}", app.base);
    let mut tags = Vec::new();
    for encoding in ["identity", "gzip", "br"] {
        let res = app
            .client
            .get(&url)
            .header("X-API-Key", KEY)
            .header("Accept-Encoding", encoding)
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), StatusCode::OK);
        let got = res
            .headers()
            .get("content-encoding")
            .map(|v| v.to_str().unwrap_or_default().to_owned());
        assert_eq!(
            got.as_deref(),
            (encoding != "identity").then_some(encoding),
            "{encoding}"
        );
        tags.push(res.headers()["etag"].to_str().expect("ascii").to_owned());
    }
    tags.dedup();
    assert_eq!(tags.len(), 3, "each encoding is its own representation");
}

/// Until the projector has caught up with the log once, documents are 503 with
/// `Retry-After` (the key still comes first); then they are served. Here the broker is
/// gone between start-up and the first fold, so the wait is as long as the test makes it.
#[tokio::test]
async fn documents_are_503_until_the_read_models_are_built() {
    let mut nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let built = App::build(&nats, dir.path(), |_| {}).await;
    let last = nats.publish(&meeting()).await;
    let port = nats.kill_server().await;
    let mut app = App::run(built);
    for path in ["/api/v1/horses/E271", "/api/v1/results/2026-11-18/1"] {
        let res = app.response(path).await;
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert_eq!(res.headers()["retry-after"], "1");
        let body: Value = res.json().await.expect("JSON");
        assert_eq!(body["error"], "unavailable");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("being built"),
            "{body}"
        );
    }
    let (status, _) = app.get_with("/api/v1/horses/E271", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Live odds too: a session would be handed the log's history as live updates.
    let ws = format!(
        "{}/ws/live/odds?api_key={KEY}",
        app.base.replace("http", "ws")
    );
    match tokio_tungstenite::connect_async(ws).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        }
        other => panic!(
            "expected a 503 and no upgrade, got {:?}",
            other.map(|(_, r)| r)
        ),
    }
    nats.restart_server(port).await;
    app.projected(last).await;
    let (status, body) = app.get("/api/v1/horses/E271").await;
    assert_eq!(
        (status, &body["horse_name"]),
        (StatusCode::OK, &json!("GOLDEN SIXTY"))
    );
}

/// A stored document the service cannot read is a 500 whose body says nothing of why
/// (the log has it); the other documents are served as before.
#[tokio::test]
async fn a_document_that_cannot_be_read_is_a_500_without_details() {
    let (nats, app, dir) = service_with(&meeting()).await;
    app.stop().await;
    let store = racing::read_models::active_dir(dir.path()).expect("store dir");
    {
        // The stopped service's store lets go of its file lock once sled's background
        // threads end, a moment later in this process: the lock is waited for.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let db = loop {
            match sled::open(&store) {
                Err(e)
                    if e.to_string().contains("could not acquire lock")
                        && std::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
                opened => break opened.expect("store opens"),
            }
        };
        let docs = db.open_tree("read_models").expect("tree");
        let key = racing_projections::DocKey::Profile("E271").key();
        assert!(
            docs.get(&key).expect("read").is_some(),
            "the profile is stored"
        );
        docs.insert(key, &b"{}"[..]).expect("overwrite");
        db.flush().expect("flush");
    }
    let mut app = App::start(&nats, dir.path()).await;
    app.projected(0).await;
    let (status, body) = app.get("/api/v1/horses/E271").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        body,
        json!({"error": "internal", "message": "internal error"})
    );
    let (status, _) = app.get("/api/v1/horses/E271/form").await;
    assert_eq!(status, StatusCode::OK);
}
