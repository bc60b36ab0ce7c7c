//! The log's history over HTTP end to end: `Racing-Seq` as one position for HTTP and the
//! WebSocket, documents `as_of` a point of the log, a race's odds history and the change
//! feed, against a service projecting a real JetStream stream.

use std::collections::BTreeMap;

use racing_events::samples::{
    card, envelope, odds, odds_at, profile, result, retraction, runner, scratch,
};
use racing_events::{Envelope, Event};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::live::Client;
use crate::support::{service_with, App, Nats, KEY};

const DAY: &str = "2026-11-25";
const ST: &str = "Sha Tin";
const HV: &str = "Happy Valley";

/// Publishes `events` and waits for them to be projected; the last one's sequence.
async fn publish(nats: &Nats, app: &mut App, events: impl IntoIterator<Item = Event>) -> u64 {
    let events: Vec<Envelope> = events.into_iter().map(envelope).collect();
    let last = nats.publish(&events).await;
    app.projected(last).await;
    last
}

/// A GET as it came: status, the headers asked for, and the body's bytes.
struct Answer {
    status: StatusCode,
    etag: String,
    seq: Option<u64>,
    cache: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

async fn get(app: &App, path: &str) -> Answer {
    let res = app.response(path).await;
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (status, etag, cache) = (res.status(), header("etag"), header("cache-control"));
    let seq = res
        .headers()
        .get("racing-seq")
        .map(|v| v.to_str().expect("ascii").parse().expect("a number"));
    let body = res.bytes().await.expect("body").to_vec();
    Answer {
        status,
        etag,
        seq,
        cache,
        body,
    }
}

/// A change feed page's `next` as a `since`: a sequence, or a place inside a sequence's
/// changes; `None` at the end.
fn cursor(page: &Value) -> Option<String> {
    match &page["next"] {
        Value::Null => None,
        Value::Number(seq) => Some(seq.to_string()),
        Value::String(inside) => Some(inside.clone()),
        other => panic!("next is {other}"),
    }
}

/// `path` with one more query parameter.
fn with(path: &str, param: &str) -> String {
    let joint = if path.contains('?') { '&' } else { '?' };
    format!("{path}{joint}{param}")
}

fn seqs(frames: &[Value]) -> Vec<u64> {
    frames
        .iter()
        .filter(|f| f["type"] == "odds")
        .map(|f| f["seq"].as_u64().expect("seq"))
        .collect()
}

#[tokio::test]
async fn a_client_that_subscribes_at_the_racing_seq_of_its_read_loses_and_repeats_nothing() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    publish(
        &nats,
        &mut app,
        [
            odds(DAY, 1, &[("A1", 3.0), ("B2", 4.0)]),
            odds(DAY, 1, &[("A1", 2.8)]),
            // Later updates of another race: the log moves on past race 1's last.
            odds(DAY, 2, &[("C3", 5.0)]),
            odds(DAY, 2, &[("C3", 5.5)]),
        ],
    )
    .await;
    // A card names race 1's venue: its odds document changes past the latest odds update.
    let card_at = publish(&nats, &mut app, [card(DAY, ST, 1, &["A1", "B2"])]).await;
    let path = format!("/api/v1/odds/{DAY}/1");
    let read = get(&app, &path).await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.json()["venue"], ST);
    let at = read.seq.expect("a Racing-Seq on a document");
    assert_eq!(at, card_at);
    assert!(read.json()["seq"].as_u64().expect("seq") < at);

    // Its 304 carries the same position.
    let again = app
        .client
        .get(format!("{}{path}", app.base))
        .header("X-API-Key", KEY)
        .header("If-None-Match", &read.etag)
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(
        again.headers().get("racing-seq").map(|v| v.as_bytes()),
        Some(at.to_string().as_bytes())
    );

    // A client that subscribes at once gets nothing yet: the read holds it all.
    let mut early = Client::try_connect(&app.base, KEY).await.expect("upgrade");
    early
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1, "since": at}))
        .await;
    assert_eq!(early.barrier().await, Vec::<Value>::new());

    // Moves after the read, before the client subscribes; then one while it does.
    let missed = [
        publish(&nats, &mut app, [odds(DAY, 1, &[("B2", 3.9)])]).await,
        publish(&nats, &mut app, [odds(DAY, 2, &[("C3", 6.0)])]).await,
        publish(&nats, &mut app, [odds(DAY, 1, &[("A1", 2.7)])]).await,
    ];
    let mut client = Client::try_connect(&app.base, KEY).await.expect("upgrade");
    client
        .send(json!({"type": "subscribe", "date": DAY, "race_number": 1, "since": at}))
        .await;
    let during = nats
        .publish(&[envelope(odds(DAY, 1, &[("A1", 2.6)]))])
        .await;
    let mut got = Vec::new();
    while got.last() != Some(&during) {
        let frame = client.next_message().await;
        assert_eq!(frame["type"], "odds", "{frame}");
        got.extend(seqs(&[frame]));
    }
    assert_eq!(got, [missed[0], missed[2], during]);
    let mut live = Vec::new();
    while live.last() != Some(&during) {
        let frame = early.next_message().await;
        assert_eq!(frame["type"], "odds", "{frame}");
        live.extend(seqs(&[frame]));
    }
    assert_eq!(live, [missed[0], missed[2], during]);
}

