//! The map of the code (`docs/architecture.md`) against the code: every path it names
//! exists, every source file outside the tests has its line on it and every test file its
//! name, and the rules it states
//! about what may use what hold in the `use` lines and the crates' dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::modules;

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
/// template, a Rust path, a path outside the repository or one of the build's outputs
/// (`target/`, there only once something made it), and either with a directory in it or
/// a file name with an extension.
fn is_repo_path(span: &str) -> bool {
    let odd = |c: char| c.is_whitespace() || "{}<>*:()&|,=\"'".contains(c);
    if span.is_empty()
        || span.starts_with('/')
        || span.starts_with("..")
        || span.starts_with("target/")
        || span.contains(odd)
    {
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
pub(crate) fn code_of(path: &str) -> String {
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

/// The `.rs` files under `dirs` (more than `least`) that the map names nowhere and
/// `excused` (given the file and what the map names) does not excuse.
fn unnamed_files(
    dirs: &[&str],
    least: usize,
    excused: impl Fn(&str, &BTreeSet<&str>) -> bool,
) -> Vec<String> {
    let map = read(MAP);
    let named = code_spans(&map);
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(
        files.len() > least,
        "few files found under {dirs:?}: {files:?}"
    );
    files
        .into_iter()
        .filter(|f| !named.contains(f.as_str()) && !excused(f, &named))
        .collect()
}

#[test]
fn every_source_file_has_its_line_on_the_map() {
    let absent = unnamed_files(SOURCE_DIRS, 80, |f, _| is_test_module(f));
    assert!(
        absent.is_empty(),
        "source files without their line on {MAP}: {absent:?}"
    );
}

#[test]
fn every_test_file_has_its_name_on_the_map() {
    // A directory of a test's helpers is named as a whole (`tests/reliability/`).
    let absent = unnamed_files(&["tests"], 40, |f, named| {
        f.rsplit_once('/')
            .is_some_and(|(dir, _)| dir != "tests" && named.contains(format!("{dir}/").as_str()))
    });
    assert!(
        absent.is_empty(),
        "test files without their name on {MAP}: {absent:?}"
    );
}

/// Each list of "Layers" names every module of its directory: a module the list leaves
/// out has no place in the order the map gives.
#[test]
fn every_layer_list_names_every_module_of_its_directory() {
    let map = read(MAP);
    let layers = map
        .split_once("### Layers")
        .and_then(|(_, rest)| rest.split_once("### Imports"))
        .map(|(layers, _)| layers)
        .expect("the map's Layers section");
    let mut lists = 0;
    let mut missing = Vec::new();
    for item in layers.split("\n- ").skip(1) {
        let Some(dir) = item
            .strip_prefix('`')
            .and_then(|rest| rest.split_once("/`:"))
            .map(|(dir, _)| dir)
        else {
            continue;
        };
        lists += 1;
        let named = code_spans(item);
        let entries = std::fs::read_dir(root().join(dir)).expect("a listed directory");
        for entry in entries {
            let path = entry.expect("an entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let module = match name {
                Some(n) if path.is_dir() && n != "tests" => n,
                Some(n) if n.ends_with(".rs") => n.trim_end_matches(".rs").to_owned(),
                _ => continue,
            };
            if !["mod", "lib", "main", "tests"].contains(&module.as_str())
                && !named.contains(module.as_str())
            {
                missing.push(format!("{dir}/{module}"));
            }
        }
    }
    assert!(lists >= 7, "the Layers section has {lists} lists");
    missing.sort();
    assert!(
        missing.is_empty(),
        "modules without their place in {MAP}'s Layers: {missing:?}"
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
        "src/refusals.rs",
        "src/keys/",
        "src/subscribe/store.rs",
        "src/webhooks/store.rs",
        "src/admin.rs",
        "src/app.rs",
        "src/app/",
        "src/cli/",
    ];
    let mut broken = Vec::new();
    for file in &files {
        let code = code_of(file);
        let uses = |name: &str| code.contains(name);
        if uses("async_nats") && !nats_allowed.iter().any(|a| file.starts_with(a)) {
            broken.push(format!("{file} holds a NATS client"));
        }
        if file.starts_with("src/http/") && uses("sled") {
            broken.push(format!("{file} uses sled"));
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

/// What each module of the service may use of the others: the map's table under "Rules"
/// (between `<!-- may use` and `<!-- end of may use -->`), one row a group of modules,
/// each a `src/` path written in backticks. Every use is resolved to the module that
/// defines the name (through re-exports and imported names), so a rule cannot be passed
/// by spelling a path another way. A module without a row (the application's wiring, the
/// commands, the configuration) may use any.
fn may_use() -> BTreeMap<String, BTreeSet<String>> {
    let map = read(MAP);
    let table = map
        .split_once("<!-- may use")
        .and_then(|(_, rest)| rest.split_once("<!-- end of may use -->"))
        .map(|(table, _)| table)
        .unwrap_or_else(|| panic!("{MAP} has no table of what may use what"));
    // The first path segment under src/ of each `src/...` in backticks.
    let modules = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|path| path.strip_prefix("src/"))
            .map(|path| {
                let first = path.split('/').next().unwrap_or_default();
                first.trim_end_matches(".rs").to_owned()
            })
            .collect()
    };
    let mut rules = BTreeMap::new();
    for row in table.lines().filter(|l| l.starts_with("| `src/")) {
        let cells: Vec<&str> = row.split('|').collect();
        let (Some(who), Some(what)) = (cells.get(1), cells.get(2)) else {
            panic!("{MAP}: a row of the table without two cells: {row}");
        };
        let allowed: BTreeSet<String> = modules(what).into_iter().collect();
        for module in modules(who) {
            let known = root().join("src").join(format!("{module}.rs")).is_file()
                || root().join("src").join(&module).is_dir();
            assert!(known, "{MAP} names `src/{module}`, which is not a module");
            let was = rules.insert(module.clone(), allowed.clone());
            assert!(was.is_none(), "{MAP} gives `src/{module}` two rows");
        }
    }
    rules
}

#[test]
fn the_maps_table_of_what_may_use_what_is_read_whole() {
    let rules = may_use();
    assert!(
        rules.len() >= 20,
        "only {} modules in the table",
        rules.len()
    );
    assert!(rules["files"].is_empty() && rules["telemetry"].is_empty());
    assert!(rules["http"].contains("read_models") && !rules["http"].contains("projector"));
    assert!(rules["projector"].contains("refusals"), "{rules:?}");
}

#[test]
fn every_use_between_the_services_modules_follows_the_map() {
    let tree = modules::Tree::read("src", "lib.rs");
    let rules = may_use();
    let mut broken = BTreeSet::new();
    let mut checked = 0;
    for ((from, to), file) in tree.uses() {
        let (Some(from), Some(to)) = (from.first(), to.first()) else {
            continue;
        };
        if from == to {
            continue;
        }
        let Some(allowed) = rules.get(from.as_str()) else {
            continue;
        };
        checked += 1;
        if !allowed.contains(to.as_str()) {
            broken.insert(format!("{file}: {from} uses {to}"));
        }
    }
    assert!(checked > 40, "few uses checked: {checked}");
    assert!(
        broken.is_empty(),
        "uses the map (\"What may use what\", \"Rules\") does not allow: {broken:#?}"
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

/// The crate whose files are held to [`MOST_LINES`], tighter than the rest, and in which
/// only one file names the storage engine.
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

/// The one file of the service's code ([`PROJECTIONS`] and `src`) that names the storage
/// engine: every other reads and writes through its `Kv`.
const ENGINE_FILE: &str = "projections/src/kv.rs";

#[test]
fn only_one_file_of_the_service_names_the_storage_engine() {
    let mut files = Vec::new();
    rust_files(&root().join(PROJECTIONS), &mut files);
    rust_files(&root().join("src"), &mut files);
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
        "files of {PROJECTIONS} and src that name sled, which only {ENGINE_FILE} may: {naming:?}"
    );
    assert!(
        code_of(ENGINE_FILE).contains("sled::"),
        "{ENGINE_FILE} is where the engine is named"
    );
}

/// The service's readers: they read the store in use through its [`READ_API`], and never
/// hold the store itself, whose writes (a batch, the checkpoint, a snapshot's load) are
/// the projector's, a rebuild's and the snapshots'.
const READERS: &[&str] = &["src/http", "src/live", "src/webhooks"];

/// Where the readers' reads are: `racing_projections::Reader`.
const READ_API: &str = "projections/src/reader.rs";

/// The places of `code` (a reader's) that name the store itself or load it: a path to
/// `racing_projections::Store`, by a `use` or written out, or a call of the read models'
/// writers' door (`load()`, `load_full()`).
fn store_named(code: &str) -> Vec<String> {
    let mut found: Vec<String> = modules::imports(code)
        .into_iter()
        .map(|(path, _)| path)
        .chain(modules::paths_from(code, "racing_projections"))
        .filter(|path| path == "racing_projections::Store")
        .collect();
    for door in ["read_models.load()", "read_models.load_full()"] {
        found.extend(code.matches(door).map(str::to_owned));
    }
    found
}

#[test]
fn the_readers_hold_the_read_api_and_never_the_store() {
    let mut files = Vec::new();
    for dir in READERS {
        rust_files(&root().join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 20, "few readers found: {files:?}");
    let naming: Vec<String> = files
        .iter()
        .filter(|f| !is_test_module(f))
        .flat_map(|f| {
            let code = without_test_modules(&code_of(f));
            store_named(&code)
                .into_iter()
                .map(move |found| format!("{f}: {found}"))
        })
        .collect();
    assert!(
        naming.is_empty(),
        "readers that reach the store itself rather than its reads ({READ_API}):\n  {}",
        naming.join("\n  ")
    );
}

#[test]
fn a_reader_that_names_the_store_is_found() {
    let code = "use racing_projections::{Doc, Store};\n\
        fn f(s: &racing_projections::Store) { let x = state.read_models.load_full(); }\n\
        fn g(r: &racing_projections::Reader) { state.read_models.reader(); }\n";
    assert_eq!(
        store_named(code),
        [
            "racing_projections::Store",
            "racing_projections::Store",
            "read_models.load_full()"
        ]
    );
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
    let paths = modules::paths_named(&code);
    for path in [
        "crate::keys",
        "crate::docs::self",
        "crate::docs::Doc",
        "super::fold::Records",
        "super::rides",
        "crate::journal::each",
        "super::super::store::read",
    ] {
        assert!(paths.iter().any(|p| p == path), "{path} in {paths:?}");
    }
    assert!(!paths.iter().any(|p| p.contains("load")), "{paths:?}");
    let imports = modules::imports(&code);
    let known: BTreeSet<&str> = imports.iter().map(|(_, a)| a.as_str()).collect();
    assert_eq!(
        known,
        BTreeSet::from(["keys", "docs", "D", "Records", "rides"])
    );
    assert_eq!(modules::module_path("ids/mod.rs"), ["ids"]);
    assert_eq!(modules::module_path("ids/runs.rs"), ["ids", "runs"]);
    assert!(modules::module_path("lib.rs").is_empty());
    assert!(modules::module_path("main.rs").is_empty());

    let m = |s: &str| -> modules::Module { s.split('/').map(str::to_owned).collect() };
    // a/x uses b, b/y uses a/x, b uses c: a circle of a and b at the root, none in c.
    let uses = [("a/x", "b"), ("b/y", "a/x"), ("b", "c"), ("c/p", "c/q")]
        .iter()
        .map(|(f, t)| ((m(f), m(t)), String::new()))
        .collect();
    let levels = modules::by_level(&uses);
    let root = &levels[&Vec::new()];
    let found = modules::circles(root);
    assert_eq!(found.len(), 1);
    assert_eq!(
        modules::way_round(root, &found[0]),
        [m("a"), m("b"), m("a")]
    );
    assert!(modules::circles(&levels[&m("c")]).is_empty());
}

#[test]
fn the_circle_check_resolves_names_to_the_module_that_defines_them() {
    // The service's library: its root re-exports `Application` from `app`, and the
    // binary beside it is a crate of its own.
    let tree = modules::Tree::read("src", "lib.rs");
    let at = |s: &str| -> modules::Module { s.split('/').map(str::to_owned).collect() };
    assert_eq!(
        tree.resolve(&Vec::new(), "crate::Application"),
        Some(at("app"))
    );
    assert_eq!(
        tree.resolve(&at("http/route"), "super::super::config::Config"),
        Some(at("config"))
    );
    assert_eq!(tree.resolve(&at("http/route"), "std::sync::Arc"), None);
    assert_eq!(tree.file(&at("app")), "src/app.rs");
}

#[test]
fn no_crate_of_the_workspace_has_modules_that_import_each_other_in_a_circle() {
    let mut report = Vec::new();
    let mut edges = 0;
    for (dir, root_file) in modules::CRATES {
        let tree = modules::Tree::read(dir, root_file);
        edges += tree.uses().len();
        report.extend(modules::report(&tree));
    }
    assert!(edges > 100, "few uses between modules found: {edges}");
    assert!(
        report.is_empty(),
        "modules that import each other in a circle (give what they share a home below \
         them; docs/architecture.md, \"Layers\"):\n{}",
        report.join("\n")
    );
}

#[test]
fn every_module_names_items_where_they_are_defined_and_none_of_its_parents() {
    let mut misplaced = Vec::new();
    for (dir, root_file) in modules::CRATES {
        misplaced.extend(modules::Tree::read(dir, root_file).misplaced_names());
    }
    assert!(
        misplaced.is_empty(),
        "{} names out of place: a module imports from its siblings or from below, never \
         its parent's own items (but the parent's main type), and each name from the module \
         that defines it, not through a re-export ({MAP}, \"Imports\"):\n  {}",
        misplaced.len(),
        misplaced.join("\n  ")
    );
}

/// The uses of a parent's own items that the rule lets through: a module's main type,
/// named by the modules that are parts of it, each with why it stays in the parent.
const PARENTS_MAIN_TYPES: &[(&str, &str)] = &[
    (
        "demo/src/simulator/day.rs: Simulator",
        "a day's plan is made by the simulator it runs in",
    ),
    (
        "projections/src/ids/upkeep.rs: AppliedIds",
        "the upkeep is methods of the applied ids it merges and saves",
    ),
    (
        "src/projector/applied_ids.rs: Projector",
        "the projector's report on its applied ids is one of its methods",
    ),
    (
        "src/projector/catch_up.rs: Projector",
        "a catch-up is the projector's own loop, over its parts",
    ),
    (
        "src/projector/live.rs: Projector",
        "the live loop is the projector's own, over its parts",
    ),
    (
        "src/snapshot/start.rs: Snapshots",
        "a start from a snapshot is one of the snapshots' methods",
    ),
    (
        "src/snapshot/writer.rs: Snapshots",
        "the writer is the snapshots' own, over their bucket",
    ),
    (
        "src/live/session/conflation.rs: Session",
        "each part of a session is methods of the session: its state is one",
    ),
    ("src/live/session/days.rs: Session", "as conflation.rs"),
    ("src/live/session/market.rs: Session", "as conflation.rs"),
    ("src/live/session/playback.rs: Session", "as conflation.rs"),
    ("src/live/session/protocol.rs: Session", "as conflation.rs"),
    ("src/live/session/replay.rs: Session", "as conflation.rs"),
    (
        "src/live/session/subscriptions.rs: Session",
        "as conflation.rs",
    ),
    ("src/live/session/window.rs: Session", "as conflation.rs"),
];

/// At most this many uses of a parent's main type: past it, what the parts share wants a
/// module of its own.
const MOST_PARENTS_MAIN_TYPES: usize = 20;

#[test]
fn the_uses_of_a_parents_main_type_are_few_and_each_has_its_reason() {
    let mut found = BTreeSet::new();
    for (dir, root_file) in modules::CRATES {
        found.extend(modules::Tree::read(dir, root_file).parents_main_types());
    }
    let listed: BTreeSet<String> = PARENTS_MAIN_TYPES
        .iter()
        .map(|(place, _)| (*place).to_owned())
        .collect();
    assert_eq!(
        found, listed,
        "the uses of a parent's main type by the modules inside it, each listed with its \
         reason in PARENTS_MAIN_TYPES"
    );
    assert!(listed.len() <= MOST_PARENTS_MAIN_TYPES, "{}", listed.len());
}

#[test]
fn a_name_of_a_parent_or_through_a_re_export_is_found() {
    let files = [
        ("lib.rs", "mod shop;\npub use shop::stock::Stock;\n"),
        (
            "shop/mod.rs",
            "pub mod stock;\nmod till;\npub(crate) use stock::Stock;\nuse std::sync::Arc;\n\
             pub struct Shop;\npub(crate) const OPEN: u8 = 9;\npub(crate) fn price() {}\n\
             pub(crate) fn till() {}\n\
             #[cfg(test)]\nmod tests {\n    pub fn only_tests() {}\n}\n",
        ),
        (
            "shop/stock.rs",
            "use super::{Shop, OPEN};\nuse super::till::Till;\npub struct Stock;\n\
             fn f() { super::price(); crate::shop::price(); super::till(); }\n",
        ),
        (
            "shop/till.rs",
            "use super::*;\nuse crate::Stock;\nuse super::Stock as S;\nuse super::Arc;\n\
             pub(crate) struct Till;\nimpl super::Shop {}\n",
        ),
        (
            "shop/door.rs",
            "use crate::shop;\nfn open(s: shop::Stock) -> shop::stock::Stock { s }\n",
        ),
        ("shop/tests.rs", "use super::*;\nuse crate::Stock;\n"),
    ];
    let tree = modules::Tree::of(
        "x",
        "lib.rs",
        files.map(|(file, code)| (file.to_owned(), code.to_owned())),
    );
    let found = tree.misplaced_names();
    let expected = [
        "x/shop/door.rs: `shop::Stock` reaches `Stock` through `use stock::Stock` in x/shop",
        "x/shop/stock.rs: `crate::shop::price` names fn `price` of x/shop, which holds it",
        "x/shop/stock.rs: `super::OPEN` names const `OPEN` of x/shop, which holds it",
        "x/shop/stock.rs: `super::price` names fn `price` of x/shop, which holds it",
        "x/shop/stock.rs: `super::till` names fn `till` of x/shop, which holds it",
        "x/shop/till.rs: `crate::Stock` reaches `Stock` through `use shop::stock::Stock` in x/ (the root)",
        "x/shop/till.rs: `super::*` names every item of x/shop, which holds it",
        "x/shop/till.rs: `super::Arc` reaches `Arc` through `use std::sync::Arc` in x/shop",
        "x/shop/till.rs: `super::Stock` reaches `Stock` through `use stock::Stock` in x/shop",
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (found, expected) in found.iter().zip(expected) {
        assert!(found.starts_with(expected), "{found}\n  is not\n{expected}");
    }
    // `Shop` is the main type of `shop`: its modules may name it.
    assert_eq!(tree.main_type(&vec!["shop".to_owned()]), Some("Shop"));
    assert!(modules::named_for("ids", "AppliedIds") && modules::named_for("snapshot", "Snapshots"));
    assert!(
        modules::named_for("live_race", "LiveRace") && !modules::named_for("shop", "ShopSettings")
    );
    assert!(!modules::named_for("keys", "KeyRing"));
    // Two types named for a module: neither is its main type.
    let two = modules::Tree::of(
        "x",
        "lib.rs",
        [
            ("lib.rs", "mod ids;\n"),
            (
                "ids/mod.rs",
                "pub struct AppliedIds;\npub struct SeenIds;\n",
            ),
        ]
        .map(|(file, code)| (file.to_owned(), code.to_owned())),
    );
    assert_eq!(two.main_type(&vec!["ids".to_owned()]), None);
    let kinds = modules::defined(
        "pub(crate) const fn a() {}\npub(in crate::x) struct B;\nasync fn c() {}\n\
         static mut D: u8 = 0;\nmacro_rules! e {}\nimpl B {\n    fn g() {}\n}\nmod h;\n",
    );
    let kinds: Vec<(&str, &str)> = kinds
        .iter()
        .map(|(n, k)| (n.as_str(), k.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("B", "struct"),
            ("D", "static"),
            ("a", "fn"),
            ("c", "fn"),
            ("e", "macro")
        ]
    );
}

/// The most lines a source file outside the tests may have anywhere in the workspace: a
/// file past it is split along its concerns.
const MOST_LINES_ANYWHERE: usize = 700;

#[test]
fn no_source_file_outside_the_tests_is_over_700_lines() {
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root().join(dir), &mut files);
    }
    files.sort();
    let long: Vec<String> = files
        .iter()
        .filter(|f| !is_test_module(f) && !f.contains("_tests"))
        .filter_map(|f| {
            let lines = read(f).lines().count();
            (lines > MOST_LINES_ANYWHERE).then(|| format!("{f} ({lines} lines)"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "source files over {MOST_LINES_ANYWHERE} lines (split each along its concerns):\n  {}",
        long.join("\n  ")
    );
}

/// The crate roots of the workspace.
const ROOTS: [&str; 6] = [
    "src/lib.rs",
    "src/main.rs",
    "events/src/lib.rs",
    "projections/src/lib.rs",
    "demo/src/lib.rs",
    "benches/src/main.rs",
];

/// What a crate root defines, line by line: every item at its top level but its modules,
/// its imports and re-exports, `main`, and the process's allocator (which Rust takes from
/// any module, and which belongs with `main`).
fn defined_in_root(code: &str) -> Vec<String> {
    let code = without_test_modules(code);
    let kinds = [
        "struct ",
        "enum ",
        "fn ",
        "async fn ",
        "const ",
        "static ",
        "type ",
        "trait ",
        "impl",
        "union ",
        "macro_rules!",
    ];
    code.lines()
        .filter(|line| !line.starts_with([' ', '\t', '/', '#', '}']))
        .map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
            line.strip_prefix("pub ").unwrap_or(line)
        })
        .filter(|line| kinds.iter().any(|k| line.starts_with(k)))
        .filter(|line| !line.starts_with("fn main()"))
        .filter(|line| !line.starts_with("static GLOBAL: mimalloc::MiMalloc"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn no_crate_root_defines_anything_but_main() {
    let mut defined = Vec::new();
    for root_file in ROOTS {
        for item in defined_in_root(&read(root_file)) {
            defined.push(format!("{root_file}: {item}"));
        }
    }
    assert!(
        defined.is_empty(),
        "a crate root declares its modules and re-exports; these belong in a module:\n  {}",
        defined.join("\n  ")
    );
}

#[test]
fn a_root_that_defines_an_item_is_found() {
    let root =
        "mod a;\npub use a::B;\n\n/// Doc.\npub enum StoreError {\n    X,\n}\n\nfn main() {}\n";
    assert_eq!(defined_in_root(root), ["enum StoreError {"]);
    assert!(defined_in_root("mod a;\n#[cfg(test)]\nmod tests;\n").is_empty());
}
