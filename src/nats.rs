//! NATS wiring: connecting, creating or updating the stream of the feed contract, and
//! running a local nats-server when no NATS URL is configured.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context as _};
use async_nats::jetstream::{self, consumer, stream};
use racing_events::{ALL_SUBJECTS, MAX_PAYLOAD_BYTES};
use tokio::process::{Child, Command};

/// Bytes of headers a message may carry on top of its payload.
const HEADER_ALLOWANCE: usize = 4096;

/// Connects to NATS, retrying for a while so that a service started together with its
/// broker (compose, the demo script) does not fail on a race. `url` may list several
/// servers of a cluster, comma-separated; the client fails over between them.
pub async fn connect(url: &str) -> anyhow::Result<async_nats::Client> {
    let servers: Vec<&str> = url
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut last = None;
    for attempt in 0..40 {
        match async_nats::ConnectOptions::new()
            .name("racing")
            .retry_on_initial_connect()
            .connection_timeout(Duration::from_secs(2))
            .connect(servers.as_slice())
            .await
        {
            Ok(client) => return Ok(client),
            Err(e) => {
                tracing::warn!(attempt, error = %e, "NATS not reachable yet");
                last = Some(e);
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
    Err(last
        .map(anyhow::Error::from)
        .unwrap_or_else(|| anyhow::anyhow!("no attempt")))
    .with_context(|| format!("connecting to NATS at {url}"))
}

/// The stream settings of the feed contract: every `racing.>` subject, file storage, kept
/// forever, deduplicated inside `duplicate_window`.
pub fn stream_config(name: &str, duplicate_window: Duration, replicas: usize) -> stream::Config {
    stream::Config {
        num_replicas: replicas.max(1),
        name: name.to_owned(),
        description: Some("Racing feed: the source of truth of every read model".into()),
        subjects: vec![ALL_SUBJECTS.to_owned()],
        storage: stream::StorageType::File,
        retention: stream::RetentionPolicy::Limits,
        duplicate_window,
        // JetStream counts headers (Nats-Msg-Id) in the message size: leave room for them
        // on top of a contract-sized payload.
        max_message_size: i32::try_from(MAX_PAYLOAD_BYTES + HEADER_ALLOWANCE).unwrap_or(i32::MAX),
        ..Default::default()
    }
}

/// Every message of `stream` from sequence `start` on, in order, through an ordered pull
/// consumer of its own: how the projector and a rebuild read the log.
pub async fn messages_from(
    js: &jetstream::Context,
    stream: &str,
    start: u64,
) -> anyhow::Result<consumer::pull::Ordered> {
    let consumer = js
        .get_stream(stream)
        .await?
        .create_consumer(consumer::pull::OrderedConfig {
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: start,
            },
            ..Default::default()
        })
        .await?;
    Ok(consumer.messages().await?)
}

/// Creates the stream, or brings the settings of an existing one up to date.
pub async fn ensure_stream(
    js: &jetstream::Context,
    name: &str,
    duplicate_window: Duration,
) -> anyhow::Result<stream::Info> {
    ensure_replicated_stream(js, name, duplicate_window, None).await
}

/// [`ensure_stream`] with `replicas` copies of the stream in a JetStream cluster; `None`
/// keeps the replicas of an existing stream (an operator may have set them), or 1.
pub async fn ensure_replicated_stream(
    js: &jetstream::Context,
    name: &str,
    duplicate_window: Duration,
    replicas: Option<usize>,
) -> anyhow::Result<stream::Info> {
    let replicas = match replicas {
        Some(r) => r,
        None => match js.get_stream(name).await {
            Ok(mut existing) => existing.info().await.map_or(1, |i| i.config.num_replicas),
            Err(_) => 1,
        },
    };
    // A cluster that has just started answers only once it has elected its JetStream
    // leader: keep asking for a while before giving up.
    let config = stream_config(name, duplicate_window, replicas);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match js.create_or_update_stream(config.clone()).await {
            Ok(info) => return Ok(info),
            Err(e) if tokio::time::Instant::now() < deadline => {
                tracing::warn!(error = %e, stream = name, "JetStream not ready yet");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => {
                return Err(anyhow::Error::from(e))
                    .with_context(|| format!("creating or updating stream {name}"))
            }
        }
    }
}

/// A nats-server child process with JetStream, listening on loopback; stopped on drop.
pub struct LocalNats {
    child: Child,
    addr: SocketAddr,
    store_dir: PathBuf,
}

impl LocalNats {
    /// Starts nats-server with its store in `store_dir`, on `port` if given and free,
    /// else on a port the server picks itself (so that servers started side by side never
    /// race for one), and waits until it accepts connections.
    pub async fn start(program: &str, store_dir: &Path, port: Option<u16>) -> anyhow::Result<Self> {
        std::fs::create_dir_all(store_dir)
            .with_context(|| format!("creating {}", store_dir.display()))?;
        let port = port.filter(|p| port_is_free(*p));
        match Self::spawn(program, store_dir, port).await {
            // The requested port was taken between the check and the start.
            Err(_) if port.is_some() => Self::spawn(program, store_dir, None).await,
            other => other,
        }
    }

    async fn spawn(program: &str, store_dir: &Path, port: Option<u16>) -> anyhow::Result<Self> {
        // A payload may be 1 MiB (feed contract) and NATS counts headers in max_payload,
        // so the limit is raised above the 1 MB default, as nats.conf does.
        let conf = store_dir.join("nats-server.conf");
        std::fs::write(&conf, "max_payload: 2MB\n")
            .with_context(|| format!("writing {}", conf.display()))?;
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
            // The server writes its ports file once it listens.
            if let Some(addr) = listening_on(&ports_dir) {
                if tokio::net::TcpStream::connect(addr).await.is_ok() {
                    return Ok(LocalNats {
                        child,
                        addr,
                        store_dir: store_dir.to_owned(),
                    });
                }
            }
            if tokio::time::Instant::now() > deadline {
                bail!("nats-server did not accept connections within 10 s");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The client URL, `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://{}", self.addr)
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

/// The client address in the ports file nats-server writes (`{"nats":["nats://h:p"]}`).
fn listening_on(ports_dir: &Path) -> Option<SocketAddr> {
    #[derive(serde::Deserialize)]
    struct Ports {
        nats: Vec<String>,
    }
    let file = std::fs::read_dir(ports_dir)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "ports"))?;
    let ports: Ports = serde_json::from_slice(&std::fs::read(file.path()).ok()?).ok()?;
    ports.nats.first()?.strip_prefix("nats://")?.parse().ok()
}

fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A port that was free a moment ago on loopback.
pub fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
