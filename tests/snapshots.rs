//! Snapshots of the read models in the NATS object store: a replica that starts from one
//! answers as a clean replay does; a snapshot that fails a check is refused and the
//! replica replays; a kill while one loads or is sent leaves nothing behind, nor does a
//! writer whose lease passes on; a lease's life changed under a running replica sets its
//! pace; a snapshot never takes the room the log (in JetStream) or the read models (on
//! their disk) need; the bucket is bounded by the snapshots kept, and a rolling upgrade
//! keeps the newest of the older layout still run.

use std::time::Duration;

use async_nats::jetstream::object_store::{ObjectMetadata, ObjectStore};
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;
use tokio::io::AsyncReadExt as _;

use crate::projector::SmallDisk;
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

/// The bytes the snapshots' bucket holds: its stream's, chunks of objects whose metadata
/// was never written included.
async fn bucket_bytes(nats: &Nats) -> u64 {
    let mut stream = nats
        .service
        .get_stream(format!("OBJ_{BUCKET}"))
        .await
        .expect("the bucket's stream");
    stream.info().await.expect("its info").state.bytes
}

/// The names of the snapshots listed in the bucket.
async fn listed(nats: &Nats) -> Vec<String> {
    let bucket = nats.service.get_object_store(BUCKET).await.expect("bucket");
    let mut names = Vec::new();
    let mut list = bucket.list().await.expect("list");
    while let Some(info) = futures::StreamExt::next(&mut list).await {
        let info = info.expect("info");
        if !info.deleted {
            names.push(info.name);
        }
    }
    names
}

