//! `racing rebuild`: every read model rebuilt from the log into a fresh store and swapped
//! in while the API answers and the feed goes on, with nothing lost, nothing applied
//! twice, and the new store the one a restart opens.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use racing_events::samples::{envelope, profile};
use reqwest::StatusCode;
use tempfile::TempDir;
use tokio::process::Command;
use tokio::sync::oneshot;

use crate::support::{App, Nats, KEY};

/// Every served document of the store in use, by key.
pub(crate) fn documents(app: &App) -> BTreeMap<Vec<u8>, Vec<u8>> {
    app.read_models
        .load()
        .documents()
        .map(|item| {
            let (k, v) = item.expect("readable");
            (k.to_vec(), racing_projections::answered(&v))
        })
        .collect()
}

#[tokio::test]
async fn a_rebuild_swaps_in_a_fresh_store_while_the_api_answers() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    // As `racing serve` does: the rebuild folds in a worker process of the program.
    let mut app = App::start_with(&nats, dir.path(), |c| c.rebuild_worker = Some(racing())).await;

    // A season, a refused event and a duplicate, so that the rebuild has documents,
    // dead letters and seen ids to reproduce.
    // The service's "today" is Hong Kong's, which is not the machine's after 16:00 UTC.
    let hong_kong = jiff::tz::TimeZone::get("Asia/Hong_Kong").expect("a zone");
    let today = jiff::Timestamp::now().to_zoned(hong_kong).date();
    let season = racing_demo::season(7, today);
    nats.publish(&season.events).await;
    nats.publish_raw("racing.horses.X", b"not json", None).await;
    let first = &season.events[0];
    let last = nats
        .publish_raw(&first.subject(), first.to_json().as_bytes(), None)
        .await;
    app.projected(last).await;
    let before = documents(&app);
    let letters_before = app.store().dead_letters(0, 100).expect("dead letters");
    assert!(before.len() > 1000 && letters_before.len() == 1);
    let probes: Vec<(String, bytes::Bytes)> = {
        let horse = season.events.iter().find_map(|e| match &e.event {
            racing_events::Event::HorseProfileUpdated(p) => Some(p.horse_no.clone()),
            _ => None,
        });
        let horse = horse.expect("a horse");
        let mut probes = Vec::new();
        for path in [
            format!("/api/v1/horses/{horse}"),
            format!("/api/v1/horses/{horse}/form"),
            "/api/v1/racecards/today".to_owned(),
        ] {
            let res = app.response(&path).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            probes.push((path, res.bytes().await.expect("body")));
        }
        probes
    };

    // Readers that check every answer, and a feeder of new horses, both running through
    // the rebuild.
    let stop = tokio_util::sync::CancellationToken::new();
    let mut readers = Vec::new();
    for (path, expected) in probes {
        let (client, url, stop) = (
            app.client.clone(),
            format!("{}{path}", app.base),
            stop.clone(),
        );
        readers.push(tokio::spawn(async move {
            let mut answers = 0u32;
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            while !stop.is_cancelled() && tokio::time::Instant::now() < deadline {
                let res = client
                    .get(&url)
                    .header("X-API-Key", KEY)
                    .send()
                    .await
                    .expect("the service answers");
                assert_eq!(res.status(), StatusCode::OK, "{url} during the rebuild");
                assert_eq!(res.bytes().await.expect("body"), expected, "{url}");
                answers += 1;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            answers
        }));
    }
    let feeder = feed_horses(&nats, "R", "REBUILT", Duration::from_millis(10), &stop).await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let cli = Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["rebuild", "--admin-url", &app.admin])
        .env_remove("RACING_ADMIN_URL")
        .output();
    // A rebuild of the demo's season in a debug build, paced under the readers, beside
    // the rest of the suite: about a minute alone on two cores.
    let cli = tokio::time::timeout(Duration::from_secs(180), cli)
        .await
        .expect("the rebuild ends in time")
        .expect("racing rebuild runs");
    let stdout = String::from_utf8_lossy(&cli.stdout);
    assert!(
        cli.status.success() && stdout.contains("rebuilt:"),
        "racing rebuild: {}\n{stdout}\n{}",
        cli.status,
        String::from_utf8_lossy(&cli.stderr)
    );

    // A little more feed into the new store, then everything stops.
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.cancel();
    for reader in readers {
        assert!(reader.await.expect("reader") > 0, "each reader read");
    }
    let fed = feeder.await.expect("feeder");
    let fed_last = fed.last().map_or(last, |(_, seq)| *seq);
    app.projected(fed_last).await;

    // The old store's documents are all in the new one, unchanged, with every horse fed
    // meanwhile, and the same dead letters.
    let after = documents(&app);
    for (key, bytes) in &before {
        assert_eq!(
            after.get(key),
            Some(bytes),
            "{}",
            String::from_utf8_lossy(key)
        );
    }
    for (horse, seq) in &fed {
        let (status, body) = app.get(&format!("/api/v1/horses/{horse}")).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{horse} (sequence {seq}) after the rebuild"
        );
        assert_eq!(body["horse_name"], "REBUILT");
    }
    // And nothing else: each new document is one of a horse fed meanwhile.
    let fed_horses: std::collections::HashSet<&[u8]> =
        fed.iter().map(|(h, _)| h.as_bytes()).collect();
    for key in after.keys().filter(|k| !before.contains_key(*k)) {
        let horse = key.rsplit(|b| *b == 0).next().unwrap_or_default();
        assert!(
            fed_horses.contains(horse),
            "{}",
            String::from_utf8_lossy(key)
        );
    }
    let letters_after = app
        .read_models
        .load()
        .dead_letters(0, 100)
        .expect("dead letters");
    assert_eq!(letters_after, letters_before);

    let status = rebuild_ended(&app).await;
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(status["worker"], true, "folded in a worker: {status}");
    // The documents read before the rebuild (the probes, at least) were in the fresh
    // store's cache before it was swapped in.
    assert!(status["warmed"].as_u64() >= Some(3), "{status}");
    let active = std::fs::read_to_string(dir.path().join("read-models.active")).expect("pointer");
    assert!(active.trim().starts_with("read-models.gen-"), "{active}");
    assert_eq!(
        status["directory"],
        dir.path().join(active.trim()).display().to_string()
    );

    // The replaced store's directory goes; a restart opens the new store where it was.
    let gone = async {
        while dir.path().join("read-models").exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("the replaced store is removed");
    app.stop().await;
    let mut again = App::start(&nats, dir.path()).await;
    let progress = again.projected(fed_last).await;
    assert_eq!(progress.applied, 0, "nothing replayed after the restart");
    let reopened = documents(&again);
    let extra: Vec<_> = reopened
        .keys()
        .filter(|k| !after.contains_key(*k))
        .take(5)
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    assert!(
        extra.is_empty(),
        "{} more documents, such as {extra:?}",
        reopened.len() - after.len()
    );
    assert_eq!(reopened, after);
    again.stop().await;
}

