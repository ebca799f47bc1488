//! Applying one event: the dispatch over [`EventKind`], titles and the session header.

use super::*;
use crate::{Failure, Usage};

impl IncrementalGraph {
    /// Applies one event; returns false for an orphan tool result.
    pub(super) fn apply(&mut self, e: &Event) -> bool {
        if let EventKind::AssistantText { .. } = e.kind {
            // Kept for search; no node, count or time depends on it.
            return true;
        }
        let t = e.time_ms;
        self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
        self.last_time = self.last_time.max(t);
        if self.g.nodes.len() == 1 && self.g.nodes[0].start_time.is_none() {
            self.g.nodes[0].start_time = Some(t);
            self.mark(0);
        }
        match &e.kind {
            EventKind::Session(h) => self.on_session(h, e.seq),
            EventKind::Title { title } => {
                self.title_set = true;
                self.set_title(title.clone());
                self.note(0, e.seq);
            }
            EventKind::UserMessage { text } => self.on_user(text, e.seq),
            // Returned above: it touches no node.
            EventKind::AssistantText { .. } => {}
            EventKind::TurnStart { turn } => {
                self.start_phase(*turn, t, e.seq, false);
            }
            EventKind::TurnEnd { turn, reason } => self.end_phase(*turn, reason, t, e.seq),
            EventKind::StepStart { turn, step } => {
                self.start_step(*turn, *step, t, e.seq);
            }
            EventKind::StepEnd { turn, step } => {
                let i = self
                    .step_by_key
                    .get(&(self.resolve_turn(*turn), *step))
                    .copied()
                    .or(self.cur_step);
                if let Some(i) = i {
                    self.note(i, e.seq);
                    self.close_step(i, t);
                }
            }
            EventKind::RequestHeader { provider, model } => {
                let i = self.ensure_step(t, e.seq);
                self.note(i, e.seq);
                if let Some(m) = self.agent_meta(i) {
                    if provider.is_some() {
                        m.provider.clone_from(provider);
                    }
                    if model.is_some() {
                        m.model.clone_from(model);
                    }
                }
            }
            EventKind::Usage(u) => self.on_usage(u, t, e.seq),
            EventKind::Finish { reason } => {
                let i = self.ensure_step(t, e.seq);
                self.note(i, e.seq);
                if let Some(m) = self.agent_meta(i) {
                    m.finish_reason = Some(reason.clone());
                }
            }
            EventKind::LlmRetry {
                retry,
                max_retries,
                delay_ms,
                failure,
            } => self.on_llm_retry(*retry, *max_retries, *delay_ms, failure, t, e.seq),
            EventKind::ToolCall {
                turn,
                step,
                call_id,
                name,
                arguments,
            } => self.on_tool_call(*turn, *step, call_id, name, arguments, t, e.seq),
            EventKind::ToolResult {
                call_id,
                output,
                is_error,
            } => return self.on_tool_result(call_id, output, *is_error, t, e.seq),
            EventKind::ToolCancelled { call_id, reason } => {
                self.on_tool_cancelled(call_id, reason, t, e.seq)
            }
            EventKind::TodoWrite { todos, call_id } => {
                self.on_todos(todos, call_id.as_deref(), t, e.seq)
            }
            EventKind::SubagentDescriptor(d) => self.on_descriptor(d, e.seq),
        }
        true
    }

    /// A step's token usage: on its agent node, the session's totals and the per-model totals.
    fn on_usage(&mut self, u: &Usage, t: i64, seq: u64) {
        let i = self.ensure_step(t, seq);
        self.note(i, seq);
        if let Some(m) = self.agent_meta(i) {
            m.tokens.add_usage(u);
        }
        let mut counts = StepTokens::default();
        counts.add_usage(u);
        self.g.summary.tokens.add_counts(counts);
        self.g.meta.tokens.totals = self.g.summary.tokens;
        // Borrow the model name; allocate the key only for a model not seen before.
        let key = match &self.g.nodes[i].meta {
            NodeMeta::Agent(m) => m.model.as_deref(),
            _ => None,
        }
        .unwrap_or("unknown");
        let by_model = &mut self.g.meta.tokens.by_model;
        match by_model.get_mut(key) {
            Some(tot) => tot.add_counts(counts),
            None => by_model
                .entry(key.to_owned())
                .or_default()
                .add_counts(counts),
        }
    }

    /// A failed LLM request that is retried: an attempt on the step's agent node.
    fn on_llm_retry(
        &mut self,
        retry: u32,
        max_retries: Option<u32>,
        delay_ms: Option<u64>,
        failure: &Failure,
        t: i64,
        seq: u64,
    ) {
        let i = self.ensure_step(t, seq);
        self.note(i, seq);
        let mut n = 0;
        if let Some(m) = self.agent_meta(i) {
            m.attempts.push(LlmAttempt {
                attempt: (retry).max(m.attempts.len() as u32 + 1),
                status: Status::Failed,
                time: t,
                delay_ms,
                max_retries,
                failure: failure.clone(),
                event_ids: vec![seq],
            });
            m.retried = true;
            n = m.attempts.len();
        }
        if !self.scratch[i].closed {
            self.set_status(i, Status::Retrying);
        }
        self.g.summary.counts.retries += 1;
        self.retried.insert(i);
        self.touch(i);
        self.upsert_retry_edge(i, n as u64 + 1);
    }

    pub(super) fn set_title(&mut self, title: String) {
        self.g.title = title.clone();
        self.g.nodes[0].name = truncate_chars(&title, NAME_CHARS);
        self.mark(0);
        if let Some(m) = self.task_meta() {
            m.title = title;
        }
    }

    pub(super) fn on_session(&mut self, h: &SessionStart, seq: u64) {
        self.note(0, seq);
        if self.opts.session_id.is_none() && !h.id.is_empty() {
            self.g.session_id = h.id.clone();
            if self.opts.task_id.is_none() {
                self.g.task_id = h.id.clone();
            }
            self.sid = self.g.session_id.as_str().into();
            self.tid = self.g.task_id.as_str().into();
            let (sid, tid) = (self.sid.clone(), self.tid.clone());
            for n in &mut self.g.nodes {
                n.session_id.clone_from(&sid);
                n.task_id.clone_from(&tid);
            }
            for i in 0..self.g.nodes.len() {
                self.mark(i);
            }
            if !self.title_set && self.g.title.is_empty() {
                self.g.title = h.id.clone();
            }
        }
        if let Some(t) = h.created_ms {
            self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
            self.g.nodes[0].start_time = self.first_time;
            self.mark(0);
        }
        self.g.cwd.clone_from(&h.cwd);
        if self.opts.workspace.is_none() {
            self.g.workspace = h.cwd.as_deref().map(workspace_slug).unwrap_or_default();
        }
        let ws = self.g.workspace.clone();
        let cwd = h.cwd.clone();
        let depth = h.delegation_depth;
        if let Some(m) = self.task_meta() {
            m.cwd = cwd;
            m.delegation_depth = depth;
            m.workspace = ws;
        }
        let hm = &mut self.g.meta.header;
        hm.insert("id".into(), h.id.clone().into());
        hm.insert("version".into(), h.version.clone().into());
        hm.insert("cwd".into(), h.cwd.clone().into());
        hm.insert("created_ms".into(), h.created_ms.into());
        hm.insert("parent_session".into(), h.parent_session.clone().into());
        hm.insert("delegation_depth".into(), h.delegation_depth.into());
        hm.insert("origin".into(), h.origin.clone().into());
        hm.insert("raw".into(), h.raw.clone());
    }
}
