//! The client side of NATS security: the credential and TLS settings every command that
//! talks to NATS takes (one flag and one environment variable each), and connecting with
//! them as one role of the deployment.

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use async_nats::jetstream;
use clap::Args;
use tokio::sync::watch;

use super::auth::{self, Credentials, Role};
use crate::retry::Fatal;

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

/// How long a connection attempt may take: the TCP connection and NATS's greeting.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(2);

/// Connects to NATS as a user of `role`, with [`crate::retry::PATIENCE`]; see
/// [`Connection::open`].
pub async fn connect(
    url: &str,
    auth: &ClientAuth,
    role: Role,
) -> anyhow::Result<async_nats::Client> {
    Ok(Connection::open(url, auth, role, crate::retry::PATIENCE)
        .await?
        .client)
}

/// Where and as whom to connect: for a part of the service that opens a connection of its
/// own, as the projector does on its own threads (`Projector::run_on_own_threads`).
#[derive(Clone)]
pub struct Dial {
    url: String,
    auth: ClientAuth,
    role: Role,
    patience: Duration,
}

impl Dial {
    /// To `url` (servers comma-separated) as a user of `role`, with `patience`; see
    /// [`Connection::open`].
    pub fn new(url: &str, auth: &ClientAuth, role: Role, patience: Duration) -> Dial {
        Dial {
            url: url.to_owned(),
            auth: auth.clone(),
            role,
            patience,
        }
    }

    /// A new connection, as [`Connection::open`] makes it.
    pub async fn open(&self) -> anyhow::Result<Connection> {
        Connection::open(&self.url, &self.auth, self.role, self.patience).await
    }
}

/// A connection to NATS as one role, which hears the permissions violations its server
/// reports: a step the server does not permit this user fails at once, saying so, rather
/// than waiting for answers that never come.
pub struct Connection {
    /// The client.
    pub client: async_nats::Client,
    /// The last permissions violation the server reported.
    refused: watch::Receiver<Option<String>>,
    /// The URL, without credentials, for messages.
    shown: String,
    role: Role,
    /// The kind of credential, for messages.
    method: &'static str,
    patience: Duration,
}

impl Connection {
    /// Connects to NATS as a user of `role`. `url` may list several servers of a
    /// cluster, comma-separated; the client fails over between them, and reconnects for
    /// ever once connected. Nothing answering yet (connection refused, no greeting) is
    /// tried again for up to `patience`, so that a service started together with its
    /// broker does not fail on a race: the first failure is logged at once, naming the
    /// URL and what is wrong. What retrying does not mend ends at once: a URL that is
    /// not a NATS URL, host names none of which resolves, a server that is not NATS,
    /// credentials refused, TLS failing.
    pub async fn open(
        url: &str,
        auth: &ClientAuth,
        role: Role,
        patience: Duration,
    ) -> anyhow::Result<Connection> {
        let shown = redact(url);
        let servers = servers(url, &shown).await?;
        let (tx, refused) = watch::channel(None);
        let tx = Arc::new(tx);
        let client = crate::retry::patiently(
            &format!("connecting to NATS as the {role}"),
            patience,
            || async {
                let tx = tx.clone();
                let options = auth
                    .options()
                    .await
                    .map_err(|e| Fatal(format!("{e:#}")))?
                    .name(format!("racing-{role}"))
                    .custom_inbox_prefix(role.inbox_prefix())
                    .connection_timeout(CONNECTION_TIMEOUT)
                    // Reconnect for ever once connected: a replica outlives a NATS restart.
                    .max_reconnects(None)
                    .event_callback(move |event| {
                        let tx = tx.clone();
                        async move { heard(event, role, &tx) }
                    });
                options
                    .connect(servers.as_slice())
                    .await
                    .map_err(|e| connect_failure(&e, &shown, auth, role))
            },
        )
        .await?;
        Ok(Connection {
            client,
            refused,
            shown,
            role,
            method: auth.method(),
            patience,
        })
    }

    /// JetStream through this connection.
    pub fn jetstream(&self) -> jetstream::Context {
        jetstream::new(self.client.clone())
    }

