//! The admin listener: health, readiness, metrics and the JSON the operations commands read.

use racing_events::samples::{envelope, profile};
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats, KEY};

async fn get(url: String) -> (StatusCode, String) {
    let res = reqwest::get(&url).await.expect("request");
    (res.status(), res.text().await.expect("body"))
}

#[tokio::test]
async fn health_readiness_status_and_metrics_answer_on_the_admin_listener() {
    let mut nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let good = envelope(profile("E271", "GOLDEN SIXTY"));
    nats.publish(&[good]).await;
    let last = nats.publish_raw("racing.horses.X", b"not json", None).await;
    app.projected(last).await;

    let (status, body) = get(format!("{}/healthz", app.admin)).await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, r#"{"status":"alive"}"#)
    );

    let (status, body) = get(format!("{}/readyz", app.admin)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ready: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(ready["checkpoint"], last);
    assert_eq!(ready["lag"], 0);
    assert_eq!(ready["nats_connected"], true);

    // The admin listener takes no key, and the API's port has no admin routes.
    assert_eq!(
        app.get_with("/healthz", Some(KEY)).await.0,
        StatusCode::NOT_FOUND
    );

    let (_, body) = get(format!("{}/dead-letters", app.admin)).await;
    let letters: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(letters[0]["seq"], last);
    assert_eq!(letters[0]["subject"], "racing.horses.X");

    assert_eq!(app.get("/api/v1/horses/E271").await.0, StatusCode::OK);
    // Refusals before any route ran, and paths no route takes, are counted as well.
    assert_eq!(
        app.get_with("/api/v1/horses/E271", Some("a-wrong-key"))
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(app.get("/api/v1/nowhere").await.0, StatusCode::NOT_FOUND);
    let (status, metrics) = get(format!("{}/metrics", app.admin)).await;
    assert_eq!(status, StatusCode::OK);
    for expected in [
        r#"racing_http_requests_total{route="/api/v1/horses/{horse_no}",status="200"}"#,
        r#"racing_http_requests_total{route="/api/v1/horses/{horse_no}",status="401"}"#,
        r#"racing_http_requests_total{route="unmatched",status="404"}"#,
        "racing_http_request_duration_seconds_bucket",
        "racing_events_applied_total",
        "racing_dead_letters_total",
        "racing_projector_lag_events",
        "racing_applied_ids_filter_layers 1",
        "racing_applied_ids_filter_bytes",
        "racing_applied_ids_filter_fill_ratio",
        "racing_applied_ids_filter_false_positive_rate",
        "racing_applied_ids_run_lookups_total",
        "racing_applied_ids_false_positives_total",
    ] {
        assert!(metrics.contains(expected), "metrics lack {expected}");
    }
    // What the commits handed the store, by kind of record: the profile, a version of it
    // for `as_of` reads, and the dead letter.
    let counted = |series: &str| -> f64 {
        let line = metrics.lines().find(|l| l.starts_with(series));
        let value = line.and_then(|l| l.rsplit_once(' '));
        value.map_or(0.0, |(_, v)| v.parse().expect("a number"))
    };
    for (kind, of) in [
        ("profile documents", "records"),
        ("profile documents", "versions"),
        ("dead letters", "records"),
    ] {
        let labels = format!(r#"{{kind="{kind}",of="{of}"}}"#);
        let records = counted(&format!("racing_store_written_records_total{labels}"));
        let bytes = counted(&format!("racing_store_written_bytes_total{labels}"));
        assert!(records >= 1.0, "{kind} {of}: {records} records\n{metrics}");
        assert!(bytes > records * 10.0, "{kind} {of}: {bytes} bytes");
    }

    // With NATS gone, the service is alive but not ready, and says why.
    nats.kill_server().await;
    let reason = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        loop {
            let (status, body) = get(format!("{}/readyz", app.admin)).await;
            if status == StatusCode::SERVICE_UNAVAILABLE {
                return body;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("readyz turns 503 when NATS goes");
    assert!(reason.contains("NATS"), "{reason}");
    assert_eq!(
        get(format!("{}/healthz", app.admin)).await.0,
        StatusCode::OK
    );
    assert_eq!(
        app.get("/api/v1/horses/E271").await.0,
        StatusCode::OK,
        "reads go on from sled"
    );
}

/// The metric names a Grafana expression asks for.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(start) = rest.find("racing_") {
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    names
}

/// The dashboard shipped for Grafana asks only for metrics the service exports: each is
/// made to appear (a document, a bad key, a refusal for rate, a duplicate, a dead letter,
/// a live odds connection), then every name of every panel is found in `/metrics`.
#[tokio::test]
async fn the_grafana_dashboard_asks_only_for_metrics_that_exist() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.request_limits.rate_per_sec = 1;
        c.request_limits.burst = 1;
    })
    .await;
    let event = envelope(profile("E271", "GOLDEN SIXTY"));
    nats.publish(std::slice::from_ref(&event)).await;
    // The same event id again, past JetStream's window of ids: the projector's duplicate.
    nats.publish_raw(&event.subject(), event.to_json().as_bytes(), None)
        .await;
    let last = nats.publish_raw("racing.horses.X", b"not json", None).await;
    app.projected(last).await;
    app.get("/api/v1/horses/E271").await;
    app.get("/api/v1/horses/E271").await;
    app.get_with("/api/v1/horses/E271", Some("a-wrong-key"))
        .await;
    let url = format!(
        "{}/ws/live/odds?api_key={KEY}",
        app.base.replace("http", "ws")
    );
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("a live connection");
    match futures::StreamExt::next(&mut socket).await {
        Some(Ok(tokio_tungstenite::tungstenite::Message::Text(t))) => {
            crate::support::frame(&t);
        }
        other => panic!("expected the welcome, got {other:?}"),
    }

    let (_, metrics) = get(format!("{}/metrics", app.admin)).await;
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/monitoring/grafana/dashboards/racing.json"
        ))
        .expect("the dashboard"),
    )
    .expect("JSON");
    let mut asked = 0;
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("an expression");
            for name in metric_names(expr) {
                asked += 1;
                assert!(
                    metrics.lines().any(|l| l.starts_with(&name)),
                    "panel {:?} asks for {name}, which /metrics lacks",
                    panel["title"]
                );
            }
        }
    }
    assert!(asked >= 10, "the dashboard asks for {asked} metrics");
}