#[tokio::test]
async fn documents_as_of_a_point_are_what_was_served_then_across_amendments() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let paths = [
        "/api/v1/horses/A1".to_owned(),
        "/api/v1/horses/A1/form".to_owned(),
        "/api/v1/horses/A1/form?limit=1".to_owned(),
        format!("/api/v1/results/{DAY}"),
        format!("/api/v1/results/{DAY}/3"),
        format!("/api/v1/results/{DAY}/3?venue=Happy+Valley"),
        format!("/api/v1/racecards/{DAY}"),
        format!("/api/v1/odds/{DAY}/3"),
    ];
    // Each step, then every document as the service served it once the step was applied.
    let steps: Vec<Vec<Event>> = vec![
        vec![profile("A1", "FIRST NAME")],
        vec![
            card(DAY, ST, 3, &["A1", "B2", "C3"]),
            card(DAY, HV, 3, &["D4"]),
        ],
        vec![scratch(DAY, 3, "C3"), odds(DAY, 3, &[("A1", 3.0)])],
        vec![result(
            DAY,
            ST,
            3,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        )],
        // The result amended: the places swapped.
        vec![result(
            DAY,
            ST,
            3,
            vec![runner(Some(2), "A1"), runner(Some(1), "B2")],
        )],
        vec![
            profile("A1", "RENAMED"),
            result("2026-11-01", ST, 1, vec![runner(Some(4), "A1")]),
        ],
        vec![result(DAY, HV, 3, vec![runner(Some(1), "D4")])],
        vec![retraction(DAY, HV, 3, "wrong venue")],
        vec![odds(DAY, 3, &[("A1", 2.5)])],
    ];
    let mut served = Vec::new();
    for step in steps {
        let at = publish(&nats, &mut app, step).await;
        let mut now = BTreeMap::new();
        for path in &paths {
            let answer = get(&app, path).await;
            now.insert(path.clone(), answer);
        }
        served.push((at, now));
    }
    let checkpoint = app.read_models.load().checkpoint().expect("checkpoint");

    let mut compared = 0;
    for (at, then) in &served {
        for (path, was) in then {
            let past = get(&app, &with(path, &format!("as_of={at}"))).await;
            if was.status == StatusCode::NOT_FOUND {
                assert_eq!(past.status, StatusCode::NOT_FOUND, "{path} as of {at}");
                assert!(
                    past.json()["message"]
                        .as_str()
                        .is_some_and(|m| m.ends_with(&format!("as of {at}"))),
                    "{path} as of {at}: {}",
                    past.json()
                );
                continue;
            }
            assert_eq!(was.status, StatusCode::OK, "{path} at {at}");
            assert_eq!(past.status, StatusCode::OK, "{path} as of {at}");
            assert!(
                past.body == was.body,
                "{path} as of {at}: {} where {} was served",
                String::from_utf8_lossy(&past.body),
                String::from_utf8_lossy(&was.body)
            );
            assert_eq!(past.etag, was.etag, "{path} as of {at}: the ETag of then");
            assert_eq!(past.seq, Some(*at), "{path} as of {at}: Racing-Seq");
            assert_eq!(past.cache, "private, max-age=31536000, immutable");
            // A document's own position answers it again.
            let own = was.seq.expect("Racing-Seq");
            assert!(own <= *at, "{path}: Racing-Seq {own} past {at}");
            let by_own = get(&app, &with(path, &format!("as_of={own}"))).await;
            assert!(by_own.body == was.body, "{path} as of its Racing-Seq {own}");
            compared += 1;
        }
    }
    assert!(compared > 40, "{compared} answers compared");

    // The result as first published, and a form that knew only the first run.
    let (first_at, _) = &served[3];
    let first = get(
        &app,
        &format!("/api/v1/results/{DAY}/3?venue=Sha+Tin&as_of={first_at}"),
    )
    .await;
    assert_eq!(first.json()["runners"][0]["horse_no"], "A1");
    let now = get(&app, &format!("/api/v1/results/{DAY}/3?venue=Sha+Tin")).await;
    assert_eq!(now.json()["runners"][0]["horse_no"], "B2");

    // Before anything: nothing. Past the end of the log (here the checkpoint): a 404
    // that gives the end.
    let before = get(&app, "/api/v1/horses/A1?as_of=0").await;
    assert_eq!(before.status, StatusCode::NOT_FOUND);
    let past_end = get(&app, &format!("/api/v1/horses/A1?as_of={}", checkpoint + 1)).await;
    assert_eq!(past_end.status, StatusCode::NOT_FOUND);
    let message = past_end.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains(&format!("it ends at {checkpoint}")),
        "{message}"
    );
    for bad in ["-1", "01", "x", "1.5", "9223372036854775808", ""] {
        let answer = get(&app, &format!("/api/v1/horses/A1?as_of={bad}")).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "as_of={bad}");
    }
}

