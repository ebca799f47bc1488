//! Two runs side by side: their graphs aligned by `nodeId`.
//!
//! [`diff_events`] folds each run's events into its projection and pairs the nodes by
//! `nodeId`: per node the instance count, status, summed duration, tokens and cost
//! ([`crate::cost`]) of each side, and the structural difference of each paired
//! instance's input and output ([`json_patch::diff`], reported as added / removed /
//! changed JSON Pointer paths with both values). It names the **first divergence**:
//! of the differences found, the one recorded earliest in run A — an input that
//! differs counts at the instance's `node.started`, a status, output or error at its
//! `node.finished` / `node.error`, a node or instance B lacks at its start in A — so a
//! parent whose output differs because a child's did is not the divergence, the child
//! is. When A has no difference, the first node only B has is. Durations, tokens and
//! cost are shown, never counted as a divergence; neither is an injected value.
//!
//! The HTTP route (`GET /api/diff`), `mindgate diff`, the MCP tool `diff_runs` and the
//! viewer's diff view all call [`RunStore::diff_runs`]. The rules: `docs/share.md`.

use std::collections::HashMap;

use mindgate_pricing::{Cost, PriceTable, TokenCounts};
use serde::Serialize;
use serde_json::Value;

use crate::cost::add_instance;
use crate::error::StoreError;
use crate::model::{RunState, StoredEvent};
use crate::projection::{InstanceDetail, NodeDetail, NodeState, RunProjection};
use crate::reader::RunStore;

/// Most JSON changes listed per node (input and output together); further ones are
/// counted in [`NodeDiff::more_changes`].
pub const MAX_CHANGES_PER_NODE: usize = 100;

/// Why [`RunStore::diff_runs`] could not compare.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// No run has this id.
    #[error("run {0} not found")]
    NotFound(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One run of the pair, in brief.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSide {
    /// Run id.
    pub run_id: String,
    /// Display name.
    pub name: String,
    /// Application.
    pub app: String,
    /// Lifecycle state.
    pub status: RunState,
    /// Run duration.
    pub duration_ms: Option<i64>,
    /// The run's nodes: the ones that ran (its `counts.nodes`, `docs/glossary.md`; a node
    /// only announced by a hint is aligned in [`RunDiff::nodes`] but not counted here).
    pub nodes: usize,
    /// Tokens (inclusive usage left out, as the run's cost).
    pub tokens: TokenCounts,
    /// What the run cost.
    pub cost: Cost,
    /// `meta.replayOf`, when the run is a replay of another.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
}

/// One node of one run, summed over its instances.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSide {
    /// Executions.
    pub instances: usize,
    /// Aggregate state.
    pub status: NodeState,
    /// Summed reported durations (`None` when no instance reported one).
    pub duration_ms: Option<f64>,
    /// Summed tokens.
    pub tokens: TokenCounts,
    /// What its instances cost.
    pub cost: Cost,
}

/// What differs about a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Difference {
    /// Run B has no such node.
    OnlyInA,
    /// Run A has no such node.
    OnlyInB,
    /// The runs executed it a different number of times.
    Instances,
    /// An instance ended in another state.
    Status,
    /// An instance got another input.
    Input,
    /// An instance produced another output.
    Output,
    /// An instance failed with another error (or only on one side).
    Error,
}

/// The kind of a [`JsonChange`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeOp {
    /// Only B has the path.
    Added,
    /// Only A has the path.
    Removed,
    /// Both have it, with different values.
    Changed,
}

/// One path where an instance's input or output differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonChange {
    /// Which instance (0-based, in start order).
    pub instance: usize,
    /// `input` or `output`.
    pub field: &'static str,
    /// What happened at the path.
    pub op: ChangeOp,
    /// JSON Pointer into the field (`""` is the whole value).
    pub path: String,
    /// A's value there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<Value>,
    /// B's value there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<Value>,
}

/// One logical node, both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDiff {
    /// Node id (the alignment key).
    pub node_id: String,
    /// Kind.
    pub kind: String,
    /// Display name.
    pub name: String,
    /// Run A's side (`None`: only in B).
    pub a: Option<NodeSide>,
    /// Run B's side (`None`: only in A).
    pub b: Option<NodeSide>,
    /// What differs (empty: the same).
    pub differences: Vec<Difference>,
    /// Input and output paths that differ, per paired instance.
    pub changes: Vec<JsonChange>,
    /// Changes past [`MAX_CHANGES_PER_NODE`], not listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub more_changes: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Where the runs part.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Divergence {
    /// The node.
    pub node_id: String,
    /// What differs there first.
    pub difference: Difference,
    /// The instance (0-based), when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<usize>,
    /// `seq` in run A where it shows (B's, for a node only B has).
    pub seq: Option<u64>,
}

