//! Live odds: many WebSocket clients following today's meeting while the benchmark
//! publishes price moves at a steady rate, each stamped when it was published, in rounds
//! of the service and of its peer (nats-server's own WebSocket fan-out, `crate::peer`);
//! and the memory an idle connection costs the service.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use async_nats::jetstream;
use futures::{SinkExt, StreamExt};
use serde::Serialize;
use tokio::sync::{watch, Semaphore};
use tokio_tungstenite::tungstenite::Message;
use uuid::Uuid;

use crate::clients::{client_config, seq_of, socket_url, Clients, Seen, Shared, CONNECTING};
use crate::feed::LogInfo;
use crate::figures::percentile_ms;
use crate::peer::Peer;
use crate::scale::Scale;
use crate::service::{Service, Target};

/// What one side of a live odds round measured.
#[derive(Debug, Clone, Serialize)]
pub struct LiveResult {
    /// Clients connected and subscribed.
    pub clients: usize,
    /// Updates published.
    pub published: u64,
    /// Target rate, updates per second.
    pub rate: u64,
    /// Seconds from the first publish to the last.
    pub publish_secs: f64,
    /// `odds` frames the clients received.
    pub received: u64,
    /// What they should have received: clients x published.
    pub expected: u64,
    /// `snapshot` frames received while updates were published (conflations).
    pub snapshots: u64,
    /// Delivered `odds` frames per second, over the first publish to the last receipt.
    pub delivered_per_sec: f64,
    /// Publish-to-client latency, ms: median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// Largest.
    pub max_ms: f64,
    /// Publish to the first client's receipt of each update, ms: p99. The part of the
    /// latency that comes before the fan-out to every client (the log and, on the
    /// service's side, its projector's batch and commit), with one client's share of
    /// the fan-out: a spike here is on the path every client shares.
    pub first_p99_ms: f64,
    /// Largest.
    pub first_max_ms: f64,
    /// On the service's side, the updates its projector handed to the live sessions
    /// (`racing_live_delay_seconds`: from JetStream storing each to its batch's commit),
    /// and of those, how many took more than 25 ms and more than 100 ms. Zero on the
    /// peer's.
    pub handed_off: u64,
    /// More than 25 ms.
    pub handed_off_over_25ms: u64,
    /// More than 100 ms.
    pub handed_off_over_100ms: u64,
    /// CPU the service used while updates were published, % of one core (0 on the
    /// peer's side: the service is stopped).
    pub service_cpu_pct: f64,
    /// CPU nats-server used meanwhile: storing the updates in the stream and, on the
    /// service's side, sending them to its projector, on the peer's, to its clients.
    pub nats_cpu_pct: f64,
    /// CPU the benchmark's clients and publisher used meanwhile, % of one core.
    pub clients_cpu_pct: f64,
    /// CPU the whole machine used meanwhile, % of one core (100 x cores at most): what
    /// is left after the three above is other work on the machine.
    pub machine_cpu_pct: f64,
}

/// What the idle connections cost.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryResult {
    /// Idle connections opened.
    pub connections: usize,
    /// Service RSS before, KiB.
    pub rss_before_kib: u64,
    /// Service RSS with them open, KiB.
    pub rss_after_kib: u64,
    /// (after - before) / connections, bytes.
    pub per_connection_bytes: f64,
}

