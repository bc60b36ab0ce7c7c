//! Limits on what a client may ask of the service: requests per key (a token bucket,
//! GCRA, shared with the other replicas through [`crate::keys::usage`]), requests in
//! flight and time per request, and the sizes of a request line and its headers. The
//! pipeline (`pipeline.rs`) applies them, in order.
//!
//! The `RateLimit` and `RateLimit-Policy` headers follow the IETF httpapi draft
//! `draft-ietf-httpapi-ratelimit-headers-08` (one policy, named "default": `q` requests per
//! `w` seconds; `r` remaining, `t` seconds until the quota is back).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::keys::digest::KeyId;
use crate::keys::record::KeyLimits;
use crate::keys::ring::Identity;
use crate::keys::usage::{Ledger, Use, REPORT};

/// Longest request target (path and query) accepted, bytes.
pub const MAX_URI_BYTES: usize = 2048;
/// Most header bytes (names and values) accepted.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Most header fields accepted.
pub const MAX_HEADERS: usize = 64;

/// The service's request limits.
#[derive(Debug, Clone, Copy)]
pub struct RequestLimits {
    /// Sustained requests per second per key, unless the key sets its own.
    pub rate_per_sec: u32,
    /// Burst per key, unless the key sets its own.
    pub burst: u32,
    /// Longest a request may take.
    pub timeout: Duration,
    /// Most requests in flight at once, all keys together.
    pub max_in_flight: usize,
    /// Longest a read waits for the read models to reach the position it names
    /// (`min_seq`, `Racing-Min-Seq`, an `as_of` past the checkpoint), within `timeout`.
    pub min_seq_wait: Duration,
}

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            rate_per_sec: 50,
            burst: 100,
            timeout: Duration::from_secs(10),
            max_in_flight: 1024,
            min_seq_wait: Duration::from_secs(2),
        }
    }
}

impl RequestLimits {
    /// A wait for a position of `wait` within a request `timeout`: a second of the timeout
    /// (or half of a shorter one) is left for the answer after it, so that a wait that
    /// runs out answers its own 503, with the checkpoint, rather than the timeout's.
    pub fn wait_within(wait: Duration, timeout: Duration) -> Duration {
        let room = timeout
            .saturating_sub(Duration::from_secs(1))
            .max(timeout / 2);
        wait.min(room)
    }
}

/// A key's token bucket, as GCRA: the time at which the next request would conform
/// (`next`), which each request admitted moves on by one interval (1 / rate) and which may
/// run ahead of now by the burst. Requests the other replicas admitted move it on too
/// ([`RateLimits::charge`]), past the burst if they must: a debt paid off at the rate; and
/// so does work owed for a request admitted here ([`RateLimits::owe`]).
struct Bucket {
    rate: u32,
    burst: u32,
    /// Nanoseconds per request at the sustained rate.
    interval: u64,
    /// How far `next` may be ahead of now for a request to be admitted:
    /// (burst - 1) intervals.
    tolerance: u64,
    /// When the next request conforms, nanoseconds after [`RateLimits::epoch`].
    next: AtomicU64,
    /// Requests admitted here since the last report to the other replicas.
    used: AtomicU32,
    /// The `RateLimit-Policy` value that describes it, made once rather than on every
    /// request.
    policy: HeaderValue,
}

impl Bucket {
    fn new(rate: u32, burst: u32) -> Bucket {
        let (rate, burst) = (rate.max(1), burst.max(1));
        let interval = (1_000_000_000 / u64::from(rate)).max(1);
        let window = burst.div_ceil(rate);
        let policy = format!("\"default\";q={burst};w={window}");
        Bucket {
            rate,
            burst,
            interval,
            tolerance: interval * u64::from(burst - 1),
            next: AtomicU64::new(0),
            used: AtomicU32::new(0),
            policy: HeaderValue::from_str(&policy)
                .unwrap_or_else(|_| HeaderValue::from_static("\"default\"")),
        }
    }

