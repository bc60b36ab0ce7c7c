//! Each feeder's refusals, against real nats-server processes with a feeder user per
//! name: read by that feeder alone, never delivered where another feeder may listen (a
//! server restart included), bounded per feeder however many events name it, and kept
//! once, with their first stored time, however often the log is replayed.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use futures::StreamExt;
use racing::refusals::Refusal;
use racing_events::samples::{self, envelope};
use racing_events::Envelope;
use tempfile::TempDir;

use crate::support::{App, Nats};

/// The stream of the refusals' bucket.
const BUCKET_STREAM: &str = "KV_RACING_REFUSALS";

/// A client of `nats` as the feeder user `name` (`feeder-a`).
async fn feeder(nats: &Nats, name: &str) -> async_nats::Client {
    let path = nats.credentials_dir().join(format!("{name}.nk"));
    let seed = std::fs::read_to_string(path).expect("a seed");
    let auth = racing::nats::ClientAuth::nkey(seed.trim());
    racing::nats::connect(&nats.url(), &auth, racing::nats::Role::Feeder)
        .await
        .expect("the feeder connects")
}

/// A profile whose wins are more than its starts: valid JSON that only the service
/// refuses. `wins` tells one from another.
pub fn refused(wins: i64) -> (Envelope, String) {
    let e = envelope(samples::profile("E271", "GOLDEN SIXTY"));
    let payload = e
        .to_json()
        .replace("\"wins\":2", &format!("\"wins\":{wins}"));
    (e, payload)
}

