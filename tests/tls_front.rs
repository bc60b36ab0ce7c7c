//! TLS in front: `docs/tls/nginx.conf` run for real by nginx, with a certificate made
//! here, in front of the service: a document through HTTPS, byte for byte what the service
//! sends, its `ETag` revalidated to a 304; the live socket upgraded through it; and the
//! event stream passed on event by event, not held in a buffer.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use racing_events::samples::{card, envelope, odds_at, profile};
use tempfile::TempDir;
use tokio_rustls::rustls;
use tokio_tungstenite::tungstenite::Message;

use crate::support::{App, Nats, KEY};

const DAY: &str = "2026-11-21";
const VENUE: &str = "Sha Tin";

/// How long the test waits for nginx, an answer or an event.
const WAIT: Duration = Duration::from_secs(20);

/// The configuration as the repository ships it, with this test's port, certificate and
/// service put where an operator puts theirs: each line replaced must be there.
fn configuration(port: u16, cert: &str, key: &str, service: &str) -> String {
    let shipped =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tls/nginx.conf"))
            .expect("docs/tls/nginx.conf");
    let mut text = shipped;
    for (from, to) in [
        ("listen 443 ssl;", format!("listen 127.0.0.1:{port} ssl;")),
        (
            "ssl_certificate     /etc/ssl/racing/fullchain.pem;",
            format!("ssl_certificate {cert};"),
        ),
        (
            "ssl_certificate_key /etc/ssl/racing/privkey.pem;",
            format!("ssl_certificate_key {key};"),
        ),
        ("server 127.0.0.1:8080;", format!("server {service};")),
    ] {
        assert!(text.contains(from), "docs/tls/nginx.conf has `{from}`");
        text = text.replace(from, &to);
    }
    text
}

/// The configuration with what nginx needs to run from a directory of its own: its
/// temporary files there and no access log, rather than Debian's paths under /var.
fn run_from(conf: &str, dir: &std::path::Path) -> String {
    let mut own = String::from("http {\n    access_log off;\n");
    for kind in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
        own.push_str(&format!(
            "    {kind}_temp_path {};\n",
            dir.join(kind).display()
        ));
    }
    assert!(conf.contains("\nhttp {\n"), "an `http` block");
    conf.replacen("\nhttp {\n", &format!("\n{own}"), 1)
}

/// nginx running `conf` with `dir` as its prefix, stopped when dropped.
struct Nginx(tokio::process::Child);

