//! The map of the code (`docs/architecture.md`) against the code: every path it names
//! exists, every source file outside the tests has its line on it, and the rules it states
//! about what may use what hold in the `use` lines and the crates' dependencies.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The map, from the root of the repository.
const MAP: &str = "docs/architecture.md";

/// The directories whose source files each have a line on the map.
const SOURCE_DIRS: &[&str] = &[
    "src",
    "events/src",
    "projections/src",
    "demo/src",
    "benches/src",
    "fuzz/fuzz_targets",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// What the text sets in backticks, each span once.
fn code_spans(text: &str) -> BTreeSet<&str> {
    text.split("```")
        .step_by(2)
        .flat_map(|prose| prose.split('`').skip(1).step_by(2))
        .collect()
}

/// Whether a span of code is a path of the repository: no spaces, not a URL path, a
/// template, a Rust path or a path outside the repository, and either with a directory
/// in it or a file name with an extension.
fn is_repo_path(span: &str) -> bool {
    let odd = |c: char| c.is_whitespace() || "{}<>*:()&|,=\"'".contains(c);
    if span.is_empty() || span.starts_with('/') || span.starts_with("..") || span.contains(odd) {
        return false;
    }
    let file = span.rsplit('/').next().unwrap_or(span);
    let extension = file.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && ["rs", "md", "toml", "lock", "yml", "json", "conf"].contains(&ext)
    });
    span.contains('/') || extension
}

/// The `.rs` files under `dir`, relative to the root, with `/` between the parts.
fn rust_files(dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root()).expect("under the root");
            let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
}

/// A test module: a `tests.rs`, or a file in a `tests` directory of a crate's sources.
fn is_test_module(path: &str) -> bool {
    path.ends_with("/tests.rs") || path.contains("/tests/")
}

/// The source without its comments (to the end of each line from `//`), so that a
/// comment that names a crate is not taken for a use of it.
fn code_of(path: &str) -> String {
    read(path)
        .lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_path_the_map_names_exists() {
    let map = read(MAP);
    let paths: Vec<&str> = code_spans(&map)
        .into_iter()
        .filter(|s| is_repo_path(s))
        .collect();
    assert!(paths.len() > 100, "the map names few paths: {paths:?}");
    let missing: Vec<&&str> = paths
        .iter()
        .filter(|p| {
            let at = root().join(p);
            if p.ends_with('/') {
                !at.is_dir()
            } else {
                !at.exists()
            }
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{MAP} names paths that do not exist (renamed or removed? say so in the map): {missing:?}"
    );
}

#[test]
fn every_source_file_has_its_line_on_the_map() {
    let map = read(MAP);
    let named = code_spans(&map);
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 80, "few source files found: {files:?}");
    let absent: Vec<&String> = files
        .iter()
        .filter(|f| !is_test_module(f) && !named.contains(f.as_str()))
        .collect();
    assert!(
        absent.is_empty(),
        "source files without their line on {MAP}: {absent:?}"
    );
}

#[test]
fn the_rules_of_the_map_hold_in_the_code() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    // Where the map says a NATS client may be.
    let nats_allowed = [
        "src/nats/",
        "src/projector.rs",
        "src/rebuild/",
        "src/publish.rs",
        "src/keys/",
        "src/subscribe/store.rs",
        "src/admin.rs",
        "src/app.rs",
        "src/cli/",
    ];
    let mut broken = Vec::new();
    for file in &files {
        let code = code_of(file);
        let uses = |name: &str| code.contains(name);
        if uses("async_nats") && !nats_allowed.iter().any(|a| file.starts_with(a)) {
            broken.push(format!("{file} holds a NATS client"));
        }
        if file.starts_with("src/live/") {
            for name in ["crate::nats", "crate::projector", "crate::http"] {
                if uses(name) {
                    broken.push(format!("{file} uses {name}"));
                }
            }
        }
        if file.starts_with("src/http/") {
            for name in ["sled", "crate::nats", "crate::projector", "crate::rebuild"] {
                if uses(name) {
                    broken.push(format!("{file} uses {name}"));
                }
            }
        }
    }
    // The crates' arrows: each may use only what the map says.
    for (manifest, forbidden) in [
        (
            "events/Cargo.toml",
            &[
                "racing-projections",
                "racing-demo",
                "racing",
                "tokio",
                "async-nats",
                "sled",
            ][..],
        ),
        (
            "projections/Cargo.toml",
            &["racing-demo", "racing", "tokio", "async-nats", "axum"][..],
        ),
        (
            "demo/Cargo.toml",
            &["racing-projections", "racing", "async-nats", "sled", "axum"][..],
        ),
    ] {
        let table: toml::Table = read(manifest)
            .parse()
            .unwrap_or_else(|e| panic!("{manifest}: {e}"));
        let deps = table
            .get("dependencies")
            .and_then(|d| d.as_table())
            .unwrap_or_else(|| panic!("{manifest} has no [dependencies]"));
        for name in forbidden {
            if deps.contains_key(*name) {
                broken.push(format!("{manifest} depends on {name}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "the code breaks rules of {MAP} (\"What may use what\"): {broken:?}"
    );
}

#[test]
fn the_readme_points_to_the_map() {
    let readme = read("README.md");
    let architecture = readme
        .split("\n## ")
        .find(|s| s.starts_with("Architecture\n"))
        .expect("README has an Architecture section");
    assert!(
        architecture.contains(&format!("]({MAP})")),
        "README's Architecture links {MAP}"
    );
}
