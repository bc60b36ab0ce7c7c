//! The results: one table of medians, ratios and goals (the one BENCHMARKS.md shows),
//! printed and written with every run's raw figures as JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::beside::BesideResult;
use crate::catchup::CatchupResult;
use crate::feed::LogInfo;
use crate::figures::{median, thousands, verdict};
use crate::floor::FloorResult;
use crate::http::EndpointResult;
use crate::ids::IdsResult;
use crate::ingest::IngestResult;
use crate::live::{LiveResult, LiveRound, MemoryResult};
use crate::push::PushResult;
use crate::replay::{ReplayResult, StartupResult};
use crate::scale::Scale;
use crate::snapshot::SnapshotResult;
use crate::stall::StallResult;

/// Replay: at least this share of the raw consumer's events/s.
pub const REPLAY_RATIO: f64 = 0.25;
/// The replay on two CPUs against one: at least this much faster.
pub const REPLAY_SCALING: f64 = 1.6;
/// The read models after the replay against the log's payloads: at most this many times.
pub const STORE_RATIO: f64 = 2.0;
/// Bytes the replay writes to storage per event: at most this many.
pub const WRITTEN_PER_EVENT: u64 = 2_000;
/// Start-up to ready on a caught-up store, under this, seconds.
pub const STARTUP_SECS: f64 = 1.0;
/// Live odds publish-to-client p99 under this, ms.
pub const LIVE_P99_MS: f64 = 25.0;
/// Live odds p99 at most this times the peer's (nats-server's own WebSocket fan-out of
/// the same updates to as many clients, in the same run): no worse.
pub const LIVE_PEER_RATIO: f64 = 1.0;
/// Document reads while a rebuild runs or the projector catches up: p99 under this, ms.
pub const STALL_P99_MS: f64 = 5.0;
/// Resident memory per idle connection under this, bytes.
pub const IDLE_BYTES: f64 = 20.0 * 1024.0;

/// The machine the figures come from.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// Cores the process may use.
    pub cores: usize,
    /// Total memory, GiB.
    pub memory_gib: f64,
    /// `model name` of the first CPU.
    pub cpu: String,
    /// Kernel release.
    pub kernel: String,
}

impl Machine {
    /// This machine.
    pub fn here() -> Machine {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let kib: f64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0.0);
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Machine {
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_gib: kib / 1024.0 / 1024.0,
            cpu: cpuinfo
                .lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
                .unwrap_or_default(),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_owned(),
        }
    }
}

/// Everything one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// When (UTC).
    pub at: String,
    /// The service's commit.
    pub revision: String,
    /// The settings given with `--service-env`, `NAME=VALUE` each.
    pub settings: Vec<String>,
    /// Where.
    pub machine: Machine,
    /// At what scale.
    pub scale: Scale,
    /// The generated log.
    pub log: LogInfo,
    /// HTTP reads.
    pub http: Option<Vec<EndpointResult>>,
    /// Today's card alone and beside records by condition of fresh spans.
    pub beside: Option<BesideResult>,
    /// Replay.
    pub replay: Option<ReplayResult>,
    /// sled's floor.
    pub floor: Option<FloorResult>,
    /// A snapshot, and replicas ready through it and through a replay.
    pub snapshot: Option<SnapshotResult>,
    /// Start-up.
    pub startup: Option<StartupResult>,
    /// Idle connection memory.
    pub memory: Option<MemoryResult>,
    /// Live odds: the service and its peer, round by round.
    pub live: Option<Vec<LiveRound>>,
    /// Live clients through a catch-up after an outage.
    pub catchup: Option<CatchupResult>,
    /// Webhooks, and the event stream against the socket.
    pub push: Option<PushResult>,
    /// Document reads while the store is written.
    pub stall: Option<StallResult>,
    /// Odds moves applied live while documents are read.
    pub ingest: Option<IngestResult>,
    /// Applied event ids at scale.
    pub ids: Option<IdsResult>,
}

