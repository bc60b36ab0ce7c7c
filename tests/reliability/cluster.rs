//! A three-node JetStream cluster on loopback, each node a nats-server child process of
//! the test with its own store, killed on drop; authentication on, as in every
//! deployment: the users of one credentials directory, and routes with a password.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use async_nats::jetstream;
use racing::nats::{ClientAuth, Credentials, Role};
use tempfile::TempDir;
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// How long the cluster gets to form and elect its JetStream leader.
const FORM: Duration = Duration::from_secs(30);

/// One node of the cluster.
struct Node {
    child: Child,
    name: String,
    port: u16,
}

/// A JetStream cluster of nats-server processes on loopback.
pub struct Cluster {
    nodes: Vec<Option<Node>>,
    credentials: Credentials,
    _dir: TempDir,
}

impl Cluster {
    /// Starts `size` nodes that route to each other, and waits until JetStream answers
    /// through each of them (a meta leader is elected).
    pub async fn start(size: usize) -> Cluster {
        let dir = TempDir::new().expect("temp dir");
        let credentials =
            Credentials::ensure(&dir.path().join("credentials"), "RACING").expect("credentials");
        let route = credentials.route_password().expect("route password");
        // Held together until the nodes start, so that no two of them get the same port.
        let listeners: Vec<std::net::TcpListener> = (0..2 * size)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
            .collect();
        let port = |i: usize| listeners[i].local_addr().expect("address").port();
        let ports: Vec<(u16, u16)> = (0..size).map(|i| (port(2 * i), port(2 * i + 1))).collect();
        drop(listeners);
        let routes = ports
            .iter()
            .map(|(_, cluster)| format!("nats://route:{route}@127.0.0.1:{cluster}"))
            .collect::<Vec<_>>()
            .join(",");
        let nodes = ports
            .iter()
            .enumerate()
            .map(|(i, (port, cluster))| {
                let listen = format!("nats://route:{route}@127.0.0.1:{cluster}");
                Some(spawn(dir.path(), &credentials, i, *port, &listen, &routes))
            })
            .collect();
        let cluster = Cluster {
            nodes,
            credentials,
            _dir: dir,
        };
        for i in 0..size {
            cluster.jetstream_ready(i).await;
        }
        cluster
    }

    /// The client URL of node `i`.
    pub fn url(&self, i: usize) -> String {
        format!("nats://127.0.0.1:{}", self.node(i).port)
    }

    /// The client URLs of the nodes still running.
    pub fn urls(&self) -> Vec<String> {
        (0..self.nodes.len())
            .filter(|i| self.nodes[*i].is_some())
            .map(|i| self.url(i))
            .collect()
    }

    /// Where a `racing serve` process finds the cluster at `url`, as the service.
    pub fn broker(&self, url: &str) -> crate::support::Broker {
        crate::support::Broker {
            url: url.to_owned(),
            nkey: self.credentials.seed_file("service"),
        }
    }

    /// A client of the running nodes as `role`.
    pub async fn connect(&self, role: Role) -> async_nats::Client {
        let auth = ClientAuth::from_credentials(&self.credentials, role).expect("a user");
        racing::nats::connect(&self.urls().join(","), &auth, role)
            .await
            .expect("connect")
    }

    /// A connection to the running nodes as `role`, which reports what they refuse it.
    pub async fn open(&self, role: Role) -> racing::nats::Connection {
        let auth = ClientAuth::from_credentials(&self.credentials, role).expect("a user");
        racing::nats::Connection::open(&self.urls().join(","), &auth, role, racing::retry::PATIENCE)
            .await
            .expect("connect")
    }

    /// The index of the node named `name`.
    pub fn index_of(&self, name: &str) -> usize {
        self.nodes
            .iter()
            .position(|n| n.as_ref().is_some_and(|n| n.name == name))
            .unwrap_or_else(|| panic!("no running node {name}"))
    }

    /// Kills node `i` at once, as a crash would.
    pub async fn kill(&mut self, i: usize) {
        let mut node = self.nodes[i].take().expect("running");
        node.child.kill().await.expect("kill");
    }

    fn node(&self, i: usize) -> &Node {
        self.nodes[i].as_ref().expect("running")
    }

    /// Waits until JetStream answers API requests through node `i`.
    async fn jetstream_ready(&self, i: usize) {
        let deadline = Instant::now() + FORM;
        loop {
            // One attempt at this node alone, as the service.
            let client = async_nats::ConnectOptions::with_nkey(auth_seed(&self.credentials))
                .custom_inbox_prefix(Role::Service.inbox_prefix())
                .connect(self.url(i))
                .await;
            if let Ok(client) = client {
                // Looking a stream up needs the meta leader: an answer ("not found", as
                // none was made yet) means ready; a time-out does not.
                let js = jetstream::new(client);
                let answer = js.get_stream("RACING").await.map_err(|e| e.to_string());
                if answer.is_ok() || answer.is_err_and(|e| e.contains("not found")) {
                    return;
                }
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(
                    self._dir.path().join(format!("node-{i}/nats-server.log")),
                )
                .unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                panic!(
                    "JetStream not available through node {i} in {FORM:?}; its log ends:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

fn auth_seed(credentials: &Credentials) -> String {
    credentials
        .first(Role::Service)
        .expect("a service user")
        .seed()
        .to_owned()
}

fn spawn(
    dir: &Path,
    credentials: &Credentials,
    i: usize,
    port: u16,
    cluster: &str,
    routes: &str,
) -> Node {
    let name = format!("node-{i}");
    let store = dir.join(&name);
    std::fs::create_dir_all(&store).expect("store dir");
    // As nats.conf: a 1 MiB payload plus headers must fit; only the users may connect.
    let conf = store.join("nats-server.conf");
    let text = format!("max_payload: 2MB\n{}", credentials.authorization());
    std::fs::write(&conf, text).expect("conf");
    let child = Command::new("nats-server")
        .arg("-c")
        .arg(&conf)
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .args(["--server_name", &name, "--cluster_name", "racing"])
        .args(["--cluster", cluster])
        .args(["--routes", routes])
        .arg("-js")
        .arg("-sd")
        .arg(&store)
        .arg("-l")
        .arg(store.join("nats-server.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("nats-server starts (apt-get install nats-server)");
    Node { child, name, port }
}