/// An answer as of a point is rendered once, on a long reads' thread unless its read is
/// bounded (a profile's or results', on the request's thread); asked again, it is sent
/// from memory, without the hand-over, the same bytes and `ETag`, and stays so after
/// later events amend what it was rendered from: they change nothing of what was so then.
#[tokio::test]
async fn an_answer_as_of_a_point_given_once_is_sent_again_from_memory_unchanged() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let date = |n: i64| format!("2026-11-0{n}");
    let mut at = 0;
    for n in 1..=3 {
        let runners = vec![runner(Some(n + 1), "A1"), runner(Some(1), "B2")];
        at = publish(
            &nats,
            &mut app,
            [
                profile("A1", "FIRST NAME"),
                card(&date(n), ST, 1, &["A1", "B2"]),
                result(&date(n), ST, 1, runners),
            ],
        )
        .await;
    }
    // Each with whether it is rendered on a long reads' thread.
    let asked = [
        (
            "/api/v1/horses/{horse_no}",
            "/api/v1/horses/A1".to_owned(),
            false,
        ),
        (
            "/api/v1/racecards/{date}",
            format!("/api/v1/racecards/{}", date(3)),
            true,
        ),
        (
            "/api/v1/horses/{horse_no}/analysis",
            "/api/v1/horses/A1/analysis".to_owned(),
            true,
        ),
        (
            "/api/v1/results/{date}",
            format!("/api/v1/results/{}", date(3)),
            false,
        ),
    ];
    let mut first = Vec::new();
    for (route, path, apart) in &asked {
        let path = with(path, &format!("as_of={at}"));
        let before = app.long_reads(route).await;
        let answer = get(&app, &path).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        let long = before + u64::from(*apart);
        assert_eq!(app.long_reads(route).await, long, "{path}: apart {apart}");
        first.push((route, path, long, answer));
    }
    // Later events: a new name, the last card declared again with one more runner, and
    // its result amended.
    publish(
        &nats,
        &mut app,
        [
            profile("A1", "RENAMED"),
            card(&date(3), ST, 1, &["A1", "B2", "C3"]),
            result(
                &date(3),
                ST,
                1,
                vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
            ),
        ],
    )
    .await;
    for (route, path, long, was) in &first {
        let again = get(&app, path).await;
        assert_eq!(again.status, StatusCode::OK, "{path}");
        assert!(again.body == was.body, "{path}: the same bytes");
        assert_eq!((&again.etag, again.seq), (&was.etag, was.seq), "{path}");
        assert_eq!(again.cache, "private, max-age=31536000, immutable");
        assert_eq!(
            app.long_reads(route).await,
            *long,
            "{path}: sent from memory"
        );
        // Asked now, the document is another.
        let now = get(&app, path.split('?').next().expect("a path")).await;
        assert_ne!(now.etag, was.etag, "{path}: changed since");
    }
    // Asked for compressed, through the router: from memory all the same.
    let (route, path, long, _) = &first[1];
    assert_eq!(app.gzipped(path).await.status(), StatusCode::OK);
    assert_eq!(app.long_reads(route).await, *long, "{path}: compressed");
    // Another point is rendered again: the card apart, the profile here, each once.
    for (route, path, long, was) in &first[..2] {
        let other = path.replace(&format!("as_of={at}"), &format!("as_of={}", at - 1));
        let answer = get(&app, &other).await;
        assert_eq!(answer.status, StatusCode::OK, "{other}");
        assert_eq!(answer.seq, was.seq.map(|s| s - 1), "{other}");
        let rendered = long + u64::from(route.starts_with("/api/v1/racecards"));
        assert_eq!(app.long_reads(route).await, rendered, "{other}");
    }
}

