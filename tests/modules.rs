//! The module graph of each crate of the workspace, read from its sources: which module
//! names which (in `use` trees and in paths written out), resolved through re-exports to
//! the module that defines the name, and the circles among modules that share a parent.
//! `tests/architecture.rs` holds every crate to having none.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::architecture::{code_of, root, rust_files, without_test_modules};

/// A module by its path from the crate's root: `[]` is the root, `[http, documents]` is
/// `http::documents`.
pub(crate) type Module = Vec<String>;

/// The crates whose module trees are held to no circle: the directory of their sources,
/// and the file that is their root.
pub(crate) const CRATES: &[(&str, &str)] = &[
    ("src", "lib.rs"),
    ("events/src", "lib.rs"),
    ("projections/src", "lib.rs"),
    ("demo/src", "lib.rs"),
    ("benches/src", "main.rs"),
];

/// The module of a file, from its path under the crate's directory: `lib.rs` and
/// `main.rs` are the root, `fold.rs` and `ids/mod.rs` are `[fold]` and `[ids]`,
/// `ids/runs.rs` is `[ids, runs]`.
pub(crate) fn module_path(file: &str) -> Module {
    let mut parts: Vec<String> = file.split('/').map(str::to_owned).collect();
    if let Some(last) = parts.pop() {
        let stem = last.strip_suffix(".rs").unwrap_or(&last);
        if parts.is_empty() && ["lib", "main"].contains(&stem) {
            return Vec::new();
        }
        if stem != "mod" {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// Every path a `use` tree names, expanded: `crate::{keys, docs::{self, Doc as D}}` names
/// `crate::keys`, `crate::docs::self` and `crate::docs::Doc` (known here as `D`): each
/// with the name it is known by.
fn expand_use(prefix: &str, tree: &str, out: &mut Vec<(String, String)>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path.trim(), alias.trim()),
            None => (tree, tree.rsplit("::").next().unwrap_or(tree).trim()),
        };
        // `docs::{self}` is known as `docs`.
        let alias = if alias == "self" {
            prefix
                .trim_end_matches("::")
                .rsplit("::")
                .next()
                .unwrap_or(alias)
        } else {
            alias
        };
        if !path.is_empty() {
            out.push((format!("{prefix}{path}"), alias.to_owned()));
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

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// What a module's code imports: each path of its `use` trees, with the name it is known
/// by in the module.
pub(crate) fn imports(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("use ") {
        // A `use` item starts its line, after its visibility if any.
        let line_start = code[..at].rfind('\n').map_or(0, |n| n + 1);
        let before = code[line_start..at].trim();
        if !(before.is_empty() || before.starts_with("pub")) || before.contains(' ') {
            continue;
        }
        let tree = &code[at + 4..];
        let tree = &tree[..tree.find(';').unwrap_or(tree.len())];
        let path_like = |c: char| is_ident(c) || c.is_whitespace() || ":{},*".contains(c);
        if tree.chars().all(path_like) {
            expand_use("", tree, &mut out);
        }
    }
    out
}

/// The paths a module's code names: those of its `use` trees, and those written out
/// through `crate::`, `super::` or `self::` (`crate::fold::read`, `super::docs::seal`).
pub(crate) fn paths_named(code: &str) -> Vec<String> {
    let mut paths: Vec<String> = imports(code).into_iter().map(|(p, _)| p).collect();
    for start in ["crate", "super", "self"] {
        paths.extend(paths_from(code, start));
    }
    paths
}

/// The paths written out from `start` (`crate`, or a module's name): `start::a::b`.
pub(crate) fn paths_from(code: &str, start: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(&format!("{start}::")) {
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
    paths
}

/// One crate's modules: each with its imports (name known by, path), and the file that
/// is each one.
pub(crate) struct Tree {
    /// The crate's directory, from the repository's root.
    pub dir: String,
    files: BTreeMap<Module, String>,
    imports: BTreeMap<Module, BTreeMap<String, String>>,
    /// The items each module's own file defines: name -> kind (`struct`, `fn`, ...).
    defined: BTreeMap<Module, BTreeMap<String, String>>,
    code: BTreeMap<Module, String>,
}

/// Whether a module is a test module: one whose name has `tests` in it, or that its
/// parent declares only under `#[cfg(test)]`.
fn is_test(module: &Module, test_only: &BTreeSet<Module>) -> bool {
    module.iter().any(|m| m.contains("tests"))
        || (1..=module.len()).any(|n| test_only.contains(&module[..n].to_vec()))
}

/// The modules a file declares only under `#[cfg(test)]` (`#[cfg(test)] mod fixtures;`).
fn test_only_children(module: &Module, code: &str) -> Vec<Module> {
    let lines: Vec<&str> = code.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| {
            let name = w[1]
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ")
                .strip_prefix("mod ")?
                .strip_suffix(';')?;
            let mut child = module.clone();
            child.push(name.trim().to_owned());
            Some(child)
        })
        .collect()
}

impl Tree {
    /// The crate whose sources are in `dir`, rooted at `root_file`; its test modules left
    /// out.
    pub fn read(dir: &str, root_file: &str) -> Tree {
        let mut all = Vec::new();
        rust_files(&root().join(dir), &mut all);
        let sources = all.iter().map(|file| {
            let relative = file[dir.len() + 1..].to_owned();
            (relative, code_of(file))
        });
        Tree::of(dir, root_file, sources)
    }

    /// The crate of these sources (each file's path under `dir`, and its code without
    /// comments), rooted at `root_file`; its test modules left out.
    pub fn of(
        dir: &str,
        root_file: &str,
        sources: impl IntoIterator<Item = (String, String)>,
    ) -> Tree {
        let roots = ["lib.rs", "main.rs"];
        let mut code = BTreeMap::new();
        let mut files = BTreeMap::new();
        let mut test_only = BTreeSet::new();
        for (relative, text) in sources {
            // A crate's other root (the binary beside a library) is a crate of its own.
            if roots.contains(&relative.as_str()) && relative != root_file {
                continue;
            }
            let module = module_path(&relative);
            let text = without_test_modules(&text);
            test_only.extend(test_only_children(&module, &text));
            code.insert(module.clone(), text);
            files.insert(module, format!("{dir}/{relative}"));
        }
        code.retain(|m, _| !is_test(m, &test_only));
        files.retain(|m, _| code.contains_key(m));
        let imports = code
            .iter()
            .map(|(m, text)| {
                let named = imports(text).into_iter().map(|(path, alias)| (alias, path));
                (m.clone(), named.collect())
            })
            .collect();
        let defined = code
            .iter()
            .map(|(m, text)| (m.clone(), defined(text)))
            .collect();
        Tree {
            dir: dir.to_owned(),
            files,
            imports,
            defined,
            code,
        }
    }

    /// The file of a module.
    pub fn file(&self, module: &Module) -> &str {
        &self.files[module]
    }

    fn is_module(&self, module: &Module) -> bool {
        self.files.contains_key(module)
    }

    /// The module that `path`, written in `at`, reaches: the deepest module it names, or
    /// where the name it goes on with is imported from, if the module imports it; `None`
    /// for a path outside the crate.
    pub fn resolve(&self, at: &Module, path: &str) -> Option<Module> {
        self.resolve_in(at, path, 8)
    }

    fn resolve_in(&self, at: &Module, path: &str, depth: usize) -> Option<Module> {
        let (mut here, mut segments) = match self.start(at, path, depth)? {
            Start::Module(here, segments) => (here, segments),
            Start::Imported(path) => return self.resolve_in(at, &path, depth - 1),
        };
        while let Some(next) = segments.next() {
            match next {
                "super" => {
                    here.pop();
                }
                "self" | "*" => {}
                name => {
                    let mut child = here.clone();
                    child.push(name.to_owned());
                    if self.is_module(&child) {
                        here = child;
                        continue;
                    }
                    // An item of `here`, or one it imports from elsewhere.
                    let imported = self.imports.get(&here).and_then(|i| i.get(name));
                    if let Some(imported) = imported.filter(|_| depth > 0) {
                        let rest = continued(imported, segments);
                        return self.resolve_in(&here, &rest, depth - 1).or(Some(here));
                    }
                    return Some(here);
                }
            }
        }
        Some(here)
    }

    /// Each use of one module by another that is neither inside it nor holds it, with
    /// the first file that makes it: `(from, to) -> file`.
    pub fn uses(&self) -> BTreeMap<(Module, Module), String> {
        let mut out = BTreeMap::new();
        for (module, code) in &self.code {
            for path in paths_named(code) {
                let Some(to) = self.resolve(module, &path) else {
                    continue;
                };
                let nested = to.starts_with(module) || module.starts_with(&to);
                if !nested {
                    out.entry((module.clone(), to))
                        .or_insert_with(|| self.files[module].clone());
                }
            }
        }
        out
    }
}

/// The items a module's own file defines at its top level, by name, with their kind
/// (`struct`, `enum`, `trait`, `type`, `union`, `fn`, `const`, `static`, `macro`):
/// not its modules, imports or `impl`s.
pub(crate) fn defined(code: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in code.lines() {
        if line.starts_with(|c: char| c.is_whitespace() || "/#}".contains(c)) {
            continue;
        }
        let mut rest = line.trim();
        if let Some(after) = rest.strip_prefix("pub") {
            rest = match after.strip_prefix('(') {
                Some(inner) => inner.split_once(')').map_or("", |(_, r)| r),
                None => after,
            }
            .trim_start();
        }
        for qualifier in ["default ", "async ", "unsafe ", "extern \"C\" "] {
            rest = rest.strip_prefix(qualifier).unwrap_or(rest);
        }
        if rest.starts_with("const fn ") || rest.starts_with("const unsafe fn ") {
            rest = rest
                .trim_start_matches("const ")
                .trim_start_matches("unsafe ");
        }
        let kinds = [
            "struct", "enum", "trait", "type", "union", "fn", "const", "static",
        ];
        let (kind, after) = match rest.strip_prefix("macro_rules!") {
            Some(after) => ("macro", after),
            None => {
                let Some((kind, after)) = rest.split_once(' ') else {
                    continue;
                };
                if !kinds.contains(&kind) {
                    continue;
                }
                (kind, after)
            }
        };
        let after = after.trim_start().trim_start_matches("mut ");
        let name: String = after.chars().take_while(|c| is_ident(*c)).collect();
        if !name.is_empty() {
            out.insert(name, kind.to_owned());
        }
    }
    out
}

/// Where a path written in a module leads, read segment by segment from where it starts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reached {
    /// A module of the crate.
    Module(Module),
    /// An item that a module's own file defines: the module, the item's name and kind
    /// (`item` where a macro of the module makes it).
    Defined(Module, String, String),
    /// A name a module imports or re-exports, and the path it has it from.
    Imported(Module, String, String),
    /// All of a module's names, by `*`.
    Glob(Module),
    /// A name of a module that imports all of another's (`use x::*;`) and neither
    /// defines nor imports it by name.
    Unknown(Module, String),
}

impl Tree {
    /// Where `path`, written in `at`, leads: `None` for a path outside the crate. Unlike
    /// [`Tree::resolve`] it stops at the first module that has the name it goes on with,
    /// whether that module defines it or imports it; a name `at` imports itself (`use
    /// super::docs;` then `docs::seal`) is followed.
    pub fn reach(&self, at: &Module, path: &str) -> Option<Reached> {
        self.reach_in(at, path, 8)
    }

    fn reach_in(&self, at: &Module, path: &str, depth: usize) -> Option<Reached> {
        let (mut here, segments) = match self.start(at, path, depth)? {
            Start::Module(here, segments) => (here, segments),
            Start::Imported(path) => return self.reach_in(at, &path, depth - 1),
        };
        let mut segments = segments.peekable();
        while let Some(next) = segments.next() {
            match next {
                "super" => {
                    here.pop();
                }
                "self" => {}
                "*" => return Some(Reached::Glob(here)),
                name => {
                    let mut child = here.clone();
                    child.push(name.to_owned());
                    let name = name.to_owned();
                    let kind = self.defined.get(&here).and_then(|d| d.get(&name));
                    // A module and an item may share a name (`mod guard;` beside `fn
                    // guard`): a path that ends there names the item too.
                    let last = segments.peek().is_none();
                    if self.is_module(&child) && !(last && kind.is_some()) {
                        here = child;
                        continue;
                    }
                    if let Some(kind) = kind {
                        return Some(Reached::Defined(here, name, kind.clone()));
                    }
                    if let Some(from) = self.imports.get(&here).and_then(|i| i.get(&name)) {
                        return Some(Reached::Imported(here, name, from.clone()));
                    }
                    // What a module neither defines nor imports by name is a glob's, or
                    // an item one of its macros makes (`tag!(MarketType = "market");`).
                    let globs = self.imports.get(&here).is_some_and(|i| i.contains_key("*"));
                    if globs {
                        return Some(Reached::Unknown(here, name));
                    }
                    return Some(Reached::Defined(here, name, "item".to_owned()));
                }
            }
        }
        Some(Reached::Module(here))
    }

    /// The main type of a module, which the modules inside it may name: the one struct,
    /// enum or trait of its own file that is named for it ([`named_for`]); `None` where
    /// its file defines none, or more than one.
    pub fn main_type(&self, module: &Module) -> Option<&str> {
        let name = module.last()?;
        let mut named = self.defined.get(module)?.iter().filter(|(item, kind)| {
            ["struct", "enum", "trait"].contains(&kind.as_str()) && named_for(name, item)
        });
        match (named.next(), named.next()) {
            (Some((item, _)), None) => Some(item),
            _ => None,
        }
    }

    /// Each name a module names out of place, one line each with its file: an item of a
    /// module that holds it (its parent's own items, or any ancestor's) other than that
    /// module's main type ([`Tree::main_type`]); a name reached through another module's
    /// import or re-export rather than in the module that defines it; and a name whose
    /// home this reader cannot tell.
    pub fn misplaced_names(&self) -> Vec<String> {
        self.names_of_parents().0
    }

    /// Each use of a parent's main type by a module inside it, as `file: Type`: the one
    /// kind of name of a parent's that [`Tree::misplaced_names`] lets through.
    pub fn parents_main_types(&self) -> BTreeSet<String> {
        self.names_of_parents().1
    }

    /// [`Tree::misplaced_names`], and [`Tree::parents_main_types`].
    fn names_of_parents(&self) -> (Vec<String>, BTreeSet<String>) {
        let mut out = BTreeSet::new();
        let mut main_types = BTreeSet::new();
        for (module, code) in &self.code {
            let file = &self.files[module];
            let mut paths = paths_named(code);
            // And the paths that start with a module's name: a child's (`cards::render`)
            // or one the module imports (`use crate::docs;` then `docs::seal`).
            let children = self
                .files
                .keys()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
                .filter_map(|m| m.last().cloned());
            let imported = self.imports[module]
                .keys()
                .filter(|name| matches!(self.reach(module, name), Some(Reached::Module(_))));
            for name in children.chain(imported.cloned()) {
                paths.extend(paths_from(code, &name));
            }
            for path in paths {
                let holds = |m: &Module| m.len() < module.len() && module.starts_with(m);
                let line = match self.reach(module, &path) {
                    Some(Reached::Defined(at, name, kind)) if holds(&at) => {
                        if self.main_type(&at) == Some(name.as_str()) {
                            main_types.insert(format!("{file}: {name}"));
                            continue;
                        }
                        format!(
                            "{file}: `{path}` names {kind} `{name}` of {}, which holds it \
                             (give it a module of its own beside its users)",
                            shown(&self.dir, &at)
                        )
                    }
                    Some(Reached::Glob(at)) if holds(&at) => {
                        format!(
                            "{file}: `{path}` names every item of {}, which holds it",
                            shown(&self.dir, &at)
                        )
                    }
                    Some(Reached::Imported(at, name, from)) if &at != module => {
                        let home = self
                            .resolve(module, &path)
                            .map_or_else(|| from.clone(), |m| shown(&self.dir, &m));
                        format!(
                            "{file}: `{path}` reaches `{name}` through `use {from}` in {} \
                             (name it where it is defined: {home})",
                            shown(&self.dir, &at)
                        )
                    }
                    Some(Reached::Unknown(at, name)) if &at != module => format!(
                        "{file}: `{path}`: {} neither defines nor imports `{name}` by name \
                         (through its `*`?)",
                        shown(&self.dir, &at)
                    ),
                    _ => continue,
                };
                out.insert(line);
            }
        }
        (out.into_iter().collect(), main_types)
    }
}

/// Whether a type named `name` is named for module `module`: its name ends with the
/// module's in UpperCamelCase, or with that in the plural (`session`: `Session`;
/// `snapshot`: `Snapshots`; `ids`: `AppliedIds`).
pub(crate) fn named_for(module: &str, name: &str) -> bool {
    let camel: String = module
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect();
    !camel.is_empty() && (name.ends_with(&camel) || name.ends_with(&format!("{camel}s")))
}

/// Where a path written in a module starts ([`Tree::start`]).
enum Start<'p> {
    /// At the module its first segment names, with the segments after it.
    Module(Module, Box<dyn Iterator<Item = &'p str> + 'p>),
    /// At a name the module imports (`use super::docs;` then `docs::seal`): the path it
    /// stands for, with the segments written after it, to follow instead.
    Imported(String),
}

impl Tree {
    /// Where `path`, written in `at`, starts: `None` outside the crate, or where an import
    /// leads back to the path itself or `depth` imports have been followed.
    fn start<'p>(&self, at: &Module, path: &'p str, depth: usize) -> Option<Start<'p>> {
        let mut segments = path.split("::").map(str::trim).filter(|s| !s.is_empty());
        let here = match segments.next()? {
            "crate" => Vec::new(),
            "self" => at.clone(),
            "super" => at[..at.len().saturating_sub(1)].to_vec(),
            name => {
                let mut child = at.clone();
                child.push(name.to_owned());
                if !self.is_module(&child) {
                    let imported = self.imports.get(at)?.get(name)?;
                    if depth == 0 || imported == path {
                        return None;
                    }
                    return Some(Start::Imported(continued(imported, segments)));
                }
                child
            }
        };
        Some(Start::Module(here, Box::new(segments)))
    }
}