    /// Admits a request at `now`: the requests left in the burst, or, to refuse, the
    /// nanoseconds until one would be admitted.
    fn take(&self, now: u64) -> Result<u32, u64> {
        let mut next = self.next.load(Ordering::Relaxed);
        loop {
            let conforms = next.max(now);
            if conforms - now > self.tolerance {
                return Err(conforms - now - self.tolerance);
            }
            let after = conforms + self.interval;
            match self
                .next
                .compare_exchange_weak(next, after, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.used.fetch_add(1, Ordering::Relaxed);
                    let room = (self.tolerance + self.interval).saturating_sub(after - now);
                    return Ok(u32::try_from(room / self.interval).unwrap_or(u32::MAX));
                }
                Err(moved) => next = moved,
            }
        }
    }

    /// Counts `count` requests of work done here at `now` for a request already admitted,
    /// whatever is left: past the burst, a debt the key's next requests wait out. Reported
    /// to the other replicas as requests admitted here.
    fn owe(&self, count: u32, now: u64) {
        self.charge(count, now);
        self.used.fetch_add(count, Ordering::Relaxed);
    }

    /// Counts `count` requests admitted elsewhere at `now`, whatever is left.
    fn charge(&self, count: u32, now: u64) {
        let cost = self.interval.saturating_mul(u64::from(count));
        let _ = self
            .next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
                Some(next.max(now).saturating_add(cost))
            });
    }
}

/// One token bucket per key, each with the key's own plan or the default, and each
/// charged with the key's use on the other replicas (see [`crate::keys::usage`]).
pub struct RateLimits {
    defaults: RequestLimits,
    buckets: RwLock<HashMap<KeyId, Bucket>>,
    /// What the buckets' times count from.
    epoch: Instant,
    in_flight: Arc<Semaphore>,
}

impl RateLimits {
    /// Limits with these defaults.
    pub fn new(defaults: RequestLimits) -> Arc<RateLimits> {
        Arc::new(RateLimits {
            defaults,
            buckets: RwLock::new(HashMap::new()),
            epoch: Instant::now(),
            in_flight: Arc::new(Semaphore::new(defaults.max_in_flight.max(1))),
        })
    }

    /// Nanoseconds since [`RateLimits::epoch`].
    fn now(&self) -> u64 {
        self.since_epoch(Instant::now())
    }

    /// Nanoseconds from [`RateLimits::epoch`] to `at`.
    fn since_epoch(&self, at: Instant) -> u64 {
        let since = at.saturating_duration_since(self.epoch);
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
    }

    /// The key's plan: its rate and burst. A new plan (the key's limits changed) replaces
    /// the key's bucket on its next request.
    fn plan(&self, who: &Identity) -> (u32, u32) {
        self.plan_of(who.limits)
    }

    /// The rate and burst of a key with `limits`: its own, or the defaults.
    fn plan_of(&self, limits: KeyLimits) -> (u32, u32) {
        let rate = limits.rate_per_sec.unwrap_or(self.defaults.rate_per_sec);
        let burst = limits.burst.unwrap_or(self.defaults.burst);
        (rate.max(1), burst.max(1))
    }

    /// `f` of the key's bucket for `plan`, made first if the key has none or one of
    /// another plan. A bucket is used under the map's read lock, not cloned out of it:
    /// a clone took and dropped a reference count, a cache line every request of the key
    /// wrote to, from both cores.
    fn with_bucket<T>(
        &self,
        id: KeyId,
        (rate, burst): (u32, u32),
        f: impl FnOnce(&Bucket) -> T,
    ) -> T {
        {
            let buckets = self.buckets.read().unwrap_or_else(|p| p.into_inner());
            if let Some(bucket) = buckets
                .get(&id)
                .filter(|b| (b.rate, b.burst) == (rate, burst))
            {
                return f(bucket);
            }
        }
        let mut buckets = self.buckets.write().unwrap_or_else(|p| p.into_inner());
        f(buckets
            .entry(id)
            .insert_entry(Bucket::new(rate, burst))
            .get())
    }