/// Publishes `payload` as the event `e`'s message, as the feeder `name` would, naming
/// itself, past any check of its own: what only the service refuses. Tries again for a
/// while (the same `Nats-Msg-Id`), as across a server's restart.
pub async fn publish_as(client: &async_nats::Client, name: &str, e: &Envelope, payload: String) {
    let js = jetstream::new(client.clone());
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(
        async_nats::header::NATS_MESSAGE_ID,
        e.event_id.to_string().as_str(),
    );
    headers.insert(racing_events::FEEDER_HEADER, name);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let sent = js
            .publish_with_headers(e.subject(), headers.clone(), payload.clone().into())
            .await;
        let stored = match sent {
            Ok(ack) => ack.await.map(drop).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match stored {
            Ok(()) => return,
            Err(e) => assert!(Instant::now() < deadline, "not stored: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Publishes `count` refused events naming `name`, a hundred in flight at a time.
async fn publish_many_as(client: &async_nats::Client, name: &str, count: usize) {
    let js = jetstream::new(client.clone());
    let mut acks = Vec::new();
    for i in 0..count {
        let (e, payload) = refused(100 + i as i64);
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(
            async_nats::header::NATS_MESSAGE_ID,
            e.event_id.to_string().as_str(),
        );
        headers.insert(racing_events::FEEDER_HEADER, name);
        acks.push(
            js.publish_with_headers(e.subject(), headers, payload.into())
                .await
                .expect("published"),
        );
        if acks.len() == 100 || i + 1 == count {
            for ack in acks.drain(..) {
                ack.await.expect("stored");
            }
        }
    }
}

/// The refusals `feeder` reads through `client`: read again until there are some, for
/// at most `within` of `since`.
async fn refusals_of(
    client: &async_nats::Client,
    feeder: &str,
    since: Instant,
    within: Duration,
) -> Vec<Refusal> {
    loop {
        let mut found = Vec::new();
        racing::refusals::read(client, "RACING", feeder, None, |r| found.push(r))
            .await
            .expect("a feeder reads its own");
        if !found.is_empty() || since.elapsed() > within {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `feeder` reads a refusal of the event `id`, for at most 20 s.
pub async fn kept_for(client: &async_nats::Client, feeder: &str, id: &str) -> Refusal {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut found = Vec::new();
        racing::refusals::read(client, "RACING", feeder, None, |r| found.push(r))
            .await
            .expect("a feeder reads its own");
        if let Some(r) = found
            .into_iter()
            .find(|r| r.event_id.as_deref() == Some(id))
        {
            return r;
        }
        assert!(Instant::now() < deadline, "no refusal of {id} for {feeder}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A reading of `client` that follows feeder a's refusals, and what it hands over.
pub fn follow_a(
    client: async_nats::Client,
) -> (
    tokio::task::JoinHandle<anyhow::Result<u64>>,
    tokio::sync::mpsc::UnboundedReceiver<Refusal>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        racing::refusals::read(
            &client,
            "RACING",
            "feeder-a",
            Some(Duration::from_secs(120)),
            |r| {
                let _ = tx.send(r);
            },
        )
        .await
    });
    (task, rx)
}

/// The next refusal a following reading hands over, within a minute.
async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Refusal>) -> Refusal {
    tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .expect("a refusal followed in time")
        .expect("the reading goes on")
}

/// Every message delivered on the inbox every feeder may subscribe to, as `client`
/// (another feeder) sees them: subject and payload.
fn shared_inbox(client: &async_nats::Client) -> Arc<Mutex<Vec<(String, String)>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = client.clone();
    let kept = seen.clone();
    let (ready, listening) = std::sync::mpsc::channel();
    tokio::spawn(async move {
        let mut inbox = client
            .subscribe("_INBOX_RACING_FEEDER.>")
            .await
            .expect("any feeder may listen on the feeders' inbox");
        client.flush().await.expect("subscribed");
        let _ = ready.send(());
        while let Some(m) = inbox.next().await {
            let text = String::from_utf8_lossy(&m.payload).into_owned();
            kept.lock()
                .expect("not poisoned")
                .push((m.subject.to_string(), text));
        }
    });
    let _ = listening.recv_timeout(Duration::from_secs(10));
    seen
}

#[tokio::test]
async fn each_feeder_reads_its_own_refusals_within_two_seconds_and_no_other_s() {
    let mut nats = Nats::start_with_feeders(&["a", "b"]).await;
    // Feeder b's try at a's refusals is refused by NATS, and the server says so.
    nats.violations_expected = true;
    let dir = TempDir::new().expect("temp dir");
    let _app = App::start(&nats, dir.path()).await;
    let seeds = nats.credentials_dir();
    let (a, b) = (
        feeder(&nats, "feeder-a").await,
        feeder(&nats, "feeder-b").await,
    );

    // Each feeder sends one.
    let (from_a, payload_a) = refused(11);
    let sent = Instant::now();
    publish_as(&a, "feeder-a", &from_a, payload_a).await;
    let found = refusals_of(&a, "feeder-a", sent, Duration::from_secs(5)).await;
    let took = sent.elapsed();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        took < Duration::from_secs(2),
        "the refusal came after {took:?}"
    );
    let r = &found[0];
    assert_eq!(r.feeder, "feeder-a");
    assert_eq!(r.subject, "racing.horses.E271");
    assert_eq!(
        r.event_id.as_deref(),
        Some(from_a.event_id.to_string().as_str())
    );
    assert_eq!(r.reason, "wins is more than starts");
    assert!(r.seq > 0 && r.published_at.ends_with('Z'), "{r:?}");

    let (from_b, payload_b) = refused(12);
    publish_as(&b, "feeder-b", &from_b, payload_b).await;
    // An event with no feeder's name is the operator's dead letter only.
    let (anonymous, payload) = refused(13);
    nats.publish_raw(
        &anonymous.subject(),
        payload.as_bytes(),
        Some(&anonymous.event_id.to_string()),
    )
    .await;
    let found_b = refusals_of(&b, "feeder-b", sent, Duration::from_secs(10)).await;
    assert_eq!(
        found_b
            .iter()
            .map(|r| r.event_id.clone())
            .collect::<Vec<_>>(),
        [Some(from_b.event_id.to_string())]
    );
    let again = refusals_of(&a, "feeder-a", sent, Duration::ZERO).await;
    assert_eq!(
        again, found,
        "a sees b's refusal and the anonymous one nowhere"
    );
    // b may not read a's: its consumer on a's keys is refused.
    let err = racing::refusals::read(&b, "RACING", "feeder-a", None, |_| {})
        .await
        .expect_err("b reads nothing of a's");
    assert!(format!("{err:#}").contains("feeder-a"), "{err:#}");

    // The same through `racing refusals`, as feeder a with its nkey.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["refusals", "--nats-url", &nats.url(), "--nats-nkey"])
        .arg(seeds.join("feeder-a.nk"))
        .env_remove("RACING_NATS_URL")
        .env("RACING_DATA_DIR", dir.path())
        .output()
        .await
        .expect("racing runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [format!(
            "seq {} at {} on racing.horses.E271 event {}: wins is more than starts",
            r.seq, r.published_at, from_a.event_id
        )]
    );
}

#[tokio::test]
async fn a_feeder_s_refusals_reach_no_other_feeder_when_its_reading_outlives_a_server_restart() {
    let mut nats = Nats::start_with_feeders(&["a", "b"]).await;
    let dir = TempDir::new().expect("temp dir");
    let _app = App::start(&nats, dir.path()).await;
    let (a, b) = (
        feeder(&nats, "feeder-a").await,
        feeder(&nats, "feeder-b").await,
    );
    let seen_by_b = shared_inbox(&b);

    let (first, payload) = refused(21);
    publish_as(&a, "feeder-a", &first, payload).await;
    let first_id = first.event_id.to_string();
    kept_for(&a, "feeder-a", &first_id).await;

    // a follows its refusals; the first comes at once.
    let (following, mut rx) = follow_a(a.clone());
    assert_eq!(next(&mut rx).await.event_id.as_deref(), Some(&*first_id));

    let port = nats.kill_server().await;
    nats.restart_server(port).await;
    let (second, payload) = refused(22);
    publish_as(&a, "feeder-a", &second, payload).await;
    let second_id = second.event_id.to_string();
    let after = next(&mut rx).await;
    assert_eq!(after.event_id.as_deref(), Some(&*second_id), "{after:?}");
    assert!(!following.is_finished(), "a still follows");

    // Its consumer lost (removed here as the service's user, as a server that forgot it
    // would have), a's reading makes it again from the next refusal.
    let bucket = nats
        .service
        .get_stream(BUCKET_STREAM)
        .await
        .expect("the bucket's stream");
    // The follower holds the feeder's first name: the readings before it ended.
    let name = racing::nats::subjects::refusals_reader("feeder-a", 0);
    bucket.delete_consumer(&name).await.expect("removed");
    let (third, payload) = refused(23);
    publish_as(&a, "feeder-a", &third, payload).await;
    let third_id = third.event_id.to_string();
    let after = next(&mut rx).await;
    assert_eq!(after.event_id.as_deref(), Some(&*third_id), "{after:?}");
    assert!(rx.try_recv().is_err(), "each refusal once");

    let seen = seen_by_b.lock().expect("not poisoned").clone();
    let leaked: Vec<&(String, String)> = seen
        .iter()
        .filter(|(_, text)| {
            text.contains(&first_id)
                || text.contains(&second_id)
                || text.contains(&third_id)
                || serde_json::from_str::<Refusal>(text).is_ok()
        })
        .collect();
    assert!(
        leaked.is_empty(),
        "feeder b read a's refusals on the shared inbox: {leaked:?}"
    );
    following.abort();
}

#[tokio::test]
async fn a_feeder_naming_another_fills_no_more_than_that_feeder_s_quota() {
    let nats = Nats::start_with_feeders(&["a", "b"]).await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    let b = feeder(&nats, "feeder-b").await;
    let quota = racing::nats::buckets::REFUSALS_PER_FEEDER;

    // b names a in more refused events than a's quota, then names itself once.
    publish_many_as(&b, "feeder-a", quota + 3).await;
    let (own, payload) = refused(31);
    publish_as(&b, "feeder-b", &own, payload).await;
    kept_for(&b, "feeder-b", &own.event_id.to_string()).await;

    let stream = nats
        .service
        .get_stream(BUCKET_STREAM)
        .await
        .expect("the service looks up the bucket");
    let keys_of = |who: &'static str| {
        let stream = stream.clone();
        async move {
            let mut keys = stream
                .info_with_subjects(format!("$KV.RACING_REFUSALS.{who}.>"))
                .await
                .expect("the bucket's keys");
            let mut n = 0;
            while let Some(key) = keys.next().await {
                key.expect("a key");
                n += 1;
            }
            n
        }
    };
    assert_eq!(keys_of("feeder-a").await, quota, "a's quota holds");
    assert_eq!(keys_of("feeder-b").await, 1, "b's own is kept");
    let metrics = reqwest::get(format!("{}/metrics", app.admin))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("racing_refusals_over_quota_total 3"),
        "{metrics}"
    );
}

