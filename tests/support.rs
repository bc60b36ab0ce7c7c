//! Test harness: each test gets its own nats-server on a free port with a temporary
//! store, and its own service on a free port with a temporary data directory. Everything
//! is stopped when the test's values drop.

use std::path::Path;
use std::time::Duration;

use async_nats::jetstream;
use racing::config::Config;
use racing::nats::{ClientAuth, Credentials, LocalNats, Role, ServerOptions};
use racing::projector::Progress;
use racing::Application;
use racing_events::Envelope;
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The key every test service accepts.
pub const KEY: &str = "test-key-0123456789";

/// How long a test waits for the projector before it fails.
const WAIT: Duration = Duration::from_secs(20);

/// Most a test waits for the projector to reach a point: a debug build renders each
/// document at every event that changes it, and a week of the demo's season takes it
/// about half a minute on a loaded 2-core machine.
const PROJECT_WAIT: Duration = Duration::from_secs(120);

/// An odds document (or snapshot) without what the market reads of its prices: each
/// runner's number and prices, no `market` (`tests/analysis.rs` looks at those).
pub fn without_market(mut doc: Value) -> Value {
    if let Some(runners) = doc["odds"].as_array_mut() {
        for r in runners.iter_mut().filter_map(Value::as_object_mut) {
            r.retain(|k, _| ["horse_no", "win_odds", "place_odds"].contains(&k.as_str()));
        }
    }
    if let Some(d) = doc.as_object_mut() {
        d.remove("market");
    }
    doc
}

/// The part of `docs/{name}` between the comment that starts `<!-- {start}` and the
/// comment `<!-- {end} -->`: a list or table a test holds to the code.
pub fn marked(name: &str, start: &str, end: &str) -> String {
    let path = format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (_, rest) = text
        .split_once(&format!("<!-- {start}"))
        .unwrap_or_else(|| panic!("{path}: no `<!-- {start}`"));
    let (part, _) = rest
        .split_once(&format!("<!-- {end} -->"))
        .unwrap_or_else(|| panic!("{path}: no `<!-- {end} -->`"));
    part.to_owned()
}

/// A text frame the service sent on the live WebSocket, as JSON, once checked against
/// the AsyncAPI document the service serves (built by the same function): every test
/// reads its frames through here, so a frame of a `type` the document does not describe,
/// or with a field its schema does not name, fails the test that received it.
pub fn frame(text: &str) -> Value {
    if let Err(e) = racing::http::asyncapi::check_server_frame(text) {
        panic!("the AsyncAPI document does not describe a frame received: {e}");
    }
    serde_json::from_str(text).expect("a JSON frame")
}

/// A nats-server of a test's own, with authentication on: a set-up, a service, a feeder
/// and a keys admin user, as `racing serve` makes for its own server; the stream and its
/// buckets are set up as `racing setup` does before a deployment's services start.
pub struct Nats {
    pub server: Option<LocalNats>,
    /// JetStream as a feeder: what tests publish events with.
    pub js: jetstream::Context,
    /// JetStream as the service: reads the stream and the buckets.
    pub service: jetstream::Context,
    /// JetStream as the set-up: makes and updates the stream and the buckets.
    pub setup: jetstream::Context,
    credentials: Credentials,
    /// Set by a test that tries what a role may not do; otherwise a "Permissions
    /// Violation" in the server's log fails the test when it ends.
    pub violations_expected: bool,
    _dir: TempDir,
}

impl Nats {
    /// Starts nats-server with JetStream on a free loopback port, and sets up the stream
    /// `RACING` and its buckets with the service's default settings.
    pub async fn start() -> Nats {
        let nats = Nats::start_bare().await;
        nats.set_up().await;
        nats
    }

    /// Sets up the stream `RACING` and its buckets with the service's default settings.
    async fn set_up(&self) {
        let defaults = Config::new(self._dir.path(), None);
        let snapshots = racing::nats::buckets::SnapshotBucket::default();
        self.set_up_as(defaults.duplicate_window, &snapshots).await;
    }

