//! HTTP reads: the service against a bare axum server that answers the very same bytes
//! from a `HashMap` (each document's body and the headers the service sent with it), both
//! under `wrk` on loopback, in alternating runs; on request also against one that sends
//! the body alone, which shows what the service's headers cost on the wire.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, ensure, Context as _};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::IntoResponse;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::process::Command;

use crate::feed::LogInfo;
use crate::figures::{median, thousands, verdict};
use crate::scale::Scale;
use crate::service::{Service, Target, KEY_HEADER};

/// HTTP reads: at least this share of the bare server's requests/s.
pub const HTTP_RATIO: f64 = 0.95;
/// HTTP reads: p99 under this, ms.
pub const HTTP_P99_MS: f64 = 5.0;

/// One `wrk` run.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Requests per second.
    pub rps: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
}

/// An endpoint's runs against both servers.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointResult {
    /// Short name.
    pub name: &'static str,
    /// Path and query asked.
    pub path: String,
    /// Bytes of the answer's body.
    pub body_bytes: usize,
    /// `wrk` load threads (`-t`): one leaves the server more of the machine's two cores,
    /// so what the server does per request shows more.
    pub threads: usize,
    /// Runs against the service.
    pub service: Vec<Sample>,
    /// Runs against the bare server that sends the same bytes.
    pub bare: Vec<Sample>,
    /// Runs against the bare server that sends the body alone (`--http-body-only`; else
    /// none).
    pub body_only: Vec<Sample>,
}

impl EndpointResult {
    /// Its rows of the report's table, with `connections` per `wrk` run.
    pub fn rows(&self, judged: bool, connections: usize) -> Vec<[String; 7]> {
        let med = |s: &[Sample], f: fn(&Sample) -> f64| median(s.iter().map(f));
        let (rps_s, rps_b) = (med(&self.service, |s| s.rps), med(&self.bare, |s| s.rps));
        let (p50_s, p50_b) = (
            med(&self.service, |s| s.p50_ms),
            med(&self.bare, |s| s.p50_ms),
        );
        let (p99_s, p99_b) = (
            med(&self.service, |s| s.p99_ms),
            med(&self.bare, |s| s.p99_ms),
        );
        // Each round's pair ran back to back on the same machine: the ratio is the median
        // of the pairs' ratios, which a slow spell shared by both sides of a pair does not
        // move (the ratio of the medians mixes rounds).
        let ratio = median(
            self.service
                .iter()
                .zip(&self.bare)
                .map(|(s, b)| s.rps / b.rps),
        );
        // Rendered at each request, against stored bytes: the p99 alone is its goal.
        let (goal, met) = if is_as_of(&self.path) {
            (String::new(), String::new())
        } else {
            let met = verdict(judged, ratio >= HTTP_RATIO);
            (format!("≥ {HTTP_RATIO:.2} × bare"), met.into())
        };
        let mut rows = vec![[
            format!(
                "HTTP {} ({} B), wrk -t{}",
                self.name,
                thousands(self.body_bytes as f64),
                self.threads
            ),
            format!(
                "requests/s, median of {}; ratio: median of the rounds' ratios",
                self.service.len()
            ),
            thousands(rps_s),
            thousands(rps_b),
            format!("{ratio:.2}"),
            goal,
            met,
        ]];
        if !self.body_only.is_empty() {
            let alone = med(&self.body_only, |s| s.rps);
            let pairs = self.service.iter().zip(&self.body_only);
            let ratio = median(pairs.map(|(s, b)| s.rps / b.rps));
            rows.push([
                String::new(),
                "requests/s against a bare server sending the body alone; ratio".into(),
                thousands(rps_s),
                thousands(alone),
                format!("{ratio:.2}"),
                String::new(),
                String::new(),
            ]);
        }
        rows.push([
            String::new(),
            format!("p50 / p99 ms, {connections} connections"),
            format!("{p50_s:.2} / {p99_s:.2}"),
            format!("{p50_b:.2} / {p99_b:.2}"),
            format!("{:.2}", p99_s / p99_b),
            format!("p99 < {HTTP_P99_MS} ms"),
            verdict(judged, p99_s < HTTP_P99_MS).into(),
        ]);
        rows
    }
}

/// What the bare server answers a path with: the body and the headers the service sent
/// (its request id and RateLimit values as they were in that answer), less those hyper
/// writes itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The body.
    pub body: String,
    /// Each header's name and value, in the service's order.
    pub headers: Vec<(String, String)>,
}

