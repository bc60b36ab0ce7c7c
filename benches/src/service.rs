//! The service under test, as it runs in production: the `racing serve` binary in its own
//! process, against the benchmark's nats-server, with a key and limits high enough that
//! the benchmark measures the work per request rather than the refusals.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use tokio::process::{Child, Command};

/// The header of the API key.
pub const KEY_HEADER: &str = "X-API-Key";

/// How to start the service.
#[derive(Clone)]
pub struct Target {
    /// The `racing` binary.
    pub racing: PathBuf,
    /// The benchmark's nats-server.
    pub nats_url: String,
    /// Its users.
    pub credentials: racing::nats::Credentials,
    /// The one key the service accepts.
    pub key: String,
    /// The zone that defines the service's "today": the log's.
    pub timezone: String,
    /// Where each run's log goes.
    pub logs: PathBuf,
    /// Settings given with `--service-env`, after the bench's own.
    pub settings: Vec<(String, String)>,
}

/// A running `racing serve`; killed if dropped without [`Service::stop`].
pub struct Service {
    child: Child,
    pid: u32,
    port: u16,
    admin_port: u16,
    started: Instant,
    key: String,
    log: PathBuf,
}

impl Service {
    /// Starts the service on `data_dir` (its read models) and a free loopback port; the
    /// clock of [`Service::wait_ok`] starts now.
    pub async fn start(target: &Target, data_dir: &Path, label: &str) -> anyhow::Result<Service> {
        Service::start_on(target, data_dir, label, None).await
    }

