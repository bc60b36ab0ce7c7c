//! Live odds: many WebSocket clients following today's meeting while the benchmark
//! publishes price moves at a steady rate, each stamped when it was published; and the
//! memory an idle connection costs the service.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use async_nats::jetstream;
use futures::{SinkExt, StreamExt};
use serde::Serialize;
use tokio::sync::{watch, Semaphore};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

use crate::feed::LogInfo;
use crate::service::{Service, Target};
use crate::Scale;

/// Connections opened at once.
pub(crate) const CONNECTING: usize = 200;

/// What the live odds run measured.
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
    /// CPU the service used while updates were published, % of one core.
    pub service_cpu_pct: f64,
    /// CPU the benchmark's clients and publisher used meanwhile, % of one core.
    pub clients_cpu_pct: f64,
    /// CPU the whole machine used meanwhile, % of one core (100 x cores at most): what
    /// is left after the two above is other work on the machine.
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

pub(crate) fn socket_url(service: &Service, key: &str) -> String {
    format!(
        "ws://127.0.0.1:{}/ws/live/odds?api_key={key}",
        service.port()
    )
}

/// Small buffers: ten thousand clients in the benchmark's own process.
pub(crate) fn client_config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(8 * 1024)
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

/// What one client saw: (seq, when) of each `odds` frame, and when each snapshot after
/// the first came.
struct Seen {
    odds: Vec<(u64, Instant)>,
    snapshots: Vec<Instant>,
}

