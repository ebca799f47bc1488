//! The memory tools (Graphorin's names, so agents written for it work unchanged):
//! `block_append`, `block_replace`, `block_rethink`, `fact_remember`, `fact_search`,
//! `fact_supersede`, `fact_forget`, `fact_history`, `recall_episodes`,
//! `conversation_search`, `memory_status`, `procedure_search`, `procedure_outcome` (an
//! agent's reuses are counted, never promote: see below), and — only with
//! [`McpConfig::allow_validate`](crate::McpConfig::allow_validate) — `fact_validate` and
//! `fact_reject`: an agent that can validate its own quarantined memories defeats the
//! quarantine, so by default validation is a person's act (viewer, CLI, HTTP with the token).
//!
//! Every tool is a thin view over `mindgate_memory::agent`: the argument types (and so
//! the input schemas) and the operations are the memory crate's, shared with the HTTP API
//! and the CLI. Writes are recorded in the ledger as by `agent`.

use std::sync::Arc;

use mindgate_memory::agent::{
    self, BlockAppendArgs, BlockReplaceArgs, BlockRethinkArgs, ForgetArgs, IdArgs, RecallArgs,
    RejectArgs, RememberArgs, SearchAnswer, StatusArgs, SupersedeArgs, ValidateArgs,
};
use mindgate_memory::induction::{self, OutcomeArgs};
use mindgate_memory::rules::conflicts::SUPERSEDE_HOLD_PREFIX;
use mindgate_memory::{
    Actor, Block, Fact, Memory, MemoryError, MemoryItem, MemoryKind, MemoryStatus, MemoryStore,
    SemanticMemory,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::output::{Links, ToolOutput};
use crate::params::ProcedureOutcomeArgs;
use crate::server::{MindgateMcp, Shared};

impl From<MemoryError> for ToolError {
    fn from(e: MemoryError) -> Self {
        ToolError::Memory {
            code: e.code(),
            reason: agent::error_code(&e),
            message: mindgate_errors::error_chain(&e),
        }
    }
}

/// The full viewer URL of a memory route (`#/memory/…`).
fn url(links: &Links, route: &str) -> String {
    format!("{}/{route}", links.base())
}

fn hits_output(what: &str, query: &str, answer: SearchAnswer, links: &Links) -> ToolOutput {
    let when = answer
        .time_text()
        .map_or(String::new(), |t| format!(" ({t})"));
    let mut text = match (answer.hits.is_empty(), &answer.empty_because) {
        (true, Some(why)) => format!("No {what} match {query:?}{when}: {why}."),
        (true, None) => format!("No {what} match {query:?}{when}."),
        (false, _) => format!(
            "{} {what} for {query:?}{when}, best first:",
            answer.hits.len()
        ),
    };
    let hits = answer.hits;
    let mut list = Vec::with_capacity(hits.len());
    for (i, h) in hits.into_iter().enumerate() {
        let signals = h.signals_text();
        let provenance = h.provenance.map_or("first-party", |p| p.as_str());
        text.push_str(&format!(
            "\n{}. {} — id {}, {}, {}, score {:.4} ({signals})",
            i + 1,
            h.text,
            h.id,
            provenance,
            h.status,
            h.score
        ));
        let mut v = serde_json::to_value(&h).unwrap_or(Value::Null);
        v["link"] = json!(url(links, &h.link));
        list.push(v);
    }
    let mut out = json!({ "query": query, "hits": list });
    for (key, value) in [
        ("asOf", answer.as_of),
        ("knownAt", answer.known_at),
        ("emptyBecause", answer.empty_because),
    ] {
        if let Some(v) = value {
            out[key] = json!(v);
        }
    }
    ToolOutput::new(text, out)
}

fn fact_output(verb: &str, fact: &Fact, links: &Links) -> ToolOutput {
    let status = fact.trust.status.map_or("active", |s| s.as_str());
    let mut text = format!("{verb} fact {}: {} ({status})", fact.record.id, fact.text);
    let quarantined = fact.trust.status == Some(MemoryStatus::Quarantined);
    let conflicts = fact.conflicts_with.join(", ");
    if quarantined && !fact.conflicts_with.is_empty() {
        // Held back by the conflict rule (mindgate_memory::rules::conflicts::remember).
        text.push_str(&format!(
            "\nIt was quarantined because it contradicts active fact(s) {conflicts} (same subject, a single-valued predicate, another object): it will not come back from fact_search until a person decides the conflict in the viewer (supersede the old one, keep both, or reject this one). If you know the old fact is no longer true, supersede it with fact_supersede instead (a new version of a person's fact waits for a person too)."
        ));
        if let Some(reason) = &fact.trust.quarantine_reason {
            text.push_str(&format!("\nQuarantine reason: {reason}."));
        }
    } else {
        if let Some(reason) = &fact.trust.quarantine_reason {
            text.push_str(&format!(
                "\nIt is quarantined ({reason}): it will not come back from fact_search until a person validates it."
            ));
        }
        if !fact.conflicts_with.is_empty() {
            text.push_str(&format!(
                "\nIt conflicts with active fact(s) {conflicts} (same subject, a single-valued predicate, another object). The conflict is stored with it and waits for a person's decision in the viewer (supersede the old one, keep both, or reject this one); if you know the old one is no longer true, supersede it with fact_supersede."
            ));
        }
    }
    let link = url(
        links,
        &agent::viewer_route(MemoryKind::Semantic, &fact.record.id),
    );
    ToolOutput::new(
        text,
        json!({ "fact": fact, "status": status, "link": link }),
    )
}

/// `fact_supersede`'s answer when the new version was held for a person instead of
/// superseding `old_id` (mindgate_memory::rules::conflicts::supersede_hold: the old fact
/// is a person's, or the new version would land quarantined): the same shape as
/// [`fact_output`], worded for what happened.
fn held_output(old_id: &str, fact: &Fact, links: &Links) -> ToolOutput {
    let value = fact_output("Held new version", fact, links).value;
    let persons = fact
        .trust
        .quarantine_reason
        .as_deref()
        .is_some_and(|r| r.contains(SUPERSEDE_HOLD_PREFIX));
    let why = if persons {
        "that fact is a person's word (provenance user), and an agent's new version of it waits in quarantine"
    } else {
        "this version landed quarantined (see the reason below), and a quarantined version never replaces an active fact by itself: it waits in quarantine"
    };
    let mut text = format!(
        "Held new version fact {}: {} (quarantined)\nIt did not supersede {old_id}: {why}, conflicting with it, until a person decides in the viewer (supersede the old one, keep both, or reject this one). Until then {old_id} stays the answer and this version will not come back from fact_search.",
        fact.record.id, fact.text
    );
    if let Some(reason) = &fact.trust.quarantine_reason {
        text.push_str(&format!("\nQuarantine reason: {reason}."));
    }
    ToolOutput::new(text, value)
}

fn block_output(verb: &str, block: &Block, links: &Links) -> ToolOutput {
    let text = format!(
        "{verb} block {:?} ({} of {} characters):\n{}",
        block.label,
        block.value.chars().count(),
        block.char_limit,
        block.value
    );
    let link = url(
        links,
        &agent::viewer_route(MemoryKind::Working, &block.label),
    );
    ToolOutput::new(text, json!({ "block": block, "link": link }))
}

fn item_output(verb: &str, item: &MemoryItem, links: &Links) -> ToolOutput {
    let status = item.trust().status.map_or("active", |s| s.as_str());
    let link = url(links, &agent::viewer_route(item.record().kind, item.id()));
    let mut text = format!(
        "{verb} {} {}: {} ({status})",
        item.record().kind,
        item.id(),
        item.text()
    );
    if let MemoryItem::Fact(fact) = item
        && !fact.conflicts_with.is_empty()
        && fact.conflict_decision.is_none()
    {
        text.push_str(&format!(
            "\nIt conflicts with active fact(s) {}: the conflict stays open until a person decides it in the viewer.",
            fact.conflicts_with.join(", ")
        ));
    }
    ToolOutput::new(
        text,
        json!({ "record": item, "status": status, "link": link }),
    )
}

impl MindgateMcp {
    async fn memory_tool(
        &self,
        f: impl FnOnce(&Memory, Option<&str>, &Links) -> Result<ToolOutput, ToolError> + Send + 'static,
    ) -> CallToolResult {
        self.blocking(move |shared: &Shared| {
            let store: Arc<Memory> = shared.memory.get()?;
            f(
                &store,
                shared.config.memory_user.as_deref(),
                &shared.links(),
            )
        })
        .await
    }
}

#[tool_router(router = memory_router, vis = "pub(crate)")]
impl MindgateMcp {
    /// `block_append`.
    #[tool(
        name = "block_append",
        description = "Append text to a working-memory block (a labelled, size-limited note kept in your prompt). Refused on a read-only block, past its character limit (the error says the limit), or when the text looks like an injected instruction (the error names the flag).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn block_append(
        &self,
        Parameters(args): Parameters<BlockAppendArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            Ok(block_output(
                "Appended to",
                &agent::block_append(m, &args, user, Actor::Agent)?,
                l,
            ))
        })
        .await
    }

    /// `block_replace`.
    #[tool(
        name = "block_replace",
        description = "Replace the first occurrence of `old` by `new` in a working-memory block.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn block_replace(
        &self,
        Parameters(args): Parameters<BlockReplaceArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            Ok(block_output(
                "Edited",
                &agent::block_replace(m, &args, user, Actor::Agent)?,
                l,
            ))
        })
        .await
    }

    /// `block_rethink`.
    #[tool(
        name = "block_rethink",
        description = "Rewrite a working-memory block's whole value (creates the block when it does not exist; keeps its description and limit unless given).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn block_rethink(
        &self,
        Parameters(args): Parameters<BlockRethinkArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            Ok(block_output(
                "Rewrote",
                &agent::block_rethink(m, &args, user, Actor::Agent)?,
                l,
            ))
        })
        .await
    }

    /// `fact_remember`.
    #[tool(
        name = "fact_remember",
        description = "Remember a fact about the user or the world (optionally as a subject/predicate/object triple, with valid time, importance and tags). provenance defaults to `agent` (you assert it; `user` is a person's word and is refused here, `tool` is what a tool returned); pass `extraction` for a fact you distilled from a conversation: it is stored quarantined until a person validates it. Text that looks like an injected instruction is quarantined too, and so is a fact that contradicts an active fact (same subject, a single-valued predicate such as lives_in, another object): the answer names the fact(s) it contradicts, and a person decides.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn fact_remember(
        &self,
        Parameters(args): Parameters<RememberArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            Ok(fact_output(
                "Remembered",
                &agent::remember(m, args, user, Actor::Agent)?,
                l,
            ))
        })
        .await
    }

    /// `fact_search`.
    #[tool(
        name = "fact_search",
        description = "Search remembered facts (hybrid keyword + vector search). Each hit says why it was recalled (signals: bm25 and bm25Norm, vector (cosine, only above the embedder's floor) and vectorNorm, fused (0-1), trust), its provenance and status, and links to the viewer. asOf = what was true at an instant; knownAt = what the memory held at an instant. Quarantined facts never come back.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn fact_search(&self, Parameters(args): Parameters<RecallArgs>) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            let hits = agent::recall(m, &args, user, MemoryKind::Semantic, Actor::Agent)?;
            Ok(hits_output("facts", &args.query, hits, l))
        })
        .await
    }

    /// `fact_supersede`.
    #[tool(
        name = "fact_supersede",
        description = "Replace a fact that is no longer right by a new version (the old one keeps its history and stops coming back from search). Give oldId, the reason and the new text (and optional triple, valid time, importance, tags). A new version of a quarantined fact stays quarantined until a person validates it. A new version of a person's fact (provenance user), or one that lands quarantined (derived provenance or flagged text) over an active fact, does not replace it: it is held in quarantine, conflicting with the old one, until a person decides (supersede the old one, keep both, or reject it).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn fact_supersede(
        &self,
        Parameters(args): Parameters<SupersedeArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.fact.scope.check_bound(user)?;
            agent::check_owner(m, &args.old_id, user)?;
            let old_id = args.old_id.clone();
            let fact = agent::supersede(m, args, user, Actor::Agent)?;
            if fact.supersedes.is_none() {
                return Ok(held_output(&old_id, &fact, l));
            }
            Ok(fact_output("Superseded with", &fact, l))
        })
        .await
    }

    /// `fact_forget`.
    #[tool(
        name = "fact_forget",
        description = "Forget a fact (a tombstone with the reason: it stops coming back from search; its history stays auditable).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn fact_forget(&self, Parameters(args): Parameters<ForgetArgs>) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            agent::check_owner(m, &args.id, user)?;
            m.semantic().forget(&args.id, &args.reason, Actor::Agent)?;
            let link = url(l, &agent::viewer_route(MemoryKind::Semantic, &args.id));
            Ok(ToolOutput::new(
                format!("Forgot fact {} ({}).", args.id, args.reason),
                json!({ "id": args.id, "forgotten": true, "link": link }),
            ))
        })
        .await
    }

    /// `fact_history`.
    #[tool(
        name = "fact_history",
        description = "A fact's history: every version in its supersession chain (oldest first) and every change (create, supersede, forget, quarantine, validate…), when, why and by whom.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn fact_history(&self, Parameters(args): Parameters<IdArgs>) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            agent::check_owner(m, &args.id, user)?;
            let h = agent::history(m, &args.id)?;
            let mut text = format!("{} version(s) of {}:", h.chain.len(), args.id);
            for v in &h.chain {
                let state = if v.record().deleted_at.is_some() {
                    "deleted"
                } else {
                    v.trust().status.map_or("active", |s| s.as_str())
                };
                text.push_str(&format!(
                    "\n- {} ({}, {state}, created {}): {}",
                    v.id(),
                    v.record().kind,
                    v.record().created_at,
                    v.text()
                ));
            }
            text.push_str(&format!("\n{} change(s):", h.events.len()));
            for e in &h.events {
                text.push_str(&format!(
                    "\n- {} {} {} by {}{}",
                    e.at,
                    e.action,
                    e.subject_id,
                    e.actor,
                    e.reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                ));
            }
            let link = url(l, &agent::viewer_route(MemoryKind::Semantic, &args.id));
            Ok(ToolOutput::new(
                text,
                json!({ "chain": h.chain, "events": h.events, "link": link }),
            ))
        })
        .await
    }

    /// `recall_episodes`.
    #[tool(
        name = "recall_episodes",
        description = "Search episodes (summaries of past stretches of activity). asOf = episodes that had started by an instant.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn recall_episodes(
        &self,
        Parameters(args): Parameters<RecallArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            let hits = agent::recall(m, &args, user, MemoryKind::Episodic, Actor::Agent)?;
            Ok(hits_output("episodes", &args.query, hits, l))
        })
        .await
    }

    /// `conversation_search`.
    #[tool(
        name = "conversation_search",
        description = "Search stored conversation messages (all sessions of the user, or one with sessionId).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn conversation_search(
        &self,
        Parameters(args): Parameters<RecallArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            let hits = agent::recall(m, &args, user, MemoryKind::Session, Actor::Agent)?;
            Ok(hits_output("messages", &args.query, hits, l))
        })
        .await
    }

    /// `procedure_search`.
    #[tool(
        name = "procedure_search",
        description = "Search procedural memory: standing rules and validated procedures (steps, variables, success criteria) that worked before.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn procedure_search(
        &self,
        Parameters(args): Parameters<RecallArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            let hits = agent::recall(m, &args, user, MemoryKind::Procedural, Actor::Agent)?;
            Ok(hits_output("procedures", &args.query, hits, l))
        })
        .await
    }

    /// `procedure_outcome`: records one reuse as the agent's. It counts towards the
    /// procedure's successes but never moves a quarantined procedure to active, with or
    /// without `--allow-validate` (the memory rules promote on a person's report only).
    #[tool(
        name = "procedure_outcome",
        description = "Record one reuse of a procedure and whether it met its success criteria. Counted in its history; a quarantined procedure stays quarantined until a person validates it.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn procedure_outcome(
        &self,
        Parameters(args): Parameters<ProcedureOutcomeArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            agent::check_owner(m, &args.id, user)?;
            let view = induction::record_outcome(
                m,
                &args.id,
                &OutcomeArgs {
                    success: args.success,
                },
                Actor::Agent,
            )?;
            let p = &view.procedure;
            let status = p.trust.status.map_or("active", |s| s.as_str());
            let text = format!(
                "Recorded a {} reuse of procedure {}: {} verified successes ({status}).",
                if args.success { "successful" } else { "failed" },
                p.record.id,
                p.success_count.unwrap_or(0)
            );
            let mut v = serde_json::to_value(&view).unwrap_or(Value::Null);
            v["link"] = json!(url(l, &agent::viewer_route(p.record.kind, &p.record.id)));
            Ok(ToolOutput::new(text, v))
        })
        .await
    }

    /// `memory_status`.
    #[tool(
        name = "memory_status",
        description = "The user's memory at a glance: counts of facts, episodes, messages, rules and blocks, how many records wait in quarantine, the last maintenance pass and the active embedder.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn memory_status(&self, Parameters(args): Parameters<StatusArgs>) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            args.scope.check_bound(user)?;
            let scope = args.scope.resolve(user)?;
            let s = agent::status(m, &scope.user_id)?;
            let md = &s.metadata;
            let text = format!(
                "Memory of {}: {} facts, {} episodes, {} messages, {} rules, {} blocks; {} waiting in quarantine; embedder {}.",
                s.user_id, md.fact_count, md.episode_count, md.message_count, md.active_rule_count, md.working_block_count, s.quarantined,
                s.embedder.as_deref().unwrap_or("none (lexical search only)")
            );
            let mut v = serde_json::to_value(&s).unwrap_or(Value::Null);
            v["link"] = json!(url(l, "#/memory"));
            Ok(ToolOutput::new(text, v))
        })
        .await
    }

    /// `fact_validate` (listed only with validation allowed).
    #[tool(
        name = "fact_validate",
        description = "Promote a quarantined record to active after re-checking it (text that looks like an injected instruction is refused unless force). A record held for a person's decision is refused, even with force, and stays quarantined: a fact that contradicts an active fact (an open conflict) or a new version held instead of superseding (an agent's new version of a person's fact, or a quarantined one of an active fact). A person decides those: supersede the old one, keep both or reject, in the viewer.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn fact_validate(
        &self,
        Parameters(args): Parameters<ValidateArgs>,
    ) -> CallToolResult {
        self.memory_tool(move |m, user, l| {
            agent::check_owner(m, &args.id, user)?;
            Ok(item_output(
                "Validated",
                &agent::validate(m, &args.id, args.force, Actor::Agent)?,
                l,
            ))
        })
        .await
    }

    /// `fact_reject` (listed only with validation allowed).
    #[tool(
        name = "fact_reject",
        description = "Reject a quarantined record (a tombstone with the reason).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn fact_reject(&self, Parameters(args): Parameters<RejectArgs>) -> CallToolResult {
        self.memory_tool(move |m, user, _l| {
            agent::check_owner(m, &args.id, user)?;
            m.reject(&args.id, &args.reason, Actor::Agent)?;
            Ok(ToolOutput::new(
                format!("Rejected {} ({}).", args.id, args.reason),
                json!({ "id": args.id, "rejected": true }),
            ))
        })
        .await
    }
}
