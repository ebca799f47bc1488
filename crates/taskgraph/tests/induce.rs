//! Procedure induction over the fixture sessions of every format, and over the genuine
//! transcripts in `../shared/data/real-sessions` when present (`MINDGATE_REAL_SESSIONS`
//! overrides the folder; skipped when absent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{CLAUDE, CODEX, DSH, PI};
use mindgate_taskgraph::induce::{Induction, Refusal, induce};
use mindgate_taskgraph::{BuildOptions, Status, TaskGraph, build_session_graph, read_session};

fn graph(path: &str) -> TaskGraph {
    build_session_graph(
        &read_session(Path::new(path)).unwrap(),
        &BuildOptions::default(),
    )
}

fn values<'a>(p: &'a Induction, name: &str) -> &'a [String] {
    p.variables
        .iter()
        .find(|v| v.name == name)
        .map(|v| v.values.as_slice())
        .unwrap_or_else(|| panic!("no variable {name} in {:?}", p.variables))
}

/// Every `{name}` a step names is a variable with at least one value, and every variable is
/// named by a step.
fn check_consistent(p: &Induction) {
    let named: Vec<&str> = p
        .steps
        .iter()
        .filter_map(|s| s.split_once('{').and_then(|(_, r)| r.split_once('}')))
        .map(|(name, _)| name)
        .collect();
    for v in &p.variables {
        assert!(named.contains(&v.name.as_str()), "{} unused: {p:?}", v.name);
        assert!(!v.values.is_empty(), "{} has no values", v.name);
    }
    for n in named {
        assert!(
            p.variables.iter().any(|v| v.name == n),
            "{n} unbound: {p:?}"
        );
    }
    for w in p.steps.windows(2) {
        assert_ne!(
            w[0], w[1],
            "consecutive repeats are collapsed: {:?}",
            p.steps
        );
    }
}

#[test]
fn dsh_success_gives_abstracted_steps_variables_and_criteria() {
    let p = induce(&graph(&format!("{DSH}/s-main"))).unwrap();
    assert_eq!(p.task_id, "dsh-main");
    assert_eq!(
        p.steps,
        [
            "read {file}",
            "search {pattern}",
            "edit {file}",
            "use skill lint-fix",
            "run {test_command}",
            "delegate {subtask}",
        ]
    );
    assert_eq!(values(&p, "file"), ["src/draft.ts"]);
    assert_eq!(values(&p, "pattern"), ["saveDraft"]);
    assert_eq!(values(&p, "test_command"), ["npm test -- draft"]);
    assert_eq!(p.success_criteria, ["`npm test -- draft` passes"]);
    assert_eq!(p.agent.as_deref(), Some("dsh"));
    assert!(p.text.starts_with("NIS-11688"), "{}", p.text);
    assert!(p.text.contains("edit {file}, then"), "{}", p.text);
    assert_eq!(p.condition, "Fix the crash when saving drafts");
    check_consistent(&p);
}

#[test]
fn codex_shell_wrappers_and_patches_are_abstracted() {
    let p = induce(&graph(&format!(
        "{CODEX}/rollout-2026-08-24T19-33-20-cx-main.jsonl"
    )))
    .unwrap();
    // `ls`, `cat src/parser.rs`, the plan (skipped), the patch, `bash -lc cargo test`; the
    // cancelled `cargo clippy` is not part of what worked.
    assert_eq!(
        p.steps,
        [
            "list {dir}",
            "read {file}",
            "edit {file}",
            "run {test_command}"
        ]
    );
    assert_eq!(values(&p, "file"), ["src/parser.rs"]);
    assert_eq!(values(&p, "test_command"), ["cargo test"]);
    assert_eq!(p.success_criteria, ["`cargo test` passes"]);
    assert!(!p.steps.iter().any(|s| s.contains("clippy")));
    check_consistent(&p);
}

