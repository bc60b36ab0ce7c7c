//! `racing`: the command line of the racing data service. `serve` runs the API and its
//! projector, `publish` is a feeder for NDJSON files, `demo` writes the demo season; the
//! commands other than `serve` live in the library, in `racing::cli`.

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use racing::cli::admin::{self, AdminArgs, DeadLetterArgs};
use racing::cli::credentials::{self, CredentialsArgs};
use racing::cli::feed::{self, DemoArgs, PublishArgs};
use racing::cli::keys::{self, KeysArgs};
use racing::cli::setup::{self, SetupArgs};
use racing::config::{Config, ServeArgs};
use racing::Application;
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
    /// Turn real racing history into feed events: written as NDJSON or published.
    Import(racing::cli::import::ImportArgs),
    /// As a feeder: the refusals of the events it published, each with its reason.
    Refusals(racing::cli::refusals::RefusalsArgs),
    /// Issue, list, rotate and revoke API keys (shared by every replica through NATS).
    Keys(KeysArgs),
    /// Make and manage the NATS users of a deployment: one nkey per set-up, service,
    /// feeder and keys admin, and the `auth.conf` that NATS servers include.
    Credentials(CredentialsArgs),
    /// Make the stream and its key-value buckets, or update the stream's settings, as the
    /// set-up user: before the service starts, and after an upgrade.
    Setup(SetupArgs),
    /// Where a running service stands: stream, checkpoint, lag, readiness.
    Status(AdminArgs),
    /// List refused events of a running service, or show one in full.
    DeadLetters(DeadLetterArgs),
    /// Rebuild every read model of a running service from the log into a fresh store and
    /// swap it in; the API answers from the store in use until the swap.
    Rebuild(AdminArgs),
    /// Snapshots of the read models in the object store: write one now, list them,
    /// check one, or start the service's read models from one.
    Snapshot(racing::cli::snapshot::SnapshotArgs),
    /// Watch a race's prices move, live, in the terminal (one line per update in a pipe).
    Watch(racing::watch::WatchArgs),
    /// A rebuild's fold, in a process of its own: `serve` starts it, feeding it the log.
    #[command(hide = true)]
    RebuildWorker(racing::rebuild::WorkerArgs),
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

/// Every setting that has an environment variable, for `racing --help`: the flags live
/// on the commands that take them, and an operator looking for a variable should not
/// have to guess which command's help lists it.
fn settings_help(root: &clap::Command) -> String {
    let mut settings: std::collections::BTreeMap<String, (String, Vec<String>, String)> =
        std::collections::BTreeMap::new();
    // Each command by the words that call it (`import hk-results`), the root's as none.
    let mut commands = vec![(String::new(), root)];
    for command in root.get_subcommands() {
        commands.push((command.get_name().to_owned(), command));
        for sub in command.get_subcommands() {
            commands.push((format!("{} {}", command.get_name(), sub.get_name()), sub));
        }
    }
    for (name, command) in commands {
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
            if !name.is_empty() {
                entry.1.push(name.clone());
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
    let mut config = Config::try_from(args)?;
    // A rebuild folds in a process of its own, of this program.
    config.rebuild_worker = std::env::current_exe().ok();
    let app = Application::build(config).await?;
    let host = reachable(app.addr());
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
    let admin = reachable(app.admin_addr());
    lines.push(format!(
        "  admin:      http://{admin}/readyz  /metrics  /status"
    ));
    if let Some(key) = app.demo_key() {
        lines.push(format!("  demo key:   {key}"));
        lines.push(format!(
            "  try:        curl -H 'X-API-Key: {key}' 'http://{host}/api/v1/racecards/today'"
        ));
        let example = app.demo_example();
        if let Some(e) = example {
            let curl = format!("              curl -H 'X-API-Key: {key}' 'http://{host}/api/v1");
            lines.push(format!("{curl}/results/{}/{}'", e.date, e.race_number));
            lines.push(format!("{curl}/horses/{}/form?limit=5'", e.horse_no));
        }
        // The program as it was started, so that the line runs as it is, wherever it was
        // built or installed.
        let exe = std::env::current_exe().ok();
        let program = exe
            .as_ref()
            .map_or_else(|| "racing".to_owned(), |p| p.display().to_string());
        lines.push(format!(
            "              {program} watch --url http://{host} --key {key}"
        ));
        if let Some(e) = example {
            // Its own NATS is found through the data directory (its port, 4222 or the
            // one it took where that was busy, and its users); another is named.
            let nats = match app.nats_credentials() {
                Some(dir) => Nats::DataDir(
                    std::fs::canonicalize(dir.parent().unwrap_or(dir))
                        .unwrap_or_else(|_| dir.parent().unwrap_or(dir).to_path_buf()),
                ),
                None => Nats::Url(app.nats_url().to_owned()),
            };
            let shell = Shell {
                program_dir: exe.as_deref().and_then(std::path::Path::parent),
                api: format!("http://{host}"),
                admin: format!("http://{admin}"),
                nats,
                key,
                example: e,
            };
            lines.push(format!("  shell:      {}", shell.line()));
        }
    }
    lines.join("\n")
}

/// `addr` as a client reaches it: a service listening on every address is reached on
/// loopback.
fn reachable(addr: std::net::SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    }
}

/// Where the `racing` commands that talk to NATS find the service's.
enum Nats {
    /// The service runs its own, under this data directory.
    DataDir(std::path::PathBuf),
    /// It uses this one.
    Url(String),
}

/// What the banner's `shell:` line sets.
struct Shell<'a> {
    /// Where the `racing` binary that runs is.
    program_dir: Option<&'a std::path::Path>,
    /// The API's address, `http://host:port`.
    api: String,
    /// The admin listener's.
    admin: String,
    nats: Nats,
    key: &'a str,
    example: &'a racing_demo::Example,
}

