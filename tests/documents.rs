//! The documents against the repository and the code: every relative link in the README,
//! BENCHMARKS.md, CHANGELOG.md and `docs/` reaches a file (and a heading of it, where it names one), and
//! every environment variable the binary reads has its row in the configuration table of
//! `docs/operations.md`, and every row a variable the binary reads; and no document but
//! BENCHMARKS.md and CHANGELOG.md reports a run (a machine, a date, a percentile's figure);
//! every test a document names is there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::architecture::{is_test_module, read, root, rust_files, without_test_modules};

/// The page whose configuration table must name every variable.
const OPERATIONS: &str = "docs/operations.md";

/// The heading of that table's section.
const CONFIGURATION: &str = "## Configuration";

/// The directories whose code goes into the binary, where a variable may be read.
const CODE_DIRS: &[&str] = &["src", "events/src", "projections/src", "demo/src"];

/// The documents whose links are checked, from the root: these files and every `.md`
/// file under `docs/`.
const DOCUMENTS: &[&str] = &["README.md", "BENCHMARKS.md", "CHANGELOG.md"];

/// The `.md` files under `dir`, relative to the root, with `/` between the parts.
fn markdown_files(dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            let relative = path.strip_prefix(root()).expect("under the root");
            let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
}

/// The lines of a Markdown text outside its fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push(line);
        }
    }
    lines
}

/// A line without its code spans, so that what is quoted as code is no link.
fn without_code(line: &str) -> String {
    line.split('`').step_by(2).collect()
}

/// The anchor GitHub gives a heading: lower case, spaces to `-`, every character but
/// letters, digits, `-` and `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings; a heading met again takes `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in prose_lines(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = anchor(heading);
        let mut name = base.clone();
        let mut n = 0;
        while found.contains(&name) {
            n += 1;
            name = format!("{base}-{n}");
        }
        found.insert(name);
    }
    found
}

/// The targets of the inline links of a Markdown text (`[text](target)`), outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        let prose = without_code(line);
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            targets.push(target.to_owned());
            rest = &after[end..];
        }
    }
    targets
}

/// What is wrong with the relative links of the document at `path` (from the root)
/// whose text is `text`: each target that is no file or directory, or names an anchor
/// its Markdown file has no heading for.
fn broken_links(path: &str, text: &str) -> Vec<String> {
    let dir = root()
        .join(path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(root);
    let mut broken = Vec::new();
    for target in link_targets(text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, fragment) = match target.split_once('#') {
            Some((file, fragment)) => (file, Some(fragment)),
            None => (target.as_str(), None),
        };
        let at: PathBuf = if file.is_empty() {
            root().join(path)
        } else {
            dir.join(file)
        };
        if !at.exists() {
            broken.push(format!("{path}: ({target}): no such file"));
            continue;
        }
        let Some(fragment) = fragment else { continue };
        if at.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let heads = std::fs::read_to_string(&at)
            .map(|t| anchors(&t))
            .unwrap_or_default();
        if !heads.contains(fragment) {
            broken.push(format!(
                "{path}: ({target}): no heading with anchor #{fragment}"
            ));
        }
    }
    broken
}

/// The documents: README.md, BENCHMARKS.md, CHANGELOG.md and every `.md` file under
/// `docs/`, from the root. Their links are checked here; their JSON examples
/// (`tests/json_examples.rs`) and the names they give (`tests/doc_names.rs`) beside.
pub(crate) fn documents() -> Vec<String> {
    let mut files: Vec<String> = DOCUMENTS.iter().map(|f| f.to_string()).collect();
    markdown_files(&root().join("docs"), &mut files);
    files
}

/// Every test a document names as `file::name` (a claim's proof: docs/guarantees.md names
/// one for each guarantee) is a function of that file of `tests/`.
#[test]
fn every_test_a_document_names_is_there() {
    let mut named = 0;
    let mut missing = Vec::new();
    for doc in documents() {
        let text = read(&doc);
        let prose = text.split("```").step_by(2);
        for span in prose.flat_map(|p| p.split('`').skip(1).step_by(2)) {
            let Some((file, name)) = span.split_once("::") else {
                continue;
            };
            let plain = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            };
            let path = root().join("tests").join(format!("{file}.rs"));
            if !plain(file) || !plain(name) || !path.exists() {
                continue;
            }
            named += 1;
            if !read(&format!("tests/{file}.rs")).contains(&format!("fn {name}(")) {
                missing.push(format!("{doc}: {span}"));
            }
        }
    }
    assert!(named >= 20, "the documents name {named} tests");
    assert!(
        missing.is_empty(),
        "tests named that are not there: {missing:?}"
    );
}

