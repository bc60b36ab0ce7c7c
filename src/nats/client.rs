//! The client side of NATS security: the credential and TLS settings every command that
//! talks to NATS takes (one flag and one environment variable each), and connecting with
//! them as one role of the deployment.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::Args;

use super::auth::{self, Credentials, Role};

/// How a command proves who it is to NATS, and how it checks NATS in turn. At most one
/// of the credentials; none for a server without authentication.
#[derive(Debug, Clone, Default, Args)]
pub struct NatsArgs {
    /// NATS credentials file (`.creds`: a user JWT and its nkey seed), for servers run
    /// with operator JWTs.
    #[arg(long, global = true, env = "RACING_NATS_CREDS")]
    pub nats_creds: Option<PathBuf>,
    /// File holding the user's nkey seed (`SU...`), as `racing credentials` writes them.
    #[arg(long, global = true, env = "RACING_NATS_NKEY")]
    pub nats_nkey: Option<PathBuf>,
    /// NATS user name (with --nats-password).
    #[arg(long, global = true, env = "RACING_NATS_USER")]
    pub nats_user: Option<String>,
    /// NATS password (prefer the environment variable: a flag shows in `ps`).
    #[arg(
        long,
        global = true,
        env = "RACING_NATS_PASSWORD",
        hide_env_values = true
    )]
    pub nats_password: Option<String>,
    /// NATS authentication token (prefer the environment variable).
    #[arg(long, global = true, env = "RACING_NATS_TOKEN", hide_env_values = true)]
    pub nats_token: Option<String>,
    /// CA certificate (PEM) that signs the NATS servers' certificates; implies TLS.
    #[arg(long, global = true, env = "RACING_NATS_CA")]
    pub nats_ca: Option<PathBuf>,
    /// Client certificate (PEM) for servers that verify clients (with --nats-key).
    #[arg(long, global = true, env = "RACING_NATS_CERT")]
    pub nats_cert: Option<PathBuf>,
    /// Private key (PEM) of the client certificate.
    #[arg(long, global = true, env = "RACING_NATS_KEY")]
    pub nats_key: Option<PathBuf>,
}

/// A secret a client presents, read and checked; never shown by `Debug`.
#[derive(Clone, Default)]
enum Secret {
    #[default]
    None,
    CredsFile(PathBuf),
    Nkey(String),
    UserPassword(String, String),
    Token(String),
}

/// Credentials and TLS settings of a NATS client, checked.
#[derive(Clone, Default)]
pub struct ClientAuth {
    secret: Secret,
    ca: Option<PathBuf>,
    client_cert: Option<(PathBuf, PathBuf)>,
}

impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientAuth")
            .field("method", &self.method())
            .field("ca", &self.ca)
            .field("client_cert", &self.client_cert.as_ref().map(|c| &c.0))
            .finish()
    }
}

impl ClientAuth {
    /// An nkey user's seed.
    pub fn nkey(seed: &str) -> ClientAuth {
        ClientAuth {
            secret: Secret::Nkey(seed.to_owned()),
            ..ClientAuth::default()
        }
    }

    /// The first user of `role` in a credentials directory.
    pub fn from_credentials(credentials: &Credentials, role: Role) -> anyhow::Result<ClientAuth> {
        Ok(ClientAuth::nkey(credentials.first(role)?.seed()))
    }

    /// These credentials with TLS checked against `ca`.
    pub fn with_ca(mut self, ca: PathBuf) -> ClientAuth {
        self.ca = Some(ca);
        self
    }

    /// Whether any credential is set.
    pub fn is_set(&self) -> bool {
        !matches!(self.secret, Secret::None)
    }

    /// What kind of credential, for messages (never the credential).
    pub fn method(&self) -> &'static str {
        match self.secret {
            Secret::None => "none",
            Secret::CredsFile(_) => "credentials file",
            Secret::Nkey(_) => "nkey",
            Secret::UserPassword(..) => "user and password",
            Secret::Token(_) => "token",
        }
    }

    /// The client options that present these credentials and check TLS as asked.
    async fn options(&self) -> anyhow::Result<async_nats::ConnectOptions> {
        let mut options = async_nats::ConnectOptions::new();
        options = match &self.secret {
            Secret::None => options,
            Secret::CredsFile(path) => options
                .credentials_file(path)
                .await
                .with_context(|| format!("reading the NATS credentials file {}", path.display()))?,
            Secret::Nkey(seed) => options.nkey(seed.clone()),
            Secret::UserPassword(user, password) => {
                options.user_and_password(user.clone(), password.clone())
            }
            Secret::Token(token) => options.token(token.clone()),
        };
        if let Some(ca) = &self.ca {
            options = options.add_root_certificates(ca.clone()).require_tls(true);
        }
        if let Some((cert, key)) = &self.client_cert {
            options = options
                .add_client_certificate(cert.clone(), key.clone())
                .require_tls(true);
        }
        Ok(options)
    }
}

impl TryFrom<NatsArgs> for ClientAuth {
    type Error = anyhow::Error;

