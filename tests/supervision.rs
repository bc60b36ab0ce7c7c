//! Supervised tasks: a projector that panics is started again, `/readyz` saying so
//! meanwhile, and one that keeps failing stops the service with an error, for its
//! supervisor to restart the process.

use std::time::Duration;

use racing_events::samples::{envelope, profile};
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::support::{App, Nats};

#[tokio::test]
async fn a_projector_that_panics_is_started_again_and_readyz_says_so_meanwhile() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let first = nats
        .publish(&[envelope(profile("P001", "BEFORE PANIC"))])
        .await;
    app.projected(first).await;

    app.faults.panic_projector(1);
    let last = nats
        .publish(&[envelope(profile("P002", "AFTER PANIC"))])
        .await;
    // While it waits to be started again, the service is not ready, and says why.
    let not_ready = async {
        loop {
            let res = reqwest::get(format!("{}/readyz", app.admin))
                .await
                .expect("readyz");
            if res.status() == StatusCode::SERVICE_UNAVAILABLE {
                return res.json::<Value>().await.expect("json");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let body = tokio::time::timeout(Duration::from_secs(10), not_ready)
        .await
        .expect("readyz reports the failed projector");
    let reason = body["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("projector") && reason.contains("panicked"),
        "{body}"
    );

    // Started again, it goes on from its checkpoint: the event is applied, once.
    let progress = app.projected(last).await;
    assert_eq!(progress.checkpoint, last);
    let (status, horse) = app.get("/api/v1/horses/P002").await;
    assert_eq!(status, StatusCode::OK, "{horse}");
    let status = app.admin_json("/status").await;
    assert_eq!(status["tasks"]["projector"]["restarts"], 1, "{status}");
    assert_eq!(status["ready"], true, "{status}");
    app.stop().await;
}

#[tokio::test]
async fn a_projector_that_keeps_failing_stops_the_service_with_an_error() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::build(&nats, dir.path(), |_| {}).await;
    let faults = app.faults();
    let run = tokio::spawn(app.run(CancellationToken::new()));
    faults.panic_projector(u32::MAX);
    nats.publish(&[envelope(profile("P001", "NEVER"))]).await;
    let ended = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the service stops itself")
        .expect("the service task");
    let error = format!("{:#}", ended.expect_err("a failing exit"));
    assert!(error.contains("projector failed 5 times"), "{error}");
}