#[test]
fn every_relative_link_of_the_documents_resolves() {
    let files = documents();
    assert!(files.len() >= 9, "few documents found: {files:?}");
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = read(file);
        checked += link_targets(&text).len();
        broken.extend(broken_links(file, &text));
    }
    assert!(checked > 50, "few links found ({checked}) in {files:?}");
    assert!(
        broken.is_empty(),
        "links that lead nowhere (a file moved or a heading renamed?):\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_missing_heading() {
    let text = "[api](docs/api.md#keys) [gone](docs/gone.md) [no](docs/api.md#no-such-heading)\n\
                `[code](docs/gone.md)`\n```\n[fenced](docs/gone.md)\n```\n[web](https://example.com/x)";
    let broken = broken_links("README.md", text);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("docs/gone.md"), "{broken:?}");
    assert!(broken[1].contains("#no-such-heading"), "{broken:?}");
    assert_eq!(anchor("Additions (v1.1)"), "additions-v11");
    assert_eq!(anchor("`events/` (racing-events)"), "events-racing-events");
}

/// The names in quotes after `marker` in `code`: `env = "X"` gives `X`.
fn quoted_after(code: &str, marker: &str, out: &mut BTreeSet<String>) {
    for (at, _) in code.match_indices(marker) {
        let rest = &code[at + marker.len()..];
        if let Some(name) = rest.split('"').next() {
            if !name.is_empty() && !name.contains(char::is_whitespace) {
                out.insert(name.to_owned());
            }
        }
    }
}

/// Every environment variable the binary's code reads: clap's `env = "..."`, the
/// arguments of `var("...")` and `var_os("...")`, and every string that is a name of
/// the service's own (`"RACING_..."`), as a list handed to `var_os` in a loop is.
fn variables_read() -> BTreeSet<String> {
    let mut files = Vec::new();
    for dir in CODE_DIRS {
        rust_files(&root().join(dir), &mut files);
    }
    let mut names = BTreeSet::new();
    for file in files.iter().filter(|f| !is_test_module(f)) {
        let code = without_test_modules(&read(file));
        quoted_after(&code, "env = \"", &mut names);
        quoted_after(&code, "var(\"", &mut names);
        quoted_after(&code, "var_os(\"", &mut names);
        for (at, _) in code.match_indices("\"RACING_") {
            let name: String = code[at + 1..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if code[at + 1 + name.len()..].starts_with('"') {
                names.insert(name);
            }
        }
    }
    names
}

/// The variables named in the first column of the configuration table.
fn variables_documented() -> BTreeSet<String> {
    let page = read(OPERATIONS);
    let section = page
        .split("\n## ")
        .find(|s| s.starts_with(&CONFIGURATION[3..]))
        .unwrap_or_else(|| panic!("{OPERATIONS} has a section {CONFIGURATION:?}"));
    section
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
        .filter_map(|row| row.split('|').nth(1))
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_variable_the_binary_reads_is_in_the_configuration_table() {
    let read_by_code = variables_read();
    assert!(
        read_by_code.len() > 40,
        "few variables found in the code: {read_by_code:?}"
    );
    let documented = variables_documented();
    let missing: Vec<&String> = read_by_code.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "variables the binary reads without a row in {OPERATIONS}'s configuration table: {missing:?}"
    );
    let stale: Vec<&String> = documented.difference(&read_by_code).collect();
    assert!(
        stale.is_empty(),
        "rows of {OPERATIONS}'s configuration table for variables the binary does not read: {stale:?}"
    );
}

/// Words that report a run: a machine, a date or a round of measuring, or a percentile's
/// figure. Figures live in BENCHMARKS.md (and what a release changed in CHANGELOG.md);
/// the other documents state rules and settings and link to the figure.
fn reports_a_run(line: &str) -> Option<&'static str> {
    let lower = without_code(line).to_lowercase();
    let phrases = [
        "project's machine",
        "project's 2-core",
        "on this machine",
        "on our machine",
        "measured on 20",
        "latest full bench run",
        "in the latest run",
        "in one run",
        "in two runs",
        "paired runs",
        "peaked at",
    ];
    if let Some(phrase) = phrases.into_iter().find(|p| lower.contains(p)) {
        return Some(phrase);
    }
    // A percentile with its figure: `p99 22.5 ms`, `a p99 of 13 to 17 ms`.
    let words: Vec<&str> = lower.split_whitespace().collect();
    let figure = |w: &str| w.starts_with(|c: char| c.is_ascii_digit());
    words.iter().enumerate().find_map(|(i, w)| {
        let percentile = ["p50", "p90", "p99", "p99.9"].contains(&w.trim_matches(','));
        let next = words.get(i + 1).copied().unwrap_or_default();
        let after = words.get(i + 2).copied().unwrap_or_default();
        (percentile && (figure(next) || (next == "of" && figure(after))))
            .then_some("a percentile's figure")
    })
}

