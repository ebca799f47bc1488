//! Procedures induced from task graphs (seed 001 → seed 003): the store side.
//!
//! [`mindgate_taskgraph::induce`] abstracts a succeeded task into steps, variables and
//! success criteria; this module stores it as a procedural rule with provenance `induction`
//! (so it lands quarantined, `successCount` 0), unless a procedure with the same or nearly
//! the same steps is already there: then that one is returned and the match is said
//! ([`DEDUP_JACCARD`]). [`induce`] is the one call the HTTP route and the CLI make;
//! [`record_outcome`] records a verified reuse, and the store promotes a quarantined induced
//! procedure once its success count reaches `MemoryConfig::promote_after_successes`.
//! Design: `docs/memory-induction.md`.

use std::collections::{BTreeMap, HashSet};

use mindgate_taskgraph::TaskGraph;
use mindgate_taskgraph::induce::Induction;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::agent::ScopeArgs;
use crate::backend::Memory;
use crate::error::{MemoryError, Result};
use crate::rules::row::MAX_ID_CHARS;
use crate::store::{MemoryStore, ProceduralMemory};
use crate::types::*;

/// Jaccard similarity of two procedures' step sets at or above which the second is the same
/// procedure as the first (and is not stored again). With four steps, one step added or
/// changed is still the same procedure (4/5 = 0.8); two are not (4/6).
pub const DEDUP_JACCARD: f64 = 0.8;

/// The tag every induced procedure carries.
pub const INDUCED_TAG: &str = "induced";

/// `POST /api/memory/procedures/induce`: which task, whose memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InduceArgs {
    /// Scope (default user: the server's `--memory-user`).
    #[serde(flatten)]
    pub scope: ScopeArgs,
    /// The task: a session id or a unique prefix of one (as `/task-graph/api/task?id=`).
    pub task_id: String,
}

/// `POST /api/memory/procedures/{id}/outcome`: how a reuse went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutcomeArgs {
    /// Whether the reuse met the procedure's success criteria.
    pub success: bool,
}

/// The existing procedure an induction matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcedureMatch {
    /// The existing procedure's id.
    pub id: String,
    /// Jaccard similarity of the two step sets (1 for the same steps).
    pub similarity: f64,
    /// Whether the steps are the same, in the same order.
    pub same_steps: bool,
}

/// What an induction did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InduceOutcome {
    /// The stored procedure: the new one, or the existing one it matched.
    pub procedure: Rule,
    /// Whether a new procedure was stored.
    pub created: bool,
    /// The existing procedure the induced steps matched, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<ProcedureMatch>,
    /// The task it was induced from.
    pub task_id: String,
    /// The viewer route of the procedure.
    pub link: String,
}

/// What a recorded outcome did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeView {
    /// The procedure after the outcome.
    pub procedure: Rule,
    /// Whether this outcome promoted it from quarantine to active.
    pub promoted: bool,
    /// Verified successes that promote a quarantined induced procedure.
    pub promote_after: u32,
}

