//! Reads while the store is being written: document reads at 64 connections, spread over
//! thousands of documents (so that most miss the service's cache of hot documents and
//! read sled), measured with nothing else going on, while `racing rebuild` folds the
//! whole log into a fresh store beside the one in use, and while the projector catches
//! up with a backlog of odds updates published while the service was paused; and the
//! rate at which it applies a live feed that a feeder publishes as `racing publish` does
//! while the readers read.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use futures::StreamExt;
use serde::Serialize;

use crate::applying::{self, Applied};
use crate::feed::LogInfo;
use crate::http::{wrk_command, wrk_failure, Load};
use crate::scale::Scale;
use crate::service::{Service, Target, KEY_HEADER};

/// Most documents the readers go round.
const DOCUMENTS: usize = 20_000;
/// Longest a rebuild or a catch-up is waited for.
const LIMIT: Duration = Duration::from_secs(1800);

/// Read latencies of one phase.
#[derive(Debug, Clone, Serialize)]
pub struct Reads {
    /// Requests answered.
    pub requests: u64,
    /// Seconds the phase lasted.
    pub secs: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// 99.9th percentile, ms.
    pub p999_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
    /// The service's projector's commits during the phase, and its own time answering.
    pub commits: Commits,
}

/// The projector's commits during a phase, from `racing_commit_seconds` on the service's
/// admin listener: each holds sled's process-wide write lock, which every read of the
/// store that misses the cache waits for. (A rebuild's worker commits in a process of its
/// own and is not among them.) With them, the API's answers meanwhile by the service's
/// own clock, which show whether reads waited inside the service.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Commits {
    /// Commits.
    pub count: u64,
    /// Seconds they took in all.
    pub secs: f64,
    /// Those that took more than 5 ms.
    pub over_5ms: u64,
    /// More than 25 ms.
    pub over_25ms: u64,
    /// More than 100 ms.
    pub over_100ms: u64,
    /// Seconds the projector's catch-up paused, giving way to requests
    /// (`racing_projector_paused_seconds`; 0 from a service that does not say).
    pub paused_secs: f64,
    /// The API's answers meanwhile, by the service's own clock
    /// (`racing_http_request_duration_seconds`, every route): from a request's first
    /// poll to its answer. A read that waits for a commit's lock shows here; one that
    /// waits for a core before it is polled does not.
    pub answers: u64,
    /// Those the service took more than 5 ms over.
    pub answers_over_5ms: u64,
    /// More than 25 ms.
    pub answers_over_25ms: u64,
}

impl Commits {
    /// The histogram as the service's `/metrics` shows it now (since it started). Not
    /// while the service is paused: the request would wait for it, up to its timeout.
    async fn read(client: &reqwest::Client, service: &Service) -> anyhow::Result<Commits> {
        let metrics = service.metrics(client).await?;
        let commits = metrics.histogram("racing_commit_seconds", ["0.005", "0.025", "0.1"])?;
        let answers =
            metrics.histogram("racing_http_request_duration_seconds", ["0.005", "0.025"])?;
        Ok(Commits {
            count: commits.count,
            secs: commits.sum,
            over_5ms: commits.over[0],
            over_25ms: commits.over[1],
            over_100ms: commits.over[2],
            paused_secs: metrics.value("racing_projector_paused_seconds")?,
            answers: answers.count,
            answers_over_5ms: answers.over[0],
            answers_over_25ms: answers.over[1],
        })
    }

    /// What happened from `before` to `self`.
    fn since(self, before: Commits) -> Commits {
        Commits {
            count: self.count.saturating_sub(before.count),
            secs: (self.secs - before.secs).max(0.0),
            over_5ms: self.over_5ms.saturating_sub(before.over_5ms),
            over_25ms: self.over_25ms.saturating_sub(before.over_25ms),
            over_100ms: self.over_100ms.saturating_sub(before.over_100ms),
            paused_secs: (self.paused_secs - before.paused_secs).max(0.0),
            answers: self.answers.saturating_sub(before.answers),
            answers_over_5ms: self
                .answers_over_5ms
                .saturating_sub(before.answers_over_5ms),
            answers_over_25ms: self
                .answers_over_25ms
                .saturating_sub(before.answers_over_25ms),
        }
    }
}