/// Waits until the bucket holds `bytes`, for at most `within`.
async fn bucket_back_to(nats: &Nats, bytes: u64, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let now = bucket_bytes(nats).await;
        if now == bytes {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the bucket holds {now} bytes {within:?} on, not the {bytes} it held"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the bucket holds more than `bytes`: an upload's first chunks are in.
async fn bucket_past(nats: &Nats, bytes: u64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while bucket_bytes(nats).await <= bytes {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no chunk sent within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_kill_while_a_snapshot_loads_or_is_sent_leaves_nothing_behind() {
    let nats = Nats::start().await;
    let events = some_events(2600);
    let last = nats.publish(&events[..2500]).await;
    let work = TempDir::new().expect("temp dir");

    // A snapshot, and the bytes the bucket holds with it. The writer's lease lapses 5 s
    // after its holder last renewed it (30 s as the service sets it up), so that a killed
    // writer's successor is not kept waiting long. Shortened before any replica starts:
    // each reads the lease's life as it starts and renews at a third of it, and one that
    // read 30 s lost a lease of 5 s whenever its snapshot took longer than that to make.
    lease_life(&nats, Duration::from_secs(5)).await;
    let first_dir = work.path().join("first");
    let mut first = App::start(&nats, &first_dir).await;
    first.projected(last).await;
    let (name, checkpoint) = snapshot_of(&first).await;
    assert_eq!(listed(&nats).await, std::slice::from_ref(&name));
    let before = bucket_bytes(&nats).await;

    // A replica that writes one once 100 events came after the newest, sending it at
    // 1 MiB/s, killed after its first chunks are in the bucket and before its metadata.
    let writer_dir = work.path().join("writer");
    let writer_log = work.path().join("writer.log");
    let writing = [
        ("RACING_SNAPSHOT_WRITE", "true"),
        ("RACING_SNAPSHOT_EVERY_EVENTS", "100"),
        ("RACING_SNAPSHOT_SEND_MIB_PER_SEC", "1"),
    ];
    let mut writer = Service::spawn_with(Some(&nats.broker()), &writer_dir, &writer_log, &writing);
    let more = nats.publish(&events[2500..]).await;
    writer
        .wait_for_log("sending a snapshot to the object store", WAIT)
        .await;
    bucket_past(&nats, before).await;
    writer.kill().await;
    assert!(
        !writer
            .log_text()
            .contains("snapshot of the read models written"),
        "the kill came after the snapshot was sent; log:\n{}",
        writer.log_tail()
    );
    assert_eq!(
        listed(&nats).await,
        std::slice::from_ref(&name),
        "no snapshot half sent is listed"
    );

    // The next holder of the writer's lease (once the dead one's has lapsed) removes the
    // chunks the kill left; none is due, so it sends none.
    let mut again = Service::spawn_with(
        Some(&nats.broker()),
        &writer_dir,
        &writer_log,
        &[("RACING_SNAPSHOT_WRITE", "true")],
    );
    bucket_back_to(&nats, before, Duration::from_secs(90)).await;
    again.kill().await;

    // A replica killed while it loads the snapshot.
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
    first.projected(more).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while status_checkpoint(&mut again, &client).await < more {
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
    assert_eq!(bucket_bytes(&nats).await, before);
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

#[tokio::test]
async fn a_replica_waits_for_the_snapshot_of_a_live_lease_holder_only() {
    let nats = Nats::start().await;
    let last = nats.publish(&some_events(300)).await;
    let layout = racing_projections::layout();
    let (lease, replicas) = (
        nats.service
            .get_key_value("RACING_SNAPSHOT_LEASE")
            .await
            .expect("the lease's bucket"),
        nats.service
            .get_key_value("RACING_REPLICAS")
            .await
            .expect("the replicas' bucket"),
    );
    let wait = Duration::from_secs(3);
    let waiting = move |c: &mut racing::config::Config| {
        c.snapshots.write = false;
        c.snapshots.wait = wait;
    };
    let holds = |replica: &str| {
        let lease = lease.clone();
        let value = format!("{replica} {layout}");
        async move {
            lease
                .put("writer", value.into())
                .await
                .expect("the lease held")
        }
    };

    // The lease's holder is the process that ran on this data directory before, killed
    // before it published its snapshot: its lease outlives it, its snapshot never comes.
    let here = TempDir::new().expect("temp dir");
    std::fs::write(here.path().join("last-replica"), "killed-here").expect("written");
    holds("killed-here").await;
    let mut app = App::start_with(&nats, here.path(), waiting).await;
    let start = start_of(&app).await;
    assert_eq!(start["path"], "replay", "{start}");
    let said = start["not_waited"].as_str().unwrap_or_default();
    assert!(
        said.contains("killed-here") && said.contains("gone"),
        "{start}"
    );
    app.projected(last).await;
    app.stop().await;
    // The next start on it knows the one before as that app, not the killed one.
    let noted = std::fs::read_to_string(here.path().join("last-replica")).expect("noted");
    assert_ne!(noted, "killed-here");

    // A holder whose presence lapsed from the replicas' registry, on a fresh volume.
    holds("gone-elsewhere").await;
    let fresh = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, fresh.path(), waiting).await;
    let start = start_of(&app).await;
    assert_eq!(start["path"], "replay", "{start}");
    let said = start["not_waited"].as_str().unwrap_or_default();
    assert!(said.contains("gone-elsewhere"), "{start}");
    app.projected(last).await;
    app.stop().await;

    // A holder the registry shows live is waited for, as long as the settings say.
    replicas
        .put("r.alive-elsewhere", "{}".into())
        .await
        .expect("announced");
    holds("alive-elsewhere").await;
    let third = TempDir::new().expect("temp dir");
    let started = std::time::Instant::now();
    let mut app = App::start_with(&nats, third.path(), waiting).await;
    let start = start_of(&app).await;
    assert!(started.elapsed() >= wait, "{start}");
    assert_eq!(start["path"], "replay", "{start}");
    assert!(start.get("not_waited").is_none(), "{start}");
    app.projected(last).await;
    app.stop().await;
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

/// Asks `app` for a snapshot, asserts it is skipped for want of room, saying `why`, and
/// that `racing snapshot list` (`GET /snapshots`), `/status` and the metrics say so.
async fn skipped_now(app: &App, why: &str) -> String {
    let (status, body) = admin_post(app, "/snapshots").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let said = body["error"].as_str().unwrap_or_default().to_owned();
    assert!(said.contains(why), "skipped for `{why}`: {body}");
    let listed = app.admin_json("/snapshots").await;
    assert_eq!(
        listed["writer"]["skipped"]["reason"],
        said.as_str(),
        "{listed}"
    );
    let status = app.admin_json("/status").await;
    assert_eq!(
        status["snapshots"]["skipped"]["reason"],
        said.as_str(),
        "{status}"
    );
    assert!(
        app.metrics()
            .await
            .lines()
            .any(|l| l.starts_with("racing_snapshot_skipped_total")),
        "the skip is counted"
    );
    said
}

/// The bytes JetStream's streams hold, as `$JS.API.INFO` says.
async fn account_storage(nats: &Nats) -> u64 {
    let info: Value = nats
        .service
        .request("INFO", &serde_json::json!({}))
        .await
        .expect("the account's information");
    info["storage"].as_u64().expect("its storage")
}

/// The bytes of a snapshot of `app`'s store now, written aside.
fn snapshot_size(app: &App) -> u64 {
    let aside = TempDir::new().expect("temp dir");
    app.store()
        .write_snapshot(&aside.path().join("probe"), || true)
        .expect("a snapshot")
        .bytes
}

#[tokio::test]
async fn a_snapshot_that_would_leave_the_log_too_little_room_is_skipped_and_the_feed_goes_on() {
    // JetStream's storage, shared by the log and the snapshots, as the operator states it.
    // Above the buckets' reservations (key-value buckets with byte limits).
    const LIMIT: u64 = 256 << 20;
    let options = racing::nats::ServerOptions {
        max_file_store: Some(LIMIT),
        ..racing::nats::ServerOptions::default()
    };
    let nats = Nats::start_with_options(&options).await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.snapshots.file_store = Some(LIMIT);
        c.snapshots.log_margin = 1 << 20;
    })
    .await;
    let events = some_events(2600);
    let mut last = nats.publish(&events[..2500]).await;
    app.projected(last).await;
    let size = snapshot_size(&app);

    // The log grows (with messages the projector refuses at once) until half a
    // snapshot's room is left.
    loop {
        let used = account_storage(&nats).await;
        let room = LIMIT.saturating_sub(used);
        if room <= size / 2 {
            break;
        }
        let piece = (room - size / 2).min(1 << 20) as usize;
        last = nats
            .publish_raw("racing.ballast", &vec![b'x'; piece], None)
            .await;
    }
    app.projected(last).await;
    let before = bucket_bytes(&nats).await;

    let said = skipped_now(&app, "would leave the log").await;
    assert!(said.contains("RACING_SNAPSHOT_LOG_MARGIN_MIB"), "{said}");
    assert_eq!(bucket_bytes(&nats).await, before, "nothing sent");
    assert!(listed(&nats).await.is_empty());

    // The feed goes on: every new event is stored and applied.
    let more = nats.publish(&events[2500..]).await;
    app.projected(more).await;
    app.stop().await;
}

/// A small disk: a tmpfs of `mib` MiB, which only root may mount; this test fails
/// rather than passes where it cannot.
fn small_disk(mib: u64) -> SmallDisk {
    SmallDisk::mount(mib).expect(
        "this test needs a small disk: a tmpfs, which only root may mount (the dev \
         container and CI run the tests as root)",
    )
}

#[tokio::test]
async fn a_snapshot_never_takes_the_read_models_room_on_their_disk() {
    let nats = Nats::start().await;
    let disk = small_disk(256);
    let data = disk.path().join("data");
    let mut app = App::start(&nats, &data).await;
    let events = some_events(2700);
    let last = nats.publish(&events[..2500]).await;
    app.projected(last).await;
    let size = snapshot_size(&app);

    // The disk left with the projector's spare, room for the commits below, and half
    // the snapshot's file.
    disk.fill(racing::disk::SPARE_BYTES + (16 << 20) + size / 2);

    // Commits go on while the snapshot is asked for, and the projector never lacks room.
    let (done, mut watch) = tokio::sync::oneshot::channel::<()>();
    let read_models = app.read_models.clone();
    let watcher = tokio::spawn(async move {
        loop {
            if let Some(problem) = read_models.cannot_write() {
                return Some(problem);
            }
            if watch.try_recv().is_ok() {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let feeding = async {
        let mut last = 0;
        for chunk in events[2500..].chunks(10) {
            last = nats.publish(chunk).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        last
    };
    let (more, said) = tokio::join!(feeding, skipped_now(&app, "no room on the disk"));
    assert!(said.contains("kept for the read models"), "{said}");
    app.projected(more).await;
    let _ = done.send(());
    assert_eq!(
        watcher.await.expect("the watcher"),
        None,
        "the projector lacked room"
    );
    assert!(listed(&nats).await.is_empty());
    app.stop().await;
}

#[tokio::test]
async fn a_replica_whose_disk_has_no_room_for_a_snapshot_and_its_store_does_not_load_it() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut first = App::start(&nats, dir.path()).await;
    let last = nats.publish(&some_events(2500)).await;
    first.projected(last).await;
    let (status, created) = admin_post(&first, "/snapshots").await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let name = created["listed"]["name"]
        .as_str()
        .expect("a name")
        .to_owned();
    let file = created["listed"]["bytes"].as_u64().expect("its bytes");
    let store = created["listed"]["store_bytes"]
        .as_u64()
        .expect("its store's bytes");

    // A disk 4 MiB short of room for the snapshot's file, the store it loads into and the
    // spare kept for the read models: the start replays instead (and its projector, too,
    // waits for room, saying so, as on any full disk).
    let short = (file + store + racing::disk::SNAPSHOT_SPARE_BYTES) >> 20;
    let disk = small_disk(short - 4);
    let data = disk.path().join("data");
    let second = App::start(&nats, &data).await;
    let start = start_of(&second).await;
    assert_eq!(start["path"], "replay", "{start}");
    let refused = start["refused"].to_string();
    assert!(
        refused.contains(&name) && refused.contains("no room on the disk"),
        "{start}"
    );
    // Nothing of it was fetched or loaded.
    assert_eq!(stores(&data), ["read-models"]);
    assert!(std::fs::read_dir(data.join("snapshots")).map_or(true, |mut d| d.next().is_none()));
    second.stop().await;
    first.stop().await;
}

#[tokio::test]
async fn a_writer_that_loses_the_lease_while_it_sends_a_snapshot_leaves_nothing_of_it() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.snapshots.send_rate = Some(128 << 10)
    })
    .await;
    let last = nats.publish(&some_events(2500)).await;
    app.projected(last).await;
    let before = bucket_bytes(&nats).await;

    let sending = {
        let (client, url) = (app.client.clone(), format!("{}/snapshots", app.admin));
        tokio::spawn(async move {
            let res = client.post(url).send().await.expect("admin listener");
            let status = res.status();
            (status, res.json::<Value>().await.unwrap_or_default())
        })
    };
    // Its first chunks are in when its lease lapses and another replica takes it, as when
    // its renewals fail for the lease's life.
    bucket_past(&nats, before).await;
    let lease = nats
        .service
        .get_key_value("RACING_SNAPSHOT_LEASE")
        .await
        .expect("the lease's bucket");
    let other = format!("another-replica {}", racing_projections::layout());
    lease
        .put("writer", other.into())
        .await
        .expect("the lease taken");

    let (status, body) = sending.await.expect("the request");
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let said = body["error"].as_str().unwrap_or_default();
    assert!(said.contains("another-replica"), "{body}");
    assert!(listed(&nats).await.is_empty(), "nothing listed");
    assert_eq!(bucket_bytes(&nats).await, before, "its chunks removed");
    // Nor may it write one while the other holds the lease.
    refused_now(&app, "holds the snapshot writer's lease").await;
    app.stop().await;
}

/// Shortens the life of the snapshot writer's lease to `ttl`, as an operator may make it.
async fn lease_life(nats: &Nats, ttl: Duration) {
    let mut stream = nats
        .setup
        .get_stream("KV_RACING_SNAPSHOT_LEASE")
        .await
        .expect("the lease's stream");
    let mut config = stream
        .info()
        .await
        .expect("its configuration")
        .config
        .clone();
    config.max_age = ttl;
    config.duplicate_window = ttl;
    nats.setup
        .update_stream(config)
        .await
        .expect("the lease's life shortened");
}

/// The key by which the replica says it runs this version's layout, once the lease's
/// bucket holds it.
async fn layout_key(lease: &async_nats::jetstream::kv::Store) -> Option<String> {
    use futures::TryStreamExt as _;
    let prefix = format!("layouts.{}.", racing_projections::layout());
    let keys: Vec<String> = lease
        .keys()
        .await
        .expect("the bucket's keys")
        .try_collect()
        .await
        .expect("the keys");
    keys.into_iter().find(|k| k.starts_with(&prefix))
}

/// Whether the bucket holds `key` now: one read of it, bounded, so that a bucket that does
/// not answer fails the test with a message rather than holding it.
async fn holds(lease: &async_nats::jetstream::kv::Store, key: &str) -> bool {
    tokio::time::timeout(Duration::from_secs(10), lease.get(key))
        .await
        .expect("the bucket answers in time")
        .expect("the bucket answers")
        .is_some()
}

#[tokio::test]
async fn a_lease_life_shortened_under_a_running_replica_sets_its_pace_from_its_next_renewal() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    // It says which layout it runs every third of the lease's life: 10 s as set up.
    let app = App::start(&nats, dir.path()).await;
    let lease = nats
        .service
        .get_key_value("RACING_SNAPSHOT_LEASE")
        .await
        .expect("the lease's bucket");
    let key = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Some(key) = layout_key(&lease).await {
                return key;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the layout said");
    // The life shortened to 3 s: what it said lapses within 3 s unless said again.
    lease_life(&nats, Duration::from_secs(3)).await;
    // Past its next saying at the old pace, it says it at the new one: never lapsed.
    tokio::time::sleep(Duration::from_secs(12)).await;
    for _ in 0..20 {
        assert!(holds(&lease, &key).await, "the replica's layout lapsed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.stop().await;
}

#[tokio::test]
async fn a_snapshot_asked_of_a_replica_that_does_not_write_them_keeps_the_lease_while_it_is_sent() {
    let nats = Nats::start().await;
    let ttl = Duration::from_secs(2);
    lease_life(&nats, ttl).await;
    let dir = TempDir::new().expect("temp dir");
    // A replica that writes no snapshot of its own (as the benches' and most tests' do),
    // asked for one whose sending outlasts the lease's life several times (its store's
    // records take about 2 MiB packed: some 16 s at this rate).
    let mut app = App::start_with(&nats, dir.path(), |c| {
        c.snapshots.write = false;
        c.snapshots.send_rate = Some(128 << 10);
    })
    .await;
    let last = nats.publish(&some_events(2500)).await;
    app.projected(last).await;

    let (status, created) = admin_post(&app, "/snapshots").await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let took = created["send_secs"].as_f64().unwrap_or_default();
    assert!(
        took > 2.0 * ttl.as_secs_f64(),
        "sent in {took} s: {created}"
    );
    assert_eq!(listed(&nats).await.len(), 1, "{created}");
    // And it let go of the lease after, as such a replica does.
    let lease = nats
        .service
        .get_key_value("RACING_SNAPSHOT_LEASE")
        .await
        .expect("the lease's bucket");
    let writer = lease.get("writer").await.expect("the bucket answers");
    assert!(writer.is_none(), "{writer:?}");
    app.stop().await;
}

#[tokio::test]
async fn the_newest_snapshot_of_an_older_layout_is_kept_while_a_replica_of_it_runs() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let events = some_events(1700);
    let last = nats.publish(&events[..1500]).await;
    app.projected(last).await;
    let (genuine, _) = snapshot_of(&app).await;

    // Two snapshots of the layout before this version's, as its replicas wrote them.
    let bucket = nats.service.get_object_store(BUCKET).await.expect("bucket");
    let (bytes, meta) = object(&bucket, &genuine).await;
    let current: u32 = racing_projections::layout().parse().expect("a number");
    let older = (current - 1).to_string();
    let old = |n: u64| format!("read-models-{older}-{n:020}");
    for n in [1, 2] {
        put(&bucket, &old(n), &bytes, &meta, |m| {
            m.insert("layout".into(), older.clone());
            m.insert("checkpoint".into(), n.to_string());
        })
        .await;
    }
    // A replica of that layout runs, and says so as every replica does.
    let lease = nats
        .service
        .get_key_value("RACING_SNAPSHOT_LEASE")
        .await
        .expect("the lease's bucket");
    let running = format!("layouts.{older}.an-older-replica");
    lease
        .put(&running, older.clone().into())
        .await
        .expect("announced");

    let more = nats.publish(&events[1500..1600]).await;
    app.projected(more).await;
    let (status, created) = admin_post(&app, "/snapshots").await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["removed"], serde_json::json!([old(1)]), "{created}");

    // Once none runs, the next snapshot removes it.
    lease.delete(&running).await.expect("gone");
    let more = nats.publish(&events[1600..]).await;
    app.projected(more).await;
    let (status, created) = admin_post(&app, "/snapshots").await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["removed"], serde_json::json!([old(2)]), "{created}");
    app.stop().await;
}

#[tokio::test]
async fn the_snapshots_bucket_holds_what_the_snapshots_kept_need_and_refuses_more() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let events = some_events(1600);
    let last = nats.publish(&events[..1500]).await;
    app.projected(last).await;
    snapshot_of(&app).await;
    let stream = || async {
        let mut s = nats
            .setup
            .get_stream(format!("OBJ_{BUCKET}"))
            .await
            .expect("the bucket's stream");
        s.info().await.expect("its info").clone()
    };
    let made = stream().await;
    assert_eq!(
        made.config.discard,
        async_nats::jetstream::stream::DiscardPolicy::New
    );

    // `racing setup` after a snapshot bounds the bucket by the snapshots kept: room for
    // the three kept, one being sent and one of an older layout, with a quarter to spare.
    nats.set_up_with(&racing::nats::buckets::SnapshotBucket {
        keep: 3,
        bytes: None,
    })
    .await;
    let bounded = stream().await;
    let objects = nats
        .setup
        .get_stream(format!("OBJ_{BUCKET}"))
        .await
        .expect("the bucket's stream");
    let chunks: Vec<(String, usize)> = futures::TryStreamExt::try_collect(
        objects
            .info_with_subjects(format!("$O.{BUCKET}.C.>"))
            .await
            .expect("its chunks"),
    )
    .await
    .expect("its chunks");
    assert_eq!(chunks.len(), 1, "{chunks:?}");
    let largest = chunks[0].1 as i64 * racing::nats::buckets::SNAPSHOT_CHUNK as i64;
    assert_eq!(bounded.config.max_bytes, 5 * largest * 5 / 4);
    assert_eq!(
        bounded.config.discard,
        async_nats::jetstream::stream::DiscardPolicy::New
    );

    // A bucket stated too small for the next snapshot: it is skipped, saying what to do.
    nats.set_up_with(&racing::nats::buckets::SnapshotBucket {
        keep: 3,
        bytes: Some(made.state.bytes + 1024),
    })
    .await;
    let more = nats.publish(&events[1500..]).await;
    app.projected(more).await;
    let said = skipped_now(&app, "the snapshots' bucket").await;
    assert!(said.contains("racing setup"), "{said}");
    assert_eq!(stream().await.state.bytes, made.state.bytes);
    app.stop().await;
}
