//! The real `racing` binary as a child process, for tests that kill it, signal it and
//! restart it as a crash or an operator would, and a small live odds client.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::StreamExt;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::support::{Broker, KEY};

/// How long a test waits for the binary to start, be ready, or send a frame. Its banner
/// comes once the projector has caught up, and the longest wait is a damaged store's
/// rebuild from an amended season's log, in a debug build, beside the rest of the suite
/// on two cores: long enough for that on a busy machine, short of nextest's limit for a
/// test (`.config/nextest.toml`), so that a service that never gets ready still fails
/// with its log rather than being killed without it.
pub const WAIT: Duration = Duration::from_secs(420);

/// The addresses `racing serve` prints when it starts.
#[derive(Debug, Default, Clone)]
struct Banner {
    api: Option<String>,
    admin: Option<String>,
    nats: Option<String>,
    /// Every line it printed, in order.
    lines: Vec<String>,
}

/// A `racing serve` process of a test's own, in a process group of its own: a test that
/// drops it (a failed assertion included) kills the group, the nats-server a service
/// without a broker runs with it.
pub struct Service {
    child: Child,
    pid: Pid,
    banner: watch::Receiver<Banner>,
    /// Where its standard error (the log) goes.
    pub log: PathBuf,
}

impl Drop for Service {
    fn drop(&mut self) {
        // The service's own nats-server is its child: killed with it, not left holding
        // its port when the service is killed without a chance to stop it. A group
        // already gone is no error.
        let _ = killpg(self.pid, Signal::SIGKILL);
    }
}

impl Service {
    /// Starts `racing serve` against `nats_url` with its read models under `data_dir`,
    /// on a free loopback port, accepting [`KEY`]; its log goes to `log`.
    pub fn spawn(nats: Option<&Broker>, data_dir: &Path, log: &Path) -> Service {
        Self::spawn_with(nats, data_dir, log, &[])
    }

