//! `racing import hk-results`: real Hong Kong history (`crate::import`) as NDJSON for
//! `racing publish`, or published at once as a feeder. On standard error: each race not
//! written and each value there but unreadable, with its file and line, then the counts
//! of races written and not, and of the values left out by kind.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::feed::open;
use super::nats_target::NatsTarget;
use crate::import::{self, Imported};
use crate::nats::auth::Role;
use crate::publish;

/// What to import.
#[derive(Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    source: Source,
}

#[derive(Subcommand)]
enum Source {
    /// Hong Kong results in the two-file CSV format of the public 2014 to 2017 datasets:
    /// one result event a race (docs/feeding.md maps each column).
    HkResults(HkResultsArgs),
}

#[derive(Args)]
struct HkResultsArgs {
    /// The races file (`race-result-race.csv`).
    #[arg(long)]
    races: PathBuf,
    /// The runners file (`race-result-horse.csv`).
    #[arg(long)]
    runners: PathBuf,
    /// Where to write the events as NDJSON; default standard output.
    #[arg(long, conflicts_with = "publish")]
    out: Option<PathBuf>,
    /// Publish the events to the stream as a feeder instead of writing them.
    #[arg(long)]
    publish: bool,
    /// NATS to publish to (with `--publish`), as a user of the `feeder` role.
    #[command(flatten)]
    target: NatsTarget,
}

/// Runs the import; exit code 3 when a race was not written, a value that was there
/// could not be read, or an event was refused. Values the files write as missing are
/// only counted.
pub async fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let Source::HkResults(args) = args.source;
    let started = std::time::Instant::now();
    let imported = import::hk_results(open(&args.races)?.0, open(&args.runners)?.0)?;
    let mut stderr = std::io::stderr().lock();
    for p in imported.problems.iter().chain(&imported.not_written) {
        writeln!(stderr, "{} line {}: {}", p.file, p.line, p.reason)?;
    }
    writeln!(
        stderr,
        "{} races and {} runner rows read in {:.2} s\n{}",
        imported.races,
        imported.runners,
        started.elapsed().as_secs_f64(),
        imported.summary()
    )?;
    let Imported {
        events,
        problems,
        not_written,
        ..
    } = imported;
    let refused = if args.publish {
        let feeder = args.target.user_name(Role::Feeder);
        let (client, url) = args.target.connect(Role::Feeder).await?;
        let js = async_nats::jetstream::new(client);
        let counts = publish::publish_events(&js, feeder.as_deref(), &events).await?;
        writeln!(
            stderr,
            "published to {url}: {} new, {} duplicate, {} refused",
            counts.published, counts.duplicate, counts.rejected
        )?;
        for (item, reason) in &counts.reasons {
            writeln!(stderr, "  event {item}: {reason}")?;
        }
        counts.rejected
    } else {
        let mut out: Box<dyn Write> = match &args.out {
            Some(path) => Box::new(std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("creating {}", path.display()))?,
            )),
            None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
        };
        for e in &events {
            writeln!(out, "{}", e.to_json())?;
        }
        out.flush()?;
        0
    };
    Ok(
        if refused > 0 || !problems.is_empty() || !not_written.is_empty() {
            ExitCode::from(3)
        } else {
            ExitCode::SUCCESS
        },
    )
}
