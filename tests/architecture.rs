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

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn read(path: &str) -> String {
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
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<String>) {
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
pub(crate) fn is_test_module(path: &str) -> bool {
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
        "src/projector/",
        "src/rebuild/",
        "src/snapshot/",
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

/// The crate whose files are held to [`MOST_LINES`] and whose modules may not import each
/// other in a circle (one module per read model, one way in).
const PROJECTIONS: &str = "projections/src";

/// The most lines a file of [`PROJECTIONS`] may have: a file past it is split along its
/// concerns into a directory.
const MOST_LINES: usize = 600;

#[test]
fn no_source_file_of_projections_is_over_600_lines() {
    let mut files = Vec::new();
    rust_files(&root().join(PROJECTIONS), &mut files);
    files.sort();
    assert!(files.len() > 20, "few source files found: {files:?}");
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = read(f).lines().count();
            (lines > MOST_LINES).then(|| format!("{f} ({lines} lines)"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files of {PROJECTIONS} over {MOST_LINES} lines (split each along its concerns):\n  {}",
        long.join("\n  ")
    );
}

/// The one file of [`PROJECTIONS`] that names the storage engine: every other reads and
/// writes through its `Kv`.
const ENGINE_FILE: &str = "projections/src/kv.rs";

#[test]
fn only_one_file_of_projections_names_the_storage_engine() {
    let mut files = Vec::new();
    rust_files(&root().join(PROJECTIONS), &mut files);
    files.sort();
    let naming: Vec<&String> = files
        .iter()
        .filter(|f| *f != ENGINE_FILE && !is_test_module(f))
        .filter(|f| {
            let code = without_test_modules(&code_of(f));
            code.contains("sled::") || code.contains("use sled")
        })
        .collect();
    assert!(
        naming.is_empty(),
        "files of {PROJECTIONS} that name sled, which only {ENGINE_FILE} may: {naming:?}"
    );
    assert!(
        code_of(ENGINE_FILE).contains("sled::"),
        "{ENGINE_FILE} is where the engine is named"
    );
}

/// The module path of a file of [`PROJECTIONS`], from its path under it: `lib.rs` is the
/// crate's root (`[]`), `fold.rs` and `ids/mod.rs` are `[fold]` and `[ids]`, `ids/runs.rs`
/// is `[ids, runs]`.
fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.split('/').map(str::to_owned).collect();
    if let Some(last) = parts.pop() {
        let stem = last.strip_suffix(".rs").unwrap_or(&last);
        if !["lib", "mod"].contains(&stem) {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// The code without its `#[cfg(test)]` inline modules: what a module's tests use is no
/// import of the module's.
pub(crate) fn without_test_modules(code: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let next = lines.get(i + 1).map_or("", |l| l.trim());
        let inline_module = next.contains("mod ") && next.ends_with('{');
        if lines[i].trim() == "#[cfg(test)]" && inline_module {
            let mut depth = 0i64;
            i += 1;
            while i < lines.len() {
                depth += lines[i].matches('{').count() as i64;
                depth -= lines[i].matches('}').count() as i64;
                i += 1;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        kept.push(lines[i]);
        i += 1;
    }
    kept.join("\n")
}

/// Every path a `use` tree names, expanded: `crate::{keys, docs::{self, Doc}}` names
/// `crate::keys`, `crate::docs::self` and `crate::docs::Doc`.
fn expand_use(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        if !path.is_empty() {
            out.push(format!("{prefix}{path}"));
        }
        return;
    };
    let head = format!("{prefix}{}", &tree[..open]);
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                expand_use(&head, &inner[start..i], out);
                start = i + 1;
            }
            _ => {}
        }
    }
    expand_use(&head, &inner[start..], out);
}

/// The paths a module's code names through the crate's root: in its `use` trees and in
/// paths written out (`crate::fold::read`, `super::docs::seal`).
fn paths_named(code: &str) -> Vec<String> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("use ") {
        if code[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let tree = &code[at + 4..];
        let tree = &tree[..tree.find(';').unwrap_or(tree.len())];
        expand_use("", tree, &mut paths);
    }
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| is_ident(c) || c == ':')
            {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':')
                .collect();
            paths.push(path);
        }
    }
    paths
}

