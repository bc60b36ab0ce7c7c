//! Live ingest: odds moves published at a set rate while the readers read documents (64
//! connections), after a second of them not counted (see [`run`]), the rate stepped up
//! until the projector falls a second behind or the publisher cannot offer it; then the
//! rates held, each for a minute from the highest down, until one holds for that long. The
//! lag is the age of the oldest move published (and acknowledged by JetStream) that the
//! read models do not hold yet, by the service's `/status` checkpoint every 50 ms.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use async_nats::jetstream;
use serde::Serialize;

use crate::feed::{LiveOdds, LogInfo};
use crate::figures::{thousands, verdict};
use crate::scale::Scale;
use crate::service::{Service, Target};
use crate::stall::{Readers, Reads};

/// The rates offered, moves a second, in turn while each is held.
const RATES: [u64; 10] = [
    1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 40_000, 50_000, 75_000, 100_000,
];
/// Goal: the highest rate held at least this.
pub const INGEST_RATE: u64 = 50_000;
/// A rate is held while the lag stays under this.
const LAG: Duration = Duration::from_secs(1);
/// Goal: the reads' p99 at the rate held under this, ms.
pub const INGEST_READS_P99_MS: f64 = 10.0;
/// How many of the rates held are offered for longer, at most.
const HOLD_TRIES: usize = 3;
/// A rate is offered where the publisher sent at least this share of it.
const OFFERED: f64 = 0.95;
/// Acknowledgements awaited at once: the publisher waits beyond it.
const IN_FLIGHT: usize = 8_192;
/// How long after a step's last publish the readers stop where the rate was not held, in
/// the step's lengths (a minute at the full scale).
const GIVE_UP_STEPS: u32 = 6;
/// Longest the service is then given to apply the rest of the step's moves.
const DRAIN: Duration = Duration::from_secs(600);

/// One rate, offered for a while.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Moves a second offered.
    pub rate: u64,
    /// Seconds the publisher took to send them.
    pub publish_secs: f64,
    /// Moves published.
    pub published: u64,
    /// The oldest move published and not yet applied, at its oldest, ms.
    pub max_lag_ms: f64,
    /// Seconds from the last acknowledgement until the service was seen to have applied
    /// every move.
    pub drain_secs: f64,
    /// Whether it had before the readers stopped ([`GIVE_UP_STEPS`] steps' time after the
    /// last publish, where the rate was not held).
    pub drained_under_reads: bool,
    /// The reads meanwhile.
    pub reads: Reads,
}

impl Step {
    /// Moves published a second.
    pub fn published_rate(&self) -> f64 {
        self.published as f64 / self.publish_secs.max(1e-9)
    }

    /// Whether the rate was offered and the projector kept within [`LAG`] of it.
    pub fn held(&self) -> bool {
        self.offered() && self.max_lag_ms < LAG.as_secs_f64() * 1000.0
    }

    /// Whether the publisher sent the rate asked of it.
    fn offered(&self) -> bool {
        self.published_rate() >= OFFERED * self.rate as f64
    }

    /// The step's figures, as the table and the log show them.
    fn describe(&self) -> String {
        format!(
            "{} published a second; lag at worst {} ms, applied {:.1} s after the last{}; \
             reads p50 / p99 / max {:.2} / {:.2} / {:.1} ms ({} reads){}",
            thousands(self.published_rate()),
            thousands(self.max_lag_ms),
            self.drain_secs,
            if self.drained_under_reads {
                String::new()
            } else {
                ", once the readers stopped".to_owned()
            },
            self.reads.p50_ms,
            self.reads.p99_ms,
            self.reads.max_ms,
            thousands(self.reads.requests as f64),
            match (self.offered(), self.held()) {
                (false, _) => "; the publisher could not offer the rate",
                (true, false) => "; not held",
                (true, true) => "",
            }
        )
    }
}

/// What the part measured.
#[derive(Debug, Clone, Serialize)]
pub struct IngestResult {
    /// Documents the readers went round.
    pub documents: usize,
    /// Reader connections.
    pub connections: usize,
    /// The rates offered in turn, the last the first not held.
    pub ladder: Vec<Step>,
    /// The rates held, offered for longer from the highest down until one held (at most
    /// [`HOLD_TRIES`]).
    pub holds: Vec<Step>,
}

