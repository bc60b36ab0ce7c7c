//! Where the log ends, asked of NATS through whoever wires the service ([`LogEnd`]), for a
//! read whose position is past the checkpoint.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

/// How the API asks where the log ends now (the stream's last sequence).
pub type AskEnd = Box<dyn Fn() -> BoxFuture<'static, anyhow::Result<u64>> + Send + Sync>;

/// Where the log ends, for a read whose position is past the checkpoint: asked of NATS
/// through [`AskEnd`] (the API holds no NATS client), one question at a time, an answer
/// shared by every read that came before it was asked (an answer asked before a read
/// came may not hold an event its feeder had published by then, and is asked again).
/// The largest end seen is kept: a position at or below it is known to exist, and is
/// waited for without a question.
pub struct LogEnd {
    ask: AskEnd,
    /// The largest end seen.
    seen: AtomicU64,
    /// When the last answer was asked for, and the answer.
    last: tokio::sync::Mutex<Option<(Instant, u64)>>,
}

impl LogEnd {
    /// Asks with `ask`.
    pub fn new(ask: AskEnd) -> LogEnd {
        LogEnd {
            ask,
            seen: AtomicU64::new(0),
            last: tokio::sync::Mutex::new(None),
        }
    }

    /// The largest end seen: a position at or below it exists.
    pub(super) fn seen(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// The end of the log as asked at `since` or later, waiting at most `limit` for it;
    /// `None` if it could not be asked in time (NATS out of reach).
    pub(super) async fn asked_since(&self, since: Instant, limit: Duration) -> Option<u64> {
        let asking = async {
            let mut last = self.last.lock().await;
            if let Some((at, end)) = *last {
                if at >= since {
                    return Some(end);
                }
            }
            let at = Instant::now();
            match (self.ask)().await {
                Ok(end) => {
                    *last = Some((at, end));
                    self.seen.fetch_max(end, Ordering::Relaxed);
                    Some(end)
                }
                Err(e) => {
                    tracing::warn!(error = format!("{e:#}"), "asking where the log ends");
                    None
                }
            }
        };
        tokio::time::timeout(limit, asking).await.ok().flatten()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn the_end_of_the_log_is_asked_once_for_the_reads_that_came_before_the_question() {
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        let end = LogEnd::new(Box::new(move || {
            let n = counted.fetch_add(1, Ordering::SeqCst) as u64;
            Box::pin(async move { Ok(100 + n) })
        }));
        let before = Instant::now();
        let wait = Duration::from_secs(1);
        assert_eq!(end.asked_since(before, wait).await, Some(100));
        assert_eq!(
            end.asked_since(before, wait).await,
            Some(100),
            "the same answer"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        let later = Instant::now();
        assert_eq!(end.asked_since(later, wait).await, Some(101), "asked again");
        assert_eq!(end.seen(), 101);
    }
}