/// Jaccard similarity of two step lists taken as sets (1 when both are empty).
pub fn step_similarity(a: &[String], b: &[String]) -> f64 {
    let a: HashSet<&str> = a.iter().map(String::as_str).collect();
    let b: HashSet<&str> = b.iter().map(String::as_str).collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// The store input of an induced procedure, owned by `scope` and written by `by`.
pub fn new_rule(induction: &Induction, scope: Scope, by: Actor) -> NewRule {
    let mut tags = vec![INDUCED_TAG.to_owned()];
    for tag in [
        Some(format!("task:{}", induction.task_id)),
        induction.agent.as_ref().map(|a| format!("agent:{a}")),
    ]
    .into_iter()
    .flatten()
    {
        if tag.chars().count() <= MAX_ID_CHARS && !tag.chars().any(char::is_control) {
            tags.push(tag);
        }
    }
    let values: BTreeMap<String, Vec<String>> = induction
        .variables
        .iter()
        .map(|v| (v.name.clone(), v.values.clone()))
        .collect();
    NewRule {
        meta: WriteMeta {
            scope,
            id: None,
            sensitivity: Sensitivity::default(),
            tags,
            provenance: Some(MemoryProvenance::Induction),
            by,
        },
        text: induction.text.clone(),
        condition: Some(induction.condition.clone()).filter(|c| !c.is_empty()),
        priority: 0.0,
        steps: Some(induction.steps.clone()),
        variables: Some(induction.variables.iter().map(|v| v.name.clone()).collect()),
        variable_values: Some(values),
        success_criteria: Some(induction.success_criteria.clone()),
    }
}

/// Stores an induced procedure unless the user already has one with the same or nearly the
/// same steps ([`DEDUP_JACCARD`]; live procedures, quarantined ones included): then that one
/// is returned with the match. Provenance is always `induction`.
pub fn store_induced(
    procedures: &impl ProceduralMemory,
    mut rule: NewRule,
) -> Result<(Rule, Option<ProcedureMatch>)> {
    let steps = rule.steps.clone().unwrap_or_default();
    if steps.is_empty() {
        return Err(MemoryError::invalid(
            "steps",
            "an induced procedure needs at least one step",
        ));
    }
    rule.meta.provenance = Some(MemoryProvenance::Induction);
    let mut best: Option<(Rule, ProcedureMatch)> = None;
    for existing in procedures.list(&rule.meta.scope.user_id, true)? {
        let Some(theirs) = existing.steps.as_deref().filter(|s| !s.is_empty()) else {
            continue;
        };
        let similarity = step_similarity(&steps, theirs);
        let same_steps = theirs == steps.as_slice();
        if (same_steps || similarity >= DEDUP_JACCARD)
            && best
                .as_ref()
                .is_none_or(|(_, m)| (same_steps, similarity) > (m.same_steps, m.similarity))
        {
            let id = existing.record.id.clone();
            best = Some((
                existing,
                ProcedureMatch {
                    id,
                    similarity,
                    same_steps,
                },
            ));
        }
    }
    match best {
        Some((existing, matched)) => Ok((existing, Some(matched))),
        None => Ok((procedures.add(rule)?, None)),
    }
}

/// Induces a procedure from a task graph into `scope`'s memory (deduplicated), or refuses a
/// task that did not succeed with [`MemoryError::NotInducible`].
pub fn induce(store: &Memory, graph: &TaskGraph, scope: Scope, by: Actor) -> Result<InduceOutcome> {
    let induction =
        mindgate_taskgraph::induce::induce(graph).map_err(|reason| MemoryError::NotInducible {
            task_id: graph.task_id.clone(),
            reason: Box::new(reason),
        })?;
    let (procedure, matched) = store_induced(&store.procedural(), new_rule(&induction, scope, by))?;
    Ok(InduceOutcome {
        link: crate::agent::viewer_route(MemoryKind::Procedural, &procedure.record.id),
        created: matched.is_none(),
        procedure,
        matched,
        task_id: induction.task_id,
    })
}

/// Records a verified reuse of a procedure (promotion happens in the store at the threshold).
pub fn record_outcome(
    store: &Memory,
    id: &str,
    args: &OutcomeArgs,
    by: Actor,
) -> Result<OutcomeView> {
    let before = store.procedural().get(id)?;
    let procedure = store.procedural().record_outcome(id, args.success, by)?;
    let active = |r: &Rule| r.trust.status != Some(MemoryStatus::Quarantined);
    Ok(OutcomeView {
        promoted: !active(&before) && active(&procedure),
        procedure,
        promote_after: store.config().promote_after_successes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn similarity_is_jaccard_over_step_sets() {
        let a = steps(&[
            "read {file}",
            "edit {file}",
            "run {test_command}",
            "search {pattern}",
        ]);
        let mut b = a.clone();
        b.push("list {dir}".into());
        assert!((step_similarity(&a, &b) - 0.8).abs() < 1e-9);
        b.push("fetch {url}".into());
        assert!(step_similarity(&a, &b) < DEDUP_JACCARD);
        assert!((step_similarity(&a, &a) - 1.0).abs() < 1e-9);
        assert!((step_similarity(&[], &[]) - 1.0).abs() < 1e-9);
    }
}
