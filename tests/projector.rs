//! The projector against a real stream: duplicates, dead letters, restarts, a full disk.

use std::time::Duration;

use racing_events::samples::{card, envelope, odds_at, profile, result, runner};
use reqwest::StatusCode;
use tempfile::TempDir;

use crate::rebuild::documents;
use crate::support::{damaged_copy_kept, App, Nats};

#[tokio::test]
async fn a_duplicate_event_id_is_ignored_even_outside_the_duplicate_window() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let original = envelope(profile("E271", "GOLDEN SIXTY"));
    let mut replayed = envelope(profile("E271", "SOMETHING ELSE"));
    replayed.event_id = original.event_id;
    nats.publish(&[original]).await;
    // Another Nats-Msg-Id, as a feeder re-sending days later: JetStream stores it again.
    let last = nats
        .publish_raw(
            &replayed.subject(),
            replayed.to_json().as_bytes(),
            Some("other-id"),
        )
        .await;
    assert_eq!(last, 2, "the stream holds both copies");
    let progress = app.projected(last).await;
    assert_eq!((progress.applied, progress.duplicates), (1, 1));
    assert_eq!(
        app.get("/api/v1/horses/E271").await.1["horse_name"],
        "GOLDEN SIXTY"
    );
}

#[tokio::test]
async fn bad_events_become_dead_letters_and_good_ones_after_them_still_apply() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let good = envelope(profile("E271", "GOLDEN SIXTY"));
    let bad_values = result("2026-02-30", "Sha Tin", 1, vec![runner(Some(1), "A1")]);
    let bad: Vec<(String, Vec<u8>, &str)> = vec![
        ("racing.horses.X".into(), b"not json".to_vec(), "envelope"),
        (
            "racing.horses.E271".into(),
            good.to_json()
                .replace("E271\",\"horse_name", "E271\",\"horse_nam")
                .into_bytes(),
            "missing field",
        ),
        (
            "racing.results.2026-02-30.1".into(),
            envelope(bad_values).to_json().into_bytes(),
            "calendar date",
        ),
        (
            "racing.horses.OTHER".into(),
            good.to_json().into_bytes(),
            "does not match",
        ),
        (
            "racing.odds.2026-11-21.1".into(),
            good.to_json().into_bytes(),
            "does not match",
        ),
        (
            "racing.horses.E271".into(),
            good.to_json()
                .replace("HorseProfileUpdated", "HorseSold")
                .into_bytes(),
            "unknown event type",
        ),
    ];
    let mut first_bad = 0;
    for (subject, payload, _) in &bad {
        let seq = nats.publish_raw(subject, payload, None).await;
        if first_bad == 0 {
            first_bad = seq;
        }
    }
    let last = nats.publish(&[good]).await;
    let progress = app.projected(last).await;
    assert_eq!(
        (progress.applied, progress.dead_letters),
        (1, bad.len() as u64)
    );
    assert_eq!(app.get("/api/v1/horses/E271").await.0, StatusCode::OK);
    let letters = app.store().dead_letters(0, 100).expect("dead letters");
    assert_eq!(letters.len(), bad.len());
    for (letter, (subject, _, reason)) in letters.iter().zip(&bad) {
        assert_eq!(&letter.subject, subject);
        assert!(
            letter.reason.contains(reason),
            "{} lacks {reason}",
            letter.reason
        );
    }
    assert_eq!(letters[0].seq, first_bad);
    // Nothing of the bad result was applied, not even in part.
    assert_eq!(
        app.get("/api/v1/horses/A1/form").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_restart_resumes_after_the_checkpoint_and_applies_nothing_twice() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let before = horses(1..=20, "BEFORE");
    let last = nats.publish(&before).await;
    assert_eq!(app.projected(last).await.applied, 20);
    app.stop().await;

    // Published while the service is down.
    let after: Vec<_> = (1..=5)
        .map(|i| {
            envelope(result(
                &format!("2026-11-0{i}"),
                "Sha Tin",
                1,
                vec![runner(Some(1), "H001")],
            ))
        })
        .collect();
    let last = nats.publish(&after).await;

    let mut app = App::start(&nats, dir.path()).await;
    let progress = app.projected(last).await;
    assert_eq!(progress.checkpoint, last);
    assert_eq!(
        (progress.applied, progress.duplicates),
        (5, 0),
        "only the new events"
    );
    let (_, form) = app.get("/api/v1/horses/H001/form").await;
    assert_eq!(form["form"].as_array().map(Vec::len), Some(5));
    assert_eq!(
        app.get("/api/v1/horses/H020").await.1["horse_name"],
        "BEFORE"
    );
}