impl Drop for Nginx {
    /// A fast shutdown (`SIGTERM`): the master stops its workers, then itself.
    fn drop(&mut self) {
        if let Some(pid) = self.0.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
            let stop = std::time::Instant::now() + Duration::from_secs(5);
            while matches!(self.0.try_wait(), Ok(None)) && std::time::Instant::now() < stop {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Nginx {
    async fn start(dir: &std::path::Path, conf: &str, port: u16) -> Nginx {
        let path = dir.join("nginx.conf");
        std::fs::write(&path, run_from(conf, dir)).expect("written");
        // Its workers run as another user where the test runs as root.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
            .expect("the prefix readable");
        let globals = format!(
            "daemon off; pid {}; error_log {} warn;",
            dir.join("nginx.pid").display(),
            dir.join("error.log").display()
        );
        let child =
            tokio::process::Command::new(crate::support::unpacked("nginx", "usr/sbin/nginx"))
                .arg("-e")
                .arg(dir.join("error.log"))
                .arg("-p")
                .arg(dir)
                .arg("-c")
                .arg(&path)
                .args(["-g", &globals])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("nginx runs");
        let nginx = Nginx(child);
        tokio::time::timeout(WAIT, async {
            while tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_err()
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "nginx listens: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            )
        });
        nginx
    }
}

/// A certificate for `localhost` and 127.0.0.1, its key, and a client that trusts it.
fn certificate(dir: &std::path::Path) -> (String, String, tokio_rustls::TlsConnector) {
    use rcgen::{CertificateParams, KeyPair, SanType};
    let key = KeyPair::generate().expect("a key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.subject_alt_names = vec![
        SanType::DnsName("localhost".try_into().expect("a name")),
        SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()),
    ];
    let cert = params.self_signed(&key).expect("a certificate");
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    std::fs::write(&cert_path, cert.pem()).expect("written");
    std::fs::write(&key_path, key.serialize_pem()).expect("written");
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(cert.der().clone())
        .expect("the certificate trusted");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    (
        cert_path.display().to_string(),
        key_path.display().to_string(),
        tokio_rustls::TlsConnector::from(Arc::new(config)),
    )
}

/// A TLS connection to nginx, the certificate checked for `localhost`.
async fn tls(
    port: u16,
    connector: &tokio_rustls::TlsConnector,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("nginx answers");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    connector
        .connect(name, tcp)
        .await
        .expect("a TLS handshake with the test's certificate")
}

/// One HTTP/1.1 request through nginx over TLS.
async fn https(
    port: u16,
    connector: &tokio_rustls::TlsConnector,
    path: &str,
    headers: &[(&str, &str)],
) -> axum::http::Response<hyper::body::Incoming> {
    let stream = hyper_util::rt::TokioIo::new(tls(port, connector).await);
    let (mut send, connection) = hyper::client::conn::http1::handshake(stream)
        .await
        .expect("HTTP/1.1 over TLS");
    tokio::spawn(connection);
    let mut request = axum::http::Request::get(path)
        .header("host", format!("localhost:{port}"))
        .header("x-api-key", KEY);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    tokio::time::timeout(
        WAIT,
        send.send_request(request.body(String::new()).expect("a request")),
    )
    .await
    .expect("an answer in time")
    .expect("an answer")
}

async fn body(res: axum::http::Response<hyper::body::Incoming>) -> axum::body::Bytes {
    axum::body::to_bytes(axum::body::Body::new(res.into_body()), 1 << 20)
        .await
        .expect("a body")
}

#[tokio::test]
async fn the_shipped_nginx_configuration_passes_https_etags_the_socket_and_the_stream() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let horse = envelope(profile("E271", "GOLDEN SIXTY"));
    let race = envelope(card(DAY, VENUE, 1, &["A1", "B2"]));
    // Priced, so that the event stream opens with the race's snapshot.
    let priced = envelope(odds_at(DAY, VENUE, 1, &[("A1", 4.0)]));
    let first = nats.publish(&[horse, race, priced]).await;
    app.projected(first).await;

    let front = TempDir::new().expect("temp dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (cert, key, connector) = certificate(front.path());
    let service = app.base.trim_start_matches("http://");
    let _nginx = Nginx::start(
        front.path(),
        &configuration(port, &cert, &key, service),
        port,
    )
    .await;

    // A document, byte for byte what the service sends, and its ETag revalidated.
    let path = "/api/v1/horses/E271";
    let direct = reqwest::Client::new()
        .get(format!("{}{path}", app.base))
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("an answer");
    let etag = direct.headers()["etag"]
        .to_str()
        .expect("an ETag")
        .to_owned();
    let direct = direct.bytes().await.expect("a body");
    let res = https(port, &connector, path, &[]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["etag"].to_str().ok(), Some(etag.as_str()));
    assert_eq!(body(res).await, direct, "the same bytes through nginx");
    let again = https(port, &connector, path, &[("if-none-match", &etag)]).await;
    assert_eq!(again.status(), 304, "revalidated through nginx");
    assert_eq!(again.headers()["etag"].to_str().ok(), Some(etag.as_str()));

    // The live socket, upgraded through nginx.
    let url = format!("wss://localhost:{port}/ws/live/odds?api_key={KEY}");
    let (mut socket, _) = tokio_tungstenite::client_async(url, tls(port, &connector).await)
        .await
        .expect("the socket upgraded through nginx");
    match tokio::time::timeout(WAIT, socket.next()).await {
        Ok(Some(Ok(Message::Text(t)))) => {
            assert!(t.starts_with("{\"type\":\"welcome\""), "{t}");
        }
        other => panic!("expected the welcome through nginx, got {other:?}"),
    }

    // The event stream: an odds move published once the stream has sent the race's
    // snapshot arrives as its event, through nginx, while the stream stays open. (Published
    // at the welcome, a move may be committed before the snapshot is read, and come in it.)
    let live = format!("/api/v1/live?date={DAY}&topics=odds");
    let res = https(port, &connector, &live, &[]).await;
    assert_eq!(res.status(), 200);
    let mut events = axum::body::Body::new(res.into_body()).into_data_stream();
    let mut seen = String::new();
    let mut published = None;
    tokio::time::timeout(WAIT, async {
        while let Some(chunk) = events.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk.expect("the stream reads")));
            if published.is_none() && seen.contains("event: snapshot\n") {
                let moved = envelope(odds_at(DAY, VENUE, 1, &[("A1", 3.5)]));
                published = Some(nats.publish(&[moved]).await);
            }
            if let Some(seq) = published {
                if seen.contains(&format!("id: {seq}\nevent: odds\n")) {
                    return;
                }
            }
        }
        panic!("the stream ended: {seen}");
    })
    .await
    .unwrap_or_else(|_| panic!("the odds move's event through nginx, in time: {seen}"));
}