    /// [`Service::start`] on the CPUs of `cpus` alone (a `taskset -c` list), if given.
    pub async fn start_on(
        target: &Target,
        data_dir: &Path,
        label: &str,
        cpus: Option<&str>,
    ) -> anyhow::Result<Service> {
        let port = racing::nats::free_port()?;
        let admin_port = racing::nats::free_port()?;
        std::fs::create_dir_all(&target.logs)?;
        let log = target.logs.join(format!("{label}.log"));
        let stderr = std::fs::File::create(&log)?;
        // taskset runs the service in its own process (exec), its threads on those CPUs.
        let mut command = match cpus {
            Some(cpus) => {
                let mut c = Command::new("taskset");
                c.arg("-c").arg(cpus).arg(&target.racing);
                c
            }
            None => Command::new(&target.racing),
        };
        // Only the settings below: none of the caller's RACING_* variables.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("RACING_") {
                command.env_remove(name);
            }
        }
        command
            .arg("serve")
            .env("RACING_NATS_URL", &target.nats_url)
            .env("RACING_NATS_NKEY", target.credentials.seed_file("service"))
            .env("RACING_DATA_DIR", data_dir)
            .env("RACING_LISTEN", format!("127.0.0.1:{port}"))
            // A free port: the default one may be taken by another service.
            .env("RACING_ADMIN_LISTEN", format!("127.0.0.1:{admin_port}"))
            .env("RACING_API_KEYS", &target.key)
            .env("RACING_TIMEZONE", &target.timezone)
            // Quiet, unless BENCH_SERVICE_LOG asks for more (e.g. `info`: when the
            // background check of the store ends, when a rebuild swaps in).
            .env(
                "RACING_LOG",
                std::env::var("BENCH_SERVICE_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .env("RACING_RATE_LIMIT_PER_SEC", "100000000")
            .env("RACING_RATE_LIMIT_BURST", "100000000")
            .env("RACING_WS_MAX_CONNECTIONS_PER_KEY", "20000")
            // No snapshot written in the background, where it would share the machine
            // with what a part measures; and a start on an empty store replays the log,
            // whatever the bucket holds. The snapshot part writes one through the admin
            // listener, and asks for the load where it measures it.
            .env("RACING_SNAPSHOT_WRITE", "false")
            .env("RACING_SNAPSHOT_LOAD", "false")
            .envs(target.settings.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .kill_on_drop(true);
        let started = Instant::now();
        let child = command
            .spawn()
            .with_context(|| format!("starting {}", target.racing.display()))?;
        let pid = child.id().context("the service exited at once")?;
        Ok(Service {
            child,
            pid,
            port,
            admin_port,
            started,
            key: target.key.clone(),
            log,
        })
    }

    /// [`Service::start`], then waits for its first 200 of today's card (its read
    /// models caught up) and until it is idle ([`Service::wait_idle`]): ready to measure.
    pub async fn start_ready(
        target: &Target,
        data_dir: &Path,
        label: &str,
    ) -> anyhow::Result<Service> {
        let mut service = Service::start(target, data_dir, label).await?;
        service
            .wait_ok(
                &reqwest::Client::new(),
                "/api/v1/racecards/today",
                Duration::from_millis(20),
                Duration::from_secs(3600),
            )
            .await?;
        service.wait_idle(Duration::from_secs(120)).await?;
        Ok(service)
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// `http://127.0.0.1:ADMIN_PORT` + `path`: the admin listener (`/status`, `/rebuild`).
    pub fn admin_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.admin_port)
    }

    /// The service's `/metrics` as they stand now (since it started). Not while the
    /// service is paused: the request would wait for it, up to its timeout.
    pub async fn metrics(&self, client: &reqwest::Client) -> anyhow::Result<Metrics> {
        let text = client
            .get(self.admin_url("/metrics"))
            .timeout(Duration::from_secs(10))
            .send()
            .await?
            .error_for_status()?
            .text()
            .await
            .context("the service's metrics")?;
        Ok(Metrics(text))
    }

    /// The port the API listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Asks for `path` every `poll` until the first 200 (connection refused while the
    /// process starts, 503 while the read models are built) and returns the time from
    /// [`Service::start`] to that answer. Fails on any other status, if the process
    /// exits, or after `limit`.
    pub async fn wait_ok(
        &mut self,
        client: &reqwest::Client,
        path: &str,
        poll: Duration,
        limit: Duration,
    ) -> anyhow::Result<Duration> {
        let url = self.url(path);
        self.wait_for(client, &url, path, poll, limit).await
    }

    /// [`Service::wait_ok`] of the admin listener's `/readyz`: 200 once the projector has
    /// caught up once and is within its lag of the stream's end, with NATS reachable.
    pub async fn wait_ready(
        &mut self,
        client: &reqwest::Client,
        poll: Duration,
        limit: Duration,
    ) -> anyhow::Result<Duration> {
        let url = self.admin_url("/readyz");
        self.wait_for(client, &url, "/readyz", poll, limit).await
    }

    /// Asks for `url` (`path` in what it says) as [`Service::wait_ok`] does.
    async fn wait_for(
        &mut self,
        client: &reqwest::Client,
        url: &str,
        path: &str,
        poll: Duration,
        limit: Duration,
    ) -> anyhow::Result<Duration> {
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "the service exited with {status} before answering; see {}",
                    self.log.display()
                );
            }
            if let Ok(r) = client.get(url).header(KEY_HEADER, &self.key).send().await {
                let at = self.started.elapsed();
                match r.status().as_u16() {
                    200 => return Ok(at),
                    503 => {}
                    other => bail!("GET {path}: {other} while waiting for the service"),
                }
            }
            if self.started.elapsed() > limit {
                bail!(
                    "GET {path}: no 200 within {limit:?}; see {}",
                    self.log.display()
                );
            }
            tokio::time::sleep(poll).await;
        }
    }

    /// Waits until the service is idle: under 5% of a core over a second (after start-up
    /// it reads its whole store once in the background, and a measurement must not share
    /// the machine with that). Gives up, saying so, after `limit`.
    pub async fn wait_idle(&self, limit: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + limit;
        loop {
            let before = self.cpu_ticks()?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            if (self.cpu_ticks()? - before) * 100 < 5 * TICKS_PER_SECOND {
                return Ok(());
            }
            if Instant::now() > deadline {
                eprintln!("bench: the service was still busy after {limit:?}; measuring anyway");
                return Ok(());
            }
        }
    }

    /// CPU time the process has used, in clock ticks (user and system).
    pub fn cpu_ticks(&self) -> anyhow::Result<u64> {
        cpu_ticks(&format!("/proc/{}/stat", self.pid))
    }

    /// Bytes the process has had written to storage so far (`write_bytes` of
    /// `/proc/PID/io`: counted as pages are dirtied, so before the kernel writes them back)
    /// and, of those, the bytes of files truncated or removed before they were written
    /// back (`cancelled_write_bytes`).
    pub fn written_bytes(&self) -> anyhow::Result<(u64, u64)> {
        written_bytes(&format!("/proc/{}/io", self.pid))
    }

    /// Resident memory of the process, KiB (`VmRSS`).
    pub fn rss_kib(&self) -> anyhow::Result<u64> {
        rss_kib(self.pid)
    }

    /// Peak resident memory of the process so far, KiB (`VmHWM`).
    pub fn peak_rss_kib(&self) -> anyhow::Result<u64> {
        status_kib(self.pid, "VmHWM:")
    }

    /// Pauses the process (SIGSTOP), as a machine that stalls or a partition would.
    pub fn pause(&self) -> anyhow::Result<()> {
        self.signal(nix::sys::signal::Signal::SIGSTOP)
    }

    /// Lets a paused process go on (SIGCONT).
    pub fn resume(&self) -> anyhow::Result<()> {
        self.signal(nix::sys::signal::Signal::SIGCONT)
    }

    fn signal(&self, signal: nix::sys::signal::Signal) -> anyhow::Result<()> {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.pid)?);
        nix::sys::signal::kill(pid, signal).with_context(|| format!("sending {signal}"))
    }

    /// SIGTERM, then waits for the service to commit its read models and exit (up to a
    /// minute; then it is killed).
    pub async fn stop(mut self) -> anyhow::Result<()> {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.pid)?);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        match tokio::time::timeout(Duration::from_secs(60), self.child.wait()).await {
            Ok(status) => {
                let status = status?;
                if !status.success() {
                    eprintln!(
                        "bench: the service exited with {status}; see {}",
                        self.log.display()
                    );
                }
            }
            Err(_) => {
                eprintln!("bench: the service did not stop within 60 s; killing it");
                let _ = self.child.kill().await;
            }
        }
        Ok(())
    }
}

