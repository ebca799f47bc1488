//! What depends on the whole graph, refreshed after each append: running durations, the
//! task status, the summary lists and the critical path.

use super::*;
use crate::graph::headline::headline;

impl IncrementalGraph {
    // ----- refresh ----------------------------------------------------------------------------

    pub(super) fn refresh(&mut self) {
        // Running durations of open nodes.
        let open: Vec<usize> = self.open.iter().copied().collect();
        for i in open {
            let d = self.running_duration(i);
            self.set_duration(i, d);
        }
        self.match_children();
        let dur = self.refresh_task();
        self.refresh_summary();
        // Critical path.
        self.crit
            .recompute(&self.g.nodes, &self.g.edges, &mut self.g.critical_path);
        self.g.critical_path.total_ms = dur;
        self.refresh_waiting();
        self.g.summary.headline = headline(&self.g.summary);
    }

    /// The task node and the graph's status, times and duration (returned).
    fn refresh_task(&mut self) -> i64 {
        let start = self.first_time;
        let last_open = self
            .last_phase
            .is_some_and(|p| self.g.nodes[p].status.is_open())
            || self
                .cur_step
                .is_some_and(|s| self.g.nodes[s].status.is_open());
        let last_unclosed = self
            .last_phase
            .is_some_and(|p| matches!(&self.g.nodes[p].meta, NodeMeta::Phase(m) if m.unclosed));
        let status = match self.last_phase {
            None if self.g.nodes.len() == 1 => Status::Pending,
            _ if self.opts.live && last_open => Status::Running,
            // An archived session cut off mid-turn: FAILED when its last work outcome is a
            // failure with no later success (recovery-aware), else CANCELLED.
            _ if last_unclosed => match (self.work_fail_end, self.work_ok_end) {
                (Some(f), Some(o)) if f > o => Status::Failed,
                (Some(_), None) => Status::Failed,
                _ => Status::Cancelled,
            },
            _ if last_open => Status::Running,
            _ => {
                let reason = self.last_phase.and_then(|p| self.scratch[p].reason);
                match reason {
                    Some(TurnEndKind::Error) => Status::Failed,
                    Some(TurnEndKind::Aborted) => Status::Cancelled,
                    _ => match (self.task_fail_end, self.task_ok_end) {
                        (Some(f), Some(o)) if f > o => Status::Failed,
                        (Some(_), None) => Status::Failed,
                        _ => Status::Success,
                    },
                }
            }
        };
        if self.g.nodes[0].status != status {
            self.g.nodes[0].status = status;
            self.mark(0);
        }
        if last_unclosed && let Some(m) = self.task_meta() {
            m.unclosed = true;
        }
        let end = if status.is_open() || start.is_none() {
            None
        } else {
            Some(self.last_time)
        };
        let dur = start.map_or(0, |s| (self.last_time - s).max(0));
        let task = &self.g.nodes[0];
        if (task.start_time, task.end_time, task.duration_ms) != (start, end, dur) {
            self.mark(0);
        }
        let task = &mut self.g.nodes[0];
        task.start_time = start;
        task.end_time = end;
        task.duration_ms = dur;
        self.g.status = status;
        self.g.start_time = start;
        self.g.end_time = end;
        self.g.duration_ms = dur;
        self.g.meta.live = self.opts.live;
        dur
    }

    /// The summary's counts and lists (slowest, failed and retried steps, most used tools),
    /// updated for the nodes this append touched.
    fn refresh_summary(&mut self) {
        let s = &mut self.g.summary;
        s.counts.errors = self.failed.len() as u64;
        s.counts.files_changed = s.files_changed.len() as u64;
        let nodes = &self.g.nodes;
        // Only the nodes touched by this append can enter, leave or change in these lists.
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        for &i in &touched {
            self.scratch[i].touched = false;
        }
        let work = |i: usize| !matches!(nodes[i].node_type, NodeType::Task | NodeType::Phase);
        if self.slow.is_empty() {
            // Nothing filed yet (first refresh of a build): every work node is in `touched`.
            self.slow = touched
                .iter()
                .filter(|&&i| work(i))
                .map(|&i| {
                    let d = nodes[i].duration_ms;
                    self.scratch[i].slow_key = Some(d);
                    (Reverse(d), i)
                })
                .collect();
        } else {
            for &i in &touched {
                let d = nodes[i].duration_ms;
                if !work(i) || self.scratch[i].slow_key == Some(d) {
                    continue;
                }
                if let Some(old) = self.scratch[i].slow_key.replace(d) {
                    self.slow.remove(&(Reverse(old), i));
                }
                self.slow.insert((Reverse(d), i));
            }
        }
        let slowest: Vec<NodeRef> = self
            .slow
            .iter()
            .take(3)
            .map(|&(_, i)| node_ref(nodes, i))
            .collect();
        let s = &mut self.g.summary;
        for &i in &touched {
            sync_list(
                &mut self.failed_idx,
                &mut s.failed_steps,
                i,
                self.failed.contains(&i),
                nodes,
            );
            sync_list(
                &mut self.retried_idx,
                &mut s.retried_steps,
                i,
                self.retried.contains(&i),
                nodes,
            );
        }
        touched.clear();
        self.touched = touched;
        let mut tools: Vec<ToolCount> = self
            .g
            .meta
            .tool_name_counts
            .iter()
            .map(|(k, v)| ToolCount {
                name: k.clone(),
                count: *v,
            })
            .collect();
        tools.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
        tools.truncate(10);
        let s = &mut self.g.summary;
        s.slowest_steps = slowest;
        s.most_used_tools = tools;
    }