    /// Sets up the stream `RACING` and its buckets again, as `racing setup` does, with the
    /// snapshots' bucket bounded as `snapshots` says.
    pub async fn set_up_with(&self, snapshots: &racing::nats::buckets::SnapshotBucket) {
        let defaults = Config::new(self._dir.path(), None);
        self.set_up_as(defaults.duplicate_window, snapshots).await;
    }

    /// [`Nats::start`], the stream's duplicate window `duplicate_window` (a service on it
    /// is told the same).
    pub async fn start_with_duplicate_window(duplicate_window: Duration) -> Nats {
        let nats = Nats::start_bare().await;
        let snapshots = racing::nats::buckets::SnapshotBucket::default();
        nats.set_up_as(duplicate_window, &snapshots).await;
        nats
    }

    /// Sets up the stream and its buckets, with the service's default settings but the
    /// duplicate window and the snapshots' bucket.
    async fn set_up_as(
        &self,
        duplicate_window: Duration,
        snapshots: &racing::nats::buckets::SnapshotBucket,
    ) {
        let nats = self;
        let setup = racing::nats::Connection::open(
            &nats.url(),
            &nats.auth(Role::Setup),
            Role::Setup,
            racing::retry::PATIENCE,
        )
        .await
        .expect("the set-up connects");
        let defaults = Config::new(nats._dir.path(), None);
        let settings = racing::nats::StreamSettings {
            name: defaults.stream,
            duplicate_window,
            replicas: None,
            link_ttl: defaults.signup.link_ttl,
        };
        racing::nats::setup::set_up_with(&setup, &settings, snapshots)
            .await
            .expect("the stream and its buckets are set up");
    }

    /// [`Nats::start`], with a feeder user `feeder-{name}` for each of `feeders` beside
    /// the one of each role.
    pub async fn start_with_feeders(feeders: &[&str]) -> Nats {
        let nats = Nats::start_bare_with(feeders).await;
        nats.set_up().await;
        nats
    }

    /// [`Nats::start`] on a server started with `options` (a small `max_file_store`).
    pub async fn start_with_options(options: &ServerOptions) -> Nats {
        let nats = Nats::start_bare_with_options(&[], options).await;
        nats.set_up().await;
        nats
    }

    /// Starts nats-server with JetStream on a free loopback port, with nothing set up.
    pub async fn start_bare() -> Nats {
        Nats::start_bare_with(&[]).await
    }

    async fn start_bare_with(feeders: &[&str]) -> Nats {
        Nats::start_bare_with_options(feeders, &ServerOptions::default()).await
    }

    async fn start_bare_with_options(feeders: &[&str], options: &ServerOptions) -> Nats {
        let dir = TempDir::new().expect("temp dir");
        let mut credentials =
            Credentials::ensure(&dir.path().join("credentials"), "RACING").expect("credentials");
        for name in feeders {
            credentials.add(Role::Feeder, name).expect("a feeder added");
        }
        let server = LocalNats::start_with("nats-server", dir.path(), None, &credentials, options)
            .await
            .expect("nats-server starts (apt-get install nats-server)");
        let js = jetstream::new(server.connect(Role::Feeder).await.expect("connect"));
        let service = jetstream::new(server.connect(Role::Service).await.expect("connect"));
        let setup = jetstream::new(server.connect(Role::Setup).await.expect("connect"));
        Nats {
            server: Some(server),
            js,
            service,
            setup,
            credentials,
            violations_expected: false,
            _dir: dir,
        }
    }

    /// The client URL.
    pub fn url(&self) -> String {
        self.server.as_ref().expect("running").url()
    }

    /// The credentials of this server's first user of `role`.
    pub fn auth(&self, role: Role) -> ClientAuth {
        ClientAuth::from_credentials(&self.credentials, role).expect("a user of the role")
    }

    /// The directory of this server's users' seeds.
    pub fn credentials_dir(&self) -> std::path::PathBuf {
        self._dir.path().join("credentials")
    }

    /// Where a `racing serve` process finds this server, as the service.
    pub fn broker(&self) -> Broker {
        Broker {
            url: self.url(),
            nkey: self.credentials.seed_file("service"),
        }
    }