    /// A place among the requests in flight, held until the answer is made; `None` when
    /// the service is at capacity (a 503 sheds the load).
    pub(super) fn admit(&self) -> Option<OwnedSemaphorePermit> {
        self.in_flight.clone().try_acquire_owned().ok()
    }

    /// The longest a request may take.
    pub(super) fn timeout(&self) -> Duration {
        self.defaults.timeout
    }

    /// The longest a read waits for the position it names.
    pub(super) fn min_seq_wait(&self) -> Duration {
        self.defaults.min_seq_wait
    }

    /// Takes a token for `who` at `at` (the time the request came, read once for all
    /// that times it): the headers to send either way, and, to refuse, the seconds until
    /// the next token.
    pub(super) fn take(&self, who: &Identity, at: Instant) -> (RateHeaders, Option<u64>) {
        let (rate, burst) = self.plan(who);
        let window = burst.div_ceil(rate);
        let now = self.since_epoch(at);
        let (remaining, reset, refused, policy) = self.with_bucket(who.id, (rate, burst), |b| {
            let (remaining, reset, refused) = match b.take(now) {
                Ok(remaining) => {
                    let used = burst.saturating_sub(remaining);
                    (remaining, used.div_ceil(rate), None)
                }
                Err(wait) => {
                    let secs = wait.div_ceil(1_000_000_000);
                    (0, window, Some(secs.max(1)))
                }
            };
            (remaining, reset, refused, b.policy.clone())
        });
        let limit = super::header_text::HeaderText::new()
            .text("\"default\";r=")
            .number(remaining.into())
            .text(";t=")
            .number(reset.into())
            .value();
        let headers = RateHeaders { policy, limit };
        (headers, refused)
    }

    /// Takes a token for a message of `who` on a live connection: `None` if admitted,
    /// else how long until it would be.
    pub(super) fn spend(&self, who: &Identity) -> Option<Duration> {
        let now = self.now();
        let taken = self.with_bucket(who.id, self.plan(who), |b| b.take(now));
        let wait = taken.err()?;
        metrics::counter!("racing_rate_limited_total").increment(1);
        Some(Duration::from_nanos(wait))
    }

    /// Charges `who` `n` requests for work a request admitted already asked for (a `since`
    /// replay's pages, after its `subscribe`), whatever the key has left: what goes past
    /// its burst is a debt its next requests, on every replica, wait out at its rate, so
    /// that the work costs in proportion to its size, never only what the burst holds.
    pub(super) fn owe(&self, who: &Identity, n: u32) {
        let now = self.now();
        self.with_bucket(who.id, self.plan(who), |b| b.owe(n, now));
    }
}

impl Ledger for RateLimits {
    /// The requests admitted here since the last report, per key: at most what the
    /// others believe of one report ([`allowed_in_a_report`]), the rest (a replay's
    /// debt) left for the next reports, so that the others are charged all of it.
    fn take_used(&self) -> Vec<Use> {
        let buckets = self.buckets.read().unwrap_or_else(|p| p.into_inner());
        buckets
            .iter()
            .filter_map(|(key, b)| {
                let most = allowed_in_a_report((b.rate, b.burst));
                let before = b
                    .used
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                        Some(used.saturating_sub(most))
                    })
                    .unwrap_or(0);
                let count = before.min(most);
                (count > 0).then_some(Use {
                    key: *key,
                    count,
                    rate: b.rate,
                    burst: b.burst,
                })
            })
            .collect()
    }

    /// Charges the key's bucket here, made with the key's plan as this replica knows it
    /// (`limits`) if there is none yet; a bucket of another plan (a change of the key's
    /// limits on its way) is charged as it is. A report is believed up to what the plan
    /// lets one replica admit in a report's interval ([`allowed_in_a_report`]): a replica
    /// that reports more (a fault, or a forged message) cannot push the key's bucket
    /// further ahead than an honest one could.
    fn charge(&self, theirs: &Use, limits: KeyLimits) {
        let plan = self.plan_of(limits);
        let count = theirs.count.min(allowed_in_a_report(plan));
        let now = self.now();
        {
            let buckets = self.buckets.read().unwrap_or_else(|p| p.into_inner());
            if let Some(bucket) = buckets.get(&theirs.key) {
                bucket.charge(count, now);
                return;
            }
        }
        let mut buckets = self.buckets.write().unwrap_or_else(|p| p.into_inner());
        buckets
            .entry(theirs.key)
            .or_insert_with(|| Bucket::new(plan.0, plan.1))
            .charge(count, now);
    }
}