/// [`Service::written_bytes`] of the process whose `io` file is `io` (`/proc/self/io`:
/// this one).
pub fn written_bytes(io: &str) -> anyhow::Result<(u64, u64)> {
    let text = std::fs::read_to_string(io).with_context(|| format!("reading {io}"))?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .with_context(|| format!("no {name} in {io}"))
    };
    Ok((field("write_bytes:")?, field("cancelled_write_bytes:")?))
}

/// Resident memory of a process, KiB.
pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    status_kib(pid, "VmRSS:")
}

/// A memory figure of `/proc/PID/status`, KiB.
fn status_kib(pid: u32, field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .with_context(|| format!("no {field} in /proc/PID/status"))
}

/// Clock ticks a second of `/proc/.../stat` (`USER_HZ`, 100 on Linux).
pub const TICKS_PER_SECOND: u64 = 100;

/// User and system CPU time of a process, in clock ticks, from its `/proc/.../stat`.
pub fn cpu_ticks(stat: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(stat)?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = text.rsplit_once(')').context("no command in stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field =
        |i: usize| -> anyhow::Result<u64> { Ok(fields.get(i).context("short stat")?.parse()?) };
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
    Ok(field(11)? + field(12)?)
}

/// Busy and total CPU time of the whole machine, in clock ticks, from `/proc/stat`.
pub fn machine_ticks() -> anyhow::Result<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat")?;
    let line = text.lines().next().context("empty /proc/stat")?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: u64 = v.iter().take(8).sum();
    // idle and iowait are the 4th and 5th.
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    Ok((total - idle, total))
}

impl Target {
    /// A client of the benchmark's nats-server as `role`.
    pub async fn connect(&self, role: racing::nats::Role) -> anyhow::Result<async_nats::Client> {
        let auth = racing::nats::ClientAuth::from_credentials(&self.credentials, role)?;
        racing::nats::connect(&self.nats_url, &auth, role).await
    }

    /// JetStream as a feeder, with a feeder's patience for acknowledgements (60 s, not the
    /// default 5 s): they are slow to come while the machine is loaded with clients.
    pub async fn feeder_jetstream(&self) -> anyhow::Result<async_nats::jetstream::Context> {
        Ok(async_nats::jetstream::context::ContextBuilder::new()
            .timeout(Duration::from_secs(60))
            .build(self.connect(racing::nats::Role::Feeder).await?))
    }
}

/// The service's metrics, in Prometheus' text format.
pub struct Metrics(String);

