//! Reads at a position of the log end to end: a feeder's publish followed at once by a
//! read with `min_seq` (or `Racing-Min-Seq`) never answers the document as it was before
//! it; a position the read models here have not reached is waited for, then a 503 with
//! the checkpoint they hold; one past the end of the log is a 404 at once. Against a real
//! nats-server, the projector and HTTP; the projector is held back by holding its commits.

use std::time::{Duration, Instant};

use racing_events::samples::{envelope, profile};
use reqwest::StatusCode;
use serde_json::Value;

use crate::support::{App, Nats, KEY};

/// How long a read waits for its position in these tests.
const WAIT: Duration = Duration::from_millis(600);

/// A service whose reads wait [`WAIT`] for their position.
async fn service() -> (Nats, App, tempfile::TempDir) {
    let nats = Nats::start().await;
    let dir = tempfile::TempDir::new().expect("temp dir");
    let app = App::start_with(&nats, dir.path(), |c| c.request_limits.min_seq_wait = WAIT).await;
    (nats, app, dir)
}

/// Publishes a profile of `horse` named `name`; the stream sequence its ack gave.
async fn publish(nats: &Nats, horse: &str, name: &str) -> u64 {
    nats.publish(&[envelope(profile(horse, name))]).await
}

/// A GET with the test key, and `Racing-Min-Seq` if given: the status, the headers
/// asked for by name, and the JSON body.
async fn get(app: &App, path: &str, header: Option<u64>) -> (StatusCode, Value, Headers) {
    let mut request = app
        .client
        .get(format!("{}{path}", app.base))
        .header("X-API-Key", KEY);
    if let Some(seq) = header {
        request = request.header("Racing-Min-Seq", seq.to_string());
    }
    let res = request.send().await.expect("request");
    let headers = Headers(res.headers().clone());
    let status = res.status();
    let body = res.json().await.expect("a JSON body");
    (status, body, headers)
}

struct Headers(reqwest::header::HeaderMap);

impl Headers {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.to_str().ok())
    }
}

#[tokio::test]
async fn a_read_with_the_sequence_of_a_publish_just_acknowledged_never_answers_the_old_document() {
    let (nats, mut app, _dir) = service().await;
    let first = publish(&nats, "RYW1", "NAME 0").await;
    app.projected(first).await;
    // Each round: a new name published, read at once with its sequence, by the query
    // parameter and by the header in turn; and a read without it, to count how often
    // the old document would have come back.
    let rounds = 60;
    let mut stale_without = 0;
    for round in 1..=rounds {
        let name = format!("NAME {round}");
        let seq = publish(&nats, "RYW1", &name).await;
        let (status, body, headers) = if round % 2 == 0 {
            get(&app, &format!("/api/v1/horses/RYW1?min_seq={seq}"), None).await
        } else {
            get(&app, "/api/v1/horses/RYW1", Some(seq)).await
        };
        assert_eq!(status, StatusCode::OK, "round {round}: {body}");
        assert_eq!(body["horse_name"], name.as_str(), "round {round}");
        let at: u64 = headers
            .get("racing-seq")
            .and_then(|v| v.parse().ok())
            .expect("Racing-Seq");
        assert!(at >= seq, "round {round}: Racing-Seq {at} before {seq}");
        let next = format!("NAME {round} AGAIN");
        publish(&nats, "RYW1", &next).await;
        let (_, plain, _) = get(&app, "/api/v1/horses/RYW1", None).await;
        if plain["horse_name"] != next.as_str() {
            stale_without += 1;
        }
    }
    eprintln!("reads without min_seq that answered the document before the publish: {stale_without} of {rounds}");
}

