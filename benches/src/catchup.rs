//! Catch-up after an outage: live clients follow today's meeting while the service is
//! paused (SIGSTOP, as a stalled machine or a partition would pause it) and an outage's
//! worth of odds updates arrives; then it goes on. What is measured: how many clients it
//! closes (the goal is none), how long each takes to have the latest prices, what they
//! were sent, and the service's peak memory.

use std::future::IntoFuture as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use futures::{SinkExt, StreamExt};
use serde::Serialize;
use tokio::sync::{watch, Semaphore};
use tokio_tungstenite::tungstenite::Message;

use crate::clients::{client_config, seq_of, socket_url, CONNECTING};
use crate::feed::LogInfo;
use crate::scale::Scale;
use crate::service::{Service, Target};

/// How long the clients get, after the service goes on, to have the latest prices.
const CATCH_UP_LIMIT: Duration = Duration::from_secs(300);

/// What the catch-up run measured.
#[derive(Debug, Clone, Serialize)]
pub struct CatchupResult {
    /// Clients connected and subscribed before the outage.
    pub clients: usize,
    /// Odds updates published while the service was paused.
    pub updates: u64,
    /// Seconds of live odds at the live rate that is.
    pub outage_secs: u64,
    /// Clients the service closed.
    pub closed: usize,
    /// Clients that had the latest prices within the limit.
    pub caught_up: usize,
    /// Seconds from the service going on to a client having the latest prices: median.
    pub p50_secs: f64,
    /// The last client.
    pub max_secs: f64,
    /// `odds` frames the clients received after the outage.
    pub odds_frames: u64,
    /// `snapshot` frames they received after it.
    pub snapshot_frames: u64,
    /// Peak resident memory of the service over the whole run, KiB.
    pub service_peak_rss_kib: u64,
    /// Resident memory of the service before the outage, KiB.
    pub service_rss_before_kib: u64,
}

/// One client's view: the highest `seq` it was sent, and when it reached the target.
#[derive(Default)]
struct Progress {
    latest: AtomicU64,
    /// Microseconds after the resume at which `latest` reached the target; 0: not yet.
    reached_us: AtomicU64,
    closed: AtomicUsize,
}

