//! The examples of README and of the guides in docs/, run as a reader runs them: `racing
//! serve --demo` started as the quick start starts it, but with its ports moved (port 4222
//! of its NATS taken), the variables its banner's `shell:` line sets, and each example of
//! every block that follows the examples' marker requested with them, each `racing`
//! command run in a shell that exported them; what README's quick start says the scripts
//! install, against the scripts; and the plans the API reference lists, against the
//! service's.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use reqwest::StatusCode;
use tempfile::TempDir;

use crate::reliability::process::Service;

/// The line above each block of examples in README.md and docs/.
const MARKER: &str = "<!-- examples: each is run by tests/examples.rs -->";

/// How long the demo may take to publish and fold its season before it prints its banner.
const START: Duration = Duration::from_secs(120);

/// How long one example may take (a replay plays a race's recorded moves at its speed).
const EXAMPLE: Duration = Duration::from_secs(30);

/// The command lines of every fenced block that follows `MARKER` in `text`, with line
/// numbers; blank and comment lines left out.
fn examples(text: &str) -> Vec<(usize, String)> {
    let mut lines = text.lines().enumerate();
    let mut all = Vec::new();
    while lines.by_ref().any(|(_, l)| l.trim() == MARKER) {
        let fence = lines.next().map(|(_, l)| l.trim());
        assert!(
            fence.is_some_and(|l| l.starts_with("```")),
            "a fenced block right after the marker, not {fence:?}"
        );
        let block: Vec<(usize, String)> = lines
            .by_ref()
            .take_while(|(_, l)| !l.trim_start().starts_with("```"))
            .map(|(i, l)| (i + 1, l.trim().to_owned()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert!(!block.is_empty(), "an examples' block is empty");
        all.extend(block);
    }
    all
}

/// The status an example expects: the one its comment starts with (`# 404 ...`), or 200.
fn expected(line: &str) -> StatusCode {
    line.split_once(" # ")
        .and_then(|(_, comment)| comment.trim().get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .and_then(|code| StatusCode::from_u16(code).ok())
        .unwrap_or(StatusCode::OK)
}

/// Every file whose examples the demo test runs, each with its text: README.md, then the
/// guides of docs/ in name order.
fn documents() -> Vec<(String, String)> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut guides: Vec<_> = std::fs::read_dir(format!("{root}/docs"))
        .expect("docs/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    guides.sort();
    std::iter::once(std::path::PathBuf::from(format!("{root}/README.md")))
        .chain(guides)
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a document");
            let name = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            (name, text)
        })
        .collect()
}

/// A reader's `PATH` before the banner's line: the system's directories, none of this
/// project's.
const READERS_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The variables `export A=x B=y` sets, read as a shell reads them, in a shell whose
/// `PATH` is [`READERS_PATH`].
fn exported(line: &str) -> BTreeMap<String, String> {
    let export = line
        .trim()
        .strip_prefix("shell:")
        .unwrap_or_else(|| panic!("not a `shell:` line: {line}"));
    let before = BTreeMap::from([("PATH".to_owned(), READERS_PATH.to_owned())]);
    let words = words(export, &before);
    assert_eq!(
        words.first().map(String::as_str),
        Some("export"),
        "not a `shell: export` line: {line}"
    );
    words[1..]
        .iter()
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .unwrap_or_else(|| panic!("`{pair}` is not NAME=VALUE"));
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

/// Where a shell finds `program` on `path`: the first directory that has it.
fn on_path(program: &str, path: &str) -> Option<std::path::PathBuf> {
    path.split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .find(|candidate| candidate.is_file())
}

/// The words of a command line as a POSIX shell splits them: quotes (single ones keep
/// `$` as it is), a backslash outside them taking the next character as it is, `$NAME`
/// replaced by `vars`' value, and a `#` that starts a word ending the line. A variable the
/// banner does not set fails the test.
pub(crate) fn words(line: &str, vars: &BTreeMap<String, String>) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, '#') if word.is_none() => break,
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (Some(q), c) if c == q => quote = None,
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_default().push(next);
                }
            }
            (None | Some('"'), '$') => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if !(n.is_ascii_alphanumeric() || n == '_') {
                        break;
                    }
                    name.push(n);
                    chars.next();
                }
                let value = vars
                    .get(&name)
                    .unwrap_or_else(|| panic!("`${name}` in `{line}`: the banner sets no {name}"));
                word.get_or_insert_default().push_str(value);
            }
            (_, c) => word.get_or_insert_default().push(c),
        }
    }
    assert!(quote.is_none(), "an unclosed quote in `{line}`");
    words.extend(word);
    words
}

/// Requests a `curl -H 'Name: value' ... URL` example; its status and body.
async fn curl(client: &reqwest::Client, args: &[String]) -> (StatusCode, String) {
    let mut request: Option<reqwest::RequestBuilder> = None;
    let mut headers = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-H" => {
                let header = args.next().expect("a header after -H");
                let (name, value) = header.split_once(':').expect("`Name: value`");
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            url if url.starts_with("http://") => request = Some(client.get(url)),
            other => panic!("an example's curl takes -H and a URL only, not `{other}`"),
        }
    }
    let mut request = request.expect("a URL");
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let res = tokio::time::timeout(EXAMPLE, request.send())
        .await
        .expect("an answer in time")
        .expect("the service answers");
    (res.status(), res.text().await.expect("a body"))
}

