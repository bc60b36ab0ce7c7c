//! A live feed applied: events published as fast as `racing publish` sends them (its
//! publisher, [`racing::publish::IN_FLIGHT`] publishes in flight), and the service
//! followed by its `/status` every 50 ms until it has applied the last: the rate at which
//! it applies a live feed, how far behind it falls, how long it says it is not ready. The
//! reads-while-writing part runs it while its readers read.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use serde::Serialize;

use crate::service::{Service, Target};

/// Longest the service is given to apply the feed.
const LIMIT: Duration = Duration::from_secs(1800);

/// What the service made of a live feed.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// Events published.
    pub events: u64,
    /// Seconds from the first publish to the last acknowledgement.
    pub publish_secs: f64,
    /// Seconds from the first publish until the service had applied the last.
    pub applied_secs: f64,
    /// The most events the read models were behind the stream.
    pub max_lag: u64,
    /// Seconds the service said it was not ready (over 1,000 events behind).
    pub unready_secs: f64,
}

impl Applied {
    /// Events applied a second, from the first publish to the last applied.
    pub fn rate(&self) -> f64 {
        self.events as f64 / self.applied_secs.max(1e-9)
    }
}

/// What `/status` says, of what is followed.
#[derive(serde::Deserialize)]
pub(crate) struct Standing {
    /// The last stream sequence in the read models.
    pub checkpoint: u64,
    stream_last_seq: Option<u64>,
    lag: Option<u64>,
    ready: bool,
}

/// The service's `/status` now.
pub(crate) async fn standing(
    client: &reqwest::Client,
    service: &Service,
) -> anyhow::Result<Standing> {
    Ok(client
        .get(service.admin_url("/status"))
        .timeout(Duration::from_secs(10))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?)
}

/// Publishes `events` as a feeder with `racing publish`'s publisher and follows the
/// service's `/status` every 50 ms until it has applied the last.
pub async fn publish_and_follow(
    client: &reqwest::Client,
    service: &Service,
    target: &Target,
    events: &[racing_events::Envelope],
) -> anyhow::Result<Applied> {
    let standing = || standing(client, service);
    let start = standing()
        .await?
        .stream_last_seq
        .context("the stream's end")?;
    let js = target.feeder_jetstream().await?;
    let started = Instant::now();
    let publish = async {
        let counts = racing::publish::publish_events(&js, None, events).await?;
        ensure!(
            counts.published == events.len() as u64,
            "{} published of {}: {counts:?}",
            counts.published,
            events.len()
        );
        anyhow::Ok(started.elapsed().as_secs_f64())
    };
    let follow = async {
        let (mut max_lag, mut unready, mut last_look) = (0, 0.0, Instant::now());
        let end = start + events.len() as u64;
        loop {
            let s = standing().await?;
            let now = Instant::now();
            max_lag = max_lag.max(s.lag.unwrap_or(0));
            if !s.ready {
                unready += (now - last_look).as_secs_f64();
            }
            last_look = now;
            if s.checkpoint >= end {
                return anyhow::Ok((started.elapsed().as_secs_f64(), max_lag, unready));
            }
            ensure!(started.elapsed() < LIMIT, "not applied after {LIMIT:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let (publish_secs, (applied_secs, max_lag, unready_secs)) = tokio::try_join!(publish, follow)?;
    Ok(Applied {
        events: events.len() as u64,
        publish_secs,
        applied_secs,
        max_lag,
        unready_secs,
    })
}