/// A feeder that names a crowd of made-up feeders fills the bucket, and the bucket then
/// drops its oldest refusals for the next ones: every feeder's next refusal is kept.
/// (A bucket that refused writes when full kept none of anyone's for up to 30 days.)
#[tokio::test]
async fn a_bucket_filled_under_made_up_names_still_keeps_every_feeders_next_refusal() {
    let nats = Nats::start_with_feeders(&["a", "b"]).await;
    let dir = TempDir::new().expect("temp dir");
    let _app = App::start(&nats, dir.path()).await;
    let (a, b) = (
        feeder(&nats, "feeder-a").await,
        feeder(&nats, "feeder-b").await,
    );
    // The bucket made small, as the set-up user may: about a hundred refusals' room.
    let mut stream = nats
        .setup
        .get_stream(BUCKET_STREAM)
        .await
        .expect("the set-up looks up the bucket");
    let mut config = stream.info().await.expect("info").config.clone();
    config.max_bytes = 64 << 10;
    nats.setup.update_stream(config).await.expect("made small");

    // b names 300 feeders that do not exist, one refused event each.
    for i in 0..300 {
        publish_many_as(&b, &format!("feeder-x{i}"), 1).await;
    }
    let (own, payload) = refused(41);
    publish_as(&a, "feeder-a", &own, payload).await;
    kept_for(&a, "feeder-a", &own.event_id.to_string()).await;

    let info = stream.info().await.expect("info");
    assert!(
        info.state.bytes <= 64 << 10 && info.state.messages < 301,
        "the bucket stays within its bytes: {:?}",
        info.state
    );
    let first = stream
        .info_with_subjects("$KV.RACING_REFUSALS.feeder-x0.>")
        .await
        .expect("the bucket's keys")
        .next()
        .await;
    assert!(first.is_none(), "the oldest made way: {first:?}");
}