    /// A fresh client of this server as `role`.
    pub async fn connect(&self, role: Role) -> async_nats::Client {
        racing::nats::connect(&self.url(), &self.auth(role), role)
            .await
            .expect("connect")
    }

    /// Publishes raw bytes on `subject`, with `msg_id` as `Nats-Msg-Id` if given, and
    /// returns the stream sequence.
    pub async fn publish_raw(&self, subject: &str, payload: &[u8], msg_id: Option<&str>) -> u64 {
        let mut headers = async_nats::HeaderMap::new();
        if let Some(id) = msg_id {
            headers.insert(async_nats::header::NATS_MESSAGE_ID, id);
        }
        self.js
            .publish_with_headers(subject.to_owned(), headers, payload.to_vec().into())
            .await
            .expect("publish")
            .await
            .expect("ack")
            .sequence
    }

    /// When JetStream stored each of the first `last` messages of `stream` (nanoseconds
    /// since the epoch, message `seq` at index `seq - 1`): what an odds move keeps, for a
    /// test that folds the same log itself.
    pub async fn published_times(&self, stream: &str, last: u64) -> Vec<i128> {
        let mut messages = racing::nats::messages_from(&self.service, stream, 1)
            .await
            .expect("a consumer of the stream");
        let mut times = Vec::new();
        while (times.len() as u64) < last {
            let m = tokio::time::timeout(WAIT, messages.next())
                .await
                .expect("the stream's messages in time")
                .expect("a message")
                .expect("a message");
            let info = m.info().expect("message metadata");
            assert_eq!(info.stream_sequence, times.len() as u64 + 1, "in order");
            times.push(info.published.unix_timestamp_nanos());
        }
        times
    }

    /// Stores `count` messages on `subject` that are not events, a hundred in flight at a
    /// time; returns the last sequence. A reader of the log takes them, and the fold
    /// refuses each at once (a dead letter): cheap to store and to fold.
    pub async fn store_filler(&self, subject: &str, count: usize) -> u64 {
        let mut last = 0;
        for hundred in 0..count.div_ceil(100) {
            let mut acks = Vec::new();
            for i in hundred * 100..count.min(hundred * 100 + 100) {
                let sent = self
                    .js
                    .publish(subject.to_owned(), format!("not an event {i}").into());
                acks.push(sent.await.expect("published"));
            }
            for ack in acks {
                last = ack.await.expect("stored").sequence;
            }
        }
        last
    }

    /// Publishes events as a feeder does; returns the last sequence.
    pub async fn publish(&self, events: &[Envelope]) -> u64 {
        let mut last = 0;
        for e in events {
            let id = e.event_id.to_string();
            last = self
                .publish_raw(&e.subject(), e.to_json().as_bytes(), Some(&id))
                .await;
        }
        last
    }
}

/// Where a `racing serve` process finds NATS: its URL and the service's nkey seed file.
pub struct Broker {
    pub url: String,
    pub nkey: std::path::PathBuf,
}