#[test]
fn no_document_but_the_benchmarks_and_the_changelog_reports_a_run() {
    let mut found = Vec::new();
    let mut read_lines = 0;
    for file in documents() {
        if file == "BENCHMARKS.md" || file == "CHANGELOG.md" {
            continue;
        }
        let text = read(&file);
        for line in prose_lines(&text) {
            read_lines += 1;
            if let Some(why) = reports_a_run(line) {
                found.push(format!("{file}: {why}: {line}"));
            }
        }
    }
    assert!(read_lines > 2000, "only {read_lines} lines read");
    assert!(
        found.is_empty(),
        "run figures belong in BENCHMARKS.md, linked from here:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_run_reported_is_found() {
    for line in [
        "Measured on 2026-11-21 on this project's 2-core machine, shared with other work.",
        "reads answered slowly (in the latest full bench run, p99 22.5 ms over 10 s)",
        "at its first client at a p99 of 13 to 17 ms",
    ] {
        assert!(reports_a_run(line).is_some(), "{line}");
    }
    for line in [
        "the `p99_ms` field",
        "a p99 under the goal of BENCHMARKS.md",
        "`RACING_RATE_LIMIT_PER_SEC`: 20 a second",
    ] {
        assert_eq!(reports_a_run(line), None, "{line}");
    }
}

/// The systemd unit a host without containers runs.
const UNIT: &str = "docs/systemd/racing.service";

/// The values of `key=` lines of a unit file, in order.
fn unit_values(unit: &str, key: &str) -> Vec<String> {
    unit.lines()
        .filter_map(|l| l.strip_prefix(&format!("{key}=")))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_systemd_unit_runs_serve_with_settings_the_binary_reads() {
    let unit = read(UNIT);
    let exec = unit_values(&unit, "ExecStart");
    let [exec] = exec.as_slice() else {
        panic!("{UNIT}: one ExecStart, not {exec:?}");
    };
    let words: Vec<&str> = exec.split_whitespace().collect();
    assert!(words[0].ends_with("/racing"), "{exec}");
    assert_eq!(words[1..], ["serve"], "{exec}");
    let read_by_binary = variables_read();
    let mut set = BTreeSet::new();
    for setting in unit_values(&unit, "Environment") {
        let (name, value) = setting.split_once('=').expect("NAME=value");
        assert!(
            read_by_binary.contains(name),
            "{UNIT}: the binary reads no {name}"
        );
        set.insert((name.to_owned(), value.to_owned()));
    }
    // The data directory is the state directory systemd makes for the user, and the one
    // path it may write.
    let state = unit_values(&unit, "StateDirectory").join(" ");
    let data = format!("/var/lib/{state}");
    assert!(
        set.contains(&("RACING_DATA_DIR".to_owned(), data.clone())),
        "{set:?}"
    );
    assert_eq!(unit_values(&unit, "ReadWritePaths"), [data]);
    // The stop's grace covers the service's own 10 s.
    let stop: u64 = unit_values(&unit, "TimeoutStopSec")
        .first()
        .and_then(|s| s.parse().ok())
        .expect("TimeoutStopSec in seconds");
    assert!(stop > 10, "{stop}");

    // systemd's own check where the machine has it, with the binary of these tests.
    let verify = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output();
    if verify.is_ok_and(|o| o.status.success()) {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let copy = dir.path().join("racing.service");
        let binary = env!("CARGO_BIN_EXE_racing");
        let text = unit.replace("/usr/local/bin/racing", binary);
        std::fs::write(&copy, text).expect("written");
        let out = std::process::Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&copy)
            .output()
            .expect("systemd-analyze runs");
        // It exits 0 on a key it does not know or a value it cannot parse, and says so on
        // a line that names the file.
        let said = String::from_utf8_lossy(&out.stderr);
        let about_the_file: Vec<&str> = said
            .lines()
            .filter(|l| l.contains("racing.service"))
            .collect();
        assert!(
            out.status.success() && about_the_file.is_empty(),
            "systemd-analyze verify: {said}"
        );
    }
}