/// `GET /api/diff?a=&b=`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunDiff {
    /// Run A.
    pub a: RunSide,
    /// Run B.
    pub b: RunSide,
    /// Every node: A's in A's recorded order, then those only B has, in B's.
    pub nodes: Vec<NodeDiff>,
    /// Node ids only A has.
    pub only_in_a: Vec<String>,
    /// Node ids only B has.
    pub only_in_b: Vec<String>,
    /// The first divergence, `None` when the runs did the same.
    pub first_divergence: Option<Divergence>,
}

/// A run's events folded for the diff.
struct Folded {
    nodes: Vec<NodeDetail>,
    /// `(nodeId, instanceId)` → `seq` of its last `node.finished` / `node.error`.
    outcomes: HashMap<(String, String), u64>,
    /// Node id → `seq` of the first event naming it.
    first_seen: HashMap<String, u64>,
    /// The run's tokens and cost ([`crate::cost::run_cost`]).
    usage: (TokenCounts, Cost),
}

/// A run being folded for the diff, one event at a time (from a slice, or streamed from
/// the database by [`RunStore::diff_runs`], which then never holds a run's events).
struct Folder {
    projection: RunProjection,
    outcomes: HashMap<(String, String), u64>,
    first_seen: HashMap<String, u64>,
}

/// The instance a `node.finished` / `node.error` payload names.
#[derive(serde::Deserialize)]
struct InstanceOf<'a> {
    #[serde(rename = "instanceId", borrow, default)]
    instance_id: Option<std::borrow::Cow<'a, str>>,
}

impl Folder {
    fn new(run_id: &str) -> Folder {
        Folder {
            projection: RunProjection::for_detail(run_id),
            outcomes: HashMap::new(),
            first_seen: HashMap::new(),
        }
    }

    /// One event, in `seq` order (`node`: the node it names, as stored).
    fn apply(&mut self, seq: u64, ts: i64, type_name: &str, node: Option<&str>, payload: &str) {
        if let Some(node) = node {
            if !self.first_seen.contains_key(node) {
                self.first_seen.insert(node.to_owned(), seq);
            }
            if matches!(type_name, "node.finished" | "node.error")
                && let Ok(InstanceOf {
                    instance_id: Some(instance),
                }) = serde_json::from_str::<InstanceOf<'_>>(payload)
            {
                self.outcomes
                    .insert((node.to_owned(), instance.into_owned()), seq);
            }
        }
        self.projection.apply_event(type_name, seq, ts, payload);
    }

    fn finish(self, prices: &PriceTable) -> Folded {
        let Folder {
            projection,
            outcomes,
            first_seen,
        } = self;
        let (graph, mut nodes) = projection.into_details();
        let usage = crate::cost::run_cost(&graph, prices);
        drop(graph);
        // Recorded order: by the first event naming the node (a parent named before it
        // started keeps its place by its own first event).
        nodes.sort_by_key(|n| first_seen.get(&n.node_id).copied().unwrap_or(u64::MAX));
        Folded {
            nodes,
            outcomes,
            first_seen,
            usage,
        }
    }
}

fn fold(run_id: &str, events: &[StoredEvent], prices: &PriceTable) -> Folded {
    let mut folder = Folder::new(run_id);
    for ev in events {
        folder.apply(
            ev.seq,
            ev.ts,
            &ev.type_name,
            ev.node_id.as_deref(),
            ev.payload.get(),
        );
    }
    folder.finish(prices)
}

fn side(node: &NodeDetail, prices: &PriceTable) -> NodeSide {
    let mut tokens = TokenCounts::default();
    let mut cost = Cost::default();
    let mut duration: Option<f64> = None;
    for inst in &node.instances {
        add_instance(prices, &inst.summary, &mut tokens, &mut cost);
        if let Some(d) = inst.summary.duration_ms {
            *duration.get_or_insert(0.0) += d;
        }
    }
    NodeSide {
        instances: node.instances.len(),
        status: node.status,
        duration_ms: duration,
        tokens,
        cost,
    }
}

/// The structural changes from `a` to `b` (a missing value is JSON `null`).
fn json_changes(instance: usize, field: &'static str, a: &Value, b: &Value) -> Vec<JsonChange> {
    use json_patch::PatchOperation;
    let patch = json_patch::diff(a, b);
    let mut out = Vec::new();
    for op in patch.0 {
        let (op, path) = match op {
            PatchOperation::Add(add) => (ChangeOp::Added, add.path.to_string()),
            PatchOperation::Remove(remove) => (ChangeOp::Removed, remove.path.to_string()),
            PatchOperation::Replace(replace) => (ChangeOp::Changed, replace.path.to_string()),
            // `diff` emits only add, remove and replace; anything else: the whole value.
            _ => (ChangeOp::Changed, String::new()),
        };
        let a_value = a.pointer(&path).cloned();
        let b_value = b.pointer(&path).cloned();
        out.push(JsonChange {
            instance,
            field,
            op,
            path,
            a: a_value,
            b: b_value,
        });
    }
    out
}