/// Runs a `racing ...` example as a shell that exported `vars` runs it (the program found
/// on their `PATH`, every one of them in its environment and no other of the service's
/// settings); its standard output. The program it finds must be the one the tests built.
async fn racing(args: &[String], vars: &BTreeMap<String, String>) -> String {
    let path = vars.get("PATH").map_or(READERS_PATH, String::as_str);
    let found = on_path("racing", path)
        .unwrap_or_else(|| panic!("racing: command not found on the banner's PATH {path}"));
    let built = std::fs::canonicalize(env!("CARGO_BIN_EXE_racing")).expect("the binary");
    assert_eq!(
        std::fs::canonicalize(&found).ok(),
        Some(built),
        "the banner's PATH finds another racing first"
    );
    let mut command = tokio::process::Command::new(found);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("RACING_") {
            command.env_remove(name);
        }
    }
    let run = command
        .args(args)
        .envs(vars)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(EXAMPLE, run)
        .await
        .unwrap_or_else(|_| panic!("racing {args:?} did not end within {EXAMPLE:?}"))
        .expect("racing runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "racing {args:?}: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test]
async fn every_example_of_readme_and_the_guides_answers_from_the_demo_with_the_banner_s_variables()
{
    let documents = documents();
    assert!(
        !examples(&documents[0].1).is_empty(),
        "README.md has examples"
    );
    let work = TempDir::new().expect("temp dir");
    // NATS's own port taken, as another server on the machine would take it: the
    // service's nats-server listens elsewhere, and the commands still find it. (Held only
    // where it is free: a port another holds is taken as well.)
    let held = std::net::TcpListener::bind(("127.0.0.1", 4222)).ok();
    // Its API and admin listener on ports the system picks, not 8080 and 9090.
    let mut service = Service::spawn_with(
        None,
        &work.path().join("data"),
        &work.path().join("racing.log"),
        &[("RACING_DEMO", "true")],
    );
    let banner = service.printed_until("shell:", START).await;
    drop(held);
    let nats = banner
        .iter()
        .find_map(|l| l.trim().strip_prefix("NATS:"))
        .map(str::trim)
        .expect("a NATS line");
    assert_ne!(nats, "nats://127.0.0.1:4222", "4222 is taken");
    let vars = exported(banner.last().expect("the shell line"));
    for name in [
        "PATH",
        "KEY",
        "URL",
        "DAY",
        "RACE",
        "HORSE",
        "SEQ",
        "RACING_URL",
        "RACING_ADMIN_URL",
        "RACING_DATA_DIR",
        "RACING_API_KEY",
    ] {
        assert!(
            vars.contains_key(name),
            "the banner sets no {name}: {vars:?}"
        );
    }

    // The banner's own `try:` lines: its curls answer, and its watch line names this
    // very program.
    let tried: Vec<&String> = banner
        .iter()
        .skip_while(|l| !l.trim_start().starts_with("try:"))
        .take_while(|l| !l.trim_start().starts_with("shell:"))
        .collect();
    let program = std::fs::canonicalize(env!("CARGO_BIN_EXE_racing")).expect("the binary");
    let watch = format!("{} watch --url {} --key ", program.display(), vars["URL"]);
    assert!(
        tried.iter().any(|l| l.trim().starts_with(&watch)),
        "`{watch}` under try:\n{}",
        banner.join("\n")
    );
    let client = reqwest::Client::new();
    for line in &tried {
        let line = line.trim().trim_start_matches("try:").trim();
        if line.starts_with("curl ") {
            let (status, body) = curl(&client, &words(line, &vars)[1..]).await;
            assert_eq!(status, StatusCode::OK, "the banner's `{line}`: {body}");
        }
    }

    let examples = documents.iter().flat_map(|(name, text)| {
        examples(text)
            .into_iter()
            .map(move |(number, line)| (name, number, line))
    });
    for (name, number, line) in examples {
        let args = words(&line, &vars);
        let what = format!("{name} line {number}, `{line}`");
        match args.first().map(String::as_str) {
            Some("curl") => {
                let (mut status, mut body) = curl(&client, &args[1..]).await;
                // What an example published a moment before is served once the service
                // has applied it.
                let applied = tokio::time::Instant::now() + Duration::from_secs(10);
                while status == StatusCode::NOT_FOUND
                    && status != expected(&line)
                    && tokio::time::Instant::now() < applied
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    (status, body) = curl(&client, &args[1..]).await;
                }
                assert_eq!(status, expected(&line), "{what}: {body}");
                assert!(!body.trim().is_empty(), "{what}: an empty body");
            }
            Some("racing") => {
                let out = racing(&args[1..], &vars).await;
                assert!(!out.trim().is_empty(), "{what}: printed nothing");
                if args.iter().any(|a| a == "--replay") {
                    let end = out.lines().last().unwrap_or_default();
                    assert!(
                        end.starts_with("replay_end ") && !end.ends_with(": 0 moves"),
                        "{what}: a replay of recorded moves, not:\n{out}"
                    );
                    assert!(out.lines().count() > 1, "{what}: no move played:\n{out}");
                }
            }
            _ => panic!("{what}: an example is a curl or a racing command"),
        }
    }
    service.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(
        service.exited(Duration::from_secs(30)).await.is_some(),
        "the demo stops on SIGTERM"
    );
}

