//! Tool calls: a call and its result (classification, the retry rule, Codex unified
//! exec), cancelled calls and todo lists.

use super::*;

impl IncrementalGraph {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn on_tool_call(
        &mut self,
        turn: u32,
        step: u32,
        call_id: &str,
        name: &str,
        args: &Arc<Value>,
        t: i64,
        seq: u64,
    ) {
        if let Some(i) = self.tool_of_call(call_id) {
            self.note(i, seq); // duplicate call
            return;
        }
        let parent = if step == 0 {
            self.ensure_step(t, seq)
        } else {
            let turn = self.resolve_turn(turn);
            match self.step_by_key.get(&(turn, step)) {
                Some(&s) => s,
                None => self.start_step(turn, step, t, seq),
            }
        };
        let counts = &mut self.g.meta.tool_name_counts;
        match counts.get_mut(name) {
            Some(c) => *c += 1,
            None => {
                counts.insert(name.to_owned(), 1);
            }
        }
        if let Some(m) = self.agent_meta(parent) {
            m.tool_call_count += 1;
        }
        let key = args_hash(name, args);
        let phase = self.scratch[parent].phase;
        // Same tool and arguments right after a failure: another attempt of that node.
        if let Some(&prev) = self.by_retry_key.get(&key)
            && self.g.nodes[prev].status == Status::Failed
            && self.scratch[prev].phase == phase
            && self.scratch[prev].closed
        {
            self.retry_tool(prev, call_id, phase, t, seq);
            return;
        }
        let nt = classify(name, args);
        let (name_out, meta) = tool_node(nt, name, call_id, args, t, seq);
        let mut buf = std::mem::take(&mut self.idbuf);
        if call_id.is_empty() {
            build_id(&mut buf, "tool-", &[seq], '-');
        } else {
            buf.clear();
            buf.push_str("tool-");
            buf.push_str(call_id);
        }
        let i = self.add_node(
            &buf,
            nt,
            name_out,
            Status::Running,
            Some(t),
            Some(parent),
            Some(seq),
            NodeMeta::Tool(Box::new(meta)),
        );
        self.idbuf = buf;
        let et = match nt {
            NodeType::Skill => EdgeType::Invokes,
            NodeType::Subagent => EdgeType::Delegates,
            NodeType::Code => EdgeType::Modifies,
            NodeType::Test => EdgeType::Validates,
            NodeType::Plan => EdgeType::Produces,
            _ => EdgeType::Calls,
        };
        self.add_edge(parent, i, et, Map::new());
        self.scratch[i].open_attempt_start = Some(t);
        self.scratch[i].retry_key = Some(key);
        self.by_retry_key.insert(key, i);
        if !call_id.is_empty() {
            self.map_call(call_id, i);
        }
        if let Some(p) = phase {
            self.scratch[i].pending_consume = true;
            self.scratch[p].unconsumed.push(i);
        }
        if nt == NodeType::Subagent {
            self.unmatched_subagents.push(i);
        }
    }

    /// Same tool and arguments right after a failure: `call_id` is another attempt of the
    /// failed node `prev`, which opens again.
    fn retry_tool(&mut self, prev: usize, call_id: &str, phase: Option<usize>, t: i64, seq: u64) {
        self.scratch[prev].closed = false;
        self.scratch[prev].open_attempt_start = Some(t);
        self.g.nodes[prev].end_time = None;
        self.mark(prev);
        self.note(prev, seq);
        let mut n = 0;
        if let Some(m) = self.tool_meta(prev) {
            m.attempts.push(ToolAttempt {
                call_id: call_id.to_owned(),
                status: Status::Running,
                start: t,
                end: None,
                error: None,
                event_ids: {
                    let mut v = Vec::with_capacity(2);
                    v.push(seq);
                    v
                },
            });
            m.retried = true;
            n = m.attempts.len();
        }
        self.map_call(call_id, prev);
        self.set_status(prev, Status::Running);
        self.g.summary.counts.retries += 1;
        self.retried.insert(prev);
        self.touch(prev);
        self.upsert_retry_edge(prev, n as u64);
        if !self.scratch[prev].pending_consume
            && let Some(p) = phase
        {
            self.scratch[prev].pending_consume = true;
            self.scratch[p].unconsumed.push(prev);
        }
    }

