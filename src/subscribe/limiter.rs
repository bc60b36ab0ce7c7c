//! The hourly limits of the forms' posts, per client, network and address.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::response::Response;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::responses::too_many;

/// Keys in a limiter's map below which it is never pruned.
const PRUNE_FROM: usize = 10_000;

/// An hourly limit per key whose map is pruned of the keys whose limit has filled up
/// again, so a flood of distinct keys does not grow it for ever; pruned only once it has
/// doubled since the last prune, so that the walk over the map costs each post O(1)
/// amortised rather than O(n) once it is large.
pub(super) struct Limiter<K: std::hash::Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    /// The map's length past which the next post prunes it.
    prune_past: AtomicUsize,
}

impl<K: std::hash::Hash + Eq + Clone> Limiter<K> {
    /// `n` posts an hour per key, all at once if need be.
    pub(super) fn per_hour(n: u32) -> Limiter<K> {
        let n = NonZeroU32::new(n.max(1)).unwrap_or(NonZeroU32::MIN);
        Limiter::new(Quota::per_hour(n).allow_burst(n))
    }

    fn new(quota: Quota) -> Limiter<K> {
        Limiter {
            limiter: RateLimiter::keyed(quota),
            prune_past: AtomicUsize::new(PRUNE_FROM),
        }
    }

    /// Counts a post of `key`: the 429 page if its limit is spent.
    pub(super) fn check(&self, key: &K) -> Option<Response> {
        use governor::clock::{Clock, DefaultClock};
        if self.limiter.len() > self.prune_past.load(Ordering::Relaxed) {
            self.limiter.retain_recent();
            let left = self.limiter.len();
            self.prune_past
                .store(left.saturating_mul(2).max(PRUNE_FROM), Ordering::Relaxed);
        }
        self.limiter
            .check_key(key)
            .err()
            .map(|not_until| too_many(not_until.wait_time_from(DefaultClock::default().now())))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_limits_map_is_pruned_only_once_it_has_doubled() {
        let quota = Quota::with_period(Duration::from_millis(200)).expect("a period");
        let limiter = Limiter::new(quota);
        for n in 0..10_001u32 {
            let _ = limiter.limiter.check_key(&n);
        }
        // Past 10,000 keys, the first post prunes: none has filled up again yet.
        assert!(limiter.check(&u32::MAX).is_none());
        assert!(limiter.limiter.len() > 10_000);
        // A key is forgotten once its period has passed twice over.
        std::thread::sleep(Duration::from_millis(600));
        // Every key has filled up again, but the map has not doubled since: no walk.
        assert!(limiter.check(&(u32::MAX - 1)).is_none());
        assert!(
            limiter.limiter.len() > 10_000,
            "the whole map walked again: {} keys left",
            limiter.limiter.len()
        );
        // Once it has doubled, it is pruned.
        for n in 10_001..20_010u32 {
            let _ = limiter.limiter.check_key(&n);
        }
        std::thread::sleep(Duration::from_millis(600));
        assert!(limiter.check(&(u32::MAX - 2)).is_none());
        assert!(limiter.limiter.len() < 10, "{}", limiter.limiter.len());
    }
}
