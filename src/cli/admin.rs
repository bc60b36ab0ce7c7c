//! `racing status`, `racing dead-letters` and `racing rebuild`: the commands that talk to
//! a running service's admin listener over HTTP.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

/// Where the admin listener of a running service is.
#[derive(Args)]
pub struct AdminArgs {
    /// The service's admin listener.
    #[arg(
        long,
        env = "RACING_ADMIN_URL",
        default_value = "http://127.0.0.1:9090"
    )]
    admin_url: String,
}

/// Which dead letters `racing dead-letters` shows.
#[derive(Args)]
pub struct DeadLetterArgs {
    #[command(flatten)]
    admin: AdminArgs,
    /// First stream sequence to list.
    #[arg(long, default_value_t = 0)]
    from: u64,
    /// Most to list.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Show this one dead letter in full (its payload's start included).
    #[arg(long)]
    seq: Option<u64>,
}

impl AdminArgs {
    /// The admin listener's address, without a trailing slash.
    pub(crate) fn base(&self) -> &str {
        self.admin_url.trim_end_matches('/')
    }
}

/// The JSON answer of the admin listener at `path`.
pub(crate) async fn admin_get<T: serde::de::DeserializeOwned>(
    admin: &AdminArgs,
    path: &str,
) -> anyhow::Result<T> {
    let url = format!("{}{path}", admin.admin_url.trim_end_matches('/'));
    let response = reqwest::get(&url)
        .await
        .with_context(|| format!("reaching the service's admin listener at {url}"))?;
    Ok(response.json().await?)
}

