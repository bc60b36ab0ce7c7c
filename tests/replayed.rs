//! A service that replays the log into an empty store answers exactly as one that applied
//! each event as it arrived: every document with its `Racing-Seq` and `ETag`, as of
//! several positions too, every page of the change feed, the odds history and the
//! race-day journal. A guard for every loader of the read side: the bulk load of a replay,
//! and whatever builds a store in bulk after it.

use futures::StreamExt as _;
use racing_events::samples::{envelope, odds_at, retraction, scratch_at, status};
use racing_events::{Event, RaceStatus};
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{App, Nats};

/// What a GET answers, for comparing two services: status, the headers that carry a
/// position or a version, and the body.
pub(crate) async fn answer(app: &App, path: &str) -> String {
    let res = app.response(path).await;
    let status = res.status();
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    let (seq, etag) = (header("racing-seq"), header("etag"));
    let body = res.text().await.expect("body");
    format!("{path} -> {status} seq {seq} etag {etag}: {body}")
}

/// Every page of the change feed from `since`, `limit` rows a page.
pub(crate) async fn feed(app: &App, since: u64, limit: usize) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut since = Value::from(since);
    loop {
        let at = match &since {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let (status, page) = app
            .get(&format!("/api/v1/changes?since={at}&limit={limit}"))
            .await;
        assert!(status.is_success(), "{status}: {page}");
        let next = page["next"].clone();
        pages.push(page);
        if next.is_null() || pages.len() > 5_000 {
            return pages;
        }
        since = next;
    }
}

/// A log to compare two services on: a week of the demo's season, then a day's
/// statuses, prices, a retraction, a priced runner scratched and prices after them; more
/// events than one batch, so that a replay of it is a bulk load.
pub(crate) struct RaceWeek {
    pub events: Vec<racing_events::Envelope>,
    /// The date and venue the log's tail is about.
    pub date: String,
    pub venue: String,
}

pub(crate) fn race_week() -> RaceWeek {
    let hong_kong = jiff::tz::TimeZone::get("Asia/Hong_Kong").expect("a zone");
    let today = jiff::Timestamp::now().to_zoned(hong_kong).date();
    let season = racing_demo::season(7, today);
    let mut events = season.events.clone();
    let (date, venue, horses) = events
        .iter()
        .rev()
        .find_map(|e| match &e.event {
            Event::RaceCardDeclared(c) => Some((
                c.date.clone(),
                c.venue.clone(),
                c.runners
                    .iter()
                    .map(|r| r.horse_no.clone())
                    .collect::<Vec<_>>(),
            )),
            _ => None,
        })
        .expect("a card");
    let (a, b) = (horses[0].as_str(), horses[1].as_str());
    for race in 1..=3 {
        events.push(envelope(status(&date, None, race, RaceStatus::Open, None)));
        for price in [3.5, 3.1, 2.9] {
            events.push(envelope(odds_at(
                &date,
                &venue,
                race,
                &[(a, price), (b, price * 2.0)],
            )));
        }
    }
    events.push(envelope(retraction(&date, &venue, 2, "declared in error")));
    // A runner priced, then scratched: its race's market changes at the scratching.
    events.push(envelope(scratch_at(&date, &venue, 3, b)));
    events.push(envelope(odds_at(&date, &venue, 3, &[(a, 2.5)])));
    events.push(envelope(status(&date, None, 3, RaceStatus::Off, None)));
    assert!(
        events.len() > 4096,
        "{} events: a replay of more than one batch",
        events.len()
    );
    RaceWeek {
        events,
        date,
        venue,
    }
}

/// Asserts that `got` answers as `want` does, both having projected the log up to
/// `last`: the change feed, whole and from several positions in pages of several sizes;
/// every document, now and as of several positions; the odds history and the race-day
/// journal of `week`'s tail.
pub(crate) async fn assert_answers_alike(want: &App, got: &App, last: u64, week: &RaceWeek) {
    let (date, venue) = (&week.date, &week.venue);
    let whole = feed(want, 0, 10_000).await;
    assert_eq!(feed(got, 0, 10_000).await, whole, "the whole change feed");
    let mut paths = std::collections::BTreeSet::new();
    let mut positions = std::collections::BTreeSet::new();
    for page in &whole {
        for change in page["changes"].as_array().expect("changes") {
            paths.insert(change["path"].as_str().expect("a path").to_owned());
            positions.insert(change["seq"].as_u64().expect("a seq"));
        }
    }
    assert!(
        positions.len() > 1000,
        "changes at {} positions",
        positions.len()
    );
    for since in [1, last / 3, last / 2, last - 40, last - 5, last] {
        for limit in [7, 1_000] {
            assert_eq!(
                feed(got, since, limit).await,
                feed(want, since, limit).await,
                "the change feed after {since}, {limit} a page"
            );
        }
    }

    // Every document, now and as of several positions: asked a few at a time, as the
    // requests wait mostly on their round trips.
    let points = [last / 4, last / 2, last - 30, last - 3];
    let asks = paths.iter().flat_map(|path| {
        let join = if path.contains('?') { '&' } else { '?' };
        std::iter::once(path.clone())
            .chain(points.iter().map(move |p| format!("{path}{join}as_of={p}")))
    });
    let differ: Vec<String> = futures::stream::iter(asks)
        .map(|ask| async move { (answer(want, &ask).await, answer(got, &ask).await) })
        .buffered(8)
        .filter_map(|(w, g)| async move { (w != g).then(|| format!("want: {w}\ngot:  {g}")) })
        .collect()
        .await;
    assert!(
        differ.is_empty(),
        "{} answers differ, first:\n{}",
        differ.len(),
        differ[0]
    );

    // The odds history and the race-day journal of the day the tail of the log is about.
    for race in 1..=3 {
        let venue = venue.replace(' ', "+");
        let path = format!("/api/v1/odds/{date}/{race}/history?venue={venue}&limit=1000");
        assert_eq!(answer(got, &path).await, answer(want, &path).await);
    }
    let journal = |app: &App| -> Vec<String> {
        app.store()
            .race_day(date, 0, 100_000)
            .expect("race day")
            .into_iter()
            .map(|e| format!("{} {} {}", e.seq, e.race_number, e.frame))
            .collect()
    };
    assert_eq!(journal(got), journal(want), "the race-day journal");
}

#[tokio::test]
async fn a_replayed_store_answers_as_one_that_applied_each_event_live() {
    let nats = Nats::start().await;
    let live_dir = TempDir::new().expect("temp dir");
    let mut live = App::start(&nats, live_dir.path()).await;

    // Published as a feeder does, one after another, while the live service applies
    // each as it arrives.
    let week = race_week();
    let last = nats.publish(&week.events).await;
    live.projected(last).await;

    // Another service, started over the whole log with an empty store.
    let replay_dir = TempDir::new().expect("temp dir");
    let mut replayed = App::start(&nats, replay_dir.path()).await;
    replayed.projected(last).await;

    assert_answers_alike(&live, &replayed, last, &week).await;

    replayed.stop().await;
    live.stop().await;
}