impl Shell<'_> {
    /// An `export` of every address variable the `racing` commands read (`RACING_URL`,
    /// `RACING_ADMIN_URL`, `RACING_DATA_DIR` or `RACING_NATS_URL`) and the key
    /// (`RACING_API_KEY`), so that every command reaches this service wherever its ports
    /// are; the README's examples' `URL` and `KEY`, and the demo's day, race, horse and
    /// position, so that they answer on any day; the `PATH` with this very program first.
    fn line(&self) -> String {
        let mut words = vec!["export".to_owned()];
        if let Some(dir) = self.program_dir {
            words.push(format!(
                "PATH={}:\"$PATH\"",
                shell_word(&dir.display().to_string())
            ));
        }
        words.push(format!("RACING_URL={}", shell_word(&self.api)));
        words.push(format!("RACING_ADMIN_URL={}", shell_word(&self.admin)));
        words.push(match &self.nats {
            Nats::DataDir(dir) => {
                format!("RACING_DATA_DIR={}", shell_word(&dir.display().to_string()))
            }
            Nats::Url(url) => format!("RACING_NATS_URL={}", shell_word(url)),
        });
        words.push(format!("RACING_API_KEY={}", shell_word(self.key)));
        let e = self.example;
        words.push(format!("KEY={}", shell_word(self.key)));
        words.push(format!("URL={}", shell_word(&self.api)));
        words.push(format!("DAY={}", e.date));
        words.push(format!("RACE={}", e.race_number));
        words.push(format!("HORSE={}", shell_word(&e.horse_no)));
        if let Some(seq) = e.opening_seq {
            words.push(format!("SEQ={seq}"));
        }
        words.join(" ")
    }
}