/// The RSS of a service before and after `scale.idle_connections` connections that
/// only take the welcome and what follows (heartbeats).
pub async fn idle_memory(
    scale: &Scale,
    target: &Target,
    store: &Path,
) -> anyhow::Result<MemoryResult> {
    let service = Service::start_ready(target, store, "memory").await?;
    // One connection first, so that what every connection shares is counted in before.
    let url = socket_url(&service, &target.key);
    let (warm, _) =
        tokio_tungstenite::connect_async_with_config(&url, Some(client_config()), false).await?;
    drop(warm);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = service.rss_kib()?;

    let (stop_tx, stop) = watch::channel(false);
    let welcomed = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Semaphore::new(CONNECTING));
    let mut tasks = Vec::with_capacity(scale.idle_connections);
    for _ in 0..scale.idle_connections {
        let (url, gate, welcomed, mut stop) =
            (url.clone(), gate.clone(), welcomed.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let permit = gate.acquire_owned().await?;
            let (mut ws, _) =
                tokio_tungstenite::connect_async_with_config(&url, Some(client_config()), false)
                    .await?;
            let first = tokio::time::timeout(Duration::from_secs(30), ws.next())
                .await
                .context("no welcome")?;
            ensure!(
                matches!(&first, Some(Ok(Message::Text(t))) if t.contains("\"welcome\"")),
                "expected a welcome, got {first:?}"
            );
            drop(permit);
            welcomed.fetch_add(1, Ordering::Relaxed);
            loop {
                tokio::select! {
                    _ = stop.changed() => break,
                    m = ws.next() => match m {
                        Some(Ok(_)) => {}
                        _ => bail!("an idle connection was closed"),
                    },
                }
            }
            let _ = tokio::time::timeout(Duration::from_secs(5), ws.close(None)).await;
            anyhow::Ok(())
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while welcomed.load(Ordering::Relaxed) < scale.idle_connections {
        if Instant::now() > deadline || tasks.iter().any(|t| t.is_finished()) {
            let _ = stop_tx.send(true);
            for t in tasks {
                t.await??;
            }
            bail!("idle connections did not all open");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let every session reach its steady state (past its resume window).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = service.rss_kib()?;
    let _ = stop_tx.send(true);
    for t in tasks {
        t.await??;
    }
    service.stop().await?;
    let per = (after.saturating_sub(before) * 1024) as f64 / scale.idle_connections as f64;
    eprintln!(
        "bench:   memory: RSS {before} KiB -> {after} KiB with {} idle connections: {per:.0} bytes each",
        scale.idle_connections
    );
    Ok(MemoryResult {
        connections: scale.idle_connections,
        rss_before_kib: before,
        rss_after_kib: after,
        per_connection_bytes: per,
    })
}

/// What one round of the live part measured: the service, and its peer.
#[derive(Debug, Clone, Serialize)]
pub struct LiveRound {
    /// The service's `/ws/live/odds`.
    pub service: LiveResult,
    /// The peer: nats-server's own WebSocket listener fanning out as many updates, at
    /// the same rate, to as many clients (`crate::peer`).
    pub peer: LiveResult,
}

/// CPU clock ticks (1/100 s on Linux) of the processes a side is measured by, and of the
/// machine, at one instant.
struct Ticks {
    service: u64,
    nats: u64,
    clients: u64,
    machine: (u64, u64),
    at: Instant,
}

impl Ticks {
    fn now(service: Option<&Service>, nats: u32) -> anyhow::Result<Ticks> {
        Ok(Ticks {
            service: service.map(Service::cpu_ticks).transpose()?.unwrap_or(0),
            nats: crate::service::cpu_ticks(&format!("/proc/{nats}/stat"))?,
            clients: crate::service::cpu_ticks("/proc/self/stat")?,
            machine: crate::service::machine_ticks()?,
            at: Instant::now(),
        })
    }

    /// CPU used since `self`, % of one core: service, nats-server, clients, machine.
    fn since(&self, service: Option<&Service>, nats: u32) -> anyhow::Result<[f64; 4]> {
        let now = Ticks::now(service, nats)?;
        let secs = now.at.duration_since(self.at).as_secs_f64().max(1e-9);
        // Ticks are 1/100 s: ticks per second are % of a core.
        let pct = |from: u64, to: u64| to.saturating_sub(from) as f64 / secs;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let (busy, total) = (
            now.machine.0.saturating_sub(self.machine.0),
            now.machine.1.saturating_sub(self.machine.1),
        );
        Ok([
            pct(self.service, now.service),
            pct(self.nats, now.nats),
            pct(self.clients, now.clients),
            100.0 * cores * busy as f64 / total.max(1) as f64,
        ])
    }
}

/// What both sides of every round share.
pub(crate) struct Round<'a> {
    pub(crate) scale: &'a Scale,
    pub(crate) target: &'a Target,
    pub(crate) log: &'a LogInfo,
    pub(crate) peer: &'a Peer,
}

/// `scale.live_rounds` rounds, each of the service's side and the peer's: on each,
/// `scale.live_clients` clients subscribed to today's meeting, and `scale.live_rate` x
/// `scale.live_secs` price moves published at that rate.
pub async fn odds(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
    peer: &Peer,
) -> anyhow::Result<Vec<LiveRound>> {
    let round = Round {
        scale,
        target,
        log,
        peer,
    };
    let mut rounds = Vec::with_capacity(scale.live_rounds);
    for i in 0..scale.live_rounds {
        eprintln!("bench:   live: round {} of {}", i + 1, scale.live_rounds);
        // Each side goes first every other round, so that neither always finds the
        // machine as the other left it.
        let (service, peer) = if i % 2 == 0 {
            let service = round.service(store).await?;
            (service, round.peer().await?)
        } else {
            let peer = round.peer().await?;
            (round.service(store).await?, peer)
        };
        rounds.push(LiveRound { service, peer });
    }
    Ok(rounds)
}

impl Round<'_> {
    /// The updates of one side: fresh event ids each time, or JetStream would take them
    /// for duplicates of the other side's.
    pub(crate) fn updates(&self) -> anyhow::Result<Vec<racing_events::Envelope>> {
        let count = usize::try_from(self.scale.live_rate * self.scale.live_secs)?;
        crate::feed::live_odds(&self.log.today, count)
    }

    /// The service's side: its clients subscribed to today's meeting on `/ws/live/odds`.
    async fn service(&self, store: &Path) -> anyhow::Result<LiveResult> {
        let updates = self.updates()?;
        let service = Service::start_ready(self.target, store, "live").await?;
        let url = socket_url(&service, &self.target.key);
        let subscribe = format!("{{\"type\":\"subscribe\",\"date\":\"{}\"}}", self.log.today);
        let capacity = updates.len() + 16;
        let clients = Clients::start(self.scale.live_clients, |shared, stop| {
            service_client(url.clone(), subscribe.clone(), capacity, shared, stop)
        })
        .await?;
        // Snapshots of the slower subscribers may still be on their way.
        tokio::time::sleep(Duration::from_millis(500)).await;
        // The clients saw each update by its stream sequence.
        let result = self
            .measure("service", clients, updates, Some(&service), |_, seq| seq)
            .await?;
        service.stop().await?;
        Ok(result)
    }

    /// The peer's side, with the service stopped: nats-server's WebSocket listener.
    async fn peer(&self) -> anyhow::Result<LiveResult> {
        let updates = self.updates()?;
        let clients = self.peer.clients(self.scale.live_clients, &updates).await?;
        // The peer's clients saw each update by its event id.
        self.measure("nats-server", clients, updates, None, |id, _| id)
            .await
    }

    /// Publishes `updates` while `clients` read them, and measures what they saw: `key`
    /// is what a client knew an update by, given its event id and stream sequence.
    pub(crate) async fn measure<K: Eq + Hash + Send + 'static>(
        &self,
        side: &str,
        clients: Clients<K>,
        updates: Vec<racing_events::Envelope>,
        service: Option<&Service>,
        key: impl Fn(Uuid, u64) -> K,
    ) -> anyhow::Result<LiveResult> {
        let (scale, nats) = (self.scale, self.peer.pid());
        eprintln!(
            "bench:   live ({side}): {} clients subscribed; publishing {} updates at {}/s",
            scale.live_clients,
            updates.len(),
            scale.live_rate
        );
        let ids: Vec<Uuid> = updates.iter().map(|e| e.event_id).collect();
        // The publisher has a thread and a runtime of its own, so that the clients' work
        // does not delay its clock.
        let target = self.target.clone();
        let rate = scale.live_rate;
        let client = reqwest::Client::new();
        let handoffs_before = match service {
            Some(service) => Some(handoffs(&client, service).await?),
            None => None,
        };
        let from = Ticks::now(service, nats)?;
        let sent = tokio::task::spawn_blocking(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(publish_paced(&target, updates, rate))
        })
        .await??;
        let [service_cpu_pct, nats_cpu_pct, clients_cpu_pct, machine_cpu_pct] =
            from.since(service, nats)?;
        let published = sent.len() as u64;
        let expected = published * scale.live_clients as u64;
        let seen = clients.finish(expected).await?;
        let [handed_off, handed_off_over_25ms, handed_off_over_100ms] =
            match (service, handoffs_before) {
                (Some(service), Some(before)) => {
                    let after = handoffs(&client, service).await?;
                    std::array::from_fn(|i| after[i].saturating_sub(before[i]))
                }
                _ => [0; 3],
            };

        // `sent` is in the order of `updates`.
        let sent_at: HashMap<K, (usize, Instant)> = ids
            .iter()
            .zip(&sent)
            .enumerate()
            .map(|(i, (id, (seq, at)))| (key(*id, *seq), (i, *at)))
            .collect();
        let first = sent
            .iter()
            .map(|(_, t)| *t)
            .min()
            .context("nothing published")?;
        let last_sent = sent.iter().map(|(_, t)| *t).max().unwrap_or(first);
        let mut latencies_us: Vec<u64> = Vec::with_capacity(usize::try_from(expected)?);
        // Each update's first receipt by any client, by its place in `sent`.
        let mut firsts_us: Vec<Option<u64>> = vec![None; sent.len()];
        let mut last_received = first;
        let mut snapshots = 0;
        for s in &seen {
            snapshots += s.snapshots.iter().filter(|t| **t >= first).count() as u64;
            for (k, at) in &s.odds {
                if let Some((i, t0)) = sent_at.get(k) {
                    let us = u64::try_from(at.saturating_duration_since(*t0).as_micros())?;
                    latencies_us.push(us);
                    let first = &mut firsts_us[*i];
                    *first = Some(first.map_or(us, |f| f.min(us)));
                    last_received = last_received.max(*at);
                }
            }
        }
        latencies_us.sort_unstable();
        let mut firsts_us: Vec<u64> = firsts_us.into_iter().flatten().collect();
        firsts_us.sort_unstable();
        let received = latencies_us.len() as u64;
        let pct = |p: f64| percentile_ms(&latencies_us, p);
        let span = last_received.saturating_duration_since(first).as_secs_f64();
        let result = LiveResult {
            clients: scale.live_clients,
            published,
            rate,
            publish_secs: last_sent.saturating_duration_since(first).as_secs_f64(),
            received,
            expected,
            snapshots,
            delivered_per_sec: received as f64 / span.max(1e-9),
            p50_ms: pct(0.50),
            p99_ms: pct(0.99),
            p999_ms: pct(0.999),
            max_ms: pct(1.0),
            first_p99_ms: percentile_ms(&firsts_us, 0.99),
            first_max_ms: percentile_ms(&firsts_us, 1.0),
            handed_off,
            handed_off_over_25ms,
            handed_off_over_100ms,
            service_cpu_pct,
            nats_cpu_pct,
            clients_cpu_pct,
            machine_cpu_pct,
        };
        eprintln!(
            "bench:   live ({side}): {} of {} frames, {:.0}/s; latency p50 {:.2} ms p99 {:.2} ms max {:.2} ms; \
             to the first client p99 {:.2} ms max {:.2} ms; \
             handed to the sessions {}, over 25 / 100 ms {} / {}; \
             CPU % of a core: service {:.0}, nats-server {:.0}, clients {:.0}, machine {:.0}",
            result.received,
            result.expected,
            result.delivered_per_sec,
            result.p50_ms,
            result.p99_ms,
            result.max_ms,
            result.first_p99_ms,
            result.first_max_ms,
            result.handed_off,
            result.handed_off_over_25ms,
            result.handed_off_over_100ms,
            result.service_cpu_pct,
            result.nats_cpu_pct,
            result.clients_cpu_pct,
            result.machine_cpu_pct
        );
        Ok(result)
    }
}