/// A feeder of new horses (`{prefix}00000`, `{prefix}00001`, ...) named `name`, one
/// every `every`, until `stop` (at most 20,000): the horses fed, with their sequences.
async fn feed_horses(
    nats: &Nats,
    prefix: &'static str,
    name: &'static str,
    every: Duration,
    stop: &tokio_util::sync::CancellationToken,
) -> tokio::task::JoinHandle<Vec<(String, u64)>> {
    let client = nats.connect(racing::nats::Role::Feeder).await;
    let stop = stop.clone();
    tokio::spawn(async move {
        let js = async_nats::jetstream::new(client);
        let mut fed = Vec::new();
        for i in 0..20_000 {
            if stop.is_cancelled() {
                break;
            }
            let horse = format!("{prefix}{i:05}");
            let event = envelope(profile(&horse, name));
            let ack = js
                .publish(event.subject(), event.to_json().into())
                .await
                .expect("publish")
                .await
                .expect("ack");
            fed.push((horse, ack.sequence));
            tokio::time::sleep(every).await;
        }
        fed
    })
}

/// The `racing` program, whose `rebuild-worker` folds a rebuild.
fn racing() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_racing"))
}

/// Publishes a profile for each of `horses`; returns the last sequence.
async fn publish_horses(nats: &Nats, horses: impl Iterator<Item = String>) -> u64 {
    let events: Vec<_> = horses.map(|h| envelope(profile(&h, "HELD"))).collect();
    nats.publish(&events).await
}

