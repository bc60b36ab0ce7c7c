//! The service's metrics (telemetry), at the bottom of the service so that the API and the admin
//! listener both count into them and neither depends on the other: the process's
//! Prometheus recorder, and the count and latency of every API request by route and status
//! ([`requests`]). The admin listener renders them at `/metrics`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub(crate) mod requests;

use requests::route_metrics;

/// How often the recorder's histograms are drained when nothing scrapes `/metrics`.
const METRICS_UPKEEP: Duration = Duration::from_secs(5);

/// The process's metrics recorder, installed once whatever the number of services in
/// the process (tests run several), with its upkeep running.
pub fn metrics() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let handle = recorder();
        // A histogram keeps every sample recorded until it is drained, which a scrape of
        // `/metrics` or the recorder's upkeep does; `install_recorder` runs no upkeep,
        // so a service nobody scraped kept 21 bytes for every request it answered (2 MB
        // a second under the benchmark's load). A thread of its own, so that it runs
        // whatever runtime the process has, or none.
        let upkeep = handle.clone();
        let spawned = std::thread::Builder::new()
            .name("metrics upkeep".into())
            .spawn(move || loop {
                std::thread::sleep(METRICS_UPKEEP);
                upkeep.run_upkeep();
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "the metrics upkeep thread could not start; histograms grow until scraped");
        }
        handle
    })
}

/// Every metric in Prometheus's text format: the recorder's, then the requests'
/// ([`requests`]).
pub(crate) fn render() -> String {
    metrics().render() + "\n" + &requests::render()
}

/// A recorder of the service's metrics, installed as the process's if none is.
fn recorder() -> PrometheusHandle {
    // The requests' latency buckets, for every other histogram of seconds too.
    let latency = requests::BOUNDS.map(|(_, nanos)| Duration::from_nanos(nanos).as_secs_f64());
    let builder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &latency)
        .unwrap_or_else(|_| PrometheusBuilder::new());
    match builder.install_recorder() {
        Ok(handle) => handle,
        // Another recorder is installed: keep one of ours for rendering anyway.
        Err(_) => PrometheusBuilder::new().build_recorder().handle(),
    }
}

/// Counts every API request by route and status, with its latency.
pub async fn track_requests(request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().cloned();
    let started = Instant::now();
    let response = next.run(request).await;
    let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
    route_metrics(route, response.status().as_u16()).record(started.elapsed());
    response
}

#[cfg(test)]
mod tests {
    /// The upkeep that drains the histograms runs whether or not anything scrapes them
    /// (without it, an unscraped service kept every request's latency sample).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_metrics_recorder_comes_with_its_upkeep() {
        super::metrics();
        let names = || -> Vec<String> {
            std::fs::read_dir("/proc/self/task")
                .expect("this process's threads")
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                .map(|name| name.trim_end().to_owned())
                .collect()
        };
        // A new thread takes its name once it runs: looked for a while, not once.
        let named = |names: &[String]| names.iter().any(|name| name == "metrics upkeep");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !named(&names()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let names = names();
        assert!(named(&names), "threads: {names:?}");
    }
}