/// A running service of a test's own.
pub struct App {
    pub base: String,
    /// The admin listener, `http://127.0.0.1:PORT`.
    pub admin: String,
    pub read_models: std::sync::Arc<racing::read_models::ReadModels>,
    pub progress: watch::Receiver<Progress>,
    pub client: reqwest::Client,
    /// Faults to inject into the running service.
    pub faults: std::sync::Arc<racing::faults::Faults>,
    shutdown: CancellationToken,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl App {
    /// Starts the service against `nats`, with its read models in `data_dir`.
    pub async fn start(nats: &Nats, data_dir: &Path) -> App {
        Self::start_with(nats, data_dir, |_| {}).await
    }

    /// Same, after `adjust` changes the configuration.
    pub async fn start_with(nats: &Nats, data_dir: &Path, adjust: impl FnOnce(&mut Config)) -> App {
        App::run(App::build(nats, data_dir, adjust).await)
    }

    /// The service built (connected, stream made, store opened, ports bound) but not yet
    /// running, for a test that changes the world in between.
    pub async fn build(
        nats: &Nats,
        data_dir: &Path,
        adjust: impl FnOnce(&mut Config),
    ) -> Application {
        let mut config = Config::new(data_dir, Some(nats.url()));
        config.nats_auth = nats.auth(Role::Service);
        config.demo_feeder = Some(nats.auth(Role::Feeder));
        config.api_keys = vec![KEY.to_owned()];
        // Tests make bursts of requests with one key; the rate-limit tests set their own.
        config.request_limits.rate_per_sec = 100_000;
        config.request_limits.burst = 100_000;
        adjust(&mut config);
        Application::build(config).await.expect("service builds")
    }

    /// Runs a service made by [`App::build`].
    pub fn run(app: Application) -> App {
        let base = format!("http://{}", app.addr());
        let admin = format!("http://{}", app.admin_addr());
        let read_models = app.read_models();
        let progress = app.progress();
        let faults = app.faults();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(app.run(shutdown.clone()));
        App {
            base,
            admin,
            read_models,
            progress,
            client: reqwest::Client::new(),
            faults,
            shutdown,
            task: Some(task),
        }
    }

    /// Waits until the projector has caught up and committed stream sequence `seq`.
    pub async fn projected(&mut self, seq: u64) -> Progress {
        let reached = |p: &Progress| p.caught_up && p.checkpoint >= seq;
        let p = tokio::time::timeout(PROJECT_WAIT, self.progress.wait_for(reached))
            .await
            .unwrap_or_else(|_| panic!("projector did not reach {seq} in {PROJECT_WAIT:?}"))
            .expect("projector alive");
        *p
    }

    /// The read models in use now. A test keeps no handle of a store across a rebuild:
    /// the service removes a replaced store's directory only once no handle of it is
    /// left.
    pub fn store(&self) -> std::sync::Arc<racing_projections::Store> {
        self.read_models.load_full()
    }

    /// Stops the service as SIGTERM would, and waits for it.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            tokio::time::timeout(WAIT, task)
                .await
                .expect("service stops in time")
                .expect("service task")
                .expect("service ran cleanly");
        }
    }

    /// Waits for the service to stop by itself (a fatal error), and returns how it ended.
    pub async fn ended(mut self) -> anyhow::Result<()> {
        let task = self.task.take().expect("the service runs");
        tokio::time::timeout(WAIT, task)
            .await
            .expect("the service stops by itself")
            .expect("service task")
    }

    /// GET with the test key; returns the status and the JSON body.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.get_with(path, Some(KEY)).await
    }

    /// The JSON the admin listener answers at `path` (`/status`, `/rebuild`).
    pub async fn admin_json(&self, path: &str) -> Value {
        reqwest::get(format!("{}{path}", self.admin))
            .await
            .expect("the admin listener answers")
            .json()
            .await
            .expect("json")
    }

    /// The metrics the admin listener exposes, as text.
    pub async fn metrics(&self) -> String {
        self.client
            .get(format!("{}/metrics", self.admin))
            .send()
            .await
            .expect("the admin listener")
            .text()
            .await
            .expect("metrics")
    }

    /// The value of the metric `name` (no labels), if the admin listener has it.
    pub async fn metric(&self, name: &str) -> Option<f64> {
        let metrics = self.metrics().await;
        metrics.lines().find_map(|line| {
            let (metric, value) = line.split_once(' ')?;
            (metric == name).then(|| value.trim().parse().ok())?
        })
    }

    /// How many requests of `route` (its path template) the service has handed to its
    /// long reads' threads.
    pub async fn long_reads(&self, route: &str) -> u64 {
        let series = format!("racing_http_long_reads_total{{route=\"{route}\"}} ");
        self.metrics()
            .await
            .lines()
            .find_map(|line| line.strip_prefix(series.as_str()))
            .map_or(0, |n| n.parse().expect("a count"))
    }

    /// The response to a GET with the test key that accepts gzip, as it came.
    pub async fn gzipped(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.base))
            .header("X-API-Key", KEY)
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .expect("request")
    }

    /// The response to a GET with the test key, as it came.
    pub async fn response(&self, path: &str) -> reqwest::Response {
        self.response_with(path, Some(KEY)).await
    }

    async fn response_with(&self, path: &str, key: Option<&str>) -> reqwest::Response {
        let mut req = self.client.get(format!("{}{path}", self.base));
        if let Some(k) = key {
            req = req.header("X-API-Key", k);
        }
        req.send().await.expect("request")
    }

    /// GET with the given key (or none).
    pub async fn get_with(&self, path: &str, key: Option<&str>) -> (StatusCode, Value) {
        let res = self.response_with(path, key).await;
        let status = res.status();
        let ct = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = res.bytes().await.expect("body");
        assert_eq!(ct, "application/json", "{path}: content type");
        let json = serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("{path}: body is not JSON ({e}): {body:?}"));
        (status, json)
    }
}