    /// Same, with more environment variables set. No broker leaves `RACING_NATS_URL`
    /// unset, so the service runs a nats-server of its own.
    pub fn spawn_with(
        nats: Option<&Broker>,
        data_dir: &Path,
        log: &Path,
        env: &[(&str, &str)],
    ) -> Service {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("log file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_racing"));
        match nats {
            None => command.env_remove("RACING_NATS_URL"),
            Some(broker) => command
                .env("RACING_NATS_URL", &broker.url)
                .env("RACING_NATS_NKEY", &broker.nkey),
        };
        let mut child = command
            .arg("serve")
            .env("RACING_DATA_DIR", data_dir)
            .env("RACING_LISTEN", "127.0.0.1:0")
            .env("RACING_ADMIN_LISTEN", "127.0.0.1:0")
            .env("RACING_API_KEYS", KEY)
            .env("RACING_LOG", "info")
            .env("NO_COLOR", "1")
            // Tests make bursts of requests with one key.
            .env("RACING_RATE_LIMIT_PER_SEC", "100000")
            .env("RACING_RATE_LIMIT_BURST", "100000")
            .env_remove("RACING_DEMO")
            .env_remove("RACING_STREAM")
            .env_remove("RACING_STREAM_REPLICAS")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("the racing binary starts");
        let pid = Pid::from_raw(
            child
                .id()
                .and_then(|p| i32::try_from(p).ok())
                .expect("a pid"),
        );
        // The banner names the addresses; the rest of standard output is drained so that
        // the process never blocks on a full pipe.
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = watch::channel(Banner::default());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(printed)) = lines.next_line().await {
                tx.send_modify(|b| b.lines.push(printed.clone()));
                let line = printed.trim();
                if let Some(rest) = line.strip_prefix("API:") {
                    let api = rest.trim().trim_end_matches("/api/v1/").to_owned();
                    tx.send_modify(|b| b.api = Some(api));
                } else if let Some(rest) = line.strip_prefix("NATS:") {
                    let nats = rest.trim().to_owned();
                    tx.send_modify(|b| b.nats = Some(nats));
                } else if let Some(rest) = line.strip_prefix("admin:") {
                    let admin = rest.split_whitespace().next().unwrap_or_default();
                    let admin = admin.trim_end_matches("/readyz").to_owned();
                    tx.send_modify(|b| b.admin = Some(admin));
                }
            }
        });
        Service {
            child,
            pid,
            banner: rx,
            log: log.to_owned(),
        }
    }

    /// The API's base URL, `http://127.0.0.1:PORT`, once the process has bound it.
    pub async fn base(&mut self) -> String {
        let printed = tokio::time::timeout(WAIT, self.banner.wait_for(|b| b.api.is_some()))
            .await
            .map(|r| r.map(|b| b.api.clone()));
        match printed {
            Ok(Ok(Some(base))) => base,
            Ok(_) => {
                let status = self.exited(Duration::from_secs(5)).await;
                panic!(
                    "racing exited before serving ({status:?}); log:\n{}",
                    self.log_tail()
                )
            }
            Err(_) => panic!("racing did not bind in {WAIT:?}; log:\n{}", self.log_tail()),
        }
    }

    /// The lines the process printed up to the first that starts with `prefix` (after
    /// its indentation), that one included; waits up to `within` for it.
    pub async fn printed_until(&mut self, prefix: &str, within: Duration) -> Vec<String> {
        let upto = |lines: &[String]| lines.iter().position(|l| l.trim().starts_with(prefix));
        let printed = self.banner.wait_for(|b| upto(&b.lines).is_some());
        let lines = match tokio::time::timeout(within, printed).await {
            Ok(Ok(b)) => {
                let end = upto(&b.lines).unwrap_or_default();
                Some(b.lines[..=end].to_vec())
            }
            _ => None,
        };
        lines.unwrap_or_else(|| {
            panic!(
                "racing printed no `{prefix}` line in {within:?}; log:\n{}",
                self.log_tail()
            )
        })
    }

    /// The NATS URL the process printed (its own server's, when it runs one).
    pub async fn nats(&mut self) -> String {
        self.base().await;
        let printed = self.banner.wait_for(|b| b.nats.is_some());
        let url = match tokio::time::timeout(Duration::from_secs(2), printed).await {
            Ok(Ok(b)) => b.nats.clone(),
            _ => None,
        };
        url.unwrap_or_else(|| panic!("racing printed no NATS URL; log:\n{}", self.log_tail()))
    }

    /// The admin listener's base URL, if the process printed one.
    pub async fn admin(&mut self) -> Option<String> {
        self.base().await;
        let printed = self.banner.wait_for(|b| b.admin.is_some());
        match tokio::time::timeout(Duration::from_secs(2), printed).await {
            Ok(Ok(b)) => b.admin.clone(),
            _ => None,
        }
    }

    /// The admin `/status` (checkpoint, stream end, lag, counters), for failure messages.
    pub async fn status(&mut self, client: &reqwest::Client) -> String {
        let Some(admin) = self.admin().await else {
            return "no admin listener".into();
        };
        match client.get(format!("{admin}/status")).send().await {
            Ok(res) => res.text().await.unwrap_or_else(|e| e.to_string()),
            Err(e) => e.to_string(),
        }
    }

    /// Waits until the API answers `probe` with something other than 503 (the read
    /// models have caught up with the stream); returns the base URL.
    pub async fn ready(&mut self, client: &reqwest::Client, probe: &str) -> String {
        let base = self.base().await;
        let deadline = Instant::now() + WAIT;
        loop {
            let status = get(client, &base, probe).await.map(|(s, _)| s);
            if status
                .as_ref()
                .is_ok_and(|s| *s != StatusCode::SERVICE_UNAVAILABLE)
            {
                return base;
            }
            if let Ok(Some(exit)) = self.child.try_wait() {
                panic!(
                    "racing exited with {exit} before it was ready; log:\n{}",
                    self.log_tail()
                );
            }
            assert!(
                Instant::now() < deadline,
                "racing not ready in {WAIT:?} ({status:?}); log:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The process's id.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Sends `signal` to the process.
    pub fn signal(&self, signal: Signal) {
        kill(self.pid, signal).expect("signal the racing process");
    }

    /// Kills the process at once (SIGKILL), as a crash or the OOM killer would, and waits
    /// until it is gone; how it ended (by this signal, unless it had exited by itself).
    pub async fn kill(&mut self) -> ExitStatus {
        // A process that has exited but not been reaped still takes the signal.
        self.signal(Signal::SIGKILL);
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("a killed process ends")
            .expect("wait")
    }

    /// Waits up to `within` for the process to exit; `None` if it is still running.
    pub async fn exited(&mut self, within: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(within, self.child.wait())
            .await
            .ok()
            .map(|r| r.expect("wait"))
    }

    /// The whole log so far, without colours.
    pub fn log_text(&self) -> String {
        let raw = std::fs::read_to_string(&self.log).unwrap_or_default();
        // Drops ANSI escapes (`ESC [ ... m`), should the log be coloured anyway.
        let mut text = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                chars.by_ref().find(|c| c.is_ascii_alphabetic());
            } else {
                text.push(c);
            }
        }
        text
    }

    /// Waits up to `bound` for `said` to appear in the log; panics with the log's tail if
    /// it does not. (A line logged just after the service turns ready, for example, may
    /// not be there yet when a test looks once.)
    pub async fn wait_for_log(&self, said: &str, bound: Duration) {
        let started = tokio::time::Instant::now();
        while !self.log_text().contains(said) {
            assert!(
                started.elapsed() < bound,
                "no `{said}` in the log within {bound:?}; log:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The last lines of the log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

/// GET `base` + `path` with the test key; the status and the body's bytes.
pub async fn get(
    client: &reqwest::Client,
    base: &str,
    path: &str,
) -> Result<(StatusCode, bytes::Bytes), reqwest::Error> {
    let res = client
        .get(format!("{base}{path}"))
        .header("X-API-Key", KEY)
        .send()
        .await?;
    let status = res.status();
    Ok((status, res.bytes().await?))
}

/// A live odds WebSocket client that tolerates heartbeats.
pub struct LiveClient {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// What the server sent next.
#[derive(Debug)]
pub enum Frame {
    /// A JSON text frame.
    Json(Value),
    /// The server closed the connection, with this frame.
    Closed(Option<CloseFrame>),
    /// The connection ended without a close frame, or failed (why, for failure messages).
    Ended(#[allow(dead_code)] String),
}

impl LiveClient {
    /// Connects to `base` (an `http://` URL) with the test key and takes the welcome.
    pub async fn connect(base: &str) -> LiveClient {
        let url = format!("{}/ws/live/odds?api_key={KEY}", base.replace("http", "ws"));
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("upgrade");
        let mut client = LiveClient { socket };
        match client.next(WAIT).await {
            Frame::Json(v) if v["type"] == "welcome" => client,
            other => panic!("expected a welcome, got {other:?}"),
        }
    }

    /// Sends a JSON message.
    pub async fn send(&mut self, v: Value) {
        futures::SinkExt::send(&mut self.socket, Message::Text(v.to_string().into()))
            .await
            .expect("send");
    }

    /// The next frame that is not a heartbeat or a ping, waiting at most `within`.
    pub async fn next(&mut self, within: Duration) -> Frame {
        let deadline = Instant::now() + within;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .unwrap_or_else(|_| panic!("no frame in {within:?}"));
            match frame {
                Some(Ok(Message::Text(t))) => {
                    let v = crate::support::frame(&t);
                    if v["type"] != "heartbeat" {
                        return Frame::Json(v);
                    }
                }
                Some(Ok(Message::Close(f))) => return Frame::Closed(f),
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Frame::Ended(e.to_string()),
                None => return Frame::Ended("end of stream".into()),
            }
        }
    }

    /// The next JSON frame that is not a heartbeat; panics on anything else.
    pub async fn next_json(&mut self) -> Value {
        match self.next(WAIT).await {
            Frame::Json(v) => v,
            other => panic!("expected a frame, got {other:?}"),
        }
    }
}