#[tokio::test]
async fn a_races_odds_history_is_every_move_as_it_went_live_a_page_at_a_time() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    let mut client = Client::try_connect(&app.base, KEY).await.expect("upgrade");
    client.send(json!({"type": "subscribe", "date": DAY})).await;
    client.barrier().await;
    let moves = [
        odds_at(DAY, ST, 1, &[("A1", 3.0), ("B2", 4.0)]),
        odds_at(DAY, HV, 1, &[("H1", 9.0)]),
        odds(DAY, 1, &[("A1", 2.9)]),
        odds_at(DAY, ST, 2, &[("C3", 5.0)]),
        odds_at(DAY, ST, 1, &[("B2", 3.5)]),
        odds_at(DAY, HV, 1, &[("H1", 8.5)]),
        odds_at(DAY, ST, 1, &[("A1", 2.7)]),
    ];
    let last = publish(&nats, &mut app, moves).await;
    let mut live = Vec::new();
    while live.last().map(|f: &Value| f["seq"].as_u64()) != Some(Some(last)) {
        let frame = client.next_message().await;
        if frame["type"] == "odds" {
            live.push(frame);
        }
    }
    // A history move is the live frame without its type, date and race number.
    let as_history = |f: &Value| {
        json!({"seq": f["seq"], "published_at": f["published_at"],
               "occurred_at": f["occurred_at"], "venue": f["venue"], "odds": f["odds"],
               "market": f["market"]})
    };
    let of_race_1: Vec<Value> = live
        .iter()
        .filter(|f| f["race_number"] == 1)
        .map(as_history)
        .collect();
    assert_eq!(of_race_1.len(), 6);

    // Every move of race 1, two a page.
    let follow = |query: &'static str| {
        let app = &app;
        async move {
            let mut pages = Vec::new();
            let mut since = 0;
            loop {
                let path = format!("/api/v1/odds/{DAY}/1/history?limit=2&since={since}{query}");
                let answer = get(app, &path).await;
                assert_eq!(answer.status, StatusCode::OK, "{path}");
                assert!(answer.seq.is_some(), "{path}: Racing-Seq");
                let page = answer.json();
                assert_eq!(page["date"], DAY);
                assert_eq!(page["race_number"], 1);
                let moves = page["moves"].as_array().expect("moves").clone();
                assert!(moves.len() <= 2, "{path}");
                pages.extend(moves);
                match page["next"].as_u64() {
                    Some(next) => since = next,
                    None => return pages,
                }
            }
        }
    };
    assert_eq!(follow("").await, of_race_1);
    // One venue's: its own moves and those given for every venue.
    let sha_tin: Vec<Value> = of_race_1
        .iter()
        .filter(|m| m["venue"] == ST || m["venue"].is_null())
        .cloned()
        .collect();
    assert_eq!(follow("&venue=Sha+Tin").await, sha_tin);

    // One page of everything; past the end, an empty page.
    let (status, all) = app.get(&format!("/api/v1/odds/{DAY}/1/history")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(all["moves"].as_array().map(Vec::len), Some(6));
    assert!(all["next"].is_null());
    let (status, end) = app
        .get(&format!("/api/v1/odds/{DAY}/1/history?since={last}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(end["moves"], json!([]));

    let (status, _) = app.get(&format!("/api/v1/odds/{DAY}/9/history")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .get(&format!("/api/v1/odds/{DAY}/1/history?venue=Nowhere"))
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a venue's race has the every-venue moves"
    );
    for bad in [
        "limit=0",
        "limit=10001",
        "limit=01",
        "since=-1",
        "since=x",
        "as_of=1",
    ] {
        let (status, body) = app
            .get(&format!("/api/v1/odds/{DAY}/1/history?{bad}"))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}

#[tokio::test]
async fn an_odds_move_published_late_keeps_the_time_it_happened_live_in_history_and_replayed() {
    const PAST: &str = "2026-11-18";
    const HAPPENED: &str = "2026-11-18T13:29:00+08:00";
    // Served as every instant: in UTC, to the millisecond.
    const SERVED: &str = "2026-11-18T05:29:00.000Z";
    let (nats, mut app, _dir) = service_with(&[]).await;
    let mut client = Client::try_connect(&app.base, KEY).await.expect("upgrade");
    client
        .send(json!({"type": "subscribe", "date": PAST}))
        .await;
    client.barrier().await;
    // A past race's move, published now, as a feeder that records a race after it.
    let late = Envelope::new(odds_at(PAST, ST, 1, &[("A1", 3.5)]), HAPPENED);
    let seq = nats.publish(&[late]).await;
    app.projected(seq).await;

    let live = loop {
        let frame = client.next_message().await;
        if frame["type"] == "odds" {
            break frame;
        }
    };
    assert_eq!(live["seq"], seq);
    assert_eq!(live["occurred_at"], SERVED, "{live}");
    // When JetStream stored it, by NATS's clock (not the test's, which may differ:
    // `scripts/test-at` moves the test's and the service's, not nats-server's).
    let published: jiff::Timestamp = live["published_at"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("an RFC 3339 published_at");
    let stored = nats.published_times("RACING", seq).await[seq as usize - 1];
    // To the millisecond, as every instant is served.
    assert_eq!(
        published.as_nanosecond(),
        stored - stored.rem_euclid(1_000_000),
        "stored now: {live}"
    );

    let (status, history) = app.get(&format!("/api/v1/odds/{PAST}/1/history")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        history["moves"],
        json!([{"seq": seq, "published_at": live["published_at"], "occurred_at": SERVED,
                "venue": ST, "odds": [{"horse_no": "A1", "win_odds": 3.5}],
                "market": {"win_book_pct": 28.57, "favourites": ["A1"]}}])
    );

    client
        .send(json!({"type": "replay", "date": PAST, "race_number": 1, "speed": 100}))
        .await;
    let replayed = loop {
        let frame = client.next_message().await;
        if frame["type"] == "odds" && frame["replay"] == true {
            break frame;
        }
    };
    assert_eq!(replayed["occurred_at"], SERVED);
    assert_eq!(replayed["published_at"], live["published_at"]);
}

#[tokio::test]
async fn the_change_feed_followed_from_zero_names_every_document_as_it_stands() {
    let (nats, mut app, _dir) = service_with(&[]).await;
    publish(
        &nats,
        &mut app,
        [
            profile("A1", "FIRST"),
            card(DAY, ST, 3, &["A1", "B2", "C3"]),
            card(DAY, HV, 3, &["D4"]),
            odds_at(DAY, ST, 3, &[("A1", 3.0)]),
        ],
    )
    .await;
    publish(
        &nats,
        &mut app,
        [
            scratch(DAY, 3, "C3"),
            result(DAY, ST, 3, vec![runner(Some(1), "A1")]),
            result(DAY, HV, 3, vec![runner(Some(1), "D4")]),
        ],
    )
    .await;
    publish(
        &nats,
        &mut app,
        [
            retraction(DAY, HV, 3, "wrong venue"),
            result("2026-11-01", ST, 1, vec![runner(Some(2), "A1")]),
            profile("A1", "SECOND"),
        ],
    )
    .await;

    // Follow the feed from 0, three changes a page, keeping each path's answer as of its
    // change.
    let mut copy: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    let (mut since, mut last_seq, mut pages) = ("0".to_owned(), 0, 0);
    loop {
        let answer = get(&app, &format!("/api/v1/changes?since={since}&limit=3")).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert!(answer.seq.is_some(), "Racing-Seq");
        let page = answer.json();
        pages += 1;
        for change in page["changes"].as_array().expect("changes") {
            let seq = change["seq"].as_u64().expect("seq");
            assert!(seq > 0 && seq >= last_seq, "in seq order: {change}");
            last_seq = seq;
            let path = change["path"].as_str().expect("path").to_owned();
            let then = get(&app, &with(&path, &format!("as_of={seq}"))).await;
            let doc = match then.status {
                StatusCode::OK => Some(then.body),
                StatusCode::NOT_FOUND => None,
                other => panic!("{path} as of {seq}: {other}"),
            };
            copy.insert(path, doc);
        }
        match cursor(&page) {
            Some(next) => since = next,
            None => break,
        }
    }
    assert!(pages > 2, "{pages} pages");

    // The copy holds every document the store holds, each as it now answers.
    let held = copy.values().filter(|d| d.is_some()).count();
    let stored = app.read_models.load().documents().count();
    assert_eq!(held, stored, "the feed names every document");
    for (path, doc) in &copy {
        let now = get(&app, path).await;
        match doc {
            Some(doc) => {
                assert_eq!(now.status, StatusCode::OK, "{path}");
                assert!(now.body == *doc, "{path}: the copy is behind");
            }
            None => assert_eq!(now.status, StatusCode::NOT_FOUND, "{path} went"),
        }
    }
    assert!(copy.contains_key(&format!("/api/v1/results/{DAY}/3?venue=Happy+Valley")));

    // At the end: an empty page with nothing next.
    let (status, end) = app.get(&format!("/api/v1/changes?since={last_seq}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(end, json!({"changes": [], "next": null}));
    for bad in ["limit=0", "limit=10001", "since=-1", "since=01", "venue=x"] {
        let (status, body) = app.get(&format!("/api/v1/changes?{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}

#[tokio::test]
async fn a_change_feed_page_holds_at_most_limit_changes_and_goes_on_inside_a_batch() {
    // Replayed at start-up: the documents of these events change in few batches, many a
    // batch (a result changes the date's results, the race and each runner's form).
    let events = [
        card(DAY, ST, 1, &["A1", "B2", "C3", "D4"]),
        result(
            DAY,
            ST,
            1,
            ["A1", "B2", "C3", "D4"]
                .iter()
                .enumerate()
                .map(|(i, h)| runner(Some(i as i64 + 1), h))
                .collect(),
        ),
        profile("A1", "FIRST"),
        odds_at(DAY, ST, 2, &[("A1", 3.0)]),
    ]
    .map(envelope);
    let (_nats, app, _dir) = service_with(&events).await;

    let whole = get(&app, "/api/v1/changes?since=0&limit=10000")
        .await
        .json();
    let whole = whole["changes"].as_array().expect("changes").clone();
    assert!(whole.len() > 4, "{whole:?}");

    // One change a page, each page's `next` where the following one starts: every change
    // once, in order, however the batches fell.
    let (mut since, mut followed, mut inside) = ("0".to_owned(), Vec::new(), 0);
    for _ in 0..=whole.len() {
        let page = get(&app, &format!("/api/v1/changes?since={since}&limit=1")).await;
        assert_eq!(page.status, StatusCode::OK);
        let page = page.json();
        let changes = page["changes"].as_array().expect("changes");
        assert_eq!(changes.len(), 1, "since {since}: {page}");
        followed.extend(changes.iter().cloned());
        inside += usize::from(page["next"].is_string());
        match cursor(&page) {
            Some(next) => since = next,
            None => break,
        }
    }
    assert_eq!(followed, whole, "every change once, in order");
    assert!(inside > 0, "some page ended inside a batch");
    for bad in [
        "since=1.",
        "since=.1",
        "since=1.0",
        "since=1.01",
        "since=1.x",
        "since=1.2.3",
    ] {
        let (status, body) = app.get(&format!("/api/v1/changes?{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}
