//! No crate's source has an import cycle between sibling modules (see
//! `mindgate_testkit::module_graph` for the rule), and the reader finds one when it is there.

#![allow(clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use mindgate_testkit::module_graph::ModuleGraph;

/// Crates whose source still has an import cycle (each to be untangled and removed from
/// here). Their cycles are printed, not failed; every other crate must have none. Empty
/// since the server's services stopped naming the state's parts' modules (issue 25).
const STILL_CYCLIC: [&str; 0] = [];

fn crates_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dir");
    std::fs::write(path, text).expect("write file");
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut found = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(crates_dir()).expect("read crates/") {
        let dir = entry.expect("entry").path();
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        read += 1;
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let cycles = ModuleGraph::read(&src)
            .expect("read the crate's source")
            .cycles();
        let known = STILL_CYCLIC.contains(&name.as_str());
        if known && cycles.is_empty() {
            println!("note: {name} has no import cycle any more: remove it from STILL_CYCLIC");
        }
        for cycle in cycles {
            let line = format!(
                "{name}: {}\n    {}",
                cycle.modules.join(", "),
                cycle.edges.join("\n    ")
            );
            if known {
                println!("known cycle (STILL_CYCLIC) {line}");
            } else {
                found.push(line);
            }
        }
    }
    assert!(read >= 10, "expected the workspace's crates, read {read}");
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn a_cycle_through_a_submodule_and_a_use_group_is_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    write(src, "lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    write(src, "a/mod.rs", "pub mod inner;\n");
    write(src, "a/inner.rs", "use crate::{b::{Thing, other}, c};\n");
    write(src, "b.rs", "pub fn f() { crate::c::g() }\n");
    write(src, "c.rs", "use super::a::inner::h;\n");
    let cycles = ModuleGraph::read(src).expect("read").cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].modules, ["crate::a", "crate::b", "crate::c"]);
    assert!(
        cycles[0]
            .edges
            .iter()
            .any(|e| e.starts_with("crate::c -> crate::a (c.rs names super::a::inner::h")),
        "{cycles:?}"
    );
}

#[test]
fn parents_and_children_and_inline_test_modules_are_not_cycles() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    write(src, "lib.rs", "pub mod a;\npub mod b;\n");
    write(
        src,
        "a/mod.rs",
        "mod child;\npub use child::X;\npub struct Y;\n",
    );
    write(src, "a/child.rs", "use super::Y;\npub struct X;\n");
    write(
        src,
        "b.rs",
        "use crate::a::X;\n// crate::b is not crate::a: a comment\n",
    );
    write(
        src,
        "a/other.rs",
        "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::b::Z;\n}\n",
    );
    assert_eq!(ModuleGraph::read(src).expect("read").cycles(), []);
}