/// What the part measured.
#[derive(Debug, Clone, Serialize)]
pub struct StallResult {
    /// Documents the readers went round.
    pub documents: usize,
    /// Reader connections.
    pub connections: usize,
    /// Reads with nothing else going on.
    pub idle: Reads,
    /// The rebuild phase (none if skipped).
    pub rebuild: Option<RebuildReads>,
    /// Reads with nothing published right after the rebuild's swap (none if skipped).
    pub after_swap: Option<Reads>,
    /// Reads while a snapshot of the store was written and sent, and how long that took.
    pub snapshot: Option<(Reads, f64)>,
    /// Odds updates published while the service was paused, in each catch-up round.
    pub backlog: u64,
    /// Reads from the service going on until it had applied the backlog, a round each.
    pub catchups: Vec<Reads>,
    /// A live feed applied while the readers read.
    pub live_feed: Option<LiveFeed>,
}

/// A live feed applied while the readers read ([`crate::applying`]).
#[derive(Debug, Clone, Serialize)]
pub struct LiveFeed {
    /// What the service made of it.
    #[serde(flatten)]
    pub applied: Applied,
    /// The reads meanwhile.
    pub reads: Reads,
}

/// Reads while `racing rebuild` ran, and the rebuild.
#[derive(Debug, Clone, Serialize)]
pub struct RebuildReads {
    /// From its start, for a minute and a half or until its swap.
    pub reads: Reads,
    /// Seconds the rebuild took, from its start to its swap (under the read load while
    /// the reads last).
    pub secs: f64,
    /// The share of the log the rebuild had folded when the reads ended.
    pub share_under_reads: f64,
    /// Seconds the service held the rebuild's worker stopped, giving its CPU to the
    /// requests (`held_secs` of `GET /rebuild`; 0 from a service that does not say).
    pub held_secs: f64,
}

impl StallResult {
    /// The catch-up round of the median p99.
    pub fn median_catchup(&self) -> Option<&Reads> {
        let mut rounds: Vec<&Reads> = self.catchups.iter().collect();
        rounds.sort_by(|a, b| a.p99_ms.total_cmp(&b.p99_ms));
        rounds.get(rounds.len() / 2).copied()
    }
}

/// Runs the part against a service on `store` (caught up).
pub async fn run(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
    work: &Path,
    with_rebuild: bool,
) -> anyhow::Result<StallResult> {
    let client = reqwest::Client::new();
    let service = Service::start_ready(target, store, "stall").await?;
    let readers = Readers::of_documents(
        &service,
        &client,
        &target.key,
        work,
        "stall",
        scale.connections,
    )
    .await?;

    // Two passes first, so that the idle figure is of a warm service.
    readers.for_secs(scale.http_secs).await?;
    let idle = readers.for_secs(2 * scale.http_secs).await?;
    report("idle", &idle);

    let rebuild = if with_rebuild {
        Some(rebuild_phase(&client, &service, &readers, scale).await?)
    } else {
        None
    };
    // Right after a rebuild's swap, with nothing published: what the swap leaves to do (the
    // replaced store closed and removed, the fresh one's cache filling) apart from a
    // catch-up's writes, which the rounds below measure.
    let after_swap = if with_rebuild {
        let reads = readers.for_secs(2 * scale.http_secs).await?;
        report("right after the rebuild's swap", &reads);
        Some(reads)
    } else {
        None
    };

    // While a snapshot is written from the store in use (a frozen view of it, compressed
    // on a thread at the least priority) and sent: what the writer's share of the
    // machine costs the reads. Over the whole of it, or its first seconds where the scale
    // says (under 64 connections' reads, a tiny run's once took half a minute in CI).
    let snapshot = {
        let window = scale.snapshot_read_secs.map(Duration::from_secs);
        let mut create = std::pin::pin!(crate::snapshot::create(&client, &service));
        let mut created = None;
        let reads = readers
            .during(readers.commits().await?, async {
                match window {
                    None => created = Some((&mut create).await?),
                    Some(window) => tokio::select! {
                        done = &mut create => created = Some(done?),
                        () = tokio::time::sleep(window) => {}
                    },
                }
                Ok(())
            })
            .await?;
        let created = match created {
            Some(created) => created,
            None => create.await?,
        };
        let took = created.write_secs + created.send_secs;
        report(
            &format!("while a snapshot is written ({took:.1} s)"),
            &reads,
        );
        Some((reads, took))
    };

    let count = usize::try_from(scale.live_rate * scale.outage_secs)?;
    let mut catchups = Vec::with_capacity(scale.catchup_rounds);
    let mut backlog = 0;
    for round in 0..scale.catchup_rounds {
        // Each round's updates anew (their event ids are the round's own).
        let updates = crate::feed::live_odds(&log.today, count)?;
        let last = updates.last().context("no update to publish")?;
        let (date, race) = match &last.event {
            racing_events::Event::OddsUpdated(o) => (o.date.clone(), o.race_number),
            other => bail!("the live odds are {other:?}"),
        };
        // Counted from before the pause: a paused service answers nothing.
        let before = readers.commits().await?;
        service.pause()?;
        // (Should publishing fail, the paused service is killed when dropped.)
        let (published, last_seq) = crate::catchup::publish_all(target, updates).await?;
        backlog = published;
        let odds = format!("/api/v1/odds/{date}/{race}");
        // Resumed inside the phase, so that the readers are there from the catch-up's start.
        let catchup = readers
            .during(before, async {
                service.resume()?;
                caught_up(&client, &service, &target.key, &odds, last_seq).await
            })
            .await?;
        report(
            &format!("while catching up {backlog} updates (round {})", round + 1),
            &catchup,
        );
        catchups.push(catchup);
    }
    // A live feed as fast as a feeder publishes it: the rate the service applies events at
    // while it answers the readers, and how far it falls behind meanwhile.
    let mut events = crate::feed::season_ahead(&log.today, scale.ticks_per_race)?;
    if let Some(limit) = scale.live_feed_events {
        // The season's first events: cards before their results, as the whole season.
        events.truncate(limit);
    }
    let mut applied = None;
    let reads = readers
        .during(readers.commits().await?, async {
            applied = Some(applying::publish_and_follow(&client, &service, target, &events).await?);
            Ok(())
        })
        .await?;
    let live_feed = applied.map(|applied| LiveFeed { applied, reads });
    if let Some(LiveFeed { applied: a, reads }) = &live_feed {
        report(
            &format!(
                "while a feeder publishes {} events live: applied in {:.1} s ({:.0} a second), \
                 published in {:.1} s, at most {} behind, not ready for {:.1} s",
                a.events,
                a.applied_secs,
                a.rate(),
                a.publish_secs,
                a.max_lag,
                a.unready_secs
            ),
            reads,
        );
    }
    let documents = readers.documents;
    service.stop().await?;
    Ok(StallResult {
        documents,
        connections: scale.connections,
        idle,
        rebuild,
        after_swap,
        snapshot,
        backlog,
        catchups,
        live_feed,
    })
}

