//! The command line of the `racing` binary: every command with its arguments, and the
//! settings that `racing --help` lists with their variables. `src/main.rs` parses it and
//! runs the command.

use clap::{Parser, Subcommand};

use crate::cli::admin::{AdminArgs, DeadLetterArgs};
use crate::cli::credentials::CredentialsArgs;
use crate::cli::feed::{DemoArgs, PublishArgs};
use crate::cli::keys::KeysArgs;
use crate::cli::setup::SetupArgs;
use crate::config::ServeArgs;

/// The command line: how to log, and the command.
#[derive(Parser)]
#[command(
    name = "racing",
    version,
    about = "Horse racing data service",
    long_about = None
)]
pub struct Cli {
    /// Log filter (tracing's EnvFilter syntax), e.g. `info` or `racing=debug`; default
    /// `info` for `serve`, `warn` for the other commands (their result is on stdout).
    #[arg(long, global = true, env = "RACING_LOG")]
    pub log: Option<String>,
    /// Log lines as `human` text or `json` objects (one per line).
    #[arg(long, global = true, env = "RACING_LOG_FORMAT", default_value = "human", value_parser = ["human", "json"])]
    pub log_format: String,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command of the binary.
#[derive(Subcommand)]
// Parsed once at start-up: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run the API and the projector.
    Serve(ServeArgs),
    /// Publish an NDJSON file of event envelopes to the stream (a feeder).
    Publish(PublishArgs),
    /// Write the demo season as NDJSON, ready for `racing publish`.
    Demo(DemoArgs),
    /// Turn real racing history into feed events: written as NDJSON or published.
    Import(crate::cli::import::ImportArgs),
    /// As a feeder: the refusals of the events it published, each with its reason.
    Refusals(crate::cli::refusals::RefusalsArgs),
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
    Snapshot(crate::cli::snapshot::SnapshotArgs),
    /// Watch a race's prices move, live, in the terminal (one line per update in a pipe).
    Watch(crate::watch::WatchArgs),
    /// A rebuild's fold, in a process of its own: `serve` starts it, feeding it the log.
    #[command(hide = true)]
    RebuildWorker(crate::rebuild::worker::WorkerArgs),
}

/// Every setting that has an environment variable, for `racing --help`: the flags live
/// on the commands that take them, and an operator looking for a variable should not
/// have to guess which command's help lists it.
pub fn settings_help(root: &clap::Command) -> String {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::Config;
    use clap::CommandFactory as _;

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

    /// Every setting of a command but `serve` that says where a service or its NATS is:
    /// `(command, environment variable)`.
    pub(crate) fn address_settings(root: &clap::Command) -> Vec<(String, String)> {
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