#[tokio::test]
async fn a_damaged_store_is_moved_aside_and_rebuilt_from_the_log() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let events = horses(1..=30, "KEPT");
    let last = nats.publish(&events).await;
    app.projected(last).await;
    app.stop().await;

    // Overwrite every file of the sled directory with garbage.
    let store = dir.path().join("read-models");
    for entry in std::fs::read_dir(&store).expect("store dir") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::write(&path, b"\x00garbage\xff").expect("damage");
        }
    }

    let mut app = App::start(&nats, dir.path()).await;
    let progress = app.projected(last).await;
    assert_eq!(progress.applied, 30, "rebuilt from the log");
    assert_eq!(app.get("/api/v1/horses/H030").await.1["horse_name"], "KEPT");
    assert!(
        damaged_copy_kept(dir.path()),
        "the damaged copy is kept for inspection"
    );
}

/// sled opens a store that lost a file (a blob a page points at) and fails only on the
/// records concerned: a commit that finds it so is damage to rebuild, not a failing disk
/// to stop for.
#[tokio::test]
async fn a_commit_that_finds_a_file_of_the_store_missing_rebuilds_it_and_goes_on() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let first = nats.publish(&horses(1..=30, "BEFORE")).await;
    app.projected(first).await;

    app.faults.lose_store_file(1);
    let last = nats.publish(&horses(31..=60, "AFTER")).await;
    app.projected(last).await;
    tokio::time::timeout(Duration::from_secs(60), async {
        while !damaged_copy_kept(dir.path()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the damaged store is replaced and kept aside");
    let rebuild = app.admin_json("/rebuild").await;
    assert!(
        rebuild["repair"]
            .as_str()
            .is_some_and(|why| why.contains("No such file")),
        "the rebuild says why: {rebuild}"
    );
    assert_eq!(
        app.get("/api/v1/horses/H060").await.1["horse_name"],
        "AFTER"
    );
    as_a_clean_replay(&nats, &app, last).await;
    // It ran on: a service that had stopped for the error would not stop cleanly here.
    app.stop().await;
}

/// A broker restarted on its own store holds the same stream (its creation time, part of
/// the identity the read models record, is kept): the read models are kept and the
/// projector resumes after its checkpoint.
#[tokio::test]
async fn read_models_are_kept_across_a_restart_of_the_broker() {
    let mut nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let before = horses(1..=10, "BEFORE");
    let last = nats.publish(&before).await;
    assert_eq!(app.projected(last).await.applied, 10);
    app.stop().await;

    let port = nats.kill_server().await;
    nats.restart_server(port).await;
    let after = horses(11..=13, "AFTER");
    let last = nats.publish(&after).await;

    let mut app = App::start(&nats, dir.path()).await;
    let progress = app.projected(last).await;
    assert_eq!(
        (progress.applied, progress.duplicates),
        (3, 0),
        "only the events published since; the read models were not rebuilt"
    );
    let status = app.admin_json("/status").await;
    assert!(status["store_note"].is_null(), "{status}");
    assert_eq!(
        app.get("/api/v1/horses/H001").await.1["horse_name"],
        "BEFORE"
    );
    app.stop().await;
}

#[tokio::test]
async fn read_models_of_a_stream_made_again_are_rebuilt_from_the_new_log() {
    let dir = TempDir::new().expect("temp dir");
    // The first stream: three horses, projected, then that NATS is gone for good.
    {
        let old = Nats::start().await;
        let mut app = App::start(&old, dir.path()).await;
        let events: Vec<_> = ["OLD1", "OLD2", "OLD3"]
            .iter()
            .map(|h| envelope(profile(h, "OLD STREAM")))
            .collect();
        let last = old.publish(&events).await;
        app.projected(last).await;
        app.stop().await;
    }
    // A new NATS (its volumes wiped), where feeders have published more than the old
    // checkpoint before the service comes back with its store.
    let new = Nats::start().await;
    racing::nats::ensure_stream(&new.setup, "RACING", std::time::Duration::from_secs(120))
        .await
        .expect("stream");
    let events: Vec<_> = (1..=5)
        .map(|i| envelope(profile(&format!("NEW{i}"), "NEW STREAM")))
        .collect();
    let last = new.publish(&events).await;
    let mut app = App::start(&new, dir.path()).await;
    app.projected(last).await;
    for i in 1..=5 {
        let (status, body) = app.get(&format!("/api/v1/horses/NEW{i}")).await;
        assert_eq!(status, StatusCode::OK, "NEW{i}: {body}");
    }
    let (status, _) = app.get("/api/v1/horses/OLD1").await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a horse the new log never held"
    );
    let status = app.admin_json("/status").await;
    let note = status["store_note"].as_str().unwrap_or_default();
    assert!(note.contains("made again"), "{status}");
    assert!(
        status["built_from"]
            .as_str()
            .is_some_and(|s| s.starts_with("RACING created ")),
        "{status}"
    );
    app.stop().await;
}

/// Profiles of horses `H001`... numbered by `numbers`, each named `name`.
fn horses(numbers: std::ops::RangeInclusive<u32>, name: &str) -> Vec<racing_events::Envelope> {
    numbers
        .map(|i| envelope(profile(&format!("H{i:03}"), name)))
        .collect()
}

/// A tmpfs of a fixed size mounted on a temporary directory, unmounted when dropped: a
/// disk that a test fills and then grows.
pub(crate) struct SmallDisk {
    dir: TempDir,
}

impl SmallDisk {
    /// A tmpfs of `mib` MiB; `None`, with the reason printed, where this process may not
    /// mount one (not root). As root a mount that fails is a failure.
    pub(crate) fn mount(mib: u64) -> Option<SmallDisk> {
        let dir = TempDir::new().expect("temp dir");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk { dir }),
            failed if !rustix::process::geteuid().is_root() => {
                println!("skipped: mounting a small file system needs root here ({failed:?})");
                None
            }
            failed => panic!("mounting a tmpfs as root: {failed:?}"),
        }
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Grows the file system to `mib` MiB, as an operator does once the disk is full.
    fn grow(&self, mib: u64) {
        let out = std::process::Command::new("mount")
            .args(["-o", &format!("remount,size={mib}m")])
            .arg(self.path())
            .output()
            .expect("mount runs");
        assert!(out.status.success(), "remount: {out:?}");
    }

    /// Fills the file system until `left` bytes are free.
    pub(crate) fn fill(&self, left: u64) {
        let free = racing::disk::free_bytes(self.path()).expect("statvfs");
        let filler = std::fs::File::create(self.path().join("filler")).expect("filler");
        // Written, not sparse: a tmpfs holds only the pages written.
        let chunk = vec![0xA5u8; 1 << 20];
        let mut to_write = free.saturating_sub(left);
        let mut writer = std::io::BufWriter::new(filler);
        while to_write > 0 {
            let n = to_write.min(chunk.len() as u64) as usize;
            std::io::Write::write_all(&mut writer, &chunk[..n]).expect("filling");
            to_write -= n as u64;
        }
        std::io::Write::flush(&mut writer).expect("filling");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .output();
    }
}

