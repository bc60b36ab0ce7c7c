//! The admin listener, on its own address (loopback by default) so that probes and scrapes
//! never share the API's port or its keys: `/healthz` (alive), `/readyz` (NATS reachable
//! and the projector caught up within [`READY_MAX_LAG`]), `/metrics` (Prometheus), and the
//! JSON the operations commands read and drive (`/status`, `/dead-letters`, `/rebuild`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use racing_projections::DeadLetter;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::projector::Progress;
use crate::read_models::ReadModels;
use crate::rebuild::Rebuilder;
use crate::telemetry;

/// The projector counts as caught up while it is at most this many events behind the
/// stream (and has reached the stream's end once since start).
pub const READY_MAX_LAG: u64 = 1000;

/// What the admin endpoints read.
#[derive(Clone)]
pub struct AdminState {
    /// The read models.
    pub read_models: Arc<ReadModels>,
    /// Rebuilds them (`POST /rebuild`).
    pub rebuilder: Arc<Rebuilder>,
    /// The NATS client, for its connection state.
    pub client: async_nats::Client,
    /// JetStream, for the stream's end.
    pub js: jetstream::Context,
    /// Stream name.
    pub stream: String,
    /// The projector's progress.
    pub progress: watch::Receiver<Progress>,
    /// Whether the projector has caught up once.
    pub ready: Arc<AtomicBool>,
    /// Subscribers' mail, for its queue and failures.
    pub mailer: Arc<crate::subscribe::mail::Mailer>,
    /// The supervised tasks, for their restarts.
    pub tasks: Arc<crate::supervise::Tasks>,
    /// Why the read models were rebuilt at start-up, if they were.
    pub store_note: Option<String>,
    /// What `/status` last read of the store, for when it cannot read it in time.
    pub store_read: Arc<LastRead>,
    /// Which path the start took to its read models.
    pub start: crate::snapshot::start::StartReport,
    /// The snapshots' writer, where there is a snapshot bucket.
    pub snapshots: Option<Arc<crate::snapshot::writer::Writer>>,
}

/// The admin routes.
pub fn router(state: AdminState) -> Router {
    Router::new()
        .route(
            "/healthz",
            get(|| async { Json(serde_json::json!({"status": "alive"})) }),
        )
        .route("/readyz", get(readyz))
        .route("/metrics", get(scrape))
        .route("/status", get(status))
        .route("/dead-letters", get(dead_letters))
        .route("/rebuild", get(rebuild_status).post(start_rebuild))
        .route("/snapshots", get(snapshots).post(create_snapshot))
        .route("/snapshots/verify", axum::routing::post(verify_snapshot))
        .with_state(state)
}

/// The admin listener while the service starts, before it is built: `/healthz` alive,
/// `/metrics`, and `/readyz` (503) and `/status` with the step the start is at; anything
/// else 503. [`WhileStarting::stop`] hands the listener on to the service's own routes.
pub struct WhileStarting {
    stop: tokio_util::sync::CancellationToken,
    served: tokio::task::JoinHandle<()>,
}

/// Answers on (a handle of) `listener` while the service of stream `stream` starts, with
/// where `starting` is.
pub fn serve_while_starting(
    listener: &std::net::TcpListener,
    stream: &str,
    starting: crate::starting::Starting,
) -> anyhow::Result<WhileStarting> {
    let early = tokio::net::TcpListener::from_std(listener.try_clone()?)?;
    let stream = stream.to_owned();
    let status = move || {
        let step = starting.step();
        Status {
            stream: stream.clone(),
            ready: false,
            reason: Some(format!("starting: {}", step.step)),
            starting: Some(step),
            ..Status::default()
        }
    };
    let ready = status.clone();
    let app = Router::new()
        .route(
            "/healthz",
            get(|| async { Json(serde_json::json!({"status": "alive"})) }),
        )
        .route(
            "/readyz",
            get(move || async move { (StatusCode::SERVICE_UNAVAILABLE, Json(ready())) }),
        )
        .route("/status", get(move || async move { Json(status()) }))
        .route("/metrics", get(|| async { telemetry::render() }))
        .fallback(|| async {
            let starting = serde_json::json!({"error": "the service is starting"});
            (StatusCode::SERVICE_UNAVAILABLE, Json(starting))
        });
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone().cancelled_owned();
    let served = tokio::spawn(async move {
        if let Err(e) = axum::serve(early, app)
            .with_graceful_shutdown(stopped)
            .await
        {
            tracing::warn!(error = %e, "the admin listener while starting");
        }
    });
    Ok(WhileStarting { stop, served })
}

