//! The one retry policy of the service: pauses that grow exponentially to a cap, each
//! with jitter so that replicas failing together do not try again in step ([`Pauses`]),
//! and, for start-up, a patience after which a failure is final ([`patiently`]). What
//! trying again cannot mend (a [`Fatal`] failure) ends the wait at once.

use std::future::Future;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use tokio::time::Instant;

/// A failure that trying again cannot mend: a start-up step ([`patiently`]) ends at
/// once, and a supervised task ([`crate::supervise`]) that fails so stops the service at
/// once, with this as its reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Fatal(pub String);

/// The first pause after a failure to reach NATS: short, so that a service started a
/// moment before its broker is not held up.
pub const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two attempts at NATS, before jitter.
pub const MAX_PAUSE: Duration = Duration::from_secs(2);
/// How long start-up keeps trying NATS by default (`RACING_NATS_PATIENCE_SECS`): long
/// enough for a broker started together with the service to come up and elect its
/// JetStream leader.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Pauses between attempts: `first`, then twice the one before up to `cap`, each
/// lengthened by a random part of itself (less than as much again). Never runs out;
/// [`Pauses::reset`] starts again from `first`.
pub struct Pauses {
    builder: ExponentialBuilder,
    pauses: <ExponentialBuilder as BackoffBuilder>::Backoff,
    cap: Duration,
}

impl Pauses {
    /// Pauses from `first`, doubling up to `cap`.
    pub fn new(first: Duration, cap: Duration) -> Pauses {
        let builder = ExponentialBuilder::new()
            .with_min_delay(first)
            .with_max_delay(cap)
            .with_jitter()
            .without_max_times();
        Pauses {
            builder,
            pauses: builder.build(),
            cap,
        }
    }

    /// The pauses between attempts at NATS: from [`FIRST_PAUSE`] to [`MAX_PAUSE`].
    pub fn nats() -> Pauses {
        Pauses::new(FIRST_PAUSE, MAX_PAUSE)
    }

    /// The next pause.
    pub fn next_pause(&mut self) -> Duration {
        self.pauses.next().unwrap_or(self.cap)
    }

    /// Starts again from the first pause, as after a success.
    pub fn reset(&mut self) {
        self.pauses = self.builder.build();
    }
}

/// Runs `attempt` until it succeeds, for up to `patience`, pausing as [`Pauses::nats`]
/// says between tries. A [`Fatal`] failure ends it at once: retrying does not mend it.
/// The first failure is logged as a warning that says for how long it will go on, and
/// so is each that differs from the one before; the same again is logged at debug level,
/// so that a wait is one clear line, not a screenful. When patience runs out, the last
/// failure is returned, saying how long it was tried.
pub async fn patiently<T, Fut>(
    what: &str,
    patience: Duration,
    attempt: impl FnMut() -> Fut,
) -> anyhow::Result<T>
where
    Fut: Future<Output = anyhow::Result<T>>,
{
    patiently_with(what, patience, Pauses::nats(), attempt).await
}

async fn patiently_with<T, Fut>(
    what: &str,
    patience: Duration,
    mut pauses: Pauses,
    mut attempt: impl FnMut() -> Fut,
) -> anyhow::Result<T>
where
    Fut: Future<Output = anyhow::Result<T>>,
{
    let started = Instant::now();
    let mut said: Option<String> = None;
    loop {
        let error = match attempt().await {
            Ok(done) => return Ok(done),
            // Flat, so that `{e}` says all of it too; still a `Fatal`.
            Err(e) if e.is::<Fatal>() => return Err(Fatal(format!("{what}: {e:#}")).into()),
            Err(e) => e,
        };
        let left = patience.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(anyhow::anyhow!(
                "{what}: gave up after {}: {error:#}",
                seconds(started.elapsed())
            ));
        }
        let failure = format!("{error:#}");
        if said.as_ref() == Some(&failure) {
            tracing::debug!("{what}: {failure}; still trying");
        } else {
            tracing::warn!(
                "{what}: {failure}; trying again for up to {}",
                seconds(left)
            );
        }
        said = Some(failure);
        tokio::time::sleep(pauses.next_pause().min(left)).await;
    }
}