impl Answer {
    /// The answer `r` is, once its body is read.
    async fn of(r: reqwest::Response) -> anyhow::Result<Answer> {
        let headers = r
            .headers()
            .iter()
            .filter(|(name, _)| !WRITTEN_BY_HYPER.contains(name))
            .map(|(name, value)| Ok((name.as_str().to_owned(), value.to_str()?.to_owned())))
            .collect::<anyhow::Result<_>>()?;
        Ok(Answer {
            body: r.text().await?,
            headers,
        })
    }
}

/// Headers hyper writes to every answer, the bare server's too.
const WRITTEN_BY_HYPER: [HeaderName; 3] = [
    header::CONTENT_LENGTH,
    header::DATE,
    header::TRANSFER_ENCODING,
];

/// The bare server's two kinds of answer: the same bytes as the service's, or the body
/// alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bare {
    SameBytes,
    BodyOnly,
}

/// Runs the HTTP part against a service on `store` (caught up).
pub async fn run(
    scale: &Scale,
    target: &Target,
    store: &Path,
    log: &LogInfo,
    work: &Path,
) -> anyhow::Result<Vec<EndpointResult>> {
    let client = reqwest::Client::new();
    let service = Service::start_ready(target, store, "http").await?;
    let mut endpoints: Vec<(&'static str, String)> = vec![
        ("profile", format!("/api/v1/horses/{}", log.top_horse)),
        ("form", format!("/api/v1/horses/{}/form", log.top_horse)),
        ("results", format!("/api/v1/results/{}", log.meeting_date)),
        ("card today", "/api/v1/racecards/today".to_owned()),
        ("odds", format!("/api/v1/odds/{}/1", log.meeting_date)),
        ("jockey", format!("/api/v1/jockeys/{}", log.top_jockey)),
        (
            "horse analysis",
            format!("/api/v1/horses/{}/analysis", log.top_horse),
        ),
        (
            "jockey analysis",
            format!("/api/v1/jockeys/{}/analysis", log.top_jockey),
        ),
    ];
    endpoints.extend(as_of_endpoints(&client, &service, target, log).await?);
    if !scale.http_rows.is_empty() {
        let names: Vec<&str> = endpoints.iter().map(|(name, _)| *name).collect();
        for row in &scale.http_rows {
            ensure!(
                names.contains(&row.as_str()),
                "--http-row {row:?}: rows are {names:?}"
            );
        }
        endpoints.retain(|(name, _)| scale.http_rows.iter().any(|row| row == name));
    }
    // The answers the service sends, to be sent by the bare server.
    let mut docs = BTreeMap::new();
    for (_, path) in &endpoints {
        let r = client
            .get(service.url(path))
            .header(KEY_HEADER, &target.key)
            .send()
            .await?;
        ensure!(r.status() == 200, "GET {path}: {}", r.status());
        docs.insert(path.clone(), Answer::of(r).await?);
    }
    std::fs::create_dir_all(work)?;
    let docs_file = work.join("docs.json");
    std::fs::write(&docs_file, serde_json::to_vec(&docs)?)?;
    let script = work.join("key.lua");
    // The same request to both servers: the bare one ignores the key.
    std::fs::write(
        &script,
        format!("wrk.headers[\"{KEY_HEADER}\"] = \"{}\"\n", target.key),
    )?;

    let mut bares = vec![(Bare::SameBytes, start_bare(&docs_file, Bare::SameBytes)?)];
    if scale.http_body_only {
        bares.push((Bare::BodyOnly, start_bare(&docs_file, Bare::BodyOnly)?));
    }
    for (kind, bare) in &bares {
        for (path, sent) in &docs {
            let got = bare.answer(&client, path).await?;
            let expected = match kind {
                Bare::SameBytes => sent.clone(),
                Bare::BodyOnly => body_only(sent),
            };
            ensure!(
                got == expected,
                "the bare server ({kind:?}) answers otherwise for {path}: {got:?}"
            );
        }
    }

    let mut results: Vec<EndpointResult> = scale
        .http_load_threads
        .iter()
        .flat_map(|&threads| {
            endpoints
                .iter()
                .map(move |(name, path)| (threads, *name, path))
        })
        .map(|(threads, name, path)| EndpointResult {
            name,
            path: path.clone(),
            body_bytes: docs.get(path).map_or(0, |a| a.body.len()),
            threads,
            service: Vec::new(),
            bare: Vec::new(),
            body_only: Vec::new(),
        })
        .collect();
    // Every row runs against the service as deployed, which keeps answers as of a point
    // in memory (the rows `... again` ask one again and again), but those of answers as
    // of a point rendered at each ask, as at a first: against a service that keeps none.
    let (rendered, rest): (Vec<_>, Vec<_>) = results.iter_mut().partition(|r| renders(r));
    let measured = Measured {
        scale,
        bares: &bares,
        script: &script,
    };
    measured.rows(&service, rest).await?;
    service.stop().await?;
    if rendered.is_empty() {
        return Ok(results);
    }
    let mut rendering = target.clone();
    rendering.settings.push((AS_OF_CACHE.into(), "0".into()));
    let service = Service::start_ready(&rendering, store, "http-as-of").await?;
    measured.rows(&service, rendered).await?;
    service.stop().await?;
    Ok(results)
}

