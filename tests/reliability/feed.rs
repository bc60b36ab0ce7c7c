//! Logs for the reliability tests, as raw messages ready to publish: a demo season with
//! amended results, re-sent duplicates, live odds and refused messages mixed in, and a
//! generator of invalid events of every kind the feed contract refuses.

use std::collections::BTreeMap;

use async_nats::jetstream::{self, context::PublishAckFuture};
use futures::stream::{FuturesOrdered, StreamExt};
use racing_demo::{season, Simulator};
use racing_events::{Envelope, Event, RaceResult};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// The last day of every generated season.
pub const TODAY: &str = "2026-11-21";

/// A source time for generated events; the service keeps it, never interprets it.
const OCCURRED_AT: &str = "2026-11-21T12:00:00Z";

/// Publishes in flight at once.
const IN_FLIGHT: usize = 256;

/// One message as a feeder would publish it.
#[derive(Debug, Clone)]
pub struct Message {
    /// Where it is published.
    pub subject: String,
    /// Exactly the bytes sent.
    pub payload: Vec<u8>,
    /// `Nats-Msg-Id`, if any.
    pub msg_id: Option<String>,
}

impl Message {
    /// An event as a well-behaved feeder sends it: `Nats-Msg-Id` = `event_id`.
    pub fn event(e: &Envelope) -> Message {
        Message {
            subject: e.subject(),
            payload: e.to_json().into_bytes(),
            msg_id: Some(e.event_id.to_string()),
        }
    }
}

/// A generated log and what it holds.
pub struct Log {
    /// In publishing order.
    pub messages: Vec<Message>,
    /// Results published again, changed, with a new `event_id`.
    pub amendments: u64,
    /// Events sent again with their `event_id` but another `Nats-Msg-Id`: stored by
    /// JetStream, ignored by the service.
    pub duplicates: u64,
    /// Messages the service must refuse (dead letters).
    pub invalid: u64,
}

/// A demo season ending on [`TODAY`], then today's meeting run live (odds moves and
/// results), with amended results, duplicates and refused messages inserted at random
/// later positions. The same seed gives the same log, byte for byte.
pub fn amended_season(seed: u64) -> Log {
    let today = TODAY.parse().expect("a date");
    let feed = season(seed, today);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut base: Vec<Envelope> = feed.events.clone();
    let mut live = Simulator::new(&feed, seed);
    for race in 0..live.races() {
        for _ in 0..30 {
            base.extend(live.tick(race, OCCURRED_AT));
        }
        base.extend(live.result(race, OCCURRED_AT));
        // The stewards' amendment: the same race run again from the same prices.
        if race % 2 == 0 {
            base.extend(live.result(race, OCCURRED_AT));
        }
    }

    let n = base.len();
    let mut inserts: BTreeMap<usize, Vec<Message>> = BTreeMap::new();
    let mut log = Log {
        messages: Vec::with_capacity(n + n / 4),
        amendments: 0,
        duplicates: 0,
        invalid: 0,
    };
    for (i, e) in base.iter().enumerate() {
        let later = rng.random_range(i + 1..=n);
        if let Event::RaceResultPublished(r) = &e.event {
            if rng.random_bool(0.3) {
                let amended = envelope(&mut rng, Event::RaceResultPublished(amend(r)));
                inserts
                    .entry(later)
                    .or_default()
                    .push(Message::event(&amended));
                log.amendments += 1;
            }
        }
        if rng.random_bool(0.08) {
            // Re-sent later under another Nats-Msg-Id, sometimes with other content: the
            // service keeps the first it applied.
            let mut again = e.clone();
            if rng.random_bool(0.5) {
                if let Event::HorseProfileUpdated(p) = &mut again.event {
                    p.horse_name = format!("{} II", p.horse_name);
                }
            }
            let mut m = Message::event(&again);
            m.msg_id = Some(format!("resent-{i}"));
            inserts
                .entry(rng.random_range(i + 1..=n))
                .or_default()
                .push(m);
            log.duplicates += 1;
        }
        if rng.random_bool(0.015) {
            inserts
                .entry(rng.random_range(i + 1..=n))
                .or_default()
                .push(invalid(&mut rng, e, log.invalid as usize).0);
            log.invalid += 1;
        }
    }
    for (i, e) in base.iter().enumerate() {
        log.messages.push(Message::event(e));
        if let Some(more) = inserts.remove(&(i + 1)) {
            log.messages.extend(more);
        }
    }
    log
}

/// An amended result: other going, the first runner's price corrected, and the last
/// runner dropped (when that leaves a valid race), so its form entry must go.
fn amend(r: &RaceResult) -> RaceResult {
    let mut a = r.clone();
    a.going = if a.going == "YIELDING" {
        "GOOD TO FIRM".into()
    } else {
        "YIELDING".into()
    };
    if a.runners.len() > 2 && a.runners.last().is_some_and(|l| !l.dead_heat) {
        a.runners.pop();
    }
    if let Some(first) = a.runners.first_mut() {
        first.win_odds = Some(first.win_odds.unwrap_or(1.0) + 1.0);
    }
    a
}