/// A duration in whole seconds, rounded, for messages: `30s`.
fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs() + u64::from(d.subsec_millis() >= 500))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::{AtomicU32, Ordering};

    const FIRST: Duration = Duration::from_millis(100);
    const CAP: Duration = Duration::from_secs(2);

    #[test]
    fn pauses_double_from_the_first_to_the_cap_each_with_jitter_below_as_much_again() {
        for _ in 0..200 {
            let mut pauses = Pauses::new(FIRST, CAP);
            let mut base = FIRST;
            for _ in 0..12 {
                let pause = pauses.next_pause();
                assert!(
                    pause >= base && pause < base * 2,
                    "{pause:?} outside [{base:?}, {:?})",
                    base * 2
                );
                base = (base * 2).min(CAP);
            }
        }
    }

    #[test]
    fn pauses_are_jittered_so_replicas_do_not_retry_in_step() {
        let firsts: std::collections::BTreeSet<Duration> = (0..50)
            .map(|_| Pauses::new(FIRST, CAP).next_pause())
            .collect();
        assert!(firsts.len() > 40, "{} distinct first pauses", firsts.len());
    }

    #[test]
    fn pauses_never_run_out_and_stay_below_twice_the_cap() {
        let mut pauses = Pauses::new(FIRST, CAP);
        for _ in 0..10_000 {
            assert!(pauses.next_pause() < CAP * 2);
        }
    }

    #[test]
    fn pauses_start_again_from_the_first_after_a_reset() {
        let mut pauses = Pauses::new(FIRST, CAP);
        for _ in 0..8 {
            pauses.next_pause();
        }
        assert!(pauses.next_pause() >= CAP);
        pauses.reset();
        assert!(pauses.next_pause() < FIRST * 2);
    }

    #[test]
    fn seconds_are_rounded() {
        assert_eq!(seconds(Duration::from_secs(30)), "30s");
        assert_eq!(seconds(Duration::from_millis(29_500)), "30s");
        assert_eq!(seconds(Duration::from_millis(4_003)), "4s");
    }

    /// Pauses of a millisecond or two, so that these tests take no time to speak of.
    fn tiny() -> Pauses {
        Pauses::new(Duration::from_millis(1), Duration::from_millis(2))
    }

    #[tokio::test]
    async fn what_retrying_cannot_mend_ends_at_once() {
        let tries = AtomicU32::new(0);
        let result: anyhow::Result<()> =
            patiently_with("opening", Duration::from_secs(60), tiny(), || async {
                tries.fetch_add(1, Ordering::SeqCst);
                Err(Fatal("refused".into()).into())
            })
            .await;
        let error = result.expect_err("fails");
        assert!(error.is::<Fatal>(), "still marked fatal: {error:#}");
        assert_eq!(error.to_string(), "opening: refused");
        assert_eq!(tries.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_failure_that_mends_is_tried_again_until_it_succeeds() {
        let tries = AtomicU32::new(0);
        let result = patiently_with("opening", Duration::from_secs(60), tiny(), || async {
            match tries.fetch_add(1, Ordering::SeqCst) {
                0..=2 => Err(anyhow::anyhow!("not yet")),
                n => Ok(n),
            }
        })
        .await;
        assert_eq!(result.expect("succeeds"), 3);
    }

    #[tokio::test]
    async fn patience_runs_out_with_the_last_failure_and_how_long_it_was_tried() {
        let started = Instant::now();
        let result: anyhow::Result<()> =
            patiently_with("opening", Duration::from_millis(30), tiny(), || async {
                Err(anyhow::anyhow!("nothing answers"))
            })
            .await;
        let error = result.expect_err("gives up").to_string();
        assert_eq!(error, "opening: gave up after 0s: nothing answers");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }
}