impl IngestResult {
    /// The report's rows: each rate offered, for a step and then for longer, and the
    /// highest held for longer against the goals.
    pub fn rows(&self, judged: bool) -> Vec<[String; 7]> {
        let blank = String::new;
        let mut rows: Vec<[String; 7]> = self
            .ladder
            .iter()
            .chain(&self.holds)
            .enumerate()
            .map(|(i, s)| {
                [
                    if i == 0 {
                        format!(
                            "Live ingest: odds moves while {} connections read {} documents",
                            self.connections,
                            thousands(self.documents as f64)
                        )
                    } else {
                        blank()
                    },
                    format!(
                        "{} a second offered for {:.0} s",
                        thousands(s.rate as f64),
                        s.publish_secs
                    ),
                    s.describe(),
                    blank(),
                    blank(),
                    blank(),
                    blank(),
                ]
            })
            .collect();
        let goal = format!(
            "≥ {} a second, lag < {} s, reads p99 < {INGEST_READS_P99_MS} ms",
            thousands(INGEST_RATE as f64),
            LAG.as_secs()
        );
        let held = self.holds.iter().find(|h| h.held());
        let met =
            held.is_some_and(|h| h.rate >= INGEST_RATE && h.reads.p99_ms < INGEST_READS_P99_MS);
        rows.push([
            blank(),
            "the highest rate held for that long; the reads' p99 at it".into(),
            match held {
                Some(h) => format!(
                    "{} a second; {:.2} ms",
                    thousands(h.rate as f64),
                    h.reads.p99_ms
                ),
                None => "none".into(),
            },
            blank(),
            blank(),
            goal,
            verdict(judged, met).into(),
        ]);
        rows
    }
}

/// Runs the part against a service on `store` (caught up).
pub async fn run(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
    work: &Path,
) -> anyhow::Result<IngestResult> {
    let client = reqwest::Client::new();
    let service = Service::start_ready(target, store, "ingest").await?;
    let readers = Readers::of_documents(
        &service,
        &client,
        &target.key,
        work,
        "ingest",
        scale.connections,
    )
    .await?;
    let js = target.feeder_jetstream().await?;
    let mut moves = LiveOdds::new(&log.today)?;
    let offer = |rate, secs| Offer {
        client: &client,
        service: &service,
        readers: &readers,
        js: &js,
        rate,
        secs,
    };
    // A second of moves at the lowest rate first, not counted: JetStream's first publish
    // to a stream after its server started rebuilds the map of the message ids inside the
    // duplicate window, holding the stream meanwhile. The bench's log, published just
    // before the run, lies inside it whole: the full log's 1.1 M hold the projector's
    // consumer some 3 s, which the first step would measure in place of the service.
    offer(RATES[0], 1).run(&mut moves).await?;
    // A pass, so that the figures are of a warm service.
    readers.for_secs(scale.http_secs).await?;
    let mut ladder = Vec::new();
    for rate in RATES {
        let step = offer(rate, scale.ingest_step_secs).run(&mut moves).await?;
        eprintln!(
            "bench:   ingest: {} a second offered: {}",
            thousands(rate as f64),
            step.describe()
        );
        let held = step.held();
        ladder.push(step);
        if !held {
            break;
        }
    }
    // A rate held for a step may not hold for longer: the highest few held, each for
    // longer, from the highest down, until one holds.
    let mut holds = Vec::new();
    let held: Vec<u64> = ladder.iter().filter(|s| s.held()).map(|s| s.rate).collect();
    for &rate in held.iter().rev().take(HOLD_TRIES) {
        let step = offer(rate, scale.ingest_hold_secs).run(&mut moves).await?;
        eprintln!(
            "bench:   ingest: {} a second offered for {} s: {}",
            thousands(rate as f64),
            scale.ingest_hold_secs,
            step.describe()
        );
        let held = step.held();
        holds.push(step);
        if held {
            break;
        }
    }
    let documents = readers.documents;
    drop(readers);
    service.stop().await?;
    Ok(IngestResult {
        documents,
        connections: scale.connections,
        ladder,
        holds,
    })
}

/// A rate offered for `secs` seconds while the readers read.
struct Offer<'a> {
    client: &'a reqwest::Client,
    service: &'a Service,
    readers: &'a Readers<'a>,
    js: &'a jetstream::Context,
    rate: u64,
    secs: u64,
}

