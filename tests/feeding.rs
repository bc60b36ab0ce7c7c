//! The feeding guide's examples (`docs/feeding.md`), run as a feeder runs them against a
//! real NATS and the service: a refused event sent again under a new `event_id` and under
//! its own (dropped inside the duplicate window, applied after it), the events that stand
//! in for an undo (a profile corrected, a runner scratched in error reinstated), a file
//! published with `racing publish`, and the copy-paste `nats pub`, sent with the same
//! subject, headers and body through async-nats (the `nats` CLI is not installed here).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use async_nats::jetstream;
use racing::nats::Role;
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats};

/// The lines of the fenced block of `docs/feeding.md` between `<!-- example: {name} -->`
/// and `<!-- end of example -->`.
pub(crate) fn block(name: &str) -> Vec<String> {
    let part = crate::support::marked(
        "feeding.md",
        &format!("example: {name} -->"),
        "end of example",
    );
    let lines: Vec<String> = part
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .map(str::to_owned)
        .collect();
    assert!(!lines.is_empty(), "the example {name} has a fenced block");
    lines
}

/// The subject of an event line, from its payload (as a feeder computes it, even for an
/// event the service will refuse).
fn subject(line: &str) -> String {
    let event: Value = serde_json::from_str(line).expect("a JSON line");
    let data = &event["data"];
    match event["type"].as_str().expect("a type") {
        "HorseProfileUpdated" => format!(
            "racing.horses.{}",
            data["horse_no"].as_str().expect("a brand")
        ),
        kind => {
            let what = match kind {
                "RaceCardDeclared" | "RunnerScratched" => "cards",
                "RaceResultPublished" | "RaceRetracted" => "results",
                "OddsUpdated" => "odds",
                other => panic!("no subject for {other} here"),
            };
            format!(
                "racing.{what}.{}.{}",
                data["date"].as_str().expect("a date"),
                data["race_number"]
            )
        }
    }
}

/// Publishes an event line as a feeder does (`Nats-Msg-Id` its `event_id`); the
/// acknowledgement.
async fn publish(js: &jetstream::Context, line: &str) -> jetstream::publish::PublishAck {
    let event: Value = serde_json::from_str(line).expect("a JSON line");
    let mut headers = async_nats::HeaderMap::new();
    let id = event["event_id"].as_str().expect("an event_id");
    headers.insert(async_nats::header::NATS_MESSAGE_ID, id);
    js.publish_with_headers(subject(line), headers, line.to_owned().into())
        .await
        .expect("publish")
        .await
        .expect("acknowledged")
}

/// Publishes the lines in turn; the last acknowledgement's sequence.
async fn publish_all(js: &jetstream::Context, lines: &[String]) -> u64 {
    let mut last = 0;
    for line in lines {
        last = publish(js, line).await.sequence;
    }
    last
}

#[tokio::test]
async fn a_refused_event_is_dropped_again_under_its_own_id_and_applied_under_a_new_one() {
    let lines = block("resubmitting a refused event");
    let [refused, same_id, new_id] = &lines[..] else {
        panic!("three events: {lines:?}")
    };
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let horse = "/api/v1/horses/L404";

    let first = publish(&nats.js, refused).await;
    let progress = app.projected(first.sequence).await;
    assert_eq!((progress.applied, progress.dead_letters), (0, 1));
    assert_eq!(app.get(horse).await.0, StatusCode::NOT_FOUND);

    // Corrected, under the same id, inside the window: JetStream drops it.
    let again = publish(&nats.js, same_id).await;
    assert!(again.duplicate, "{again:?}");
    assert_eq!(again.sequence, first.sequence);
    assert_eq!(app.get(horse).await.0, StatusCode::NOT_FOUND);

    // Under a new id: applied.
    let new = publish(&nats.js, new_id).await;
    assert!(!new.duplicate);
    app.projected(new.sequence).await;
    let (status, profile) = app.get(horse).await;
    assert_eq!(status, StatusCode::OK, "{profile}");
    assert_eq!(
        (&profile["starts"], &profile["wins"]),
        (&10.into(), &2.into())
    );
}