/// Reads while `racing rebuild` runs. A rebuild under full read load takes many minutes:
/// the reads are measured over its first part (its batches are alike from start to end),
/// then it is waited for.
async fn rebuild_phase(
    client: &reqwest::Client,
    service: &Service,
    readers: &Readers<'_>,
    scale: &Scale,
) -> anyhow::Result<RebuildReads> {
    let started = Instant::now();
    let window = Duration::from_secs(scale.rebuild_read_secs);
    // Started inside the phase, so that the readers are there from its first batch.
    let reads = readers
        .during(readers.commits().await?, async {
            start_rebuild(client, service).await?;
            rebuilt(client, service, window).await?;
            Ok(())
        })
        .await?;
    report("during a rebuild", &reads);
    let under_reads = rebuild_status(client, service).await?;
    let share_under_reads = if under_reads.state == "done" {
        1.0
    } else {
        under_reads.checkpoint as f64 / under_reads.stream_last_seq.max(1) as f64
    };
    ensure!(
        rebuilt(client, service, LIMIT).await?,
        "the rebuild took over {LIMIT:?}"
    );
    let secs = started.elapsed().as_secs_f64();
    let held_secs = rebuild_status(client, service).await?.held_secs;
    eprintln!(
        "bench:   stall: the rebuild took {secs:.1} s, {:.0}% of it done when the \
         reads ended, its worker held stopped for {held_secs:.1} s",
        share_under_reads * 100.0
    );
    Ok(RebuildReads {
        reads,
        secs,
        share_under_reads,
        held_secs,
    })
}

fn report(phase: &str, r: &Reads) {
    let c = &r.commits;
    eprintln!(
        "bench:   stall {phase}: {} reads in {:.1} s; p50 {:.2} ms p99 {:.2} ms p99.9 {:.2} ms max {:.2} ms; \
         {} commits, {:.2} s in all, over 5 / 25 / 100 ms: {} / {} / {}; the projector paused {:.1} s; \
         answers over 5 / 25 ms by the service's clock: {} / {} of {}",
        r.requests, r.secs, r.p50_ms, r.p99_ms, r.p999_ms, r.max_ms,
        c.count, c.secs, c.over_5ms, c.over_25ms, c.over_100ms, c.paused_secs,
        c.answers_over_5ms, c.answers_over_25ms, c.answers
    );
}