impl WhileStarting {
    /// Stops answering: requests under way finish (within a second), and the listener
    /// is left to the service's own routes.
    pub async fn stop(self) {
        self.stop.cancel();
        let abort = self.served.abort_handle();
        if tokio::time::timeout(Duration::from_secs(1), self.served)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
}

/// Where the service stands: what `racing status` prints and `/readyz` decides on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Status {
    /// Stream name.
    pub stream: String,
    /// Whether the NATS connection is up.
    pub nats_connected: bool,
    /// The stream's last sequence, if NATS answered.
    pub stream_last_seq: Option<u64>,
    /// The last sequence committed to the read models.
    pub checkpoint: u64,
    /// Events the read models are behind the stream, if known.
    pub lag: Option<u64>,
    /// Events applied, duplicates ignored and dead letters recorded since start.
    pub applied: u64,
    /// See `applied`.
    pub duplicates: u64,
    /// See `applied`.
    pub dead_letters: u64,
    /// Times the projector stopped on an error (NATS, a stalled consumer) and went on
    /// from its checkpoint since start.
    #[serde(default)]
    pub interruptions: u64,
    /// Whether the service is ready, and if not, why.
    pub ready: bool,
    /// Why it is not ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Subscribers' mail: waiting, sent, failures.
    #[serde(default)]
    pub mail: crate::subscribe::mail::MailStatus,
    /// The supervised tasks (projector, mailer): restarts and last failure.
    #[serde(default)]
    pub tasks: std::collections::BTreeMap<String, crate::supervise::TaskState>,
    /// The stream the read models are built from: its name and creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built_from: Option<String>,
    /// Why the read models were rebuilt at start-up (another stream's, damaged, older).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_note: Option<String>,
    /// Why the projector cannot write the read models (a full disk), while it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cannot_write: Option<String>,
    /// Which path the start took to its read models: its own store, a snapshot, or a
    /// replay of the log.
    #[serde(default)]
    pub start: crate::snapshot::start::StartReport,
    /// The snapshots' writer: whether this replica holds the lease, its last snapshot,
    /// the newest in the bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<crate::snapshot::writer::WriterStatus>,
    /// While the service starts, before its read models are open: the step it is at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting: Option<crate::starting::Step>,
}

/// Longest `/status` waits for what it reads of the store before it answers with what it
/// read last.
const STORE_WITHIN: Duration = Duration::from_millis(100);

/// What `/status` reads of the store: its checkpoint and the stream it was built from.
#[derive(Debug, Clone, Default)]
struct StoreRead {
    checkpoint: u64,
    built_from: Option<String>,
}

/// What `/status` last read of the store, and whether a read is under way.
#[derive(Debug, Default)]
pub struct LastRead {
    last: std::sync::Mutex<StoreRead>,
    reading: AtomicBool,
}

/// Ends a read of the store however it ends, so that the next may start.
struct Reading(Arc<LastRead>);

impl Drop for Reading {
    fn drop(&mut self) {
        self.0.reading.store(false, Ordering::Release);
    }
}

/// What `/status` reads of the store, read on a blocking thread and waited for up to
/// [`STORE_WITHIN`]; `None` if it is not read by then, or if the read before is still
/// waiting (one at a time, however often `/status` is asked). A read of the store waits
/// while sled writes a batch, and a replay's take seconds: read on the runtime's threads,
/// it held `/status` (and `/metrics`, `/readyz`) for seconds, and a thread of the
/// runtime that serves requests with it.
async fn read_store(state: &AdminState) -> Option<StoreRead> {
    if state.store_read.reading.swap(true, Ordering::AcqRel) {
        return None;
    }
    let reading = Reading(state.store_read.clone());
    let store = state.read_models.load_full();
    let read = tokio::task::spawn_blocking(move || {
        let read = StoreRead {
            checkpoint: store.checkpoint().ok()?,
            built_from: store.stream().ok().flatten(),
        };
        *crate::supervise::lock(&reading.0.last) = read.clone();
        Some(read)
    });
    tokio::time::timeout(STORE_WITHIN, read).await.ok()?.ok()?
}

