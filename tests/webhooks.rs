//! Signed webhooks end to end: endpoints made through the API, race-day events published
//! to JetStream and delivered by the service to receivers on loopback (allowed by the
//! test setting), signed in the Standard Webhooks form, in order, retried on the
//! schedule (compressed by the test-only divisor), refused where the forgery rules say,
//! across a kill -9 and between replicas.

mod receiver;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use racing::config::Config;
use racing::webhooks::Resolve;
use racing_events::samples::{card, envelope, odds, result, runner, scratch_at, status};
use racing_events::{Envelope, RaceStatus};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::support::{App, Nats, KEY};
use receiver::Receiver;

const DAY: &str = "2026-11-21";
const VENUE: &str = "Sha Tin";

/// How long a test waits for deliveries.
const WAIT: Duration = Duration::from_secs(30);

/// The configuration every test starts from: loopback opened to endpoints.
fn loopback(config: &mut Config) {
    config.webhooks.allowed = vec!["127.0.0.0/8".parse().expect("a network")];
    config.webhooks.lease = Duration::from_secs(2);
}

/// A service with `events` projected, endpoints on loopback allowed, and `adjust` applied.
async fn service(events: &[Envelope], adjust: impl FnOnce(&mut Config)) -> (Nats, App, TempDir) {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        loopback(c);
        adjust(c);
    })
    .await;
    if !events.is_empty() {
        let last = nats.publish(events).await;
        app.projected(last).await;
    }
    (nats, app, dir)
}

/// A request to `path` with the test key: its status and JSON body (null for none).
/// An endpoint's body over 8 KiB is refused as every refused body is: 413 with the API's
/// JSON error, not the HTTP layer's plain text.
#[tokio::test]
async fn an_endpoint_over_the_body_limit_is_refused_with_the_apis_error() {
    let (_nats, app, _dir) = service(&[], |_| {}).await;
    let big = json!({"url": "https://93.184.216.34/", "topics": ["results"], "padding": "x".repeat(9 * 1024)});
    let (status, body) = call(&app, reqwest::Method::POST, "/api/v1/webhooks", Some(big)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("body_not_accepted")),
        "{body}"
    );
}

async fn call(
    app: &App,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    call_as(app, KEY, method, path, body).await
}

async fn call_as(
    app: &App,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = app
        .client
        .request(method, format!("{}{path}", app.base))
        .header("X-API-Key", key);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.expect("a request");
    let status = res.status();
    let bytes = res.bytes().await.expect("a body");
    let json = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {bytes:?}"))
    };
    (status, json)
}