/// The live part's rows: the service against its peer, medians of the rounds.
fn live_rows(rounds: &[LiveRound], judged: bool, cores: usize) -> Vec<[String; 7]> {
    let Some(first) = rounds.first() else {
        return Vec::new();
    };
    let n = rounds.len();
    type Side = fn(&LiveRound) -> &LiveResult;
    let med = |side: Side, f: fn(&LiveResult) -> f64| median(rounds.iter().map(|r| f(side(r))));
    let (ours, peer): (Side, Side) = (|r| &r.service, |r| &r.peer);
    let latency = |side: Side| {
        format!(
            "{:.2} / {:.2} / {:.1}",
            med(side, |l| l.p50_ms),
            med(side, |l| l.p99_ms),
            med(side, |l| l.max_ms)
        )
    };
    let first_client = |side: Side| {
        format!(
            "{:.2} / {:.1}",
            med(side, |l| l.first_p99_ms),
            med(side, |l| l.first_max_ms)
        )
    };
    let delivered = |side: Side| {
        let (received, expected) = rounds
            .iter()
            .map(side)
            .fold((0, 0), |(r, e), l| (r + l.received, e + l.expected));
        format!(
            "{} ({} of {})",
            thousands(med(side, |l| l.delivered_per_sec)),
            thousands(received as f64),
            thousands(expected as f64)
        )
    };
    // The two sides of a round ran one after the other on the same machine: as for
    // HTTP, the ratio is the median of the rounds' ratios.
    let p99_ratio = median(rounds.iter().map(|r| r.service.p99_ms / r.peer.p99_ms));
    let p99 = med(ours, |l| l.p99_ms);
    let all_delivered = rounds
        .iter()
        .all(|r| r.service.received == r.service.expected);
    let l = &first.service;
    let offered = (l.clients as u64 * l.rate) as f64;
    vec![
        [
            format!(
                "Live odds ({} clients × {}/s, {} updates); baseline: nats-server's WebSocket",
                thousands(l.clients as f64),
                l.rate,
                thousands(l.published as f64)
            ),
            format!(
                "publish to client p50 / p99 / max ms, median of {n}; ratio: median of the rounds' p99 ratios"
            ),
            latency(ours),
            latency(peer),
            format!("{p99_ratio:.2}"),
            format!("p99 < {LIVE_P99_MS} ms and ≤ {LIVE_PEER_RATIO:.2} × nats-server's"),
            verdict(
                judged,
                p99 < LIVE_P99_MS && p99_ratio <= LIVE_PEER_RATIO && all_delivered,
            )
            .into(),
        ],
        [
            String::new(),
            format!(
                "frames delivered/s of {} offered, median (received of expected, all rounds)",
                thousands(offered)
            ),
            delivered(ours),
            delivered(peer),
            format!(
                "{:.2}",
                median(
                    rounds
                        .iter()
                        .map(|r| r.service.delivered_per_sec / r.peer.delivered_per_sec)
                )
            ),
            String::new(),
            String::new(),
        ],
        [
            String::new(),
            "publish to each update's first client, p99 / max ms, median: the path all clients share; ours: the updates handed to the sessions over 25 ms after they were stored (all rounds)".into(),
            format!(
                "{}; {} of {}",
                first_client(ours),
                thousands(rounds.iter().map(|r| r.service.handed_off_over_25ms).sum::<u64>() as f64),
                thousands(rounds.iter().map(|r| r.service.handed_off).sum::<u64>() as f64)
            ),
            first_client(peer),
            format!(
                "{:.2}",
                median(
                    rounds
                        .iter()
                        .map(|r| r.service.first_p99_ms / r.peer.first_p99_ms)
                )
            ),
            String::new(),
            String::new(),
        ],
        [
            String::new(),
            "CPU while publishing, % of a core, median: server; clients".into(),
            format!(
                "{:.0} + {:.0} (service + nats-server); {:.0}",
                med(ours, |l| l.service_cpu_pct),
                med(ours, |l| l.nats_cpu_pct),
                med(ours, |l| l.clients_cpu_pct)
            ),
            format!(
                "{:.0} (nats-server); {:.0}",
                med(peer, |l| l.nats_cpu_pct),
                med(peer, |l| l.clients_cpu_pct)
            ),
            format!(
                "{:.2}",
                median(rounds.iter().map(|r| (r.service.service_cpu_pct
                    + r.service.nats_cpu_pct)
                    / r.peer.nats_cpu_pct))
            ),
            format!(
                "machine {:.0} / {:.0} of {}",
                med(ours, |l| l.machine_cpu_pct),
                med(peer, |l| l.machine_cpu_pct),
                100 * cores
            ),
            String::new(),
        ],
    ]
}