/// The top-level name a path written in the module at `module` reaches at the crate's
/// root, if it goes through the root: `crate::fold::x` and, from `[people]`,
/// `super::fold::x` reach `fold`; `super::docs` from `[people, rides]` stays in `people`.
fn root_name(module: &[String], path: &str) -> Option<String> {
    let mut segments = path.split("::").map(str::trim).filter(|s| !s.is_empty());
    let mut at: Vec<String> = match segments.next()? {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module[..module.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut next = segments.next()?;
    while next == "super" {
        at.pop();
        next = segments.next()?;
    }
    (at.is_empty() && next != "self").then(|| next.to_owned())
}

/// What the modules of [`PROJECTIONS`] use of each other: for each module, each other
/// module it names and the first file that names it. A name the root re-exports
/// (`crate::Store`) counts as a use of the module that defines it; test modules (a
/// module whose name has `tests` in it, or inline `#[cfg(test)]` modules) are left out.
fn module_uses() -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> {
    let base = root().join(PROJECTIONS);
    let mut files = Vec::new();
    rust_files(&base, &mut files);
    files.sort();
    let under = |f: &str| f[PROJECTIONS.len() + 1..].to_owned();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_path(&under(f)).first().cloned())
        .filter(|m| !m.contains("tests"))
        .collect();
    // What the root re-exports, by the name it is known by at the root.
    let mut reexported = std::collections::BTreeMap::new();
    for path in paths_named(&without_test_modules(&code_of(&format!(
        "{PROJECTIONS}/lib.rs"
    )))) {
        let segments: Vec<&str> = path.split("::").map(str::trim).collect();
        if let (Some(first), Some(last)) = (segments.first(), segments.last()) {
            if segments.len() > 1 && modules.contains(*first) {
                reexported.insert(last.to_string(), first.to_string());
            }
        }
    }
    let mut uses = std::collections::BTreeMap::new();
    for file in &files {
        let module = module_path(&under(file));
        if module.iter().any(|m| m.contains("tests")) {
            continue;
        }
        let Some(from) = module.first().filter(|m| modules.contains(*m)) else {
            continue;
        };
        let code = without_test_modules(&code_of(file));
        for path in paths_named(&code) {
            let Some(name) = root_name(&module, &path) else {
                continue;
            };
            let to = if modules.contains(&name) {
                name
            } else if let Some(m) = reexported.get(&name) {
                m.clone()
            } else {
                continue;
            };
            if &to != from {
                uses.entry(from.clone())
                    .or_insert_with(std::collections::BTreeMap::new)
                    .entry(to)
                    .or_insert_with(|| file.clone());
            }
        }
    }
    uses
}

/// The circles of `uses`: each set of modules that reach each other (a strongly
/// connected component of more than one), in order.
fn circles(
    uses: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(m) = todo.pop() {
            for to in uses.get(&m).into_iter().flat_map(|t| t.keys()) {
                if seen.insert(to.clone()) {
                    todo.push(to.clone());
                }
            }
        }
        seen
    };
    let reached: std::collections::BTreeMap<&String, BTreeSet<String>> =
        uses.keys().map(|m| (m, reach(m))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (m, from_m) in &reached {
        if !from_m.contains(*m) || found.iter().any(|c| c.contains(*m)) {
            continue;
        }
        let circle: BTreeSet<String> = from_m
            .iter()
            .filter(|o| reached.get(o).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        found.push(circle);
    }
    found
}

/// One shortest way round a circle, from its first module back to it.
fn way_round(
    uses: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    circle: &BTreeSet<String>,
) -> Vec<String> {
    let Some(start) = circle.first() else {
        return Vec::new();
    };
    let mut came_from: std::collections::BTreeMap<String, String> =
        std::collections::BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(m) = queue.pop_front() {
        for to in uses.get(&m).into_iter().flat_map(|t| t.keys()) {
            if !circle.contains(to) || came_from.contains_key(to) {
                continue;
            }
            came_from.insert(to.clone(), m.clone());
            if to == start {
                let mut way = vec![start.clone()];
                let mut at = m.clone();
                while &at != start {
                    way.push(at.clone());
                    at = came_from[&at].clone();
                }
                way.push(start.clone());
                way.reverse();
                return way;
            }
            queue.push_back(to.clone());
        }
    }
    Vec::new()
}

#[test]
fn the_circle_check_reads_every_kind_of_path() {
    let code = without_test_modules(
        "use crate::{keys, docs::{self, Doc as D}};\n\
         pub(crate) use super::fold::Records;\n\
         use super::rides;\n\
         fn f() { crate::journal::each(); let x = super::super::store::read(); }\n\
         #[cfg(test)]\n\
         mod tests {\n    use crate::load::Loader;\n}\n",
    );
    let module = vec!["people".to_owned(), "docs".to_owned()];
    let names: BTreeSet<String> = paths_named(&code)
        .iter()
        .filter_map(|p| root_name(&module, p))
        .collect();
    let expected = ["docs", "journal", "keys", "store"];
    assert_eq!(names, expected.iter().map(|s| s.to_string()).collect());
    assert_eq!(module_path("ids/mod.rs"), ["ids"]);
    assert_eq!(module_path("ids/runs.rs"), ["ids", "runs"]);
    assert!(module_path("lib.rs").is_empty());
    let uses = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
        .iter()
        .fold(std::collections::BTreeMap::new(), |mut u, (f, t)| {
            u.entry(f.to_string())
                .or_insert_with(std::collections::BTreeMap::new)
                .insert(t.to_string(), String::new());
            u
        });
    let found = circles(&uses);
    assert_eq!(found.len(), 1);
    assert_eq!(way_round(&uses, &found[0]), ["a", "b", "c", "a"]);
}

#[test]
fn the_modules_of_projections_import_each_other_in_no_circle() {
    let uses = module_uses();
    let edges: usize = uses.values().map(|t| t.len()).sum();
    assert!(edges > 10, "few uses between modules found: {uses:?}");
    let found = circles(&uses);
    let report: Vec<String> = found
        .iter()
        .map(|circle| {
            let way = way_round(&uses, circle);
            let names: Vec<String> = circle
                .iter()
                .flat_map(|m| {
                    uses[m]
                        .iter()
                        .filter(|(to, _)| circle.contains(*to))
                        .map(move |(to, file)| format!("    {m} -> {to} ({file})"))
                })
                .collect();
            format!(
                "{} modules in a circle, e.g. {}; their uses of each other:\n{}",
                circle.len(),
                way.join(" -> "),
                names.join("\n")
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "the modules of {PROJECTIONS} import each other in a circle:\n{}",
        report.join("\n")
    );
}