/// The paths of up to [`DOCUMENTS`] documents, from the change feed (every document
/// kind: profiles, forms, cards, results, odds), spread over the whole log.
async fn documents(
    client: &reqwest::Client,
    service: &Service,
    key: &str,
) -> anyhow::Result<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Page {
        changes: Vec<Change>,
        /// A `seq`, or `"SEQ.N"` where the page ended inside one `seq`'s changes.
        next: Option<serde_json::Value>,
    }
    #[derive(serde::Deserialize)]
    struct Change {
        path: String,
    }
    let mut all = std::collections::BTreeSet::new();
    let mut since = "0".to_owned();
    loop {
        let page: Page = client
            .get(service.url(&format!("/api/v1/changes?since={since}&limit=10000")))
            .header(KEY_HEADER, key)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        all.extend(page.changes.into_iter().map(|c| c.path));
        let next = match page.next {
            Some(serde_json::Value::Number(n)) => n.to_string(),
            Some(serde_json::Value::String(s)) => s,
            _ => break,
        };
        if next == since {
            break;
        }
        since = next;
    }
    ensure!(!all.is_empty(), "the change feed names no document");
    // Every n-th, so that each kind and every season is among them; only those that
    // answer 200 now (a retraction removed some).
    let step = all.len().div_ceil(DOCUMENTS);
    let asked = all.into_iter().step_by(step).map(|path| async move {
        let r = client
            .get(service.url(&path))
            .header(KEY_HEADER, key)
            .send()
            .await?;
        anyhow::Ok((r.status() == 200).then_some(path))
    });
    let answered: Vec<Option<String>> = futures::stream::iter(asked)
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    let paths: Vec<String> = answered.into_iter().flatten().collect();
    // The readers' script takes them in turn, modulo their number.
    ensure!(
        !paths.is_empty(),
        "no document of the change feed answers 200"
    );
    Ok(paths)
}

/// Starts a rebuild on the admin listener.
async fn start_rebuild(client: &reqwest::Client, service: &Service) -> anyhow::Result<()> {
    let started = client.post(service.admin_url("/rebuild")).send().await?;
    ensure!(
        started.status() == 202,
        "POST /rebuild: {}",
        started.status()
    );
    Ok(())
}

/// What `GET /rebuild` says, of what the part uses.
#[derive(serde::Deserialize)]
struct RebuildStatus {
    state: String,
    error: Option<String>,
    checkpoint: u64,
    stream_last_seq: u64,
    #[serde(default)]
    held_secs: f64,
}

async fn rebuild_status(
    client: &reqwest::Client,
    service: &Service,
) -> anyhow::Result<RebuildStatus> {
    Ok(client
        .get(service.admin_url("/rebuild"))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?)
}

/// Waits up to `limit` for the rebuild under way to swap its store in; whether it did.
async fn rebuilt(
    client: &reqwest::Client,
    service: &Service,
    limit: Duration,
) -> anyhow::Result<bool> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let status = rebuild_status(client, service).await?;
        match status.state.as_str() {
            "done" => return Ok(true),
            "failed" => bail!("the rebuild failed: {:?}", status.error),
            _ => {}
        }
    }
    Ok(false)
}

