//! The scaled-out topology of `scripts/cluster`: three NATS nodes in a JetStream cluster
//! with authentication on, a three-replica stream, two service replicas that each project
//! the log on their own.

use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use tempfile::TempDir;

/// Stops the script (and so every process it started) when the test ends.
struct Script(std::process::Child);

impl Drop for Script {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let _ = self.0.wait();
    }
}

/// The last lines of every log the script's processes wrote under `data`, to tell why a
/// node or a replica was not ready in time.
fn logs(data: &std::path::Path) -> String {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(data)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| {
            let path = e.path();
            if path.is_dir() {
                vec![path.join("nats-server.log")]
            } else {
                vec![path]
            }
        })
        .filter(|p| p.extension().is_some_and(|x| x == "log") && p.is_file())
        .collect();
    files.sort();
    let mut out = String::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines
            .get(lines.len().saturating_sub(30)..)
            .unwrap_or_default();
        out.push_str(&format!(
            "--- {} (last {} lines)\n",
            f.display(),
            tail.len()
        ));
        for l in tail {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The offsets from `--base` that `scripts/cluster` listens on: three NATS clients, their
/// three routes, two APIs and two admin listeners.
const OFFSETS: [u16; 10] = [1, 2, 3, 11, 12, 13, 21, 22, 31, 32];

/// A base port whose every listener is free. The block lies below 10,000: the other tests
/// take ports from 10,000 up to the kernel's ephemeral range, and outgoing connections take
/// ports in that range, so a block there could be taken between this check and the
/// script's binds (a replica that cannot bind its port never becomes ready).
fn free_base() -> u16 {
    let start = 2_000 + (std::process::id() % 70) as u16 * 100;
    (0..70u16)
        .map(|i| 2_000 + (start - 2_000 + i * 100) % 7_000)
        .find(|base| {
            OFFSETS
                .iter()
                .all(|o| std::net::TcpListener::bind(("127.0.0.1", base + o)).is_ok())
        })
        .expect("a free block of ports below 10,000")
}

#[tokio::test]
async fn the_cluster_script_starts_three_nodes_and_two_replicas_that_agree() {
    let dir = TempDir::new().expect("temp dir");
    let base = free_base();
    let script_log = std::fs::File::create(dir.path().join("script.log")).expect("script log");
    let script = Script(
        Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/cluster"))
            .args(["--base", &base.to_string(), "--data"])
            .arg(dir.path())
            .args(["--bin", env!("CARGO_BIN_EXE_racing")])
            .stdout(Stdio::null())
            .stderr(script_log)
            .spawn()
            .expect("scripts/cluster starts"),
    );
    let client = reqwest::Client::new();
    let replicas = [base + 21, base + 22];
    let ready = async |admin: u16| {
        let url = format!("http://127.0.0.1:{admin}/readyz");
        client
            .get(url)
            .send()
            .await
            .is_ok_and(|r| r.status() == StatusCode::OK)
    };
    tokio::time::timeout(Duration::from_secs(90), async {
        while !(ready(base + 31).await && ready(base + 32).await) {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "both replicas ready within 90 s; the script's logs:\n{}",
            logs(dir.path())
        )
    });

    // Both replicas hold the same read models, built each on its own from the log.
    // `query` is the request's query string (`""` or `?as_of=SEQ`); the answer's status,
    // ETag and position (`Racing-Seq`).
    let today = async |port: u16, query: &str| {
        let url = format!("http://127.0.0.1:{port}/api/v1/racecards/today{query}");
        let res = client
            .get(url)
            .header("X-API-Key", "cluster-key")
            .send()
            .await
            .expect("request");
        let seq = res
            .headers()
            .get("racing-seq")
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        (res.status(), res.headers().get("etag").cloned(), seq)
    };
    // The first replica publishes the demo season once both are up; wait for it.
    tokio::time::timeout(Duration::from_secs(60), async {
        while today(replicas[0], "").await.0 != StatusCode::OK
            || today(replicas[1], "").await.0 != StatusCode::OK
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "today's card on both replicas; the script's logs:\n{}",
            logs(dir.path())
        )
    });
    // The demo runs today's races meanwhile, so today's card changes as the replicas
    // apply the log: compared as of a position both have applied.
    let (a, b) = (today(replicas[0], "").await, today(replicas[1], "").await);
    let both = a.2.min(b.2).expect("a Racing-Seq on each answer");
    let at = format!("?as_of={both}");
    let (a, b) = (today(replicas[0], &at).await, today(replicas[1], &at).await);
    assert_eq!(a.0, StatusCode::OK);
    assert!(a.1.is_some());
    assert_eq!(a, b, "the same document, byte for byte");

    // Authentication is on: an anonymous client is refused on every node, so it can
    // neither publish into the log, nor touch the key bucket, nor read the stream.
    for node in 1..=3 {
        let url = format!("nats://127.0.0.1:{}", base + node);
        let anonymous = async_nats::ConnectOptions::new()
            .connect(url.as_str())
            .await
            .map(|_| ());
        assert_eq!(
            anonymous
                .expect_err("an anonymous client is refused")
                .kind(),
            async_nats::ConnectErrorKind::AuthorizationViolation,
            "{url}"
        );
    }
    // The keys admin issues a key with its own user, and both replicas take it.
    let urls = (1..=3)
        .map(|n| format!("nats://127.0.0.1:{}", base + n))
        .collect::<Vec<_>>()
        .join(",");
    let out = Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["keys", "--nats-url", &urls, "--nats-nkey"])
        .arg(dir.path().join("credentials/keys-admin.nk"))
        .args(["create", "--name", "cluster test"])
        .env("RACING_LOG", "warn")
        .output()
        .expect("racing keys runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    tokio::time::timeout(Duration::from_secs(10), async {
        for port in replicas {
            let url = format!("http://127.0.0.1:{port}/api/v1/racecards/today");
            while client
                .get(&url)
                .header("X-API-Key", &key)
                .send()
                .await
                .map_or(true, |r| r.status() != StatusCode::OK)
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the new key works on both replicas; the script's logs:\n{}",
            logs(dir.path())
        )
    });
    drop(script);
}