/// A refusals' bucket an older set-up made to refuse writes when full is made to drop
/// its oldest by `racing setup` after the upgrade.
#[tokio::test]
async fn setting_up_again_makes_an_older_refusals_bucket_drop_its_oldest_when_full() {
    use async_nats::jetstream::stream::DiscardPolicy;
    let nats = Nats::start().await;
    let mut stream = nats
        .setup
        .get_stream(BUCKET_STREAM)
        .await
        .expect("the set-up looks up the bucket");
    let mut config = stream.info().await.expect("info").config.clone();
    assert_eq!(config.discard, DiscardPolicy::Old);
    config.discard = DiscardPolicy::New;
    nats.setup.update_stream(config).await.expect("as before");
    nats.set_up_with(&racing::nats::buckets::SnapshotBucket::default())
        .await;
    let info = stream.info().await.expect("info");
    assert_eq!(info.config.discard, DiscardPolicy::Old);
    assert_eq!(
        info.config.max_bytes,
        racing::nats::buckets::REFUSALS.max_bytes
    );
}

/// The bucket's entry of `feeder`'s refusal at `seq`, as the service reads it.
async fn entry(nats: &Nats, feeder: &str, seq: u64) -> Option<jetstream::kv::Entry> {
    let kv = nats
        .service
        .get_key_value("RACING_REFUSALS")
        .await
        .expect("the bucket");
    kv.entry(format!("{feeder}.{seq}")).await.expect("read")
}

/// Starts a service of its own data directory, which replays the whole log, and waits
/// until a refusal kept after its replay's shows that the replay's are kept too.
async fn replayed(nats: &Nats, a: &async_nats::Client, wins: i64) -> (App, TempDir) {
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(nats, dir.path()).await;
    let last = nats
        .service
        .get_stream("RACING")
        .await
        .expect("the stream")
        .info()
        .await
        .expect("its info")
        .state
        .last_sequence;
    app.projected(last).await;
    let (after, payload) = refused(wins);
    publish_as(a, "feeder-a", &after, payload).await;
    kept_for(a, "feeder-a", &after.event_id.to_string()).await;
    (app, dir)
}