/// A service on a nats-server and a data directory of its own, with `events` published
/// and projected before it answers.
pub async fn service_with(events: &[Envelope]) -> (Nats, App, TempDir) {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let last = nats.publish(events).await;
    app.projected(last).await;
    (nats, app, dir)
}

impl Drop for App {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Every test with a server of its own also checks that nobody (the service, `racing
/// keys`, the test's feeder) was refused anything: a role missing a permission the code
/// needs shows here even where the code only logs the failure.
impl Drop for Nats {
    fn drop(&mut self) {
        if self.violations_expected || std::thread::panicking() {
            return;
        }
        let log =
            std::fs::read_to_string(self._dir.path().join("nats-server.log")).unwrap_or_default();
        let refused: Vec<&str> = log
            .lines()
            // nats-server logs "Publish Violation" or "Subscription Violation".
            .filter(|l| l.contains(" Violation - "))
            .take(5)
            .collect();
        assert!(
            refused.is_empty(),
            "the server refused a client something:\n{}",
            refused.join("\n")
        );
    }
}

impl Nats {
    /// Kills the server at once, as a crash would, keeping its store for
    /// [`Nats::restart_server`]; returns the port it listened on.
    pub async fn kill_server(&mut self) -> u16 {
        let server = self.server.take().expect("running");
        let port = server.port();
        server.kill().await;
        port
    }

    /// Starts the server again on `port` with the same store, as an operator bringing a
    /// crashed broker back would, so that clients reconnect to the URL they know.
    pub async fn restart_server(&mut self, port: u16) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let started = LocalNats::start(
                "nats-server",
                self._dir.path(),
                Some(port),
                &self.credentials,
            );
            match started.await {
                Ok(server) if server.port() == port => {
                    self.server = Some(server);
                    return;
                }
                // The port was not free yet, so another was taken: try again.
                Ok(elsewhere) => elsewhere.kill().await,
                Err(e) => assert!(
                    tokio::time::Instant::now() < deadline,
                    "nats-server does not restart: {e:#}"
                ),
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "port {port} not free again within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Waits until something accepts connections on loopback `port` (a server a test just
/// started, named `what` in the failure), for at most `within`.
pub async fn listening(port: u16, what: &str, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} listens within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether a damaged store was moved aside in `data_dir` (`read-models.damaged-*`) and
/// kept for inspection.
pub fn damaged_copy_kept(data_dir: &Path) -> bool {
    std::fs::read_dir(data_dir)
        .expect("data dir")
        .filter_map(Result::ok)
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("read-models.damaged-")
        })
}

/// A program of a Debian package that the tests run: the machine's, where it has one on
/// its `PATH` (or in `/usr/sbin`), else the one `scripts/unpack-deb` unpacked under
/// `target/tools` (`scripts/ensure-test-tools` does, as CI does).
pub fn unpacked(package: &str, path: &str) -> std::path::PathBuf {
    let name = std::path::Path::new(path)
        .file_name()
        .expect("a program's name");
    let unpacked = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tools")
        .join(package)
        .join(path);
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([std::path::PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join(name))
        .chain([unpacked])
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name:?} missing: `scripts/unpack-deb {package} {path}` fetches it")
        })
}
