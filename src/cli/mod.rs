//! The commands of the `racing` binary other than `serve`, one file per concern: the
//! admin listener's client, API keys, NATS credentials, the set-up, the feeds, the
//! feed's offline check and the import of Hong Kong history. `main.rs` holds the command line that dispatches to them.

use std::path::PathBuf;

use clap::Args;

use crate::nats::{ClientAuth, Connection, Credentials, NatsArgs, Role};

pub mod admin;
pub mod check;
pub mod credentials;
pub mod feed;
pub mod import;
pub mod keys;
pub mod setup;
pub mod snapshot;

/// Where a command that talks to NATS finds it, and how it proves who it is.
#[derive(Args)]
pub struct NatsTarget {
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
    pub async fn connect(self, role: Role) -> anyhow::Result<(async_nats::Client, String)> {
        let (connection, url) = self.open(role).await?;
        Ok((connection.client, url))
    }

    /// [`NatsTarget::connect`], keeping the connection's report of what the server
    /// refuses (see [`Connection::ready`]).
    pub async fn open(self, role: Role) -> anyhow::Result<(Connection, String)> {
        let mut auth = ClientAuth::try_from(self.nats)?;
        let mut url = self.nats_url.filter(|u| !u.trim().is_empty());
        let own = crate::config::credentials_dir(&self.data_dir);
        if !auth.is_set() && own.is_dir() {
            let credentials = Credentials::open(&own, &self.stream)?;
            auth = ClientAuth::from_credentials(&credentials, role)?;
            if url.is_none() {
                url = crate::nats::local::listening_on(&self.data_dir.join("nats").join("ports"))
                    .map(|addr| format!("nats://{addr}"));
            }
        }
        let url = url.unwrap_or_else(|| "nats://127.0.0.1:4222".to_owned());
        let connection = Connection::open(&url, &auth, role, crate::retry::PATIENCE).await?;
        Ok((connection, crate::nats::redact(&url)))
    }
}
