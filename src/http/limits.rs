//! Limits on what a client may ask of the service: requests per key (a token bucket,
//! GCRA from `governor`), requests in flight and time per request, and the sizes of a
//! request line and its headers. The pipeline (`pipeline.rs`) applies them, in order.
//!
//! The `RateLimit` and `RateLimit-Policy` headers follow the IETF httpapi draft
//! `draft-ietf-httpapi-ratelimit-headers-08` (one policy, named "default": `q` requests per
//! `w` seconds; `r` remaining, `t` seconds until the quota is back).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::keys::replicas::Replicas;
use crate::keys::{Identity, KeyId};

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
}

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            rate_per_sec: 50,
            burst: 100,
            timeout: Duration::from_secs(10),
            max_in_flight: 1024,
        }
    }
}

type Limiter = RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>;

/// A key's token bucket, with its quota and the `RateLimit-Policy` value that describes
/// it, made once rather than on every request.
struct Bucket {
    quota: Quota,
    limiter: Limiter,
    policy: HeaderValue,
}

/// One token bucket per key, each with this replica's share of the key's own quota or
/// the default.
pub struct RateLimits {
    defaults: RequestLimits,
    replicas: Arc<Replicas>,
    buckets: RwLock<HashMap<KeyId, Bucket>>,
    clock: DefaultClock,
    in_flight: Arc<Semaphore>,
}

impl RateLimits {
    /// Limits with these defaults, each key given its share among `replicas`.
    pub fn new(defaults: RequestLimits, replicas: Arc<Replicas>) -> Arc<RateLimits> {
        Arc::new(RateLimits {
            defaults,
            replicas,
            buckets: RwLock::new(HashMap::new()),
            clock: DefaultClock::default(),
            in_flight: Arc::new(Semaphore::new(defaults.max_in_flight.max(1))),
        })
    }

    /// The key's quota here: its share of its plan. A new share (a replica joined or
    /// left) or a new plan (the key's limits changed) is a new quota, which replaces the
    /// key's bucket on its next request.
    fn quota(&self, who: &Identity) -> (Quota, u32, u32) {
        let rate = who
            .limits
            .rate_per_sec
            .unwrap_or(self.defaults.rate_per_sec);
        let rate = self.replicas.share(rate);
        let burst = who.limits.burst.unwrap_or(self.defaults.burst);
        let burst = self.replicas.share(burst);
        let quota = Quota::per_second(NonZeroU32::new(rate).unwrap_or(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
        (quota, rate, burst)
    }

    /// `f` of the key's bucket for `quota`, made first if the key has none or one of
    /// another quota. A bucket is used under the map's read lock, not cloned out of it:
    /// the clone took and dropped its limiter's reference count, a cache line every
    /// request of the key wrote to, from both cores.
    fn with_bucket<T>(
        &self,
        id: KeyId,
        quota: Quota,
        policy: impl FnOnce() -> String,
        f: impl FnOnce(&Bucket) -> T,
    ) -> T {
        {
            let buckets = self.buckets.read().unwrap_or_else(|p| p.into_inner());
            if let Some(bucket) = buckets.get(&id).filter(|b| b.quota == quota) {
                return f(bucket);
            }
        }
        let bucket = Bucket {
            quota,
            limiter: RateLimiter::direct(quota).with_middleware::<StateInformationMiddleware>(),
            policy: HeaderValue::from_str(&policy())
                .unwrap_or_else(|_| HeaderValue::from_static("\"default\"")),
        };
        let mut buckets = self.buckets.write().unwrap_or_else(|p| p.into_inner());
        f(buckets.entry(id).insert_entry(bucket).get())
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

    /// Takes a token for `who`: the headers to send either way, and, to refuse, the
    /// seconds until the next token.
    pub(super) fn take(&self, who: &Identity) -> (RateHeaders, Option<u64>) {
        let (quota, rate, burst) = self.quota(who);
        let window = burst.div_ceil(rate);
        let policy = || format!("\"default\";q={burst};w={window}");
        let (remaining, reset, refused, policy) = self.with_bucket(who.id, quota, policy, |b| {
            let (remaining, reset, refused) = match b.limiter.check() {
                Ok(state) => {
                    let remaining = state.remaining_burst_capacity();
                    let used = burst.saturating_sub(remaining);
                    (remaining, used.div_ceil(rate), None)
                }
                Err(not_until) => {
                    let wait = not_until.wait_time_from(self.clock.now());
                    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                    (0, window, Some(secs.max(1)))
                }
            };
            (remaining, reset, refused, b.policy.clone())
        });
        let limit = super::HeaderText::new()
            .text("\"default\";r=")
            .number(remaining.into())
            .text(";t=")
            .number(reset.into())
            .value();
        let headers = RateHeaders { policy, limit };
        (headers, refused)
    }
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
