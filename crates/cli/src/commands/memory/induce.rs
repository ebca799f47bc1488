//! `mindgate memory induce <PATH|ID>`: a succeeded coding-agent task as an induced procedure
//! in the memory store. The task is resolved and built exactly as `mindgate taskgraph` does;
//! the induction, the dedup rule and the refusal are `mindgate_memory::induction`'s.

use std::fmt::Write as _;
use std::process::ExitCode;

use mindgate_memory::agent::ScopeArgs;
use mindgate_memory::induction::{self, InduceOutcome};
use mindgate_memory::{Actor, MemoryError, MemoryStatus};

use super::records::{emit, open};
use crate::args::MemoryInduceArgs;
use crate::commands::taskgraph::load_target;
use crate::commands::tasks::discovery_config;

/// Induces and stores (or finds) the procedure of one task; a task that did not succeed is
/// refused on stderr with exit code 1, naming why.
pub fn run(args: &MemoryInduceArgs) -> anyhow::Result<ExitCode> {
    let config = discovery_config(&args.discovery);
    let (_, session, tree) = load_target(&args.task, &config)?;
    let scope = ScopeArgs {
        user_id: Some(args.user.clone()),
        ..ScopeArgs::default()
    }
    .resolve(None)?;
    let store = open(args.db.db.as_ref())?;
    let outcome = induction::induce(&store, &tree.graph, scope, Actor::User);
    // The process exits next: no need to free the session and graph one node at a time.
    std::mem::forget(tree);
    std::mem::forget(session);
    match outcome {
        Ok(out) => {
            let threshold = store.config().promote_after_successes;
            emit(&args.db, &out, |out| describe(out, threshold))
        }
        Err(e @ MemoryError::NotInducible { .. }) => {
            eprintln!("mindgate: {:#}", anyhow::Error::from(e));
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.into()),
    }
}

fn describe(out: &InduceOutcome, threshold: u32) -> String {
    let p = &out.procedure;
    let id = &p.record.id;
    let mut s = match &out.matched {
        None => format!("induced procedure {id} from task {}", out.task_id),
        Some(m) if m.same_steps => format!(
            "task {} has the same steps as procedure {id}: not stored again",
            out.task_id
        ),
        Some(m) => format!(
            "task {}'s steps match procedure {id} (similarity {:.2} ≥ {:.2}): not stored again",
            out.task_id,
            m.similarity,
            induction::DEDUP_JACCARD
        ),
    };
    let _ = write!(s, "\n  {}", p.text);
    for (i, step) in p.steps.iter().flatten().enumerate() {
        let _ = write!(s, "\n  {:>2}. {step}", i + 1);
    }
    for (name, values) in p.variable_values.iter().flatten() {
        let _ = write!(s, "\n  {{{name}}} = {}", values.join(" | "));
    }
    for c in p.success_criteria.iter().flatten() {
        let _ = write!(s, "\n  success: {c}");
    }
    if p.trust.status == Some(MemoryStatus::Quarantined) {
        let _ = write!(
            s,
            "\nquarantined (provenance induction): validate it with `mindgate memory validate {id}`, \
             or {threshold} verified reuses (POST /api/memory/procedures/{id}/outcome) promote it"
        );
    } else {
        let _ = write!(
            s,
            "\nactive; {} verified reuses",
            p.success_count.unwrap_or(0)
        );
    }
    s
}