#[test]
fn a_line_splits_as_a_shell_splits_it() {
    let vars = BTreeMap::from([
        ("KEY".to_owned(), "k1".to_owned()),
        ("URL".to_owned(), "http://h:1".to_owned()),
    ]);
    assert_eq!(
        words(
            r#"curl -H "X-API-Key: $KEY" '$URL' "$URL/a?b=1&c" # a comment"#,
            &vars
        ),
        ["curl", "-H", "X-API-Key: k1", "$URL", "http://h:1/a?b=1&c"]
    );
    assert_eq!(
        exported("  shell:      export KEY=k1 DAY=2026-11-18"),
        BTreeMap::from([
            ("KEY".to_owned(), "k1".to_owned()),
            ("DAY".to_owned(), "2026-11-18".to_owned())
        ])
    );
    assert_eq!(
        exported(r#"  shell:      export PATH='/it'\''s here':"$PATH" KEY=k1"#),
        BTreeMap::from([
            ("PATH".to_owned(), format!("/it's here:{READERS_PATH}")),
            ("KEY".to_owned(), "k1".to_owned()),
        ])
    );
}

/// The OS packages a script installs: the names it adds to `missing+=(...)`, and those an
/// `apt-get install` line names itself; each such line must leave out what Debian
/// recommends.
fn installed_by(script: &str, text: &str) -> BTreeSet<String> {
    let mut packages = BTreeSet::new();
    let said = |l: &str| l.starts_with('#') || l.starts_with("echo ");
    for line in text.lines().map(str::trim).filter(|l| !said(l)) {
        if let Some((_, list)) = line.split_once("/apt-install ") {
            let named = list
                .split_whitespace()
                .filter(|w| !w.starts_with(['"', '$']));
            packages.extend(named.map(str::to_owned));
        }
        if let Some((_, list)) = line.split_once("missing+=(") {
            let list = list.split(')').next().unwrap_or_default();
            packages.extend(list.split_whitespace().map(str::to_owned));
        }
        if let Some((_, args)) = line.split_once("apt-get install") {
            assert!(
                args.contains("--no-install-recommends"),
                "{script}: `{line}` installs what Debian recommends too"
            );
            let named = args
                .split_whitespace()
                .take_while(|w| !w.starts_with('>'))
                .filter(|w| !w.starts_with(['-', '"', '$', '(']) && !w.ends_with(')'));
            packages.extend(named.map(|w| w.trim_end_matches("...").to_owned()));
        }
    }
    packages
}

#[test]
fn the_quick_start_names_every_package_the_scripts_install() {
    let readme = include_str!("../README.md");
    let quick_start = readme
        .split("## Quick start")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README has a quick start");
    let scripts = [
        (
            "scripts/ensure-nats",
            include_str!("../scripts/ensure-nats"),
        ),
        (
            "scripts/ensure-test-tools",
            include_str!("../scripts/ensure-test-tools"),
        ),
        ("scripts/bench", include_str!("../scripts/bench")),
    ];
    let mut all = BTreeSet::new();
    for (script, text) in scripts {
        let packages = installed_by(script, text);
        assert!(!packages.is_empty(), "{script} installs nothing?");
        all.extend(packages);
    }
    for package in &all {
        assert!(
            quick_start.contains(&format!("`{package}`")),
            "README's quick start does not say `{package}` is installed"
        );
    }
    assert!(all.contains("wrk") && all.contains("chromium"), "{all:?}");
}

#[test]
fn the_plans_the_reference_gives_are_the_services_defaults() {
    let table = crate::support::marked("api.md", "plans:", "end of plans");
    let rows: Vec<Vec<String>> = table
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().trim_matches('`').to_owned())
                .collect()
        })
        .collect();
    let plans = racing::subscribe::plans::Plans::default();
    let served: Vec<Vec<String>> = plans
        .all()
        .iter()
        .map(|p| {
            let how = if p.self_service {
                "subscribe on the page"
            } else {
                "contact the operator"
            };
            vec![
                p.id.clone(),
                p.price.clone(),
                p.rate_per_sec.to_string(),
                p.burst.to_string(),
                p.live_connections.to_string(),
                p.webhook_endpoints
                    .map_or("-".to_owned(), |n| n.to_string()),
                how.to_owned(),
            ]
        })
        .collect();
    assert_eq!(rows, served);
}
