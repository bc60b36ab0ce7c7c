//! One endpoint's deliveries, in stream order: the next race-day event of its topics after
//! its position, sent until the receiver answers 2xx, on the retry schedule, then the
//! next. What is owed is written after every attempt, over the revision read, so that a
//! replica that takes over goes on from there and a second writer stops.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use racing_projections::{DayEvent, DayKind};
use tokio_util::sync::CancellationToken;

use super::endpoint::{Attempt, DeliveryState, Disabled, Endpoint, Pending};
use super::guard::Guard;
use super::manage::{headers, payload, Webhooks};
use super::owner::Mail;
use super::scanner::Scanner;
use super::store::Conflict;

/// The specification's retry schedule: the pause before each attempt of a delivery after
/// the one before it failed; after the last, the endpoint is disabled.
pub const SCHEDULE: [Duration; 10] = [
    Duration::ZERO,
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(14 * 3600),
    Duration::from_secs(20 * 3600),
    Duration::from_secs(24 * 3600),
];

/// Events read from the journal at a time.
const CHUNK: usize = 64;

/// Events passed over (not the endpoint's) after which its position is written, so that a
/// replica that takes over does not read them again.
const SKIPPED_WRITE: u64 = 1_000;

/// The `type` of a race-day event's payload: its frame's.
pub(super) fn type_name(kind: DayKind) -> &'static str {
    match kind {
        DayKind::Status => "status",
        DayKind::Scratching => "scratching",
        DayKind::Result => "result",
        DayKind::Card => "card",
        DayKind::Retraction => "retraction",
    }
}

/// The `webhook-id` of the event at `seq` for endpoint `id`: the same on every attempt and
/// every replay, unique per event and endpoint.
pub(super) fn webhook_id(id: &str, seq: u64) -> String {
    format!("msg_{id}_{seq}")
}

/// The payload of a race-day event: its frame as the socket sends it, as `data`.
pub(super) fn event_payload(event: &DayEvent) -> Bytes {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        published_at: std::borrow::Cow<'a, str>,
    }
    let published = serde_json::from_str::<Head<'_>>(&event.frame)
        .map(|h| h.published_at.into_owned())
        .unwrap_or_default();
    payload(type_name(event.kind), event.seq, &published, &event.frame)
}

/// One endpoint's lane.
pub(super) struct Lane {
    pub webhooks: Arc<Webhooks>,
    pub scanner: Arc<Scanner>,
    pub mail: Option<Arc<Mail>>,
    /// The endpoint's key in the buckets.
    pub key: String,
    /// Ends the lane: the lease lost, or the service stopping.
    pub stop: CancellationToken,
}

/// The event under way, read once.
struct Loaded {
    seq: u64,
    kind: &'static str,
    body: Bytes,
}

enum Next {
    /// The next event of the endpoint's.
    Event(String, DayEvent),
    /// None up to this position.
    Upto(u64),
}

impl Lane {
    /// Delivers until the lane is stopped, the endpoint goes or is disabled, or another
    /// replica writes what is owed to it.
    pub async fn run(self) {
        if let Err(e) = self.deliver().await {
            if e.is::<Conflict>() {
                tracing::info!(endpoint = %self.key, "webhook deliveries written by another replica; this one stops");
            } else {
                tracing::warn!(endpoint = %self.key, error = format!("{e:#}"), "webhook lane stopped");
            }
        }
    }