    /// Runs `attempt` as [`crate::retry::patiently`] does, with this connection's
    /// patience, and ends it at once with an error naming the role, its credential and
    /// what was refused if the server reports a permissions violation meanwhile.
    pub async fn ready<T, Fut>(&self, what: &str, attempt: impl FnMut() -> Fut) -> anyhow::Result<T>
    where
        Fut: Future<Output = anyhow::Result<T>>,
    {
        let mut refused = self.refused.clone();
        refused.mark_unchanged();
        tokio::select! {
            done = crate::retry::patiently(what, self.patience, attempt) => done,
            Ok(()) = refused.changed() => {
                let why = refused.borrow().clone().unwrap_or_default();
                let (shown, role, method) = (&self.shown, self.role, self.method);
                Err(Fatal(format!(
                    "{what}: NATS at {shown} does not permit the {role} ({method}) this: {why} \
                     (docs/security.md: what each role may do)"
                ))
                .into())
            }
        }
    }
}

/// What the client hears from the server besides answers: a permissions violation is
/// handed to [`Connection::ready`], and the first is logged as a warning (the client logs
/// every server error at info level; a refused burst of publishes is one per message).
fn heard(event: async_nats::Event, role: Role, refused: &watch::Sender<Option<String>>) {
    if let async_nats::Event::ServerError(async_nats::ServerError::Other(e)) = event {
        if e.to_ascii_lowercase().contains("permissions violation") {
            if refused.borrow().is_none() {
                tracing::warn!(%role, "NATS refused the {role} something: {e}");
            }
            refused.send_replace(Some(e));
        }
    }
}

/// The servers of `url`, each checked to be a NATS URL; at least one must resolve.
async fn servers(url: &str, shown: &str) -> anyhow::Result<Vec<async_nats::ServerAddr>> {
    let mut servers = Vec::new();
    for server in url.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parsed = server.parse::<async_nats::ServerAddr>().map_err(|e| {
            Fatal(format!(
                "`{}` in the NATS URL `{shown}` is not a NATS URL: {e}",
                redact(server)
            ))
        })?;
        servers.push(parsed);
    }
    if servers.is_empty() {
        return Err(Fatal(format!("the NATS URL `{shown}` names no server")).into());
    }
    let mut unresolved = Vec::new();
    for server in &servers {
        if let Err(e) = server.socket_addrs().await {
            unresolved.push(format!("cannot resolve {} ({e})", server.host()));
        }
    }
    if unresolved.len() == servers.len() {
        return Err(Fatal(format!("NATS at {shown}: {}", unresolved.join("; "))).into());
    }
    if !unresolved.is_empty() {
        tracing::warn!(
            "NATS at {shown}: {}; trying the others",
            unresolved.join("; ")
        );
    }
    Ok(servers)
}

/// A failed connection attempt as an error for [`crate::retry::patiently`]: [`Fatal`]
/// where trying again does not mend it.
fn connect_failure(
    e: &async_nats::ConnectError,
    shown: &str,
    auth: &ClientAuth,
    role: Role,
) -> anyhow::Error {
    use async_nats::ConnectErrorKind as Kind;
    let io = std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
    let text = e.to_string();
    match e.kind() {
        Kind::AuthorizationViolation | Kind::Authentication => Fatal(format!(
            "NATS at {shown} refused the {role}'s credentials ({}: {})",
            auth.method(),
            e.kind()
        ))
        .into(),
        Kind::Tls => Fatal(format!("TLS with NATS at {shown} failed: {e}")).into(),
        Kind::ServerParse => Fatal(format!("NATS URL `{shown}`: {e}")).into(),
        Kind::Io if io.is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused) => {
            anyhow::anyhow!("nothing answers at {shown} (connection refused)")
        }
        // What a server sends first is not NATS's greeting: an HTTP server, a database.
        Kind::Io
            if io.is_some_and(|io| {
                matches!(
                    io.kind(),
                    std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData
                )
            }) || text.contains("expected INFO, got") =>
        {
            let said = text
                .split_once("invalid server operation: ")
                .map_or(text.as_str(), |(_, op)| op)
                .lines()
                .next()
                .unwrap_or_default()
                .trim_matches(['\'', ' ']);
            Fatal(format!(
                "{shown} is not a NATS server: it answered `{said}`; check the host and port"
            ))
            .into()
        }
        Kind::TimedOut => anyhow::anyhow!(
            "no NATS server at {shown} answered within {CONNECTION_TIMEOUT:?} \
             (a firewall dropping packets, or a server that is not NATS)"
        ),
        _ => anyhow::anyhow!("NATS at {shown}: {e}"),
    }
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
