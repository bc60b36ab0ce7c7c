//! One delivery over HTTP: a `POST` of the body to the endpoint, over a connection made to
//! an address [`Guard::target`] checked a moment before (never a second resolution), with
//! TLS for `https`, no redirect followed, the whole of it within the timeout, and at most
//! [`MAX_ANSWER`] bytes of the receiver's answer read. A connection serves one delivery:
//! the next resolves and checks the host again.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::Body as _;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, HOST, RETRY_AFTER, USER_AGENT};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_rustls::rustls;
use url::Url;

use super::guard::{Guard, Target};

/// Most bytes of a receiver's answer read; the rest is left unread and the connection
/// closed.
pub const MAX_ANSWER: usize = 4096;

/// Most bytes of a receiver's answer or of an error kept with an attempt.
const KEPT: usize = 200;

/// What one delivery came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posted {
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// Why it failed without an answer (refused by the forgery rules, no connection, a
    /// timeout), or the start of a non-2xx answer's body.
    pub error: Option<String>,
    /// The answer's `Retry-After`, in seconds, if it gave one.
    pub retry_after: Option<u64>,
    /// How long it took.
    pub took_ms: u64,
}

impl Posted {
    /// Whether the receiver took it: a 2xx.
    pub fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// Sends deliveries under the forgery rules of its guard.
pub struct Sender {
    guard: Arc<Guard>,
    timeout: Duration,
}

/// The TLS settings every `https` delivery uses: the system's roots, made once.
fn tls() -> Result<Arc<rustls::ClientConfig>, String> {
    static TLS: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    TLS.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        for cert in found.certs {
            let _ = roots.add(cert);
        }
        if roots.is_empty() {
            return Err("no trusted root certificate on this machine".into());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    })
    .clone()
}

impl Sender {
    /// A sender under `guard`'s rules, each delivery within `timeout`.
    pub fn new(guard: Arc<Guard>, timeout: Duration) -> Sender {
        Sender { guard, timeout }
    }

    /// The rules it sends under.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Posts `body` to `url` with `headers` (the `webhook-*` ones): resolved and checked
    /// now, connected to a checked address, the answer's status and at most
    /// [`MAX_ANSWER`] bytes of its body read.
    pub async fn post(&self, url: &Url, headers: &[(&'static str, String)], body: Bytes) -> Posted {
        let started = Instant::now();
        let outcome = tokio::time::timeout(self.timeout, self.attempt(url, headers, body)).await;
        let took_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match outcome {
            Ok(Ok((status, retry_after, answer))) => Posted {
                status: Some(status),
                error: (!(200..300).contains(&status) && !answer.is_empty()).then_some(answer),
                retry_after,
                took_ms,
            },
            Ok(Err(error)) => Posted {
                status: None,
                error: Some(error),
                retry_after: None,
                took_ms,
            },
            Err(_) => Posted {
                status: None,
                error: Some(format!("no answer within {} s", self.timeout.as_secs_f64())),
                retry_after: None,
                took_ms,
            },
        }
    }

    async fn attempt(
        &self,
        url: &Url,
        headers: &[(&'static str, String)],
        body: Bytes,
    ) -> Result<(u16, Option<u64>, String), String> {
        let target = self.guard.target(url).await.map_err(|e| e.to_string())?;
        let tcp = connect(&target).await?;
        let _ = tcp.set_nodelay(true);
        if target.tls {
            let tls = tls()?;
            let name = rustls::pki_types::ServerName::try_from(target.host.clone())
                .map_err(|e| format!("{}: {e}", target.host))?;
            let stream = tokio_rustls::TlsConnector::from(tls)
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS: {e}"))?;
            exchange(TokioIo::new(stream), &target, headers, body).await
        } else {
            exchange(TokioIo::new(tcp), &target, headers, body).await
        }
    }
}

/// A connection to the first of the target's checked addresses that takes one.
async fn connect(target: &Target) -> Result<TcpStream, String> {
    let mut last = String::from("no address");
    for addr in &target.addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("connecting to {addr}: {e}"),
        }
    }
    Err(last)
}

/// The request over `io` and the answer: its status, `Retry-After`, and the start of its
/// body (at most [`MAX_ANSWER`] bytes read, [`KEPT`] kept).
async fn exchange<T>(
    io: T,
    target: &Target,
    headers: &[(&'static str, String)],
    body: Bytes,
) -> Result<(u16, Option<u64>, String), String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    // The connection's own task ends with it; dropped with this delivery.
    let driven = tokio::spawn(connection);
    let _abort = AbortOnDrop(driven);
    let value = |v: &str| HeaderValue::from_str(v).map_err(|e| e.to_string());
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(target.path.as_str())
        .header(HOST, value(&target.authority)?)
        .header(CONTENT_TYPE, "application/json")
        .header(CONTENT_LENGTH, body.len())
        .header(
            USER_AGENT,
            concat!("racing-webhooks/", env!("CARGO_PKG_VERSION")),
        )
        .body(http_body_full(body))
        .map_err(|e| e.to_string())?;
    for (name, v) in headers {
        request.headers_mut().insert(*name, value(v)?);
    }
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let mut body = response.into_body();
    let mut read = Vec::new();
    while read.len() < MAX_ANSWER {
        let frame = futures::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx));
        match frame.await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let room = MAX_ANSWER - read.len();
                    read.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            // What the receiver said is kept as it came; a broken body after the status
            // changes nothing of the delivery's outcome.
            Some(Err(_)) | None => break,
        }
    }
    let answer = String::from_utf8_lossy(&read);
    let answer = racing_events::clip(answer.trim(), KEPT);
    Ok((status, retry_after, answer))
}

/// A body of one chunk of bytes.
fn http_body_full(bytes: Bytes) -> axum::body::Body {
    axum::body::Body::from(bytes)
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<Result<(), hyper::Error>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