/// The most requests of a key of plan `(rate, burst)` that one replica can admit between
/// two of its reports: its whole burst, and the rate for two report intervals (a report
/// may leave late, and then covers more than one).
fn allowed_in_a_report((rate, burst): (u32, u32)) -> u32 {
    let millis = u64::try_from(REPORT.as_millis()).unwrap_or(u64::MAX);
    let per_interval = u64::from(rate).saturating_mul(2 * millis) / 1000;
    burst.saturating_add(u32::try_from(per_interval.max(1)).unwrap_or(u32::MAX))
}

/// The RateLimit headers of an answer: the key's policy, and where it stands.
pub(super) struct RateHeaders {
    policy: HeaderValue,
    limit: Option<HeaderValue>,
}

impl RateHeaders {
    /// Adds them to an answer's headers.
    pub(super) fn add_to(self, headers: &mut HeaderMap) {
        headers.insert(HeaderName::from_static("ratelimit-policy"), self.policy);
        if let Some(limit) = self.limit {
            headers.insert(HeaderName::from_static("ratelimit"), limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000_000;

    #[test]
    fn a_bucket_admits_its_burst_then_its_rate_and_counts_what_others_admitted() {
        let bucket = Bucket::new(2, 4);
        let left: Vec<_> = (0..5).map(|_| bucket.take(10 * SECOND)).collect();
        assert_eq!(left, [Ok(3), Ok(2), Ok(1), Ok(0), Err(SECOND / 2)]);
        assert_eq!(
            bucket.take(10 * SECOND + SECOND / 2),
            Ok(0),
            "one more at the rate"
        );
        assert_eq!(bucket.used.load(Ordering::Relaxed), 5);

        // Work owed for a request admitted is charged whatever is left: past the burst,
        // a debt the next request waits out, however far past.
        let bucket = Bucket::new(2, 4);
        assert_eq!(bucket.take(0), Ok(3));
        bucket.owe(9, 0);
        assert_eq!(bucket.take(0), Err(7 * SECOND / 2));
        assert_eq!(bucket.take(7 * SECOND / 2), Ok(0));
        assert_eq!(bucket.used.load(Ordering::Relaxed), 11);

        // Requests admitted elsewhere take from the burst, and past it leave a debt.
        let bucket = Bucket::new(2, 4);
        bucket.charge(3, 0);
        assert_eq!(bucket.take(0), Ok(0));
        bucket.charge(4, 0);
        assert_eq!(bucket.take(0), Err(5 * SECOND / 2));
        assert_eq!(bucket.take(5 * SECOND / 2), Ok(0));
    }

    /// A replica's report is taken as at most what the key's plan lets one replica admit
    /// in a report's interval: a report of `u32::MAX` requests leaves the key refused for
    /// seconds, not years.
    #[test]
    fn a_report_is_charged_at_most_what_the_plan_allows_in_its_interval() {
        let limits = RateLimits::new(RequestLimits {
            rate_per_sec: 10,
            burst: 20,
            ..RequestLimits::default()
        });
        let who = Identity {
            id: KeyId(1),
            limits: KeyLimits::default(),
        };
        limits.charge(
            &Use {
                key: KeyId(1),
                count: u32::MAX,
                rate: 10,
                burst: 20,
            },
            who.limits,
        );
        let wait = limits
            .take(&who, Instant::now())
            .1
            .expect("the key's burst is spent");
        assert!(
            wait <= 5,
            "refused for {wait} s after one report; a replica admits at most 20 + 10 × 0.4 in one"
        );
    }

    /// A `since` replay of 100 pages, on a plan of 5 a second in bursts of 10, costs the
    /// key 100 requests, not the 10 its burst holds: its next request waits about 18 s,
    /// here and, through reports no larger than the others believe, on every replica.
    #[test]
    fn work_owed_past_the_burst_costs_in_proportion_here_and_elsewhere() {
        let limits = RateLimits::new(RequestLimits {
            rate_per_sec: 5,
            burst: 10,
            ..RequestLimits::default()
        });
        let who = Identity {
            id: KeyId(1),
            limits: KeyLimits::default(),
        };
        assert_eq!(limits.spend(&who), None, "the subscribe");
        limits.owe(&who, 100);
        let wait = limits
            .take(&who, Instant::now())
            .1
            .expect("the key owes its replay");
        assert!((18..=19).contains(&wait), "refused for {wait} s");

        let most = allowed_in_a_report((5, 10));
        let mut reported = Vec::new();
        loop {
            let used = limits.take_used();
            let Some(report) = used.first() else { break };
            reported.push(report.count);
        }
        assert!(reported.iter().all(|&n| n <= most), "{reported:?}");
        assert_eq!(reported.iter().sum::<u32>(), 101, "{reported:?}");
        let elsewhere = RateLimits::new(RequestLimits {
            rate_per_sec: 5,
            burst: 10,
            ..RequestLimits::default()
        });
        for n in reported {
            elsewhere.charge(
                &Use {
                    key: KeyId(1),
                    count: n,
                    rate: 5,
                    burst: 10,
                },
                KeyLimits::default(),
            );
        }
        let wait = elsewhere
            .take(&who, Instant::now())
            .1
            .expect("owed on the other replica too");
        assert!(wait >= 18, "refused for {wait} s on another replica");
    }

    /// A report naming keys this replica does not hold charges nothing and makes no
    /// bucket: a stream of made-up key ids cannot grow the map.
    #[test]
    fn a_report_of_unknown_keys_makes_no_bucket() {
        let limits = RateLimits::new(RequestLimits::default());
        let held = KeyId(7);
        let known = |id: KeyId| (id == held).then(KeyLimits::default);
        let uses: Vec<Use> = (0..10_000)
            .map(|i| Use {
                key: KeyId(i),
                count: 1,
                rate: 1,
                burst: 1,
            })
            .collect();
        crate::keys::usage::charge_report(limits.as_ref(), &known, &uses);
        let buckets = limits.buckets.read().expect("buckets");
        assert_eq!(
            buckets.keys().copied().collect::<Vec<_>>(),
            [held],
            "a bucket for the one key held"
        );
    }

    #[test]
    fn the_limits_report_their_use_once_and_take_in_the_others() {
        let limits = RateLimits::new(RequestLimits {
            rate_per_sec: 1,
            burst: 2,
            ..RequestLimits::default()
        });
        let who = |id| Identity {
            id: KeyId(id),
            limits: KeyLimits::default(),
        };
        assert!(limits.take(&who(1), Instant::now()).1.is_none());
        assert!(limits.take(&who(1), Instant::now()).1.is_none());
        let used = Use {
            key: KeyId(1),
            count: 2,
            rate: 1,
            burst: 2,
        };
        assert_eq!(limits.take_used(), [used]);
        assert_eq!(limits.take_used(), [], "reported once");

        // A key used elsewhere only: its bucket is made with its plan here.
        limits.charge(
            &Use {
                key: KeyId(2),
                ..used
            },
            KeyLimits::default(),
        );
        assert!(
            limits.take(&who(2), Instant::now()).1.is_some(),
            "its burst spent elsewhere"
        );
        assert!(limits.take(&who(3), Instant::now()).1.is_none());
    }
}
