//! Managed keys, rate limits and hostile input, against real NATS and, where the issue
//! asks for a second running process, the real `racing` binary.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use racing::keys::registry::Registry;
use racing::keys::KeyLimits;
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats, KEY};

const UNAUTHORIZED: &str = r#"{"error":"unauthorized","message":"Invalid or missing API key"}"#;

/// Every document path of the API (an example of each route of the table), and one that
/// is none. (The WebSocket has its own checks.)
fn paths() -> Vec<String> {
    let table = racing::http::ROUTES.iter().map(|r| r.example());
    table.chain(["/api/v1/nowhere".to_owned()]).collect()
}

pub(crate) async fn registry(nats: &Nats) -> Registry {
    Registry::open(&nats.service, "RACING")
        .await
        .expect("registry")
}

/// Status and body of a GET with `key` in the header.
async fn get(app: &App, path: &str, key: Option<&str>) -> (StatusCode, String) {
    let mut req = app.client.get(format!("{}{path}", app.base));
    if let Some(k) = key {
        req = req.header("X-API-Key", k);
    }
    let res = req.send().await.expect("request");
    (res.status(), res.text().await.expect("body"))
}

/// Whether the WebSocket upgrades with `key` as its query parameter.
async fn upgrades(base: &str, key: &str) -> Result<(), u16> {
    let url = format!("{}/ws/live/odds?api_key={key}", base.replace("http", "ws"));
    match tokio_tungstenite::connect_async(url).await {
        Ok(_) => Ok(()),
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => Err(r.status().as_u16()),
        Err(e) => panic!("websocket: {e}"),
    }
}

/// Polls `check` until it holds; returns how long it took, or panics after `limit`.
pub(crate) async fn within(
    limit: Duration,
    what: &str,
    mut check: impl AsyncFnMut() -> bool,
) -> Duration {
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < limit, "{what} took over {limit:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    start.elapsed()
}

#[tokio::test]
async fn every_key_state_is_checked_on_every_endpoint_and_the_websocket() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let registry = registry(&nats).await;
    let (active, _) = registry
        .create("active", KeyLimits::default())
        .await
        .expect("create");
    let (revoked, r) = registry
        .create("revoked", KeyLimits::default())
        .await
        .expect("create");
    registry.revoke(&r.id).await.expect("revoke");
    let (expired, e) = registry
        .create("rotated", KeyLimits::default())
        .await
        .expect("create");
    let (rotated, _, _) = registry
        .rotate(&e.prefix(), Duration::ZERO)
        .await
        .expect("rotate");
    let mut app = App::start(&nats, dir.path()).await;
    app.projected(0).await;

    for path in &paths() {
        for (state, key) in [
            ("missing", None),
            ("unknown", Some("rk_00000000_x")),
            ("revoked", Some(revoked.as_str())),
            ("expired", Some(expired.as_str())),
        ] {
            let (status, body) = get(&app, path, key).await;
            assert_eq!(
                (status, body.as_str()),
                (StatusCode::UNAUTHORIZED, UNAUTHORIZED),
                "{state} key on {path}"
            );
        }
        for key in [active.as_str(), rotated.as_str(), KEY] {
            assert_ne!(
                get(&app, path, Some(key)).await.0,
                StatusCode::UNAUTHORIZED,
                "{path}"
            );
        }
    }
    for bad in ["", "rk_00000000_x", revoked.as_str(), expired.as_str()] {
        assert_eq!(upgrades(&app.base, bad).await, Err(401));
    }
    for good in [active.as_str(), rotated.as_str()] {
        assert_eq!(upgrades(&app.base, good).await, Ok(()));
    }
}

/// The real binary, serving on a free port against `nats`.
struct Process {
    child: Child,
    base: String,
    log: std::path::PathBuf,
    _dir: TempDir,
}