impl Metrics {
    /// The value of the unlabelled `name`; 0 if the service has not reported it.
    pub fn value(&self, name: &str) -> anyhow::Result<f64> {
        let Some(found) = self
            .0
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        else {
            return Ok(0.0);
        };
        found
            .trim()
            .parse()
            .with_context(|| format!("{name}: {found}"))
    }

    /// Every series of the counter or gauge `name`: its labels as written between the
    /// braces (`kind="odds journal",of="records"`), and its value.
    pub fn series(&self, name: &str) -> anyhow::Result<Vec<(String, f64)>> {
        let mut found = Vec::new();
        for line in self.0.lines().filter(|l| !l.starts_with('#')) {
            let Some(labelled) = line.strip_prefix(name).and_then(|l| l.strip_prefix('{')) else {
                continue;
            };
            let Some((labels, value)) = labelled.rsplit_once("} ") else {
                continue;
            };
            let value = value.trim().parse().with_context(|| line.to_owned())?;
            found.push((labels.to_owned(), value));
        }
        Ok(found)
    }

    /// The histogram `name`, all its series (labels) together: how many it counted,
    /// their sum, and how many were above each of `bounds` (bucket bounds as the service
    /// writes them: "0.025").
    pub fn histogram<const N: usize>(
        &self,
        name: &str,
        bounds: [&str; N],
    ) -> anyhow::Result<Histogram<N>> {
        let (mut count, mut sum, mut within) = (0.0, 0.0, [0.0; N]);
        for line in self.0.lines().filter(|l| !l.starts_with('#')) {
            let Some((series, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let (metric, labels) = series.split_once('{').unwrap_or((series, ""));
            let Some(part) = metric.strip_prefix(name) else {
                continue;
            };
            let value: f64 = match part {
                "_count" | "_sum" | "_bucket" => {
                    value.trim().parse().with_context(|| line.to_owned())?
                }
                _ => continue,
            };
            match part {
                "_count" => count += value,
                "_sum" => sum += value,
                _ => {
                    for (within, le) in within.iter_mut().zip(bounds) {
                        if labels.contains(&format!("le=\"{le}\"")) {
                            *within += value;
                        }
                    }
                }
            }
        }
        Ok(Histogram {
            count: count as u64,
            sum,
            over: within.map(|w| (count - w).max(0.0) as u64),
        })
    }
}

/// A histogram of the service's metrics at one instant.
#[derive(Debug, Clone, Copy)]
pub struct Histogram<const N: usize> {
    /// Observations.
    pub count: u64,
    /// Their sum.
    pub sum: f64,
    /// Those above each bound asked for.
    pub over: [u64; N],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_is_read_across_its_series_and_values_alone() {
        let text = "\
# TYPE racing_http_request_duration_seconds histogram
racing_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.005\"} 90
racing_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.025\"} 99
racing_http_request_duration_seconds_bucket{route=\"/a\",le=\"+Inf\"} 100
racing_http_request_duration_seconds_sum{route=\"/a\"} 0.5
racing_http_request_duration_seconds_count{route=\"/a\"} 100
racing_http_request_duration_seconds_bucket{route=\"/b\",le=\"0.005\"} 10
racing_http_request_duration_seconds_bucket{route=\"/b\",le=\"0.025\"} 10
racing_http_request_duration_seconds_sum{route=\"/b\"} 0.01
racing_http_request_duration_seconds_count{route=\"/b\"} 10
racing_commit_seconds_bucket{le=\"0.005\"} 3
racing_commit_seconds_sum 0.02
racing_commit_seconds_count 4
racing_projector_paused_seconds 1.5
";
        let metrics = Metrics(text.into());
        let answers = metrics
            .histogram("racing_http_request_duration_seconds", ["0.005", "0.025"])
            .expect("read");
        assert_eq!((answers.count, answers.over), (110, [10, 1]));
        assert!((answers.sum - 0.51).abs() < 1e-9);
        let commits = metrics
            .histogram("racing_commit_seconds", ["0.005"])
            .expect("read");
        assert_eq!((commits.count, commits.over), (4, [1]));
        assert_eq!(
            metrics
                .value("racing_projector_paused_seconds")
                .expect("read"),
            1.5
        );
        assert_eq!(metrics.value("racing_absent").expect("read"), 0.0);
    }
}
