//! The benchmark's WebSocket clients, as the live, catch-up and peer parts open them:
//! tokio-tungstenite with small buffers, a gate on how many connect at once, and what
//! each client saw and when.

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use tokio::sync::{watch, Semaphore, SemaphorePermit};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::service::Service;

/// Connections opened at once.
pub(crate) const CONNECTING: usize = 200;

pub(crate) fn socket_url(service: &Service, key: &str) -> String {
    format!(
        "ws://127.0.0.1:{}/ws/live/odds?api_key={key}",
        service.port()
    )
}

/// Small buffers: ten thousand clients in the benchmark's own process.
pub(crate) fn client_config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(8 * 1024)
}

/// What one client saw: the key of each update it was sent (a stream sequence, an event
/// id) and when it read it, and when each snapshot after the first came.
pub(crate) struct Seen<K> {
    /// Updates, as they came.
    pub(crate) odds: Vec<(K, Instant)>,
    /// Snapshots (the service's conflations), as they came.
    pub(crate) snapshots: Vec<Instant>,
}

impl<K> Seen<K> {
    /// Room for `updates` updates.
    pub(crate) fn with_capacity(updates: usize) -> Seen<K> {
        Seen {
            odds: Vec::with_capacity(updates),
            snapshots: Vec::new(),
        }
    }
}

/// What the clients of one side share.
pub(crate) struct Shared {
    /// A place among the connections opened at once.
    gate: Semaphore,
    ready: AtomicUsize,
    /// Updates received, by every client.
    pub(crate) received: AtomicU64,
}

/// A live client's WebSocket.
pub(crate) type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

impl Shared {
    /// Waits for a place among the connections opened at once, then opens one to `url`
    /// as every live client does: tokio-tungstenite, with [`client_config`].
    pub(crate) async fn connect(&self, url: &str) -> anyhow::Result<(SemaphorePermit<'_>, Socket)> {
        let place = self.gate.acquire().await?;
        let (ws, _) =
            tokio_tungstenite::connect_async_with_config(url, Some(client_config()), false).await?;
        Ok((place, ws))
    }

    /// A place among the connections opened at once, for a client of another kind.
    pub(crate) async fn place(&self) -> anyhow::Result<SemaphorePermit<'_>> {
        Ok(self.gate.acquire().await?)
    }

    /// A client is subscribed: its place at the gate goes to the next one.
    pub(crate) fn subscribed(&self, place: SemaphorePermit<'_>) {
        drop(place);
        self.ready.fetch_add(1, Ordering::Relaxed);
    }
}

/// The clients of one side, subscribed and reading until they are stopped.
pub(crate) struct Clients<K> {
    tasks: Vec<JoinHandle<anyhow::Result<Seen<K>>>>,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

impl<K: Send + 'static> Clients<K> {
    /// Starts `n` clients, each `client(shared, stop)`, [`CONNECTING`] of them connecting
    /// at once, and waits until every one has called [`Shared::subscribed`].
    pub(crate) async fn start<F, Fut>(n: usize, client: F) -> anyhow::Result<Clients<K>>
    where
        F: Fn(Arc<Shared>, watch::Receiver<bool>) -> Fut,
        Fut: Future<Output = anyhow::Result<Seen<K>>> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        let shared = Arc::new(Shared {
            gate: Semaphore::new(CONNECTING),
            ready: AtomicUsize::new(0),
            received: AtomicU64::new(0),
        });
        let tasks = (0..n)
            .map(|_| tokio::spawn(client(shared.clone(), stopped.clone())))
            .collect();
        let clients = Clients {
            tasks,
            shared,
            stop,
        };
        let deadline = Instant::now() + Duration::from_secs(300);
        while clients.shared.ready.load(Ordering::Relaxed) < n {
            if Instant::now() > deadline || clients.tasks.iter().any(|t| t.is_finished()) {
                clients.stop().await?;
                bail!("live clients did not all subscribe");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(clients)
    }

    /// Stops the clients once `expected` updates are in, or after 10 s; what each saw.
    pub(crate) async fn finish(self, expected: u64) -> anyhow::Result<Vec<Seen<K>>> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.shared.received.load(Ordering::Relaxed) < expected && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.stop().await
    }

    /// Stops the clients; what each saw, or the first client's error.
    pub(crate) async fn stop(self) -> anyhow::Result<Vec<Seen<K>>> {
        let _ = self.stop.send(true);
        let mut seen = Vec::with_capacity(self.tasks.len());
        for t in self.tasks {
            seen.push(t.await??);
        }
        Ok(seen)
    }
}

/// The `seq` of an `odds` frame, read without parsing the rest.
pub(crate) fn seq_of(frame: &str) -> Option<u64> {
    let at = frame.find("\"seq\":")? + 6;
    let digits = &frame[at..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}