impl Report {
    /// The goals that failed, by name.
    pub fn failures(&self) -> Vec<String> {
        let mut part = String::new();
        let mut failed = Vec::new();
        for r in self.rows() {
            if !r[0].is_empty() {
                part.clone_from(&r[0]);
            }
            if r[6] == "FAIL" {
                failed.push(format!("{part}: {}", r[5]));
            }
        }
        failed
    }

    /// Rows of the table: part, measure, racing, baseline, ratio, goal, verdict.
    fn rows(&self) -> Vec<[String; 7]> {
        let judged = self.scale.name != "tiny";
        let mut rows = Vec::new();
        if let Some(http) = &self.http {
            for e in http {
                rows.extend(e.rows(judged, self.scale.connections));
            }
        }
        if let Some(b) = &self.beside {
            rows.push(b.row(judged));
        }
        if let Some(r) = &self.replay {
            let (svc, raw) = (
                median(r.service_secs.iter().copied()),
                median(r.raw_secs.iter().copied()),
            );
            let n = r.events as f64;
            let ratio = raw / svc;
            rows.push([
                format!("Replay ({} events)", thousands(n)),
                format!("events/s, median of {}", r.service_secs.len()),
                thousands(n / svc),
                thousands(n / raw),
                format!("{ratio:.2}"),
                format!("≥ {REPLAY_RATIO:.2} × raw consumer"),
                verdict(judged, ratio >= REPLAY_RATIO).into(),
            ]);
            if !r.one_core_secs.is_empty() {
                let one = median(r.one_core_secs.iter().copied());
                rows.push([
                    String::new(),
                    format!(
                        "events/s on one CPU (taskset), median of {}; all CPUs over one",
                        r.one_core_secs.len()
                    ),
                    thousands(n / one),
                    String::new(),
                    format!("{:.2}", one / svc),
                    format!("≥ {REPLAY_SCALING:.1} × one CPU on two"),
                    verdict(judged, one / svc >= REPLAY_SCALING).into(),
                ]);
            }
            rows.push([
                String::new(),
                "peak resident memory by caught up, MiB, median".into(),
                format!(
                    "{:.0}",
                    median(r.peak_rss_kib.iter().map(|k| *k as f64 / 1024.0))
                ),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
            rows.push([
                String::new(),
                "seconds, start to caught up".into(),
                format!("{svc:.1}"),
                format!("{raw:.1}"),
                String::new(),
                String::new(),
                String::new(),
            ]);
            rows.push([
                String::new(),
                "read models on disk after the replay, MiB (bytes per event); log's payloads, MiB"
                    .into(),
                format!(
                    "{:.1} ({:.0})",
                    r.store_bytes as f64 / (1 << 20) as f64,
                    r.store_bytes as f64 / n.max(1.0)
                ),
                format!("{:.1}", r.log_bytes as f64 / (1 << 20) as f64),
                format!("{:.2}", r.store_bytes as f64 / r.log_bytes.max(1) as f64),
                format!("≤ {STORE_RATIO:.1} × the log"),
                verdict(
                    judged,
                    r.store_bytes as f64 <= STORE_RATIO * r.log_bytes as f64,
                )
                .into(),
            ]);
            let per_event = |bytes: &[u64]| median(bytes.iter().map(|b| *b as f64 / n.max(1.0)));
            let written = per_event(&r.written_bytes);
            rows.push([
                String::new(),
                "bytes written to storage per event, median (of them cancelled: files removed before written back); service CPU s".into(),
                format!(
                    "{:.0} ({:.0}); {:.1}",
                    written,
                    per_event(&r.cancelled_bytes),
                    median(r.cpu_secs.iter().copied())
                ),
                String::new(),
                String::new(),
                format!("≤ {WRITTEN_PER_EVENT} bytes an event"),
                verdict(judged, written <= WRITTEN_PER_EVENT as f64).into(),
            ]);
        }
        if let Some(f) = &self.floor {
            rows.extend(f.rows(judged));
        }
        if let Some(s) = &self.snapshot {
            rows.extend(s.rows(self.floor.as_ref(), judged));
        }
        if let Some(s) = &self.startup {
            let med = median(s.secs.iter().copied());
            let max = s.secs.iter().copied().fold(f64::NAN, f64::max);
            rows.push([
                format!("Start-up ({} events projected)", thousands(s.events as f64)),
                format!("start to first 200, median of {} (max)", s.secs.len()),
                format!("{med:.3} s ({max:.3})"),
                String::new(),
                String::new(),
                format!("< {STARTUP_SECS} s"),
                verdict(judged, med < STARTUP_SECS).into(),
            ]);
        }
        if let Some(rounds) = &self.live {
            rows.extend(live_rows(rounds, judged, self.machine.cores));
        }
        if let Some(c) = &self.catchup {
            rows.push([
                format!(
                    "Catch-up ({} clients, {} updates: {} s at the live rate)",
                    thousands(c.clients as f64),
                    thousands(c.updates as f64),
                    c.outage_secs
                ),
                "clients closed; at the latest prices, resume to p50 / max s".into(),
                format!(
                    "{} closed; {} at latest, {:.2} / {:.2} s",
                    c.closed, c.caught_up, c.p50_secs, c.max_secs
                ),
                String::new(),
                String::new(),
                "none closed".into(),
                verdict(judged, c.closed == 0 && c.caught_up == c.clients).into(),
            ]);
            rows.push([
                String::new(),
                "frames after resuming: odds, snapshots; service RSS before, peak".into(),
                format!(
                    "{}, {}; {} → {} MiB",
                    thousands(c.odds_frames as f64),
                    thousands(c.snapshot_frames as f64),
                    c.service_rss_before_kib / 1024,
                    c.service_peak_rss_kib / 1024
                ),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        if let Some(p) = &self.push {
            rows.extend(p.rows(judged));
        }
        if let Some(st) = &self.stall {
            let mut phases = vec![("idle".to_owned(), &st.idle, false)];
            if let Some(rb) = &st.rebuild {
                phases.push((
                    format!(
                        "during `racing rebuild` ({:.0} s in all; {:.0}% of it done as the \
                         reads ended, its worker held {:.0} s)",
                        rb.secs,
                        rb.share_under_reads * 100.0,
                        rb.held_secs
                    ),
                    &rb.reads,
                    true,
                ));
            }
            if let Some(r) = &st.after_swap {
                phases.push((
                    "right after the rebuild's swap, nothing published".to_owned(),
                    r,
                    false,
                ));
            }
            if let Some((r, secs)) = &st.snapshot {
                phases.push((
                    format!("while a snapshot is written and sent ({secs:.1} s)"),
                    r,
                    true,
                ));
            }
            if let Some(median) = st.median_catchup() {
                let p99s: Vec<String> = st
                    .catchups
                    .iter()
                    .map(|r| format!("{:.2}", r.p99_ms))
                    .collect();
                phases.push((
                    format!(
                        "catching up {} updates ({:.1} s), the round of the median p99 of {} ({} ms)",
                        thousands(st.backlog as f64),
                        median.secs,
                        st.catchups.len(),
                        p99s.join(" / ")
                    ),
                    median,
                    true,
                ));
            }
            if let Some(f) = &st.live_feed {
                let a = &f.applied;
                phases.push((
                    format!(
                        "while a feeder publishes {} events live, {} in flight: applied at {} \
                         a second ({:.1} s; published in {:.1} s), at most {} behind, not \
                         ready {:.1} s",
                        thousands(a.events as f64),
                        racing::publish::IN_FLIGHT,
                        thousands(a.rate()),
                        a.applied_secs,
                        a.publish_secs,
                        thousands(a.max_lag as f64),
                        a.unready_secs
                    ),
                    &f.reads,
                    true,
                ));
            }
            for (i, (phase, r, goal)) in phases.into_iter().enumerate() {
                rows.push([
                    if i == 0 {
                        format!(
                            "Reads while writing ({} documents, {} connections)",
                            thousands(st.documents as f64),
                            st.connections
                        )
                    } else {
                        String::new()
                    },
                    format!(
                        "{phase}: p50 / p99 / max ms ({} reads)",
                        thousands(r.requests as f64)
                    ),
                    format!("{:.2} / {:.2} / {:.1}", r.p50_ms, r.p99_ms, r.max_ms),
                    String::new(),
                    if goal {
                        format!("{:.2}", r.p99_ms / st.idle.p99_ms)
                    } else {
                        String::new()
                    },
                    if goal {
                        format!("p99 < {STALL_P99_MS} ms")
                    } else {
                        String::new()
                    },
                    if goal {
                        verdict(judged, r.p99_ms < STALL_P99_MS).into()
                    } else {
                        String::new()
                    },
                ]);
                if goal {
                    let c = &r.commits;
                    rows.push([
                        String::new(),
                        "the projector's commits meanwhile: how many (seconds in all); over 5 / 25 / 100 ms; its pauses for requests, s; answers over 5 / 25 ms by the service's own clock".into(),
                        format!(
                            "{} ({:.2} s); {} / {} / {}; {:.1}; {} / {}",
                            thousands(c.count as f64),
                            c.secs,
                            c.over_5ms,
                            c.over_25ms,
                            c.over_100ms,
                            c.paused_secs,
                            thousands(c.answers_over_5ms as f64),
                            thousands(c.answers_over_25ms as f64)
                        ),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]);
                }
            }
        }
        if let Some(m) = &self.memory {
            rows.push([
                format!("Idle connections ({})", thousands(m.connections as f64)),
                "service RSS per connection".into(),
                format!(
                    "{:.1} KiB ({} → {} MiB)",
                    m.per_connection_bytes / 1024.0,
                    m.rss_before_kib / 1024,
                    m.rss_after_kib / 1024
                ),
                String::new(),
                String::new(),
                format!("< {} KiB", IDLE_BYTES / 1024.0),
                verdict(judged, m.per_connection_bytes < IDLE_BYTES).into(),
            ]);
        }
        if let Some(i) = &self.ingest {
            rows.extend(i.rows(judged));
        }
        if let Some(i) = &self.ids {
            rows.extend(i.rows(judged));
        }
        rows
    }

    /// The table, in Markdown; at the tiny scale, whose figures judge nothing, without the
    /// goals and verdicts.
    pub fn table(&self) -> String {
        let judged = self.scale.name != "tiny";
        let mut out = String::new();
        if judged {
            let _ = writeln!(
                out,
                "| part | measure | racing | baseline | ratio | goal | |"
            );
            let _ = writeln!(out, "|---|---|---:|---:|---:|---|---|");
        } else {
            let _ = writeln!(out, "| part | measure | racing | baseline | ratio |");
            let _ = writeln!(out, "|---|---|---:|---:|---:|");
        }
        for r in self.rows() {
            let shown = if judged { &r[..] } else { &r[..5] };
            let _ = writeln!(out, "| {} |", shown.join(" | "));
        }
        out
    }

    /// Where the figures come from, in a few lines.
    pub fn header(&self) -> String {
        let m = &self.machine;
        let l = &self.log;
        let mix: Vec<String> = l
            .mix
            .iter()
            .map(|(k, v)| format!("{k} {}", thousands(*v as f64)))
            .collect();
        format!(
            "racing benchmark ({} scale), {}, service at {}{}\nmachine: {} cores, {:.1} GiB, {}, Linux {}\nlog: {} events generated ({} MiB): {}\n\
             top horse {} ({} runs), top jockey {} ({} rides), full meeting {} ({} races), today {}\n",
            self.scale.name,
            self.at,
            self.revision,
            if self.settings.is_empty() {
                String::new()
            } else {
                format!(" with {}", self.settings.join(" "))
            },
            m.cores,
            m.memory_gib,
            m.cpu,
            m.kernel,
            thousands(l.events as f64),
            l.bytes / (1024 * 1024),
            mix.join(", "),
            l.top_horse,
            l.top_runs,
            l.top_jockey,
            l.top_jockey_rides,
            l.meeting_date,
            l.meeting_races,
            l.today
        )
    }
}