async fn current(state: &AdminState) -> Status {
    let progress = *state.progress.borrow();
    // Not read in time: the projector's checkpoint, and the stream as last read.
    let read = read_store(state).await.unwrap_or_else(|| StoreRead {
        checkpoint: progress.checkpoint,
        ..crate::supervise::lock(&state.store_read.last).clone()
    });
    let checkpoint = read.checkpoint;
    let nats_connected =
        state.client.connection_state() == async_nats::connection::State::Connected;
    let stream_last_seq = if nats_connected {
        // One request: the stream's handle comes with its info.
        let info = async {
            let stream = state.js.get_stream(&state.stream).await.ok()?;
            Some(stream.cached_info().state.last_sequence)
        };
        tokio::time::timeout(std::time::Duration::from_secs(2), info)
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let lag = stream_last_seq.map(|last| last.saturating_sub(checkpoint));
    let cannot_write = state.read_models.cannot_write();
    let reason = if let Some(problem) = &cannot_write {
        Some(format!(
            "the projector cannot write the read models ({problem}); it tries again"
        ))
    } else if !nats_connected {
        Some("NATS is not reachable".to_owned())
    } else if stream_last_seq.is_none() {
        Some(format!("stream {} did not answer", state.stream))
    } else if let Some((task, failure)) = state.tasks.restarting() {
        Some(format!("the {task} failed ({failure}); starting it again"))
    } else if let Some(problem) = state.rebuilder.repairing() {
        Some(format!(
            "the read models are damaged ({problem}); rebuilding them from the log"
        ))
    } else if !state.ready.load(Ordering::Relaxed) {
        Some(match (&state.start.snapshot, state.start.from_checkpoint) {
            (Some(name), from) => format!(
                "the read models, loaded from snapshot {name} at {from}, are catching up with the log (at {checkpoint})"
            ),
            (None, _) => "the read models are still being built from the log".to_owned(),
        })
    } else if lag.is_some_and(|l| l > READY_MAX_LAG) {
        Some(format!(
            "the projector is {} events behind (limit {READY_MAX_LAG})",
            lag.unwrap_or(0)
        ))
    } else {
        None
    };
    if let Some(lag) = lag {
        metrics::gauge!("racing_projector_lag_events").set(lag as f64);
    }
    metrics::gauge!("racing_projector_checkpoint").set(checkpoint as f64);
    Status {
        stream: state.stream.clone(),
        nats_connected,
        stream_last_seq,
        checkpoint,
        lag,
        applied: progress.applied,
        duplicates: progress.duplicates,
        dead_letters: progress.dead_letters,
        interruptions: progress.interruptions,
        ready: reason.is_none(),
        reason,
        mail: state.mailer.status(),
        built_from: read.built_from,
        store_note: state.store_note.clone(),
        cannot_write,
        start: state.start.clone(),
        snapshots: state.snapshots.as_ref().map(|w| w.status()),
        starting: None,
        tasks: state
            .tasks
            .states()
            .into_iter()
            .map(|(name, s)| (name.to_owned(), s))
            .collect(),
    }
}

async fn readyz(State(state): State<AdminState>) -> Response {
    let status = current(&state).await;
    let code = if status.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(status)).into_response()
}

async fn status(State(state): State<AdminState>) -> Json<Status> {
    Json(current(&state).await)
}

async fn scrape(State(state): State<AdminState>) -> Response {
    // Refreshes the projector gauges.
    current(&state).await;
    count_store_writes();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        telemetry::render(),
    )
        .into_response()
}

/// What the folds' commits handed the storage engine since the process started, by
/// kind of record (`racing_store_written_{records,bytes}_total`, with `kind` and `of`:
/// `records`, or `versions` of them kept for `as_of` reads).
fn count_store_writes() {
    for kind in racing_projections::written() {
        let of = if kind.versions { "versions" } else { "records" };
        let labels = [("kind", kind.kind), ("of", of)];
        metrics::counter!("racing_store_written_records_total", &labels).absolute(kind.records);
        metrics::counter!("racing_store_written_bytes_total", &labels).absolute(kind.bytes);
    }
}

/// The current or last rebuild.
async fn rebuild_status(State(state): State<AdminState>) -> Json<crate::rebuild::status::Status> {
    Json(state.rebuilder.status())
}

/// Where `POST /rebuild` starts the fresh store.
#[derive(Deserialize)]
struct RebuildFrom {
    /// `newest`, or a snapshot's name: load it, then fold the log from its checkpoint;
    /// none: fold the whole log.
    snapshot: Option<String>,
}

