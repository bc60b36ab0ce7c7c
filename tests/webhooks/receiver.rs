//! A webhook receiver on loopback: every request it is sent, kept in order with what it
//! answered, the answer chosen by the test for each.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;

/// One request the receiver was sent.
#[derive(Debug, Clone)]
pub struct Got {
    /// Its headers, by lower-case name.
    pub headers: HashMap<String, String>,
    /// Its body, as it came.
    pub body: Bytes,
    /// The status it was answered.
    pub answered: u16,
    /// When it came.
    pub at: Instant,
}

impl Got {
    /// Its `webhook-id`.
    pub fn id(&self) -> &str {
        self.headers.get("webhook-id").map_or("", String::as_str)
    }

    /// Its body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// Whether it checks with `secret`, as a receiver checks it now.
    pub fn verifies(&self, secret: &str) -> bool {
        let secret = racing::webhooks::sign::Secret::parse(secret).expect("a secret");
        let headers = self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let now = jiff::Timestamp::now().as_second();
        racing::webhooks::sign::verify(headers, &self.body, &secret, now).is_ok()
    }
}

/// How the receiver answers: given the request and how many came before it.
type Answer = Box<dyn FnMut(&Got, usize) -> u16 + Send>;

struct Shared {
    got: Mutex<Vec<Got>>,
    answer: Mutex<Answer>,
    arrived: Notify,
}

/// A receiver listening on `127.0.0.1`.
pub struct Receiver {
    /// Its URL.
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn take(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let mut got = Got {
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        body,
        answered: 0,
        at: Instant::now(),
    };
    let before = shared.got.lock().expect("lock").len();
    got.answered = (shared.answer.lock().expect("lock"))(&got, before);
    let status = StatusCode::from_u16(got.answered).expect("a status");
    shared.got.lock().expect("lock").push(got);
    shared.arrived.notify_waiters();
    status
}

impl Receiver {
    /// A receiver that answers 200.
    pub async fn ok() -> Receiver {
        Receiver::answering(|_, _| 200).await
    }

    /// A receiver that answers what `answer` says.
    pub async fn answering(answer: impl FnMut(&Got, usize) -> u16 + Send + 'static) -> Receiver {
        let shared = Arc::new(Shared {
            got: Mutex::new(Vec::new()),
            answer: Mutex::new(Box::new(answer)),
            arrived: Notify::new(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!(
            "http://{}/hook",
            listener.local_addr().expect("its address")
        );
        let app = Router::new()
            .route("/hook", post(take))
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { url, shared, task }
    }

    /// Every request so far.
    pub fn got(&self) -> Vec<Got> {
        self.shared.got.lock().expect("lock").clone()
    }

    /// Those it answered 2xx.
    pub fn taken(&self) -> Vec<Got> {
        self.got()
            .into_iter()
            .filter(|g| (200..300).contains(&g.answered))
            .collect()
    }

    /// Waits until it has answered `n` requests 2xx; those.
    pub async fn wait_taken(&self, n: usize, within: Duration) -> Vec<Got> {
        let deadline = Instant::now() + within;
        loop {
            let arrived = self.shared.arrived.notified();
            let taken = self.taken();
            if taken.len() >= n {
                return taken;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                panic!(
                    "{n} deliveries not taken within {within:?}; got {:?}",
                    self.got()
                        .iter()
                        .map(|g| (g.id().to_owned(), g.answered))
                        .collect::<Vec<_>>()
                );
            }
        }
    }
}