fn error_of(inst: &InstanceDetail) -> Option<(&str, &str)> {
    inst.summary
        .error
        .as_ref()
        .map(|e| (e.name.as_str(), e.message.as_str()))
}

/// A difference found, and where run A recorded it.
struct Found {
    difference: Difference,
    instance: Option<usize>,
    seq: Option<u64>,
}

struct Compared {
    differences: Vec<Difference>,
    changes: Vec<JsonChange>,
    earliest: Option<Found>,
}

fn compare(a: &NodeDetail, b: &NodeDetail, folded_a: &Folded) -> Compared {
    let mut differences = Vec::new();
    let mut changes = Vec::new();
    let mut earliest: Option<Found> = None;
    let mut note = |difference: Difference, instance: Option<usize>, seq: Option<u64>| {
        if !differences.contains(&difference) {
            differences.push(difference);
        }
        let better = match &earliest {
            None => true,
            Some(found) => seq.unwrap_or(u64::MAX) < found.seq.unwrap_or(u64::MAX),
        };
        if better {
            earliest = Some(Found {
                difference,
                instance,
                seq,
            });
        }
    };
    let outcome_seq = |inst: &InstanceDetail| {
        folded_a
            .outcomes
            .get(&(a.node_id.clone(), inst.summary.instance_id.clone()))
            .copied()
            .or(inst.summary.first_seq)
    };
    let null = Value::Null;
    for (i, (ia, ib)) in a.instances.iter().zip(&b.instances).enumerate() {
        let input_a = ia.input.as_ref().unwrap_or(&null);
        let input_b = ib.input.as_ref().unwrap_or(&null);
        if input_a != input_b {
            note(Difference::Input, Some(i), ia.summary.first_seq);
            changes.extend(json_changes(i, "input", input_a, input_b));
        }
        if ia.summary.status != ib.summary.status {
            note(Difference::Status, Some(i), outcome_seq(ia));
        }
        let output_a = ia.output.as_ref().unwrap_or(&null);
        let output_b = ib.output.as_ref().unwrap_or(&null);
        if output_a != output_b {
            note(Difference::Output, Some(i), outcome_seq(ia));
            changes.extend(json_changes(i, "output", output_a, output_b));
        }
        if error_of(ia) != error_of(ib) {
            note(Difference::Error, Some(i), outcome_seq(ia));
        }
    }
    if a.instances.len() != b.instances.len() {
        let (instance, seq) = match a.instances.get(b.instances.len()) {
            // A ran it more often: B stopped short at A's next instance.
            Some(extra) => (b.instances.len(), extra.summary.first_seq),
            // B ran it more often: it went on after A's last instance ended.
            None => (a.instances.len(), a.instances.last().and_then(&outcome_seq)),
        };
        note(Difference::Instances, Some(instance), seq);
    }
    if a.instances.is_empty() && b.instances.is_empty() && a.status != b.status {
        note(
            Difference::Status,
            None,
            folded_a.first_seen.get(&a.node_id).copied(),
        );
    }
    Compared {
        differences,
        changes,
        earliest,
    }
}

fn capped(mut changes: Vec<JsonChange>) -> (Vec<JsonChange>, usize) {
    let more = changes.len().saturating_sub(MAX_CHANGES_PER_NODE);
    changes.truncate(MAX_CHANGES_PER_NODE);
    (changes, more)
}

/// The node lists of two runs compared. Pure: `a_events` and `b_events` are each run's
/// events in `seq` order. The run sides' names and states come from the caller
/// ([`RunStore::diff_runs`]); here they are filled from the ids.
pub fn diff_events(
    a_id: &str,
    a_events: &[StoredEvent],
    b_id: &str,
    b_events: &[StoredEvent],
    prices: &PriceTable,
) -> RunDiff {
    let folded_a = fold(a_id, a_events, prices);
    let folded_b = fold(b_id, b_events, prices);
    diff_folded(a_id, &folded_a, b_id, &folded_b, prices)
}