/// `scale.live_clients` clients subscribed to today's meeting, and
/// `scale.live_rate` x `scale.live_secs` price moves published at that rate.
pub async fn odds(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
) -> anyhow::Result<LiveResult> {
    let count = usize::try_from(scale.live_rate * scale.live_secs)?;
    let updates = crate::feed::live_odds(&log.today, count)?;
    let client = reqwest::Client::new();
    let mut service = Service::start(target, store, "live").await?;
    service
        .wait_ok(
            &client,
            "/api/v1/racecards/today",
            Duration::from_millis(20),
            Duration::from_secs(3600),
        )
        .await?;
    service.wait_idle(Duration::from_secs(120)).await?;
    let url = socket_url(&service, &target.key);
    let subscribe = format!("{{\"type\":\"subscribe\",\"date\":\"{}\"}}", log.today);

    let (stop_tx, stop) = watch::channel(false);
    let ready = Arc::new(AtomicUsize::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let gate = Arc::new(Semaphore::new(CONNECTING));
    let mut tasks = Vec::with_capacity(scale.live_clients);
    let capacity = count + 16;
    for _ in 0..scale.live_clients {
        let (url, gate, ready, received, mut stop, subscribe) = (
            url.clone(),
            gate.clone(),
            ready.clone(),
            received.clone(),
            stop.clone(),
            subscribe.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let permit = gate.acquire_owned().await?;
            let (mut ws, _) =
                tokio_tungstenite::connect_async_with_config(&url, Some(client_config()), false)
                    .await?;
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
            drop(permit);
            ready.fetch_add(1, Ordering::Relaxed);
            let mut seen = Seen {
                odds: Vec::with_capacity(capacity),
                snapshots: Vec::new(),
            };
            loop {
                tokio::select! {
                    _ = stop.changed() => break,
                    m = ws.next() => match m {
                        Some(Ok(Message::Text(t))) => {
                            let at = Instant::now();
                            if t.starts_with("{\"type\":\"odds\"") {
                                seen.odds.push((seq_of(&t).context("an odds frame without seq")?, at));
                                received.fetch_add(1, Ordering::Relaxed);
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
            anyhow::Ok(seen)
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while ready.load(Ordering::Relaxed) < scale.live_clients {
        if Instant::now() > deadline || tasks.iter().any(|t| t.is_finished()) {
            let _ = stop_tx.send(true);
            for t in tasks {
                t.await??;
            }
            bail!("live clients did not all subscribe");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Snapshots of the slower subscribers may still be on their way.
    tokio::time::sleep(Duration::from_millis(500)).await;
    eprintln!(
        "bench:   live: {} clients subscribed; publishing {} updates at {}/s",
        scale.live_clients,
        updates.len(),
        scale.live_rate
    );

    // The publisher has a thread and a runtime of its own, so that the clients' work
    // does not delay its clock.
    let target = target.clone();
    let rate = scale.live_rate;
    let cpu_from = (
        service.cpu_ticks()?,
        crate::service::cpu_ticks("/proc/self/stat")?,
        crate::service::machine_ticks()?,
        Instant::now(),
    );
    let sent = tokio::task::spawn_blocking(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(publish_paced(&target, updates, rate))
    })
    .await??;
    let ticks = |from: u64, to: u64| {
        // Clock ticks are 1/100 s on Linux.
        (to.saturating_sub(from)) as f64 / cpu_from.3.elapsed().as_secs_f64().max(1e-9)
    };
    let service_cpu_pct = ticks(cpu_from.0, service.cpu_ticks()?);
    let clients_cpu_pct = ticks(cpu_from.1, crate::service::cpu_ticks("/proc/self/stat")?);
    let (busy, total) = crate::service::machine_ticks()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let machine_cpu_pct =
        100.0 * cores * (busy - cpu_from.2 .0) as f64 / (total - cpu_from.2 .1).max(1) as f64;
    let published = sent.len() as u64;
    let expected = published * scale.live_clients as u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    while received.load(Ordering::Relaxed) < expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = stop_tx.send(true);
    let mut seen = Vec::with_capacity(tasks.len());
    for t in tasks {
        seen.push(t.await??);
    }
    service.stop().await?;

    let sent_at: HashMap<u64, Instant> = sent.iter().copied().collect();
    let first = sent
        .iter()
        .map(|(_, t)| *t)
        .min()
        .context("nothing published")?;
    let last_sent = sent.iter().map(|(_, t)| *t).max().unwrap_or(first);
    let mut latencies_us: Vec<u64> = Vec::with_capacity(usize::try_from(expected)?);
    let mut last_received = first;
    let mut snapshots = 0;
    for s in &seen {
        snapshots += s.snapshots.iter().filter(|t| **t >= first).count() as u64;
        for (seq, at) in &s.odds {
            if let Some(t0) = sent_at.get(seq) {
                latencies_us.push(u64::try_from(
                    at.saturating_duration_since(*t0).as_micros(),
                )?);
                last_received = last_received.max(*at);
            }
        }
    }
    latencies_us.sort_unstable();
    let received = latencies_us.len() as u64;
    let pct = |p: f64| -> f64 {
        if latencies_us.is_empty() {
            return f64::NAN;
        }
        let i = ((latencies_us.len() as f64 * p).ceil() as usize).clamp(1, latencies_us.len()) - 1;
        latencies_us[i] as f64 / 1000.0
    };
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
        service_cpu_pct,
        clients_cpu_pct,
        machine_cpu_pct,
    };
    eprintln!(
        "bench:   live: {} of {} frames, {:.0}/s; latency p50 {:.2} ms p99 {:.2} ms max {:.2} ms; \
         CPU % of a core: service {:.0}, clients {:.0}, machine {:.0}",
        result.received,
        result.expected,
        result.delivered_per_sec,
        result.p50_ms,
        result.p99_ms,
        result.max_ms,
        result.service_cpu_pct,
        result.clients_cpu_pct,
        result.machine_cpu_pct
    );
    Ok(result)
}

/// The `seq` of an `odds` frame, read without parsing the rest.
pub(crate) fn seq_of(frame: &str) -> Option<u64> {
    let at = frame.find("\"seq\":")? + 6;
    let digits = &frame[at..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// Publishes `updates` at `rate` a second (catching up if it falls behind), each with
/// its event id as `Nats-Msg-Id`; returns each one's stream sequence and the instant it
/// was handed to the client.
async fn publish_paced(
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