/// The alert rules shipped for Prometheus pass `promtool check rules`, and every metric
/// they name is one the service's code writes and docs/operations.md lists.
#[test]
fn the_alert_rules_are_valid_and_name_only_metrics_the_service_exports() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = root.join("docs/monitoring/alerts.yml");
    let promtool = crate::support::unpacked("prometheus", "usr/bin/promtool");
    let out = std::process::Command::new(promtool)
        .args(["check", "rules"])
        .arg(&rules)
        .output()
        .expect("promtool runs");
    assert!(
        out.status.success(),
        "promtool check rules: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut written = std::collections::BTreeSet::new();
    for dir in ["src", "projections/src"] {
        written.extend(quoted_metric_names(&root.join(dir)));
    }
    let documented =
        std::fs::read_to_string(root.join("docs/operations.md")).expect("docs/operations.md");
    let named = metric_names(&std::fs::read_to_string(&rules).expect("the rules"));
    assert!(named.len() >= 10, "the rules name {} metrics", named.len());
    for name in named {
        assert!(
            written.contains(&name),
            "alerts.yml names {name}, which the service's code never writes"
        );
        assert!(
            documented.contains(&format!("`{name}`")) || documented.contains(&format!("`{name}{{")),
            "alerts.yml names {name}, which docs/operations.md does not list"
        );
    }
}

/// Every metric the service's code writes (`counter!`, `gauge!`, `histogram!` of a
/// `racing_` name) is listed in docs/operations.md.
#[test]
fn every_metric_the_service_writes_is_listed_in_the_operations_guide() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let documented =
        std::fs::read_to_string(root.join("docs/operations.md")).expect("docs/operations.md");
    let mut written = std::collections::BTreeSet::new();
    for dir in ["src", "projections/src"] {
        written.extend(macro_metric_names(&root.join(dir)));
    }
    assert!(
        written.len() >= 40,
        "the code writes {} metrics",
        written.len()
    );
    let unlisted: Vec<&String> = written
        .iter()
        .filter(|name| {
            !documented.contains(&format!("`{name}`"))
                && !documented.contains(&format!("`{name}{{"))
        })
        .collect();
    assert!(
        unlisted.is_empty(),
        "docs/operations.md does not list {unlisted:?}"
    );
}

/// The text of each Rust file under `dir`.
fn rust_texts(dir: &std::path::Path) -> Vec<String> {
    let mut files = Vec::new();
    super::architecture::rust_files(dir, &mut files);
    files.iter().map(|f| super::architecture::read(f)).collect()
}

/// The `racing_` names of the metrics macros' calls in the Rust files under `dir`.
fn macro_metric_names(dir: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    for text in rust_texts(dir) {
        for call in ["counter!(", "gauge!(", "histogram!("] {
            for (at, _) in text.match_indices(call) {
                let args = text[at + call.len()..].trim_start();
                let Some(name) = args.strip_prefix("\"racing_") else {
                    continue;
                };
                if let Some(end) = name.find('"') {
                    names.push(format!("racing_{}", &name[..end]));
                }
            }
        }
    }
    names
}

/// Every `"racing_..."` string of the Rust files under `dir`: the names the code gives
/// its metrics.
fn quoted_metric_names(dir: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    for text in rust_texts(dir) {
        for (at, _) in text.match_indices("\"racing_") {
            let tail = &text[at + 1..];
            if let Some(end) = tail.find('"') {
                let name = &tail[..end];
                if name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}
