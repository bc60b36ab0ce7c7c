//! What a key's changes do to its open live odds sessions and its limits, on one replica
//! and across two (two services against one nats-server), with real WebSocket clients.

use std::time::{Duration, Instant};

use racing::keys::registry::Registry;
use racing::keys::{generate, KeyLimits};
use reqwest::StatusCode;
use tempfile::TempDir;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::keys::{registry, within};
use crate::live::Client;
use crate::support::{App, Nats};

/// How soon a change of a key must reach its open sessions.
const PROMPTLY: Duration = Duration::from_secs(2);

/// Time for a replica's new connection count to reach the other replica: a NATS round
/// trip, with a wide margin. (Nothing outside the service shows when it has arrived.)
const SETTLE: Duration = Duration::from_millis(500);

/// A service of its own against `nats`, ready.
async fn replica(nats: &Nats) -> (App, TempDir) {
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(nats, dir.path()).await;
    app.projected(0).await;
    (app, dir)
}

/// Creates a key and waits until every replica at `bases` accepts it.
async fn key(registry: &Registry, bases: &[&str], limits: KeyLimits) -> (String, String) {
    let (key, record) = registry.create("sessions", limits).await.expect("create");
    for base in bases {
        within(PROMPTLY, "a new key", async || {
            status(base, &key).await != StatusCode::UNAUTHORIZED
        })
        .await;
    }
    (key, record.id)
}

async fn get(base: &str, key: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(format!("{base}/api/v1/horses/E271"))
        .header("X-API-Key", key)
        .send()
        .await
        .expect("request")
}

async fn status(base: &str, key: &str) -> StatusCode {
    get(base, key).await.status()
}

