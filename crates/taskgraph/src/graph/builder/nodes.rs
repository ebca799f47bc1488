//! Node and edge primitives: adding nodes (unique ids, counts, `contains` edges) and
//! edges, the call-id map, status / duration / weight updates and the typed meta accessors.

use super::*;

impl IncrementalGraph {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add_node(
        &mut self,
        base_id: &str,
        node_type: NodeType,
        name: String,
        status: Status,
        start: Option<i64>,
        parent: Option<usize>,
        seq: Option<u64>,
        meta: NodeMeta,
    ) -> usize {
        let id: SharedStr = if self.ids.contains(&key_hash(base_id)) {
            (2..)
                .map(|n| format!("{base_id}~{n}"))
                .find(|c| !self.ids.contains(&key_hash(c)))
                .map_or_else(|| base_id.into(), SharedStr::from)
        } else {
            base_id.into()
        };
        self.ids.insert(key_hash(id.as_str()));
        let idx = self.g.nodes.len();
        let phase = match node_type {
            NodeType::Phase => Some(idx),
            _ => parent.and_then(|p| self.scratch[p].phase),
        };
        self.g.nodes.push(Node {
            id,
            node_type,
            name,
            status,
            start_time: start,
            end_time: None,
            duration_ms: 0,
            event_ids: {
                // Most nodes get a few more events (tool: result; step: header, usage, finish, end).
                let mut v = Vec::with_capacity(if node_type == NodeType::Agent { 6 } else { 2 });
                v.extend(seq);
                v
            },
            session_id: self.sid.clone(),
            task_id: self.tid.clone(),
            parent_id: parent.map(|p| self.g.nodes[p].id.clone()),
            meta,
        });
        self.scratch.push(NodeScratch {
            parent,
            phase,
            ..NodeScratch::default()
        });
        self.mark(idx);
        self.crit.add_node(0);
        if status.is_open() && node_type != NodeType::Task {
            self.open.insert(idx);
        }
        if node_type != NodeType::Task && node_type != NodeType::Phase {
            self.touch(idx);
        }
        let c = &mut self.g.summary.counts;
        match node_type {
            NodeType::Task => {}
            NodeType::Phase => c.phases += 1,
            NodeType::Agent => c.agents += 1,
            NodeType::Tool => c.tools += 1,
            NodeType::Skill => c.skills += 1,
            NodeType::Subagent => c.subagents += 1,
            NodeType::Code => c.code_changes += 1,
            NodeType::Test => c.tests += 1,
            NodeType::Plan => c.plans += 1,
        }
        if let Some(p) = parent {
            self.add_edge(p, idx, EdgeType::Contains, Map::new());
        }
        idx
    }

    pub(super) fn add_edge(
        &mut self,
        src: usize,
        dst: usize,
        edge_type: EdgeType,
        meta: Map<String, Value>,
    ) -> usize {
        let idx = self.g.edges.len();
        // `e<n>` in a reusable buffer: the only allocation is the shared string itself.
        self.edgebuf.clear();
        self.edgebuf.push('e');
        self.edgebuf.push_str(itoa::Buffer::new().format(idx + 1));
        let id = SharedStr::from(self.edgebuf.as_str());
        self.g.edges.push(Edge {
            id,
            source: self.g.nodes[src].id.clone(),
            target: self.g.nodes[dst].id.clone(),
            edge_type,
            meta,
        });
        if edge_type.is_execution() {
            self.crit.add_edge(src, dst, idx);
        }
        idx
    }

    /// Records that node `i` changed (status, duration, attempts) since the last refresh.
    pub(super) fn touch(&mut self, i: usize) {
        if !self.scratch[i].touched {
            self.scratch[i].touched = true;
            self.touched.push(i);
        }
    }

    /// Whether tool node `i` has an attempt with call id `c`.
    pub(super) fn has_call(&self, i: usize, c: &str) -> bool {
        matches!(&self.g.nodes[i].meta, NodeMeta::Tool(m) if m.attempts.iter().any(|a| a.call_id == c))
    }

    /// The tool node of call id `c`.
    pub(super) fn tool_of_call(&self, c: &str) -> Option<usize> {
        match self.tool_by_call.get(&key_hash(c)) {
            Some(&i) if self.has_call(i, c) => Some(i),
            Some(_) => self.call_spill.get(c).copied(),
            None => None,
        }
    }