    /// The reply gap before phase node `p` (0 for the first turn or overlapping turns).
    fn reply_gap_before(&self, p: usize) -> i64 {
        let Ok(k) = self.phases.binary_search(&p) else {
            return 0;
        };
        let Some(&prev) = k.checked_sub(1).and_then(|k| self.phases.get(k)) else {
            return 0;
        };
        match (self.g.nodes[prev].end_time, self.g.nodes[p].start_time) {
            (Some(end), Some(start)) => (start - end).max(0),
            _ => 0,
        }
    }

    /// Waiting for the person: the task's total, and the path's segments — the reply before
    /// each turn on the path and the waiting calls inside those turns (weight 0, so the path
    /// itself may step past them), in time order.
    fn refresh_waiting(&mut self) {
        let nodes = &self.g.nodes;
        let gaps: i64 = self.phases.iter().map(|&p| self.reply_gap_before(p)).sum();
        let calls: i64 = self
            .waiting_nodes
            .iter()
            .map(|&i| nodes[i].duration_ms.max(0))
            .sum();
        let path_phases: Vec<usize> = self
            .crit
            .path()
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| nodes[c].node_type == NodeType::Phase)
            .collect();
        let mut on_path: Vec<(usize, WaitSegment)> = path_phases
            .iter()
            .filter_map(|&p| Some((p, node_wait_segment(&nodes[p], self.reply_gap_before(p))?)))
            .collect();
        on_path.extend(self.waiting_nodes.iter().filter_map(|&i| {
            let phase = self.scratch[i].phase?;
            path_phases.binary_search(&phase).ok()?;
            Some((i, node_wait_segment(&nodes[i], 0)?))
        }));
        on_path.sort_by_key(|(i, w)| (w.start_time, *i));
        let path: Vec<WaitSegment> = on_path.into_iter().map(|(_, w)| w).collect();
        self.g.summary.waiting_ms = gaps + calls;
        self.g.critical_path.waiting_ms = path.iter().map(|w| w.duration_ms).sum();
        self.g.critical_path.waiting = path;
    }
}

/// The summary entry of node `i`.
pub(super) fn node_ref(nodes: &[Node], i: usize) -> NodeRef {
    let n = &nodes[i];
    let (attempts, error) = match &n.meta {
        NodeMeta::Tool(m) => (m.attempts.len() as u32, m.error.clone()),
        NodeMeta::Agent(m) => (
            m.attempts.len() as u32 + 1,
            m.attempts.last().map(|a| a.failure.message.clone()),
        ),
        _ => (1, None),
    };
    NodeRef {
        id: n.id.clone(),
        name: n.name.clone(),
        node_type: n.node_type,
        status: n.status,
        duration_ms: n.duration_ms,
        attempts,
        error: if n.status == Status::Failed || n.node_type == NodeType::Agent {
            error
        } else {
            None
        },
    }
}

/// Keeps `list` (ordered by node index, indices in `idx`) in step with node `i`.
pub(super) fn sync_list(
    idx: &mut Vec<usize>,
    list: &mut Vec<NodeRef>,
    i: usize,
    want: bool,
    nodes: &[Node],
) {
    match (idx.binary_search(&i), want) {
        (Ok(p), true) => list[p] = node_ref(nodes, i),
        (Ok(p), false) => {
            idx.remove(p);
            list.remove(p);
        }
        (Err(p), true) => {
            idx.insert(p, i);
            list.insert(p, node_ref(nodes, i));
        }
        (Err(_), false) => {}
    }
}
