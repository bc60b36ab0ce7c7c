//! Start-up against NATS that is not as it should be: nothing listening at the URL, a
//! server there that is not NATS, credentials refused, a user not permitted the stream's
//! API, JetStream off, stream settings refused, no stream set up. Each is reported as what it is within
//! seconds, not as a minute of "not ready yet" warnings.

use std::time::Duration;

use racing::config::Config;
use racing::nats::{ClientAuth, Role};
use racing::Application;
use tempfile::TempDir;
use tokio::io::AsyncWriteExt as _;
use tokio::time::Instant;

use crate::reliability::process::Service;
use crate::support::{Broker, Nats};

/// How long a start-up that cannot succeed may take to say so (generous: the service
/// needs well under half of it).
const BOUND: Duration = Duration::from_secs(10);

/// Builds the service as `config` says, expecting it to fail within [`BOUND`] (a test of
/// the old behaviour fails here after twice that rather than waiting a minute); returns
/// the error, all its causes on one line.
async fn fails_fast(config: Config) -> String {
    let started = Instant::now();
    let built = tokio::time::timeout(BOUND * 2, Application::build(config)).await;
    let took = started.elapsed();
    let error = match built {
        Ok(Err(e)) => format!("{e:#}"),
        Ok(Ok(_)) => panic!("the service started"),
        Err(_) => panic!("still trying after {:?}", BOUND * 2),
    };
    assert!(took < BOUND, "took {took:?} to fail: {error}");
    error
}

/// A service configuration against `url`, with its data in `dir`.
fn config(dir: &TempDir, url: &str) -> Config {
    Config::new(dir.path().join("data"), Some(url.to_owned()))
}

#[tokio::test]
async fn a_service_where_nothing_listens_says_so_at_once_and_gives_up_in_time() {
    let dir = TempDir::new().expect("temp dir");
    let port = racing::nats::free_port().expect("a free port");
    let url = format!("nats://127.0.0.1:{port}");
    let nkey = dir.path().join("service.nk");
    let seed = nkeys::KeyPair::new_user().seed().expect("a seed");
    std::fs::write(&nkey, seed).expect("seed file");
    let broker = Broker {
        url: url.clone(),
        nkey,
    };
    let started = Instant::now();
    let mut service = Service::spawn_with(
        Some(&broker),
        &dir.path().join("data"),
        &dir.path().join("racing.log"),
        &[("RACING_NATS_PATIENCE_SECS", "4")],
    );
    // The operator reads what is wrong, and where, at once: not a generic warning.
    let said = format!("nothing answers at {url} (connection refused)");
    service
        .wait_for_log(
            &said,
            Duration::from_secs(3).saturating_sub(started.elapsed()),
        )
        .await;
    let exit = service.exited(BOUND).await.unwrap_or_else(|| {
        panic!(
            "still running after {BOUND:?}; log:\n{}",
            service.log_tail()
        )
    });
    assert!(!exit.success(), "{exit}");
    let log = service.log_text();
    let last = log.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("racing: ") && last.contains(&said) && last.contains("gave up after 4s"),
        "the final error says what was tried, and for how long; log:\n{log}"
    );
    assert!(
        log.matches(&said).count() <= 3,
        "one clear line, not one per attempt; log:\n{log}"
    );
}

#[tokio::test]
async fn a_service_pointed_at_a_server_that_is_not_nats_says_so_at_once() {
    // An HTTP server, as a wrong port in the URL would find.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
        }
    });
    let dir = TempDir::new().expect("temp dir");
    let url = format!("nats://127.0.0.1:{port}");
    let error = fails_fast(config(&dir, &url)).await;
    assert!(
        error.contains(&format!("{url} is not a NATS server")) && error.contains("HTTP/1.1 400"),
        "{error}"
    );
}

#[tokio::test]
async fn a_service_given_a_host_that_does_not_resolve_says_so_at_once() {
    let dir = TempDir::new().expect("temp dir");
    let error = fails_fast(config(&dir, "nats://nats-1.invalid:4222")).await;
    assert!(error.contains("cannot resolve nats-1.invalid"), "{error}");
}

#[tokio::test]
async fn a_service_whose_credentials_are_refused_says_so_at_once_naming_the_method() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut config = config(&dir, &nats.url());
    let stranger = nkeys::KeyPair::new_user().seed().expect("a seed");
    config.nats_auth = ClientAuth::nkey(&stranger);
    let error = fails_fast(config).await;
    assert!(
        error.contains("refused the service's credentials (nkey"),
        "{error}"
    );
}

