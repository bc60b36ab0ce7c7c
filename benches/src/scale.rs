//! How big each part of the benchmark is: the full run BENCHMARKS.md reports, and the
//! tiny one CI runs.

use serde::Serialize;

/// How big each part is.
#[derive(Debug, Clone, Serialize)]
pub struct Scale {
    /// `full` or `tiny`.
    pub name: &'static str,
    /// Demo seasons in the log.
    pub seasons: u64,
    /// Price moves of each race before its result.
    pub ticks_per_race: usize,
    /// `wrk` runs per endpoint and server.
    pub http_rounds: usize,
    /// Seconds of each.
    pub http_secs: u64,
    /// The `wrk` load threads each endpoint is measured with, in turn: two (the machine's
    /// cores), and one, which leaves the server a core and a half, so that its own
    /// per-request work is what limits it rather than the load generator's share of the
    /// machine.
    pub http_load_threads: &'static [usize],
    /// Seconds of a first run per endpoint and server, not counted (none where 0).
    pub http_warm_secs: u64,
    /// Whether they also run against a bare server sending the body alone.
    pub http_body_only: bool,
    /// The names of the rows to run (`--http-row`): every row where empty.
    pub http_rows: Vec<String>,
    /// The rows run where `--http-row` names none: every row where empty.
    pub http_default_rows: &'static [&'static str],
    /// Their connections.
    pub connections: usize,
    /// Replays per side.
    pub replay_rounds: usize,
    /// Whether the replay part also replays on one CPU.
    pub replay_one_core: bool,
    /// Start-ups on caught-up read models.
    pub startup_rounds: usize,
    /// Rounds of the live part: the service's side and the peer's, each.
    pub live_rounds: usize,
    /// Live odds clients.
    pub live_clients: usize,
    /// Updates published per second.
    pub live_rate: u64,
    /// For this long.
    pub live_secs: u64,
    /// An outage's length, in seconds of updates at `live_rate`, for the catch-up part.
    pub outage_secs: u64,
    /// Rounds of reads during a catch-up of such an outage, in the reads-while-writing
    /// part.
    pub catchup_rounds: usize,
    /// Idle connections for the memory figure.
    pub idle_connections: usize,
    /// Seconds the reads run while a rebuild does, in the reads-while-writing part (the
    /// rebuild is waited for after them).
    pub rebuild_read_secs: u64,
    /// Seconds the reads run while a snapshot is written, in the same part (the snapshot
    /// is waited for after them): all of its writing and sending where `None`. Under the
    /// reads the snapshot's writer, at the least priority, gets little of the machine.
    pub snapshot_read_secs: Option<u64>,
    /// Events of the season a feeder publishes live in that part: the whole season where
    /// `None`.
    pub live_feed_events: Option<usize>,
    /// Seconds each rate of the live-ingest part is offered.
    pub ingest_step_secs: u64,
    /// Seconds the highest rate held is offered again.
    pub ingest_hold_secs: u64,
    /// Distinct event ids folded by the applied-ids part.
    pub distinct_ids: u64,
    /// Distinct ids it then folds in prompt batches: enough for a save of the filter
    /// (every 2^21 ids) to begin and end.
    pub prompt_ids: u64,
}

impl Scale {
    /// What BENCHMARKS.md reports: a log of over a million events (40 seasons of 2,768
    /// events, each of their 763 races with 30 price moves), 64 connections, 1,000 live
    /// clients at 200 updates/s, a catch-up after a 10-minute outage, 10,000 idle
    /// connections, 10 M distinct event ids.
    pub(crate) const FULL: Scale = Scale {
        name: "full",
        seasons: 40,
        ticks_per_race: 30,
        http_rounds: 7,
        http_secs: 5,
        http_load_threads: &[2, 1],
        http_warm_secs: 2,
        http_body_only: false,
        http_rows: Vec::new(),
        http_default_rows: &[],
        connections: 64,
        replay_rounds: 3,
        replay_one_core: true,
        startup_rounds: 5,
        live_rounds: 3,
        live_clients: 1_000,
        live_rate: 200,
        live_secs: 15,
        outage_secs: 600,
        catchup_rounds: 3,
        rebuild_read_secs: 90,
        snapshot_read_secs: None,
        live_feed_events: None,
        idle_connections: 10_000,
        ingest_step_secs: 10,
        ingest_hold_secs: 60,
        distinct_ids: 10_000_000,
        prompt_ids: 3 << 20,
    };

    /// Every part, in seconds, and three rows of the HTTP part: for CI.
    pub(crate) const TINY: Scale = Scale {
        name: "tiny",
        seasons: 1,
        ticks_per_race: 2,
        http_rounds: 1,
        http_secs: 1,
        http_load_threads: &[1],
        http_warm_secs: 0,
        http_body_only: false,
        http_rows: Vec::new(),
        // One row of each way the service answers: as stored, rendered at each ask (by a
        // service that keeps no answer as of a point), and sent from that memory. The
        // others differ only in the path asked, and each of their seconds of load took
        // the suite's machine whole.
        http_default_rows: &["profile", "card as_of", "card as_of again"],
        connections: 64,
        replay_rounds: 1,
        replay_one_core: true,
        startup_rounds: 1,
        live_rounds: 1,
        live_clients: 20,
        live_rate: 50,
        live_secs: 2,
        outage_secs: 4,
        catchup_rounds: 1,
        rebuild_read_secs: 3,
        snapshot_read_secs: Some(3),
        live_feed_events: Some(1_500),
        idle_connections: 200,
        ingest_step_secs: 1,
        ingest_hold_secs: 2,
        distinct_ids: 20_000,
        prompt_ids: 4_096,
    };
}
