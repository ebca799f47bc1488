//! Procedures induced from the task-graph fixture sessions (`crates/taskgraph/tests/fixtures`):
//! a succeeded session gives a quarantined `induction` procedure with variables and success
//! criteria; a failed one is refused and stores nothing; inducing twice (or a near-identical
//! workflow) returns the existing procedure; verified reuses promote it at the threshold.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use mindgate_memory::induction::{self, OutcomeArgs};
use mindgate_memory::*;
use mindgate_taskgraph::{BuildOptions, TaskGraph, build_session_graph, read_session};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../taskgraph/tests/fixtures");

fn graph(relative: &str) -> TaskGraph {
    let session = read_session(Path::new(&format!("{FIXTURES}/{relative}"))).unwrap();
    build_session_graph(&session, &BuildOptions::default())
}

fn dsh(name: &str) -> TaskGraph {
    graph(&format!(
        "dsh/--Users-kevin-Desktop-Nothing-Napkin--/{name}"
    ))
}

fn store() -> Memory {
    Memory::from(SqliteMemory::open_in_memory(OpenOptions::default()).unwrap())
}

fn procedures(s: &Memory) -> Vec<Rule> {
    s.procedural().list("ana", true).unwrap()
}

#[test]
fn a_succeeded_session_gives_a_quarantined_induced_procedure() {
    let s = store();
    let out = induction::induce(&s, &dsh("s-main"), Scope::user("ana"), Actor::User).unwrap();
    assert!(out.created && out.matched.is_none());
    assert_eq!(out.task_id, "dsh-main");
    let p = &out.procedure;
    assert_eq!(p.trust.provenance, Some(MemoryProvenance::Induction));
    assert_eq!(p.trust.status, Some(MemoryStatus::Quarantined));
    assert_eq!(p.success_count, Some(0));
    assert_eq!(
        p.steps.as_deref().unwrap(),
        [
            "read {file}",
            "search {pattern}",
            "edit {file}",
            "use skill lint-fix",
            "run {test_command}",
            "delegate {subtask}"
        ]
    );
    assert_eq!(
        p.variables.as_deref().unwrap(),
        ["file", "pattern", "test_command", "subtask"]
    );
    let values = p.variable_values.as_ref().unwrap();
    assert_eq!(values["file"], ["src/draft.ts"]);
    assert_eq!(values["test_command"], ["npm test -- draft"]);
    assert_eq!(
        p.success_criteria.as_deref().unwrap(),
        ["`npm test -- draft` passes"]
    );
    assert_eq!(
        p.condition.as_deref(),
        Some("Fix the crash when saving drafts")
    );
    let tags = &p.record.tags;
    for t in ["induced", "task:dsh-main", "agent:dsh"] {
        assert!(
            tags.as_ref().is_some_and(|v| v.iter().any(|x| x == t)),
            "{tags:?}"
        );
    }
    assert_eq!(out.link, format!("#/memory/procedural/{}", p.record.id));
    // Quarantined: not offered for activation.
    assert!(s.procedural().list("ana", false).unwrap().is_empty());
    // Read back from the store exactly as returned.
    assert_eq!(&s.procedural().get(&p.record.id).unwrap(), p);
}

#[test]
fn inducing_twice_returns_the_existing_procedure() {
    let s = store();
    let first = induction::induce(&s, &dsh("s-main"), Scope::user("ana"), Actor::User).unwrap();
    let again = induction::induce(&s, &dsh("s-main"), Scope::user("ana"), Actor::User).unwrap();
    assert!(!again.created);
    let m = again.matched.as_ref().unwrap();
    assert!(m.same_steps && (m.similarity - 1.0).abs() < 1e-9, "{m:?}");
    assert_eq!(m.id, first.procedure.record.id);
    assert_eq!(again.procedure.record.id, first.procedure.record.id);
    assert_eq!(procedures(&s).len(), 1);
    // Another user's memory is separate.
    let bob = induction::induce(&s, &dsh("s-main"), Scope::user("bob"), Actor::User).unwrap();
    assert!(bob.created);
}

#[test]
fn near_identical_workflows_dedup_and_different_ones_do_not() {
    let s = store();
    // pi: read, list, edit, run.
    let pi = graph("pi/--work-napkin--/2026-08-24T19-33-20-000Z_pi-main.jsonl");
    let first = induction::induce(&s, &pi, Scope::user("ana"), Actor::User).unwrap();
    assert!(first.created);
    // Codex: list, read, edit, run — the same steps in another order.
    let codex = graph("codex/2026/08/24/rollout-2026-08-24T19-33-20-cx-main.jsonl");
    let second = induction::induce(&s, &codex, Scope::user("ana"), Actor::User).unwrap();
    assert!(!second.created);
    let m = second.matched.unwrap();
    assert!(!m.same_steps);
    assert!(m.similarity >= induction::DEDUP_JACCARD, "{m:?}");
    assert_eq!(m.id, first.procedure.record.id);
    // DSH shares only 3 of 7 distinct steps with them: a new procedure.
    let third = induction::induce(&s, &dsh("s-main"), Scope::user("ana"), Actor::User).unwrap();
    assert!(third.created && third.matched.is_none());
    assert_eq!(procedures(&s).len(), 2);
}

