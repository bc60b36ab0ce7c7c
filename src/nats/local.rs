//! A nats-server child process for the embedded default and for tests: JetStream,
//! loopback only, authentication always on (the users of a credentials directory), TLS
//! and a WebSocket listener when asked.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context as _};
use tokio::process::{Child, Command};

use super::auth::{Credentials, Role};
use super::client::{self, ClientAuth};

/// TLS for a local server: its certificate and key, and the CA it checks client
/// certificates against (then every client must present one).
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// Server certificate, PEM.
    pub cert: PathBuf,
    /// Its private key, PEM.
    pub key: PathBuf,
    /// CA of client certificates; `None`: clients are not asked for one.
    pub verify_clients: Option<PathBuf>,
}

/// A WebSocket listener beside the client port (nats-server's own, `websocket {}`), for
/// one more user: on loopback, on a port the server picks, without TLS (loopback only,
/// as the rest of a local server). Its user, an nkey, may connect over WebSocket alone,
/// subscribe to `subscribe` and publish nothing.
#[derive(Debug, Clone)]
pub struct WebSocketUser {
    /// The user's public nkey: the server's configuration holds no secret.
    pub nkey: String,
    /// Subjects it may subscribe to.
    pub subscribe: Vec<String>,
}

impl WebSocketUser {
    /// Its entry of the `authorization` block's users, and the `websocket` block.
    fn config(&self) -> (String, String) {
        let subscribe = self
            .subscribe
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ");
        // An empty `allow` list allows everything: publishing is denied instead.
        let user = format!(
            "    # the WebSocket listener's user\n    {{ nkey: \"{}\", permissions: {{\n        \
             publish: {{ deny: [\">\"] }}\n        subscribe: {{ allow: [{subscribe}] }}\n    \
             }}, allowed_connection_types: [\"WEBSOCKET\"] }}\n",
            self.nkey
        );
        // No compression, nats-server's default: the service's WebSocket sends plain frames.
        let listener =
            "websocket {\n  host: \"127.0.0.1\"\n  port: -1\n  no_tls: true\n}\n".to_owned();
        (user, listener)
    }
}

/// What a local server serves besides plain NATS on its client port: nothing by default.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// TLS on the client port.
    pub tls: Option<ServerTls>,
    /// A WebSocket listener and its user.
    pub websocket: Option<WebSocketUser>,
    /// JetStream's `max_file_store`, bytes: what its streams may store together on
    /// disk; `None`: the server's own default (most of the disk's free space).
    pub max_file_store: Option<u64>,
}

/// A nats-server child process with JetStream, listening on loopback; stopped on drop.
pub struct LocalNats {
    child: Child,
    addr: SocketAddr,
    websocket: Option<SocketAddr>,
    store_dir: PathBuf,
    credentials: Credentials,
    tls: bool,
}

impl LocalNats {
    /// Starts nats-server with its store in `store_dir`, on `port` if given and free,
    /// else on a port the server picks itself (so that servers started side by side never
    /// race for one), and waits until it accepts connections. Only the users of
    /// `credentials` may connect, each with its role's permissions.
    pub async fn start(
        program: &str,
        store_dir: &Path,
        port: Option<u16>,
        credentials: &Credentials,
    ) -> anyhow::Result<Self> {
        Self::start_with(
            program,
            store_dir,
            port,
            credentials,
            &ServerOptions::default(),
        )
        .await
    }

