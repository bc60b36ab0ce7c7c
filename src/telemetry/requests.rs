//! The count of every API request, by route and status, and each route's latency
//! histogram: `racing_http_requests_total` and `racing_http_request_duration_seconds` of
//! `/metrics`.
//!
//! Counted here rather than by the Prometheus recorder because they are counted on every
//! request: the recorder's histogram stores each sample with its own clock reading in a
//! queue every core appends to, and its counters bump a shared generation as well, so a
//! request paid a clock read and four atomic writes to lines the other cores wrote too
//! (2.3% of the service's CPU serving a small document). Here each count is split into
//! shards, one cache line or two each, and a thread adds to its own: a request costs two
//! uncontended additions and no clock read beyond the one that times it. A scrape sums
//! the shards.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{OnceLock, PoisonError, RwLock};
use std::time::Duration;

/// The latency histogram's upper bounds: as Prometheus writes them, and in nanoseconds.
/// The recorder's histograms of seconds have the same.
pub(super) const BOUNDS: [(&str, u64); 10] = [
    ("0.0005", 500_000),
    ("0.001", 1_000_000),
    ("0.0025", 2_500_000),
    ("0.005", 5_000_000),
    ("0.01", 10_000_000),
    ("0.025", 25_000_000),
    ("0.05", 50_000_000),
    ("0.1", 100_000_000),
    ("0.25", 250_000_000),
    ("1", 1_000_000_000),
];

/// A latency's cells: one a bucket (non-cumulative), one past the last bound, and the
/// sum of the nanoseconds.
const CELLS: usize = BOUNDS.len() + 2;

/// Shards a count is split into: more than the threads that serve requests on most
/// machines, so that each writes its own.
const SHARDS: usize = 16;

/// `N` counts, split into [`SHARDS`] shards that each thread adds to its own of.
struct Sharded<const N: usize> {
    shards: [Shard<N>; SHARDS],
}

/// One shard, aligned so that no two share a cache line (128 bytes: adjacent lines are
/// fetched in pairs).
#[repr(align(128))]
struct Shard<const N: usize>([AtomicU64; N]);

impl<const N: usize> Sharded<N> {
    fn new() -> Self {
        Sharded {
            shards: std::array::from_fn(|_| Shard(std::array::from_fn(|_| AtomicU64::new(0)))),
        }
    }

