//! The command line of `racing-bench`: its commands, the options of a run, and the parts.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "racing-bench", about = "Benchmark of the racing service")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the benchmark and print the table. (Boxed: its options are most of the
    /// command's size.)
    Run(Box<RunArgs>),
    /// The baseline HTTP server: answers the documents of a JSON file from memory.
    Bare {
        /// Address to listen on.
        #[arg(long)]
        listen: SocketAddr,
        /// JSON object: path and query to the answer (body and headers).
        #[arg(long)]
        docs: PathBuf,
        /// Send each body alone, as `application/json`, without the headers given.
        #[arg(long)]
        body_only: bool,
    },
    /// The reads whose work is bounded by their answer (a search, a race's odds history
    /// and odds as of a point, a change feed page) over a store of many names and odds
    /// moves, folded in this process: their median times and records read.
    Bounded {
        /// Where the store goes (removed at the end).
        #[arg(long, default_value = "target/bench")]
        work: PathBuf,
        /// Horses, each with a name.
        #[arg(long, default_value_t = 100_000)]
        horses: u64,
        /// Odds moves of one day.
        #[arg(long, default_value_t = 100_000)]
        moves: u64,
        /// Times each read is made.
        #[arg(long, default_value_t = 101)]
        rounds: usize,
    },
    /// One side of the applied-ids part, in a process of its own (run by `run`).
    #[command(hide = true)]
    FoldIds {
        /// The store.
        #[arg(long)]
        store: PathBuf,
        /// Distinct ids to fold into a fresh store.
        #[arg(long, default_value_t = 0)]
        events: u64,
        /// Open the store again and fold one batch instead.
        #[arg(long)]
        reopen: bool,
        /// Open the store again and fold this many ids after the first `events`, in
        /// prompt batches, instead.
        #[arg(long, default_value_t = 0)]
        prompt: u64,
    },
    /// The fold alone, in this process: the bench's log at `seasons` seasons, ending on
    /// `date` (or the logs given), folded into a fresh store as a replay folds it (no
    /// NATS): its time and CPU. Under callgrind, it counts the fold's instructions
    /// (BENCHMARKS.md).
    Fold {
        /// Where the store goes (removed at the end).
        #[arg(long, default_value = "target/bench")]
        work: PathBuf,
        /// The day the newest season ends on: the log is the same for the same day.
        #[arg(long, default_value = "2026-11-25")]
        date: jiff::civil::Date,
        /// Seasons of the log.
        #[arg(long, default_value_t = 2)]
        seasons: u64,
        /// Price moves of each race (the full log's 30).
        #[arg(long, default_value_t = 30)]
        ticks: usize,
        /// Fold this log in place of the bench's (an envelope a line, as `racing demo`
        /// writes one); given again, the logs one after the other.
        #[arg(long)]
        log: Vec<PathBuf>,
        /// Events a batch, each batch written whole as a catch-up while the API answers
        /// writes it (without it, batches of 65,536 written in steps, as a replay's).
        #[arg(long)]
        batch: Option<usize>,
    },
    /// The zstd dictionaries the store packs each packed kind's records with, trained anew
    /// on a log no bench measures and written to `out`: a change to them is a new layout
    /// of the store (its `SCHEMA`).
    Dictionaries {
        /// Where the dictionaries go.
        #[arg(long, default_value = "projections/dictionaries")]
        out: PathBuf,
        /// Where the store they are trained from goes (removed at the end).
        #[arg(long, default_value = "target/bench")]
        work: PathBuf,
    },
    /// The records of a stopped service's read models by kind: how many, and their bytes.
    Kinds {
        /// The read models' directory.
        #[arg(long)]
        store: PathBuf,
    },
}

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The `racing` binary under test.
    #[arg(long)]
    pub(crate) racing: PathBuf,
    /// Every part at a very small scale, to check that the benchmark runs.
    #[arg(long, env = "BENCH_TINY")]
    pub(crate) tiny: bool,
    /// Where the cached log, the read models, the logs and the results go.
    #[arg(long, default_value = "target/bench")]
    pub(crate) work: PathBuf,
    /// The nats-server program.
    #[arg(long, default_value = "nats-server")]
    pub(crate) nats_server: String,
    /// Only these parts (default: all).
    #[arg(long, value_delimiter = ',')]
    pub(crate) only: Vec<Part>,
    /// Distinct event ids for the applied-ids part, instead of the scale's (10 M; 20,000
    /// tiny): to see how its memory grows with them.
    #[arg(long)]
    pub(crate) distinct_ids: Option<u64>,
    /// Rounds of the replay part, instead of the scale's (3; 1 tiny): each a raw read and a
    /// replay.
    #[arg(long)]
    pub(crate) replay_rounds: Option<usize>,
    /// Seasons of the log, instead of the scale's (40; 1 tiny): 400 for a log ten times
    /// the full one, to see a replay's memory held within its budget. Give it a `--work`
    /// of its own: a run removes the cached logs of its scale that are not its own.
    #[arg(long)]
    pub(crate) seasons: Option<u64>,
    /// The replay part without its replays on one CPU (a long log's take a long time).
    #[arg(long)]
    pub(crate) replay_all_cores_only: bool,
    /// Paired rounds of each endpoint of the HTTP part, instead of the scale's (7; 1
    /// tiny), to measure new documents quickly.
    #[arg(long)]
    pub(crate) http_rounds: Option<usize>,
    /// The HTTP part also against a bare server that sends each body alone, without the
    /// service's headers: what those cost on the wire (a third more time).
    #[arg(long)]
    pub(crate) http_body_only: bool,
    /// Only the HTTP part's row of this name (as BENCHMARKS.md's table names it, e.g.
    /// `"profile as_of"`), to measure one document quickly; repeatable.
    #[arg(long = "http-row")]
    pub(crate) http_rows: Vec<String>,
    /// Rounds of the live part, instead of the scale's (3; 1 tiny): each the service's
    /// side and the peer's, the first of each pair alternating.
    #[arg(long)]
    pub(crate) live_rounds: Option<usize>,
    /// Live clients, instead of the scale's (1,000; 20 tiny): e.g. 10,000 at 20 updates
    /// a second with `--live-rate 20`.
    #[arg(long)]
    pub(crate) live_clients: Option<usize>,
    /// Live updates a second, instead of the scale's (200; 50 tiny).
    #[arg(long)]
    pub(crate) live_rate: Option<u64>,
    /// The reads-while-writing part without its rebuild phase (minutes of the part's
    /// few), to compare catch-ups.
    #[arg(long)]
    pub(crate) stall_without_rebuild: bool,
    /// A setting for every service the run starts, `NAME=VALUE` (e.g.
    /// `RACING_REPLAY_MEMORY_MIB=0`), to measure it against the default; repeatable.
    /// Otherwise the services get none of the caller's `RACING_*` variables.
    #[arg(long = "service-env", value_parser = parse_setting)]
    pub(crate) service_env: Vec<(String, String)>,
}

