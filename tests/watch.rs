//! `racing watch` against a running service: the real binary, its standard output a pipe,
//! so one line per frame.

use std::process::Stdio;
use std::time::Duration;

use racing_events::samples::{envelope, odds};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::{App, Nats, KEY};

#[tokio::test]
async fn watch_shows_the_snapshot_then_each_move_and_resumes_after_since() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let day = "2026-11-25";
    let first = nats
        .publish(&[envelope(odds(day, 1, &[("A1", 3.5), ("B2", 8.0)]))])
        .await;
    app.projected(first).await;

    let watch = |since: Option<u64>| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"));
        command
            .args([
                "watch", "--url", &app.base, "--key", KEY, "--date", day, "--race", "1",
            ])
            .env_remove("RACING_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if let Some(since) = since {
            command.args(["--since", &since.to_string()]);
        }
        let mut child = command.spawn().expect("racing watch starts");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        (child, lines)
    };
    let next = async |lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>| {
        tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("a line within 10 s")
            .expect("readable")
            .expect("a line")
    };

    let (_child, mut lines) = watch(None);
    let snapshot = next(&mut lines).await;
    assert_eq!(
        snapshot,
        format!("snapshot {day} race 1 seq {first}: A1 3.5, B2 8")
    );
    // Give the session its first moments (a `since` may still come), then move a price.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let second = nats
        .publish(&[envelope(odds(day, 1, &[("B2", 6.5)]))])
        .await;
    let moved = next(&mut lines).await;
    assert!(
        moved.starts_with(&format!("odds {day} race 1 seq {second} lag ")),
        "{moved}"
    );
    assert!(moved.ends_with(": B2 6.5"), "{moved}");

    // Resumed after the first update, a new watcher gets the second and nothing twice.
    let (_again, mut resumed) = watch(Some(first));
    let line = next(&mut resumed).await;
    assert!(
        line.starts_with(&format!("odds {day} race 1 seq {second} ")),
        "{line}"
    );
}