    async fn deliver(&self) -> anyhow::Result<()> {
        let Some(first) = self.webhooks.endpoints.get(&self.key) else {
            return Ok(());
        };
        let (mut state, mut revision) = match self.webhooks.buckets.state(&self.key).await? {
            Some((state, revision)) => (state, Some(revision)),
            None => (DeliveryState::from(first.from_seq), None),
        };
        let mut changes = self.webhooks.changes();
        let mut scanned = self.scanner.watch();
        let mut loaded: Option<Loaded> = None;
        let mut written_at = state.position;
        loop {
            if self.stop.is_cancelled() {
                return Ok(());
            }
            let Some(endpoint) = self.webhooks.endpoints.get(&self.key) else {
                return Ok(());
            };
            if endpoint.disabled.is_some() {
                return Ok(());
            }
            if let Some(ask) = endpoint.replay.filter(|a| a.n != state.replayed) {
                state.position = state.position.min(ask.since);
                state.pending = None;
                state.replayed = ask.n;
                loaded = None;
                revision = Some(self.save(&state, revision).await?);
                written_at = state.position;
            }
            let Some(pending) = state.pending.clone() else {
                match self.next(&endpoint, state.position).await? {
                    Next::Event(date, event) => {
                        state.pending = Some(Pending {
                            seq: event.seq,
                            date,
                            attempts: 0,
                            next_at: now_ms(),
                        });
                        loaded = Some(Loaded {
                            seq: event.seq,
                            kind: type_name(event.kind),
                            body: event_payload(&event),
                        });
                    }
                    Next::Upto(upto) => {
                        state.position = state.position.max(upto);
                        if state.position >= written_at + SKIPPED_WRITE {
                            revision = Some(self.save(&state, revision).await?);
                            written_at = state.position;
                        }
                        tokio::select! {
                            _ = self.stop.cancelled() => return Ok(()),
                            _ = changes.changed() => {}
                            _ = scanned.changed() => {}
                            // A store swapped by a rebuild, or a ring that lost its place.
                            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        }
                    }
                }
                continue;
            };
            let wait = pending.next_at - now_ms();
            if wait > 0 {
                let wait = Duration::from_millis(u64::try_from(wait).unwrap_or(0));
                tokio::select! {
                    _ = self.stop.cancelled() => return Ok(()),
                    _ = changes.changed() => {}
                    _ = tokio::time::sleep(wait) => {}
                }
                continue;
            }
            let event = match loaded.take().filter(|l| l.seq == pending.seq) {
                Some(event) => event,
                None => match self.read(&pending).await? {
                    Some(event) => event,
                    None => {
                        // This replica's store is behind the one that found the event.
                        tokio::select! {
                            _ = self.stop.cancelled() => return Ok(()),
                            _ = scanned.changed() => {}
                            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        }
                        continue;
                    }
                },
            };
            let gave_up = self.attempt(&endpoint, &mut state, &event).await?;
            revision = Some(self.save(&state, revision).await?);
            written_at = state.position;
            if let Some(reason) = gave_up {
                self.disable(&endpoint, reason).await?;
                return Ok(());
            }
            if state.pending.is_some() {
                loaded = Some(event);
            }
        }
    }

    /// The endpoint's next event after `position`, or how far there is none.
    async fn next(&self, endpoint: &Endpoint, position: u64) -> anyhow::Result<Next> {
        let Some(topics) = endpoint.followed() else {
            return Ok(Next::Upto(self.scanner.upto()));
        };
        let date = endpoint.date.clone();
        let mut after = position;
        loop {
            // Read before the events: every event up to it is among those read then.
            let upto = self.scanner.upto();
            let events = self.scanner.after(after, date.as_deref(), CHUNK).await?;
            let Some(last) = events.last().map(|(_, e)| e.seq) else {
                return Ok(Next::Upto(after.max(upto)));
            };
            if let Some((date, event)) = events.into_iter().find(|(_, e)| topics.has(e.kind)) {
                return Ok(Next::Event(date, event));
            }
            after = last;
        }
    }

    /// The event under way, read again from the journal (after a restart or a failover);
    /// `None` while this replica's store has not applied it yet.
    async fn read(&self, pending: &Pending) -> anyhow::Result<Option<Loaded>> {
        let events = self
            .scanner
            .after(pending.seq.saturating_sub(1), Some(&pending.date), 1)
            .await?;
        Ok(events
            .into_iter()
            .find(|(_, e)| e.seq == pending.seq)
            .map(|(_, e)| Loaded {
                seq: e.seq,
                kind: type_name(e.kind),
                body: event_payload(&e),
            }))
    }