/// Prints where a running service stands; exit code 2 when it is not ready.
pub async fn status(args: AdminArgs) -> anyhow::Result<ExitCode> {
    let s: crate::admin::Status = admin_get(&args, "/status").await?;
    let opt = |v: Option<u64>| v.map_or("?".to_owned(), |v| v.to_string());
    println!("stream:        {}", s.stream);
    if let Some(step) = &s.starting {
        // Nothing else is known yet: the read models are not open.
        println!(
            "starting:      {} (for {:.0} s, {:.0} s since the start began)",
            step.step, step.step_secs, step.secs
        );
        println!("ready:         no");
        return Ok(ExitCode::from(2));
    }
    println!(
        "nats:          {}",
        if s.nats_connected {
            "connected"
        } else {
            "NOT CONNECTED"
        }
    );
    println!("stream end:    {}", opt(s.stream_last_seq));
    if let Some(from) = &s.built_from {
        println!("built from:    {from}");
    }
    if let Some(note) = &s.store_note {
        println!("read models:   {note}");
    }
    println!("started from:  {}", started_from(&s.start));
    if let Some(w) = &s.snapshots {
        let newest = w
            .newest
            .as_ref()
            .map_or("none of this layout".to_owned(), |n| {
                format!("{} (checkpoint {}, {})", n.name, n.checkpoint, n.created_at)
            });
        let lease = if w.holds_lease {
            ", this replica writes them"
        } else {
            ""
        };
        println!("snapshots:     newest {newest}{lease}");
        if let Some(e) = &w.last_error {
            println!("               last attempt failed: {e}");
        }
        if let Some(skipped) = &w.skipped {
            println!(
                "               skipped at {}: {}",
                skipped.at, skipped.reason
            );
        }
    }
    println!("checkpoint:    {}", s.checkpoint);
    println!("lag:           {} events", opt(s.lag));
    println!(
        "since start:   {} applied, {} duplicates, {} dead letters",
        s.applied, s.duplicates, s.dead_letters
    );
    let mail = &s.mail;
    match &mail.outbox {
        Some(outbox) => println!("mail:          {} written to {outbox}", mail.sent),
        None => println!(
            "mail:          {} sent, {} waiting ({} deferred), {} set aside, {} failed attempts{}",
            mail.sent,
            mail.queued,
            mail.deferred,
            mail.failed,
            mail.failed_attempts,
            mail.last_error
                .as_deref()
                .map(|e| format!(" (last: {e})"))
                .unwrap_or_default()
        ),
    }
    for (name, task) in &s.tasks {
        if task.restarts > 0 || task.restarting {
            println!(
                "{:<15}{} restarts{}{}",
                format!("{name}:"),
                task.restarts,
                if task.restarting {
                    ", restarting now"
                } else {
                    ""
                },
                task.last_failure
                    .as_deref()
                    .map(|f| format!(" (last failure: {f})"))
                    .unwrap_or_default()
            );
        }
    }
    match &s.reason {
        None => println!("ready:         yes"),
        Some(reason) => println!("ready:         no ({reason})"),
    }
    Ok(if s.ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// Which path a start took to its read models, in a line.
fn started_from(start: &crate::snapshot::start::StartReport) -> String {
    use crate::snapshot::start::StartPath;
    let refused = match start.refused.len() {
        0 => String::new(),
        n => format!(
            "; {} refused: {}",
            crate::text::count(n as u64, "snapshot", "snapshots"),
            start.refused.join("; ")
        ),
    };
    match start.path {
        StartPath::Store if start.from_checkpoint == 0 => "a new store (the log was empty)".into(),
        StartPath::Store => format!("its own store, at {}", start.from_checkpoint),
        StartPath::Replay => format!(
            "a replay of the log{refused}{}",
            start
                .not_waited
                .as_deref()
                .map(|why| format!(" ({why})"))
                .unwrap_or_default()
        ),
        StartPath::Snapshot => format!(
            "snapshot {} at {}, loaded in {:.1} s{}{refused}",
            start.snapshot.as_deref().unwrap_or("?"),
            start.from_checkpoint,
            start.load_secs.unwrap_or(0.0),
            start
                .waited_secs
                .map(|w| format!(" after waiting {w:.0} s for it"))
                .unwrap_or_default()
        ),
    }
}

/// Lists a running service's dead letters, or prints one in full.
pub async fn dead_letters(args: DeadLetterArgs) -> anyhow::Result<ExitCode> {
    let (from, limit) = match args.seq {
        Some(seq) => (seq, 1),
        None => (args.from, args.limit),
    };
    let letters: Vec<racing_projections::DeadLetter> = admin_get(
        &args.admin,
        &format!("/dead-letters?from={from}&limit={limit}"),
    )
    .await?;
    match args.seq {
        Some(seq) => match letters.into_iter().find(|l| l.seq == seq) {
            Some(l) => println!("{}", serde_json::to_string_pretty(&l)?),
            None => anyhow::bail!("no dead letter at sequence {seq}"),
        },
        None => {
            println!("{:>10}  {:<40}  REASON", "SEQ", "SUBJECT");
            for l in &letters {
                println!("{:>10}  {:<40}  {}", l.seq, l.subject, l.reason);
            }
            eprintln!("{} dead letters from sequence {from}", letters.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts a rebuild (or follows the one under way) and draws its progress until it ends.
pub async fn rebuild(args: AdminArgs) -> anyhow::Result<ExitCode> {
    rebuild_at(&args, "/rebuild").await
}

/// Starts the rebuild that a POST to `path` starts, and draws its progress until it ends.
pub(crate) async fn rebuild_at(args: &AdminArgs, path: &str) -> anyhow::Result<ExitCode> {
    use crate::rebuild::status::{State, Status};
    let base = args.admin_url.trim_end_matches('/');
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{base}{path}"))
        .send()
        .await
        .with_context(|| format!("reaching the service's admin listener at {base}"))?;
    match response.status().as_u16() {
        202 => eprintln!("rebuild started"),
        409 => eprintln!("a rebuild is already under way; following it"),
        code => anyhow::bail!("the service refused the rebuild: HTTP {code}"),
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} events ({per_sec}, {eta}){msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let status = loop {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let status: Status = admin_get(args, "/rebuild").await?;
        bar.set_length(status.stream_last_seq.max(status.checkpoint));
        bar.set_position(status.checkpoint);
        if status.held_secs > 0.0 {
            bar.set_message(format!(", {:.0} s given to requests", status.held_secs));
        }
        if status.state != State::Running {
            break status;
        }
    };
    bar.finish_and_clear();
    match status.state {
        State::Done => {
            let from = status
                .snapshot
                .as_deref()
                .map(|name| format!(" after snapshot {name}"))
                .unwrap_or_default();
            println!(
                "rebuilt: {} folded{from}, checkpoint {}, now serving from {}{}",
                crate::text::count(status.folded, "message", "messages"),
                status.checkpoint,
                status.directory.as_deref().unwrap_or("?"),
                held(status.held_secs)
            );
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            eprintln!(
                "rebuild failed: {}; the service kept its read models",
                status.error.as_deref().unwrap_or("no reason given")
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// How long a rebuild's worker gave way to requests, when it did.
fn held(secs: f64) -> String {
    if secs > 0.0 {
        format!(" ({secs:.0} s of it held stopped while requests kept the machine busy)")
    } else {
        String::new()
    }
}