#[tokio::test]
async fn a_refused_event_sent_again_under_its_own_id_is_applied_once_the_window_has_passed() {
    let lines = block("resubmitting a refused event");
    let (refused, same_id) = (&lines[0], &lines[1]);
    // A stream with a duplicate window of 3 s, the service told the same.
    let window = Duration::from_secs(3);
    let nats = Nats::start_with_duplicate_window(window).await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start_with(&nats, dir.path(), |c| c.duplicate_window = window).await;

    let first = publish(&nats.js, refused).await;
    let sent = Instant::now();
    // Sent again at once, then until JetStream stores it: not before the window ends.
    let mut again = publish(&nats.js, same_id).await;
    assert!(again.duplicate || sent.elapsed() >= window, "{again:?}");
    while again.duplicate {
        assert!(
            sent.elapsed() < window * 10,
            "still a duplicate after {window:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        again = publish(&nats.js, same_id).await;
    }
    assert!(sent.elapsed() >= window - Duration::from_millis(500));
    assert_eq!(again.sequence, first.sequence + 1);
    // The service never applied the refused one: it applies the corrected one.
    let progress = app.projected(again.sequence).await;
    assert_eq!((progress.applied, progress.dead_letters), (1, 1));
    let (status, profile) = app.get("/api/v1/horses/L404").await;
    assert_eq!(status, StatusCode::OK, "{profile}");
    assert_eq!(profile["wins"], 2);
}

/// The race of `number` at `venue` in a day's cards, as served (the day's one meeting).
fn race<'a>(cards: &'a Value, venue: &str, number: i64) -> &'a Value {
    std::iter::once(cards)
        .filter(|m| m["venue"] == venue)
        .flat_map(|m| m["races"].as_array().into_iter().flatten())
        .find(|r| r["race_number"] == number)
        .unwrap_or_else(|| panic!("race {number} at {venue} in {cards}"))
}

/// The brand numbers of a race's runners, as served.
fn runners(race: &Value) -> Vec<&str> {
    race["runners"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["horse_no"].as_str())
        .collect()
}

#[tokio::test]
async fn what_the_guide_sends_instead_of_an_undo_does_what_it_says() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;

    // A profile corrected: the whole profile again replaces it.
    let last = publish_all(&nats.js, &block("a profile corrected")).await;
    app.projected(last).await;
    let (_, profile) = app.get("/api/v1/horses/L505").await;
    assert_eq!(profile["trainer"], "F C Lor", "{profile}");

    // A runner scratched in error.
    let sent = block("a scratching in error");
    let last = publish_all(&nats.js, &sent).await;
    app.projected(last).await;
    let cards = "/api/v1/racecards/2026-11-17";
    let (_, day) = app.get(cards).await;
    assert_eq!(runners(race(&day, "Happy Valley", 2)), ["L101", "L202"]);
    // The card declared again, without the retraction, still leaves it out.
    let mut card: Value = serde_json::from_str(&sent[0]).expect("the card");
    card["event_id"] = "2f1339df-d28b-42c6-894a-a38a85335e6c".into();
    let last = publish(&nats.js, &card.to_string()).await.sequence;
    app.projected(last).await;
    let (_, day) = app.get(cards).await;
    assert_eq!(runners(race(&day, "Happy Valley", 2)), ["L101", "L202"]);

    // Reinstated: the retraction, the card and the prices again.
    let last = publish_all(&nats.js, &block("the runner reinstated")).await;
    app.projected(last).await;
    let (_, day) = app.get(cards).await;
    assert_eq!(
        runners(race(&day, "Happy Valley", 2)),
        ["L101", "L202", "L303"]
    );
    let (status, odds) = app.get("/api/v1/odds/2026-11-17/2").await;
    assert_eq!(status, StatusCode::OK, "{odds}");
    let price = odds["odds"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["horse_no"] == "L303")
        .map(|r| r["win_odds"].clone());
    assert_eq!(price, Some(9.0.into()), "{odds}");
}

#[tokio::test]
async fn the_guide_s_racing_publish_prints_what_it_shows_and_the_service_applies_both() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, &dir.path().join("data")).await;
    let file = dir.path().join("events.ndjson");
    std::fs::write(&file, block("two results").join("\n") + "\n").expect("written");
    let (words, shown) = crate::import::example("publishing a file");
    let args = words
        .iter()
        .map(|w| match w.as_str() {
            "./.demo" => nats
                .credentials_dir()
                .parent()
                .expect("the server's directory")
                .display()
                .to_string(),
            "events.ndjson" => file.display().to_string(),
            w => w.to_owned(),
        })
        .collect::<Vec<_>>();
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(&args)
        .env("RACING_NATS_URL", nats.url())
        .output()
        .await
        .expect("racing runs");
    let printed: Vec<String> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(printed, shown, "{}", String::from_utf8_lossy(&run.stderr));
    let progress = app.projected(2).await;
    assert_eq!(progress.applied, 2);
    // The in-flight bound the guide gives is `racing publish`'s.
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/feeding.md"))
        .expect("the guide");
    let said = format!(
        "keep up to {} publishes waiting for their acknowledgement",
        racing::publish::IN_FLIGHT
    );
    assert!(
        guide
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(&said),
        "{said}"
    );
}