/// The odds updates the service's projector has handed to its live sessions so far, and
/// of those the ones more than 25 ms and 100 ms after JetStream stored them.
async fn handoffs(client: &reqwest::Client, service: &Service) -> anyhow::Result<[u64; 3]> {
    let delay = service
        .metrics(client)
        .await?
        .histogram("racing_live_delay_seconds", ["0.025", "0.1"])?;
    Ok([delay.count, delay.over[0], delay.over[1]])
}

/// One of the service's clients: subscribes to today's meeting, then notes each `odds`
/// frame's `seq` and when it came, and when each snapshot came.
pub(crate) async fn service_client(
    url: String,
    subscribe: String,
    capacity: usize,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<Seen<u64>> {
    let (place, mut ws) = shared.connect(&url).await?;
    ws.send(Message::text(subscribe)).await?;
    // Ready once the first snapshot of today's races is in.
    loop {
        match tokio::time::timeout(Duration::from_secs(30), ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) if t.starts_with("{\"type\":\"snapshot\"") => break,
            Ok(Some(Ok(Message::Text(t)))) if t.starts_with("{\"type\":\"error\"") => {
                bail!("the service refused the subscription: {t}")
            }
            Ok(Some(Ok(_))) => {}
            other => bail!("no snapshot after subscribing: {other:?}"),
        }
    }
    shared.subscribed(place);
    let mut seen = Seen::with_capacity(capacity);
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            m = ws.next() => match m {
                Some(Ok(Message::Text(t))) => {
                    let at = Instant::now();
                    if t.starts_with("{\"type\":\"odds\"") {
                        seen.odds.push((seq_of(&t).context("an odds frame without seq")?, at));
                        shared.received.fetch_add(1, Ordering::Relaxed);
                    } else if t.starts_with("{\"type\":\"snapshot\"") {
                        seen.snapshots.push(at);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => bail!("a live client's connection failed: {e}"),
                None => bail!("a live client was closed"),
            },
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(5), ws.close(None)).await;
    Ok(seen)
}

/// Publishes `updates` at `rate` a second (catching up if it falls behind), each with
/// its event id as `Nats-Msg-Id`; returns each one's stream sequence and the instant it
/// was handed to the client.
pub(crate) async fn publish_paced(
    target: &crate::service::Target,
    updates: Vec<racing_events::Envelope>,
    rate: u64,
) -> anyhow::Result<Vec<(u64, Instant)>> {
    let js = jetstream::new(target.connect(racing::nats::Role::Feeder).await?);
    let messages: Vec<(String, String, bytes::Bytes)> = updates
        .iter()
        .map(|e| (e.subject(), e.event_id.to_string(), e.to_json().into()))
        .collect();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut acks = Vec::with_capacity(messages.len());
    for (subject, id, payload) in messages {
        tick.tick().await;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(async_nats::header::NATS_MESSAGE_ID, id.as_str());
        let sent = Instant::now();
        let ack = js.publish_with_headers(subject, headers, payload).await?;
        acks.push(tokio::spawn(async move { (ack.await, sent) }));
    }
    let mut sent = Vec::with_capacity(acks.len());
    for a in acks {
        let (ack, at) = a.await?;
        let ack = ack?;
        ensure!(!ack.duplicate, "a live update was taken for a duplicate");
        sent.push((ack.sequence, at));
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seq_of_a_frame_is_read() {
        let f = r#"{"type":"odds","date":"2026-11-21","race_number":1,"seq":2771,"published_at":"x","odds":[]}"#;
        assert_eq!(seq_of(f), Some(2771));
        assert_eq!(seq_of(r#"{"type":"odds"}"#), None);
    }
}
