//! `racing publish` and `racing demo`: the feeds, an NDJSON file published to the stream
//! and the demo season written as NDJSON.

use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use super::nats_target::NatsTarget;
use crate::nats::auth::Role;
use crate::publish;

/// The file `racing publish` reads, and the NATS it publishes to.
#[derive(Args)]
pub struct PublishArgs {
    /// NDJSON file, one envelope a line; `-` reads standard input.
    file: PathBuf,
    /// Check each line with the service's validation and publish nothing, with no NATS:
    /// every problem of each refused line, in the words of the service's refusal, then a
    /// summary; exit 3 if any.
    #[arg(long)]
    check: bool,
    /// As `--check`, also printing the subject each valid line would go to.
    #[arg(long, conflicts_with = "check")]
    dry_run: bool,
    /// NATS to publish to, as a user of the `feeder` role.
    #[command(flatten)]
    target: NatsTarget,
}

/// The seed, day and destination of `racing demo`.
#[derive(Args)]
pub struct DemoArgs {
    /// Seed; the same seed and day give the same events.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// The day of the season's last meeting, YYYY-MM-DD; default today in Hong Kong, the
    /// season then dated as now (no event after it: today's races that open later open
    /// now).
    #[arg(long)]
    today: Option<String>,
    /// Where to write; default standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Publishes the file's envelopes as a feeder, or only checks them (`--check`,
/// `--dry-run`); exit code 3 when any was refused.
pub async fn publish_file(args: PublishArgs) -> anyhow::Result<ExitCode> {
    if args.check || args.dry_run {
        let (reader, _) = open(&args.file)?;
        let mut out = std::io::BufWriter::new(std::io::stdout());
        let checked = super::check::check(reader, args.dry_run, &mut out)?;
        out.flush()?;
        return Ok(refused_exit(checked.refused));
    }
    // A feeder may not look at the stream: a missing one shows as "no responders" on the
    // first publish, which `publish` explains.
    let feeder = args.target.user_name(Role::Feeder);
    let (client, _) = args.target.connect(Role::Feeder).await?;
    let js = async_nats::jetstream::new(client);
    let (reader, size) = open(&args.file)?;
    // Each acknowledged event's line is its progress where the terminal shows them; the
    // bar is drawn only where they go elsewhere.
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(size)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let mut written = Ok(());
    let counts = publish::publish_payloads(
        &js,
        feeder.as_deref(),
        publish::ndjson_lines(reader),
        |n| bar.inc(n + 1),
        |acked| {
            if written.is_ok() {
                written = writeln!(out, "{}", acked_line(&acked));
            }
        },
    )
    .await?;
    written?;
    bar.finish_and_clear();
    writeln!(
        out,
        "published {}, duplicate {}, rejected {}",
        counts.published, counts.duplicate, counts.rejected
    )?;
    if let Some(seq) = counts.last_seq {
        writeln!(
            out,
            "last seq {seq}: read with min_seq={seq} to see every event above"
        )?;
    }
    out.flush()?;
    drop(out);
    for (line, reason) in &counts.reasons {
        println!("  line {line}: {reason}");
    }
    if counts.rejected > counts.reasons.len() as u64 {
        println!(
            "  ... and {} more",
            counts.rejected - counts.reasons.len() as u64
        );
    }
    Ok(refused_exit(counts.rejected))
}

/// The line `racing publish` prints for an acknowledged event: `line N: seq S`, and
/// `(duplicate)` where the stream had it already (its sequence is the first copy's).
fn acked_line(acked: &publish::Acked) -> String {
    let duplicate = if acked.duplicate { " (duplicate)" } else { "" };
    format!("line {}: seq {}{duplicate}", acked.item, acked.seq)
}

/// The file to read (`-`: standard input), and its size where known.
pub(super) fn open(file: &std::path::Path) -> anyhow::Result<(Box<dyn std::io::BufRead>, u64)> {
    if file.as_os_str() == "-" {
        return Ok((Box::new(BufReader::new(std::io::stdin())), 0));
    }
    let f = std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    Ok((Box::new(BufReader::with_capacity(1 << 20, f)), size))
}

/// Exit code 3 when any event was refused: a feeder's script must notice.
fn refused_exit(refused: u64) -> ExitCode {
    if refused > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes the demo season as NDJSON.
pub fn demo(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let feed = match args.today {
        Some(d) if racing_events::Date::parse(&d).is_some() => {
            racing_demo::season(args.seed, d.parse::<jiff::civil::Date>()?)
        }
        Some(d) => anyhow::bail!("--today `{d}` is not a YYYY-MM-DD calendar date"),
        None => {
            let hk = jiff::tz::TimeZone::get("Asia/Hong_Kong")?;
            racing_demo::season_and_calendar(args.seed, &jiff::Timestamp::now().to_zoned(hk)).0
        }
    };
    let today = &feed.today;
    let mut out: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
    };
    for e in &feed.events {
        writeln!(out, "{}", e.to_json())?;
    }
    out.flush()?;
    eprintln!(
        "{} events: {} meetings, {} horses, the last on {today}",
        feed.events.len(),
        feed.meetings,
        feed.horses
    );
    Ok(ExitCode::SUCCESS)
}