/// A service on `dir`, its configuration changed by `adjust`, that has projected twenty
/// horses (`{prefix}000` to `{prefix}019`): the service, the last sequence, and its
/// documents then.
async fn with_horses(
    nats: &Nats,
    dir: &TempDir,
    prefix: &str,
    adjust: impl FnOnce(&mut racing::config::Config),
) -> (App, u64, BTreeMap<Vec<u8>, Vec<u8>>) {
    let mut app = App::start_with(nats, dir.path(), adjust).await;
    let last = publish_horses(nats, (0..20).map(|i| format!("{prefix}{i:03}"))).await;
    app.projected(last).await;
    let before = documents(&app);
    (app, last, before)
}

/// Once a rebuild has stopped before holding the projector (`paused`, its fault's
/// gate), the projector commits `horses`; then the rebuild goes on. Returns the last
/// sequence.
async fn committed_while_paused(
    app: &mut App,
    nats: &Nats,
    (reached, release): (oneshot::Receiver<()>, oneshot::Sender<()>),
    horses: impl Iterator<Item = String>,
) -> u64 {
    tokio::time::timeout(Duration::from_secs(60), reached)
        .await
        .expect("the rebuild catches up")
        .expect("the fault's gate");
    let last = publish_horses(nats, horses).await;
    app.projected(last).await;
    let _ = release.send(());
    last
}

/// Starts a rebuild on the admin listener.
async fn start_rebuild(app: &App) {
    let started = app
        .client
        .post(format!("{}/rebuild", app.admin))
        .send()
        .await
        .expect("rebuild");
    assert_eq!(started.status(), StatusCode::ACCEPTED);
}

/// Starts a rebuild; its state once it has ended.
pub(crate) async fn rebuild(app: &App) -> serde_json::Value {
    start_rebuild(app).await;
    rebuild_ended(app).await
}

/// Checks that a rebuild failed, saying each of `why`, and left the store in use as it was
/// (`before`) and no directory of its own behind.
fn failed_keeping_the_store(
    app: &App,
    status: &serde_json::Value,
    why: &[&str],
    before: &BTreeMap<Vec<u8>, Vec<u8>>,
) {
    assert_eq!(status["state"], "failed", "{status}");
    let error = status["error"].as_str().unwrap_or_default();
    assert!(why.iter().all(|w| error.contains(w)), "{status}");
    assert_eq!(&documents(app), before);
    let failed = status["directory"].as_str().expect("its directory");
    assert!(!std::path::Path::new(failed).exists(), "{failed} removed");
}

