//! The step a start is at, for the admin listener to show before the service is up.
//!
//! A start can take minutes before the API answers: opening a large store, loading a
//! snapshot, or waiting for another replica's. Meanwhile the admin listener answers
//! `/healthz`, and `/readyz` and `/status` with the step and how long it has taken
//! (`admin::serve_while_starting`), so that an orchestrator's probes and `racing status`
//! find a service at work rather than a closed port.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Where a start is, shared by the start-up and the admin listener's early answers.
#[derive(Clone)]
pub struct Starting {
    /// The step, and since when.
    now: Arc<Mutex<(String, Instant)>>,
    /// When the start began.
    began: Instant,
}

/// The step a start is at, as `/status` shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// What it is doing: `fetching and loading snapshot read-models-…`, `waiting up to
    /// …`.
    pub step: String,
    /// Seconds at this step.
    pub step_secs: f64,
    /// Seconds since the start began.
    pub secs: f64,
}

impl Starting {
    /// A start that has just begun.
    pub fn new() -> Starting {
        let now = Instant::now();
        Starting {
            now: Arc::new(Mutex::new(("starting".to_owned(), now))),
            began: now,
        }
    }

    /// It goes on to `step`.
    pub fn set(&self, step: impl Into<String>) {
        let step = step.into();
        tracing::debug!(step = %step, "start");
        if let Ok(mut now) = self.now.lock() {
            *now = (step, Instant::now());
        }
    }

    /// Where it is now.
    pub fn step(&self) -> Step {
        let (step, since) = self
            .now
            .lock()
            .map(|now| now.clone())
            .unwrap_or_else(|_| ("starting".to_owned(), self.began));
        Step {
            step,
            step_secs: round(since.elapsed().as_secs_f64()),
            secs: round(self.began.elapsed().as_secs_f64()),
        }
    }
}

impl Default for Starting {
    fn default() -> Starting {
        Starting::new()
    }
}

/// Seconds to a tenth.
fn round(secs: f64) -> f64 {
    (secs * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_is_the_last_one_set() {
        let starting = Starting::new();
        assert_eq!(starting.step().step, "starting");
        starting.set("loading snapshot s1");
        let step = starting.step();
        assert_eq!(step.step, "loading snapshot s1");
        assert!(step.step_secs <= step.secs);
    }
}