/// `scale.live_clients` clients subscribed to today's meeting; the service paused while
/// `scale.live_rate` x `scale.outage_secs` updates are published; then resumed.
pub async fn run(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
) -> anyhow::Result<CatchupResult> {
    let count = usize::try_from(scale.live_rate * scale.outage_secs)?;
    let updates = crate::feed::live_odds(&log.today, count)?;
    let service = Service::start_ready(target, store, "catchup").await?;
    let url = socket_url(&service, &target.key);
    let subscribe = format!("{{\"type\":\"subscribe\",\"date\":\"{}\"}}", log.today);

    let (stop_tx, stop) = watch::channel(false);
    let ready = Arc::new(AtomicUsize::new(0));
    let target_seq = Arc::new(AtomicU64::new(u64::MAX));
    let (resumed_tx, resumed) = watch::channel(None::<Instant>);
    let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let gate = Arc::new(Semaphore::new(CONNECTING));
    let mut clients = Vec::with_capacity(scale.live_clients);
    let mut tasks = Vec::with_capacity(scale.live_clients);
    for _ in 0..scale.live_clients {
        let progress = Arc::new(Progress::default());
        clients.push(progress.clone());
        let (url, gate, ready, mut stop, subscribe, target_seq, resumed, counts) = (
            url.clone(),
            gate.clone(),
            ready.clone(),
            stop.clone(),
            subscribe.clone(),
            target_seq.clone(),
            resumed.clone(),
            counts.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let permit = gate.acquire_owned().await?;
            let (mut ws, _) =
                tokio_tungstenite::connect_async_with_config(&url, Some(client_config()), false)
                    .await?;
            ws.send(Message::text(subscribe)).await?;
            loop {
                match tokio::time::timeout(Duration::from_secs(30), ws.next()).await {
                    Ok(Some(Ok(Message::Text(t)))) if t.starts_with("{\"type\":\"snapshot\"") => {
                        break
                    }
                    Ok(Some(Ok(_))) => {}
                    other => bail!("no snapshot after subscribing: {other:?}"),
                }
            }
            drop(permit);
            ready.fetch_add(1, Ordering::Relaxed);
            loop {
                let frame = tokio::select! {
                    _ = stop.changed() => break,
                    m = ws.next() => m,
                };
                match frame {
                    Some(Ok(Message::Text(t))) => {
                        let snapshot = t.starts_with("{\"type\":\"snapshot\"");
                        if !snapshot && !t.starts_with("{\"type\":\"odds\"") {
                            continue;
                        }
                        let Some(at) = *resumed.borrow() else {
                            continue;
                        };
                        let (odds, snapshots) = &*counts;
                        if snapshot { snapshots } else { odds }.fetch_add(1, Ordering::Relaxed);
                        let seq = seq_of(&t).context("a frame without seq")?;
                        let latest = progress.latest.fetch_max(seq, Ordering::Relaxed).max(seq);
                        if latest >= target_seq.load(Ordering::Relaxed)
                            && progress.reached_us.load(Ordering::Relaxed) == 0
                        {
                            let us = u64::try_from(at.elapsed().as_micros())?.max(1);
                            progress.reached_us.store(us, Ordering::Relaxed);
                        }
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                        progress.closed.store(1, Ordering::Relaxed);
                        break;
                    }
                    Some(Ok(_)) => {}
                }
            }
            let _ = tokio::time::timeout(Duration::from_secs(5), ws.close(None)).await;
            anyhow::Ok(())
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while ready.load(Ordering::Relaxed) < scale.live_clients {
        if Instant::now() > deadline || tasks.iter().any(|t| t.is_finished()) {
            let _ = stop_tx.send(true);
            for t in tasks {
                t.await??;
            }
            bail!("catch-up clients did not all subscribe");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = service.rss_kib()?;

    eprintln!(
        "bench:   catch-up: {} clients subscribed; pausing the service while {} updates ({} s at {}/s) are published",
        scale.live_clients,
        updates.len(),
        scale.outage_secs,
        scale.live_rate
    );
    service.pause()?;
    let published = publish_all(target, updates).await;
    // The service goes on whatever became of the publishing.
    service.resume()?;
    let (sent, last) = published?;
    target_seq.store(last, Ordering::Relaxed);
    let _ = resumed_tx.send(Some(Instant::now()));
    let deadline = Instant::now() + CATCH_UP_LIMIT;
    loop {
        let pending = clients
            .iter()
            .filter(|c| {
                c.reached_us.load(Ordering::Relaxed) == 0 && c.closed.load(Ordering::Relaxed) == 0
            })
            .count();
        if pending == 0 || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let peak = service.peak_rss_kib()?;
    let _ = stop_tx.send(true);
    for t in tasks {
        t.await??;
    }
    service.stop().await?;

    let closed = clients
        .iter()
        .filter(|c| {
            c.closed.load(Ordering::Relaxed) == 1 && c.reached_us.load(Ordering::Relaxed) == 0
        })
        .count();
    let mut reached: Vec<f64> = clients
        .iter()
        .map(|c| c.reached_us.load(Ordering::Relaxed))
        .filter(|us| *us > 0)
        .map(|us| us as f64 / 1e6)
        .collect();
    reached.sort_by(f64::total_cmp);
    let pick = |p: f64| -> f64 {
        if reached.is_empty() {
            return f64::NAN;
        }
        let i = ((reached.len() as f64 * p).ceil() as usize).clamp(1, reached.len()) - 1;
        reached[i]
    };
    let result = CatchupResult {
        clients: scale.live_clients,
        updates: sent,
        outage_secs: scale.outage_secs,
        closed,
        caught_up: reached.len(),
        p50_secs: pick(0.5),
        max_secs: pick(1.0),
        odds_frames: counts.0.load(Ordering::Relaxed),
        snapshot_frames: counts.1.load(Ordering::Relaxed),
        service_peak_rss_kib: peak,
        service_rss_before_kib: rss_before,
    };
    eprintln!(
        "bench:   catch-up: {} of {} clients at the latest prices (p50 {:.2} s, max {:.2} s after resuming), {} closed; \
         {} odds and {} snapshot frames; service RSS {} MiB before, peak {} MiB",
        result.caught_up,
        result.clients,
        result.p50_secs,
        result.max_secs,
        result.closed,
        result.odds_frames,
        result.snapshot_frames,
        result.service_rss_before_kib / 1024,
        result.service_peak_rss_kib / 1024,
    );
    ensure!(
        result.caught_up + result.closed == result.clients,
        "{} clients neither caught up nor were closed within {CATCH_UP_LIMIT:?}",
        result.clients - result.caught_up - result.closed
    );
    Ok(result)
}

/// Publishes every update as fast as JetStream takes them; returns how many and the
/// last one's stream sequence.
pub(crate) async fn publish_all(
    target: &Target,
    updates: Vec<racing_events::Envelope>,
) -> anyhow::Result<(u64, u64)> {
    let js = target.feeder_jetstream().await?;
    let mut acks = futures::stream::FuturesOrdered::new();
    let mut last = 0;
    let mut sent = 0;
    for e in &updates {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(
            async_nats::header::NATS_MESSAGE_ID,
            e.event_id.to_string().as_str(),
        );
        acks.push_back(
            js.publish_with_headers(e.subject(), headers, e.to_json().into())
                .await?
                .into_future(),
        );
        // A bounded number of acknowledgements in flight.
        while acks.len() >= 256 {
            if let Some(ack) = acks.next().await {
                last = last.max(ack?.sequence);
                sent += 1;
            }
        }
    }
    while let Some(ack) = acks.next().await {
        last = last.max(ack?.sequence);
        sent += 1;
    }
    Ok((sent, last))
}
