//! A crate's module graph read from its source text, and the import cycles in it.
//!
//! Every `.rs` file under `src/` is a module (`lib.rs`/`main.rs` the root, `a/mod.rs` and
//! `a.rs` the module `a`, `a/b.rs` the module `a::b`). Every path a file names that starts
//! with `crate::`, `super::` or `self::` (in `use` trees, braces expanded, and in code) is
//! an edge to the deepest module the path names. Inline modules (`mod tests { … }`) are
//! left out: they see their file through `super::`.
//!
//! A module may use its own submodules and they may use it (they are part of it): such
//! edges are left out. Every other edge is lifted to the two siblings under the modules'
//! lowest common ancestor, so `sqlite::search → hybrid` counts as `sqlite → hybrid`. The
//! rule is that siblings form a one-way graph; [`ModuleGraph::cycles`] lists the sibling
//! groups that reach each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path below the crate root (`["sqlite", "search"]`); the root is empty.
type ModulePath = Vec<String>;

/// The modules of one crate's `src/` and the lifted edges between siblings.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    modules: BTreeSet<ModulePath>,
    /// Sibling edge → one file and path that make it (for the message).
    edges: BTreeMap<(ModulePath, ModulePath), String>,
}

/// One import cycle: sibling modules that reach each other, with an edge that proves each
/// step (`"a -> b (a/x.rs names crate::b::y)"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The modules in the cycle (`crate::a`, `crate::b`), sorted.
    pub modules: Vec<String>,
    /// Each edge inside the cycle and where it comes from.
    pub edges: Vec<String>,
}

impl ModuleGraph {
    /// Reads every `.rs` file under `src` (except `src/bin`, whose files are crates of
    /// their own).
    ///
    /// # Errors
    /// When a directory or file cannot be read.
    pub fn read(src: &Path) -> std::io::Result<Self> {
        let mut files = Vec::new();
        collect_files(src, src, &mut files)?;
        let mut graph = Self::default();
        for (_, module) in &files {
            graph.modules.insert(module.clone());
        }
        for (file, module) in &files {
            let text = std::fs::read_to_string(file)?;
            let shown = file.strip_prefix(src).unwrap_or(file).display().to_string();
            for path in named_paths(&text) {
                if let Some(target) = graph.resolve(module, &path) {
                    graph.add_edge(module, &target, &shown, &path.join("::"));
                }
            }
        }
        Ok(graph)
    }

    /// The deepest known module `path` names from inside `from`, if any.
    fn resolve(&self, from: &[String], path: &[String]) -> Option<ModulePath> {
        let mut base: ModulePath = Vec::new();
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => rest = &path[1..],
            Some("self") => {
                base = from.to_vec();
                rest = &path[1..];
            }
            Some("super") => {
                base = from.to_vec();
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            _ => return None,
        }
        let mut target = base.clone();
        let mut best = base;
        for segment in rest {
            target.push(segment.clone());
            if self.modules.contains(&target) {
                best = target.clone();
            } else {
                break;
            }
        }
        Some(best)
    }

    fn add_edge(&mut self, from: &[String], to: &[String], file: &str, path: &str) {
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            return; // the module itself, an ancestor or a descendant
        }
        let key = (from[..=common].to_vec(), to[..=common].to_vec());
        self.edges
            .entry(key)
            .or_insert_with(|| format!("{file} names {path}"));
    }

    /// The groups of sibling modules that reach each other (strongly connected components
    /// of more than one module), each with the edges inside it.
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut adjacency: BTreeMap<&ModulePath, Vec<&ModulePath>> = BTreeMap::new();
        for (from, to) in self.edges.keys() {
            adjacency.entry(from).or_default().push(to);
        }
        let mut out = Vec::new();
        for component in strongly_connected(&adjacency) {
            if component.len() < 2 {
                continue;
            }
            let members: BTreeSet<&ModulePath> = component.iter().copied().collect();
            let edges = self
                .edges
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), why)| format!("{} -> {} ({why})", display(a), display(b)))
                .collect();
            let mut modules: Vec<String> = members.iter().map(|m| display(m)).collect();
            modules.sort();
            out.push(Cycle { modules, edges });
        }
        out
    }
}