/// Two folded runs compared ([`diff_events`]).
fn diff_folded(
    a_id: &str,
    folded_a: &Folded,
    b_id: &str,
    folded_b: &Folded,
    prices: &PriceTable,
) -> RunDiff {
    let b_index: HashMap<&str, &NodeDetail> = folded_b
        .nodes
        .iter()
        .map(|n| (n.node_id.as_str(), n))
        .collect();
    let mut nodes = Vec::with_capacity(folded_a.nodes.len().max(folded_b.nodes.len()));
    let mut only_in_a = Vec::new();
    let mut only_in_b = Vec::new();
    let mut first: Option<(String, Found)> = None;
    let mut consider = |node_id: &str, found: Found| {
        let better = match &first {
            None => true,
            Some((_, f)) => found.seq.unwrap_or(u64::MAX) < f.seq.unwrap_or(u64::MAX),
        };
        if better {
            first = Some((node_id.to_owned(), found));
        }
    };
    for node_a in &folded_a.nodes {
        let side_a = Some(side(node_a, prices));
        let (side_b, compared) = match b_index.get(node_a.node_id.as_str()) {
            Some(node_b) => (
                Some(side(node_b, prices)),
                compare(node_a, node_b, folded_a),
            ),
            None => {
                only_in_a.push(node_a.node_id.clone());
                (
                    None,
                    Compared {
                        differences: vec![Difference::OnlyInA],
                        changes: Vec::new(),
                        earliest: Some(Found {
                            difference: Difference::OnlyInA,
                            instance: None,
                            seq: folded_a.first_seen.get(&node_a.node_id).copied(),
                        }),
                    },
                )
            }
        };
        if let Some(found) = compared.earliest {
            consider(&node_a.node_id, found);
        }
        let (changes, more_changes) = capped(compared.changes);
        nodes.push(NodeDiff {
            node_id: node_a.node_id.clone(),
            kind: node_a.kind.clone(),
            name: node_a.name.clone(),
            a: side_a,
            b: side_b,
            differences: compared.differences,
            changes,
            more_changes,
        });
    }
    let a_ids: std::collections::HashSet<&str> =
        folded_a.nodes.iter().map(|n| n.node_id.as_str()).collect();
    for node_b in &folded_b.nodes {
        if a_ids.contains(node_b.node_id.as_str()) {
            continue;
        }
        only_in_b.push(node_b.node_id.clone());
        nodes.push(NodeDiff {
            node_id: node_b.node_id.clone(),
            kind: node_b.kind.clone(),
            name: node_b.name.clone(),
            a: None,
            b: Some(side(node_b, prices)),
            differences: vec![Difference::OnlyInB],
            changes: Vec::new(),
            more_changes: 0,
        });
    }
    let first_divergence = match first {
        Some((node_id, found)) => Some(Divergence {
            node_id,
            difference: found.difference,
            instance: found.instance,
            seq: found.seq,
        }),
        None => only_in_b.first().map(|node_id| Divergence {
            node_id: node_id.clone(),
            difference: Difference::OnlyInB,
            instance: None,
            seq: folded_b.first_seen.get(node_id).copied(),
        }),
    };
    let brief = |id: &str, folded: &Folded| RunSide {
        run_id: id.to_owned(),
        name: id.to_owned(),
        app: String::new(),
        status: RunState::Running,
        duration_ms: None,
        nodes: folded.nodes.len(),
        tokens: folded.usage.0,
        cost: folded.usage.1.clone(),
        replay_of: None,
    };
    RunDiff {
        a: brief(a_id, folded_a),
        b: brief(b_id, folded_b),
        nodes,
        only_in_a,
        only_in_b,
        first_divergence,
    }
}

impl RunStore {
    /// Runs `a` and `b` compared ([`diff_events`]), with their names, states and durations.
    pub fn diff_runs(&self, a: &str, b: &str) -> Result<RunDiff, DiffError> {
        let run_a = self
            .get_run(a)?
            .ok_or_else(|| DiffError::NotFound(a.to_owned()))?;
        let run_b = self
            .get_run(b)?
            .ok_or_else(|| DiffError::NotFound(b.to_owned()))?;
        // One run folded at a time, streamed: neither run's events are held.
        let fold_run = |id: &str| -> Result<Folded, DiffError> {
            let mut folder = Folder::new(id);
            self.for_each_event(id, |seq, ts, type_name, node, payload| {
                folder.apply(seq, ts, type_name, node, payload);
            })?
            .ok_or_else(|| DiffError::NotFound(id.to_owned()))?;
            Ok(folder.finish(&self.prices))
        };
        let folded_a = fold_run(a)?;
        let folded_b = fold_run(b)?;
        let mut diff = diff_folded(a, &folded_a, b, &folded_b, &self.prices);
        for (side, run) in [(&mut diff.a, &run_a), (&mut diff.b, &run_b)] {
            side.name = run.name.clone();
            side.app = run.app.clone();
            side.status = run.status;
            side.duration_ms = run.duration_ms;
            side.nodes = usize::try_from(run.counts.nodes).unwrap_or(usize::MAX);
            side.replay_of = run
                .meta
                .as_ref()
                .and_then(|m| m.get("replayOf"))
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        Ok(diff)
    }
}