/// Wraps an event with an `event_id` drawn from `rng`, so a seed gives the same ids.
pub fn envelope(rng: &mut ChaCha8Rng, event: Event) -> Envelope {
    Envelope {
        event_id: uuid::Builder::from_random_bytes(rng.random()).into_uuid(),
        occurred_at: OCCURRED_AT.into(),
        event,
    }
}

/// The kinds of invalid message [`invalid`] makes, in turn.
pub const INVALID_KINDS: usize = 24;

/// The `k`-th kind (modulo [`INVALID_KINDS`]) of invalid message made from the valid
/// event `e`, with a fragment its dead letter's reason must contain (`None`: any reason).
pub fn invalid(rng: &mut ChaCha8Rng, e: &Envelope, k: usize) -> (Message, Option<&'static str>) {
    let good = Message::event(e);
    let mut v: Value = serde_json::from_slice(&good.payload).expect("an envelope is JSON");
    let subject = good.subject.clone();
    let raw = |payload: Vec<u8>, subject: String, reason| {
        (
            Message {
                subject,
                payload,
                msg_id: None,
            },
            reason,
        )
    };
    let mutated =
        |v: &Value, subject: String, reason| raw(v.to_string().into_bytes(), subject, reason);
    let cut = rng.random_range(1..good.payload.len().max(2));
    match k % INVALID_KINDS {
        // Malformed JSON.
        0 => raw(good.payload[..cut].to_vec(), subject, Some("envelope")),
        1 => raw(b"not json at all".to_vec(), subject, Some("envelope")),
        2 => raw(Vec::new(), subject, Some("envelope")),
        3 => {
            let mut bytes = good.payload.clone();
            bytes[cut] = 0xff;
            raw(bytes, subject, None)
        }
        4 => raw(b"[1,2,3]".to_vec(), subject, Some("envelope")),
        5 => raw(b"\"a string\"".to_vec(), subject, Some("envelope")),
        // Envelope fields missing or wrong.
        6 => {
            v.as_object_mut().map(|o| o.remove("event_id"));
            mutated(&v, subject, Some("envelope"))
        }
        7 => {
            v["event_id"] = json!("not-a-uuid");
            mutated(&v, subject, Some("event_id"))
        }
        8 => {
            v["occurred_at"] = json!("yesterday");
            mutated(&v, subject, Some("occurred_at"))
        }
        9 => {
            v["type"] = json!(format!("HorseSold{k}"));
            mutated(&v, subject, Some("unknown event type"))
        }
        10 => {
            v.as_object_mut().map(|o| o.remove("data"));
            mutated(&v, subject, Some("envelope"))
        }
        11 => {
            v["data"] = json!(42);
            mutated(&v, subject, Some("data"))
        }
        // Body fields missing or of the wrong type.
        12 => {
            // Any field but an optional one: odds and scratchings may leave out `venue`.
            let optional = |key: &str| {
                key == "venue"
                    && matches!(e.event, Event::OddsUpdated(_) | Event::RunnerScratched(_))
            };
            let field = v["data"]
                .as_object()
                .map(|o| {
                    o.keys()
                        .filter(|key| !optional(key))
                        .cloned()
                        .collect::<Vec<_>>()
                })
                .and_then(|keys| keys.get(k % keys.len().max(1)).cloned())
                .unwrap_or_default();
            v["data"].as_object_mut().map(|o| o.remove(&field));
            mutated(&v, subject, Some("data"))
        }
        13 => {
            if let Some((_, field)) = v["data"].as_object_mut().and_then(|o| o.iter_mut().next()) {
                *field = json!({"nested": true});
            }
            mutated(&v, subject, Some("data"))
        }
        // Values outside the contract.
        14 => {
            let date = [
                "2026-02-30",
                "2025-02-29",
                "2026-13-01",
                "2026-1-01",
                "26-11-21",
            ][k % 5];
            out_of_contract(e, |e| with_date(e, date))
        }
        15 => out_of_contract(e, |e| with_race_number(e, 100 + (k as i64 % 50))),
        16 => out_of_contract(e, |e| with_race_number(e, -(k as i64 % 5))),
        17 => out_of_contract(e, |e| with_horse_no(e, "no spaces allowed")),
        18 => out_of_contract(e, with_bad_number),
        19 => out_of_contract(e, with_duplicate_runner),
        // Subjects that do not repeat the payload.
        20 => raw(
            good.payload.clone(),
            format!("{subject}.extra"),
            Some("does not match"),
        ),
        21 => raw(
            good.payload.clone(),
            "racing.horses.SOMEONE_ELSE".into(),
            Some("does not match"),
        ),
        22 => raw(
            good.payload.clone(),
            "racing.odds.2026-11-21.7".into(),
            Some("does not match"),
        ),
        // Valid JSON padded to near the 1 MiB limit, but of an unknown type.
        _ => {
            v["type"] = json!("HorseRetired");
            v["padding"] = json!("x".repeat(1000 * 1000));
            mutated(&v, subject, Some("unknown event type"))
        }
    }
}