    /// One attempt of the delivery under way, noted in `state`: the position moves on
    /// after a 2xx, the next attempt is scheduled after a failure. Returns why the
    /// endpoint is to be disabled, if it is.
    async fn attempt(
        &self,
        endpoint: &Endpoint,
        state: &mut DeliveryState,
        event: &Loaded,
    ) -> anyhow::Result<Option<String>> {
        let Some(mut pending) = state.pending.clone() else {
            return Ok(None);
        };
        let url = Guard::parse(&endpoint.url).map_err(|e| anyhow::anyhow!("{e}"))?;
        let webhook_id = webhook_id(&endpoint.id, event.seq);
        let at = jiff::Timestamp::now();
        let posted = self
            .webhooks
            .sender
            .post(
                &url,
                &headers(endpoint, &webhook_id, &event.body),
                event.body.clone(),
            )
            .await;
        pending.attempts += 1;
        let mut attempt = Attempt {
            seq: event.seq,
            webhook_id,
            r#type: event.kind.to_owned(),
            attempt: pending.attempts,
            at: racing_events::Instant::text(at),
            status: "delivered".into(),
            response_code: posted.status,
            error: posted.error.clone(),
            next_attempt_at: None,
            duration_ms: posted.took_ms,
        };
        let mut gave_up = None;
        if posted.delivered() {
            state.position = event.seq;
            state.pending = None;
            metrics::counter!("racing_webhook_deliveries_total", "outcome" => "delivered")
                .increment(1);
        } else if posted.status == Some(410) {
            attempt.status = "given_up".into();
            gave_up = Some("the endpoint answered 410 Gone".to_owned());
            state.pending = Some(pending);
        } else if let Some(pause) = SCHEDULE.get(pending.attempts as usize) {
            let pause = self.pause(*pause, posted.status, posted.retry_after);
            pending.next_at =
                now_ms().saturating_add(i64::try_from(pause.as_millis()).unwrap_or(i64::MAX));
            attempt.status = "failed".into();
            attempt.next_attempt_at = jiff::Timestamp::from_millisecond(pending.next_at)
                .ok()
                .map(racing_events::Instant::text);
            state.pending = Some(pending);
            metrics::counter!("racing_webhook_deliveries_total", "outcome" => "failed")
                .increment(1);
        } else {
            attempt.status = "given_up".into();
            gave_up = Some(format!(
                "{} attempts of the delivery at seq {} failed over the retry schedule",
                pending.attempts, event.seq
            ));
            state.pending = Some(pending);
        }
        state.note(attempt);
        Ok(gave_up)
    }

    /// The pause before the next attempt: the schedule's (divided for tests, plus up to a
    /// tenth of it at random so that endpoints that failed together do not come back
    /// together), or longer where a 429 or 503 said when to come back (up to a day).
    fn pause(
        &self,
        scheduled: Duration,
        status: Option<u16>,
        retry_after: Option<u64>,
    ) -> Duration {
        let scheduled = scheduled / self.webhooks.settings.retry_divisor.max(1);
        let jitter = scheduled.mul_f64(rand::random::<f64>() / 10.0);
        let asked = match status {
            Some(429 | 503) => retry_after.map_or(Duration::ZERO, |s| {
                Duration::from_secs(s.min(24 * 3600)) / self.webhooks.settings.retry_divisor.max(1)
            }),
            _ => Duration::ZERO,
        };
        (scheduled + jitter).max(asked)
    }

    async fn save(&self, state: &DeliveryState, revision: Option<u64>) -> anyhow::Result<u64> {
        self.webhooks
            .buckets
            .save_state(&self.key, state, revision)
            .await
    }

    /// Disables the endpoint and tells its owner by mail, where the key has an address.
    async fn disable(&self, endpoint: &Endpoint, reason: String) -> anyhow::Result<()> {
        let disabled = Disabled {
            at: racing_events::Instant::now(),
            reason: reason.clone(),
        };
        let changed = self
            .webhooks
            .buckets
            .change(&self.key, |e| {
                e.disabled = Some(disabled.clone());
                Ok(())
            })
            .await?;
        if let Some((endpoint, ())) = &changed {
            self.webhooks
                .endpoints
                .set(&self.key, Some(endpoint.clone()));
        }
        tracing::warn!(endpoint = %endpoint.id, url = %endpoint.url, reason, "webhook endpoint disabled");
        metrics::counter!("racing_webhook_endpoints_disabled_total").increment(1);
        match &self.mail {
            Some(mail) => mail.tell_disabled(endpoint, &reason).await,
            None => {
                tracing::warn!(endpoint = %endpoint.id, "no mail to tell the owner of a disabled webhook endpoint")
            }
        }
        Ok(())
    }
}

/// Now, in Unix milliseconds.
fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}
