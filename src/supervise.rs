//! The service's long-lived tasks, kept running. A task that panics (sled panics on some
//! damaged pages) or returns an error is started again after a pause that grows with each
//! failure, with jitter, and `/readyz` says so meanwhile. One that fails
//! [`FAILURES_TO_EXIT`] times within [`FAILURE_WINDOW`] is not mended by restarting it:
//! the service then stops and its process exits non-zero, for its supervisor (compose's
//! restart policy, `scripts/cluster`, systemd) to start it afresh; so does a [`Fatal`]
//! failure at once.
//!
//! Work that takes whole cores for long (the projector catching up) runs
//! [`on_own_threads`], off the runtime that serves requests.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::retry::{Fatal, Pauses};

/// Failures of one task within [`FAILURE_WINDOW`] that end the process.
pub const FAILURES_TO_EXIT: usize = 5;
/// The window over which failures count.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(600);

/// The pauses between restarts: from half a second, doubling to 30 s, with jitter.
fn restart_pauses() -> Pauses {
    Pauses::new(Duration::from_millis(500), Duration::from_secs(30))
}

/// What is known of the supervised tasks, for `/readyz`, `/status` and the exit code.
#[derive(Debug, Default)]
pub struct Tasks {
    state: Mutex<BTreeMap<&'static str, TaskState>>,
    /// Why the service stopped itself, if it did.
    fatal: Mutex<Option<String>>,
}

/// One task's record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskState {
    /// Times it has been started again since the service started.
    pub restarts: u32,
    /// Whether it is waiting to be started again now.
    pub restarting: bool,
    /// Its last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

impl Tasks {
    /// Every task's record, by name.
    pub fn states(&self) -> BTreeMap<&'static str, TaskState> {
        lock(&self.state).clone()
    }

    /// A task waiting to be started again, and why it failed; `None` if all run.
    pub fn restarting(&self) -> Option<(&'static str, String)> {
        lock(&self.state)
            .iter()
            .find(|(_, s)| s.restarting)
            .map(|(name, s)| (*name, s.last_failure.clone().unwrap_or_default()))
    }

    /// Why the service stopped itself; `None` for a stop it was asked for.
    pub fn fatal(&self) -> Option<String> {
        lock(&self.fatal).clone()
    }

    fn update(&self, name: &'static str, change: impl FnOnce(&mut TaskState)) {
        change(lock(&self.state).entry(name).or_default());
    }
}

/// Runs the task `make` returns, and again each time it fails, until it ends cleanly or
/// `shutdown` (which a task failing too often cancels, with the reason in `tasks`).
pub fn spawn<F, Fut>(
    name: &'static str,
    tasks: Arc<Tasks>,
    shutdown: CancellationToken,
    mut make: F,
) -> tokio::task::JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    tasks.update(name, |_| {});
    tokio::spawn(async move {
        let mut pauses = restart_pauses();
        let mut failures = VecDeque::new();
        loop {
            let (failure, fatal) = match tokio::spawn(make()).await {
                Ok(Ok(())) => return,
                Ok(Err(e)) => (format!("{e:#}"), e.is::<Fatal>()),
                Err(e) if e.is_panic() => (
                    format!("panicked: {}", panic_message(e.into_panic())),
                    false,
                ),
                Err(_) => return,
            };
            if shutdown.is_cancelled() {
                return;
            }
            if fatal {
                tracing::error!(
                    task = name,
                    "{failure}; stopping the service for its supervisor to restart it"
                );
                *lock(&tasks.fatal) = Some(failure);
                shutdown.cancel();
                return;
            }
            let now = Instant::now();
            failures.push_back(now);
            while failures
                .front()
                .is_some_and(|t| now.duration_since(*t) > FAILURE_WINDOW)
            {
                failures.pop_front();
            }
            if failures.len() >= FAILURES_TO_EXIT {
                let reason = format!(
                    "the {name} failed {} times within {FAILURE_WINDOW:?}, last: {failure}",
                    failures.len()
                );
                tracing::error!(
                    task = name,
                    "{reason}; stopping the service for its supervisor to restart it"
                );
                *lock(&tasks.fatal) = Some(reason);
                tasks.update(name, |s| s.last_failure = Some(failure));
                shutdown.cancel();
                return;
            }
            let pause = pauses.next_pause();
            tracing::error!(task = name, failure, ?pause, "task failed; restarting it");
            tasks.update(name, |s| {
                s.restarting = true;
                s.last_failure = Some(failure);
            });
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = shutdown.cancelled() => return,
            }
            tasks.update(name, |s| {
                s.restarting = false;
                s.restarts += 1;
            });
            tracing::warn!(task = name, "task started again");
        }
    })
}

/// The message a panic was raised with.
pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

/// The guard of `m`, poisoned or not: a task that panicked holding it is reported where
/// it is supervised, and what it guarded stays in use (each holder leaves it whole
/// between its statements).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `work` to its end on a runtime of its own: on a thread named `name`, with one
/// more worker thread for the tasks it spawns, off the runtime that serves requests. On
/// that runtime, work that takes a core for long holds a worker between its yields, and
/// the requests queued on it wait; on threads of their own, the kernel shares the cores
/// and wakes a request's worker at once. A panic goes on to the caller, as from a task.
pub async fn on_own_threads<T: Send + 'static>(
    name: &str,
    work: impl Future<Output = anyhow::Result<T>> + Send + 'static,
) -> anyhow::Result<T> {
    let (done, outcome) = tokio::sync::oneshot::channel();
    let thread = std::thread::Builder::new().name(name.to_owned()).spawn({
        let workers = format!("{name}-tasks");
        move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name(workers)
                .enable_all()
                .build();
            let ended = match runtime {
                Ok(runtime) => runtime.block_on(work),
                Err(e) => Err(anyhow::anyhow!("starting a runtime: {e}")),
            };
            let _ = done.send(ended);
        }
    })?;
    match outcome.await {
        Ok(ended) => ended,
        // It ended without a word: it panicked.
        Err(_) => match tokio::task::spawn_blocking(move || thread.join()).await? {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => anyhow::bail!("thread {name} ended without a word"),
        },
    }
}
