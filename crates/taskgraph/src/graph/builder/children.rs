//! Child sessions: subagent descriptors, matching child sessions to the subagent nodes
//! that spawned them, and their `child_session` reference.

use super::*;

impl IncrementalGraph {
    pub(super) fn on_descriptor(&mut self, d: &SubagentDescriptor, seq: u64) {
        let target = d
            .call_id
            .as_deref()
            .and_then(|c| self.tool_of_call(c))
            .or_else(|| self.unmatched_subagents.last().copied());
        let Some(i) = target else {
            return;
        };
        self.note(i, seq);
        if let Some(sid) = &d.session_id {
            self.scratch[i].explicit_child = Some(sid.clone());
        }
        if let Some(m) = self.tool_meta(i)
            && let Value::Object(args) = Arc::make_mut(&mut m.arguments)
        {
            if let Some(desc) = &d.description {
                args.entry("description")
                    .or_insert_with(|| desc.clone().into());
            }
            if let Some(p) = &d.prompt {
                args.entry("prompt").or_insert_with(|| p.clone().into());
            }
        }
    }

    // ----- children -------------------------------------------------------------------------

    pub(super) fn match_children(&mut self) {
        if self.opts.children.is_empty() || self.unmatched_subagents.is_empty() {
            return;
        }
        let window = self.opts.child_window_ms;
        let mut still = Vec::new();
        for i in std::mem::take(&mut self.unmatched_subagents) {
            let node = &self.g.nodes[i];
            let call_id = match &node.meta {
                NodeMeta::Tool(m) => m.call_id.clone(),
                _ => String::new(),
            };
            let explicit = self.scratch[i].explicit_child.clone();
            let mut found = self.opts.children.iter().enumerate().position(|(k, c)| {
                !self.children_used[k]
                    && (explicit.as_deref() == Some(c.id.as_str())
                        || (!call_id.is_empty() && c.call_id.as_deref() == Some(call_id.as_str())))
            });
            let closed = self.scratch[i].closed;
            if found.is_none() && (closed || self.opts.live || self.finished) && explicit.is_none()
            {
                let start = node.start_time.unwrap_or(0);
                let end = node.end_time.unwrap_or(i64::MAX - window);
                let sid = &self.g.session_id;
                found = self
                    .opts
                    .children
                    .iter()
                    .enumerate()
                    .filter(|(k, c)| {
                        !self.children_used[*k]
                            && c.call_id.is_none()
                            && c.parent_session.as_deref().is_none_or(|p| p == sid)
                            && c.created_ms
                                .is_some_and(|t| t >= start - window && t <= end + window)
                    })
                    .min_by_key(|(k, c)| ((c.created_ms.unwrap_or(0) - start).abs(), *k))
                    .map(|(k, _)| k);
            }
            match found {
                Some(k) => {
                    self.children_used[k] = true;
                    let r = self.opts.children[k].to_ref();
                    self.scratch[i].child_matched = true;
                    if let Some(m) = self.tool_meta(i) {
                        m.child_session = Some(Some(r));
                    }
                }
                None => still.push(i),
            }
        }
        self.unmatched_subagents = still;
    }
}

impl ChildSummary {
    /// The `child_session` object for a subagent node.
    pub fn to_ref(&self) -> ChildSessionRef {
        ChildSessionRef {
            id: self.id.clone(),
            reference: self.reference.clone(),
            title: self.title.clone(),
            status: self.status,
            counts: self.counts,
        }
    }
}