impl Process {
    fn start(nats: &crate::support::Broker) -> Process {
        let dir = TempDir::new().expect("temp dir");
        let log = dir.path().join("stderr.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_racing"))
            .arg("serve")
            .env("RACING_NATS_URL", &nats.url)
            .env("RACING_NATS_NKEY", &nats.nkey)
            .env("RACING_DATA_DIR", dir.path().join("data"))
            .env("RACING_LISTEN", "127.0.0.1:0")
            .env("RACING_ADMIN_LISTEN", "127.0.0.1:0")
            .env("RACING_LOG", "debug")
            .env_remove("RACING_API_KEYS")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("racing serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
        let base = lines
            .find_map(|l| {
                l.trim()
                    .strip_prefix("API:")
                    .map(|u| u.trim().trim_end_matches("/api/v1/").to_owned())
            })
            .expect("the service prints its address");
        // Keep reading, as a terminal would.
        std::thread::spawn(move || lines.for_each(drop));
        Process {
            child,
            base,
            log,
            _dir: dir,
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn key_changes_reach_two_running_replicas_within_two_seconds() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    let other = Process::start(&nats.broker());
    let client = reqwest::Client::new();
    let status = async |base: &str, key: &str| {
        client
            .get(format!("{base}/api/v1/horses/E271"))
            .header("X-API-Key", key)
            .send()
            .await
            .map(|r| r.status())
            .ok()
    };

    let registry = registry(&nats).await;
    let (key, record) = registry
        .create("acme", KeyLimits::default())
        .await
        .expect("create");
    for base in [&app.base, &other.base] {
        let took = within(Duration::from_secs(2), "a new key", async || {
            status(base, &key).await == Some(StatusCode::NOT_FOUND)
        })
        .await;
        eprintln!("new key accepted by {base} after {took:?}");
    }
    let (new_key, _, _) = registry
        .rotate(&record.prefix(), Duration::from_secs(3600))
        .await
        .expect("rotate");
    for base in [&app.base, &other.base] {
        within(Duration::from_secs(2), "a rotated key", async || {
            status(base, &new_key).await == Some(StatusCode::NOT_FOUND)
                && status(base, &key).await == Some(StatusCode::NOT_FOUND)
        })
        .await;
    }
    registry.revoke(&record.id).await.expect("revoke");
    for base in [&app.base, &other.base] {
        let took = within(Duration::from_secs(2), "a revocation", async || {
            status(base, &key).await == Some(StatusCode::UNAUTHORIZED)
        })
        .await;
        eprintln!("revocation seen by {base} after {took:?}");
        assert_eq!(status(base, &new_key).await, Some(StatusCode::NOT_FOUND));
    }

    // The key never reaches the logs, not even from the WebSocket's query parameter.
    assert_eq!(upgrades(&other.base, &new_key).await, Ok(()));
    let _ = upgrades(&other.base, "rk_deadbeef_secretsecret").await;
    drop(app);
    let log = std::fs::read_to_string(&other.log).expect("log");
    assert!(log.contains("request"), "the log has request lines");
    for secret in [new_key.as_str(), key.as_str(), "rk_deadbeef_secretsecret"] {
        assert!(!log.contains(secret), "a key appears in the log");
    }
}

/// A replica cut off from the key registry (its NATS server gone) cannot hear of a
/// revocation: once it has gone the allowed staleness without confirming the registry
/// current, it refuses managed keys with a 503 that says why and closes their sessions
/// with 1013 (try again later), while configured keys go on; once the registry is back,
/// managed keys are accepted again.
#[tokio::test]
async fn a_replica_cut_off_from_the_key_registry_refuses_managed_keys_in_bounded_time() {
    const STALE: Duration = Duration::from_secs(2);
    let mut nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let (managed, _) = registry(&nats)
        .await
        .create("acme", KeyLimits::default())
        .await
        .expect("create");
    let mut app = App::start_with(&nats, dir.path(), |c| c.key_watch_stale_after = STALE).await;
    app.projected(0).await;
    let path = "/api/v1/horses/E271";

    // A registry that is quiet but reachable is confirmed all along: no refusal.
    let quiet = Instant::now();
    while quiet.elapsed() < STALE * 2 {
        assert_eq!(
            get(&app, path, Some(&managed)).await.0,
            StatusCode::NOT_FOUND
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut session = crate::live::Client::try_connect(&app.base, &managed)
        .await
        .expect("a session of the managed key");

    let port = nats.kill_server().await;
    let took = within(STALE * 5, "managed keys refused", async || {
        get(&app, path, Some(&managed)).await.0 == StatusCode::SERVICE_UNAVAILABLE
    })
    .await;
    eprintln!("managed keys refused {took:?} after the registry was cut off");
    assert!(
        took >= STALE / 2,
        "refused after {took:?}, before {STALE:?} had passed"
    );
    let res = app
        .client
        .get(format!("{}{path}", app.base))
        .header("X-API-Key", &managed)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(res.headers().contains_key("retry-after"));
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error"], "unavailable");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("revocation"),
        "{body}"
    );
    assert_eq!(upgrades(&app.base, &managed).await, Err(503));
    // Its open session too: it cannot hear of a revocation either.
    // Bounded here: heartbeats would keep the helper's own wait going.
    let frame = tokio::time::timeout(STALE * 5, session.close_frame())
        .await
        .expect("the session closed in time")
        .expect("a close frame with a code");
    assert_eq!(
        (u16::from(frame.code), frame.reason.as_str()),
        (1013, "API key cannot be checked for revocation")
    );
    assert_eq!(get(&app, path, Some(KEY)).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        get(&app, path, Some("rk_00000000_x")).await.0,
        StatusCode::UNAUTHORIZED
    );

    nats.restart_server(port).await;
    let took = within(
        Duration::from_secs(30),
        "managed keys accepted again",
        async || get(&app, path, Some(&managed)).await.0 == StatusCode::NOT_FOUND,
    )
    .await;
    eprintln!("managed keys accepted {took:?} after the registry came back");
}

#[tokio::test]
async fn a_burst_over_the_limit_gets_429_with_its_headers() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let registry = registry(&nats).await;
    let limits = KeyLimits {
        rate_per_sec: Some(1),
        burst: Some(2),
        max_connections: None,
        max_webhooks: None,
    };
    let (slow_key, _) = registry.create("small plan", limits).await.expect("create");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.request_limits.rate_per_sec = 5;
        c.request_limits.burst = 10;
    })
    .await;
    // Ready first: until the projector has looked at the stream, reads are 503s.
    app.projected(0).await;
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..15 {
        let res = app
            .client
            .get(format!("{}/api/v1/horses/E271", app.base))
            .header("X-API-Key", KEY)
            .send()
            .await
            .expect("request");
        statuses.push(res.status().as_u16());
        assert_eq!(res.headers()["ratelimit-policy"], "\"default\";q=10;w=2");
        assert!(res.headers().contains_key("ratelimit"));
        last = Some(res);
    }
    assert!(
        statuses.iter().filter(|s| **s == 429).count() >= 4,
        "{statuses:?}"
    );
    assert!(
        statuses[..10].iter().all(|s| *s != 429),
        "the burst passes: {statuses:?}"
    );
    let res = last.expect("responses");
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((1..=2).contains(&retry), "{retry}");
    let limit = res.headers()["ratelimit"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(limit.starts_with("\"default\";r=0;t="), "{limit}");
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error"], "rate_limited");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));

    // A key's own limit applies to it alone.
    let mut own = Vec::new();
    for _ in 0..3 {
        own.push(
            get(&app, "/api/v1/horses/E271", Some(&slow_key))
                .await
                .0
                .as_u16(),
        );
    }
    assert_eq!(own, [404, 404, 429]);
}

#[tokio::test]
async fn oversized_and_malformed_requests_get_clear_errors() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    let send = async |req: reqwest::RequestBuilder| {
        let res = req.send().await.expect("request");
        let status = res.status();
        let body: Value = res.json().await.expect("a JSON error body");
        (
            status,
            body["error"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let long = format!("{}/api/v1/horses/{}", app.base, "A".repeat(3000));
    assert_eq!(
        send(app.client.get(long).header("X-API-Key", KEY)).await,
        (StatusCode::URI_TOO_LONG, "uri_too_long".into())
    );
    let mut many = app
        .client
        .get(format!("{}/api/v1/horses/E271", app.base))
        .header("X-API-Key", KEY);
    for i in 0..70 {
        many = many.header(format!("x-filler-{i}"), "1");
    }
    assert_eq!(
        send(many).await,
        (
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large".into()
        )
    );
    let big = app
        .client
        .get(format!("{}/api/v1/horses/E271", app.base))
        .header("X-API-Key", KEY)
        .header("x-filler", "x".repeat(20_000));
    assert_eq!(
        send(big).await,
        (
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large".into()
        )
    );
    let with_body = app
        .client
        .get(format!("{}/api/v1/horses/E271", app.base))
        .header("X-API-Key", KEY)
        .body("hello");
    assert_eq!(
        send(with_body).await,
        (StatusCode::PAYLOAD_TOO_LARGE, "body_not_accepted".into())
    );
    let odd = app
        .client
        .get(format!("{}/api/v1/horses/%FF%FE", app.base))
        .header("X-API-Key", KEY);
    assert_eq!(
        send(odd).await,
        (StatusCode::BAD_REQUEST, "bad_request".into())
    );
    // Without a key, a body or a long line still gets the 401 or the size error, never data.
    let (status, _) = send(
        app.client
            .get(format!("{}/api/v1/horses/E271", app.base))
            .body("x"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