/// A `NAME=VALUE` of `--service-env`.
fn parse_setting(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if name.starts_with("RACING_") => Ok((name.into(), value.into())),
        _ => Err(format!("expected RACING_NAME=VALUE, got `{text}`")),
    }
}

/// The parts of the benchmark, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Part {
    /// Replay of the whole log into empty read models, against a raw consumer.
    Replay,
    /// sled's floor: the replayed store's records written once into a fresh database.
    Floor,
    /// A snapshot of the replayed store, and a new replica ready through it against one
    /// through a replay.
    Snapshot,
    /// Start-up on caught-up read models.
    Startup,
    /// HTTP reads against a bare server.
    Http,
    /// Today's card alone and beside records by condition of fresh spans.
    Beside,
    /// Resident memory per idle WebSocket.
    Memory,
    /// Live odds latency and throughput.
    Live,
    /// Live clients through a catch-up after an outage.
    Catchup,
    /// Webhooks to receivers on loopback, and the live stream as Server-Sent Events
    /// against the socket.
    Push,
    /// The store folding a log of many distinct event ids, and opening it again.
    Ids,
    /// Document reads while a rebuild runs and while the projector catches up.
    Stall,
    /// Odds moves published at rising rates while documents are read: the highest rate
    /// the projector keeps within a second of.
    Ingest,
}

impl Part {
    /// Every part, in the order they run: the floor and the snapshot take the store the
    /// replay leaves before the parts that publish make the log longer than it.
    pub(crate) const ALL: [Part; 13] = [
        Part::Replay,
        Part::Floor,
        Part::Snapshot,
        Part::Startup,
        Part::Http,
        Part::Beside,
        Part::Memory,
        Part::Live,
        Part::Catchup,
        Part::Push,
        Part::Stall,
        Part::Ingest,
        Part::Ids,
    ];
}