#[tokio::test]
async fn a_position_not_reached_in_time_is_a_503_with_the_checkpoint_and_one_reached_is_answered() {
    let (nats, mut app, _dir) = service().await;
    let first = publish(&nats, "RYW2", "BEFORE").await;
    app.projected(first).await;

    // The projector cannot commit while the test holds its commits.
    let held = app.read_models.lock_commits().await;
    let seq = publish(&nats, "RYW2", "AFTER").await;
    let began = Instant::now();
    let (status, body, headers) =
        get(&app, &format!("/api/v1/horses/RYW2?min_seq={seq}"), None).await;
    let took = began.elapsed();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "unavailable");
    assert_eq!(body["checkpoint"], first, "{body}");
    assert_eq!(
        headers.get("racing-checkpoint"),
        Some(first.to_string().as_str())
    );
    assert_eq!(headers.get("retry-after"), Some("1"));
    assert!(
        took >= WAIT && took < WAIT + Duration::from_secs(2),
        "answered after {took:?}, the wait being {WAIT:?}"
    );
    // An `as_of` past the checkpoint is waited for the same way.
    let (status, body, _) = get(&app, &format!("/api/v1/horses/RYW2?as_of={seq}"), None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["checkpoint"], first, "{body}");

    // A read that waits is answered as soon as the commit comes.
    let reading = {
        let (client, base) = (app.client.clone(), app.base.clone());
        tokio::spawn(async move {
            let began = Instant::now();
            let res = client
                .get(format!("{base}/api/v1/horses/RYW2?as_of={seq}"))
                .header("X-API-Key", KEY)
                .send()
                .await
                .expect("request");
            let status = res.status();
            let body: Value = res.json().await.expect("JSON");
            (status, body, began.elapsed())
        })
    };
    tokio::time::sleep(WAIT / 3).await;
    drop(held);
    let (status, body, took) = reading.await.expect("the read");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["horse_name"], "AFTER");
    assert!(took >= WAIT / 3 && took < WAIT, "answered after {took:?}");
    app.projected(seq).await;
    let (status, body, _) = get(&app, "/api/v1/horses/RYW2", Some(seq)).await;
    assert_eq!(
        (status, &body["horse_name"]),
        (StatusCode::OK, &Value::from("AFTER"))
    );
}

#[tokio::test]
async fn a_position_past_the_end_of_the_log_is_a_404_at_once_and_a_malformed_one_a_400() {
    let (nats, mut app, _dir) = service().await;
    let last = publish(&nats, "RYW3", "ONLY").await;
    app.projected(last).await;
    for path in [
        format!("/api/v1/horses/RYW3?min_seq={}", last + 1),
        format!("/api/v1/horses/RYW3?as_of={}", i64::MAX),
        format!("/api/v1/meetings?min_seq={}", last + 1000),
        format!("/api/v1/changes?min%5Fseq={}", last + 1),
    ] {
        let began = Instant::now();
        let (status, body, _) = get(&app, &path, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("it ends at {last}")),
            "{path}: {message}"
        );
        assert!(began.elapsed() < WAIT, "{path}: not waited for");
    }
    let (status, _, _) = get(&app, "/api/v1/horses/RYW3", Some(last + 1)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "by the header");
    // Every read takes it, the index too; a position reached is answered at once.
    for path in ["/api/v1/", "/api/v1/meetings", "/api/v1/horses/RYW3"] {
        let (status, body, _) = get(&app, &format!("{path}?min_seq={last}"), None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    for path in [
        "/api/v1/horses/RYW3?min_seq=01",
        "/api/v1/horses/RYW3?min_seq=-1",
        "/api/v1/horses/RYW3?min_seq=x",
        "/api/v1/horses/RYW3?min_seq=1&min_seq=2",
        "/api/v1/horses/RYW3?min_seq=9223372036854775808",
    ] {
        let (status, body, _) = get(&app, path, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
    }
    let (status, _, _) = {
        let res = app
            .client
            .get(format!("{}/api/v1/horses/RYW3", app.base))
            .header("X-API-Key", KEY)
            .header("Racing-Min-Seq", "soon")
            .send()
            .await
            .expect("request");
        (res.status(), (), ())
    };
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
