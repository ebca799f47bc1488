//! The reference documents cannot go stale: `docs/cli.md` and the flag index of
//! `docs/configuration.md` must equal what the binary generates from its clap definitions,
//! and `docs/configuration.md` must list exactly the environment variables the code reads.
//!
//! `UPDATE_GOLDEN=1 cargo test -p mindgate-cli --test reference` rewrites the generated
//! parts (the test kit's one golden-file rule).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use mindgate_testkit::golden::assert_golden;
use regex::Regex;

/// The command that regenerates the documents (after `UPDATE_GOLDEN=1`).
const REGENERATE_COMMAND: &str = "cargo test -p mindgate-cli --test reference";
const FLAGS_BEGIN: &str = "<!-- BEGIN generated flag index -->";
const FLAGS_END: &str = "<!-- END generated flag index -->";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn generated(doc: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mindgate"))
        .args(["reference", doc])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mindgate reference {doc}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Fails unless the checked-in `path` is `expected` (`UPDATE_GOLDEN=1` rewrites it).
fn check_or_update(path: &Path, expected: &str) {
    let shown = path
        .strip_prefix(repo_root())
        .unwrap_or(path)
        .display()
        .to_string();
    assert_golden(
        path,
        expected,
        &format!("{shown} (generated from the clap definitions)"),
        REGENERATE_COMMAND,
    );
}

#[test]
fn cli_reference_is_generated_from_the_clap_definitions() {
    let text = generated("cli");
    for command in [
        "`mindgate serve`",
        "`mindgate memory bench locomo`",
        "--keep-runs",
    ] {
        assert!(
            text.contains(command),
            "{command} missing from the reference"
        );
    }
    assert!(
        !text.contains("## `mindgate reference`"),
        "the hidden command leaked"
    );
    check_or_update(&repo_root().join("docs/cli.md"), &text);
}

#[test]
fn configuration_flag_index_is_generated_from_the_clap_definitions() {
    let path = repo_root().join("docs/configuration.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (Some(begin), Some(end)) = (doc.find(FLAGS_BEGIN), doc.find(FLAGS_END)) else {
        panic!(
            "{} must hold the markers {FLAGS_BEGIN} … {FLAGS_END}",
            path.display()
        );
    };
    let index = generated("flags");
    assert!(index.contains("| `--db <PATH_OR_URL>` |"), "{index}");
    let expected = format!("{}{FLAGS_BEGIN}\n{index}{}", &doc[..begin], &doc[end..]);
    check_or_update(&path, &expected);
}

/// Every file under `dir` (recursively, skipping `node_modules` and `target`) whose name
/// ends with one of `suffixes`.
fn files(dir: &Path, suffixes: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "node_modules" && name != "target" && !name.starts_with('.') {
                files(&path, suffixes, out);
            }
        } else if suffixes.iter().any(|s| name.ends_with(s)) {
            out.push(path);
        }
    }
}

/// Environment variables the code reads, each with the first file that names it.
///
/// Rust (`crates/*`): an all-caps string literal on a line that reads or sets the
/// environment (`env`/`var` on the line: `env::var("X")`, `var_os`, `try_from_env`,
/// `.env("X", …)`, clap `env = "X"`, the `PRODUCTION_VARS` list, …) or a
/// `const NAME: &str = "X";`. A literal right after `, ` is a value, not a name
/// (`.env([(KEY, "WARN")])`). Cargo's own `CARGO` and `CARGO_*` variables are left out.
/// Test harnesses and scripts: `os.environ.get("X")`, `process.env.X`, `${X:-…}`.
fn variables_in_code(root: &Path) -> BTreeMap<String, PathBuf> {
    let caps_literal = Regex::new(r#""([A-Z][A-Z0-9_]*)""#).unwrap();
    let env_line = Regex::new(r"(?i)env|var").unwrap();
    let const_line = Regex::new(r#"const [A-Z0-9_]+: &str = "([A-Z][A-Z0-9_]*)";"#).unwrap();
    let script_reads = Regex::new(
        r#"environ(?:\.get)?[\[(]"([A-Z][A-Z0-9_]*)"|getenv\("([A-Z][A-Z0-9_]*)"|process\.env\.([A-Z][A-Z0-9_]*)|\$\{([A-Z][A-Z0-9_]*):[-+=]"#,
    )
    .unwrap();
    let mut found = BTreeMap::new();
    let mut rust = Vec::new();
    files(&root.join("crates"), &[".rs"], &mut rust);
    for path in rust {
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let mut names = Vec::new();
            if env_line.is_match(code) {
                names.extend(
                    caps_literal
                        .captures_iter(code)
                        .filter(|c| !code[..c.get(0).unwrap().start()].trim_end().ends_with(','))
                        .map(|c| c[1].to_owned()),
                );
            }
            names.extend(const_line.captures_iter(code).map(|c| c[1].to_owned()));
            for name in names {
                if name != "CARGO" && !name.starts_with("CARGO_") && name.len() > 1 {
                    found.entry(name).or_insert_with(|| path.clone());
                }
            }
        }
    }
    let mut scripts = Vec::new();
    files(&root.join("tests"), &[".py", ".mjs", ".js"], &mut scripts);
    files(&root.join("scripts"), &[".sh", ".py"], &mut scripts);
    for path in scripts {
        let text = std::fs::read_to_string(&path).unwrap();
        for caps in script_reads.captures_iter(&text) {
            let name = (1..=4).find_map(|i| caps.get(i)).unwrap().as_str();
            if name != "CARGO" && !name.starts_with("CARGO_") {
                found.entry(name.to_owned()).or_insert_with(|| path.clone());
            }
        }
    }
    found
}

/// The variables `docs/configuration.md` documents: the backticked names in the first cell of
/// each table row under "## Environment variables".
fn documented_variables(doc: &str) -> BTreeSet<String> {
    let name = Regex::new(r"`([A-Z][A-Z0-9_]*)`").unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Environment variables"))
        .expect("docs/configuration.md has a \"## Environment variables\" section");
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(|cell| name.captures_iter(cell).map(|c| c[1].to_owned()))
        .collect()
}

#[test]
fn configuration_lists_exactly_the_environment_variables_the_code_reads() {
    let root = repo_root();
    let in_code = variables_in_code(&root);
    for known in [
        "MINDGATE_HOME",
        "MINDGATE_LOG",
        "DSH_HOME",
        "MINDGATE_EMBEDDER",
        "MINDGATE_BIN",
    ] {
        assert!(in_code.contains_key(known), "the scan missed {known}");
    }
    let doc = std::fs::read_to_string(root.join("docs/configuration.md")).unwrap();
    let documented = documented_variables(&doc);
    let missing: Vec<String> = in_code
        .iter()
        .filter(|(name, _)| !documented.contains(*name))
        .map(|(name, path)| {
            format!(
                "{name} (read in {})",
                path.strip_prefix(&root).unwrap_or(path).display()
            )
        })
        .collect();
    let stale: Vec<&String> = documented
        .iter()
        .filter(|name| !in_code.contains_key(*name))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/configuration.md, \"## Environment variables\":\n  read by the code but not \
         documented: {missing:?}\n  documented but read nowhere: {stale:?}"
    );
}
