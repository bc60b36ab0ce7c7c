//! `racing`: the command line of the racing data service. `serve` runs the API and its
//! projector, `publish` is a feeder for NDJSON files, `demo` writes the demo season.

use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use racing::config::{Config, ServeArgs};
use racing::nats::{ClientAuth, Credentials, NatsArgs, Role};
use racing::{publish, Application};
use tokio_util::sync::CancellationToken;

/// mimalloc instead of the system allocator: replay allocates and frees millions of
/// small buffers (decoded events, records, documents), where glibc's malloc spent a fifth
/// of the projector's time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "racing", version, about = "Horse racing data service")]
struct Cli {
    /// Log filter (tracing's EnvFilter syntax), e.g. `info` or `racing=debug`; default
    /// `info` for `serve`, `warn` for the other commands (their result is on stdout).
    #[arg(long, global = true, env = "RACING_LOG")]
    log: Option<String>,
    /// Log lines as `human` text or `json` objects (one per line).
    #[arg(long, global = true, env = "RACING_LOG_FORMAT", default_value = "human", value_parser = ["human", "json"])]
    log_format: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once at start-up: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Run the API and the projector.
    Serve(ServeArgs),
    /// Publish an NDJSON file of event envelopes to the stream (a feeder).
    Publish(PublishArgs),
    /// Write the demo season as NDJSON, ready for `racing publish`.
    Demo(DemoArgs),
    /// Issue, list, rotate and revoke API keys (shared by every replica through NATS).
    Keys(KeysArgs),
    /// Make and manage the NATS users of a deployment: one nkey per service, feeder and
    /// keys admin, and the `auth.conf` that NATS servers include.
    Credentials(CredentialsArgs),
    /// Where a running service stands: stream, checkpoint, lag, readiness.
    Status(AdminArgs),
    /// List refused events of a running service, or show one in full.
    DeadLetters(DeadLetterArgs),
    /// Rebuild every read model of a running service from the log into a fresh store and
    /// swap it in; the API answers from the store in use until the swap.
    Rebuild(AdminArgs),
    /// Watch a race's prices move, live, in the terminal (one line per update in a pipe).
    Watch(racing::watch::WatchArgs),
}

#[derive(Args)]
struct AdminArgs {
    /// The service's admin listener.
    #[arg(
        long,
        env = "RACING_ADMIN_URL",
        default_value = "http://127.0.0.1:9090"
    )]
    admin_url: String,
}