/// A copy of `e` changed by `change`, which says which rule the change breaks.
fn out_of_contract(
    e: &Envelope,
    change: impl FnOnce(&mut Event) -> &'static str,
) -> (Message, Option<&'static str>) {
    let mut changed = e.clone();
    let reason = change(&mut changed.event);
    let m = Message {
        // The original's subject: a bad value may not make a valid subject token.
        subject: e.subject(),
        payload: changed.to_json().into_bytes(),
        // Not the original's id, which JetStream would drop as a duplicate.
        msg_id: None,
    };
    (m, Some(reason))
}

fn with_date(e: &mut Event, date: &str) -> &'static str {
    match e {
        Event::RaceCardDeclared(c) => c.date = date.into(),
        Event::RunnerScratched(s) => s.date = date.into(),
        Event::RaceResultPublished(r) => r.date = date.into(),
        Event::OddsUpdated(o) => o.date = date.into(),
        Event::RaceRetracted(r) => r.date = date.into(),
        Event::RaceStatusChanged(s) => s.date = date.into(),
        Event::HorseProfileUpdated(p) => {
            p.age = 41;
            return "age";
        }
    }
    "calendar date"
}

fn with_race_number(e: &mut Event, n: i64) -> &'static str {
    match e {
        Event::RaceCardDeclared(c) => c.race_number = n,
        Event::RunnerScratched(s) => s.race_number = n,
        Event::RaceResultPublished(r) => r.race_number = n,
        Event::OddsUpdated(o) => o.race_number = n,
        Event::RaceRetracted(r) => r.race_number = n,
        Event::RaceStatusChanged(s) => s.race_number = n,
        // A profile has no race: an impossible record instead.
        Event::HorseProfileUpdated(p) => {
            p.wins = p.starts + 1;
            return "wins";
        }
    }
    "race_number"
}

fn with_horse_no(e: &mut Event, h: &str) -> &'static str {
    match e {
        Event::RaceCardDeclared(c) => c.runners.iter_mut().for_each(|r| r.horse_no = h.into()),
        Event::RunnerScratched(s) => s.horse_no = h.into(),
        Event::RaceResultPublished(r) => r.runners.iter_mut().for_each(|r| r.horse_no = h.into()),
        Event::OddsUpdated(o) => o.odds.iter_mut().for_each(|r| r.horse_no = h.into()),
        Event::HorseProfileUpdated(p) => p.horse_no = h.into(),
        // A retraction names no horse: a reason with nothing in it instead.
        Event::RaceRetracted(r) => {
            r.reason = " ".into();
            return "reason";
        }
        // Nor does a status: one that is none of the contract's.
        Event::RaceStatusChanged(s) => {
            s.status = "running".into();
            return "status";
        }
    }
    "horse_no"
}

fn with_bad_number(e: &mut Event) -> &'static str {
    match e {
        Event::RaceResultPublished(r) => {
            r.runners.iter_mut().for_each(|r| r.win_odds = Some(0.5));
            "win_odds"
        }
        Event::OddsUpdated(o) => {
            o.odds
                .iter_mut()
                .for_each(|r| r.win_odds = Some(f64::MIN_POSITIVE));
            "win_odds"
        }
        Event::RaceCardDeclared(c) => {
            c.runners.iter_mut().for_each(|r| r.weight = 10);
            "weight"
        }
        Event::RunnerScratched(s) => {
            s.race_number = 0;
            "race_number"
        }
        Event::RaceRetracted(r) => {
            r.reason = "x".repeat(201);
            "reason"
        }
        Event::RaceStatusChanged(s) => {
            s.reason = Some("x".repeat(201));
            "reason"
        }
        Event::HorseProfileUpdated(p) => {
            p.total_stakes = -1;
            "total_stakes"
        }
    }
}

fn with_duplicate_runner(e: &mut Event) -> &'static str {
    match e {
        Event::RaceCardDeclared(c) => {
            let first = c.runners[0].clone();
            c.runners.push(first);
        }
        Event::RaceResultPublished(r) => {
            let first = r.runners[0].clone();
            r.runners.push(first);
        }
        Event::OddsUpdated(o) => {
            let first = o.odds[0].clone();
            o.odds.push(first);
        }
        Event::RunnerScratched(s) => {
            s.date = "2026-04-31".into();
            return "calendar date";
        }
        Event::RaceRetracted(r) => {
            r.venue = String::new();
            return "venue";
        }
        Event::RaceStatusChanged(s) => {
            s.venue = Some(String::new());
            return "venue";
        }
        Event::HorseProfileUpdated(p) => {
            p.places = p.starts + 1;
            return "places";
        }
    }
    "more than once"
}