    /// Maps call id `c` to tool node `i` (which already has an attempt with that id).
    pub(super) fn map_call(&mut self, c: &str, i: usize) {
        let h = key_hash(c);
        match self.tool_by_call.get(&h) {
            Some(&j) if j != i && !self.has_call(j, c) => {
                self.call_spill.insert(c.to_owned(), i);
            }
            _ => {
                self.tool_by_call.insert(h, i);
            }
        }
    }

    pub(super) fn note(&mut self, i: usize, seq: u64) {
        self.mark(i);
        let ids = &mut self.g.nodes[i].event_ids;
        if ids.last() != Some(&seq) {
            ids.push(seq);
        }
    }

    pub(super) fn set_status(&mut self, i: usize, s: Status) {
        if self.g.nodes[i].status == s {
            return;
        }
        self.mark(i);
        let node = &mut self.g.nodes[i];
        node.status = s;
        let t = node.node_type;
        self.touch(i);
        if t == NodeType::Task {
            return;
        }
        if t.is_tool_like() {
            // A rejected or never-run call is waiting, not work: its weight depends on status.
            self.update_weight(i);
        }
        if s.is_open() {
            self.open.insert(i);
        } else {
            self.open.remove(&i);
        }
        if t != NodeType::Phase {
            if s == Status::Failed {
                self.failed.insert(i);
            } else {
                self.failed.remove(&i);
            }
        }
    }

    pub(super) fn set_duration(&mut self, i: usize, d: i64) {
        let d = d.max(0);
        let old = self.g.nodes[i].duration_ms;
        if old == d {
            return;
        }
        self.g.nodes[i].duration_ms = d;
        self.mark(i);
        self.touch(i);
        let t = self.g.nodes[i].node_type;
        if t.is_tool_like()
            && let Some(p) = self.scratch[i].parent
            && self.g.nodes[p].node_type == NodeType::Agent
        {
            self.scratch[p].child_dur += d - old;
            self.update_weight(p);
        }
        self.update_weight(i);
    }

    pub(super) fn update_weight(&mut self, i: usize) {
        let n = &self.g.nodes[i];
        let waits = node_wait_kind(n).is_some();
        let w = match n.node_type {
            NodeType::Task | NodeType::Phase => 0,
            NodeType::Agent => (n.duration_ms - self.scratch[i].child_dur).max(0),
            _ if waits => 0,
            _ => n.duration_ms,
        };
        if n.node_type.is_tool_like() {
            if waits {
                self.waiting_nodes.insert(i);
            } else {
                self.waiting_nodes.remove(&i);
            }
        }
        self.crit.set_weight(i, w);
    }

    pub(super) fn running_duration(&self, i: usize) -> i64 {
        let n = &self.g.nodes[i];
        if n.node_type.is_tool_like() {
            let a = &self.scratch[i];
            a.closed_attempts_ms
                + a.open_attempt_start
                    .map_or(0, |s| (self.last_time - s).max(0))
        } else {
            n.start_time.map_or(0, |s| (self.last_time - s).max(0))
        }
    }

    pub(super) fn agent_meta(&mut self, i: usize) -> Option<&mut AgentMeta> {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Agent(m) => Some(m),
            _ => None,
        }
    }

    pub(super) fn tool_meta(&mut self, i: usize) -> Option<&mut ToolMeta> {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Tool(m) => Some(m),
            _ => None,
        }
    }

    pub(super) fn phase_meta(&mut self, i: usize) -> Option<&mut PhaseMeta> {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Phase(m) => Some(m),
            _ => None,
        }
    }

    pub(super) fn task_meta(&mut self) -> Option<&mut TaskMeta> {
        self.mark(0);
        match &mut self.g.nodes[0].meta {
            NodeMeta::Task(m) => Some(m),
            _ => None,
        }
    }

    pub(super) fn set_unclosed(&mut self, i: usize) {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Task(m) => m.unclosed = true,
            NodeMeta::Phase(m) => m.unclosed = true,
            NodeMeta::Agent(m) => m.unclosed = true,
            NodeMeta::Tool(m) => m.unclosed = true,
        }
    }
}