/// The setting of the service's memory of answers as of a point (MiB).
const AS_OF_CACHE: &str = "RACING_AS_OF_CACHE_MIB";

/// What the name of a row that asks an `as_of` point its service keeps in memory ends
/// with: asked again and again, it is sent from there.
const AGAIN: &str = " again";

/// Whether `r` measures answers as of a point rendered at each request: by a service
/// that keeps none in memory.
fn renders(r: &EndpointResult) -> bool {
    is_as_of(&r.path) && !r.name.ends_with(AGAIN)
}

/// How the rows of the part are measured: against the bare servers, with the key's
/// script.
struct Measured<'a> {
    scale: &'a Scale,
    bares: &'a [(Bare, BareServer)],
    script: &'a Path,
}

impl Measured<'_> {
    /// Warms `service` and the bare servers up on the paths of `rows`, then measures each
    /// row, round after round.
    async fn rows(
        &self,
        service: &Service,
        mut rows: Vec<&mut EndpointResult>,
    ) -> anyhow::Result<()> {
        let (scale, bares, script) = (self.scale, self.bares, self.script);
        let warm = scale.http_warm_secs.min(scale.http_secs);
        let paths: BTreeSet<&str> = rows.iter().map(|r| r.path.as_str()).collect();
        for path in paths.iter().filter(|_| warm > 0) {
            let load = Load {
                patient: is_as_of(path),
                ..Load::new(2, scale.connections, warm)
            };
            wrk(&service.url(path), &load, script).await?;
            for (_, bare) in bares {
                wrk(&bare.url(path), &load, script).await?;
            }
        }
        for round in 0..scale.http_rounds {
            for r in rows.iter_mut() {
                // The service (`None`), then each bare server; alternate which goes first, so
                // that a drift of the machine hits each alike.
                let mut order: Vec<Option<&(Bare, BareServer)>> = std::iter::once(None)
                    .chain(bares.iter().map(Some))
                    .collect();
                if round % 2 == 1 {
                    order.reverse();
                }
                for side in order {
                    let url = side.map_or_else(|| service.url(&r.path), |(_, b)| b.url(&r.path));
                    let side = side.map(|(kind, _)| *kind);
                    let load = Load {
                        patient: is_as_of(&r.path),
                        ..Load::new(r.threads, scale.connections, scale.http_secs)
                    };
                    let sample = wrk(&url, &load, script).await?;
                    eprintln!(
                        "bench:   http {:<10} -t{} round {} {:<9} {:>9.0} req/s  p50 {:.2} ms  p99 {:.2} ms",
                        r.name,
                        r.threads,
                        round + 1,
                        match side {
                            None => "service",
                            Some(Bare::SameBytes) => "bare",
                            Some(Bare::BodyOnly) => "body only",
                        },
                        sample.rps,
                        sample.p50_ms,
                        sample.p99_ms
                    );
                    match side {
                        None => r.service.push(sample),
                        Some(Bare::SameBytes) => r.bare.push(sample),
                        Some(Bare::BodyOnly) => r.body_only.push(sample),
                    }
                }
            }
        }
        Ok(())
    }
}