/// The state of the last rebuild, once it is no longer running.
async fn rebuild_ended(app: &App) -> serde_json::Value {
    let ended = async {
        loop {
            let status = app.admin_json("/rebuild").await;
            if status["state"] != "running" {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(90), ended)
        .await
        .expect("the rebuild ends")
}

#[tokio::test]
async fn a_rebuild_that_leaves_its_consumer_unread_past_the_servers_limit_reads_on_at_once() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let first = publish_horses(&nats, (0..50).map(|i| format!("U{i:03}"))).await;
    app.projected(first).await;

    // The rebuild stops before it folds its first batch, as a worker held stopped under
    // load does. Meanwhile more is stored than its consumer pulls ahead (500), and the
    // server drops the consumer left unread (30 s without a pull): read on, it would
    // deliver what it had pulled and then nothing.
    let (reached, release) = app.faults.pause_rebuild_before_fold();
    start_rebuild(&app).await;
    tokio::time::timeout(Duration::from_secs(60), reached)
        .await
        .expect("the rebuild reads its first batch")
        .expect("the fault's gate");
    let last = publish_horses(&nats, (50..1_550).map(|i| format!("U{i:04}"))).await;
    app.projected(last).await;
    tokio::time::sleep(Duration::from_secs(40)).await;
    let _ = release.send(());

    let status = rebuild_ended(&app).await;
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(
        status["consumer_stalls"], 0,
        "the consumer was made again at once, not after a stall: {status}"
    );
    let store = app.read_models.load_full();
    assert_eq!(store.checkpoint().expect("checkpoint"), last);
    let (code, body) = app.get("/api/v1/horses/U1549").await;
    assert_eq!(code, StatusCode::OK, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn a_rebuild_whose_consumer_stalls_while_holding_swaps_in_nothing_short_of_the_projector() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let first = publish_horses(&nats, (0..50).map(|i| format!("S{i:03}"))).await;
    app.projected(first).await;

    // The rebuild catches up with the projector and stops before holding it; meanwhile
    // the projector commits fifty more horses. Then, holding it, the rebuild's consumer
    // delivers nothing for a while, as one paused by load does.
    let paused = app.faults.pause_rebuild_before_hold();
    app.faults.stall_rebuild_while_holding(4);
    start_rebuild(&app).await;
    let horses = (50..100).map(|i| format!("S{i:03}"));
    let last = committed_while_paused(&mut app, &nats, paused, horses).await;

    let status = rebuild_ended(&app).await;
    assert_eq!(status["state"], "done", "{status}");
    assert!(
        status["consumer_stalls"].as_u64() >= Some(1),
        "the stall was counted: {status}"
    );
    let store = app.read_models.load_full();
    assert_eq!(store.checkpoint().expect("checkpoint"), last);
    for i in 0..100 {
        let (code, body) = app.get(&format!("/api/v1/horses/S{i:03}")).await;
        assert_eq!(
            code,
            StatusCode::OK,
            "horse S{i:03} after the rebuild: {body}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_rebuild_whose_worker_fails_keeps_the_store_in_use_and_says_why() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    // A worker that ends at once, as one killed or out of memory does.
    let (app, _, before) = with_horses(&nats, &dir, "W", |c| {
        c.rebuild_worker = Some(PathBuf::from("/bin/false"))
    })
    .await;

    let status = rebuild(&app).await;
    failed_keeping_the_store(
        &app,
        &status,
        &["the rebuild worker", "exit status: 1"],
        &before,
    );
    let (code, _) = app.get("/api/v1/horses/W000").await;
    assert_eq!(code, StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn a_rebuild_whose_worker_cannot_start_folds_in_the_service() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let missing = dir.path().join("no-such-program");
    let (app, last, before) =
        with_horses(&nats, &dir, "F", |c| c.rebuild_worker = Some(missing)).await;

    let status = rebuild(&app).await;
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(status["worker"], false, "{status}");
    assert_eq!(status["checkpoint"], last, "{status}");
    assert_eq!(documents(&app), before);
    app.stop().await;
}

#[tokio::test]
async fn a_rebuild_that_panics_fails_and_keeps_the_store_in_use() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let (app, _, before) = with_horses(&nats, &dir, "P", |_| {}).await;

    app.faults.panic_rebuild();
    let status = rebuild(&app).await;
    failed_keeping_the_store(&app, &status, &["panicked", "test fault"], &before);

    // The next rebuild runs, and swaps in.
    let status = rebuild(&app).await;
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(documents(&app), before);
    app.stop().await;
}

#[tokio::test]
async fn a_replaced_stores_directory_goes_only_once_no_handle_of_it_is_left() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let (app, _, before) =
        with_horses(&nats, &dir, "R", |c| c.rebuild_worker = Some(racing())).await;
    let replaced = dir.path().join("read-models");
    // A handle of the store in use, as a request in flight or the background check has.
    let held = app.store();

    let status = rebuild(&app).await;
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(documents(&app), before);
    // sled writes into a store's directory when its last handle drops: the directory stays
    // while the handle is held ...
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(replaced.exists(), "kept while a handle of it is held");
    assert_eq!(
        held.dead_letters(0, 10)
            .expect("the held store still reads")
            .len(),
        0
    );
    // ... and goes once it is dropped. A bound on a hang, not on speed: the store is
    // closed under the commits' lock, flushed, dropped and removed, each of which waits
    // on a machine that the suite's replays keep busy, longer than 10 s at times.
    drop(held);
    let gone = async {
        while replaced.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), gone)
        .await
        .expect("removed once no handle is left");
    app.stop().await;
}

/// Ends the test process if it is still alive `limit` after it was made and not yet
/// dropped: a deadlock inside sled blocks the runtime's threads, so no timeout of the
/// test's own runtime would ever fire, and the run would hang rather than fail.
struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    fn new(limit: Duration, what: &'static str) -> Watchdog {
        let (done, wait) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
                eprintln!("{what}: still running after {limit:?}, hung; aborting the tests");
                std::process::abort();
            }
        });
        Watchdog(Some(done))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(done) = self.0.take() {
            let _ = done.send(());
        }
    }
}

