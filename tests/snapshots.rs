//! Snapshots of the read models in the NATS object store: a replica that starts from one
//! answers as a clean replay does; a snapshot that fails a check is refused and the
//! replica replays; a kill while one loads or is written leaves nothing half done.

use std::time::Duration;

use async_nats::jetstream::object_store::{ObjectMetadata, ObjectStore};
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;
use tokio::io::AsyncReadExt as _;

use crate::reliability::process::{Service, WAIT};
use crate::replayed::{answer, assert_answers_alike, feed, race_week};
use crate::support::{App, Nats};

const BUCKET: &str = "RACING_SNAPSHOTS";

/// POSTs to the admin listener at `path`: the status and the JSON body.
async fn admin_post(app: &App, path: &str) -> (StatusCode, Value) {
    let res = app
        .client
        .post(format!("{}{path}", app.admin))
        .send()
        .await
        .expect("admin listener");
    let status = res.status();
    (status, res.json().await.unwrap_or_default())
}

/// Has `app` write a snapshot now; its name and checkpoint.
async fn snapshot_of(app: &App) -> (String, u64) {
    let (status, created) = admin_post(app, "/snapshots").await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let listed = &created["listed"];
    (
        listed["name"].as_str().expect("a name").to_owned(),
        listed["checkpoint"].as_u64().expect("a checkpoint"),
    )
}

/// How a service says its start went.
async fn start_of(app: &App) -> Value {
    app.admin_json("/status").await["start"].clone()
}

/// The first `n` events of the demo's season up to today.
fn some_events(n: usize) -> Vec<racing_events::Envelope> {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::get("Asia/Hong_Kong").expect("zone"))
        .date();
    let mut events = racing_demo::season(7, today).events;
    events.truncate(n);
    events
}

/// The names of the store directories under `data_dir`.
fn stores(data_dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir)
        .expect("data directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("read-models") && !name.ends_with(".active"))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_replica_started_from_a_snapshot_answers_as_a_clean_replay() {
    let nats = Nats::start().await;
    let week = race_week();
    let (early, late) = week.events.split_at(week.events.len() * 2 / 3);

    // The first replica applies part of the log, and writes a snapshot of it.
    let first_dir = TempDir::new().expect("temp dir");
    let mut first = App::start(&nats, first_dir.path()).await;
    let reached = nats.publish(early).await;
    first.projected(reached).await;
    let (name, checkpoint) = snapshot_of(&first).await;
    assert_eq!(checkpoint, reached);

    // A third replica starts from it while the rest of the log keeps coming.
    let third_dir = TempDir::new().expect("temp dir");
    let (last, mut third) = tokio::join!(nats.publish(late), App::start(&nats, third_dir.path()));
    let start = start_of(&third).await;
    assert_eq!(start["path"], "snapshot", "{start}");
    assert_eq!(start["snapshot"], name.as_str());
    assert_eq!(start["from_checkpoint"], checkpoint);
    assert_eq!(
        stores(third_dir.path()).len(),
        1,
        "{:?}",
        stores(third_dir.path())
    );

    // And a replica that replays the whole log.
    let replay_dir = TempDir::new().expect("temp dir");
    let mut replayed =
        App::start_with(&nats, replay_dir.path(), |c| c.snapshots.load = false).await;
    assert_eq!(start_of(&replayed).await["path"], "replay");

    first.projected(last).await;
    third.projected(last).await;
    replayed.projected(last).await;
    assert_answers_alike(&replayed, &third, last, &week).await;

    replayed.stop().await;
    third.stop().await;
    first.stop().await;
}

/// The bytes and metadata of object `name`.
async fn object(bucket: &ObjectStore, name: &str) -> (Vec<u8>, ObjectMetadata) {
    let mut read = bucket.get(name).await.expect("object");
    let mut bytes = Vec::new();
    read.read_to_end(&mut bytes).await.expect("bytes");
    let info = bucket.info(name).await.expect("info");
    let meta = ObjectMetadata {
        name: info.name.clone(),
        metadata: info.metadata.clone(),
        ..Default::default()
    };
    (bytes, meta)
}

/// Puts `bytes` as snapshot `name`, with `meta`'s metadata changed by `change`.
async fn put(
    bucket: &ObjectStore,
    name: &str,
    bytes: &[u8],
    meta: &ObjectMetadata,
    change: impl FnOnce(&mut std::collections::HashMap<String, String>),
) {
    let mut meta = ObjectMetadata {
        name: name.to_owned(),
        metadata: meta.metadata.clone(),
        ..Default::default()
    };
    change(&mut meta.metadata);
    bucket.put(meta, &mut &bytes[..]).await.expect("put");
}

