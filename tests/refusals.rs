//! Each feeder's refusals, against real nats-server processes with a feeder user per
//! name: read by that feeder alone, and by `racing refusals`.

use racing_events::samples::{self, envelope};
use racing_events::Envelope;
use tempfile::TempDir;

use crate::support::{App, Nats};

/// Publishes `payload` as the event `e`'s message, as the feeder `name` would, naming
/// itself, past any check of its own: what only the service refuses.
async fn publish_as(client: &async_nats::Client, name: &str, e: &Envelope, payload: String) {
    let js = async_nats::jetstream::new(client.clone());
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(
        async_nats::header::NATS_MESSAGE_ID,
        e.event_id.to_string().as_str(),
    );
    headers.insert(racing_events::FEEDER_HEADER, name);
    js.publish_with_headers(e.subject(), headers, payload.into())
        .await
        .expect("published")
        .await
        .expect("stored");
}

/// The refusals `feeder` reads through `client`: read again until there are some, for
/// at most `within` of `since`.
async fn refusals_of(
    client: &async_nats::Client,
    feeder: &str,
    since: std::time::Instant,
    within: std::time::Duration,
) -> Vec<racing::refusals::Refusal> {
    loop {
        let mut found = Vec::new();
        racing::refusals::read(client, "RACING", feeder, None, |r| found.push(r))
            .await
            .expect("a feeder reads its own");
        if !found.is_empty() || since.elapsed() > within {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn each_feeder_reads_its_own_refusals_within_two_seconds_and_no_other_s() {
    let mut nats = Nats::start_with_feeders(&["a", "b"]).await;
    // Feeder b's try at a's refusals is refused by NATS, and the server says so.
    nats.violations_expected = true;
    let dir = TempDir::new().expect("temp dir");
    let _app = App::start(&nats, dir.path()).await;
    let seeds = nats.credentials_dir();
    let connect = |name: &str| {
        let seed = std::fs::read_to_string(seeds.join(format!("{name}.nk"))).expect("a seed");
        let auth = racing::nats::ClientAuth::nkey(seed.trim());
        let url = nats.url();
        async move {
            racing::nats::connect(&url, &auth, racing::nats::Role::Feeder)
                .await
                .expect("the feeder connects")
        }
    };
    let (a, b) = (connect("feeder-a").await, connect("feeder-b").await);

    // A profile whose wins are more than its starts: valid JSON that only the service
    // refuses. Each feeder sends one.
    let refused = |wins: i64| {
        let e = envelope(samples::profile("E271", "GOLDEN SIXTY"));
        let payload = e
            .to_json()
            .replace("\"wins\":2", &format!("\"wins\":{wins}"));
        (e, payload)
    };
    let (from_a, payload_a) = refused(11);
    let sent = std::time::Instant::now();
    publish_as(&a, "feeder-a", &from_a, payload_a).await;
    let found = refusals_of(&a, "feeder-a", sent, std::time::Duration::from_secs(5)).await;
    let took = sent.elapsed();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        took < std::time::Duration::from_secs(2),
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
    let found_b = refusals_of(&b, "feeder-b", sent, std::time::Duration::from_secs(10)).await;
    assert_eq!(
        found_b
            .iter()
            .map(|r| r.event_id.clone())
            .collect::<Vec<_>>(),
        [Some(from_b.event_id.to_string())]
    );
    let again = refusals_of(&a, "feeder-a", sent, std::time::Duration::ZERO).await;
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
