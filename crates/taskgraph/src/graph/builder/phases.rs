//! Phases (turns): user messages, turn numbering, starting and ending a phase, and its
//! recovery-aware outcome.

use super::*;

impl IncrementalGraph {
    pub(super) fn on_user(&mut self, text: &str, seq: u64) {
        // Titles come from the first real request (not a slash-command envelope or a preamble).
        let request = crate::text::request_text(text);
        let first = match (self.task_meta(), request) {
            (Some(m), Some(r)) if m.user_request.is_none() => {
                m.user_request = Some(r.to_owned());
                true
            }
            _ => false,
        };
        if first && !self.title_set {
            let r = request.unwrap_or_default();
            self.g.title = truncate_chars(r.lines().next().unwrap_or_default(), NAME_CHARS);
            self.g.nodes[0].name.clone_from(&self.g.title);
            self.mark(0);
            let title = self.g.title.clone();
            if let Some(m) = self.task_meta() {
                m.title = title;
            }
        }
        // Attach to the open phase that has no message and no steps yet; else to the next turn.
        if let Some(p) = self.cur_phase
            && self.g.nodes[p].status.is_open()
            && self.scratch[p].last_step.is_none()
            && matches!(&self.g.nodes[p].meta, NodeMeta::Phase(m) if m.user_message.is_none())
        {
            self.set_phase_message(p, text);
            self.note(p, seq);
        } else {
            self.pending_user = Some((text.to_owned(), seq));
        }
    }

    pub(super) fn set_phase_message(&mut self, p: usize, text: &str) {
        let shown = crate::text::request_text(text).unwrap_or(text.trim());
        self.g.nodes[p].name = truncate_chars(shown.lines().next().unwrap_or_default(), NAME_CHARS);
        self.mark(p);
        let max = self.opts.max_output_chars;
        if let Some(m) = self.phase_meta(p) {
            m.user_message = Some(truncate_chars(text, max));
        }
    }

    pub(super) fn resolve_turn(&self, turn: u32) -> u32 {
        if turn == 0 {
            self.cur_phase
                .and_then(|p| match &self.g.nodes[p].meta {
                    NodeMeta::Phase(m) => Some(m.turn),
                    _ => None,
                })
                .unwrap_or(0)
        } else {
            turn
        }
    }

    pub(super) fn start_phase(&mut self, turn: u32, t: i64, seq: u64, implicit: bool) -> usize {
        if let Some(&p) = self.phase_by_turn.get(&turn)
            && !self.scratch[p].closed
        {
            // An implicitly created phase (or a repeated turn/start) is the same phase.
            self.note(p, seq);
            if !implicit {
                let s = self.g.nodes[p].start_time.map_or(t, |s| s.min(t));
                self.g.nodes[p].start_time = Some(s);
                self.mark(p);
            }
            return p;
        }
        if let Some(prev) = self.cur_phase
            && !self.scratch[prev].closed
        {
            self.force_close_phase(prev, t);
        }
        let mut name = String::with_capacity(8);
        build_id(&mut name, "Turn ", &[u64::from(turn)], '-');
        let meta = NodeMeta::Phase(PhaseMeta {
            turn,
            ..PhaseMeta::default()
        });
        let mut buf = std::mem::take(&mut self.idbuf);
        build_id(&mut buf, "phase-", &[u64::from(turn)], '-');
        let p = self.add_node(
            &buf,
            NodeType::Phase,
            name,
            Status::Running,
            Some(t),
            Some(0),
            Some(seq),
            meta,
        );
        self.idbuf = buf;
        self.phases.push(p);
        let from = self.last_phase.unwrap_or(0);
        self.add_edge(from, p, EdgeType::DependsOn, Map::new());
        // The work of the previous turn leads into this one: its last step, and the calls whose
        // results no step of that turn consumed, so the critical path can cross turns.
        if let Some(prev) = self.last_phase {
            let mut tails: Vec<usize> = self.scratch[prev].last_step.into_iter().collect();
            tails.extend(self.scratch[prev].unconsumed.iter().copied());
            for tail in tails {
                self.add_edge(tail, p, EdgeType::DependsOn, Map::new());
            }
        }
        self.phase_by_turn.insert(turn, p);
        self.cur_phase = Some(p);
        self.last_phase = Some(p);
        self.cur_step = None;
        if let Some((text, useq)) = self.pending_user.take() {
            self.set_phase_message(p, &text);
            self.note(p, useq);
            self.g.nodes[p].event_ids.sort_unstable();
            self.mark(p);
        }
        p
    }