#[test]
fn pi_success_relative_paths() {
    let p = induce(&graph(&format!(
        "{PI}/2026-08-24T19-33-20-000Z_pi-main.jsonl"
    )))
    .unwrap();
    assert_eq!(
        p.steps,
        [
            "read {file}",
            "list {dir}",
            "edit {file}",
            "run {test_command}"
        ]
    );
    assert_eq!(values(&p, "file"), ["src/upload.ts"]);
    assert_eq!(values(&p, "dir"), ["src"]);
    assert_eq!(p.success_criteria, ["`npx vitest run upload` passes"]);
    check_consistent(&p);
}

#[test]
fn failed_tasks_are_refused_naming_the_failing_node() {
    let g = graph(&format!("{DSH}/s-fail"));
    assert_eq!(g.status, Status::Failed);
    let r = induce(&g).unwrap_err();
    match &r {
        Refusal::Failed {
            task_id,
            node_type,
            node_name,
            node_id,
            ..
        } => {
            assert_eq!(task_id, "dsh-fail");
            assert_eq!(*node_type, "test");
            assert!(node_id.starts_with("tool-"), "{node_id}");
            assert!(node_name.contains("cargo test"), "{node_name}");
        }
        other => panic!("{other:?}"),
    }
    let text = r.to_string();
    assert!(
        text.starts_with(
            "it failed at test `cargo test --workspace` (tool-f_test): test result: FAILED"
        ),
        "{text}"
    );

    // Claude: the first turn succeeded, the last one failed: still a failed task.
    let g = graph(&format!("{CLAUDE}/c-main.jsonl"));
    assert_eq!(g.status, Status::Failed);
    assert!(matches!(induce(&g), Err(Refusal::Failed { .. })));
}

#[test]
fn running_tasks_are_refused() {
    let s = read_session(Path::new(&format!("{DSH}/s-live"))).unwrap();
    let g = build_session_graph(
        &s,
        &BuildOptions {
            live: true,
            ..BuildOptions::default()
        },
    );
    assert_eq!(g.status, Status::Running);
    let r = induce(&g).unwrap_err();
    assert!(matches!(r, Refusal::Running { .. }), "{r:?}");
    assert!(r.to_string().contains("still running"));
}

fn real_sessions() -> Option<PathBuf> {
    let dir = std::env::var_os("MINDGATE_REAL_SESSIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions")
        });
    dir.is_dir().then_some(dir)
}

/// Induction never panics on a real transcript; a succeeded one yields consistent, bounded
/// steps, and any other gives a refusal with a reason.
#[test]
fn real_sessions_induce_sane_procedures() {
    let Some(dir) = real_sessions() else {
        println!("skipped: no real-sessions folder (set MINDGATE_REAL_SESSIONS)");
        return;
    };
    let mut files = Vec::new();
    for agent in ["claude", "codex", "pi"] {
        let Ok(entries) = std::fs::read_dir(dir.join(agent)) else {
            continue;
        };
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files.sort();
    assert!(
        !files.is_empty(),
        "no session files under {}",
        dir.display()
    );
    let mut induced = 0;
    for path in &files {
        let Ok(session) = read_session(path) else {
            continue;
        };
        let g = build_session_graph(&session, &BuildOptions::default());
        match induce(&g) {
            Ok(p) => {
                induced += 1;
                assert_eq!(g.status, Status::Success, "{}", path.display());
                assert!(!p.steps.is_empty());
                check_consistent(&p);
                for s in &p.steps {
                    assert!(!s.contains('\n') && s.chars().count() <= 80, "{s:?}");
                }
                for v in &p.variables {
                    assert!(v.values.len() <= 20);
                    assert!(v.values.iter().all(|x| x.chars().count() <= 201));
                }
                println!(
                    "{}: {} steps, {} variables, {} criteria: {}",
                    path.file_name().unwrap().to_string_lossy(),
                    p.steps.len(),
                    p.variables.len(),
                    p.success_criteria.len(),
                    p.text
                );
            }
            Err(r) => {
                assert!(
                    g.status != Status::Success || matches!(r, Refusal::NoSteps { .. }),
                    "{}: {r}",
                    path.display()
                );
                println!(
                    "{}: refused: {r}",
                    path.file_name().unwrap().to_string_lossy()
                );
            }
        }
    }
    assert!(induced > 0, "no real session induced a procedure");
}