/// The `RateLimit-Policy` of a key's answers.
async fn policy(base: &str, key: &str) -> String {
    let res = get(base, key).await;
    res.headers()
        .get("ratelimit-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// Reads `client`'s close frame; its code, its reason, and how long after `since`.
async fn closed(client: &mut Client, since: Instant) -> (CloseCode, String, Duration) {
    let frame = client
        .close_frame()
        .await
        .expect("a close frame with a code");
    (frame.code, frame.reason.to_string(), since.elapsed())
}

#[tokio::test]
async fn a_revoked_keys_sockets_close_with_1008_on_every_replica_within_two_seconds() {
    let nats = Nats::start().await;
    let (a, _a) = replica(&nats).await;
    let (b, _b) = replica(&nats).await;
    let registry = registry(&nats).await;
    let bases = [a.base.as_str(), b.base.as_str()];
    let (revoked, id) = key(&registry, &bases, KeyLimits::default()).await;
    let (other, _) = key(&registry, &bases, KeyLimits::default()).await;
    let mut on_a = Client::try_connect(&a.base, &revoked).await.expect("a");
    let mut on_b = Client::try_connect(&b.base, &revoked).await.expect("b");
    let mut bystander = Client::try_connect(&b.base, &other).await.expect("b");

    let revoking = Instant::now();
    registry.revoke(&id).await.expect("revoke");
    let (on_a, on_b) = tokio::join!(closed(&mut on_a, revoking), closed(&mut on_b, revoking));
    for (code, reason, took) in [on_a, on_b] {
        eprintln!("closed after {took:?}");
        assert_eq!(
            (code, reason.as_str()),
            (CloseCode::Policy, "API key revoked")
        );
        assert!(took < PROMPTLY, "closed after {took:?}");
    }
    assert!(
        bystander.barrier().await.is_empty(),
        "another key's socket stays"
    );
    assert_eq!(
        Client::try_connect(&a.base, &revoked).await.err(),
        Some(401)
    );
}

#[tokio::test]
async fn a_rotated_keys_sockets_close_with_1008_when_its_grace_period_ends() {
    let nats = Nats::start().await;
    let (a, _a) = replica(&nats).await;
    let (b, _b) = replica(&nats).await;
    let registry = registry(&nats).await;
    let bases = [a.base.as_str(), b.base.as_str()];
    let (old, id) = key(&registry, &bases, KeyLimits::default()).await;
    let mut on_a = Client::try_connect(&a.base, &old).await.expect("a");
    let mut on_b = Client::try_connect(&b.base, &old).await.expect("b");

    let grace = Duration::from_secs(2);
    let rotating = Instant::now();
    let (new, _, _) = registry.rotate(&id, grace).await.expect("rotate");
    within(PROMPTLY, "the new key", async || {
        status(&b.base, &new).await != StatusCode::UNAUTHORIZED
    })
    .await;
    let mut renewed = Client::try_connect(&b.base, &new).await.expect("new key");
    let (on_a, on_b) = tokio::join!(closed(&mut on_a, rotating), closed(&mut on_b, rotating));
    for (code, reason, took) in [on_a, on_b] {
        eprintln!("closed {took:?} after the rotation");
        assert_eq!(
            (code, reason.as_str()),
            (CloseCode::Policy, "API key expired")
        );
        // Not before the grace period ends (give or take the clocks' rounding), and
        // soon after.
        assert!(took >= grace - Duration::from_millis(100), "{took:?}");
        assert!(took < grace + PROMPTLY, "{took:?}");
    }
    assert!(
        renewed.barrier().await.is_empty(),
        "the new key's socket stays"
    );
    assert_eq!(Client::try_connect(&a.base, &old).await.err(), Some(401));
}

#[tokio::test]
async fn lowering_a_keys_cap_closes_its_newest_sockets_and_a_new_rate_applies_at_once() {
    let nats = Nats::start().await;
    let (app, _dir) = replica(&nats).await;
    let registry = registry(&nats).await;
    let roomy = KeyLimits {
        rate_per_sec: Some(100),
        burst: Some(100),
        max_connections: Some(3),
        max_webhooks: None,
    };
    let (key, id) = key(&registry, &[&app.base], roomy).await;
    let mut oldest = Client::try_connect(&app.base, &key).await.expect("1");
    let mut middle = Client::try_connect(&app.base, &key).await.expect("2");
    let mut newest = Client::try_connect(&app.base, &key).await.expect("3");
    assert_eq!(Client::try_connect(&app.base, &key).await.err(), Some(429));
    assert_eq!(policy(&app.base, &key).await, "\"default\";q=100;w=1");

    let tight = KeyLimits {
        rate_per_sec: Some(1),
        burst: Some(3),
        max_connections: Some(1),
        max_webhooks: None,
    };
    let lowering = Instant::now();
    registry.set_limits(&id, tight).await.expect("set limits");
    let (middle, newest) =
        tokio::join!(closed(&mut middle, lowering), closed(&mut newest, lowering));
    for (code, reason, took) in [middle, newest] {
        assert_eq!(
            (code, reason.as_str()),
            (CloseCode::Policy, "connection limit of the API key lowered")
        );
        assert!(took < PROMPTLY, "closed after {took:?}");
    }
    assert!(oldest.barrier().await.is_empty(), "the oldest socket stays");
    // (The upgrade is the first request of the key's new bucket, of the new quota.)
    assert_eq!(Client::try_connect(&app.base, &key).await.err(), Some(429));
    assert_eq!(policy(&app.base, &key).await, "\"default\";q=3;w=3");
    assert_eq!(status(&app.base, &key).await, StatusCode::NOT_FOUND);
    assert_eq!(status(&app.base, &key).await, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_new_key_never_overwrites_a_record_with_the_same_id() {
    let nats = Nats::start().await;
    let registry = registry(&nats).await;
    let (_, first) = registry
        .create("first", KeyLimits::default())
        .await
        .expect("create");
    // A generator whose first draw has the id of the key just made.
    let mut draws = 0;
    let (key, second) = registry
        .create_with("second", KeyLimits::default(), |name, limits, now| {
            draws += 1;
            let (key, mut record) = generate(name, limits, now);
            if draws == 1 {
                record.id.clone_from(&first.id);
            }
            (key, record)
        })
        .await
        .expect("create with a collision");
    assert_eq!(draws, 2, "a second id was drawn");
    assert_ne!(second.id, first.id);
    assert!(key.starts_with(&second.prefix()));
    assert_eq!(registry.get(&first.id).await.expect("first"), first);
    assert_eq!(registry.get(&second.id).await.expect("second"), second);

    // Ids that are always taken: an error, after a bounded number of draws.
    let mut draws = 0;
    let always = registry
        .create_with("third", KeyLimits::default(), |name, limits, now| {
            draws += 1;
            let (key, mut record) = generate(name, limits, now);
            record.id.clone_from(&first.id);
            (key, record)
        })
        .await;
    assert!(always.is_err() && draws <= 8, "{draws} draws");
    assert_eq!(registry.get(&first.id).await.expect("first"), first);
}

#[tokio::test]
async fn keys_list_shows_the_valid_keys_and_all_shows_revoked_and_expired_too() {
    let nats = Nats::start().await;
    let registry = registry(&nats).await;
    let create = async |name: &str| {
        registry
            .create(name, KeyLimits::default())
            .await
            .expect("create")
            .1
            .id
    };
    let active = create("active").await;
    let revoked = create("revoked").await;
    registry.revoke(&revoked).await.expect("revoke");
    let expired = create("expired").await;
    let (_, successor, _) = registry
        .rotate(&expired, Duration::ZERO)
        .await
        .expect("rotate");
    let graced = create("graced").await;
    let (_, graced_successor, _) = registry
        .rotate(&graced, Duration::from_secs(3600))
        .await
        .expect("rotate");

    let ids = async |all: bool| {
        let mut ids: Vec<String> = registry
            .list(all)
            .await
            .expect("list")
            .into_iter()
            .map(|(record, _)| record.id)
            .collect();
        ids.sort();
        ids
    };
    let mut valid = vec![active, successor.id, graced, graced_successor.id];
    valid.sort();
    assert_eq!(ids(false).await, valid);
    let mut every = [valid, vec![revoked, expired]].concat();
    every.sort();
    assert_eq!(ids(true).await, every);
}

#[tokio::test]
async fn two_replicas_share_a_keys_connection_cap() {
    let nats = Nats::start().await;
    let (a, _a) = replica(&nats).await;
    let (b, _b) = replica(&nats).await;
    let registry = registry(&nats).await;
    let capped = KeyLimits {
        max_connections: Some(2),
        ..KeyLimits::default()
    };
    let (key, _) = key(&registry, &[&a.base, &b.base], capped).await;
    let first = Client::try_connect(&a.base, &key).await.expect("first");
    tokio::time::sleep(SETTLE).await;
    let _second = Client::try_connect(&b.base, &key).await.expect("second");
    tokio::time::sleep(SETTLE).await;
    for base in [&a.base, &b.base] {
        assert_eq!(
            Client::try_connect(base, &key).await.err(),
            Some(429),
            "a third on {base}"
        );
    }
    // A connection closed on one replica frees a place on the other.
    drop(first);
    let deadline = Instant::now() + PROMPTLY;
    let _third = loop {
        match Client::try_connect(&b.base, &key).await {
            Ok(client) => break client,
            Err(429) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(status) => panic!("no place freed within {PROMPTLY:?}: {status}"),
        }
    };
    tokio::time::sleep(SETTLE).await;
    assert_eq!(Client::try_connect(&a.base, &key).await.err(), Some(429));
}

/// `requests` requests of `key` sent to `bases` in turn, one every `pace` if given, else
/// each as soon as the last is answered: how many were admitted, and how long it took.
async fn admitted(
    bases: &[&str],
    key: &str,
    requests: usize,
    pace: Option<Duration>,
) -> (u32, Duration) {
    let mut tick = pace.map(tokio::time::interval);
    if let Some(tick) = &mut tick {
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    }
    let start = Instant::now();
    let mut passed = 0;
    for base in bases.iter().cycle().take(requests) {
        if let Some(tick) = &mut tick {
            tick.tick().await;
        }
        match status(base, key).await {
            StatusCode::NOT_FOUND => passed += 1,
            StatusCode::TOO_MANY_REQUESTS => {}
            other => panic!("{base}: {other}"),
        }
    }
    (passed, start.elapsed())
}

/// The plan is a key's whether its client's requests reach one replica or both: the
/// replicas report their use of each key to each other every 200 ms and charge what the
/// others admitted (`racing::keys::usage`, whose tolerance the bounds below take).
#[tokio::test]
async fn a_keys_plan_holds_for_a_client_on_one_replica_and_in_total_over_two() {
    const RATE: u32 = 5;
    const BURST: u32 = 10;
    // How late a report may reach the other replica on a loaded machine: the report
    // interval, a NATS hop, and a wide margin.
    const LATE: f64 = 1.0;
    let nats = Nats::start().await;
    let (a, _a) = replica(&nats).await;
    let (b, _b) = replica(&nats).await;
    let registry = registry(&nats).await;
    let plan = KeyLimits {
        rate_per_sec: Some(RATE),
        burst: Some(BURST),
        max_connections: None,
        max_webhooks: None,
    };
    let (pinned, _) = key(&registry, &[&a.base, &b.base], plan).await;
    let (spread, _) = key(&registry, &[&a.base, &b.base], plan).await;
    for base in [&a.base, &b.base] {
        assert_eq!(
            policy(base, &pinned).await,
            "\"default\";q=10;w=2",
            "the whole plan"
        );
    }
    // The requests above took from the keys' bursts: the time a whole burst takes to come
    // back refills them (nothing shows a bucket's state without taking from it).
    tokio::time::sleep(Duration::from_secs(u64::from(BURST / RATE))).await;

    // One client on one replica, as keep-alive connections make it: the whole burst.
    let (passed, took) = admitted(&[&a.base], &pinned, 25, None).await;
    eprintln!("{passed} requests of one client on one replica admitted in {took:?}");
    let refilled = (f64::from(RATE) * took.as_secs_f64()).ceil() as u32;
    assert!(
        (BURST..=BURST + refilled).contains(&passed),
        "{passed} admitted in {took:?}: a burst of {BURST} and {RATE}/s"
    );

    // One client over both replicas, a request every 25 ms in turn for 4 s or more: the
    // plan in total, over by at most what one replica admitted before hearing of the
    // other's.
    let pace = Some(Duration::from_millis(25));
    let (passed, took) = admitted(&[&a.base, &b.base], &spread, 160, pace).await;
    let secs = took.as_secs_f64();
    let plan = f64::from(BURST) + f64::from(RATE) * secs;
    let tolerance = f64::from(BURST) + f64::from(RATE) * LATE;
    eprintln!("{passed} requests over two replicas admitted in {took:?}: the plan is {plan:.1}");
    assert!(
        f64::from(passed) >= plan - 2.0 && f64::from(passed) <= plan + tolerance,
        "{passed} admitted in {took:?}: the plan is {plan:.1}, tolerance {tolerance:.1}"
    );
}
