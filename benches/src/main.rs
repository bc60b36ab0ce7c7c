//! `racing-bench`: the benchmark of the racing service (BENCHMARKS.md), run by
//! `scripts/bench`. Each part measures the service side by side with a baseline that does
//! the least the same job can be done with, in alternating runs on the same machine, and
//! reports medians and their ratios: on a shared machine the ratio is what holds.

mod applying;
mod beside;
mod bounded;
mod catchup;
mod cli;
mod clients;
mod dictionaries;
mod feed;
mod figures;
mod floor;
mod folding;
mod http;
mod ids;
mod ingest;
mod live;
mod nats_protocol;
mod peer;
mod push;
mod replay;
mod report;
mod run;
mod scale;
mod service;
mod snapshot;
mod stall;

use std::process::ExitCode;

use clap::Parser as _;

use cli::{Cli, Command};

/// The service's allocator: the applied-ids part folds in this process's children.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // As the service does, so that the parts in this process (the fold, the floor) and
    // the servers it starts run as they would beside it.
    racing::memory::without_huge_pages();
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
        Command::Fold {
            work,
            date,
            seasons,
            ticks,
            log,
            batch,
        } => folding::run(&folding::Asked {
            work: &work,
            date,
            seasons,
            ticks,
            logs: &log,
            batch,
        }),
        Command::Dictionaries { out, work } => dictionaries::run(&out, &work),
        Command::Kinds { store } => replay::kinds(&store),
        Command::Run(args) => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(run::run(*args))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("racing-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}
