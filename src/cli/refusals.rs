//! `racing refusals`: a feeder reads the refusals of the events it published (its NATS
//! user's, `crate::refusals`): event id, stream sequence, subject, reason and time, one a
//! line, oldest first; `--follow` waits for more.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::nats_target::NatsTarget;
use crate::nats::auth::Role;
use crate::refusals::{self, Refusal};

/// Which feeder reads, and how.
#[derive(Args)]
pub struct RefusalsArgs {
    /// After the refusals kept, wait for new ones until interrupted (a feeder may read
    /// its refusals four times at once).
    #[arg(long)]
    follow: bool,
    /// One JSON object a line instead of text.
    #[arg(long)]
    json: bool,
    /// NATS, as the feeder whose refusals to read (its nkey names it:
    /// `--nats-nkey feeder-hkjc.nk`).
    #[command(flatten)]
    target: NatsTarget,
}

/// The text line of a refusal.
fn line(r: &Refusal) -> String {
    format!(
        "seq {} at {} on {} event {}: {}",
        r.seq,
        r.published_at,
        r.subject,
        r.event_id.as_deref().unwrap_or("-"),
        r.reason
    )
}

/// Prints the feeder's refusals.
pub async fn run(args: RefusalsArgs) -> anyhow::Result<ExitCode> {
    let feeder = args.target.user_name(Role::Feeder).ok_or_else(|| {
        anyhow::anyhow!(
            "which feeder? give its nkey (--nats-nkey feeder-NAME.nk), or the data directory of a service that runs its own NATS"
        )
    })?;
    let stream = args.target.stream().to_owned();
    let (client, _) = args.target.connect(Role::Feeder).await?;
    // Following: a year is as good as for ever to a terminal, and cannot overflow a timer.
    let follow = args.follow.then_some(Duration::from_secs(365 * 24 * 3600));
    let mut out = std::io::stdout().lock();
    let mut failed = None;
    let read = refusals::read(&client, &stream, &feeder, follow, |r| {
        let text = if args.json {
            serde_json::to_string(&r).unwrap_or_default()
        } else {
            line(&r)
        };
        if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
            failed.get_or_insert(e);
        }
    })
    .await?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    eprintln!("{read} refusals of {feeder}");
    Ok(ExitCode::SUCCESS)
}