/// `text` as one word of a POSIX shell: as it is where it holds nothing the shell reads
/// (a build directory's path, as a rule), else in single quotes.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,@%:".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
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
        assert!(
            help.contains("--nats-url (serve, publish, import hk-results, refusals, keys, setup)"),
            "{help}"
        );
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
            assert!(
                line.contains("(serve, publish, import hk-results, refusals, keys, setup)"),
                "{line}"
            );
        }
    }

    #[test]
    fn a_directory_is_one_shell_word_however_it_is_named() {
        assert_eq!(
            shell_word("/work/x/target/release"),
            "/work/x/target/release"
        );
        assert_eq!(shell_word("/home/a b/target"), "'/home/a b/target'");
        assert_eq!(shell_word("/it's/$HOME"), r"'/it'\''s/$HOME'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("http://127.0.0.1:8081"), "http://127.0.0.1:8081");
    }

    /// The variables an `export` line sets, and their values as written.
    fn exported(line: &str) -> std::collections::BTreeMap<&str, &str> {
        line.split_whitespace()
            .skip(1)
            .filter_map(|w| w.split_once('='))
            .collect()
    }

    fn example() -> racing_demo::Example {
        racing_demo::Example {
            date: "2026-11-25".into(),
            race_number: 9,
            horse_no: "H095".into(),
            opening_seq: Some(2771),
        }
    }

    #[test]
    fn the_shell_line_sets_every_address_the_commands_read_wherever_the_ports_are() {
        let example = example();
        let shell = Shell {
            program_dir: Some(std::path::Path::new("/opt/racing/bin")),
            api: "http://127.0.0.1:8081".into(),
            admin: "http://127.0.0.1:9091".into(),
            nats: Nats::DataDir("/srv/demo".into()),
            key: "demo_k1",
            example: &example,
        };
        let line = shell.line();
        let vars = exported(&line);
        assert_eq!(vars["RACING_URL"], "http://127.0.0.1:8081", "{line}");
        assert_eq!(vars["RACING_ADMIN_URL"], "http://127.0.0.1:9091", "{line}");
        assert_eq!(vars["RACING_DATA_DIR"], "/srv/demo", "{line}");
        assert_eq!(vars["RACING_API_KEY"], "demo_k1", "{line}");
        assert_eq!(vars["PATH"], "/opt/racing/bin:\"$PATH\"", "{line}");
        for (name, value) in [
            ("URL", "http://127.0.0.1:8081"),
            ("KEY", "demo_k1"),
            ("DAY", "2026-11-25"),
            ("RACE", "9"),
            ("HORSE", "H095"),
            ("SEQ", "2771"),
        ] {
            assert_eq!(vars.get(name), Some(&value), "{line}");
        }
        // Every command that reaches the service reads its address from one of them.
        let set: Vec<&str> = vars.keys().copied().collect();
        for (command, env) in address_settings(&Cli::command()) {
            assert!(
                set.contains(&env.as_str()) || env == "RACING_NATS_URL",
                "`racing {command}` reads {env}, which the banner does not set: {line}"
            );
        }

        let other = Shell {
            nats: Nats::Url("nats://nats.internal:4222".into()),
            ..shell
        };
        let line = other.line();
        let vars = exported(&line);
        assert_eq!(
            vars["RACING_NATS_URL"], "nats://nats.internal:4222",
            "{line}"
        );
        assert!(!vars.contains_key("RACING_DATA_DIR"), "{line}");
    }

    /// Every setting of a command but `serve` that says where a service or its NATS is:
    /// `(command, environment variable)`.
    fn address_settings(root: &clap::Command) -> Vec<(String, String)> {
        let mut found = Vec::new();
        let mut commands: Vec<(String, &clap::Command)> = root
            .get_subcommands()
            .map(|c| (c.get_name().to_owned(), c))
            .collect();
        while let Some((name, command)) = commands.pop() {
            commands.extend(
                command
                    .get_subcommands()
                    .map(|c| (format!("{name} {}", c.get_name()), c)),
            );
            if name == "serve" {
                continue;
            }
            for arg in command.get_arguments() {
                let long = arg.get_long().unwrap_or_default();
                if !(long.ends_with("url") || long == "data-dir") {
                    continue;
                }
                let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
                let env = env.unwrap_or_else(|| panic!("`racing {name} --{long}` has no variable"));
                found.push((name.clone(), env));
            }
        }
        assert!(found.len() > 10, "{found:?}");
        found
    }

    #[test]
    fn the_filter_of_applied_ids_and_the_store_cache_are_sized_in_mib() {
        let config = |args: &[&str]| {
            let cli = Cli::try_parse_from([&["racing", "serve"], args].concat()).expect("args");
            let Command::Serve(serve) = cli.command else {
                panic!("not serve");
            };
            Config::try_from(serve).expect("config").store
        };
        assert_eq!(config(&["--id-filter-mib", "8"]).id_filter_bytes, 8 << 20);
        assert_eq!(
            config(&[]).id_filter_bytes,
            racing_projections::Options::default().id_filter_bytes,
            "32 MiB unless set"
        );
        assert_eq!(
            config(&["--id-filter-max-mib", "64"]).id_filter_most_bytes,
            64 << 20
        );
        assert_eq!(
            config(&[]).id_filter_most_bytes,
            racing_projections::Options::default().id_filter_most_bytes,
            "512 MiB unless set"
        );
        assert_eq!(config(&["--store-cache-mib", "64"]).cache_bytes, 64 << 20);
        assert_eq!(config(&[]).cache_bytes, 1 << 30, "1 GiB unless set");
    }
}