    /// [`LocalNats::start`], with TLS and a WebSocket listener if `options` asks for them.
    pub async fn start_with(
        program: &str,
        store_dir: &Path,
        port: Option<u16>,
        credentials: &Credentials,
        options: &ServerOptions,
    ) -> anyhow::Result<Self> {
        std::fs::create_dir_all(store_dir)
            .with_context(|| format!("creating {}", store_dir.display()))?;
        // A payload may be 1 MiB (feed contract) and NATS counts headers in max_payload,
        // so the limit is raised above the 1 MB default, as nats.conf does.
        let mut conf = String::from("max_payload: 2MB\n");
        if let Some(bytes) = options.max_file_store {
            conf.push_str(&format!("jetstream {{\n  max_file_store: {bytes}\n}}\n"));
        }
        let websocket = options.websocket.as_ref().map(WebSocketUser::config);
        match &websocket {
            Some((user, listener)) => {
                conf.push_str(&credentials.authorization_with(user));
                conf.push_str(listener);
            }
            None => conf.push_str(&credentials.authorization()),
        }
        if let Some(tls) = &options.tls {
            let quoted = |p: &Path| format!("\"{}\"", p.display());
            conf.push_str(&format!(
                "tls {{\n  cert_file: {}\n  key_file: {}\n",
                quoted(&tls.cert),
                quoted(&tls.key)
            ));
            if let Some(ca) = &tls.verify_clients {
                conf.push_str(&format!("  ca_file: {}\n  verify: true\n", quoted(ca)));
            }
            conf.push_str("}\n");
        }
        let path = store_dir.join("nats-server.conf");
        std::fs::write(&path, conf).with_context(|| format!("writing {}", path.display()))?;
        let port = port.filter(|p| port_is_free(*p));
        let listeners = Listeners {
            tls: options.tls.is_some(),
            websocket: websocket.is_some(),
        };
        let spawn = |port| Self::spawn(program, store_dir, port, credentials, listeners);
        match spawn(port).await {
            // The requested port was taken between the check and the start.
            Err(_) if port.is_some() => spawn(None).await,
            other => other,
        }
    }

    async fn spawn(
        program: &str,
        store_dir: &Path,
        port: Option<u16>,
        credentials: &Credentials,
        listeners: Listeners,
    ) -> anyhow::Result<Self> {
        let conf = store_dir.join("nats-server.conf");
        let ports_dir = store_dir.join("ports");
        let _ = std::fs::remove_dir_all(&ports_dir);
        std::fs::create_dir_all(&ports_dir)?;
        let port_arg = port.map_or_else(|| "-1".to_owned(), |p| p.to_string());
        let mut child = Command::new(program)
            .arg("-c")
            .arg(&conf)
            .args(["-a", "127.0.0.1", "-p", &port_arg, "-js", "-sd"])
            .arg(store_dir)
            .arg("--ports_file_dir")
            .arg(&ports_dir)
            .arg("-l")
            .arg(store_dir.join("nats-server.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| {
                format!("starting `{program}`; install it (apt-get install nats-server) or set RACING_NATS_URL")
            })?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait()? {
                bail!("nats-server exited at start-up with {status} (port {port_arg} in use?)");
            }
            // The server writes its ports file once it listens on every port.
            if let Some(ports) = ports(&ports_dir) {
                let websocket = ports.websocket();
                if let Some(addr) = ports.nats() {
                    if (websocket.is_some() || !listeners.websocket)
                        && tokio::net::TcpStream::connect(addr).await.is_ok()
                    {
                        return Ok(LocalNats {
                            child,
                            addr,
                            websocket: websocket.filter(|_| listeners.websocket),
                            store_dir: store_dir.to_owned(),
                            credentials: credentials.clone(),
                            tls: listeners.tls,
                        });
                    }
                }
            }
            if tokio::time::Instant::now() > deadline {
                bail!("nats-server did not accept connections within 10 s");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The client URL, `nats://127.0.0.1:PORT` (`tls://` with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "tls" } else { "nats" };
        format!("{scheme}://{}", self.addr)
    }

    /// The URL of the WebSocket listener, `ws://127.0.0.1:PORT`, if it was asked for.
    pub fn websocket_url(&self) -> Option<String> {
        self.websocket.map(|addr| format!("ws://{addr}"))
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The users that may connect.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The credentials of the first user of `role`.
    pub fn auth(&self, role: Role) -> anyhow::Result<ClientAuth> {
        ClientAuth::from_credentials(&self.credentials, role)
    }

    /// Connects as the first user of `role`.
    pub async fn connect(&self, role: Role) -> anyhow::Result<async_nats::Client> {
        client::connect(&self.url(), &self.auth(role)?, role).await
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Where its JetStream store is.
    pub fn store_dir(&self) -> &Path {
        &self.store_dir
    }

    /// Asks the server to shut down cleanly (SIGTERM) and waits up to `grace` for it,
    /// then kills it.
    pub async fn stop(mut self, grace: Duration) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
            if tokio::time::timeout(grace, self.child.wait()).await.is_ok() {
                return;
            }
        }
        let _ = self.child.kill().await;
    }

    /// Kills the server at once, as a crash would (for fault tests).
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }
}