    fn try_from(a: NatsArgs) -> anyhow::Result<ClientAuth> {
        let nonempty = |s: Option<String>| s.filter(|s| !s.is_empty());
        let (user, password, token) = (
            nonempty(a.nats_user),
            nonempty(a.nats_password),
            nonempty(a.nats_token),
        );
        let mut secrets = Vec::new();
        if let Some(path) = a.nats_creds {
            check_file(&path, "RACING_NATS_CREDS")?;
            secrets.push(Secret::CredsFile(path));
        }
        if let Some(path) = a.nats_nkey {
            let seed = auth::read_seed(&path)?;
            if nkeys::KeyPair::from_seed(&seed).is_err() {
                bail!("RACING_NATS_NKEY: {} holds no nkey seed", path.display());
            }
            secrets.push(Secret::Nkey(seed));
        }
        match (user, password) {
            (Some(user), Some(password)) => secrets.push(Secret::UserPassword(user, password)),
            (Some(_), None) => bail!("RACING_NATS_USER needs RACING_NATS_PASSWORD"),
            (None, Some(_)) => bail!("RACING_NATS_PASSWORD needs RACING_NATS_USER"),
            (None, None) => {}
        }
        if let Some(token) = token {
            secrets.push(Secret::Token(token));
        }
        if secrets.len() > 1 {
            bail!(
                "give one NATS credential: a creds file, an nkey, a user and password, or a token"
            );
        }
        if let Some(ca) = &a.nats_ca {
            check_file(ca, "RACING_NATS_CA")?;
        }
        let client_cert = match (a.nats_cert, a.nats_key) {
            (Some(cert), Some(key)) => {
                check_file(&cert, "RACING_NATS_CERT")?;
                check_file(&key, "RACING_NATS_KEY")?;
                Some((cert, key))
            }
            (None, None) => None,
            _ => bail!("RACING_NATS_CERT and RACING_NATS_KEY go together"),
        };
        Ok(ClientAuth {
            secret: secrets.pop().unwrap_or_default(),
            ca: a.nats_ca,
            client_cert,
        })
    }
}

fn check_file(path: &Path, setting: &str) -> anyhow::Result<()> {
    std::fs::metadata(path)
        .map(|_| ())
        .with_context(|| format!("{setting}: cannot read {}", path.display()))
}

/// `url` with any `user:password@` taken out, for logs and messages.
pub fn redact(url: &str) -> String {
    url.split(',')
        .map(|server| {
            let server = server.trim();
            let (scheme, rest) = server.split_once("://").unwrap_or(("", server));
            let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            if scheme.is_empty() {
                rest.to_owned()
            } else {
                format!("{scheme}://{rest}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Connects to NATS as a user of `role`, retrying for a while so that a service started
/// together with its broker (compose, the demo script) does not fail on a race. `url` may
/// list several servers of a cluster, comma-separated; the client fails over between
/// them. Refused credentials and TLS failures end at once: retrying does not mend them.
pub async fn connect(
    url: &str,
    auth: &ClientAuth,
    role: Role,
) -> anyhow::Result<async_nats::Client> {
    use async_nats::ConnectErrorKind as Kind;
    let servers: Vec<&str> = url
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let shown = redact(url);
    let mut last = None;
    for attempt in 0..40 {
        let options = auth
            .options()
            .await?
            .name(format!("racing-{role}"))
            .custom_inbox_prefix(role.inbox_prefix())
            .connection_timeout(Duration::from_secs(2))
            // Reconnect for ever once connected: a replica outlives a NATS restart.
            .max_reconnects(None);
        match options.connect(servers.as_slice()).await {
            Ok(client) => return Ok(client),
            Err(e) => match e.kind() {
                Kind::AuthorizationViolation | Kind::Authentication => bail!(
                    "NATS at {shown} refused the {role}'s credentials ({}: {})",
                    auth.method(),
                    e.kind()
                ),
                Kind::Tls => bail!("TLS with NATS at {shown} failed: {e}"),
                Kind::ServerParse => bail!("NATS URL `{shown}`: {e}"),
                _ => {
                    tracing::warn!(attempt, error = %e, "NATS not reachable yet");
                    last = Some(e);
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            },
        }
    }
    Err(last
        .map(anyhow::Error::from)
        .unwrap_or_else(|| anyhow::anyhow!("no attempt")))
    .with_context(|| format!("connecting to NATS at {shown}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_a_url_are_never_shown() {
        assert_eq!(
            redact("nats://feeder:s3cret@a:4222, tls://tok@b:4222,c:4222"),
            "nats://a:4222,tls://b:4222,c:4222"
        );
        assert_eq!(redact("nats://127.0.0.1:4222"), "nats://127.0.0.1:4222");
    }

    #[test]
    fn one_credential_at_most_and_pairs_that_go_together() {
        let both = NatsArgs {
            nats_token: Some("t".into()),
            nats_user: Some("u".into()),
            nats_password: Some("p".into()),
            ..NatsArgs::default()
        };
        assert!(ClientAuth::try_from(both).is_err());
        let half = NatsArgs {
            nats_user: Some("u".into()),
            ..NatsArgs::default()
        };
        assert!(ClientAuth::try_from(half).is_err());
        let cert_only = NatsArgs {
            nats_cert: Some("/etc/hostname".into()),
            ..NatsArgs::default()
        };
        assert!(ClientAuth::try_from(cert_only).is_err());
        let auth = ClientAuth::try_from(NatsArgs {
            nats_token: Some("very-secret".into()),
            ..NatsArgs::default()
        })
        .expect("a token");
        assert_eq!(auth.method(), "token");
        assert!(!format!("{auth:?}").contains("very-secret"));
    }
}