impl Offer<'_> {
    /// Publishes `rate` moves a second of `moves` on schedule, follows the service until
    /// it has applied the last, and reads meanwhile.
    async fn run(&self, moves: &mut LiveOdds) -> anyhow::Result<Step> {
        // The moves acknowledged and not yet seen applied: stream sequence and when sent.
        let unapplied = Unapplied::default();
        let (tx, mut rx) = tokio::sync::mpsc::channel(IN_FLIGHT);
        let publish = async move {
            let total = self.rate * self.secs;
            let started = Instant::now();
            let mut sent = 0;
            while sent < total {
                let due = ((started.elapsed().as_secs_f64() * self.rate as f64) as u64).min(total);
                if sent == due {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                }
                for _ in sent..due {
                    let e = moves.next().context("no race has a price that moves")?;
                    let mut headers = async_nats::HeaderMap::new();
                    headers.insert(
                        async_nats::header::NATS_MESSAGE_ID,
                        e.event_id.to_string().as_str(),
                    );
                    let ack = self
                        .js
                        .publish_with_headers(e.subject(), headers, e.to_json().into())
                        .await?;
                    tx.send((Instant::now(), ack))
                        .await
                        .map_err(|_| anyhow::anyhow!("the acknowledgements' reader stopped"))?;
                }
                sent = due;
            }
            anyhow::Ok((sent, started.elapsed().as_secs_f64()))
        };
        let acknowledge = async {
            while let Some((at, ack)) = rx.recv().await {
                let ack: jetstream::context::PublishAckFuture = ack;
                let seq = ack.await?.sequence;
                unapplied.moves.borrow_mut().push_back((seq, at));
            }
            unapplied.all_acknowledged.set(Some(Instant::now()));
            anyhow::Ok(())
        };
        let mut figures = None;
        let reads = self
            .readers
            .during(self.readers.commits().await?, async {
                // A rate not held: the readers stop a while after the last publish, and
                // the rest is applied without them (under reads, a catch-up gives way).
                let give_up = Duration::from_secs(self.secs) * GIVE_UP_STEPS;
                let follow = unapplied.follow(self.client, self.service, Some(give_up));
                figures = Some(tokio::try_join!(publish, acknowledge, follow)?);
                Ok(())
            })
            .await?;
        let ((published, publish_secs), (), (mut max_lag, drained)) =
            figures.context("the step ended without figures")?;
        ensure!(published > 0, "nothing published");
        let drained_under_reads = drained.is_some();
        let drained = match drained {
            Some(at) => at,
            None => {
                let (lag, at) =
                    tokio::time::timeout(DRAIN, unapplied.follow(self.client, self.service, None))
                        .await
                        .context("the moves not applied in time")??;
                max_lag = max_lag.max(lag);
                at.context("followed to the end")?
            }
        };
        let acknowledged = unapplied
            .all_acknowledged
            .get()
            .context("every move acknowledged")?;
        Ok(Step {
            rate: self.rate,
            publish_secs,
            published,
            max_lag_ms: max_lag.as_secs_f64() * 1000.0,
            drain_secs: drained
                .saturating_duration_since(acknowledged)
                .as_secs_f64(),
            drained_under_reads,
            reads,
        })
    }
}

/// The moves of a step acknowledged by JetStream and not yet seen applied.
#[derive(Default)]
struct Unapplied {
    /// Stream sequence and when sent, oldest first.
    moves: RefCell<VecDeque<(u64, Instant)>>,
    /// When the last was acknowledged, once it was.
    all_acknowledged: Cell<Option<Instant>>,
}

impl Unapplied {
    /// Follows the service's checkpoint every 50 ms until it holds every move: the lag
    /// at its worst, and when every move was applied; or, with `give_up`, `None` for
    /// that once it is that long since the last acknowledgement with the lag past
    /// [`LAG`] (the rate not held).
    async fn follow(
        &self,
        client: &reqwest::Client,
        service: &Service,
        give_up: Option<Duration>,
    ) -> anyhow::Result<(Duration, Option<Instant>)> {
        let mut max_lag = Duration::ZERO;
        loop {
            let checkpoint = crate::applying::standing(client, service).await?.checkpoint;
            let now = Instant::now();
            let oldest = {
                let mut moves = self.moves.borrow_mut();
                while moves.front().is_some_and(|(seq, _)| *seq <= checkpoint) {
                    moves.pop_front();
                }
                moves.front().map(|(_, at)| now - *at)
            };
            max_lag = max_lag.max(oldest.unwrap_or_default());
            let acknowledged = self.all_acknowledged.get();
            if oldest.is_none() && acknowledged.is_some() {
                return Ok((max_lag, Some(now)));
            }
            let given_up = give_up
                .zip(acknowledged)
                .is_some_and(|(after, at)| max_lag >= LAG && now - at >= after);
            if given_up {
                return Ok((max_lag, None));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
