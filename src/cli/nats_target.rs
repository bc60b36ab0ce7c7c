//! Where a command that talks to NATS finds it, and how it proves who it is.

use std::path::PathBuf;

use clap::Args;

use crate::nats::auth::{Credentials, Role};
use crate::nats::client::{ClientAuth, Connection, NatsArgs};

/// Where a command that talks to NATS finds it, and how it proves who it is.
#[derive(Args)]
pub struct NatsTarget {
    /// NATS server; unset: the one `racing serve` runs under the data directory, else
    /// nats://127.0.0.1:4222.
    #[arg(long, global = true, env = "RACING_NATS_URL")]
    nats_url: Option<String>,
    /// JetStream stream of the service.
    #[arg(long, global = true, env = "RACING_STREAM", default_value = "RACING")]
    pub(super) stream: String,
    /// Data directory of a `racing serve` that runs its own NATS: with no credential
    /// given, its own users' credentials (and its server's address) are used.
    #[arg(long, global = true, env = "RACING_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    #[command(flatten)]
    nats: NatsArgs,
}

impl NatsTarget {
    /// The NATS user's name these options connect as, where they tell it: an nkey seed
    /// file's name (`feeder-hkjc.nk` is `feeder-hkjc`), the user of a user and password,
    /// or, with no credential given, the data directory's first user of `role`.
    pub fn user_name(&self, role: Role) -> Option<String> {
        if let Some(path) = &self.nats.nats_nkey {
            return path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned());
        }
        if let Some(user) = self.nats.nats_user.as_ref().filter(|u| !u.is_empty()) {
            return Some(user.clone());
        }
        let own = crate::config::credentials_dir(&self.data_dir);
        let nothing_given = self.nats.nats_creds.is_none()
            && self.nats.nats_token.as_ref().is_none_or(|t| t.is_empty());
        if nothing_given && own.is_dir() {
            let credentials = Credentials::open(&own, &self.stream).ok()?;
            return credentials.first(role).ok().map(|u| u.name.clone());
        }
        None
    }

    /// The stream these options name.
    pub fn stream(&self) -> &str {
        &self.stream
    }

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
        Ok((connection, crate::nats::client::redact(&url)))
    }
}