/// The admin listener's answer at `path`, with its status.
pub(crate) async fn admin_answer(app: &App, path: &str) -> (StatusCode, String) {
    let res = reqwest::get(format!("{}{path}", app.admin))
        .await
        .expect("the admin listener answers");
    (res.status(), res.text().await.expect("body"))
}

/// Waits until `check` holds of the admin listener's answer at `path`.
async fn admin_until(app: &App, path: &str, check: impl Fn(StatusCode, &str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (code, body) = admin_answer(app, path).await;
        if check(code, &body) {
            return body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{path} never as expected: {code} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A service on a 32 MiB disk that projected 200 horses; then, with its faults armed by
/// `arm`, the disk filled to 256 KiB free and 3,800 more horses fed: the disk, the service
/// and the last sequence. `None` where no disk can be mounted.
async fn on_a_full_disk(
    nats: &Nats,
    arm: impl FnOnce(&racing::faults::Faults),
) -> Option<(SmallDisk, App, u64)> {
    let disk = SmallDisk::mount(32)?;
    let mut app = App::start(nats, disk.path()).await;
    let first = nats.publish(&horses(1..=200, "ROOMY")).await;
    app.projected(first).await;
    app.store().flush().await.expect("flushed");
    arm(&app.faults);
    disk.fill(256 << 10);
    let last = nats.publish(&horses(201..=4000, "CRAMPED")).await;
    Some((disk, app, last))
}

/// Checks that `app`'s documents are those a clean replay of the log up to `last` makes.
async fn as_a_clean_replay(nats: &Nats, app: &App, last: u64) {
    let clean_dir = TempDir::new().expect("temp dir");
    let mut clean = App::start(nats, clean_dir.path()).await;
    clean.projected(last).await;
    let replayed = documents(&clean);
    let recovered = documents(app);
    assert_eq!(recovered.len(), replayed.len());
    assert!(
        recovered == replayed,
        "the documents differ from a clean replay's"
    );
    clean.stop().await;
}

#[tokio::test]
async fn a_full_disk_holds_the_projector_until_it_grows_and_readiness_says_why() {
    let nats = Nats::start().await;
    let Some((disk, mut app, last)) = on_a_full_disk(&nats, |_| {}).await else {
        return;
    };
    let readyz = admin_until(&app, "/readyz", |code, body| {
        code == StatusCode::SERVICE_UNAVAILABLE && body.contains("cannot write")
    })
    .await;
    assert!(readyz.contains("no space left"), "{readyz}");
    let status: serde_json::Value =
        serde_json::from_str(&admin_answer(&app, "/status").await.1).expect("json");
    assert!(
        status["cannot_write"]
            .as_str()
            .is_some_and(|w| w.contains("no space left")),
        "{status}"
    );
    let (_, metrics) = admin_answer(&app, "/metrics").await;
    let failures = metrics
        .lines()
        .find_map(|l| l.strip_prefix("racing_projector_write_failures_total "))
        .and_then(|n| n.trim().parse::<f64>().ok());
    assert!(failures.is_some_and(|n| n >= 1.0), "{failures:?}");
    // What was committed is still answered.
    let (code, _) = app.get("/api/v1/horses/H001").await;
    assert_eq!(code, StatusCode::OK);

    // Once the disk grows, the projector goes on by itself, and is ready again.
    disk.grow(256);
    app.projected(last).await;
    admin_until(&app, "/readyz", |code, _| code == StatusCode::OK).await;
    as_a_clean_replay(&nats, &app, last).await;
    app.stop().await;
}

#[tokio::test]
async fn a_write_that_fails_on_a_full_disk_stops_the_service_and_a_restart_resumes() {
    let nats = Nats::start().await;
    // The disk fills between the projector's look for room and its commit.
    let full = on_a_full_disk(&nats, racing::faults::Faults::skip_disk_room_check).await;
    let Some((disk, app, last)) = full else {
        return;
    };
    // sled fails every write of the store from the first that fails (a commit's, or its
    // flusher's after the commit, seen at the next): the service stops with an error, for
    // its supervisor to start it again. A horse more now and then, until it has.
    let stop = tokio_util::sync::CancellationToken::new();
    let trickle = {
        let (client, stop) = (nats.connect(racing::nats::Role::Feeder).await, stop.clone());
        tokio::spawn(async move {
            let js = async_nats::jetstream::new(client);
            let mut last = last;
            for i in 0..200 {
                if stop.is_cancelled() {
                    break;
                }
                let event = envelope(profile(&format!("T{i:03}"), "LATER"));
                let ack = js.publish(event.subject(), event.to_json().into()).await;
                last = ack.expect("publish").await.expect("ack").sequence;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            last
        })
    };
    let ended = format!("{:#}", app.ended().await.expect_err("a failing exit"));
    assert!(ended.contains("cannot be written"), "{ended}");
    stop.cancel();
    let last = trickle.await.expect("trickle");
    disk.grow(256);
    // The test as the supervisor: the store opened again goes on from its checkpoint.
    let mut again = App::start(&nats, disk.path()).await;
    again.projected(last).await;
    as_a_clean_replay(&nats, &again, last).await;
    again.stop().await;
}

/// A service on a fresh store, one event applied, whose projector has taken its next
/// batch's first message and is held before folding it, until the sender is sent to (or
/// dropped).
async fn held_before_a_batch() -> (Nats, App, TempDir, tokio::sync::oneshot::Sender<()>) {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let first = nats
        .publish(&[envelope(profile("HELD1", "BEFORE IT"))])
        .await;
    app.projected(first).await;
    let (reached, release) = app.faults.pause_projector_before_batch();
    nats.publish(&[envelope(profile("HELD2", "KEPT WAITING"))])
        .await;
    tokio::time::timeout(Duration::from_secs(30), reached)
        .await
        .expect("the projector takes its batch")
        .expect("the fault's gate");
    (nats, app, dir, release)
}

#[tokio::test]
async fn a_projector_that_leaves_its_consumer_unread_past_the_servers_limit_reads_on() {
    // The projector stops before a batch, as over a replay's long batches on a large
    // store. Meanwhile more is stored than it decodes ahead (32,768) and its consumer
    // pulls ahead besides, and the server drops the consumer left unread (30 s without
    // a pull): read on, it would deliver what it had pulled and then nothing.
    let (nats, mut app, _dir, release) = held_before_a_batch().await;
    let last = nats.store_filler("racing.unread", 40_000).await;
    tokio::time::sleep(Duration::from_secs(40)).await;
    let _ = release.send(());

    let progress = app.projected(last).await;
    assert_eq!(progress.dead_letters, 40_000);
    let status = app.admin_json("/status").await;
    assert_eq!(
        status["interruptions"], 0,
        "the consumer was made again, the projector not stopped: {status}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_catch_up_while_the_api_answers_leaves_what_a_clean_replay_leaves() {
    // Held before a batch while more than a live batch's 4,096 events are stored: the
    // projector catches them up while the API answers, folding each batch while the one
    // before it is written (`src/projector/catch_up.rs`). Four days of eight races, each
    // card, 200 price moves and a result, the same horses throughout, so that each
    // result changes the form on later cards; then the first day's results again with
    // the places turned round (amendments of every later card's form). A clean replay
    // of the same log goes through the start-up's bulk load instead.
    let (nats, mut app, _dir, release) = held_before_a_batch().await;
    let horses = ["A001", "A002", "A003", "A004", "A005", "A006"];
    let runners = |order: &[&str]| -> Vec<_> {
        (1..)
            .zip(order)
            .map(|(place, h)| runner(Some(place), h))
            .collect()
    };
    let mut events = Vec::new();
    for day in 1..=4 {
        let date = format!("2026-03-{day:02}");
        for race in 1..=8 {
            events.push(envelope(card(&date, "Sha Tin", race, &horses)));
            for moves in 0..200 {
                let price = 2.0 + f64::from(moves % 40) / 10.0;
                let horse = horses[moves as usize % horses.len()];
                events.push(envelope(odds_at(&date, "Sha Tin", race, &[(horse, price)])));
            }
            let mut order = horses;
            order.rotate_left((day + race) as usize % horses.len());
            events.push(envelope(result(&date, "Sha Tin", race, runners(&order))));
        }
    }
    for race in 1..=8 {
        let mut order = horses;
        order.reverse();
        events.push(envelope(result(
            "2026-03-01",
            "Sha Tin",
            race,
            runners(&order),
        )));
    }
    assert!(events.len() > 4_096 + 1_000, "{} events", events.len());
    let last = nats.publish(&events).await;
    let _ = release.send(());

    let progress = app.projected(last).await;
    assert_eq!(progress.dead_letters, 0);
    as_a_clean_replay(&nats, &app, last).await;
    app.stop().await;
}

#[tokio::test]
async fn a_burst_of_the_live_feed_is_one_catch_up_applied_at_once_not_paced_for_requests() {
    // The projector held before a batch while 45,000 messages are stored: it decodes
    // 32,768 ahead, and its consumer pulls the rest once it goes on, the stream then some
    // thousands past each: past a live batch (a catch-up, counted once however many
    // batches it takes), within what an outage leaves (a backlog past 65,536 gives way
    // to requests).
    let (nats, mut app, _dir, release) = held_before_a_batch().await;
    let last = nats.store_filler("racing.burst", 45_000).await;
    let _ = release.send(());

    let progress = app.projected(last).await;
    assert_eq!(progress.dead_letters, 45_000);
    let catch_ups = app.metric("racing_projector_catch_ups_total").await;
    assert_eq!(catch_ups, Some(1.0), "catch-ups counted");
    let paused = app.metric("racing_projector_paused_seconds").await;
    assert_eq!(
        paused.unwrap_or(0.0),
        0.0,
        "the burst was paced: {paused:?} s of pauses"
    );
    app.stop().await;
}
