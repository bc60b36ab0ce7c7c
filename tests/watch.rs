//! `racing watch` against a running service: the real binary, its standard output a pipe,
//! so one line per frame.

use std::process::Stdio;
use std::time::Duration;

use racing_events::samples::{
    card, envelope, odds, odds_with_place, result, runner, scratch_at, status,
};
use racing_events::{RaceStatus, ResultRunner};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

use crate::support::{App, Nats, KEY};

type Output = Lines<BufReader<ChildStdout>>;

/// `racing watch` of race 1 of `day`, resumed after `since` where given, and its lines.
fn watch(app: &App, day: &str, since: Option<u64>) -> (Child, Output) {
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
}

async fn next(lines: &mut Output) -> String {
    tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("a line within 10 s")
        .expect("readable")
        .expect("a line")
}

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

    let (_child, mut lines) = watch(&app, day, None);
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
    let (_again, mut resumed) = watch(&app, day, Some(first));
    let line = next(&mut resumed).await;
    assert!(
        line.starts_with(&format!("odds {day} race 1 seq {second} ")),
        "{line}"
    );
}

/// Needs the socket's topics (`status`, `scratchings`, `results`): a service without them
/// sends odds alone, and this test waits in vain for the first status line.
#[tokio::test]
async fn watch_shows_a_race_day_status_scratching_place_prices_and_result() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let (day, venue) = ("2026-11-25", Some("Sha Tin"));
    let declared = nats
        .publish(&[
            envelope(card(day, "Sha Tin", 1, &["A1", "B2", "C3"])),
            envelope(status(day, venue, 1, RaceStatus::Open, None)),
            envelope(odds_with_place(
                day,
                venue,
                1,
                &[
                    ("A1", Some(3.5), Some(1.5)),
                    ("B2", Some(8.0), Some(2.4)),
                    ("C3", Some(5.0), Some(1.8)),
                ],
            )),
        ])
        .await;
    app.projected(declared).await;

    let (_child, mut lines) = watch(&app, day, None);
    let snapshot = next(&mut lines).await;
    assert!(
        snapshot.starts_with(&format!("snapshot {day} race 1")),
        "{snapshot}"
    );
    assert!(
        snapshot.contains("A1 3.5 place 1.5") && snapshot.contains("B2 8 place 2.4"),
        "{snapshot}"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;

    let withdrawn = ResultRunner {
        status: Some("WX".into()),
        win_odds: None,
        ..runner(None, "B2")
    };
    let placings = vec![runner(Some(1), "A1"), runner(Some(2), "C3"), withdrawn];
    let suspended = Some("B2 withdrawn: lame");
    let day_events = [
        status(day, venue, 1, RaceStatus::Suspended, suspended),
        scratch_at(day, "Sha Tin", 1, "B2"),
        status(day, venue, 1, RaceStatus::Open, None),
        odds_with_place(day, venue, 1, &[("A1", Some(3.2), Some(1.4))]),
        status(day, venue, 1, RaceStatus::Off, None),
        status(day, venue, 1, RaceStatus::Finished, None),
        result(day, "Sha Tin", 1, placings),
    ];
    let mut seqs = Vec::new();
    for event in day_events {
        seqs.push(nats.publish(&[envelope(event)]).await);
    }
    let expected = [
        format!(
            "status {day} race 1 seq {}: suspended (B2 withdrawn: lame)",
            seqs[0]
        ),
        format!("scratching {day} race 1 seq {}: ~~B2~~ scratched", seqs[1]),
        format!("status {day} race 1 seq {}: open", seqs[2]),
        format!("odds {day} race 1 seq {} lag ", seqs[3]),
        format!("status {day} race 1 seq {}: off", seqs[4]),
        format!("status {day} race 1 seq {}: finished", seqs[5]),
        format!(
            "result {day} race 1 (Sha Tin) seq {}: 1 A1 NAME A1 (Z Purton) 1:09.41; \
             2 C3 NAME C3 (Z Purton) 1:09.42; B2 NAME B2 WX",
            seqs[6]
        ),
    ];
    for want in expected {
        let line = next(&mut lines).await;
        if want.starts_with("odds") {
            assert!(line.starts_with(&want), "{line}");
            assert!(line.ends_with(": A1 3.2 place 1.4"), "{line}");
        } else {
            assert_eq!(line, want);
        }
    }
}
