//! `racing`: the command line of the racing data service. It parses the command
//! (`racing::cli::command`), sets up the logs and the runtime, and runs it: `serve` runs
//! the API and its projector (`racing::cli::serve`), the other commands live beside it in
//! `racing::cli`.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use racing::cli::command::{settings_help, Cli, Command};
use racing::cli::serve::serve;
use racing::cli::{admin, credentials, feed, keys, setup};

/// mimalloc instead of the system allocator: replay allocates and frees millions of
/// small buffers (decoded events, records, documents), where glibc's malloc spent a fifth
/// of the projector's time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    racing::memory::without_huge_pages();
    let command = Cli::command();
    let settings = settings_help(&command);
    let cli = command
        .after_help(settings)
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches))
        .unwrap_or_else(|e| e.exit());
    let quiet = if matches!(cli.command, Command::Serve(_)) {
        "info"
    } else {
        "warn"
    };
    let filter = tracing_subscriber::EnvFilter::try_new(cli.log.as_deref().unwrap_or(quiet))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(quiet));
    // Colour codes only for a person at a terminal, never in a file or a pipe.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if cli.log_format == "json" {
        logs.json().init();
    } else {
        logs.init();
    }
    // Named, so that the projector's catch-up can tell when requests wait for a core.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(racing::load::REQUEST_THREADS)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("racing: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::Publish(args) => feed::publish_file(args).await,
            Command::Demo(args) => feed::demo(args),
            Command::Import(args) => racing::cli::import::run(args).await,
            Command::Refusals(args) => racing::cli::refusals::run(args).await,
            Command::Keys(args) => keys::run(args).await,
            Command::Credentials(args) => credentials::run(args),
            Command::Setup(args) => setup::run(args).await,
            Command::Status(args) => admin::status(args).await,
            Command::DeadLetters(args) => admin::dead_letters(args).await,
            Command::Rebuild(args) => admin::rebuild(args).await,
            Command::Snapshot(args) => racing::cli::snapshot::run(args).await,
            Command::Watch(args) => racing::watch::run(args).await.map(|()| ExitCode::SUCCESS),
            Command::RebuildWorker(args) => racing::rebuild::run_worker(args).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("racing: {e:#}");
            ExitCode::FAILURE
        }
    }
}