#[tokio::test]
async fn a_snapshot_damaged_or_of_another_layout_or_stream_is_refused_for_a_replay() {
    let nats = Nats::start().await;
    let events = some_events(1500);
    let first_dir = TempDir::new().expect("temp dir");
    let mut first = App::start(&nats, first_dir.path()).await;
    let last = nats.publish(&events).await;
    first.projected(last).await;
    let (genuine, checkpoint) = snapshot_of(&first).await;

    let bucket = nats.service.get_object_store(BUCKET).await.expect("bucket");
    let (bytes, meta) = object(&bucket, &genuine).await;
    let newer = |n: u64, layout: &str| format!("read-models-{layout}-{:020}", checkpoint + n);
    // This version's layout, and an older one.
    let current = racing_projections::layout();
    // A byte changed: the object store's own digest is of the changed bytes, the
    // snapshot's is not.
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    put(&bucket, &newer(1, current), &damaged, &meta, |_| {}).await;
    // Another layout's.
    put(&bucket, &newer(2, "16"), &bytes, &meta, |m| {
        m.insert("layout".into(), "16".into());
    })
    .await;
    // Another stream's, by its metadata.
    put(&bucket, &newer(3, current), &bytes, &meta, |m| {
        m.insert(
            "stream".into(),
            "RACING created 2020-01-01T00:00:00Z".into(),
        );
    })
    .await;
    // Another stream's, by its file: its metadata names this one.
    let other = TempDir::new().expect("temp dir");
    let store = racing_projections::Store::open(&other.path().join("store")).expect("store");
    store
        .set_stream("RACING created 2020-01-01T00:00:00Z")
        .expect("stream");
    let file = other.path().join("snapshot");
    let summary = store.write_snapshot(&file, || true).expect("written");
    let foreign = std::fs::read(&file).expect("file");
    put(&bucket, &newer(4, current), &foreign, &meta, |m| {
        m.insert("digest".into(), summary.digest.clone());
    })
    .await;
    drop(store);
    // `racing snapshot verify` says the same of each, before any start does.
    let (status, body) = admin_post(&first, &format!("/snapshots/verify?name={genuine}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["verified"]["checkpoint"], checkpoint);
    let (status, body) = admin_post(
        &first,
        &format!("/snapshots/verify?name={}", newer(1, current)),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("digest"),
        "{body}"
    );
    let (status, body) = admin_post(
        &first,
        &format!("/snapshots/verify?name={}", newer(4, current)),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    bucket.delete(&genuine).await.expect("delete");

    let second_dir = TempDir::new().expect("temp dir");
    let mut second = App::start(&nats, second_dir.path()).await;
    let start = start_of(&second).await;
    assert_eq!(start["path"], "replay", "{start}");
    let refused: Vec<String> = start["refused"]
        .as_array()
        .expect("refused")
        .iter()
        .map(|r| r.as_str().unwrap_or_default().to_owned())
        .collect();
    let why = |n: u64, layout: &str, said: &str| {
        let name = newer(n, layout);
        assert!(
            refused
                .iter()
                .any(|r| r.starts_with(&name) && r.contains(said)),
            "{name} refused for `{said}`: {refused:#?}"
        );
    };
    why(1, current, "digest");
    why(2, "16", "layout 16");
    why(3, current, "of stream RACING created 2020");
    why(4, current, "built from stream RACING created 2020");
    assert_eq!(refused.len(), 4, "{refused:#?}");
    // Nothing of a refused snapshot is left, let alone served.
    assert_eq!(stores(second_dir.path()), ["read-models"]);

    second.projected(last).await;
    let whole = feed(&first, 0, 10_000).await;
    assert_eq!(feed(&second, 0, 10_000).await, whole);
    for change in whole[0]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .take(200)
    {
        let path = change["path"].as_str().expect("a path");
        assert_eq!(answer(&second, path).await, answer(&first, path).await);
    }

    // A new snapshot removes those of another stream and of an older layout, and keeps
    // the newest three of its own layout and stream (by their metadata).
    let (status, created) = admin_post(&first, "/snapshots").await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["removed"],
        serde_json::json!([newer(3, current), newer(2, "16")]),
        "{created}"
    );
    second.stop().await;
    first.stop().await;
}

/// Waits for `said` in the service's log, then kills it; panics if `done` came first.
async fn kill_at(service: &mut Service, said: &str, done: &str) {
    service.wait_for_log(said, WAIT).await;
    service.kill().await;
    assert!(
        !service.log_text().contains(done),
        "the kill came after `{done}`; log:\n{}",
        service.log_tail()
    );
}

#[tokio::test]
async fn a_kill_while_a_snapshot_loads_or_is_written_leaves_nothing_half_done() {
    let nats = Nats::start().await;
    let last = nats.publish(&some_events(2500)).await;
    let work = TempDir::new().expect("temp dir");
    let bucket = nats.service.get_object_store(BUCKET).await.expect("bucket");
    let listed = || async {
        let mut names = Vec::new();
        let mut list = bucket.list().await.expect("list");
        while let Some(info) = futures::StreamExt::next(&mut list).await {
            let info = info.expect("info");
            if !info.deleted {
                names.push(info.name);
            }
        }
        names
    };

    // A replica writing its first snapshot, killed while it writes it.
    let writer_dir = work.path().join("writer");
    let mut writer = Service::spawn_with(
        Some(&nats.broker()),
        &writer_dir,
        &work.path().join("writer.log"),
        &[("RACING_SNAPSHOT_WRITE", "true")],
    );
    kill_at(
        &mut writer,
        "writing a snapshot of the read models",
        "snapshot of the read models written",
    )
    .await;
    assert!(
        listed().await.is_empty(),
        "no snapshot half written is listed"
    );

    // A snapshot, then a replica killed while it loads it.
    let first_dir = work.path().join("first");
    let mut first = App::start(&nats, &first_dir).await;
    first.projected(last).await;
    let (name, checkpoint) = snapshot_of(&first).await;
    assert_eq!(listed().await, std::slice::from_ref(&name));
    let loading_dir = work.path().join("loading");
    let log = work.path().join("loading.log");
    let quiet = [("RACING_SNAPSHOT_WRITE", "false")];
    let mut loading = Service::spawn_with(Some(&nats.broker()), &loading_dir, &log, &quiet);
    kill_at(
        &mut loading,
        "fetching and loading a snapshot",
        "read models loaded from a snapshot",
    )
    .await;

    // The next start loads it whole, and answers as the replica it came from.
    let mut again = Service::spawn_with(Some(&nats.broker()), &loading_dir, &log, &quiet);
    let client = reqwest::Client::new();
    let base = again
        .ready(&client, "/api/v1/changes?since=0&limit=1")
        .await;
    let status: Value = serde_json::from_str(&again.status(&client).await).expect("status");
    assert_eq!(status["start"]["path"], "snapshot", "{status}");
    assert_eq!(status["start"]["from_checkpoint"], checkpoint);
    let deadline = tokio::time::Instant::now() + WAIT;
    while status_checkpoint(&mut again, &client).await < last {
        assert!(tokio::time::Instant::now() < deadline, "caught up in time");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut paths = Vec::new();
    for page in feed(&first, 0, 10_000).await {
        for change in page["changes"].as_array().expect("changes") {
            paths.push(change["path"].as_str().expect("a path").to_owned());
        }
    }
    for path in paths.iter().step_by(37) {
        let (want, got) = (
            crate::reliability::process::get(&client, &first.base, path).await,
            crate::reliability::process::get(&client, &base, path).await,
        );
        assert_eq!(got.expect("an answer"), want.expect("an answer"), "{path}");
    }
    assert_eq!(stores(&loading_dir).len(), 1, "{:?}", stores(&loading_dir));
    again.kill().await;
    first.stop().await;
}

async fn status_checkpoint(service: &mut Service, client: &reqwest::Client) -> u64 {
    serde_json::from_str::<Value>(&service.status(client).await)
        .ok()
        .and_then(|s| s["checkpoint"].as_u64())
        .unwrap_or(0)
}

#[tokio::test]
async fn replicas_of_a_new_layout_replay_once_and_the_others_load_its_snapshot() {
    let nats = Nats::start().await;
    let last = nats.publish(&some_events(1500)).await;
    // Admin ports chosen beforehand, to be watched while the two start.
    let admin = [free_port(), free_port()];
    let writing = |port: u16| {
        move |c: &mut racing::config::Config| {
            c.snapshots.write = true;
            c.snapshots.wait = Duration::from_secs(120);
            c.admin_listen = ([127, 0, 0, 1], port).into();
        }
    };
    let (a, b) = (
        TempDir::new().expect("temp dir"),
        TempDir::new().expect("temp dir"),
    );
    let (mut one, mut two, waiting) = tokio::join!(
        App::start_with(&nats, a.path(), writing(admin[0])),
        App::start_with(&nats, b.path(), writing(admin[1])),
        waiting_said(&admin),
    );
    // The replica that waited for the other's snapshot said so while it waited, on an
    // admin listener that was up before its read models were.
    let waiting = waiting.expect("a replica said it was waiting");
    assert_eq!(waiting["ready"], false, "{waiting}");
    assert!(
        waiting["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("starting: waiting")),
        "{waiting}"
    );
    assert!(waiting["starting"]["secs"].as_f64().is_some(), "{waiting}");
    let starts = [start_of(&one).await, start_of(&two).await];
    let paths: Vec<&str> = starts
        .iter()
        .map(|s| s["path"].as_str().unwrap_or("?"))
        .collect();
    let mut sorted = paths.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["replay", "snapshot"], "{starts:?}");
    let waited = starts
        .iter()
        .find(|s| s["path"] == "snapshot")
        .expect("one loaded");
    assert!(waited["waited_secs"].as_f64().is_some(), "{waited}");
    one.projected(last).await;
    two.projected(last).await;
    let whole = feed(&one, 0, 10_000).await;
    assert_eq!(feed(&two, 0, 10_000).await, whole);
    two.stop().await;
    one.stop().await;
}

/// A free port on loopback.
fn free_port() -> u16 {
    racing::nats::free_port().expect("a free port")
}

/// Watches the admin listeners on `ports` of replicas that start: the `/readyz` answer
/// (503) of the first that says it waits for another's snapshot, which answers `/healthz`
/// meanwhile; `None` if none says so within [`WAIT`].
async fn waiting_said(ports: &[u16]) -> Option<Value> {
    let client = reqwest::Client::new();
    let watch = async {
        loop {
            for port in ports {
                let base = format!("http://127.0.0.1:{port}");
                let Ok(res) = client.get(format!("{base}/readyz")).send().await else {
                    continue;
                };
                let code = res.status();
                let body: Value = res.json().await.unwrap_or_default();
                let reason = body["reason"].as_str().unwrap_or_default();
                if code == StatusCode::SERVICE_UNAVAILABLE && reason.contains("waiting") {
                    let alive = client.get(format!("{base}/healthz")).send().await;
                    assert!(
                        alive.is_ok_and(|r| r.status().is_success()),
                        "alive while waiting"
                    );
                    return body;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, watch).await.ok()
}

/// Asks `app` for a snapshot, and asserts it refuses one now, saying `why`.
async fn refused_now(app: &App, why: &str) {
    let (status, body) = admin_post(app, "/snapshots").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let said = body["error"].as_str().unwrap_or_default();
    assert!(said.contains(why), "refused for `{why}`: {body}");
}

#[tokio::test]
async fn no_snapshot_is_taken_while_the_store_is_rebuilt_or_behind() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let first = nats.publish(&some_events(300)).await;
    app.projected(first).await;

    // Being rebuilt.
    let (reached, release) = app.faults.pause_rebuild_before_fold();
    let (status, body) = admin_post(&app, "/rebuild").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    tokio::time::timeout(Duration::from_secs(60), reached)
        .await
        .expect("the rebuild reads its first batch")
        .expect("the fault's gate");
    refused_now(&app, "rebuild").await;
    let _ = release.send(());
    let deadline = tokio::time::Instant::now() + WAIT;
    while app.admin_json("/rebuild").await["state"] == "running" {
        assert!(tokio::time::Instant::now() < deadline, "the rebuild ends");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Behind the stream by more than /readyz allows.
    let (stopped, go) = app.faults.pause_projector_before_batch();
    let last = nats.publish(&some_events(1500)[300..]).await;
    tokio::time::timeout(Duration::from_secs(60), stopped)
        .await
        .expect("the projector stops before a batch")
        .expect("the fault's gate");
    refused_now(&app, "behind").await;
    let _ = go.send(());
    app.projected(last).await;
    let (name, checkpoint) = snapshot_of(&app).await;
    assert_eq!(checkpoint, last);

    // `racing snapshot load`: a rebuild whose fresh store starts from it, folding only
    // what came after it.
    let more = nats.publish(&some_events(1600)[1500..]).await;
    app.projected(more).await;
    let (status, body) = admin_post(&app, "/rebuild?snapshot=newest").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let deadline = tokio::time::Instant::now() + WAIT;
    let rebuilt = loop {
        let status = app.admin_json("/rebuild").await;
        if status["state"] != "running" {
            break status;
        }
        assert!(tokio::time::Instant::now() < deadline, "the rebuild ends");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(rebuilt["state"], "done", "{rebuilt}");
    assert_eq!(rebuilt["snapshot"], name.as_str(), "{rebuilt}");
    assert_eq!(rebuilt["checkpoint"], more, "{rebuilt}");
    assert!(
        rebuilt["folded"].as_u64().is_some_and(|f| f <= more - last),
        "only what came after the snapshot is folded: {rebuilt}"
    );
    app.stop().await;
}