/// The documents of every kind that is served `as_of` a point of the log, each at a
/// point inside it: those of the meeting's date (its results, card and first race's
/// odds) once its first race's result was in (that result's `Racing-Seq`), those of the
/// top horse and jockey halfway through the log; and two of them asked again.
async fn as_of_endpoints(
    client: &reqwest::Client,
    service: &Service,
    target: &Target,
    log: &LogInfo,
) -> anyhow::Result<Vec<(&'static str, String)>> {
    let first = format!("/api/v1/results/{}/1", log.meeting_date);
    let r = client
        .get(service.url(&first))
        .header(KEY_HEADER, &target.key)
        .send()
        .await?;
    ensure!(r.status() == 200, "GET {first}: {}", r.status());
    let resulted: u64 = r
        .headers()
        .get("racing-seq")
        .context("no Racing-Seq")?
        .to_str()?
        .parse()?;
    let halfway = (log.events / 2).max(1);
    let (date, horse, jockey) = (&log.meeting_date, &log.top_horse, &log.top_jockey);
    Ok(vec![
        (
            "profile as_of",
            format!("/api/v1/horses/{horse}?as_of={halfway}"),
        ),
        (
            "form as_of",
            format!("/api/v1/horses/{horse}/form?as_of={halfway}"),
        ),
        (
            "results as_of",
            format!("/api/v1/results/{date}?as_of={resulted}"),
        ),
        (
            "card as_of",
            format!("/api/v1/racecards/{date}?as_of={resulted}"),
        ),
        (
            "odds as_of",
            format!("/api/v1/odds/{date}/1?as_of={resulted}"),
        ),
        (
            "horse analysis as_of",
            format!("/api/v1/horses/{horse}/analysis?as_of={halfway}"),
        ),
        (
            "jockey analysis as_of",
            format!("/api/v1/jockeys/{jockey}/analysis?as_of={halfway}"),
        ),
        // The largest and the slowest to render, asked again.
        (
            "card as_of again",
            format!("/api/v1/racecards/{date}?as_of={resulted}"),
        ),
        (
            "jockey analysis as_of again",
            format!("/api/v1/jockeys/{jockey}/analysis?as_of={halfway}"),
        ),
    ])
}

/// Whether `path` asks for a document as of a point of the log (`?as_of=`), which the
/// service renders from the versions of its records when first asked: its row's goal is
/// the p99 alone, its ratio to a server sending stored bytes shows what rendering costs
/// (or, asked again, sending it from memory).
fn is_as_of(path: &str) -> bool {
    path.contains("as_of=")
}

/// The load of one `wrk` run.
pub(crate) struct Load {
    pub(crate) threads: usize,
    pub(crate) connections: usize,
    pub(crate) secs: u64,
    /// Whether an answer however late counts, where it comes within the run: a read
    /// rendered at each request (`as_of`) may be slower than `wrk`'s 5 s under the load,
    /// and its row then shows that latency rather than ending the benchmark.
    pub(crate) patient: bool,
}

impl Load {
    /// `threads` sending on `connections` for `secs`, not patient.
    pub(crate) fn new(threads: usize, connections: usize, secs: u64) -> Load {
        Load {
            threads,
            connections,
            secs,
            patient: false,
        }
    }
}

/// `wrk` putting `load` on `url` with the Lua `script` (the key header, and which
/// paths), a request taking longer than `timeout` counted as an error, latency
/// percentiles on.
pub(crate) fn wrk_command(load: &Load, timeout: Duration, script: &Path, url: &str) -> Command {
    let mut command = Command::new("wrk");
    command
        .args([
            format!("-t{}", load.threads),
            format!("-c{}", load.connections),
            format!("-d{}s", load.secs),
            "--timeout".to_owned(),
            format!("{}s", timeout.as_secs().max(1)),
            "--latency".to_owned(),
            "-s".to_owned(),
        ])
        .arg(script)
        .arg(url)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    command
}

/// A line of wrk's output that says the run measured something else than 2xx answers
/// on working sockets, as an error; `None` for any other line.
pub(crate) fn wrk_failure(line: &str) -> Option<anyhow::Error> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("Non-2xx"), _) => Some(anyhow::anyhow!("answers other than 2xx: {line}")),
        (Some("Socket"), Some("errors:")) => Some(anyhow::anyhow!("{line}")),
        _ => None,
    }
}

/// One `wrk` run: `load`, the key header from `script`, latency percentiles on. Any
/// non-2xx answer or socket error (an answer later than 5 s among them, unless the load
/// is patient) fails the benchmark: it would measure something else.
pub(crate) async fn wrk(url: &str, load: &Load, script: &Path) -> anyhow::Result<Sample> {
    let timeout = if load.patient {
        Duration::from_secs(load.secs + 60)
    } else {
        Duration::from_secs(5)
    };
    let out = wrk_command(load, timeout, script, url)
        .output()
        .await
        .context("running wrk (apt-get install wrk)")?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(out.status.success(), "wrk {url}: {}\n{text}", out.status);
    parse_wrk(&text).with_context(|| format!("wrk {url}:\n{text}"))
}