    pub(super) fn ensure_phase(&mut self, t: i64, seq: u64) -> usize {
        match self.cur_phase {
            Some(p) => p,
            None => {
                let turn = self.phase_by_turn.keys().max().map_or(1, |m| m + 1);
                self.start_phase(turn, t, seq, true)
            }
        }
    }

    pub(super) fn phase_status(&self, p: usize) -> Status {
        let a = &self.scratch[p];
        // An aborted turn is the user's decision, not a failure: it stays CANCELLED even when
        // the interrupted tool reported an error.
        if a.reason == Some(TurnEndKind::Aborted) {
            return Status::Cancelled;
        }
        let failed_last = match (a.fail_end, a.ok_end) {
            (Some(f), Some(o)) => f > o,
            (Some(_), None) => true,
            _ => false,
        };
        if failed_last {
            return Status::Failed;
        }
        match a.reason {
            Some(TurnEndKind::Error) => Status::Failed,
            Some(TurnEndKind::Aborted) => Status::Cancelled,
            _ => Status::Success,
        }
    }

    pub(super) fn end_phase(&mut self, turn: u32, reason: &TurnReason, t: i64, seq: u64) {
        let turn = self.resolve_turn(turn);
        let p = match self.phase_by_turn.get(&turn).copied().or(self.cur_phase) {
            Some(p) => p,
            None => self.start_phase(turn, t, seq, true),
        };
        self.note(p, seq);
        // Close what is still open in this phase.
        let open_here: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| i != p && self.scratch[i].phase == Some(p))
            .collect();
        for i in open_here {
            let nt = self.g.nodes[i].node_type;
            match (reason.kind, nt) {
                (TurnEndKind::Aborted, _) => self.close_as(i, Status::Cancelled, t, false),
                (_, NodeType::Agent) => self.close_step(i, t),
                _ => {} // tools may still report; archived finish closes them
            }
        }
        self.scratch[p].closed = true;
        self.scratch[p].reason = Some(reason.kind);
        if let Some(m) = self.phase_meta(p) {
            m.reason = Some(reason.kind.as_str().to_owned());
            m.reason_message.clone_from(&reason.message);
        }
        let st = self.phase_status(p);
        self.set_status(p, st);
        self.g.nodes[p].end_time = Some(t);
        self.mark(p);
        let d = self.g.nodes[p].start_time.map_or(0, |s| t - s);
        self.set_duration(p, d);
        self.record_phase_outcome(p);
        self.g.meta.final_turn_reason = FinalTurnReason {
            turn: Some(turn),
            kind: Some(reason.kind.as_str().to_owned()),
            message: reason.message.clone(),
        };
        if self.cur_phase == Some(p) {
            self.cur_step = None;
        }
    }

    pub(super) fn record_phase_outcome(&mut self, p: usize) {
        let end = self.g.nodes[p].end_time;
        match self.g.nodes[p].status {
            Status::Failed => self.task_fail_end = self.task_fail_end.max(end),
            Status::Success => self.task_ok_end = self.task_ok_end.max(end),
            _ => {}
        }
    }

    /// A descendant of phase `p` closed with `status` at `end`: update the recovery maxima.
    pub(super) fn phase_outcome(&mut self, i: usize, status: Status, end: i64) {
        if self.g.nodes[i].node_type.is_tool_like() {
            match status {
                Status::Failed => self.work_fail_end = self.work_fail_end.max(Some(end)),
                Status::Success => self.work_ok_end = self.work_ok_end.max(Some(end)),
                _ => {}
            }
        }
        let Some(p) = self.scratch[i].phase else {
            return;
        };
        match status {
            Status::Failed => {
                self.scratch[p].fail_end =
                    Some(self.scratch[p].fail_end.map_or(end, |f| f.max(end)))
            }
            Status::Success => {
                self.scratch[p].ok_end = Some(self.scratch[p].ok_end.map_or(end, |o| o.max(end)))
            }
            _ => {}
        }
        if self.scratch[p].closed
            && !self.g.nodes[p].status.is_open()
            && self.scratch[p].reason.is_some()
        {
            let st = self.phase_status(p);
            self.set_status(p, st);
            self.record_phase_outcome(p);
        }
    }
}
