//! LLM steps: starting, closing and force-closing steps (and open phases at the end),
//! and the `retries` self-edge of a re-attempted node.

use super::*;

impl IncrementalGraph {
    pub(super) fn start_step(&mut self, turn: u32, step: u32, t: i64, seq: u64) -> usize {
        let turn = self.resolve_turn(turn);
        if let Some(&i) = self.step_by_key.get(&(turn, step))
            && !self.scratch[i].closed
        {
            self.note(i, seq);
            return i;
        }
        let p = match self.phase_by_turn.get(&turn).copied() {
            Some(p) if !self.scratch[p].closed || self.cur_phase == Some(p) => p,
            _ if turn == 0 => self.ensure_phase(t, seq),
            _ => self.start_phase(turn, t, seq, true),
        };
        if let Some(prev) = self.scratch[p].last_step
            && !self.scratch[prev].closed
        {
            self.force_close(prev, t);
        }
        let turn_no = match &self.g.nodes[p].meta {
            NodeMeta::Phase(m) => m.turn,
            _ => turn,
        };
        let step = if step == 0 {
            self.scratch[p].max_step_no + 1
        } else {
            step
        };
        self.scratch[p].max_step_no = self.scratch[p].max_step_no.max(step);
        let meta = NodeMeta::Agent(AgentMeta {
            turn: turn_no,
            step,
            ..AgentMeta::default()
        });
        let mut buf = std::mem::take(&mut self.idbuf);
        build_id(
            &mut buf,
            "step-",
            &[u64::from(turn_no), u64::from(step)],
            '-',
        );
        let mut name = String::with_capacity(12);
        build_id(
            &mut name,
            "LLM ",
            &[u64::from(turn_no), u64::from(step)],
            '.',
        );
        let i = self.add_node(
            &buf,
            NodeType::Agent,
            name,
            Status::Running,
            Some(t),
            Some(p),
            Some(seq),
            meta,
        );
        self.idbuf = buf;
        let from = self.scratch[p].last_step.unwrap_or(p);
        self.add_edge(from, i, EdgeType::DependsOn, Map::new());
        // Keep the phase's buffer (and its capacity) for the next step's tools.
        let mut pending = std::mem::take(&mut self.scratch[p].unconsumed);
        for &tool in &pending {
            self.scratch[tool].pending_consume = false;
            self.add_edge(tool, i, EdgeType::Consumes, Map::new());
        }
        pending.clear();
        self.scratch[p].unconsumed = pending;
        self.scratch[p].last_step = Some(i);
        self.step_by_key.insert((turn_no, step), i);
        self.cur_step = Some(i);
        i
    }

    pub(super) fn ensure_step(&mut self, t: i64, seq: u64) -> usize {
        match self.cur_step {
            Some(i) => i,
            None => {
                let p = self.ensure_phase(t, seq);
                let turn = match &self.g.nodes[p].meta {
                    NodeMeta::Phase(m) => m.turn,
                    _ => 0,
                };
                self.start_step(turn, 0, t, seq)
            }
        }
    }

    pub(super) fn close_step(&mut self, i: usize, t: i64) {
        if self.scratch[i].closed {
            return;
        }
        let failed = match &self.g.nodes[i].meta {
            NodeMeta::Agent(m) => m.finish_reason.as_deref() == Some("error"),
            _ => false,
        };
        let st = if failed {
            Status::Failed
        } else {
            Status::Success
        };
        self.close_as(i, st, t, false);
    }

    /// Closes node `i` with status `st` at `t` (tools: closes the open attempt).
    pub(super) fn close_as(&mut self, i: usize, st: Status, t: i64, unclosed: bool) {
        if self.scratch[i].closed && !unclosed {
            return;
        }
        self.scratch[i].closed = true;
        let start = self.g.nodes[i].start_time.unwrap_or(t);
        let t = t.max(start);
        self.g.nodes[i].end_time = Some(t);
        self.mark(i);
        if self.g.nodes[i].node_type.is_tool_like() {
            if let Some(s) = self.scratch[i].open_attempt_start.take() {
                self.scratch[i].closed_attempts_ms += (t - s).max(0);
            }
            if let Some(m) = self.tool_meta(i)
                && let Some(a) = m.attempts.last_mut()
                && a.end.is_none()
            {
                a.end = Some(t);
                a.status = st;
            }
            let d = self.scratch[i].closed_attempts_ms;
            self.set_duration(i, d);
        } else {
            self.set_duration(i, t - start);
        }
        self.set_status(i, st);
        if unclosed {
            self.set_unclosed(i);
        }
        // An edit that was cancelled never changed a file: it is not a code change.
        if st == Status::Cancelled
            && self.g.nodes[i].node_type == NodeType::Code
            && !self.scratch[i].uncounted
        {
            self.scratch[i].uncounted = true;
            let c = &mut self.g.summary.counts.code_changes;
            *c = c.saturating_sub(1);
        }
        self.phase_outcome(i, st, t);
    }

    /// Closes a node left open (superseded or archived) as CANCELLED with `meta.unclosed`:
    /// a call without output never reported a failure, so (in every reader alike) it is not
    /// counted as one.
    pub(super) fn force_close(&mut self, i: usize, default_end: i64) {
        let st = Status::Cancelled;
        let end = self.scratch[i]
            .parent
            .filter(|&p| self.scratch[p].closed)
            .and_then(|p| self.g.nodes[p].end_time)
            .unwrap_or(default_end);
        self.close_as(i, st, end, true);
        if let Some(m) = self.tool_meta(i)
            && m.error.is_none()
        {
            m.error = Some("no result recorded (unclosed)".into());
        }
    }

    pub(super) fn force_close_phase(&mut self, p: usize, t: i64) {
        let open_here: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| i != p && self.scratch[i].phase == Some(p))
            .collect();
        self.force_close(p, t);
        for i in open_here {
            self.force_close(i, t);
        }
    }

    pub(super) fn close_unclosed(&mut self) {
        let end = self.last_time;
        let open: Vec<usize> = self.open.iter().copied().collect();
        // Children first, so they take their still-open parents' end (the session end).
        for &i in open.iter().rev() {
            if self.g.nodes[i].status.is_open() {
                self.force_close(i, end);
            }
        }
        // Recompute phase outcomes from scratch.
        self.task_fail_end = None;
        self.task_ok_end = None;
        for p in 0..self.g.nodes.len() {
            if self.g.nodes[p].node_type == NodeType::Phase {
                if self.scratch[p].reason.is_some() {
                    let st = self.phase_status(p);
                    self.set_status(p, st);
                }
                self.record_phase_outcome(p);
            }
        }
    }

    pub(super) fn upsert_retry_edge(&mut self, i: usize, attempts: u64) {
        // The retries edge of a node is created once.
        if let Some(ei) = self.scratch[i].retry_edge
            && let Some(e) = self.g.edges.get_mut(ei)
        {
            e.meta.insert("attempts".into(), attempts.into());
            self.changed_edges.push(ei);
            return;
        }
        let mut meta = Map::new();
        meta.insert("attempts".into(), attempts.into());
        let e = self.add_edge(i, i, EdgeType::Retries, meta);
        self.scratch[i].retry_edge = Some(e);
    }
}