#[test]
fn a_failed_session_is_refused_and_stores_nothing() {
    let s = store();
    let err = induction::induce(&s, &dsh("s-fail"), Scope::user("ana"), Actor::User).unwrap_err();
    assert!(
        matches!(&err, MemoryError::NotInducible { task_id, .. } if task_id == "dsh-fail"),
        "{err:?}"
    );
    assert_eq!(err.code(), mindgate_errors::ErrorCode::Conflict);
    assert_eq!(agent::error_code(&err), "not_inducible");
    let chain = mindgate_errors::error_chain(&err);
    assert!(
        chain.starts_with("task dsh-fail induces no procedure: it failed at test `cargo test --workspace` (tool-f_test)"),
        "{chain}"
    );
    assert!(procedures(&s).is_empty());
    assert_eq!(s.row_count().unwrap(), 0);
}

#[test]
fn verified_reuses_promote_at_the_threshold_only_when_a_person_reports_them() {
    let s = store();
    let threshold = s.config().promote_after_successes;
    assert!(threshold >= 2);
    let out = induction::induce(&s, &dsh("s-main"), Scope::user("ana"), Actor::User).unwrap();
    let id = out.procedure.record.id;
    let failed =
        induction::record_outcome(&s, &id, &OutcomeArgs { success: false }, Actor::Agent).unwrap();
    assert_eq!(failed.procedure.success_count, Some(0));
    for n in 1..threshold {
        let v = induction::record_outcome(&s, &id, &OutcomeArgs { success: true }, Actor::Agent)
            .unwrap();
        assert_eq!(v.procedure.success_count, Some(n));
        assert!(!v.promoted);
        assert_eq!(v.procedure.trust.status, Some(MemoryStatus::Quarantined));
    }
    // The agent's reuses reach the threshold: counted, still quarantined (only a person
    // moves a quarantined procedure to active).
    let v =
        induction::record_outcome(&s, &id, &OutcomeArgs { success: true }, Actor::Agent).unwrap();
    assert!(!v.promoted);
    assert_eq!(v.procedure.success_count, Some(threshold));
    assert_eq!(v.procedure.trust.status, Some(MemoryStatus::Quarantined));
    let v =
        induction::record_outcome(&s, &id, &OutcomeArgs { success: true }, Actor::User).unwrap();
    assert!(v.promoted);
    assert_eq!(v.promote_after, threshold);
    assert_eq!(v.procedure.trust.status, Some(MemoryStatus::Active));
    assert_eq!(s.procedural().list("ana", false).unwrap()[0].record.id, id);
    let ops: Vec<String> = s
        .ledger(&id)
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    assert!(ops.iter().any(|o| o == "promote"), "{ops:?}");
    // Once active, further successes only count.
    let after =
        induction::record_outcome(&s, &id, &OutcomeArgs { success: true }, Actor::Agent).unwrap();
    assert!(!after.promoted);
    assert!(matches!(
        induction::record_outcome(&s, "nope", &OutcomeArgs { success: true }, Actor::Agent),
        Err(MemoryError::NotFound { .. })
    ));
}

/// Interop: every genuine transcript in `../shared/data/real-sessions` (when present;
/// `MINDGATE_REAL_SESSIONS` overrides the folder) either stores a procedure the store accepts
/// (bounded texts, tags and values) or is refused as not inducible — never another error.
#[test]
fn real_sessions_store_or_refuse() {
    let dir = std::env::var_os("MINDGATE_REAL_SESSIONS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions")
        });
    if !dir.is_dir() {
        println!("skipped: no real-sessions folder (set MINDGATE_REAL_SESSIONS)");
        return;
    }
    let s = store();
    let (mut stored, mut refused) = (0, 0);
    for agent in ["claude", "codex", "pi"] {
        let Ok(entries) = std::fs::read_dir(dir.join(agent)) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            let Ok(session) = read_session(&path) else {
                continue;
            };
            let g = build_session_graph(&session, &BuildOptions::default());
            match induction::induce(&s, &g, Scope::user("ana"), Actor::User) {
                Ok(out) => {
                    stored += usize::from(out.created);
                    assert_eq!(
                        out.procedure.trust.provenance,
                        Some(MemoryProvenance::Induction)
                    );
                    assert_eq!(out.procedure.trust.status, Some(MemoryStatus::Quarantined));
                }
                Err(MemoryError::NotInducible { .. }) => refused += 1,
                Err(e) => panic!("{}: {e:?}", path.display()),
            }
        }
    }
    println!("real sessions: {stored} procedures stored, {refused} refused");
    assert!(stored > 0);
}