    pub(super) fn on_tool_result(
        &mut self,
        call_id: &str,
        output: &Arc<str>,
        is_error: bool,
        t: i64,
        seq: u64,
    ) -> bool {
        let Some(i) = self.tool_of_call(call_id) else {
            return false;
        };
        self.note(i, seq);
        if self.scratch[i].closed {
            return true; // duplicate result
        }
        let max = self.opts.max_output_chars;
        // At most `max` bytes is at most `max` characters: no need to count them.
        let truncated = output.len() > max && output.chars().nth(max).is_some();
        // The event's text is kept as it is (shared, not copied) unless it is cut.
        let text: Arc<str> = if truncated {
            truncate_chars(output, max).into()
        } else {
            Arc::clone(output)
        };
        let st = if is_error {
            Status::Failed
        } else {
            Status::Success
        };
        if let Some(m) = self.tool_meta(i) {
            let error = is_error.then(|| text.to_string());
            m.error = error.clone();
            m.output = Some(text);
            m.output_truncated = truncated;
            if let Some(a) = m.attempts.last_mut() {
                a.error = error;
                if a.event_ids.last() != Some(&seq) {
                    a.event_ids.push(seq);
                }
            }
        }
        self.close_as(i, st, t, false);
        if st == Status::Success && self.g.nodes[i].node_type == NodeType::Code {
            let files = match &self.g.nodes[i].meta {
                NodeMeta::Tool(m) => m.files.clone(),
                _ => Vec::new(),
            };
            for f in files {
                if self.files.insert(f.clone()) {
                    self.g.summary.files_changed.push(f);
                }
            }
        }
        true
    }

    /// A call that never ran: `CANCELLED`, and not a code change.
    pub(super) fn on_tool_cancelled(&mut self, call_id: &str, reason: &str, t: i64, seq: u64) {
        let Some(i) = self.tool_of_call(call_id) else {
            return;
        };
        self.note(i, seq);
        if self.scratch[i].closed {
            return;
        }
        if let Some(m) = self.tool_meta(i) {
            m.error = Some(format!("never ran: {reason}"));
        }
        self.close_as(i, Status::Cancelled, t, false);
    }

    pub(super) fn on_todos(&mut self, todos: &[Todo], call_id: Option<&str>, t: i64, seq: u64) {
        let target = call_id
            .and_then(|c| self.tool_of_call(c))
            .filter(|&i| self.g.nodes[i].node_type == NodeType::Plan)
            .or_else(|| {
                // The latest plan call of the current step.
                let s = self.cur_step?;
                (s + 1..self.g.nodes.len()).rev().find(|&i| {
                    self.g.nodes[i].node_type == NodeType::Plan && self.scratch[i].parent == Some(s)
                })
            });
        let i = match target {
            Some(i) => i,
            None => {
                let parent = self.ensure_step(t, seq);
                let meta = ToolMeta {
                    tool_name: "todo_write".into(),
                    call_id: String::new(),
                    arguments: Value::Object(Map::new()).into(),
                    ..ToolMeta::default()
                };
                let mut buf = std::mem::take(&mut self.idbuf);
                build_id(&mut buf, "plan-", &[seq], '-');
                let i = self.add_node(
                    &buf,
                    NodeType::Plan,
                    "plan".into(),
                    Status::Success,
                    Some(t),
                    Some(parent),
                    Some(seq),
                    NodeMeta::Tool(Box::new(meta)),
                );
                self.idbuf = buf;
                self.add_edge(parent, i, EdgeType::Produces, Map::new());
                self.scratch[i].closed = true;
                self.g.nodes[i].end_time = Some(t);
                self.mark(i);
                if let Some(m) = self.tool_meta(i) {
                    m.attempts.push(ToolAttempt {
                        call_id: String::new(),
                        status: Status::Success,
                        start: t,
                        end: Some(t),
                        error: None,
                        event_ids: vec![seq],
                    });
                }
                self.phase_outcome(i, Status::Success, t);
                i
            }
        };
        self.note(i, seq);
        if let Some(m) = self.tool_meta(i) {
            m.todos = Some(todos.to_vec());
        }
    }
}

/// A new tool node's display name and metadata, by its type (the skill's name, the first
/// edited file, the test command, the plan's todos).
fn tool_node(
    nt: NodeType,
    name: &str,
    call_id: &str,
    args: &Arc<Value>,
    t: i64,
    seq: u64,
) -> (String, ToolMeta) {
    let display = match nt {
        NodeType::Skill => format!("skill:{}", skill_name(args).unwrap_or_default()),
        _ => name.to_owned(),
    };
    let mut meta = ToolMeta {
        tool_name: if nt == NodeType::Skill {
            "skill".into()
        } else {
            name.to_owned()
        },
        call_id: call_id.to_owned(),
        arguments: Arc::clone(args),
        attempts: vec![ToolAttempt {
            call_id: call_id.to_owned(),
            status: Status::Running,
            start: t,
            end: None,
            error: None,
            event_ids: {
                let mut v = Vec::with_capacity(2);
                v.push(seq);
                v
            },
        }],
        ..ToolMeta::default()
    };
    let mut name_out = display;
    match nt {
        NodeType::Test => meta.command = Some(command_of(args)),
        NodeType::Code => {
            let files = files_of(args);
            if let Some(f) = files.first() {
                name_out = f.rsplit(['/', '\\']).next().unwrap_or(f).to_owned();
            }
            meta.file = Some(files.first().cloned());
            meta.files = files;
        }
        NodeType::Subagent => meta.child_session = Some(None),
        NodeType::Plan => {
            let todos = Todo::list_from_value(
                args.get("todos")
                    .or_else(|| args.get("plan"))
                    .unwrap_or(&Value::Null),
            );
            meta.todos = Some(todos);
        }
        _ => {}
    }
    (name_out, meta)
}
