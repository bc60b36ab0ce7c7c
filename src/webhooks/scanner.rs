//! The race-day journal's new events, read once for every lane as the projector commits
//! them: the newest kept in memory, older ones read from the store.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use racing_projections::DayEvent;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::projector::Progress;
use crate::read_models::ReadModels;

/// Race-day events the scanner keeps for the lanes.
const KEPT: usize = 1024;

/// Events the scanner reads at a time.
const SCAN: usize = 256;

/// The race-day journal's new events, read once for every lane: those after `from` up to
/// `upto`, at most [`KEPT`] of the newest.
pub struct Scanner {
    read_models: Arc<ReadModels>,
    kept: Mutex<Kept>,
    upto: watch::Sender<u64>,
}

#[derive(Default)]
struct Kept {
    /// Every event after this and up to the scanner's `upto` is in `events`.
    from: u64,
    events: VecDeque<(String, DayEvent)>,
}

impl Scanner {
    /// A scanner of the store in use, starting at its checkpoint.
    pub fn new(read_models: Arc<ReadModels>) -> Arc<Scanner> {
        let start = read_models.reader().checkpoint().unwrap_or(0);
        Arc::new(Scanner {
            read_models,
            kept: Mutex::new(Kept {
                from: start,
                events: VecDeque::new(),
            }),
            upto: watch::channel(start).0,
        })
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How far every race-day event is known: the last one read.
    pub fn upto(&self) -> u64 {
        *self.upto.borrow()
    }

    /// Follows [`Scanner::upto`].
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.upto.subscribe()
    }

    /// Up to `limit` race-day events after `after` (of `date` only, if given), in stream
    /// order: from what the scanner keeps where it reaches back that far, else from the
    /// store.
    pub async fn after(
        &self,
        after: u64,
        date: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<(String, DayEvent)>> {
        {
            let kept = self.kept();
            if after >= kept.from {
                return Ok(kept
                    .events
                    .iter()
                    .filter(|(d, e)| e.seq > after && date.is_none_or(|date| date == d))
                    .take(limit)
                    .cloned()
                    .collect());
            }
        }
        let store = self.read_models.reader();
        let date = date.map(str::to_owned);
        let read = tokio::task::spawn_blocking(move || match date {
            Some(date) => store.race_day(&date, after, limit).map(|events| {
                events
                    .into_iter()
                    .map(|e| (date.clone(), e))
                    .collect::<Vec<_>>()
            }),
            None => store.race_day_after(after, limit),
        });
        Ok(read.await??)
    }

    /// Reads what the projector committed, each time it commits, until `stop`.
    pub async fn run(
        self: Arc<Self>,
        mut progress: watch::Receiver<Progress>,
        stop: CancellationToken,
    ) {
        loop {
            if let Err(e) = self.scan().await {
                tracing::warn!(
                    error = format!("{e:#}"),
                    "reading the race-day journal for webhooks"
                );
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                changed = progress.changed() => if changed.is_err() { return },
                // A store a rebuild swapped in moves nothing on `progress`.
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    }

    async fn scan(&self) -> anyhow::Result<()> {
        loop {
            let upto = self.upto();
            let store = self.read_models.reader();
            let events =
                tokio::task::spawn_blocking(move || store.race_day_after(upto, SCAN)).await??;
            let whole = events.len() < SCAN;
            metrics::counter!("racing_webhook_journal_events_total").increment(events.len() as u64);
            let Some(last) = events.last().map(|(_, e)| e.seq) else {
                return Ok(());
            };
            {
                let mut kept = self.kept();
                kept.events.extend(events);
                while kept.events.len() > KEPT {
                    if let Some((_, e)) = kept.events.pop_front() {
                        kept.from = e.seq;
                    }
                }
            }
            // Every event up to the last one read: commits land whole and in order.
            self.upto.send_replace(last);
            if whole {
                return Ok(());
            }
        }
    }
}
