//! `racing-bench`: the benchmark of the racing service (BENCHMARKS.md), run by
//! `scripts/bench`. Each part measures the service side by side with a baseline that does
//! the least the same job can be done with, in alternating runs on the same machine, and
//! reports medians and their ratios: on a shared machine the ratio is what holds.

mod applying;
mod beside;
mod bounded;
mod catchup;
mod clients;
mod feed;
mod figures;
mod floor;
mod http;
mod ids;
mod ingest;
mod live;
mod nats_protocol;
mod peer;
mod push;
mod replay;
mod report;
mod service;
mod snapshot;
mod stall;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;

/// The service's allocator: the applied-ids part folds in this process's children.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "racing-bench", about = "Benchmark of the racing service")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the benchmark and print the table.
    Run(RunArgs),
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
}

#[derive(clap::Args)]
struct RunArgs {
    /// The `racing` binary under test.
    #[arg(long)]
    racing: PathBuf,
    /// Every part at a very small scale, to check that the benchmark runs.
    #[arg(long, env = "BENCH_TINY")]
    tiny: bool,
    /// Where the cached log, the read models, the logs and the results go.
    #[arg(long, default_value = "target/bench")]
    work: PathBuf,
    /// The nats-server program.
    #[arg(long, default_value = "nats-server")]
    nats_server: String,
    /// Only these parts (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<Part>,
    /// Distinct event ids for the applied-ids part, instead of the scale's (10 M; 20,000
    /// tiny): to see how its memory grows with them.
    #[arg(long)]
    distinct_ids: Option<u64>,
    /// Rounds of the replay part, instead of the scale's (3; 1 tiny): each a raw read and a
    /// replay.
    #[arg(long)]
    replay_rounds: Option<usize>,
    /// Seasons of the log, instead of the scale's (40; 1 tiny): 400 for a log ten times
    /// the full one, to see a replay's memory held within its budget. Give it a `--work`
    /// of its own: a run removes the cached logs of its scale that are not its own.
    #[arg(long)]
    seasons: Option<u64>,
    /// The replay part without its replays on one CPU (a long log's take a long time).
    #[arg(long)]
    replay_all_cores_only: bool,
    /// Paired rounds of each endpoint of the HTTP part, instead of the scale's (7; 1
    /// tiny), to measure new documents quickly.
    #[arg(long)]
    http_rounds: Option<usize>,
    /// The HTTP part also against a bare server that sends each body alone, without the
    /// service's headers: what those cost on the wire (a third more time).
    #[arg(long)]
    http_body_only: bool,
    /// Rounds of the live part, instead of the scale's (3; 1 tiny): each the service's
    /// side and the peer's, the first of each pair alternating.
    #[arg(long)]
    live_rounds: Option<usize>,
    /// Live clients, instead of the scale's (1,000; 20 tiny): e.g. 10,000 at 20 updates
    /// a second with `--live-rate 20`.
    #[arg(long)]
    live_clients: Option<usize>,
    /// Live updates a second, instead of the scale's (200; 50 tiny).
    #[arg(long)]
    live_rate: Option<u64>,
    /// The reads-while-writing part without its rebuild phase (minutes of the part's
    /// few), to compare catch-ups.
    #[arg(long)]
    stall_without_rebuild: bool,
    /// A setting for every service the run starts, `NAME=VALUE` (e.g.
    /// `RACING_REPLAY_MEMORY_MIB=0`), to measure it against the default; repeatable.
    /// Otherwise the services get none of the caller's `RACING_*` variables.
    #[arg(long = "service-env", value_parser = parse_setting)]
    service_env: Vec<(String, String)>,
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
enum Part {
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
    const ALL: [Part; 13] = [
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
    /// Whether they also run against a bare server sending the body alone.
    pub http_body_only: bool,
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
    const FULL: Scale = Scale {
        name: "full",
        seasons: 40,
        ticks_per_race: 30,
        http_rounds: 7,
        http_secs: 5,
        http_body_only: false,
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
        idle_connections: 10_000,
        ingest_step_secs: 10,
        ingest_hold_secs: 60,
        distinct_ids: 10_000_000,
        prompt_ids: 3 << 20,
    };

    /// Every part, in seconds: for CI.
    const TINY: Scale = Scale {
        name: "tiny",
        seasons: 1,
        ticks_per_race: 2,
        http_rounds: 1,
        http_secs: 1,
        http_body_only: false,
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
        idle_connections: 200,
        ingest_step_secs: 1,
        ingest_hold_secs: 2,
        distinct_ids: 20_000,
        prompt_ids: 4_096,
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bare {
            listen,
            docs,
            body_only,
        } => http::bare(listen, docs, body_only),
        Command::Bounded {
            work,
            horses,
            moves,
            rounds,
        } => bounded::run(&work, horses, moves, rounds),
        Command::FoldIds {
            store,
            events,
            reopen,
            prompt,
        } => ids::child(&store, events, reopen, prompt),
        Command::Run(args) => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(run(args))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("racing-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut scale = if args.tiny { Scale::TINY } else { Scale::FULL };
    if let Some(ids) = args.distinct_ids {
        scale.distinct_ids = ids;
    }
    if let Some(rounds) = args.replay_rounds {
        anyhow::ensure!(rounds > 0, "--replay-rounds: at least one");
        scale.replay_rounds = rounds;
    }
    if let Some(seasons) = args.seasons {
        anyhow::ensure!(seasons > 0, "--seasons: at least one");
        scale.seasons = seasons;
    }
    scale.replay_one_core = !args.replay_all_cores_only;
    if let Some(rounds) = args.http_rounds {
        anyhow::ensure!(rounds > 0, "--http-rounds: at least one");
        scale.http_rounds = rounds;
    }
    scale.http_body_only = args.http_body_only;
    if let Some(rounds) = args.live_rounds {
        anyhow::ensure!(rounds > 0, "--live-rounds: at least one");
        scale.live_rounds = rounds;
    }
    if let Some(clients) = args.live_clients {
        anyhow::ensure!(clients > 0, "--live-clients: at least one");
        scale.live_clients = clients;
    }
    if let Some(rate) = args.live_rate {
        anyhow::ensure!(rate > 0, "--live-rate: at least one a second");
        scale.live_rate = rate;
    }
    let parts = if args.only.is_empty() {
        Part::ALL.to_vec()
    } else {
        args.only.clone()
    };
    let work = std::path::absolute(&args.work)?;
    let racing = std::path::absolute(&args.racing)?;
    // Two runs in one directory would remove each other's stores, and share the machine.
    std::fs::create_dir_all(&work)?;
    let lock = std::fs::File::create(work.join("lock"))?;
    lock.try_lock()
        .map_err(|_| anyhow::anyhow!("another benchmark runs in {}", work.display()))?;
    let day = feed::Day::now()?;
    eprintln!("bench: today is {}", day.describe());
    let log = feed::ensure(&work, &scale, &day, &args.nats_server).await?;
    let run_dir = work.join(format!("run-{}", scale.name));
    std::fs::create_dir_all(&run_dir)?;
    let nats_dir = feed::fresh_copy(&log, &run_dir.join("nats"))?;
    let credentials = feed::credentials(&nats_dir)?;
    // The live part's peer is this server's own WebSocket listener.
    let (peer_user, websocket) = peer::user();
    let nats = racing::nats::LocalNats::start_with(
        &args.nats_server,
        &nats_dir,
        None,
        &credentials,
        &racing::nats::ServerOptions {
            websocket: Some(websocket),
            ..racing::nats::ServerOptions::default()
        },
    )
    .await?;
    feed::set_up(&nats).await?;
    let peer = peer::Peer::new(&nats, peer_user)?;
    // The read models of an earlier run were folded from another copy of the log.
    let store = run_dir.join("store");
    let _ = std::fs::remove_dir_all(&store);
    // The binary as built now: a rebuild during the run must not change what is measured.
    let under_test = run_dir.join("racing");
    let _ = std::fs::remove_file(&under_test);
    std::fs::copy(&racing, &under_test).with_context(|| format!("copying {}", racing.display()))?;
    let target = service::Target {
        racing: under_test,
        nats_url: nats.url(),
        credentials,
        key: format!("bench_{}", uuid::Uuid::new_v4().simple()),
        timezone: day.zone_name.clone(),
        logs: run_dir.join("logs"),
        settings: args.service_env.clone(),
    };
    let mut report = report::Report {
        at: jiff::Timestamp::now()
            .round(jiff::Unit::Second)?
            .to_string(),
        revision: revision(),
        settings: args
            .service_env
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect(),
        machine: report::Machine::here(),
        scale: scale.clone(),
        log: log.info.clone(),
        http: None,
        beside: None,
        replay: None,
        floor: None,
        snapshot: None,
        startup: None,
        memory: None,
        live: None,
        catchup: None,
        push: None,
        stall: None,
        ingest: None,
        ids: None,
    };
    eprint!("{}", report.header());
    for part in Part::ALL {
        if !parts.contains(&part) {
            continue;
        }
        eprintln!("bench: {part:?}");
        match part {
            Part::Replay => {
                report.replay = Some(replay::replay(&scale, &target, &store, log.info.bytes).await?)
            }
            Part::Floor => {
                report.floor = Some(floor::run(&target, &store, &run_dir, log.info.bytes).await?)
            }
            Part::Snapshot => {
                report.snapshot = Some(snapshot::run(&target, &store, &run_dir).await?)
            }
            Part::Startup => report.startup = Some(replay::startup(&scale, &target, &store).await?),
            Part::Http => {
                report.http = Some(http::run(&scale, &target, &store, &log.info, &run_dir).await?)
            }
            Part::Beside => {
                report.beside =
                    Some(beside::run(&scale, &target, &store, &log.info, &run_dir).await?)
            }
            Part::Memory => report.memory = Some(live::idle_memory(&scale, &target, &store).await?),
            Part::Live => {
                report.live = Some(live::odds(&scale, &target, &store, &log.info, &peer).await?)
            }
            Part::Catchup => {
                report.catchup = Some(catchup::run(&scale, &target, &store, &log.info).await?)
            }
            Part::Push => {
                report.push = Some(push::run(&scale, &target, &store, &log.info, &peer).await?)
            }
            Part::Stall => {
                report.stall = Some(
                    stall::run(
                        &scale,
                        &target,
                        &store,
                        &log.info,
                        &run_dir,
                        !args.stall_without_rebuild,
                    )
                    .await?,
                )
            }
            Part::Ingest => {
                report.ingest =
                    Some(ingest::run(&scale, &target, &store, &log.info, &run_dir).await?)
            }
            Part::Ids => report.ids = Some(ids::run(&scale, &run_dir)?),
        }
    }
    nats.stop(Duration::from_secs(10)).await;
    // Gigabytes at full scale, and of no use to the next run.
    let _ = std::fs::remove_dir_all(&store);
    let _ = std::fs::remove_dir_all(&nats_dir);

    let table = report.table();
    std::fs::write(
        run_dir.join("results.json"),
        serde_json::to_vec_pretty(&report)?,
    )?;
    std::fs::write(
        run_dir.join("results.md"),
        format!("{}\n{table}", report.header()),
    )?;
    println!();
    print!("{}", report.header());
    println!();
    print!("{table}");
    let failures = report.failures();
    println!();
    if args.tiny {
        println!("tiny scale: every part ran; a tiny run judges nothing, so no goal is shown");
    } else if failures.is_empty() {
        println!("every goal met");
    } else {
        println!("goals not met: {}", failures.join("; "));
    }
    println!("raw figures: {}", run_dir.join("results.json").display());
    Ok(())
}

/// The commit the service was built from, and whether the work tree differed from it.
fn revision() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match (
        git(&["rev-parse", "--short", "HEAD"]),
        git(&["status", "--porcelain", "--untracked-files=no"]),
    ) {
        (Some(head), Some(changes)) if !changes.is_empty() => {
            format!("{head} with uncommitted changes")
        }
        (Some(head), _) => head,
        (None, _) => "unknown".into(),
    }
}