fn display(module: &[String]) -> String {
    std::iter::once("crate")
        .chain(module.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

/// Tarjan's algorithm over a small graph (recursive: module trees are shallow and small).
fn strongly_connected<'a>(
    adjacency: &BTreeMap<&'a ModulePath, Vec<&'a ModulePath>>,
) -> Vec<Vec<&'a ModulePath>> {
    struct State<'a> {
        index: BTreeMap<&'a ModulePath, usize>,
        low: BTreeMap<&'a ModulePath, usize>,
        stack: Vec<&'a ModulePath>,
        on_stack: BTreeSet<&'a ModulePath>,
        out: Vec<Vec<&'a ModulePath>>,
    }
    fn visit<'a>(
        node: &'a ModulePath,
        adjacency: &BTreeMap<&'a ModulePath, Vec<&'a ModulePath>>,
        state: &mut State<'a>,
    ) {
        let n = state.index.len();
        state.index.insert(node, n);
        state.low.insert(node, n);
        state.stack.push(node);
        state.on_stack.insert(node);
        for &next in adjacency.get(node).into_iter().flatten() {
            if !state.index.contains_key(next) {
                visit(next, adjacency, state);
                let low = state.low[next].min(state.low[node]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(next) {
                let low = state.index[next].min(state.low[node]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack.remove(top);
                component.push(top);
                if top == node {
                    break;
                }
            }
            state.out.push(component);
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for &node in adjacency.keys() {
        if !state.index.contains_key(node) {
            visit(node, adjacency, &mut state);
        }
    }
    state.out
}

/// Every `.rs` file under `dir` with its module path.
fn collect_files(
    src: &Path,
    dir: &Path,
    out: &mut Vec<(PathBuf, ModulePath)>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if dir == src && path.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            collect_files(src, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let module = module_path(src, &path);
            out.push((path, module));
        }
    }
    Ok(())
}

fn module_path(src: &Path, file: &Path) -> ModulePath {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: ModulePath = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod") | Some("lib") | Some("main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of `text` without comment lines and without inline modules.
fn code_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut skip_until: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(end) = &skip_until {
            if line.trim_end() == end {
                skip_until = None;
            }
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let declares_inline = trimmed.trim_end().ends_with('{')
            && (trimmed.starts_with("mod ") || trimmed.starts_with("pub mod ") || {
                trimmed.starts_with("pub(") && trimmed.contains(") mod ")
            });
        if declares_inline {
            let indent = &line[..line.len() - trimmed.len()];
            skip_until = Some(format!("{indent}}}"));
            continue;
        }
        out.push(line);
    }
    out
}

/// Every `crate::`/`super::`/`self::` path the code names, as segments.
fn named_paths(text: &str) -> Vec<ModulePath> {
    let code = code_lines(text).join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use ") {
        let boundary = at == 0 || !is_ident_char(rest[..at].chars().next_back().unwrap_or(' '));
        let after = &rest[at + 4..];
        let Some(end) = after.find(';') else { break };
        if boundary {
            expand_tree(&[], after[..end].trim(), &mut out);
        }
        rest = &after[end..];
    }
    for root in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(root) {
            let at = from + found;
            from = at + root.len();
            if at > 0 && is_ident_char(code[..at].chars().next_back().unwrap_or(' ')) {
                continue;
            }
            out.push(path_at(&code[at..]));
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The `a::b::c` chain at the start of `text` (stops at `{`, `*` or anything else).
fn path_at(text: &str) -> ModulePath {
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let len = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        segments.push(rest[..len].to_owned());
        match rest[len..].strip_prefix("::") {
            Some(next) => rest = next.trim_start(),
            None => break,
        }
    }
    segments
}

/// Expands a `use` tree (`crate::{a::X, b::{Y, Z}}`) into full paths.
fn expand_tree(prefix: &[String], tree: &str, out: &mut Vec<ModulePath>) {
    let tree = tree.trim();
    let (head, group) = match tree.find('{') {
        Some(open) if tree.ends_with('}') => (&tree[..open], Some(&tree[open + 1..tree.len() - 1])),
        _ => (tree, None),
    };
    let mut path = prefix.to_vec();
    path.extend(path_at(head.trim()));
    match group {
        None => out.push(path),
        Some(inner) => {
            for part in split_top_level(inner) {
                expand_tree(&path, part, out);
            }
        }
    }
}

/// Splits a `use` group at its top-level commas.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}
