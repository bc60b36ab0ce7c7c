//! `racing serve`: the service run until a signal, and the banner it prints once the API
//! answers: where everything is, and in demo mode a working key and a shell line that
//! sets what the other commands read.

use std::io::Write;
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use crate::app::Application;
use crate::config::{Config, ServeArgs};

/// Runs the service with `args` until SIGINT or SIGTERM, printing the banner once the
/// API answers.
pub async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
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
    use crate::cli::command::tests::address_settings;
    use crate::cli::command::Cli;
    use clap::CommandFactory as _;

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
}
