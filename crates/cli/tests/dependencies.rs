//! The workspace's dependencies, checked against the code:
//!
//! - every dependency a crate declares is used by its code (normal ones by `src/`, dev ones by
//!   its tests, benches, examples or `#[cfg(test)]` modules), and every entry of the root
//!   `[workspace.dependencies]` is used by some crate;
//! - the crate graph drawn in `docs/architecture.md` is the one `cargo metadata` reports, and
//!   every edge against the one-way rule is marked there;
//! - the picture above it names every crate, in the same layer, with every edge.
//!
//! Installing `cargo-machete` in CI compiles 67 crates (18 minutes on the shared build machine); this
//! test does the same job with what the workspace already builds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;
use serde_json::Value;

/// Dependencies that are declared on purpose without a path in the code, with the reason.
/// Keep it short: every entry is a dependency this test cannot see being used.
const ALLOWED_UNUSED: &[(&str, &str, &str)] = &[];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(repo_root().join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One declared dependency of a workspace crate.
struct Declared {
    package: String,
    dependency: String,
    /// The name the code uses (`rename`, else the package name, `-` → `_`).
    ident: String,
    dev: bool,
}

/// Workspace crates: (package name, crate directory) and their declared dependencies.
fn workspace(meta: &Value) -> (Vec<(String, PathBuf)>, Vec<Declared>) {
    let mut crates = Vec::new();
    let mut declared = Vec::new();
    for package in meta["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_owned();
        let dir = Path::new(package["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .to_path_buf();
        for dep in package["dependencies"].as_array().unwrap() {
            let dependency = dep["name"].as_str().unwrap().to_owned();
            let kind = dep["kind"].as_str();
            if kind == Some("build") {
                continue;
            }
            let ident = dep["rename"]
                .as_str()
                .unwrap_or(&dependency)
                .replace('-', "_");
            declared.push(Declared {
                package: name.clone(),
                dependency,
                ident,
                dev: kind == Some("dev"),
            });
        }
        crates.push((name, dir));
    }
    (crates, declared)
}

/// The Rust sources under `dir`, comment lines removed.
fn sources(dir: &Path) -> String {
    fn walk(dir: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                for line in std::fs::read_to_string(&path).unwrap().lines() {
                    if !line.trim_start().starts_with("//") {
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
        }
    }
    let mut out = String::new();
    walk(dir, &mut out);
    out
}

fn uses(code: &str, ident: &str) -> bool {
    let ident = regex::escape(ident);
    Regex::new(&format!(
        r"\b{ident}\s*::|\buse\s+{ident}\b|\bextern\s+crate\s+{ident}\b"
    ))
    .unwrap()
    .is_match(code)
}

#[test]
fn every_declared_dependency_is_used() {
    let (crates, declared) = workspace(&metadata());
    let mut src = BTreeMap::new();
    let mut other = BTreeMap::new();
    for (name, dir) in &crates {
        src.insert(name.clone(), sources(&dir.join("src")));
        let mut rest = String::new();
        for sub in ["tests", "benches", "examples"] {
            rest.push_str(&sources(&dir.join(sub)));
        }
        other.insert(name.clone(), rest);
    }
    let mut problems = Vec::new();
    for dep in &declared {
        let allowed = ALLOWED_UNUSED
            .iter()
            .any(|(p, d, _)| *p == dep.package && *d == dep.dependency);
        if allowed {
            continue;
        }
        let in_src = uses(&src[&dep.package], &dep.ident);
        let in_other = uses(&other[&dep.package], &dep.ident);
        if dep.dev && !in_src && !in_other {
            problems.push(format!(
                "{}: dev-dependency `{}` is not used: remove it",
                dep.package, dep.dependency
            ));
        } else if !dep.dev && !in_src && in_other {
            problems.push(format!(
                "{}: `{}` is used only by tests, benches or examples: make it a dev-dependency",
                dep.package, dep.dependency
            ));
        } else if !dep.dev && !in_src {
            problems.push(format!(
                "{}: dependency `{}` is not used: remove it",
                dep.package, dep.dependency
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "unused dependencies (or add them to ALLOWED_UNUSED in {} with the reason):\n  {}",
        file!(),
        problems.join("\n  ")
    );
}

#[test]
fn every_workspace_dependency_is_used_by_a_crate() {
    let (_, declared) = workspace(&metadata());
    let used: BTreeSet<&str> = declared.iter().map(|d| d.dependency.as_str()).collect();
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let key = Regex::new(r"^([A-Za-z0-9_-]+)\s*=").unwrap();
    let listed: Vec<String> = manifest
        .lines()
        .skip_while(|l| l.trim() != "[workspace.dependencies]")
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| key.captures(l).map(|c| c[1].to_owned()))
        .collect();
    assert!(listed.iter().any(|d| d == "serde"), "parsed {listed:?}");
    let unused: Vec<&String> = listed
        .iter()
        .filter(|d| !used.contains(d.as_str()))
        .collect();
    assert!(
        unused.is_empty(),
        "[workspace.dependencies] entries no crate uses: {unused:?}"
    );
}

/// The short name of a workspace crate (`mindgate-store` → `store`).
fn short(name: &str) -> &str {
    name.strip_prefix("mindgate-").unwrap_or(name)
}

/// The graph block of `docs/architecture.md`: layers and edges (`from → to, to (!)`).
struct DrawnGraph {
    layers: BTreeMap<String, u32>,
    edges: BTreeSet<(String, String)>,
    marked: BTreeSet<(String, String)>,
}

fn drawn_graph(doc: &str) -> DrawnGraph {
    const MARKER: &str = "<!-- crate graph: checked by crates/cli/tests/dependencies.rs -->";
    let after = doc
        .split_once(MARKER)
        .unwrap_or_else(|| panic!("docs/architecture.md lacks the line {MARKER}"))
        .1;
    let block = after
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a ```text block follows the marker")
        .0;
    let layer = Regex::new(r"^layer (\d+)[^:]*:\s*(.*)$").unwrap();
    let mut graph = DrawnGraph {
        layers: BTreeMap::new(),
        edges: BTreeSet::new(),
        marked: BTreeSet::new(),
    };
    for line in block.lines() {
        if let Some(c) = layer.captures(line) {
            for name in c[2].split(',').map(str::trim).filter(|n| !n.is_empty()) {
                graph.layers.insert(name.to_owned(), c[1].parse().unwrap());
            }
        } else if let Some((from, to)) = line.split_once('→') {
            for target in to.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let against = target.ends_with("(!)");
                let target = target.trim_end_matches("(!)").trim();
                let edge = (from.trim().to_owned(), target.to_owned());
                if against {
                    graph.marked.insert(edge.clone());
                }
                graph.edges.insert(edge);
            }
        }
    }
    graph
}

#[test]
fn architecture_doc_draws_the_real_crate_graph() {
    let meta = metadata();
    let (crates, declared) = workspace(&meta);
    let members: BTreeSet<&str> = crates.iter().map(|(n, _)| n.as_str()).collect();
    let real: BTreeSet<(String, String)> = declared
        .iter()
        .filter(|d| !d.dev && members.contains(d.dependency.as_str()))
        .map(|d| {
            (
                short(&d.package).to_owned(),
                short(&d.dependency).to_owned(),
            )
        })
        .collect();
    let doc = std::fs::read_to_string(repo_root().join("docs/architecture.md")).unwrap();
    let drawn = drawn_graph(&doc);
    let missing: Vec<_> = real.difference(&drawn.edges).collect();
    let extra: Vec<_> = drawn.edges.difference(&real).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/architecture.md's crate graph differs from `cargo metadata`:\n  edges not drawn: \
         {missing:?}\n  drawn edges that do not exist: {extra:?}"
    );
    let unplaced: Vec<&str> = members
        .iter()
        .map(|m| short(m))
        .filter(|m| !drawn.layers.contains_key(*m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "crates with no layer in docs/architecture.md: {unplaced:?}"
    );
    for (from, to) in &real {
        let downward = drawn.layers[from] > drawn.layers[to];
        let marked = drawn.marked.contains(&(from.clone(), to.clone()));
        assert!(
            downward != marked,
            "docs/architecture.md: {from} → {to} {}",
            if marked {
                "is marked (!) but follows the one-way rule"
            } else {
                "goes against the one-way rule (layer not below): mark it (!) and say why"
            }
        );
    }
}

/// The picture of `docs/architecture.md`: each crate's layer and the edges it draws
/// (`from ──► to, …` down the layers, `to ◄── from, …` into the base). Text in parentheses
/// is a note, not a crate.
fn drawn_picture(
    doc: &str,
    crates: &BTreeSet<&str>,
) -> (BTreeMap<String, u32>, BTreeSet<(String, String)>) {
    const MARKER: &str = "<!-- crate picture: checked by crates/cli/tests/dependencies.rs";
    let block = doc
        .split_once(MARKER)
        .and_then(|(_, after)| after.split_once("```\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .unwrap_or_else(|| panic!("docs/architecture.md lacks the picture after {MARKER}"))
        .0;
    let block = Regex::new(r"\([^)]*\)").unwrap().replace_all(block, "");
    let layer_prefix = Regex::new(r"^layer (\d+)\s+\S+\s+").unwrap();
    let known = |name: &str| {
        assert!(
            crates.contains(name),
            "docs/architecture.md's picture names {name:?}, not a workspace crate"
        );
        name.to_owned()
    };
    let (mut layers, mut edges) = (BTreeMap::new(), BTreeSet::new());
    let mut layer = None;
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let rest = match layer_prefix.captures(line) {
            Some(c) => {
                layer = Some(c[1].parse::<u32>().unwrap());
                &line[c[0].len()..]
            }
            None => line.trim(),
        };
        let (left, arrow, right) = if let Some((l, r)) = rest.split_once("──►") {
            (l, Some(true), r)
        } else if let Some((l, r)) = rest.split_once("◄──") {
            (l, Some(false), r)
        } else {
            (rest, None, "")
        };
        let name = known(left.trim());
        layers.insert(
            name.clone(),
            layer.expect("the picture starts with a layer"),
        );
        let others = right.split(',').map(str::trim).filter(|o| !o.is_empty());
        for other in others {
            let other = known(other);
            edges.insert(match arrow {
                Some(true) => (name.clone(), other),
                _ => (other, name.clone()),
            });
        }
    }
    (layers, edges)
}

#[test]
fn architecture_picture_shows_every_crate_and_edge() {
    let meta = metadata();
    let (crates, declared) = workspace(&meta);
    let members: BTreeSet<&str> = crates.iter().map(|(n, _)| short(n)).collect();
    let real: BTreeSet<(String, String)> = declared
        .iter()
        .filter(|d| !d.dev && crates.iter().any(|(n, _)| *n == d.dependency))
        .map(|d| {
            (
                short(&d.package).to_owned(),
                short(&d.dependency).to_owned(),
            )
        })
        .collect();
    let doc = std::fs::read_to_string(repo_root().join("docs/architecture.md")).unwrap();
    let (layers, edges) = drawn_picture(&doc, &members);
    let missing: Vec<_> = real.difference(&edges).collect();
    let extra: Vec<_> = edges.difference(&real).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/architecture.md's picture differs from `cargo metadata`:\n  edges not drawn: \
         {missing:?}\n  drawn edges that do not exist: {extra:?}"
    );
    let unplaced: Vec<&&str> = members
        .iter()
        .filter(|m| !layers.contains_key(**m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "crates missing from docs/architecture.md's picture: {unplaced:?}"
    );
    let listed = drawn_graph(&doc).layers;
    assert_eq!(
        layers, listed,
        "docs/architecture.md: the picture's layers differ from the edge list's"
    );
}