#[tokio::test]
async fn rebuilds_that_fail_while_holding_the_projector_hang_nothing_as_batches_commit() {
    let _watchdog = Watchdog::new(
        Duration::from_secs(240),
        "failed rebuilds during live batches",
    );
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    // Folded in the service's process, as when no worker can start: every fresh store is
    // this process's, as the store in use is.
    let (mut app, _, before) = with_horses(&nats, &dir, "H", |_| {}).await;

    // Live batches commit all the while: a feeder of new horses, a few milliseconds apart.
    let stop = tokio_util::sync::CancellationToken::new();
    let feeder = feed_horses(&nats, "L", "LIVE", Duration::from_millis(2), &stop).await;

    for round in 0..4 {
        // Each rebuild catches up, waits while more horses are committed, then folds them
        // holding the projector (writes of its own store, not yet flushed) and fails.
        let paused = app.faults.pause_rebuild_before_hold();
        let (failing, fail) = app.faults.fail_rebuild_while_holding();
        start_rebuild(&app).await;
        let horses = (0..50).map(|i| format!("G{round}{i:02}"));
        committed_while_paused(&mut app, &nats, paused, horses).await;
        tokio::time::timeout(Duration::from_secs(60), failing)
            .await
            .expect("the rebuild holds the projector")
            .expect("the fault's gate");
        let directory = app.admin_json("/rebuild").await["directory"]
            .as_str()
            .expect("its directory")
            .to_owned();
        // A commit queued behind the rebuild, and a long one: the test's own hold of the
        // commit lock, queued before the rebuild fails, stands for it.
        let mut commit = Box::pin(app.read_models.lock_commits());
        assert!(
            futures::poll!(&mut commit).is_pending(),
            "the rebuild holds the projector"
        );
        let _ = fail.send(());
        let held = tokio::time::timeout(Duration::from_secs(60), commit)
            .await
            .expect("the failed rebuild lets the projector go");
        // While it lasts, the failed rebuild's store is not closed (sled flushes a store as
        // its last handle drops): the rebuild neither ends nor removes its directory.
        let until = tokio::time::Instant::now() + Duration::from_secs(2);
        while tokio::time::Instant::now() < until {
            let status = app.admin_json("/rebuild").await;
            assert_eq!(
                status["state"], "running",
                "round {round}: the failed rebuild's store was closed during a commit: {status}"
            );
            assert!(std::path::Path::new(&directory).exists(), "{directory}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(held);
        let status = rebuild_ended(&app).await;
        assert_eq!(status["state"], "failed", "round {round}: {status}");
        assert!(
            status["error"]
                .as_str()
                .is_some_and(|e| e.contains("test fault")),
            "round {round}: {status}"
        );
        assert!(
            !std::path::Path::new(&directory).exists(),
            "{directory} removed"
        );
    }

    // The projector goes on committing into the store in use, which kept everything.
    stop.cancel();
    let fed = feeder.await.expect("feeder");
    app.projected(fed.last().map_or(0, |(_, seq)| *seq)).await;
    let after = documents(&app);
    assert!(before.iter().all(|(k, v)| after.get(k) == Some(v)));
    let (code, _) = app.get("/api/v1/horses/G349").await;
    assert_eq!(code, StatusCode::OK);
    app.stop().await;
}
