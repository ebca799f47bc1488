//! Every fact a person or an agent sends is remembered under the conflict rule (issue 28,
//! item 3): the surfaces — the HTTP server, the MCP tools, the CLI, the SDK — call
//! `agent::remember` (`rules::conflicts::remember`), never the semantic tier's raw writes
//! (`SemanticMemory::remember`, `remember_many_unchecked`, `remember_quarantined`), which
//! skip the conflict check. Inside this crate only the rule itself, the tier and the
//! benchmarks' bulk loads call them. The scanner is checked to find a planted call.

#![allow(clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

/// The crates a person or an agent reaches memory through.
const SURFACES: [&str; 4] = ["server", "mcp", "cli", "sdk"];

/// The files of this crate allowed to call the raw writes (relative to `src/`).
const ALLOWED_IN_MEMORY: [&str; 5] = [
    "rules/conflicts.rs",
    "tiers/semantic.rs",
    "store.rs",
    "bench/locomo.rs",
    "bench/synthetic.rs",
];

/// The raw writes called in `text`: `remember_many_unchecked(`, `remember_quarantined(`, or
/// `semantic()` followed (whitespace aside) by `.remember(`. Comments are skipped.
fn raw_writes(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    for needle in [
        ".remember_many_unchecked(",
        ".remember_quarantined(",
        "semantic().remember(",
    ] {
        if squeezed.contains(needle) {
            out.push(needle.to_owned());
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn crates_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_scanner_finds_a_raw_write() {
    assert_eq!(
        raw_writes("let f = m\n    .semantic()\n    .remember(fact)?;"),
        vec!["semantic().remember(".to_owned()]
    );
    assert_eq!(
        raw_writes("store.semantic().remember_many_unchecked(batch)"),
        vec![".remember_many_unchecked(".to_owned()]
    );
    assert!(raw_writes("// m.semantic().remember(fact)\nagent::remember(m, args)").is_empty());
    assert!(raw_writes("crate::rules::conflicts::remember(store, new, extra)").is_empty());
}

#[test]
fn surfaces_remember_facts_under_the_conflict_rule() {
    let mut offenders = Vec::new();
    let mut read = 0;
    for surface in SURFACES {
        let mut files = Vec::new();
        rust_files(&crates_dir().join(surface).join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read a source file");
            read += 1;
            for call in raw_writes(&text) {
                offenders.push(format!("{}: {call}", file.display()));
            }
        }
    }
    assert!(read > 20, "read only {read} surface files");
    let src = crates_dir().join("memory").join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if ALLOWED_IN_MEMORY.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("read a source file");
        for call in raw_writes(&text) {
            offenders.push(format!("{}: {call}", file.display()));
        }
    }
    assert!(
        offenders.is_empty(),
        "facts written around the conflict rule (use agent::remember / \
         rules::conflicts::remember): {offenders:#?}"
    );
}
