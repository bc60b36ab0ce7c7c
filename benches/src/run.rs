//! A run of the benchmark: its scale from the options, each part asked for in order, and
//! the report.

use std::time::Duration;

use anyhow::Context as _;
use clap::ValueEnum as _;

use crate::cli::{Part, RunArgs};
use crate::scale::Scale;
use crate::{
    beside, catchup, feed, floor, http, ids, ingest, live, peer, push, replay, report, service,
    snapshot, stall,
};

pub(crate) async fn run(args: RunArgs) -> anyhow::Result<()> {
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
    scale.http_rows = if args.http_rows.is_empty() {
        scale
            .http_default_rows
            .iter()
            .map(|&row| row.to_owned())
            .collect()
    } else {
        args.http_rows.clone()
    };
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
    // Gigabytes at full scale: an earlier run's copies, left where it failed.
    for earlier in std::fs::read_dir(&work)?.flatten() {
        if earlier.file_name().to_string_lossy().starts_with("run-") {
            let _ = std::fs::remove_dir_all(earlier.path().join("store"));
            let _ = std::fs::remove_dir_all(earlier.path().join("nats"));
        }
    }
    let run_dir = work.join(run_dir_name(scale.name, &parts));
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
    let store = run_dir.join("store");
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

/// The directory of a run's copies and results under the work directory: `run-full` for
/// every part at full scale, and one of its own for some parts (`run-full-replay-floor`),
/// so that a run of some parts leaves the results of a whole run as they were.
fn run_dir_name(scale: &str, parts: &[Part]) -> String {
    if parts == Part::ALL {
        return format!("run-{scale}");
    }
    let names: Vec<String> = parts
        .iter()
        .filter_map(|part| part.to_possible_value())
        .map(|value| value.get_name().to_owned())
        .collect();
    format!("run-{scale}-{}", names.join("-"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_some_parts_keeps_its_results_apart_from_a_whole_run() {
        assert_eq!(run_dir_name("full", &Part::ALL), "run-full");
        assert_eq!(
            run_dir_name("full", &[Part::Replay, Part::Floor]),
            "run-full-replay-floor"
        );
        assert_eq!(run_dir_name("tiny", &[Part::Ids]), "run-tiny-ids");
    }
}