#[derive(Args)]
struct DeadLetterArgs {
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

/// Where a command that talks to NATS finds it, and how it proves who it is.
#[derive(Args)]
struct NatsTarget {
    /// NATS server; unset: the one `racing serve` runs under the data directory, else
    /// nats://127.0.0.1:4222.
    #[arg(long, global = true, env = "RACING_NATS_URL")]
    nats_url: Option<String>,
    /// JetStream stream of the service.
    #[arg(long, global = true, env = "RACING_STREAM", default_value = "RACING")]
    stream: String,
    /// Data directory of a `racing serve` that runs its own NATS: with no credential
    /// given, its own users' credentials (and its server's address) are used.
    #[arg(long, global = true, env = "RACING_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    #[command(flatten)]
    nats: NatsArgs,
}

impl NatsTarget {
    /// Connects as `role`: with the credentials given, or, with none, those the local
    /// server of the data directory made for its own `role` user.
    async fn connect(self, role: Role) -> anyhow::Result<(async_nats::Client, String)> {
        let mut auth = ClientAuth::try_from(self.nats)?;
        let mut url = self.nats_url.filter(|u| !u.trim().is_empty());
        let own = racing::config::credentials_dir(&self.data_dir);
        if !auth.is_set() && own.is_dir() {
            let credentials = Credentials::open(&own, &self.stream)?;
            auth = ClientAuth::from_credentials(&credentials, role)?;
            if url.is_none() {
                url = racing::nats::local::listening_on(&self.data_dir.join("nats").join("ports"))
                    .map(|addr| format!("nats://{addr}"));
            }
        }
        let url = url.unwrap_or_else(|| "nats://127.0.0.1:4222".to_owned());
        let client = racing::nats::connect(&url, &auth, role).await?;
        Ok((client, racing::nats::redact(&url)))
    }
}

#[derive(Args)]
struct KeysArgs {
    /// NATS holding the key registry (the buckets are `{stream}_KEYS` and
    /// `{stream}_KEY_USAGE`), as a user of the `keys-admin` role.
    #[command(flatten)]
    target: NatsTarget,
    #[command(subcommand)]
    action: KeysAction,
}

#[derive(Args)]
struct CredentialsArgs {
    /// The credentials directory; default `$RACING_DATA_DIR/credentials`, the one
    /// `racing serve` without a NATS URL uses.
    #[arg(long, env = "RACING_CREDENTIALS_DIR")]
    dir: Option<PathBuf>,
    /// Where the default credentials directory is.
    #[arg(long, env = "RACING_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    /// The stream the service uses: permissions name it and its key buckets.
    #[arg(long, env = "RACING_STREAM", default_value = "RACING")]
    stream: String,
    #[command(subcommand)]
    action: CredentialsAction,
}

#[derive(Subcommand)]
enum CredentialsAction {
    /// Make the directory with a service, a feeder and a keys-admin user and a route
    /// password, keeping any already there, and write `auth.conf`.
    Init,
    /// List the users: name, role, public key. Never a seed.
    List,
    /// Add a user of a role, e.g. a feeder per upstream source (`feeder-NAME`).
    Add {
        /// `service`, `feeder` or `keys-admin`.
        #[arg(long, value_parser = ["service", "feeder", "keys-admin"])]
        role: String,
        /// The user's name after the role's, e.g. `hkjc` for `feeder-hkjc`.
        name: String,
    },
    /// Give a user a new seed; its old seed is refused once the servers reload.
    Rotate {
        /// The user, e.g. `feeder-hkjc`.
        user: String,
    },
    /// Remove a user; refused once the servers reload.
    Remove {
        /// The user, e.g. `feeder-hkjc`.
        user: String,
    },
}

#[derive(Subcommand)]
enum KeysAction {
    /// Issue a key; it is printed once and never stored.
    Create {
        /// Who the key is for.
        #[arg(long)]
        name: String,
        /// Its own sustained requests per second.
        #[arg(long)]
        rate: Option<u32>,
        /// Its own burst.
        #[arg(long)]
        burst: Option<u32>,
        /// Its own cap on open live odds connections.
        #[arg(long)]
        max_connections: Option<usize>,
    },
    /// List keys: prefix, name, created, state, last use. Never the keys.
    List {
        /// Revoked and expired keys too (their records stay, for audit).
        #[arg(long)]
        all: bool,
    },
    /// Revoke a key at once, on every replica.
    Revoke {
        /// The key's prefix, e.g. `rk_3f9a2b1c`.
        id: String,
    },
    /// Issue a new key for the same subscriber; the old one keeps working for the grace
    /// period, then expires.
    Rotate {
        /// The key's prefix, e.g. `rk_3f9a2b1c`.
        id: String,
        /// Hours the old key stays valid.
        #[arg(long, default_value_t = 24)]
        grace_hours: u64,
    },
}

#[derive(Args)]
struct PublishArgs {
    /// NDJSON file, one envelope a line; `-` reads standard input.
    file: PathBuf,
    /// NATS to publish to, as a user of the `feeder` role.
    #[command(flatten)]
    target: NatsTarget,
}

#[derive(Args)]
struct DemoArgs {
    /// Seed; the same seed and day give the same events.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// The day of the season's last meeting, YYYY-MM-DD; default today in Hong Kong.
    #[arg(long)]
    today: Option<String>,
    /// Where to write; default standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
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
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("racing: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::Publish(args) => publish_file(args).await,
            Command::Demo(args) => demo(args),
            Command::Keys(args) => keys(args).await,
            Command::Credentials(args) => credentials(args),
            Command::Status(args) => status(args).await,
            Command::DeadLetters(args) => dead_letters(args).await,
            Command::Rebuild(args) => rebuild(args).await,
            Command::Watch(args) => racing::watch::run(args).await.map(|()| ExitCode::SUCCESS),
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

/// Every setting that has an environment variable, for `racing --help`: the flags live
/// on the commands that take them, and an operator looking for a variable should not
/// have to guess which command's help lists it.
fn settings_help(root: &clap::Command) -> String {
    let mut settings: std::collections::BTreeMap<String, (String, Vec<&str>, String)> =
        std::collections::BTreeMap::new();
    let commands = std::iter::once(root).chain(root.get_subcommands());
    for command in commands {
        for arg in command.get_arguments() {
            let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
                continue;
            };
            let entry = settings
                .entry(env.to_string_lossy().into_owned())
                .or_insert_with(|| {
                    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                    (format!("--{long}"), Vec::new(), help)
                });
            if !std::ptr::eq(command, root) {
                entry.1.push(command.get_name());
            }
        }
    }
    let width = settings.keys().map(String::len).max().unwrap_or(0);
    let mut text = String::from(
        "Settings: each is a flag of the commands named, or its environment variable;\n\
         `racing COMMAND --help` gives the defaults.\n",
    );
    for (env, (flag, commands, help)) in &settings {
        let which = if commands.is_empty() {
            "all".to_owned()
        } else {
            commands.join(", ")
        };
        text.push_str(&format!("  {env:width$}  {flag} ({which}): {help}\n"));
    }
    text
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = Config::try_from(args)?;
    let app = Application::build(config).await?;
    let addr = app.addr();
    let host = if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    // The banner once the API answers: the read models caught up with the log (before
    // that, documents are 503s) and the server taking requests.
    let text = banner(&app, &host);
    let mut progress = app.progress();
    let home = format!("http://{host}/");
    tokio::spawn(async move {
        if progress.wait_for(|p| p.caught_up).await.is_err() {
            return;
        }
        let client = reqwest::Client::new();
        for _ in 0..200 {
            if client.get(&home).send().await.is_ok() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        println_lossy(&text);
    });

    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        signal.cancel();
    });
    app.run(shutdown).await?;
    Ok(ExitCode::SUCCESS)
}

/// What `serve` prints on start: where everything is, and in demo mode a working key.
fn banner(app: &Application, host: &str) -> String {
    let mut lines = vec![
        "racing is serving".to_owned(),
        format!("  API:        http://{host}/api/v1/"),
        format!("  pricing:    http://{host}/  (subscribe for a key)"),
        format!("  docs:       http://{host}/docs  (no key needed)"),
        format!("  live odds:  ws://{host}/ws/live/odds?api_key=KEY"),
        format!("  NATS:       {}", app.nats_url()),
    ];
    if let Some(outbox) = app.mail_outbox() {
        lines.push(format!(
            "  mail:       {} (no SMTP set: subscribers' mail is written here)",
            outbox.display()
        ));
    }
    if let Some(dir) = app.nats_credentials() {
        lines.push(format!(
            "  NATS users: {} (racing publish and racing keys with --data-dir {} use them)",
            dir.display(),
            dir.parent().unwrap_or(dir).display()
        ));
    }
    lines.extend([format!(
        "  admin:      http://{}/readyz  /metrics  /status",
        app.admin_addr()
    )]);
    if let Some(key) = app.demo_key() {
        lines.push(format!("  demo key:   {key}"));
        lines.push(format!(
            "  try:        curl -H 'X-API-Key: {key}' 'http://{host}/api/v1/racecards/today'"
        ));
        if let Some(e) = app.demo_example() {
            let curl = format!("              curl -H 'X-API-Key: {key}' 'http://{host}/api/v1");
            lines.push(format!("{curl}/results/{}/{}'", e.date, e.race_number));
            lines.push(format!("{curl}/horses/{}/form?limit=5'", e.horse_no));
            // The README's examples use these, so they answer on any day.
            lines.push(format!(
                "  shell:      export KEY={key} DAY={} RACE={} HORSE={}",
                e.date, e.race_number, e.horse_no
            ));
        }
        lines.push(format!(
            "              racing watch --url http://{host} --key {key}"
        ));
    }
    lines.join("\n")
}

/// Prints a line, ignoring a closed or broken stdout: losing the banner must not stop
/// the service (`println!` would panic).
fn println_lossy(text: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// SIGINT or SIGTERM.
async fn wait_for_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

async fn publish_file(args: PublishArgs) -> anyhow::Result<ExitCode> {
    // A feeder may not look at the stream: a missing one shows as "no responders" on the
    // first publish, which `publish` explains.
    let (client, _) = args.target.connect(Role::Feeder).await?;
    let js = async_nats::jetstream::new(client);
    let (reader, size): (Box<dyn std::io::BufRead>, u64) = if args.file.as_os_str() == "-" {
        (Box::new(BufReader::new(std::io::stdin())), 0)
    } else {
        let f = std::fs::File::open(&args.file)
            .with_context(|| format!("opening {}", args.file.display()))?;
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        (Box::new(BufReader::new(f)), size)
    };
    let bar = indicatif::ProgressBar::new(size);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let counts =
        publish::publish_payloads(&js, publish::ndjson_lines(reader), |n| bar.inc(n + 1)).await?;
    bar.finish_and_clear();
    println!(
        "published {}, duplicate {}, rejected {}",
        counts.published, counts.duplicate, counts.rejected
    );
    for (line, reason) in &counts.reasons {
        println!("  line {line}: {reason}");
    }
    if counts.rejected > counts.reasons.len() as u64 {
        println!(
            "  ... and {} more",
            counts.rejected - counts.reasons.len() as u64
        );
    }
    // A feeder's script must notice refused events.
    Ok(if counts.rejected > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

fn demo(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let today = match args.today {
        Some(d) if racing_events::Date::parse(&d).is_some() => d.parse::<jiff::civil::Date>()?,
        Some(d) => anyhow::bail!("--today `{d}` is not a YYYY-MM-DD calendar date"),
        None => {
            let hk = jiff::tz::TimeZone::get("Asia/Hong_Kong")?;
            jiff::Timestamp::now().to_zoned(hk).date()
        }
    };
    let feed = racing_demo::season(args.seed, today);
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

async fn keys(args: KeysArgs) -> anyhow::Result<ExitCode> {
    use racing::keys::{registry::Registry, KeyLimits};
    let stream = args.target.stream.clone();
    let (client, url) = args.target.connect(Role::KeysAdmin).await?;
    let js = async_nats::jetstream::new(client);
    let registry = Registry::connect(&js, &stream)
        .await
        .with_context(|| format!("the key registry of {stream} at {url}"))?;
    match args.action {
        KeysAction::Create {
            name,
            rate,
            burst,
            max_connections,
        } => {
            let limits = KeyLimits {
                rate_per_sec: rate,
                burst,
                max_connections,
            };
            let (key, record) = registry.create(&name, limits).await?;
            // The key alone, even with stderr joined to stdout: a script takes it as it is.
            println!("{key}");
            tracing::info!(
                key = %record.prefix(),
                name = %record.name,
                "key created; this is the only time it is shown"
            );
        }
        KeysAction::List { all } => {
            let now = jiff::Timestamp::now();
            println!(
                "{:<12} {:<24} {:<11} {:<28} {:<20} {:<28} LAST USED",
                "PREFIX", "NAME", "PLAN", "SUBSCRIBER", "CREATED", "STATE"
            );
            for (record, used) in registry.list(all).await? {
                let created = record.created_at.get(..19).unwrap_or(&record.created_at);
                println!(
                    "{:<12} {:<24} {:<11} {:<28} {:<20} {:<28} {}",
                    record.prefix(),
                    record.name,
                    record.plan.as_deref().unwrap_or("-"),
                    record.subscriber.as_deref().unwrap_or("-"),
                    created,
                    record.state(now),
                    used.as_deref().unwrap_or("-")
                );
            }
        }
        KeysAction::Revoke { id } => {
            let record = registry.revoke(&id).await?;
            println!("{} ({}) revoked", record.prefix(), record.name);
        }
        KeysAction::Rotate { id, grace_hours } => {
            let grace = std::time::Duration::from_secs(grace_hours.saturating_mul(3600));
            let (key, new, old) = registry.rotate(&id, grace).await?;
            println!("{key}");
            tracing::info!(
                new = %new.prefix(),
                name = %new.name,
                old = %old.prefix(),
                until = old.expires_at.as_deref().unwrap_or("-"),
                "key rotated; the old key works until then"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn credentials(args: CredentialsArgs) -> anyhow::Result<ExitCode> {
    let dir = args
        .dir
        .unwrap_or_else(|| racing::config::credentials_dir(&args.data_dir));
    let open = || Credentials::open(&dir, &args.stream);
    let reload = "auth.conf rewritten; reload the NATS servers that include it \
                  (`nats-server --signal reload`, or SIGHUP)";
    match args.action {
        CredentialsAction::Init => {
            let credentials = Credentials::ensure(&dir, &args.stream)?;
            list_users(&credentials);
            eprintln!(
                "credentials in {}: give each seed file to its user only; NATS servers include {}",
                dir.display(),
                dir.join(racing::nats::auth::AUTH_CONF).display()
            );
        }
        CredentialsAction::List => list_users(&open()?),
        CredentialsAction::Add { role, name } => {
            let role = Role::ALL
                .into_iter()
                .find(|r| r.name() == role)
                .with_context(|| format!("no role {role}"))?;
            let mut credentials = open()?;
            let user = credentials.add(role, &name)?.name.clone();
            println!("{}", credentials.seed_file(&user).display());
            eprintln!("{user} added; {reload}");
        }
        CredentialsAction::Rotate { user } => {
            let mut credentials = open()?;
            credentials.rotate(&user)?;
            println!("{}", credentials.seed_file(&user).display());
            eprintln!("{user} has a new seed; {reload}");
        }
        CredentialsAction::Remove { user } => {
            open()?.remove(&user)?;
            eprintln!("{user} removed; {reload}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list_users(credentials: &Credentials) {
    println!("{:<24} {:<11} PUBLIC KEY", "USER", "ROLE");
    for user in credentials.users() {
        println!("{:<24} {:<11} {}", user.name, user.role, user.public_key());
    }
}

async fn admin_get<T: serde::de::DeserializeOwned>(
    admin: &AdminArgs,
    path: &str,
) -> anyhow::Result<T> {
    let url = format!("{}{path}", admin.admin_url.trim_end_matches('/'));
    let response = reqwest::get(&url)
        .await
        .with_context(|| format!("reaching the service's admin listener at {url}"))?;
    Ok(response.json().await?)
}

async fn status(args: AdminArgs) -> anyhow::Result<ExitCode> {
    let s: racing::admin::Status = admin_get(&args, "/status").await?;
    let opt = |v: Option<u64>| v.map_or("?".to_owned(), |v| v.to_string());
    println!("stream:        {}", s.stream);
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
            "mail:          {} sent, {} waiting, {} failed attempts{}",
            mail.sent,
            mail.queued,
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

async fn dead_letters(args: DeadLetterArgs) -> anyhow::Result<ExitCode> {
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
async fn rebuild(args: AdminArgs) -> anyhow::Result<ExitCode> {
    use racing::rebuild::{State, Status};
    let base = args.admin_url.trim_end_matches('/');
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{base}/rebuild"))
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
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} events ({per_sec}, {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let status = loop {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let status: Status = admin_get(&args, "/rebuild").await?;
        bar.set_length(status.stream_last_seq.max(status.checkpoint));
        bar.set_position(status.checkpoint);
        if status.state != State::Running {
            break status;
        }
    };
    bar.finish_and_clear();
    match status.state {
        State::Done => {
            println!(
                "rebuilt: {} messages folded, checkpoint {}, now serving from {}",
                status.folded,
                status.checkpoint,
                status.directory.as_deref().unwrap_or("?")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_help_lists_every_setting_of_the_contract() {
        let help = settings_help(&Cli::command());
        for env in [
            "RACING_NATS_URL",
            "RACING_DATA_DIR",
            "RACING_LISTEN",
            "RACING_API_KEYS",
            "RACING_TIMEZONE",
            "RACING_STREAM ",
            "RACING_LOG ",
        ] {
            assert!(help.contains(env), "{env} missing from:\n{help}");
        }
        assert!(help.contains("--nats-url (serve, publish, keys)"), "{help}");
        for env in [
            "RACING_NATS_CREDS",
            "RACING_NATS_NKEY",
            "RACING_NATS_USER",
            "RACING_NATS_PASSWORD",
            "RACING_NATS_TOKEN",
            "RACING_NATS_CA",
            "RACING_NATS_CERT",
            "RACING_NATS_KEY",
        ] {
            let line = help
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{env} ")))
                .unwrap_or_else(|| panic!("{env} missing from:\n{help}"));
            assert!(line.contains("(serve, publish, keys)"), "{line}");
        }
    }

    #[test]
    fn the_filter_of_applied_ids_is_sized_in_mib() {
        let config = |args: &[&str]| {
            let cli = Cli::try_parse_from([&["racing", "serve"], args].concat()).expect("args");
            let Command::Serve(serve) = cli.command else {
                panic!("not serve");
            };
            Config::try_from(serve).expect("config").store
        };
        assert_eq!(config(&["--id-filter-mib", "8"]).id_filter_bytes, 8 << 20);
        assert_eq!(
            config(&[]),
            racing_projections::Options::default(),
            "32 MiB unless set"
        );
    }
}