/// The listeners a server was configured with.
#[derive(Debug, Clone, Copy)]
struct Listeners {
    tls: bool,
    websocket: bool,
}

/// The ports file nats-server writes once it listens:
/// `{"nats":["nats://h:p"],"websocket":["ws://h:p"]}`.
#[derive(serde::Deserialize)]
struct Ports {
    nats: Vec<String>,
    #[serde(default)]
    websocket: Vec<String>,
}

impl Ports {
    fn nats(&self) -> Option<SocketAddr> {
        address(self.nats.first()?, &["nats://", "tls://"])
    }

    fn websocket(&self) -> Option<SocketAddr> {
        address(self.websocket.first()?, &["ws://", "wss://"])
    }
}

/// The address of a URL of one of `schemes`.
fn address(url: &str, schemes: &[&str]) -> Option<SocketAddr> {
    schemes
        .iter()
        .find_map(|s| url.strip_prefix(s))?
        .parse()
        .ok()
}

fn ports(ports_dir: &Path) -> Option<Ports> {
    let file = std::fs::read_dir(ports_dir)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "ports"))?;
    serde_json::from_slice(&std::fs::read(file.path()).ok()?).ok()
}

/// The client address in the ports file nats-server writes in `ports_dir`.
pub fn listening_on(ports_dir: &Path) -> Option<SocketAddr> {
    ports(ports_dir)?.nats()
}

fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A port that was free a moment ago on loopback, for a listener about to start on it.
/// It is below the kernel's range of ephemeral ports, the ones outgoing connections are
/// given: a port from `bind(0)` is one of those, and in the benchmark an outgoing
/// connection took one between this check and the service's bind, which then failed
/// ("Address already in use") and ended the run. Each port is handed out once a process.
pub fn free_port() -> anyhow::Result<u16> {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let below = ephemeral_ports_start().unwrap_or(32_768).max(10_001);
    let mut given = crate::supervise::lock(&GIVEN);
    for _ in 0..1_000 {
        let port = rand::random_range(10_000..below);
        if !given.contains(&port) && port_is_free(port) {
            given.insert(port);
            return Ok(port);
        }
    }
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The first port of the kernel's ephemeral range (Linux).
fn ephemeral_ports_start() -> Option<u16> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_below_the_ephemeral_range_and_never_handed_out_twice() {
        let start = ephemeral_ports_start().unwrap_or(32_768);
        let ports: Vec<u16> = (0..200).map(|_| free_port().expect("a port")).collect();
        assert!(
            ports.iter().all(|p| (10_000..start).contains(p)),
            "{ports:?}"
        );
        let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len());
        let listener = TcpListener::bind(("127.0.0.1", ports[0]));
        assert!(listener.is_ok(), "a port handed out can be listened on");
    }

    #[test]
    fn the_ports_file_gives_the_client_and_websocket_addresses() {
        let ports: Ports = serde_json::from_str(
            r#"{"nats":["nats://127.0.0.1:4222"],"websocket":["ws://127.0.0.1:8080"]}"#,
        )
        .expect("a ports file");
        assert_eq!(ports.nats(), "127.0.0.1:4222".parse().ok());
        assert_eq!(ports.websocket(), "127.0.0.1:8080".parse().ok());
        let plain: Ports =
            serde_json::from_str(r#"{"nats":["tls://127.0.0.1:4222"]}"#).expect("a ports file");
        assert_eq!(plain.nats(), "127.0.0.1:4222".parse().ok());
        assert_eq!(plain.websocket(), None);
    }

    #[test]
    fn the_websocket_user_may_only_subscribe_and_only_over_websocket() {
        let (user, listener) = WebSocketUser {
            nkey: "UABC".into(),
            subscribe: vec!["racing.odds.>".into()],
        }
        .config();
        assert!(user.contains(r#"publish: { deny: [">"] }"#), "{user}");
        assert!(
            user.contains(r#"subscribe: { allow: ["racing.odds.>"] }"#),
            "{user}"
        );
        assert!(
            user.contains(r#"allowed_connection_types: ["WEBSOCKET"]"#),
            "{user}"
        );
        assert!(listener.contains("no_tls: true") && listener.contains("port: -1"));
    }
}
