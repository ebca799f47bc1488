//! Copies of fixture trees, so a test may grow, touch or remove their files.

use std::path::Path;

/// Copies the folder `from` into `to` (created), recursively, leaving out the fixture
/// generators (`*.py`) that live beside the fixtures they wrote. Panics on an I/O error (a
/// test's set-up).
pub fn copy_fixture_tree(from: &Path, to: &Path) {
    let fail = |what: &str, p: &Path, e: std::io::Error| -> ! {
        panic!("copy_fixture_tree: cannot {what} {}: {e}", p.display())
    };
    std::fs::create_dir_all(to).unwrap_or_else(|e| fail("create", to, e));
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| fail("list", from, e));
    for entry in entries {
        let p = entry.unwrap_or_else(|e| fail("list", from, e)).path();
        let Some(name) = p.file_name() else { continue };
        let dest = to.join(name);
        if p.is_dir() {
            copy_fixture_tree(&p, &dest);
        } else if p.extension().is_none_or(|x| x != "py") {
            std::fs::copy(&p, &dest).unwrap_or_else(|e| fail("copy", &p, e));
        }
    }
}