/// Makes an endpoint for `url` following `topics`; its id and secret.
async fn make(app: &App, url: &str, topics: &[&str]) -> (String, String) {
    let (status, made) = call(
        app,
        reqwest::Method::POST,
        "/api/v1/webhooks",
        Some(json!({"url": url, "topics": topics})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    described(app, "Webhook", &made).await;
    let id = made["id"].as_str().expect("an id").to_owned();
    let secret = made["secret"].as_str().expect("a secret").to_owned();
    (id, secret)
}

/// The frame of the race-day event at `seq`, as the socket sends it.
fn frame(app: &App, seq: u64) -> Value {
    let events = app.store().race_day(DAY, seq - 1, 1).expect("the journal");
    let event = events
        .into_iter()
        .find(|e| e.seq == seq)
        .expect("the event");
    serde_json::from_str(&event.frame).expect("a JSON frame")
}

/// Checks `value` against the service's OpenAPI description: the component `name`, or
/// with `name` `webhooks.NAME`, the payload of that webhook.
async fn described(app: &App, name: &str, value: &Value) {
    let (status, spec) = call(app, reqwest::Method::GET, "/api/v1/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    let mut validator = racing::http::strict::Validator::new(&spec);
    let checked = match name.strip_prefix("webhooks.") {
        Some(hook) => {
            let schema = &spec["webhooks"][hook]["post"]["requestBody"]["content"]
                ["application/json"]["schema"];
            validator.check(hook, schema, value, name)
        }
        None => {
            let (owner, schema) = validator
                .component(&format!("#/components/schemas/{name}"))
                .expect("a schema");
            validator.check(&owner, schema, value, name)
        }
    };
    checked.unwrap_or_else(|e| panic!("{name} does not match its description: {e}\n{value:#}"));
}

/// Publishes `events` one at a time; their positions.
async fn publish_each(nats: &Nats, events: &[Envelope]) -> Vec<u64> {
    let mut seqs = Vec::new();
    for e in events {
        seqs.push(nats.publish(std::slice::from_ref(e)).await);
    }
    seqs
}

#[tokio::test]
async fn a_race_day_event_reaches_its_endpoint_signed_and_carrying_the_sockets_frame() {
    let (nats, mut app, _dir) =
        service(&[envelope(card(DAY, VENUE, 1, &["A1", "B2"]))], |_| {}).await;
    // The sender holds the lease; with no endpoint it reads nothing of the race day.
    tokio::time::timeout(WAIT, async {
        while app.metric("racing_webhook_lease_held").await != Some(1.0) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the sender's lease taken");
    let unsent = nats
        .publish(&[envelope(status(
            DAY,
            Some(VENUE),
            1,
            RaceStatus::Open,
            None,
        ))])
        .await;
    app.projected(unsent).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        app.metric("racing_webhook_journal_events_total").await,
        None
    );
    let receiver = Receiver::ok().await;
    let (id, secret) = make(&app, &receiver.url, &["results", "status"]).await;
    let seqs = publish_each(
        &nats,
        &[
            envelope(status(DAY, Some(VENUE), 1, RaceStatus::Off, None)),
            envelope(odds(DAY, 1, &[("A1", 3.0)])),
            envelope(scratch_at(DAY, VENUE, 1, "B2")),
            envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")])),
        ],
    )
    .await;
    let taken = receiver.wait_taken(2, WAIT).await;
    // The status and the result, in order; not the odds, nor the scratching (not followed).
    let expected = [(seqs[0], "status"), (seqs[3], "result")];
    assert_eq!(taken.len(), 2, "{taken:?}");
    for (got, (seq, kind)) in taken.iter().zip(expected) {
        assert!(got.verifies(&secret), "{got:?}");
        assert_eq!(got.id(), format!("msg_{id}_{seq}"));
        assert_eq!(got.headers["content-type"], "application/json");
        let body = got.json();
        assert_eq!(body["type"], kind);
        assert_eq!(body["seq"], seq);
        assert_eq!(body["data"], frame(&app, seq));
        assert_eq!(body["published_at"], body["data"]["published_at"]);
        described(&app, "webhooks.raceDayEvent", &body).await;
    }
    // The endpoint as listed: no secret; its deliveries, newest first.
    let (status, list) = call(&app, reqwest::Method::GET, "/api/v1/webhooks", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["webhooks"][0]["id"], id.as_str());
    assert!(list["webhooks"][0].get("secret").is_none(), "{list}");
    assert_eq!(list["webhooks"][0]["enabled"], true);
    described(&app, "WebhookList", &list).await;
    let path = format!("/api/v1/webhooks/{id}/deliveries");
    let (_, deliveries) = call(&app, reqwest::Method::GET, &path, None).await;
    described(&app, "WebhookDeliveries", &deliveries).await;
    assert_eq!(deliveries["position"], seqs[3], "{deliveries}");
    assert_eq!(deliveries["pending"], Value::Null);
    let attempts = deliveries["attempts"].as_array().expect("attempts");
    assert_eq!(attempts[0]["seq"], seqs[3]);
    assert_eq!(attempts[0]["status"], "delivered");
    assert_eq!(attempts[0]["response_code"], 200);
    assert_eq!(attempts[1]["seq"], seqs[0]);
    // Read once the endpoint was made: the status, the scratching and the result (odds
    // are not race-day events), not the status before it.
    assert_eq!(
        app.metric("racing_webhook_journal_events_total").await,
        Some(3.0)
    );
}

#[tokio::test]
async fn a_receiver_that_fails_for_ten_minutes_gets_every_event_in_order_once_it_answers() {
    // Ten minutes of the real schedule in one second: 0, 5 s, 5 min and 30 min become 0,
    // 8 ms, 0.5 s and 3 s.
    let (nats, app, _dir) = service(&[], |c| c.webhooks.retry_divisor = 600).await;
    // It fails for a second from the first delivery it is sent.
    let mut first: Option<tokio::time::Instant> = None;
    let receiver = Receiver::answering(move |got, _| {
        let first = *first.get_or_insert(got.at);
        if got.at.duration_since(first) < Duration::from_secs(1) {
            500
        } else {
            200
        }
    })
    .await;
    let (id, secret) = make(&app, &receiver.url, &["results"]).await;
    let seqs = publish_each(
        &nats,
        &[
            envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")])),
            envelope(result(DAY, VENUE, 2, vec![runner(Some(1), "B2")])),
            envelope(result(DAY, VENUE, 3, vec![runner(Some(1), "C3")])),
        ],
    )
    .await;
    let taken = receiver.wait_taken(3, WAIT).await;
    let ids: Vec<String> = taken.iter().map(|g| g.id().to_owned()).collect();
    let expected: Vec<String> = seqs.iter().map(|s| format!("msg_{id}_{s}")).collect();
    assert_eq!(ids, expected, "every event, in order, once taken");
    assert!(taken.iter().all(|g| g.verifies(&secret)));
    let got = receiver.got();
    let failed: Vec<&receiver::Got> = got.iter().filter(|g| g.answered == 500).collect();
    assert!(failed.len() >= 2, "the first event was retried: {got:?}");
    assert!(
        failed.iter().all(|g| g.id() == expected[0]),
        "nothing after the first event was sent before it was taken"
    );
    let path = format!("/api/v1/webhooks/{id}/deliveries");
    let (_, deliveries) = call(&app, reqwest::Method::GET, &path, None).await;
    let attempts = deliveries["attempts"].as_array().expect("attempts");
    let first = attempts
        .iter()
        .filter(|a| a["seq"] == seqs[0])
        .collect::<Vec<_>>();
    assert!(
        first.iter().any(|a| a["status"] == "failed"
            && a["response_code"] == 500
            && a["next_attempt_at"].is_string()),
        "{deliveries}"
    );
    assert!(
        first.iter().any(|a| a["status"] == "delivered"),
        "{deliveries}"
    );
}

/// Names resolved as a test says, and changed as it goes.
#[derive(Default)]
struct Stub(Mutex<HashMap<String, Vec<IpAddr>>>);

impl Stub {
    fn set(&self, name: &str, addrs: &[&str]) {
        let addrs = addrs
            .iter()
            .map(|a| a.parse().expect("an address"))
            .collect();
        self.0.lock().expect("lock").insert(name.to_owned(), addrs);
    }
}

impl Resolve for Stub {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>> {
        let found = self.0.lock().expect("lock").get(host).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such name"))
        })
    }
}

#[tokio::test]
async fn an_endpoint_is_refused_for_each_class_of_address_that_is_not_public() {
    let stub = Arc::new(Stub::default());
    let resolver = stub.clone();
    // Loopback opened for the receivers, as the tests' setting does: a name that resolves
    // to it is refused only as the service's own listener.
    let (_nats, app, _dir) = service(&[], move |c| c.webhooks.resolver = resolver).await;
    let own_port = app.base.rsplit(':').next().expect("a port").to_owned();
    let admin_port = app.admin.rsplit(':').next().expect("a port").to_owned();
    for (name, addr) in [
        ("private.example", "10.0.0.7"),
        ("metadata.example", "169.254.169.254"),
        ("link-local6.example", "fe80::1"),
        ("multicast.example", "224.0.0.251"),
        ("unspecified.example", "0.0.0.0"),
        ("unique-local.example", "fd12::1"),
        ("shared.example", "100.64.0.1"),
        ("mapped.example", "::ffff:169.254.169.254"),
        ("own.example", "127.0.0.1"),
    ] {
        stub.set(name, &[addr]);
    }
    stub.set("mixed.example", &["93.184.216.34", "192.168.1.1"]);
    let refused = [
        ("https://private.example/hook".to_owned(), "private"),
        (
            "https://metadata.example/latest/meta-data".to_owned(),
            "link-local",
        ),
        ("https://link-local6.example/".to_owned(), "link-local"),
        ("https://multicast.example/".to_owned(), "multicast"),
        ("https://unspecified.example/".to_owned(), "unspecified"),
        ("https://unique-local.example/".to_owned(), "private"),
        ("https://shared.example/".to_owned(), "reserved"),
        ("https://mapped.example/".to_owned(), "link-local"),
        ("https://mixed.example/".to_owned(), "private"),
        ("https://169.254.169.254/".to_owned(), "link-local"),
        ("https://[::ffff:10.0.0.1]/".to_owned(), "private"),
        (
            format!("http://own.example:{own_port}/api/v1/"),
            "own listeners",
        ),
        (
            format!("http://127.0.0.1:{admin_port}/metrics"),
            "own listeners",
        ),
        ("http://93.184.216.34/".to_owned(), "only https"),
        ("https://nowhere.example/".to_owned(), "does not resolve"),
        ("ftp://93.184.216.34/".to_owned(), "https"),
        ("https://user:pass@93.184.216.34/".to_owned(), "credentials"),
    ];
    for (url, why) in refused {
        let (status, body) = call(
            &app,
            reqwest::Method::POST,
            "/api/v1/webhooks",
            Some(json!({"url": url, "topics": ["results"]})),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{url}: `{message}` names {why}");
    }
    let (status, body) = call(&app, reqwest::Method::GET, "/api/v1/webhooks", None).await;
    assert_eq!(
        (status, body["webhooks"].as_array().map(Vec::len)),
        (StatusCode::OK, Some(0))
    );
}

#[tokio::test]
async fn a_host_that_resolves_elsewhere_after_registration_is_checked_again_at_delivery() {
    let stub = Arc::new(Stub::default());
    let resolver = stub.clone();
    let (nats, app, _dir) = service(&[], move |c| {
        c.webhooks.resolver = resolver;
        c.webhooks.retry_divisor = 600;
    })
    .await;
    let receiver = Receiver::ok().await;
    let port = receiver
        .url
        .split(':')
        .nth(2)
        .expect("a port")
        .trim_end_matches("/hook")
        .to_owned();
    stub.set("receiver.example", &["127.0.0.1"]);
    let (id, secret) = make(
        &app,
        &format!("http://receiver.example:{port}/hook"),
        &["results"],
    )
    .await;
    // The name now points at the cloud metadata address: the delivery is refused before
    // any connection, and retried.
    stub.set("receiver.example", &["169.254.169.254"]);
    let seq = nats
        .publish(&[envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")]))])
        .await;
    let path = format!("/api/v1/webhooks/{id}/deliveries");
    let deadline = tokio::time::Instant::now() + WAIT;
    let refused = loop {
        let (_, deliveries) = call(&app, reqwest::Method::GET, &path, None).await;
        if let Some(a) = deliveries["attempts"]
            .as_array()
            .and_then(|a| a.first())
            .cloned()
        {
            break a;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no attempt: {deliveries}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(refused["status"], "failed", "{refused}");
    assert!(refused.get("response_code").is_none(), "{refused}");
    let error = refused["error"].as_str().unwrap_or_default();
    assert!(error.contains("link-local"), "{error}");
    assert!(receiver.got().is_empty(), "nothing reached anyone");
    // Back on loopback: the next attempt goes.
    stub.set("receiver.example", &["127.0.0.1"]);
    let taken = receiver.wait_taken(1, WAIT).await;
    assert_eq!(taken[0].id(), format!("msg_{id}_{seq}"));
    assert!(taken[0].verifies(&secret));
}

#[tokio::test]
async fn an_endpoint_is_its_keys_alone_and_rotates_pings_and_replays() {
    let other = "another-key-0123456789";
    let (nats, app, _dir) = service(&[], |c| {
        c.api_keys.push(other.to_owned());
        c.webhooks.max_endpoints = 2;
    })
    .await;
    let receiver = Receiver::ok().await;
    let (id, first_secret) = make(&app, &receiver.url, &["results", "cards"]).await;
    // Another key sees none of it.
    let path = format!("/api/v1/webhooks/{id}");
    let (status, _) = call_as(&app, other, reqwest::Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call_as(&app, other, reqwest::Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, theirs) = call_as(&app, other, reqwest::Method::GET, "/api/v1/webhooks", None).await;
    assert_eq!(theirs["webhooks"], json!([]));
    // The key's plan: two endpoints here.
    make(&app, &receiver.url, &["status"]).await;
    let (status, body) = call(
        &app,
        reqwest::Method::POST,
        "/api/v1/webhooks",
        Some(json!({"url": receiver.url, "topics": ["results"]})),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::CONFLICT, Some("limit_reached")),
        "{body}"
    );
    // Odds are not offered, and say where to go.
    let (status, body) = call(
        &app,
        reqwest::Method::POST,
        "/api/v1/webhooks",
        Some(json!({"url": receiver.url, "topics": ["odds"]})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/api/v1/live"),
        "{body}"
    );

    // A rotation: both secrets sign for a day, the new one first.
    let (status, rotated) =
        call(&app, reqwest::Method::POST, &format!("{path}/rotate"), None).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let new_secret = rotated["secret"].as_str().expect("a new secret").to_owned();
    assert_ne!(new_secret, first_secret);
    let (status, ping) = call(&app, reqwest::Method::POST, &format!("{path}/test"), None).await;
    assert_eq!(status, StatusCode::OK, "{ping}");
    assert_eq!(
        (ping["delivered"].as_bool(), ping["response_code"].as_u64()),
        (Some(true), Some(200))
    );
    let pinged = receiver.wait_taken(1, WAIT).await;
    assert_eq!(pinged[0].json()["type"], "ping");
    described(&app, "webhooks.ping", &pinged[0].json()).await;
    described(&app, "WebhookTest", &ping).await;
    assert_eq!(pinged[0].id(), ping["webhook_id"].as_str().expect("an id"));
    assert!(pinged[0].verifies(&first_secret) && pinged[0].verifies(&new_secret));
    assert_eq!(pinged[0].headers["webhook-signature"].split(' ').count(), 2);

    // Deliveries, then a replay of them: the same ids again, in order.
    let seqs = publish_each(
        &nats,
        &[
            envelope(card(DAY, VENUE, 1, &["A1"])),
            envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")])),
        ],
    )
    .await;
    let taken = receiver.wait_taken(3, WAIT).await;
    let first: Vec<String> = taken[1..].iter().map(|g| g.id().to_owned()).collect();
    assert_eq!(
        first,
        seqs.iter()
            .map(|s| format!("msg_{id}_{s}"))
            .collect::<Vec<_>>()
    );
    let (status, _) = call(
        &app,
        reqwest::Method::POST,
        &format!("{path}/replay?since={}", seqs[0] - 1),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let again = receiver.wait_taken(5, WAIT).await;
    let replayed: Vec<String> = again[3..].iter().map(|g| g.id().to_owned()).collect();
    assert_eq!(replayed, first);
    let (status, body) = call(&app, reqwest::Method::POST, &format!("{path}/replay"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // Removed: gone for good.
    let (status, _) = call(&app, reqwest::Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = call(&app, reqwest::Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// An endpoint on `receiver` for a key made in the registry with an owner's address, to
/// whom a disabled endpoint is told by mail: the key and the endpoint's id.
async fn owned_endpoint(nats: &Nats, app: &App, receiver: &Receiver) -> (String, String) {
    let registry = racing::keys::registry::Registry::open(&nats.service, "RACING")
        .await
        .expect("the key registry");
    let (key, _) = registry
        .create_for(
            "a subscriber",
            racing::keys::KeyLimits::default(),
            "owner@example.com",
            "trial",
        )
        .await
        .expect("a key");
    // The service hears of the key through the registry's watch.
    let deadline = tokio::time::Instant::now() + WAIT;
    let made = loop {
        let (status, made) = call_as(
            app,
            &key,
            reqwest::Method::POST,
            "/api/v1/webhooks",
            Some(json!({"url": receiver.url, "topics": ["results"]})),
        )
        .await;
        if status == StatusCode::CREATED {
            break made;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}: {made}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    (key, made["id"].as_str().expect("an id").to_owned())
}

/// The endpoint `id` of `key`'s once it is disabled, and the mail its owner was sent.
async fn disabled_and_told(app: &App, dir: &TempDir, key: &str, id: &str) -> (Value, String) {
    let path = format!("/api/v1/webhooks/{id}");
    let deadline = tokio::time::Instant::now() + WAIT;
    let disabled = loop {
        let (_, endpoint) = call_as(app, key, reqwest::Method::GET, &path, None).await;
        if endpoint["enabled"] == false {
            break endpoint;
        }
        assert!(tokio::time::Instant::now() < deadline, "{endpoint}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let outbox = dir.path().join("mail/outbox");
    let deadline = tokio::time::Instant::now() + WAIT;
    let mail = loop {
        let found = std::fs::read_dir(&outbox)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .find(|m| m.contains(id));
        if let Some(mail) = found {
            break mail;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no mail in {}",
            outbox.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(mail.contains("To: owner@example.com"), "{mail}");
    assert!(mail.contains("/replay?since="), "{mail}");
    (disabled, mail)
}

#[tokio::test]
async fn an_endpoint_that_answers_gone_is_disabled_and_its_subscriber_told_by_mail() {
    let (nats, app, dir) = service(&[], |_| {}).await;
    let receiver = Receiver::answering(|_, _| 410).await;
    let (key, id) = owned_endpoint(&nats, &app, &receiver).await;
    nats.publish(&[
        envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")])),
        envelope(result(DAY, VENUE, 2, vec![runner(Some(1), "B2")])),
    ])
    .await;
    let (disabled, _) = disabled_and_told(&app, &dir, &key, &id).await;
    assert!(
        disabled["disabled_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("410"),
        "{disabled}"
    );
    assert_eq!(receiver.got().len(), 1, "one attempt, nothing after a 410");
}

#[tokio::test]
async fn an_endpoint_that_fails_every_attempt_of_the_schedule_is_disabled_after_the_last_and_its_owner_told(
) {
    // The schedule (about 75 hours) a hundred-thousandth of itself: under 3 s.
    let (nats, app, dir) = service(&[], |c| c.webhooks.retry_divisor = 100_000).await;
    let receiver = Receiver::answering(|_, _| 500).await;
    let (key, id) = owned_endpoint(&nats, &app, &receiver).await;
    nats.publish(&[envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")]))])
        .await;
    let (disabled, _) = disabled_and_told(&app, &dir, &key, &id).await;
    let reason = disabled["disabled_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("10 attempts"), "{disabled}");
    let got = receiver.got();
    assert_eq!(
        got.len(),
        racing::webhooks::SCHEDULE.len(),
        "immediately and each retry of the schedule, then nothing"
    );
    assert!(
        got.iter().all(|g| g.id() == got[0].id()),
        "every attempt with the same webhook-id"
    );
    let (_, deliveries) = call_as(
        &app,
        &key,
        reqwest::Method::GET,
        &format!("/api/v1/webhooks/{id}/deliveries"),
        None,
    )
    .await;
    assert_eq!(
        deliveries["attempts"][0]["status"], "given_up",
        "{deliveries}"
    );
    assert_eq!(deliveries["attempts"][0]["attempt"], 10, "{deliveries}");
}

#[tokio::test]
async fn a_kill_in_the_middle_of_a_retry_schedule_loses_nothing_and_sends_nothing_taken_twice() {
    use crate::reliability::process::Service;
    let nats = Nats::start().await;
    let work = TempDir::new().expect("temp dir");
    // The schedule a sixtieth of the real one: the third attempt comes 5 s after the
    // second, time enough to kill the service in between.
    let env = [
        ("RACING_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
        ("RACING_WEBHOOK_LEASE_SECS", "2"),
        ("RACING_WEBHOOK_RETRY_DIVISOR", "60"),
    ];
    let spawn = |n: usize| {
        Service::spawn_with(
            Some(&nats.broker()),
            &work.path().join("data"),
            &work.path().join(format!("racing-{n}.log")),
            &env,
        )
    };
    let mut first = spawn(1);
    let client = reqwest::Client::new();
    let base = first.ready(&client, "/api/v1/meetings").await;
    // The receiver refuses the second event until told otherwise.
    let refusing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let refuse = refusing.clone();
    let second_id = Arc::new(Mutex::new(String::new()));
    let second = second_id.clone();
    let receiver = Receiver::answering(move |got, _| {
        let refused = got.id() == *second.lock().expect("lock")
            && refuse.load(std::sync::atomic::Ordering::SeqCst);
        if refused {
            500
        } else {
            200
        }
    })
    .await;
    let made: Value = client
        .post(format!("{base}/api/v1/webhooks"))
        .header("X-API-Key", KEY)
        .json(&json!({"url": receiver.url, "topics": ["results"]}))
        .send()
        .await
        .expect("a request")
        .json()
        .await
        .expect("JSON");
    let id = made["id"].as_str().expect("an id").to_owned();
    let secret = made["secret"].as_str().expect("a secret").to_owned();
    let results = [1, 2, 3].map(|n| envelope(result(DAY, VENUE, n, vec![runner(Some(1), "A1")])));
    let first_seq = nats.publish(&results[..1]).await;
    receiver.wait_taken(1, WAIT).await;
    let second_seq = first_seq + 1;
    *second_id.lock().expect("lock") = format!("msg_{id}_{second_seq}");
    assert_eq!(nats.publish(&results[1..]).await, second_seq + 1);
    // Two attempts of the second event fail, and are written with the third due 5 s
    // later. Kill now.
    let deliveries = format!("{base}/api/v1/webhooks/{id}/deliveries");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let owed: Value = client
            .get(&deliveries)
            .header("X-API-Key", KEY)
            .send()
            .await
            .expect("a request")
            .json()
            .await
            .expect("JSON");
        if owed["pending"]["attempts"] == 2 {
            assert_eq!(owed["pending"]["seq"], second_seq, "{owed}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{owed}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second_failed = receiver.got().last().map(|g| g.at).expect("an attempt");
    first.kill().await;
    refusing.store(false, std::sync::atomic::Ordering::SeqCst);
    // Another process on the same data and NATS takes the lease once the dead one's
    // lapses, and goes on from what was written.
    let mut again = spawn(2);
    again.ready(&client, "/api/v1/meetings").await;
    let taken = receiver.wait_taken(3, Duration::from_secs(60)).await;
    let ids: Vec<&str> = taken.iter().map(|g| g.id()).collect();
    let expected: Vec<String> = (first_seq..=second_seq + 1)
        .map(|s| format!("msg_{id}_{s}"))
        .collect();
    assert_eq!(
        ids, expected,
        "each event taken once, in order, after the kill too"
    );
    assert!(taken.iter().all(|g| g.verifies(&secret)));
    let got = receiver.got();
    assert_eq!(got.len(), 5, "two failures, then each once: {got:?}");
    // The schedule was kept across the kill: the third attempt came when it was due.
    let third = taken[1].at.duration_since(second_failed);
    assert!(
        third >= Duration::from_millis(4500),
        "third attempt after {third:?}"
    );
    drop(first);
}

#[tokio::test]
async fn only_one_replica_sends_each_delivery_and_another_takes_over_when_it_stops() {
    let nats = Nats::start().await;
    let (a_dir, b_dir) = (TempDir::new().expect("dir"), TempDir::new().expect("dir"));
    // The first replica takes the lease, as its first delivery shows; then another
    // starts beside it.
    let a = App::start_with(&nats, a_dir.path(), loopback).await;
    let receiver = Receiver::ok().await;
    let (id, _) = make(&a, &receiver.url, &["results", "status"]).await;
    let result_of = |n| envelope(result(DAY, VENUE, n, vec![runner(Some(1), "A1")]));
    let mut seqs = publish_each(&nats, &[result_of(1)]).await;
    receiver.wait_taken(1, WAIT).await;
    let mut b = App::start_with(&nats, b_dir.path(), loopback).await;
    for n in 2..=5 {
        seqs.extend(publish_each(&nats, &[result_of(n)]).await);
    }
    receiver.wait_taken(5, WAIT).await;
    // One replica holds the lease: the other sends none of them again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.got().len(), 5, "{:?}", receiver.got());
    a.stop().await;
    for n in 6..=7 {
        seqs.extend(
            publish_each(
                &nats,
                &[envelope(status(DAY, Some(VENUE), n, RaceStatus::Off, None))],
            )
            .await,
        );
    }
    b.projected(*seqs.last().expect("a seq")).await;
    let taken = receiver.wait_taken(7, WAIT).await;
    let ids: Vec<&str> = taken.iter().map(|g| g.id()).collect();
    let expected: Vec<String> = seqs.iter().map(|s| format!("msg_{id}_{s}")).collect();
    assert_eq!(ids, expected);
    assert_eq!(receiver.got().len(), 7);
}

#[tokio::test]
async fn the_references_openssl_check_verifies_a_delivery_and_refuses_a_tampered_one() {
    let (nats, app, _dir) = service(&[], |_| {}).await;
    let receiver = Receiver::ok().await;
    let (_, secret) = make(&app, &receiver.url, &["results"]).await;
    nats.publish(&[envelope(result(DAY, VENUE, 1, vec![runner(Some(1), "A1")]))])
        .await;
    let got = receiver.wait_taken(1, WAIT).await.remove(0);
    let script = crate::support::marked("api.md", "verification:", "end of verification");
    let script = script
        .split("```sh")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a shell block");
    let run = |body: &[u8]| {
        let dir = TempDir::new().expect("temp dir");
        std::fs::write(dir.path().join("body.json"), body).expect("the body");
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(dir.path())
            .env("SECRET", &secret)
            .env("ID", got.id())
            .env("TS", &got.headers["webhook-timestamp"])
            .env("SIG", &got.headers["webhook-signature"])
            .output()
            .expect("bash runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        )
    };
    assert_eq!(run(&got.body), (true, "verified".to_owned()));
    let mut tampered = got.body.to_vec();
    let last = tampered.len() - 2;
    tampered[last] = b' ';
    assert_eq!(
        run(&tampered),
        (false, "not signed with this secret".to_owned())
    );
}

#[tokio::test]
async fn a_replay_sends_what_the_service_built_its_store_from_at_start() {
    // The log is there before the service: its start replays it into an empty store, a
    // bulk load, before the endpoint is made and asked to replay from the beginning.
    let nats = Nats::start().await;
    let mut events = vec![envelope(card(DAY, VENUE, 1, &["A1", "B2"]))];
    events.extend((2..=40).map(|n| envelope(card(DAY, VENUE, n, &["A1"]))));
    events.push(envelope(status(DAY, Some(VENUE), 1, RaceStatus::Off, None)));
    let last = nats.publish(&events).await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), loopback).await;
    app.projected(last).await;
    let receiver = Receiver::ok().await;
    let (status, made) = call(
        &app,
        reqwest::Method::POST,
        "/api/v1/webhooks",
        Some(json!({"url": receiver.url, "topics": ["cards", "status"], "date": DAY})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let id = made["id"].as_str().expect("an id");
    let path = format!("/api/v1/webhooks/{id}/replay?since=0");
    let (status, _) = call(&app, reqwest::Method::POST, &path, None).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let taken = receiver.wait_taken(events.len(), WAIT).await;
    let seqs: Vec<u64> = taken
        .iter()
        .map(|g| g.json()["seq"].as_u64().expect("a seq"))
        .collect();
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
}

/// A server on loopback that answers each connection's first read with `answer`, then
/// holds the connection open without a word more (`answer` empty: never answers); its URL
/// and how many connections it took.
async fn raw_server(answer: &'static [u8]) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!(
        "http://{}/hook",
        listener.local_addr().expect("its address")
    );
    let taken = Arc::new(AtomicUsize::new(0));
    let count = taken.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = vec![0; 64 * 1024];
                let _ = stream.read(&mut request).await;
                if !answer.is_empty() {
                    let _ = stream.write_all(answer).await;
                }
                tokio::time::sleep(Duration::from_secs(60)).await;
            });
        }
    });
    (url, taken)
}

/// The `ping` of `POST /api/v1/webhooks/{id}/test` to an endpoint made for `url`.
async fn ping(app: &App, url: &str) -> Value {
    let (id, _) = make(app, url, &["results"]).await;
    let (status, tested) = call(
        app,
        reqwest::Method::POST,
        &format!("/api/v1/webhooks/{id}/test"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{tested}");
    tested
}

#[tokio::test]
async fn a_delivery_follows_no_redirect_reads_a_few_kib_of_an_answer_and_stops_at_its_timeout() {
    let (_nats, app, _dir) = service(&[], |c| c.webhooks.timeout = Duration::from_secs(1)).await;

    // A redirect is the receiver's answer, a failure: where it points is never asked.
    let (elsewhere, asked) = raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").await;
    let redirect: &'static [u8] = Box::leak(
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: {elsewhere}\r\nContent-Length: 0\r\n\r\n"
        )
        .into_bytes()
        .into_boxed_slice(),
    );
    let (redirecting, _) = raw_server(redirect).await;
    let tested = ping(&app, &redirecting).await;
    assert_eq!(tested["delivered"], false, "{tested}");
    assert_eq!(tested["response_code"], 307, "{tested}");
    assert_eq!(
        asked.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the redirect followed"
    );

    // A 2xx whose body says it is 100 MB and sends 64 KiB of it: the delivery is taken as
    // soon as a few KiB are read, long before the timeout.
    let long: &'static [u8] = Box::leak(
        [
            b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n".as_slice(),
            &[b'x'; 64 * 1024],
        ]
        .concat()
        .into_boxed_slice(),
    );
    let (endless, _) = raw_server(long).await;
    let tested = ping(&app, &endless).await;
    assert_eq!(tested["delivered"], true, "{tested}");
    assert!(
        tested["duration_ms"].as_u64().unwrap_or(u64::MAX) < 900,
        "{tested}"
    );

    // A receiver that never answers: given up at the timeout.
    let (silent, _) = raw_server(b"").await;
    let tested = ping(&app, &silent).await;
    assert_eq!(tested["delivered"], false, "{tested}");
    assert!(
        tested["error"]
            .as_str()
            .unwrap_or_default()
            .contains("no answer within 1"),
        "{tested}"
    );
    let took = tested["duration_ms"].as_u64().unwrap_or(0);
    assert!((1_000..3_000).contains(&took), "{tested}");
}