/// Starts a rebuild: 202 with its status, or 409 with the status of the one under way.
async fn start_rebuild(
    State(state): State<AdminState>,
    Query(from): Query<RebuildFrom>,
) -> Response {
    use crate::rebuild::status::Origin;
    let from = match from.snapshot.as_deref() {
        None => Origin::Log,
        Some("newest") => Origin::Snapshot(None),
        Some(name) => Origin::Snapshot(Some(name.to_owned())),
    };
    match state.rebuilder.start_from(from) {
        Ok(status) => (StatusCode::ACCEPTED, Json(status)).into_response(),
        Err(running) => (StatusCode::CONFLICT, Json(running)).into_response(),
    }
}

/// What is known of snapshots: the writer's status, and every snapshot in the bucket.
async fn snapshots(State(state): State<AdminState>) -> Response {
    let Some(writer) = &state.snapshots else {
        return no_bucket();
    };
    match writer.snapshots().list().await {
        Ok(listed) => Json(serde_json::json!({
            "writer": writer.status(),
            "snapshots": listed,
        }))
        .into_response(),
        Err(e) => failed(&e),
    }
}

/// Writes a snapshot now: 201 with it, 409 when the store may not be snapshotted now.
async fn create_snapshot(State(state): State<AdminState>) -> Response {
    use crate::snapshot::writer::Refused;
    let Some(writer) = &state.snapshots else {
        return no_bucket();
    };
    match writer.create().await {
        Ok(created) => (StatusCode::CREATED, Json(created)).into_response(),
        Err(Refused::NotNow(why)) => (
            StatusCode::CONFLICT,
            Json(serde_json::json!({"error": why})),
        )
            .into_response(),
        Err(Refused::Failed(e)) => failed(&e),
    }
}

#[derive(Deserialize)]
struct Named {
    /// A snapshot's name; none: the newest.
    name: Option<String>,
}

/// Fetches a snapshot and reads it through (digest, format, layout, count): 200 with
/// what it holds, 422 with why it would be refused.
async fn verify_snapshot(State(state): State<AdminState>, Query(named): Query<Named>) -> Response {
    let Some(writer) = &state.snapshots else {
        return no_bucket();
    };
    let snapshots = writer.snapshots();
    let listed = match snapshots.list().await {
        Ok(listed) => listed,
        Err(e) => return failed(&e),
    };
    let Some(listed) = (match &named.name {
        Some(name) => listed.into_iter().find(|l| &l.name == name),
        None => listed.into_iter().next(),
    }) else {
        return (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({"error": "no such snapshot"})),
        )
            .into_response();
    };
    let fetched = match snapshots.fetch(&listed.name).await {
        Ok(fetched) => fetched,
        Err(e) => return unusable(&listed, &format!("{e:#}")),
    };
    let (path, digest) = (fetched.path().to_owned(), listed.digest.clone());
    let read = tokio::task::spawn_blocking(move || {
        let read = racing_projections::verify_snapshot(&path, &digest);
        drop(fetched);
        read
    })
    .await;
    match read {
        Ok(Ok(summary)) if summary.head.checkpoint == listed.checkpoint => {
            Json(serde_json::json!({
                "snapshot": listed,
                "verified": {
                    "records": summary.records,
                    "record_bytes": summary.record_bytes,
                    "checkpoint": summary.head.checkpoint,
                    "layout": summary.head.layout,
                    "stream": summary.head.stream,
                },
            }))
            .into_response()
        }
        Ok(Ok(summary)) => unusable(
            &listed,
            &format!("its file holds checkpoint {}", summary.head.checkpoint),
        ),
        Ok(Err(e)) => unusable(&listed, &e.to_string()),
        Err(e) => unusable(&listed, &format!("the check panicked: {e}")),
    }
}

fn unusable(listed: &crate::snapshot::listed::Listed, why: &str) -> Response {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        Json(serde_json::json!({"snapshot": listed, "error": why})),
    )
        .into_response()
}

fn no_bucket() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(serde_json::json!({
            "error": "this service has no snapshot bucket: `racing setup` makes it (docs/operations.md)"
        })),
    )
        .into_response()
}

fn failed(e: &anyhow::Error) -> Response {
    tracing::error!(error = format!("{e:#}"), "snapshots");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(serde_json::json!({"error": format!("{e:#}")})),
    )
        .into_response()
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    from: u64,
    #[serde(default = "default_limit")]
    limit: usize,
}

fn default_limit() -> usize {
    100
}

async fn dead_letters(State(state): State<AdminState>, Query(page): Query<Page>) -> Response {
    match state
        .read_models
        .load()
        .dead_letters(page.from, page.limit.min(10_000))
    {
        Ok(letters) => Json::<Vec<DeadLetter>>(letters).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "reading dead letters");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(serde_json::json!({"error": "internal"})),
            )
                .into_response()
        }
    }
}