/// Waits until the odds at `path` are those of `seq` or later (`Racing-Seq`).
async fn caught_up(
    client: &reqwest::Client,
    service: &Service,
    key: &str,
    path: &str,
    seq: u64,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + LIMIT;
    loop {
        let r = client
            .get(service.url(path))
            .header(KEY_HEADER, key)
            .send()
            .await?;
        let at = r
            .headers()
            .get("racing-seq")
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if at.is_some_and(|at| at >= seq) {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "not caught up after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Readers of the documents at `paths`: `wrk` with two threads and `connections`
/// connections, each asking for the next document of the list in turn (a Lua script),
/// for as long as a phase lasts; stopped with SIGINT, on which it reports.
pub(crate) struct Readers<'a> {
    service: &'a Service,
    /// For the service's metrics, before and after.
    client: &'a reqwest::Client,
    script: std::path::PathBuf,
    connections: usize,
    /// How many documents they go round.
    pub documents: usize,
}

impl<'a> Readers<'a> {
    /// Readers of up to [`DOCUMENTS`] documents of the change feed, their list and script
    /// written in `work` under `label`.
    pub async fn of_documents(
        service: &'a Service,
        client: &'a reqwest::Client,
        key: &str,
        work: &Path,
        label: &str,
        connections: usize,
    ) -> anyhow::Result<Readers<'a>> {
        let paths = documents(client, service, key).await?;
        eprintln!(
            "bench:   {label}: {} documents, {connections} connections",
            paths.len()
        );
        std::fs::create_dir_all(work)?;
        let paths_file = work.join(format!("{label}-paths.txt"));
        std::fs::write(&paths_file, paths.join("\n") + "\n")?;
        let script_file = work.join(format!("{label}.lua"));
        std::fs::write(&script_file, script(key, &paths_file))?;
        Ok(Readers {
            service,
            client,
            script: script_file,
            connections,
            documents: paths.len(),
        })
    }

    /// The projector's commits so far, to give [`Readers::during`] as its phase's start.
    pub async fn commits(&self) -> anyhow::Result<Commits> {
        Commits::read(self.client, self.service).await
    }

    /// Reads for `secs` seconds with nothing else asked of the service.
    pub async fn for_secs(&self, secs: u64) -> anyhow::Result<Reads> {
        self.during(self.commits().await?, async {
            tokio::time::sleep(Duration::from_secs(secs)).await;
            Ok(())
        })
        .await
    }

    /// Reads until `phase` ends, counting the commits made since `before`. Any answer but
    /// a 200 or a socket error fails the part.
    pub async fn during(
        &self,
        before: Commits,
        phase: impl std::future::Future<Output = anyhow::Result<()>>,
    ) -> anyhow::Result<Reads> {
        let started = Instant::now();
        // Stopped when the phase ends; its length bounds it if that never comes.
        let load = Load::new(2, self.connections, LIMIT.as_secs() + 60);
        let wrk = wrk_command(
            &load,
            Duration::from_secs(10),
            &self.script,
            &self.service.url("/"),
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("running wrk (apt-get install wrk)")?;
        let ended = phase.await;
        let secs = started.elapsed().as_secs_f64();
        let pid = wrk.id().and_then(|p| i32::try_from(p).ok());
        let interrupt = || {
            if let Some(pid) = pid {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGINT,
                );
            }
        };
        // One SIGINT once went unheard: wrk ran on past a 30 s wait (a tiny run's
        // catch-up, whose phase ends within moments of wrk's start). wrk sets its handler
        // only once its threads are up, and its run ends when its main thread's sleep is
        // interrupted; which of these lost the signal was not located. So it is asked
        // again until it stops. (Its pid stays its own until it is waited for.)
        let mut stopped = std::pin::pin!(wrk.wait_with_output());
        let deadline = Instant::now() + Duration::from_secs(30);
        let out = loop {
            interrupt();
            match tokio::time::timeout(Duration::from_millis(250), &mut stopped).await {
                Ok(out) => break out?,
                Err(_) => ensure!(Instant::now() < deadline, "wrk did not stop"),
            }
        };
        ended?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut reads = parse(&text, secs).with_context(|| format!("wrk:\n{text}"))?;
        reads.commits = self.commits().await?.since(before);
        Ok(reads)
    }
}

/// Requests, and the percentiles the script prints (`p50 <us>`...), from wrk's output.
fn parse(text: &str, secs: f64) -> anyhow::Result<Reads> {
    let mut reads = Reads {
        requests: 0,
        secs,
        p50_ms: f64::NAN,
        p99_ms: f64::NAN,
        p999_ms: f64::NAN,
        max_ms: f64::NAN,
        commits: Commits::default(),
    };
    for line in text.lines().map(str::trim) {
        if let Some(failure) = wrk_failure(line) {
            return Err(failure);
        }
        let mut words = line.split_whitespace();
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let ms = || value.parse::<f64>().map(|us| us / 1000.0);
        match name {
            "requests" => reads.requests = value.parse()?,
            "p50" => reads.p50_ms = ms()?,
            "p99" => reads.p99_ms = ms()?,
            "p99.9" => reads.p999_ms = ms()?,
            "max" => reads.max_ms = ms()?,
            "errors" if line.split_whitespace().skip(1).any(|n| n != "0") => {
                bail!("errors (connect, read, write, status, timeout): {line}")
            }
            _ => {}
        }
    }
    ensure!(reads.requests > 0, "no request answered");
    Ok(reads)
}

/// The Lua script of the readers: the key header, the paths from `paths_file` (one a
/// line) in turn, and the figures printed at the end in microseconds.
fn script(key: &str, paths_file: &Path) -> String {
    format!(
        r#"wrk.headers["{KEY_HEADER}"] = "{key}"
local paths = {{}}
for line in io.lines("{file}") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
done = function(summary, latency, requests)
  io.write(string.format("requests %d\n", summary.requests))
  io.write(string.format("p50 %d\np99 %d\np99.9 %d\nmax %d\n",
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
  io.write(string.format("errors %d %d %d %d %d\n", summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
"#,
        file = paths_file.display()
    )
}