fn parse_wrk(text: &str) -> anyhow::Result<Sample> {
    let mut rps = None;
    let mut p50 = None;
    let mut p99 = None;
    for line in text.lines().map(str::trim) {
        if let Some(failure) = wrk_failure(line) {
            return Err(failure);
        }
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("Requests/sec:"), Some(v)) => rps = Some(v.parse::<f64>()?),
            (Some("50%"), Some(v)) => p50 = Some(duration_ms(v)?),
            (Some("99%"), Some(v)) => p99 = Some(duration_ms(v)?),
            _ => {}
        }
    }
    Ok(Sample {
        rps: rps.context("no Requests/sec")?,
        p50_ms: p50.context("no 50% latency")?,
        p99_ms: p99.context("no 99% latency")?,
    })
}

/// A wrk duration (`812.00us`, `1.23ms`, `2.01s`, `1.00m`) in milliseconds.
fn duration_ms(v: &str) -> anyhow::Result<f64> {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .context("a duration without unit")?;
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse()?;
    Ok(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        "h" => n * 3_600_000.0,
        other => bail!("unknown unit {other}"),
    })
}

/// `sent` as the bare server answers it when it sends the body alone: its content type,
/// no other header.
fn body_only(sent: &Answer) -> Answer {
    Answer {
        body: sent.body.clone(),
        headers: vec![("content-type".to_owned(), "application/json".to_owned())],
    }
}

/// A bare server running, as a process of its own.
struct BareServer {
    port: u16,
    _process: tokio::process::Child,
}

impl BareServer {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Its answer to `path`, once it listens.
    async fn answer(&self, client: &reqwest::Client, path: &str) -> anyhow::Result<Answer> {
        let mut tries = 0;
        loop {
            match client.get(self.url(path)).send().await {
                Ok(r) => return Answer::of(r).await,
                Err(_) if tries < 250 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(e).context("the bare server does not answer"),
            }
        }
    }
}

/// Starts `racing-bench bare` on the answers of `docs`, of `kind`.
fn start_bare(docs: &Path, kind: Bare) -> anyhow::Result<BareServer> {
    let port = racing::nats::free_port()?;
    let mut command = Command::new(std::env::current_exe()?);
    command
        .args(["bare", "--listen", &format!("127.0.0.1:{port}"), "--docs"])
        .arg(docs);
    if kind == Bare::BodyOnly {
        command.arg("--body-only");
    }
    let process = command.stdin(Stdio::null()).kill_on_drop(true).spawn()?;
    Ok(BareServer {
        port,
        _process: process,
    })
}

/// The baseline: a minimal axum server answering each path (and query) of `docs` (a JSON
/// map to [`Answer`]s) with its bytes: the body and its headers, or with `body_only` the
/// body as `application/json` alone; 404 for anything else. The same runtime as the
/// service's (tokio's default, one worker per core).
pub fn bare(listen: SocketAddr, docs: PathBuf, body_only: bool) -> anyhow::Result<()> {
    let docs: HashMap<String, Answer> = serde_json::from_slice(&std::fs::read(&docs)?)?;
    let mut answers = HashMap::new();
    for (path, answer) in docs {
        let answer = if body_only {
            self::body_only(&answer)
        } else {
            answer
        };
        let mut headers = HeaderMap::new();
        for (name, value) in &answer.headers {
            headers.append(
                HeaderName::from_bytes(name.as_bytes())?,
                HeaderValue::from_str(value)?,
            );
        }
        answers.insert(path, (headers, Bytes::from(answer.body)));
    }
    let answers: Arc<HashMap<String, (HeaderMap, Bytes)>> = Arc::new(answers);
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let answers = answers.clone();
            async move {
                let key = uri.path_and_query().map_or("/", |p| p.as_str());
                match answers.get(key) {
                    Some((headers, body)) => (headers.clone(), body.clone()).into_response(),
                    None => StatusCode::NOT_FOUND.into_response(),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind(listen).await?;
        axum::serve(listener, app).await?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrk_output_is_read() {
        let text = "Running 5s test @ http://127.0.0.1:1/\n  2 threads and 64 connections\n  Latency Distribution\n     50%  812.00us\n     75%    1.20ms\n     90%    2.00ms\n     99%    4.51ms\n  123 requests in 5.00s, 1.00MB read\nRequests/sec:  24691.20\nTransfer/sec:    246.91MB\n";
        let s = parse_wrk(text).expect("parsed");
        assert_eq!(s.rps, 24691.2);
        assert!((s.p50_ms - 0.812).abs() < 1e-9);
        assert!((s.p99_ms - 4.51).abs() < 1e-9);
        assert!(parse_wrk(&format!("{text}  Non-2xx or 3xx responses: 3\n")).is_err());
    }
}