/// Publishes `messages` in order, with many acknowledgements in flight; returns, for
/// each, the stream sequence JetStream stored it at, or why it was not stored.
pub async fn publish_all(
    js: &jetstream::Context,
    messages: &[Message],
) -> Vec<Result<u64, String>> {
    let mut out = Vec::with_capacity(messages.len());
    let mut in_flight = FuturesOrdered::new();
    for m in messages {
        // Sent here, in order; only the acknowledgements are awaited out of line.
        let sent = send(js, m).await;
        in_flight.push_back(async move {
            match sent {
                Ok(ack) => settle(ack.await),
                Err(e) => Err(e),
            }
        });
        while in_flight.len() >= IN_FLIGHT {
            if let Some(r) = in_flight.next().await {
                out.push(r);
            }
        }
    }
    while let Some(r) = in_flight.next().await {
        out.push(r);
    }
    out
}

/// Publishes one message and waits for JetStream's acknowledgement.
pub async fn publish(js: &jetstream::Context, m: &Message) -> Result<u64, String> {
    settle(send(js, m).await?.await)
}

async fn send(js: &jetstream::Context, m: &Message) -> Result<PublishAckFuture, String> {
    let mut headers = async_nats::HeaderMap::new();
    if let Some(id) = &m.msg_id {
        headers.insert(async_nats::header::NATS_MESSAGE_ID, id.as_str());
    }
    js.publish_with_headers(m.subject.clone(), headers, m.payload.clone().into())
        .await
        .map_err(|e| format!("publish: {e}"))
}

fn settle(
    ack: Result<jetstream::publish::PublishAck, jetstream::context::PublishError>,
) -> Result<u64, String> {
    let ack = ack.map_err(|e| format!("refused: {e}"))?;
    if ack.duplicate {
        return Err(format!("duplicate of sequence {}", ack.sequence));
    }
    Ok(ack.sequence)
}

/// `n` valid events of every type, each naming its own horse, race or date so that each
/// leaves a document of its own: profiles, cards, results and odds.
pub fn valid_events(rng: &mut ChaCha8Rng, n: usize) -> Vec<Envelope> {
    use racing_events::samples::{card, odds, profile, result, runner};
    let venues = ["Sha Tin", "Happy Valley"];
    (0..n)
        .map(|i| {
            // A date per group of 40 events, from 2025-01-01 on.
            let date = jiff::civil::date(2025, 1, 1)
                .checked_add(jiff::Span::new().days(i64::try_from(i / 40).unwrap_or(0)))
                .expect("a date")
                .to_string();
            let race = i64::try_from(i % 40 / 4 + 1).unwrap_or(1);
            let venue = venues[i / 40 % 2];
            let horse = format!("V{i:04}");
            let event = match i % 4 {
                0 => profile(&horse, &format!("VALID {i}")),
                1 => card(&date, venue, race, &[&horse, "C1", "C2"]),
                2 => result(
                    &date,
                    venue,
                    race,
                    vec![
                        runner(Some(1), &horse),
                        runner(Some(2), "R2"),
                        runner(None, "R3"),
                    ],
                ),
                _ => odds(
                    &date,
                    race,
                    &[(&horse, 1.5 + f64::from(rng.random_range(0..100u8)))],
                ),
            };
            envelope(rng, event)
        })
        .collect()
}

/// The API path of a document a valid event from [`valid_events`] leaves behind.
pub fn document_path(e: &Envelope) -> String {
    let venue = |v: &str| v.replace(' ', "%20");
    match &e.event {
        Event::HorseProfileUpdated(p) => format!("/api/v1/horses/{}", p.horse_no),
        Event::RaceCardDeclared(c) => {
            format!("/api/v1/racecards/{}?venue={}", c.date, venue(&c.venue))
        }
        Event::RaceResultPublished(r) => format!(
            "/api/v1/results/{}/{}?venue={}",
            r.date,
            r.race_number,
            venue(&r.venue)
        ),
        Event::OddsUpdated(o) => format!("/api/v1/odds/{}/{}", o.date, o.race_number),
        Event::RunnerScratched(s) => format!("/api/v1/racecards/{}", s.date),
        // Leaves nothing behind: the path of what it removed.
        Event::RaceRetracted(r) => format!(
            "/api/v1/results/{}/{}?venue={}",
            r.date,
            r.race_number,
            venue(&r.venue)
        ),
        Event::RaceStatusChanged(s) => format!("/api/v1/odds/{}/{}", s.date, s.race_number),
    }
}