/// The path an imported name stands for, with the segments written after the name.
fn continued<'a>(imported: &str, after: impl Iterator<Item = &'a str>) -> String {
    after.fold(imported.to_owned(), |path, s| format!("{path}::{s}"))
}

/// Uses between the modules that share a parent: a use from anywhere inside one to
/// anywhere inside another counts as one of the first by the second. By parent, each
/// module's uses of its siblings, with the file that first makes each.
pub(crate) type Levels = BTreeMap<Module, BTreeMap<Module, BTreeMap<Module, String>>>;

/// [`Tree::uses`] by level: each use between two modules is one between the children of
/// their closest common parent that hold them.
pub(crate) fn by_level(uses: &BTreeMap<(Module, Module), String>) -> Levels {
    let mut levels = Levels::new();
    for ((from, to), file) in uses {
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        let parent = from[..common].to_vec();
        let (a, b) = (from[..=common].to_vec(), to[..=common].to_vec());
        levels
            .entry(parent)
            .or_default()
            .entry(a)
            .or_default()
            .entry(b)
            .or_insert_with(|| file.clone());
    }
    levels
}

/// The circles of `uses`: each set of modules that reach each other (a strongly
/// connected component of more than one), in order.
pub(crate) fn circles(uses: &BTreeMap<Module, BTreeMap<Module, String>>) -> Vec<BTreeSet<Module>> {
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for to in uses.get(&m).into_iter().flat_map(|t| t.keys()) {
                if seen.insert(to.clone()) {
                    todo.push(to.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> = uses.keys().map(|m| (m, reach(m))).collect();
    let mut found: Vec<BTreeSet<Module>> = Vec::new();
    for (m, from_m) in &reached {
        if !from_m.contains(*m) || found.iter().any(|c| c.contains(*m)) {
            continue;
        }
        let circle: BTreeSet<Module> = from_m
            .iter()
            .filter(|o| reached.get(o).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        found.push(circle);
    }
    found
}

/// One shortest way round a circle, from its first module back to it.
pub(crate) fn way_round(
    uses: &BTreeMap<Module, BTreeMap<Module, String>>,
    circle: &BTreeSet<Module>,
) -> Vec<Module> {
    let Some(start) = circle.first() else {
        return Vec::new();
    };
    let mut came_from: BTreeMap<Module, Module> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
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

/// A module as a reader finds it: the crate's directory and its path (`src/http/route`).
pub(crate) fn shown(dir: &str, module: &Module) -> String {
    if module.is_empty() {
        format!("{dir}/ (the root)")
    } else {
        format!("{dir}/{}", module.join("/"))
    }
}

/// What a crate's circles are, one paragraph each: the modules, a way round, and each use
/// that closes it.
pub(crate) fn report(tree: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    for uses in by_level(&tree.uses()).values() {
        for circle in circles(uses) {
            let way: Vec<String> = way_round(uses, &circle)
                .iter()
                .map(|m| shown(&tree.dir, m))
                .collect();
            let edges: Vec<String> = circle
                .iter()
                .flat_map(|m| {
                    uses[m]
                        .iter()
                        .filter(|(to, _)| circle.contains(*to))
                        .map(move |(to, file)| {
                            format!(
                                "    {} -> {} ({file})",
                                shown(&tree.dir, m),
                                shown(&tree.dir, to)
                            )
                        })
                })
                .collect();
            out.push(format!(
                "{} modules in a circle, e.g. {}; their uses of each other:\n{}",
                circle.len(),
                way.join(" -> "),
                edges.join("\n")
            ));
        }
    }
    out
}
