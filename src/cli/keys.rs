//! `racing keys`: issue, list, revoke, unrevoke and rotate API keys in the key registry that every
//! replica shares through NATS.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::nats_target::NatsTarget;
use crate::nats::auth::Role;

/// The key registry to manage, and what to do with it.
#[derive(Args)]
pub struct KeysArgs {
    /// NATS holding the key registry (the buckets are `{stream}_KEYS` and
    /// `{stream}_KEY_USAGE`), as a user of the `keys-admin` role.
    #[command(flatten)]
    target: NatsTarget,
    #[command(subcommand)]
    action: KeysAction,
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
        /// Its own number of webhook endpoints.
        #[arg(long)]
        max_webhooks: Option<usize>,
    },
    /// List keys: prefix, name, created, state, last use. Never the keys.
    List {
        /// Revoked and expired keys too (their records stay, for audit).
        #[arg(long)]
        all: bool,
    },
    /// Revoke a key at once, on every replica. A subscriber's key stays revoked: the
    /// lost-key form never replaces it.
    Revoke {
        /// The key's prefix, e.g. `rk_3f9a2b1c`.
        id: String,
    },
    /// Let a revoked key work again, on every replica: the only way back from `revoke`.
    Unrevoke {
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

/// Runs one `racing keys` action against the registry; a new key goes to stdout alone.
pub async fn run(args: KeysArgs) -> anyhow::Result<ExitCode> {
    use crate::keys::record::KeyLimits;
    use crate::keys::registry::Registry;
    let stream = args.target.stream.clone();
    let (client, url) = args.target.connect(Role::KeysAdmin).await?;
    let js = async_nats::jetstream::new(client);
    let registry = Registry::open(&js, &stream)
        .await
        .with_context(|| format!("the key registry of {stream} at {url}"))?;
    match args.action {
        KeysAction::Create {
            name,
            rate,
            burst,
            max_connections,
            max_webhooks,
        } => {
            let limits = KeyLimits {
                rate_per_sec: rate,
                burst,
                max_connections,
                max_webhooks,
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
                "{:<12} {:<24} {:<11} {:<28} {:<24} {:<32} LAST USED",
                "PREFIX", "NAME", "PLAN", "SUBSCRIBER", "CREATED", "STATE"
            );
            for (record, used) in registry.list(all).await? {
                // Each time as it is kept: UTC, `Z`, milliseconds.
                let created = &record.created_at;
                println!(
                    "{:<12} {:<24} {:<11} {:<28} {:<24} {:<32} {}",
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
            if record.subscriber.is_some() {
                println!(
                    "the subscriber's record keeps it revoked: the lost-key form replaces \
                     the subscriber's other keys, never this one; `racing keys unrevoke {}` \
                     is the only way back",
                    record.prefix()
                );
            }
        }
        KeysAction::Unrevoke { id } => {
            let record = registry.unrevoke(&id).await?;
            println!(
                "{} ({}) works again: {}",
                record.prefix(),
                record.name,
                record.state(jiff::Timestamp::now())
            );
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