#[tokio::test]
async fn the_guide_s_nats_pub_stores_its_event_with_both_headers_and_the_service_applies_it() {
    let lines = block("nats pub");
    let command = lines.join("\n").replace("\\\n", " ");
    let words = crate::examples::words(&command, &BTreeMap::new());
    // nats [connection flags] pub [publish flags] SUBJECT BODY
    let pub_at = words.iter().position(|w| w == "pub").expect("`pub`");
    assert_eq!(words[0], "nats");
    let flag = |name: &str| {
        let at = words[..pub_at].iter().position(|w| w == name);
        at.map(|at| words[at + 1].clone())
            .unwrap_or_else(|| panic!("`{name}` before `pub`"))
    };
    let (nkey_file, inbox) = (flag("--nkey"), flag("--inbox-prefix"));
    assert!(flag("--server").starts_with("nats://"));
    assert_eq!(inbox, Role::Feeder.inbox_prefix());
    let mut headers = async_nats::HeaderMap::new();
    let mut rest = words[pub_at + 1..].iter();
    let mut positional = Vec::new();
    let mut options = Vec::new();
    while let Some(w) = rest.next() {
        match w.as_str() {
            "--header" | "-H" => {
                let header = rest.next().expect("a header");
                let (name, value) = header.split_once(':').expect("K:V");
                headers.insert(name.trim(), value.trim());
            }
            w if w.starts_with('-') => options.push(w.to_owned()),
            _ => positional.push(w.clone()),
        }
    }
    assert_eq!(options, ["--jetstream", "--no-templates"]);
    let [subject, body] = &positional[..] else {
        panic!("a subject and a body: {positional:?}")
    };
    let event = racing_events::Envelope::parse(body.as_bytes()).expect("a valid event");
    assert_eq!(subject, &event.subject());
    let id = event.event_id.to_string();
    let header = |name: &str| headers.get(name).map(|v| v.as_str().to_owned());
    assert_eq!(header("Nats-Msg-Id").as_deref(), Some(id.as_str()));
    let feeder = nkey_file.strip_suffix(".nk").expect("a seed file");
    assert_eq!(header("Racing-Feeder").as_deref(), Some(feeder));

    // What `nats pub --jetstream` does: a request on the subject, as that feeder, with
    // that inbox prefix; the answer is the stream's acknowledgement.
    let nats = Nats::start_with_feeders(&[feeder.strip_prefix("feeder-").expect("feeder-")]).await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let seed = std::fs::read_to_string(nats.credentials_dir().join(&nkey_file))
        .expect("the feeder's seed file");
    let client = async_nats::ConnectOptions::with_nkey(seed.trim().to_owned())
        .custom_inbox_prefix(inbox)
        .connect(nats.url())
        .await
        .expect("the feeder connects");
    let answer = client
        .request_with_headers(subject.clone(), headers, body.clone().into())
        .await
        .expect("an acknowledgement");
    let ack: Value = serde_json::from_slice(&answer.payload).expect("JSON");
    assert_eq!(ack["stream"], "RACING", "{ack}");
    let seq = ack["seq"].as_u64().expect("a sequence");

    // Stored as sent, and applied.
    let stored = nats
        .service
        .get_stream("RACING")
        .await
        .expect("the stream")
        .get_raw_message(seq)
        .await
        .expect("the message");
    assert_eq!(stored.subject.as_str(), subject);
    assert_eq!(stored.payload, body.as_bytes());
    let kept = |name: &str| stored.headers.get(name).map(|v| v.as_str().to_owned());
    assert_eq!(kept("Nats-Msg-Id").as_deref(), Some(id.as_str()));
    assert_eq!(kept("Racing-Feeder").as_deref(), Some(feeder));
    app.projected(seq).await;
    let (status, profile) = app.get("/api/v1/horses/L606").await;
    assert_eq!(status, StatusCode::OK, "{profile}");
    assert_eq!(profile["horse_name"], "HAPPY HARBOUR");
}