    /// Adds `n` to count `i`, in this thread's shard.
    fn add(&self, i: usize, n: u64) {
        if let Some(cell) = self.shards[shard()].0.get(i) {
            cell.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Every count, the shards summed.
    fn totals(&self) -> [u64; N] {
        let mut totals = [0u64; N];
        for shard in &self.shards {
            for (total, cell) in totals.iter_mut().zip(&shard.0) {
                *total = total.wrapping_add(cell.load(Ordering::Relaxed));
            }
        }
        totals
    }
}

/// This thread's shard: threads take the shards in turn as they first count.
fn shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

/// A route's latency histogram.
struct Latency(Sharded<CELLS>);

impl Latency {
    fn record(&self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let bucket = BOUNDS
            .iter()
            .position(|&(_, bound)| nanos <= bound)
            .unwrap_or(BOUNDS.len());
        self.0.add(bucket, 1);
        self.0.add(CELLS - 1, nanos);
    }
}

/// The counts of one route and status, and the route's latency: what a request adds to.
#[derive(Clone, Copy)]
pub(crate) struct RouteMetrics {
    requests: &'static Sharded<1>,
    latency: &'static Latency,
}

impl RouteMetrics {
    /// Counts one request that took `elapsed`.
    pub(crate) fn record(self, elapsed: Duration) {
        self.count();
        self.latency.record(elapsed);
    }

    /// Counts one request, untimed.
    pub(crate) fn count(self) {
        self.requests.add(0, 1);
    }
}

/// Every route's latency and counts by status. Kept for the process's life: the routes
/// are the table's templates and `unmatched`, the statuses those the service answers
/// with, so there are a few hundred at most.
#[derive(Default)]
struct Routes(BTreeMap<String, (&'static Latency, BTreeMap<u16, &'static Sharded<1>>)>);

fn routes() -> &'static RwLock<Routes> {
    static ROUTES: OnceLock<RwLock<Routes>> = OnceLock::new();
    ROUTES.get_or_init(RwLock::default)
}

/// The counts of `route` and `status`, made the first time they are asked for.
pub(crate) fn route_metrics(route: &str, status: u16) -> RouteMetrics {
    let found = routes()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .0
        .get(route)
        .and_then(|(latency, by_status)| {
            by_status
                .get(&status)
                .map(|requests| RouteMetrics { requests, latency })
        });
    if let Some(found) = found {
        return found;
    }
    let mut routes = routes().write().unwrap_or_else(PoisonError::into_inner);
    let (latency, by_status) = routes.0.entry(route.to_owned()).or_insert_with(|| {
        (
            Box::leak(Box::new(Latency(Sharded::new()))),
            BTreeMap::new(),
        )
    });
    let requests = by_status
        .entry(status)
        .or_insert_with(|| Box::leak(Box::new(Sharded::new())));
    RouteMetrics { requests, latency }
}

/// The two families in Prometheus's text format, to follow the recorder's.
pub(crate) fn render() -> String {
    let routes = routes().read().unwrap_or_else(PoisonError::into_inner);
    let mut out = String::new();
    let name = "racing_http_requests_total";
    let _ = writeln!(out, "# TYPE {name} counter");
    for (route, (_, by_status)) in &routes.0 {
        let route = escaped(route);
        for (status, requests) in by_status {
            let [n] = requests.totals();
            let _ = writeln!(out, "{name}{{route=\"{route}\",status=\"{status}\"}} {n}");
        }
    }
    let name = "racing_http_request_duration_seconds";
    let _ = writeln!(out, "\n# TYPE {name} histogram");
    for (route, (latency, _)) in &routes.0 {
        let route = escaped(route);
        let cells = latency.0.totals();
        let mut count = 0u64;
        for (&(le, _), n) in BOUNDS.iter().zip(&cells) {
            count += n;
            let _ = writeln!(
                out,
                "{name}_bucket{{route=\"{route}\",le=\"{le}\"}} {count}"
            );
        }
        count += cells[BOUNDS.len()];
        let sum = Duration::from_nanos(cells[CELLS - 1]).as_secs_f64();
        let _ = writeln!(
            out,
            "{name}_bucket{{route=\"{route}\",le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(out, "{name}_sum{{route=\"{route}\"}} {sum}");
        let _ = writeln!(out, "{name}_count{{route=\"{route}\"}} {count}");
    }
    out
}

/// A label value as the text format writes it: `\`, `"` and a line break escaped.
fn escaped(value: &str) -> String {
    value
        .replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of `family{labels}` in `text`.
    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
    }

    #[test]
    fn requests_are_counted_by_status_and_timed_by_route_from_every_thread() {
        let route = "/test/requests/{id}";
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..250u64 {
                        let status = if i % 5 == 0 { 404 } else { 200 };
                        // 0.2, 0.7, 3 and 2000 ms: one in each of four buckets.
                        let elapsed = [200_000, 700_000, 3_000_000, 2_000_000_000][t as usize];
                        route_metrics(route, status).record(Duration::from_nanos(elapsed + i));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("a counting thread");
        }
        let text = render();
        let at = |series: &str| value(&text, series).unwrap_or_else(|| panic!("{series}"));
        let r = r#"route="/test/requests/{id}""#;
        assert_eq!(
            at(&format!("racing_http_requests_total{{{r},status=\"200\"}}")),
            800.0
        );
        assert_eq!(
            at(&format!("racing_http_requests_total{{{r},status=\"404\"}}")),
            200.0
        );
        let bucket = |le: &str| {
            at(&format!(
                "racing_http_request_duration_seconds_bucket{{{r},le=\"{le}\"}}"
            ))
        };
        // Cumulative, each bound counting what is at or under it.
        assert_eq!(bucket("0.0005"), 250.0);
        assert_eq!(bucket("0.001"), 500.0);
        assert_eq!(bucket("0.0025"), 500.0);
        assert_eq!(bucket("0.005"), 750.0);
        assert_eq!(bucket("1"), 750.0);
        assert_eq!(bucket("+Inf"), 1000.0);
        assert_eq!(
            at(&format!(
                "racing_http_request_duration_seconds_count{{{r}}}"
            )),
            1000.0
        );
        let nanos: u64 = (0..4)
            .map(|t| {
                let base = [200_000u64, 700_000, 3_000_000, 2_000_000_000][t];
                (0..250u64).map(|i| base + i).sum::<u64>()
            })
            .sum();
        let sum = at(&format!("racing_http_request_duration_seconds_sum{{{r}}}"));
        assert!((sum - nanos as f64 / 1e9).abs() < 1e-9, "{sum}");
    }

    #[test]
    fn a_label_value_is_escaped() {
        assert_eq!(escaped("a\"b\\c\nd"), r#"a\"b\\c\nd"#);
    }
}