#[tokio::test]
async fn a_service_not_permitted_the_stream_api_says_so_at_once_naming_role_and_method() {
    let mut nats = Nats::start().await;
    nats.violations_expected = true;
    let dir = TempDir::new().expect("temp dir");
    // The server's users were made for the stream RACING; a service told to use another
    // stream may not touch it.
    let mut config = config(&dir, &nats.url());
    config.nats_auth = nats.auth(Role::Service);
    config.stream = "ELSEWHERE".into();
    let error = fails_fast(config).await;
    assert!(
        error.contains("does not permit the service (nkey)")
            && error.contains("$JS.API.STREAM.")
            && error.contains("ELSEWHERE"),
        "{error}"
    );
    assert!(!error.contains("not ready"), "{error}");
}

#[tokio::test]
async fn a_service_against_nats_without_jetstream_says_so_at_once() {
    let dir = TempDir::new().expect("temp dir");
    let port = racing::nats::free_port().expect("a free port");
    let _server = tokio::process::Command::new("nats-server")
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("nats-server starts");
    crate::support::listening(port, "nats-server", Duration::from_secs(10)).await;
    let error = fails_fast(config(&dir, &format!("nats://127.0.0.1:{port}"))).await;
    assert!(error.contains("JetStream is not enabled"), "{error}");
}

#[tokio::test]
async fn a_service_whose_stream_settings_nats_refuses_says_so_at_once() {
    let nats = Nats::start_bare().await;
    let dir = TempDir::new().expect("temp dir");
    let mut config = config(&dir, &nats.url());
    config.nats_auth = nats.auth(Role::Service);
    config.nats_setup = Some(nats.auth(Role::Setup));
    // Three copies of the stream on a server that is no cluster.
    config.stream_replicas = Some(3);
    let error = fails_fast(config).await;
    assert!(
        error.contains("refuses stream RACING") && error.contains("replicas"),
        "{error}"
    );
}

#[tokio::test]
async fn a_second_service_on_a_data_directory_in_use_says_so_and_moves_nothing() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let settings = || {
        let mut config = config(&dir, &nats.url());
        config.nats_auth = nats.auth(Role::Service);
        config
    };
    let first = Application::build(settings())
        .await
        .expect("the first service starts");
    let second = tokio::time::timeout(Duration::from_secs(60), Application::build(settings()))
        .await
        .expect("the second gives up in time");
    let error = match second {
        Ok(_) => panic!("a second service started on the same read models"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        error.contains("open in another process")
            && error.contains("another `racing serve` on the same data directory"),
        "{error}"
    );
    let data = dir.path().join("data");
    assert!(
        !crate::support::damaged_copy_kept(&data),
        "the first service's read models were moved aside"
    );
    assert!(data.join("read-models").is_dir());
    drop(first);
}

#[tokio::test]
async fn a_service_on_nats_not_set_up_names_the_set_up_and_makes_nothing() {
    let nats = Nats::start_bare().await;
    let dir = TempDir::new().expect("temp dir");
    let mut config = config(&dir, &nats.url());
    config.nats_auth = nats.auth(Role::Service);
    // A stream missing may be a cluster still electing: asked again, for a while.
    config.nats_patience = Duration::from_secs(1);
    let error = fails_fast(config).await;
    assert!(
        error.contains("stream RACING does not exist") && error.contains("`racing setup`"),
        "{error}"
    );
    assert!(
        nats.setup.get_stream("RACING").await.is_err(),
        "the service made the stream"
    );
}

/// mimalloc asks the kernel for transparent huge pages, whose faults had it zero 2 MiB at
/// a time under the fold (`src/memory.rs`): the binary turns them off before anything
/// else.
#[test]
fn the_binary_runs_without_transparent_huge_pages() {
    let said = |status: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("THP_enabled:"))
            .map(|v| v.trim().to_owned())
    };
    let own = std::fs::read_to_string("/proc/self/status").expect("this process's status");
    assert!(
        said(&own).is_some(),
        "the kernel says nothing of huge pages in /proc/PID/status: {own}"
    );
    // `publish --check -` waits for its standard input: its setting is read meanwhile.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["publish", "--check", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("racing runs");
    let status = format!("/proc/{}/status", child.id());
    let deadline = std::time::Instant::now() + BOUND;
    let mut last = None;
    while std::time::Instant::now() < deadline {
        last = std::fs::read_to_string(&status).ok().and_then(|s| said(&s));
        if last.as_deref() == Some("0") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(child.stdin.take());
    let _ = child.wait();
    assert_eq!(last.as_deref(), Some("0"), "huge pages left on");
}
