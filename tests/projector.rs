//! The projector against a real stream: duplicates, dead letters, and restarts.

use racing_events::samples::{envelope, profile, result, runner};
use reqwest::StatusCode;
use tempfile::TempDir;

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
