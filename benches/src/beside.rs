//! A read that grows with the data beside the reads that do not: today's card under `wrk`
//! alone, and while a second `wrk` asks a busy jockey's records by condition over a span
//! of its own each time (so that no answer comes from memory), in alternating runs. The
//! records are worked out on the long reads' threads, below the card's threads, with the
//! request's deadline, so the card's p99 should stay near where it was; what both loads
//! share is the machine's cores.

use std::path::Path;

use anyhow::{ensure, Context as _};
use serde::Serialize;

use crate::feed::LogInfo;
use crate::figures::{median, thousands, verdict};
use crate::http::{wrk, Load, Sample};
use crate::scale::Scale;
use crate::service::{Service, Target, KEY_HEADER};

/// Most a card's p99 may grow beside records by condition of fresh spans: their work is
/// done on threads of lower priority, so the card waits neither for a thread nor for a
/// core they hold.
pub const BESIDE_P99_RATIO: f64 = 1.5;

/// The path whose p99 is watched.
pub const WATCHED: &str = "/api/v1/racecards/today";

/// Connections of the load of records by condition: a few clients asking for a fresh
/// span each time, beside the many that read the card.
const SPAN_CONNECTIONS: usize = 4;

/// Runs of the card alone and beside the records.
#[derive(Debug, Clone, Serialize)]
pub struct BesideResult {
    /// The records asked for, their span's start moving on with each request.
    pub analysis_path: String,
    /// The card's runs alone.
    pub alone: Vec<Sample>,
    /// The card's runs while the records are asked for.
    pub beside: Vec<Sample>,
    /// The records' runs, beside the card's.
    pub analyses: Vec<Sample>,
}

/// The part: a service on `store` (caught up), the card alone and beside the records of
/// the log's busiest jockey, `scale.http_rounds` pairs of runs.
pub async fn run(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
    work: &Path,
) -> anyhow::Result<BesideResult> {
    let service = Service::start_ready(target, store, "beside").await?;
    let analysis_path = format!("/api/v1/jockeys/{}/analysis", log.top_jockey);
    let probe = reqwest::Client::new()
        .get(service.url(&format!("{analysis_path}?from=2000-01-01")))
        .header(KEY_HEADER, &target.key)
        .send()
        .await?;
    ensure!(
        probe.status() == 200,
        "GET {analysis_path}: {}",
        probe.status()
    );
    std::fs::create_dir_all(work)?;
    let card_script = work.join("beside-card.lua");
    std::fs::write(
        &card_script,
        format!("wrk.headers[\"{KEY_HEADER}\"] = \"{}\"\n", target.key),
    )?;

    let card = |secs| Load::new(1, scale.connections, secs);
    wrk(
        &service.url(WATCHED),
        &card(scale.http_secs.min(2)),
        &card_script,
    )
    .await?;
    let mut result = BesideResult {
        analysis_path: analysis_path.clone(),
        alone: Vec::new(),
        beside: Vec::new(),
        analyses: Vec::new(),
    };
    for round in 0..scale.http_rounds {
        // Alternate which goes first, so that a drift of the machine hits each alike.
        for beside in [round % 2 == 1, round % 2 == 0] {
            let card_url = service.url(WATCHED);
            let load = card(scale.http_secs);
            if !beside {
                let sample = wrk(&card_url, &load, &card_script).await?;
                eprintln!(
                    "bench:   beside round {} card alone   p50 {:.2} ms  p99 {:.2} ms",
                    round + 1,
                    sample.p50_ms,
                    sample.p99_ms
                );
                result.alone.push(sample);
                continue;
            }
            // A script of the round's own, so that no span of an earlier round repeats.
            let spans_script = work.join(format!("beside-spans-{round}.lua"));
            std::fs::write(&spans_script, spans_lua(&target.key, &analysis_path, round))?;
            let spans = Load::new(1, SPAN_CONNECTIONS, scale.http_secs);
            let spans_url = service.url("/");
            let (sample, analyses) = tokio::try_join!(
                wrk(&card_url, &load, &card_script),
                wrk(&spans_url, &spans, &spans_script),
            )
            .context("the card beside the records")?;
            eprintln!(
                "bench:   beside round {} card beside  p50 {:.2} ms  p99 {:.2} ms  ({:.0} analyses/s, p99 {:.1} ms)",
                round + 1,
                sample.p50_ms,
                sample.p99_ms,
                analyses.rps,
                analyses.p99_ms
            );
            result.beside.push(sample);
            result.analyses.push(analyses);
        }
    }
    service.stop().await?;
    Ok(result)
}

/// A `wrk` script asking `path` with the key, a `from` date that moves on by a day at
/// each request (over some 27 years, then round again) and a `to` far ahead that is the
/// `round`'s own, so that no two requests of the part share an answer in memory: the
/// same records, a span of their own.
fn spans_lua(key: &str, path: &str, round: usize) -> String {
    let to = format!("{}-12-31", 2100 + round);
    format!(
        r#"wrk.headers["{KEY_HEADER}"] = "{key}"
local n = 0
request = function()
  n = n + 1
  local day = n % 9855
  local y = 2000 + math.floor(day / 365)
  local m = 1 + math.floor((day % 365) / 31)
  local d = 1 + (day % 365) % 31 % 28
  return wrk.format(nil, string.format("{path}?from=%04d-%02d-%02d&to={to}", y, m, d))
end
"#
    )
}

impl BesideResult {
    /// The report's row: a card's p99 with and without the records beside, and the goal.
    pub fn row(&self, judged: bool) -> [String; 7] {
        let p99 = |s: &[Sample]| median(s.iter().map(|s| s.p99_ms));
        // Each round's pair ran back to back: the median of the pairs' ratios.
        let ratio = median(
            self.beside
                .iter()
                .zip(&self.alone)
                .map(|(x, a)| x.p99_ms / a.p99_ms),
        );
        [
            format!(
                "HTTP {} beside {}?from=<a new date each time>&to=<the round's>",
                WATCHED, self.analysis_path
            ),
            format!(
                "card p99 ms with / without the records by condition beside, median of {} \
                 ({} records/s beside); ratio: median of the rounds' ratios",
                self.beside.len(),
                thousands(median(self.analyses.iter().map(|s| s.rps)))
            ),
            format!("{:.2}", p99(&self.beside)),
            format!("{:.2}", p99(&self.alone)),
            format!("{ratio:.2}"),
            format!("≤ {BESIDE_P99_RATIO:.2} × alone"),
            verdict(judged, ratio <= BESIDE_P99_RATIO).into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spans_script_asks_the_path_with_the_key() {
        let lua = spans_lua("k1", "/api/v1/jockeys/z/analysis", 3);
        assert!(lua.starts_with("wrk.headers[\"X-API-Key\"] = \"k1\""));
        assert!(lua.contains("\"/api/v1/jockeys/z/analysis?from=%04d-%02d-%02d&to=2103-12-31\""));
    }
}