#[tokio::test]
async fn a_replay_keeps_each_refusal_with_its_first_stored_time() {
    let nats = Nats::start_with_feeders(&["a"]).await;
    let a = feeder(&nats, "feeder-a").await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    let (event, payload) = refused(41);
    publish_as(&a, "feeder-a", &event, payload).await;
    let kept = kept_for(&a, "feeder-a", &event.event_id.to_string()).await;
    let first = entry(&nats, "feeder-a", kept.seq).await.expect("kept");
    app.stop().await;

    let (_app, _dir) = replayed(&nats, &a, 42).await;
    let after = entry(&nats, "feeder-a", kept.seq)
        .await
        .expect("still kept");
    assert_eq!(
        (after.revision, after.created),
        (first.revision, first.created),
        "the replay wrote the refusal again"
    );
}

#[tokio::test]
async fn a_replay_brings_back_no_refusal_that_aged_out_of_the_bucket() {
    let nats = Nats::start_with_feeders(&["a"]).await;
    // The bucket keeps a refusal 5 s here rather than 30 days.
    let age = Duration::from_secs(5);
    let mut config = nats
        .setup
        .get_stream(BUCKET_STREAM)
        .await
        .expect("the set-up looks up the bucket")
        .info()
        .await
        .expect("its info")
        .config
        .clone();
    config.max_age = age;
    config.duplicate_window = age;
    nats.setup
        .update_stream(config)
        .await
        .expect("the set-up shortens its age");

    let a = feeder(&nats, "feeder-a").await;
    let dir = TempDir::new().expect("temp dir");
    let app = App::start(&nats, dir.path()).await;
    let (event, payload) = refused(51);
    publish_as(&a, "feeder-a", &event, payload).await;
    let kept = kept_for(&a, "feeder-a", &event.event_id.to_string()).await;
    app.stop().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while entry(&nats, "feeder-a", kept.seq).await.is_some() {
        assert!(Instant::now() < deadline, "the refusal never aged out");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let (_app, _dir) = replayed(&nats, &a, 52).await;
    assert!(
        entry(&nats, "feeder-a", kept.seq).await.is_none(),
        "a refusal that aged out came back"
    );
}

#[tokio::test]
async fn readings_of_one_feeder_at_once_each_get_every_refusal_up_to_the_most_it_may_hold() {
    let nats = Nats::start_with_feeders(&["a"]).await;
    let dir = TempDir::new().expect("temp dir");
    let _app = App::start(&nats, dir.path()).await;
    let a = feeder(&nats, "feeder-a").await;
    let (first, payload) = refused(61);
    publish_as(&a, "feeder-a", &first, payload).await;
    let first_id = first.event_id.to_string();
    kept_for(&a, "feeder-a", &first_id).await;

    // As many followers as a feeder may hold, each of its own connection.
    let mut followers = Vec::new();
    for _ in 0..racing::nats::subjects::REFUSAL_READERS {
        let (task, mut rx) = follow_a(feeder(&nats, "feeder-a").await);
        // Each has the backlog before the next starts.
        assert_eq!(next(&mut rx).await.event_id.as_deref(), Some(&*first_id));
        followers.push((task, rx));
    }
    let more = racing::refusals::read(&a, "RACING", "feeder-a", None, |_| {})
        .await
        .expect_err("one more reading than a feeder may hold");
    assert!(
        format!("{more:#}").contains("as many as it may"),
        "{more:#}"
    );

    let (second, payload) = refused(62);
    publish_as(&a, "feeder-a", &second, payload).await;
    let second_id = second.event_id.to_string();
    for (task, rx) in &mut followers {
        assert_eq!(next(rx).await.event_id.as_deref(), Some(&*second_id));
        assert!(rx.try_recv().is_err(), "each refusal once");
        assert!(!task.is_finished(), "each still follows");
    }
    // One ends, and its name is free again.
    let (task, _) = followers.pop().expect("a follower");
    task.abort();
    let deadline = Instant::now() + Duration::from_secs(40);
    let found = loop {
        match racing::refusals::read(&a, "RACING", "feeder-a", None, |_| {}).await {
            Ok(found) => break found,
            Err(e) => assert!(Instant::now() < deadline, "no name free again: {e:#}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(found, 2);
    for (task, _) in followers {
        task.abort();
    }
}
