//! The run tools: `list_runs`, `get_run`, `get_node`, `find_errors`, `search_events`.
//!
//! Every function here is synchronous and reads through [`RunStore`] — the same
//! read API and projection the HTTP API serves — and only shapes and bounds the
//! answer for a model.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use mindgate_store::projection::{GraphNode, InstanceDetail, NodeDetail, NodeState, RunGraph};
use mindgate_store::{RunFilter, RunState, RunStore, RunSummary, run_report};
use serde_json::{Map, Value, json};

use crate::error::ToolError;
use crate::output::{Links, ToolOutput};
use crate::output_limits::{cut_str, one_line, preview};
use crate::params::{FindErrorsArgs, GetNodeArgs, GetRunArgs, ListRunsArgs, SearchEventsArgs};
use crate::time::{duration, iso, resolve_since};
use crate::views::node::NodeView;
use crate::views::run::{RunView, node_duration};
use crate::views::to_structured;

/// Default and largest `list_runs` page.
pub const LIST_RUNS_DEFAULT: u32 = 20;
/// Largest `list_runs` page.
pub const LIST_RUNS_MAX: u32 = 100;
pub use crate::views::run::{
    GET_RUN_MAX_EDGES, GET_RUN_MAX_ERRORS, GET_RUN_MAX_NODES, GET_RUN_TOKEN_NODES,
};
/// Lines of the node tree in `get_run`'s text.
pub const GET_RUN_TREE_LINES: usize = 80;
/// Default instances shown by `get_node`.
pub const GET_NODE_DEFAULT_INSTANCES: u32 = 3;
/// Largest `instances` of `get_node`.
pub const GET_NODE_MAX_INSTANCES: u32 = 20;
/// Default characters per value in `get_node`.
pub const GET_NODE_DEFAULT_CHARS: u32 = 2_000;
/// Largest `maxChars` of `get_node`.
pub const GET_NODE_MAX_CHARS: u32 = 20_000;
/// Default and largest limits of `find_errors` and `search_events`.
pub const LIST_DEFAULT: u32 = 20;
/// Largest limit of `find_errors` and `search_events`.
pub const LIST_MAX: u32 = 100;

pub(crate) fn check_limit(
    field: &'static str,
    v: Option<u32>,
    default: u32,
    max: u32,
) -> Result<u32, ToolError> {
    match v {
        None => Ok(default),
        Some(0) => Err(ToolError::bad(
            field,
            format!("must be between 1 and {max}"),
        )),
        Some(n) if n > max => Err(ToolError::bad(
            field,
            format!("{n} is more than the maximum of {max}"),
        )),
        Some(n) => Ok(n),
    }
}

pub(crate) fn check_id(field: &'static str, v: &str) -> Result<(), ToolError> {
    if v.trim().is_empty() {
        return Err(ToolError::bad(field, "must not be empty"));
    }
    if v.len() > 1_024 {
        return Err(ToolError::bad(field, "is longer than 1024 bytes"));
    }
    Ok(())
}

/// A run summary as the tools show it: the HTTP API's shape without `sdk`,
/// with `meta` previewed and a viewer `link`.
pub fn run_value(run: &RunSummary, links: &Links) -> Value {
    let mut v = serde_json::to_value(run).unwrap_or_else(|_| json!({}));
    if let Some(obj) = v.as_object_mut() {
        obj.remove("sdk");
        if let Some(meta) = obj.get("meta").cloned() {
            obj.insert("meta".to_owned(), preview(&meta, 200).0);
        }
        obj.insert("link".to_owned(), Value::String(links.run(&run.id)));
    }
    v
}

pub(crate) fn run_line(run: &RunSummary) -> String {
    let mut s = format!(
        "{} \"{}\" (app {}) — {}, started {}",
        run.id,
        cut_str(&run.name, 80),
        cut_str(&run.app, 60),
        run.status,
        iso(run.started_at)
    );
    if let Some(d) = run.duration_ms {
        let _ = write!(s, ", {}", duration(d as f64));
    }
    let _ = write!(
        s,
        ", {}, {}, {}",
        count_of(usize_of(run.counts.events), "event"),
        count_of(usize_of(run.counts.nodes), "node"),
        count_of(usize_of(run.counts.errors), "error")
    );
    if run.usage.input_tokens + run.usage.output_tokens > 0 {
        let _ = write!(
            s,
            ", tokens {} in / {} out",
            run.usage.input_tokens, run.usage.output_tokens
        );
    }
    if let Some(cost) = run.cost.as_ref().filter(|c| c.usd != Some(0.0)) {
        let _ = write!(s, ", cost {cost}");
    }
    s
}

fn require_run(store: &RunStore, run_id: &str) -> Result<RunSummary, ToolError> {
    store.get_run(run_id)?.ok_or_else(|| ToolError::UnknownRun {
        run_id: run_id.to_owned(),
    })
}

/// `list_runs`: runs newest first, filtered.
pub fn list_runs(
    store: &RunStore,
    args: &ListRunsArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    let limit = check_limit("limit", args.limit, LIST_RUNS_DEFAULT, LIST_RUNS_MAX)?;
    let filter = RunFilter {
        limit: Some(limit),
        before: args.before,
        status: args.status.map(RunState::from),
        app: args.app.clone().filter(|a| !a.is_empty()),
        q: args.query.clone().filter(|q| !q.is_empty()),
        thread: args.thread.clone().filter(|t| !t.is_empty()),
        user: args.user.clone().filter(|u| !u.is_empty()),
        tag: args.tag.clone().filter(|t| !t.is_empty()),
        label: args.label.clone().filter(|t| !t.is_empty()),
        verdict: args.verdict.map(Into::into),
        ..RunFilter::default()
    };
    let list = store.list_runs(&filter)?;
    let mut text = if list.runs.is_empty() {
        "No runs match.".to_owned()
    } else {
        format!("{} run(s), newest first:\n", list.runs.len())
    };
    for run in &list.runs {
        let _ = writeln!(text, "- {}\n  {}", run_line(run), links.run(&run.id));
    }
    if let Some(next) = list.next_before {
        let _ = writeln!(text, "More runs: call list_runs with before={next}.");
    }
    if !list.runs.is_empty() {
        text.push_str("Open one with get_run {\"runId\": …}.");
    }
    let runs: Vec<Value> = list.runs.iter().map(|r| run_value(r, links)).collect();
    Ok(ToolOutput::new(
        text,
        json!({ "runs": runs, "nextBefore": list.next_before }),
    ))
}

fn state_str(s: NodeState) -> Value {
    serde_json::to_value(s).unwrap_or(Value::Null)
}

/// The `error` of the `run.finished` event, previewed (the store's [`RunStore::run_finish_error`]).
fn run_finish_error(store: &RunStore, run: &RunSummary) -> Option<Value> {
    let err = store.run_finish_error(run).ok()??;
    Some(preview(&err, 1_000).0)
}

/// `Name: message` of an error object, else its one-line JSON.
fn error_line(e: &Value, max: usize) -> String {
    match (e.get("name").and_then(Value::as_str), e.get("message")) {
        (Some(name), Some(msg)) => format!("{name}: {}", one_line(msg, max)),
        (None, Some(msg)) => one_line(msg, max),
        _ => one_line(e, max),
    }
}

fn tree_lines(graph: &RunGraph, max: usize) -> (Vec<String>, bool) {
    let ids: HashSet<&str> = graph.nodes.iter().map(|n| n.node_id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&GraphNode>> = HashMap::new();
    let mut roots = Vec::new();
    for n in &graph.nodes {
        match n.parent_id.as_deref() {
            Some(p) if ids.contains(p) && p != n.node_id => children.entry(p).or_default().push(n),
            _ => roots.push(n),
        }
    }
    let mut lines = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<(&GraphNode, usize)> = roots.into_iter().rev().map(|n| (n, 0)).collect();
    let mut cut = false;
    while let Some((n, depth)) = stack.pop() {
        if !seen.insert(n.node_id.as_str()) {
            continue;
        }
        if lines.len() >= max {
            cut = true;
            break;
        }
        let mut line = format!(
            "{}{} ({}) {}",
            "  ".repeat(depth.min(20)),
            n.node_id,
            n.kind,
            serde_json::to_string(&n.status)
                .unwrap_or_default()
                .trim_matches('"')
        );
        if n.instances.len() > 1 {
            let _ = write!(line, " ×{}", n.instances.len());
        }
        if let Some(d) = node_duration(n) {
            let _ = write!(line, " {}", duration(d));
        }
        if let Some(e) = n.instances.iter().rev().find_map(|i| i.error.as_ref()) {
            let _ = write!(
                line,
                " — {}: {}",
                e.name,
                one_line(&Value::String(e.message.clone()), 120)
            );
        }
        lines.push(line);
        if let Some(kids) = children.get(n.node_id.as_str()) {
            for k in kids.iter().rev() {
                stack.push((k, depth + 1));
            }
        }
    }
    // Nodes only reachable through a parent cycle.
    if !cut && seen.len() < graph.nodes.len() {
        for n in &graph.nodes {
            if !seen.contains(n.node_id.as_str()) {
                if lines.len() >= max {
                    cut = true;
                    break;
                }
                lines.push(format!("{} ({})", n.node_id, n.kind));
            }
        }
    }
    (lines, cut)
}

/// `get_run`: summary, the logical graph, errors, slowest nodes and tokens.
pub fn get_run(
    store: &RunStore,
    args: &GetRunArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    check_id("runId", &args.run_id)?;
    let mut run = require_run(store, &args.run_id)?;
    let graph = store.graph(&run.id)?.ok_or_else(|| ToolError::UnknownRun {
        run_id: run.id.clone(),
    })?;
    let run_error = run_finish_error(store, &run);
    let report = run_report(&run, &graph, run_error.clone(), store.prices());
    run.cost = Some(report.tokens.cost.clone());
    let view = RunView::new(run_value(&run, links), &run.id, &report, &graph, links);
    let text = run_text(&run, &view, &graph, links);
    Ok(ToolOutput::new(text, to_structured(&view)))
}

/// `get_run`'s text: the run line, times, errors, slowest, tokens and the graph as a tree.
fn run_text(run: &RunSummary, view: &RunView<'_>, graph: &RunGraph, links: &Links) -> String {
    let mut text = format!("Run {}\n{}\n", run_line(run), links.run(&run.id));
    if view.held_ms > 0.0 {
        let work = view
            .work_ms
            .map_or_else(|| "still running".to_owned(), duration);
        let _ = writeln!(
            text,
            "Work {work}, held at gates {}",
            duration(view.held_ms)
        );
    }
    if let Some(e) = &view.run_error {
        let _ = writeln!(text, "Run error: {}", error_line(e, 500));
    }
    if !view.paused.is_empty() {
        let _ = writeln!(text, "Paused now at: {}", view.paused.join(", "));
    }
    if view.error_count > 0 {
        let _ = writeln!(text, "\nErrors ({}):", view.error_count);
        for e in &view.errors {
            let _ = writeln!(
                text,
                "- {} [{}] {}: {}{}\n  {}",
                e.node_id,
                e.instance_id,
                e.name,
                one_line(&Value::String(e.message.clone()), 300),
                if e.recovered { " (recovered)" } else { "" },
                e.link
            );
        }
    }
    if !view.slowest.is_empty() {
        text.push_str("\nSlowest:\n");
        for s in &view.slowest {
            let _ = writeln!(
                text,
                "- {} {}",
                s.execution.node_id,
                duration(s.execution.duration_ms.unwrap_or(0.0))
            );
        }
    }
    if !view.tokens.by_node.is_empty() {
        text.push_str("\nTokens and cost by node:\n");
        for t in view.tokens.by_node {
            let mut line = format!(
                "- {} {} in / {} out",
                t.node_id, t.input_tokens, t.output_tokens
            );
            if t.cache_read_tokens + t.cache_write_tokens > 0 {
                let _ = write!(
                    line,
                    " / {} cache read / {} cache write",
                    t.cache_read_tokens, t.cache_write_tokens
                );
            }
            let _ = write!(line, ", cost {}", t.cost);
            if !t.models.is_empty() {
                let _ = write!(line, " ({})", t.models.join(", "));
            }
            if t.inclusive {
                line.push_str(" (inclusive of its children: not added to the run's cost)");
            }
            let _ = writeln!(text, "{line}");
        }
    }
    let (lines, tree_cut) = tree_lines(graph, GET_RUN_TREE_LINES);
    let _ = writeln!(text, "\nGraph ({}):", graph_counts(graph));
    for l in &lines {
        let _ = writeln!(text, "{l}");
    }
    if tree_cut {
        let _ = writeln!(
            text,
            "… (more nodes in the structured content and the viewer)"
        );
    }
    text.push_str("\nInputs, outputs and full errors: get_node {\"runId\", \"nodeId\"}.");

    text
}

/// `get_node`: a node's executions with inputs, outputs and errors previewed.
pub fn get_node(
    store: &RunStore,
    args: &GetNodeArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    check_id("runId", &args.run_id)?;
    check_id("nodeId", &args.node_id)?;
    let want = check_limit(
        "instances",
        args.instances,
        GET_NODE_DEFAULT_INSTANCES,
        GET_NODE_MAX_INSTANCES,
    )? as usize;
    let max_chars = check_limit(
        "maxChars",
        args.max_chars,
        GET_NODE_DEFAULT_CHARS,
        GET_NODE_MAX_CHARS,
    )? as usize;
    let Some(detail) = store.node_detail(&args.run_id, &args.node_id)? else {
        require_run(store, &args.run_id)?;
        return Err(ToolError::UnknownNode {
            run_id: args.run_id.clone(),
            node_id: args.node_id.clone(),
        });
    };
    let chosen = chosen_instances(&detail, args, want)?;
    let view = NodeView::new(&detail, &chosen, max_chars, links);
    let text = node_text(&view, &detail, &chosen, store, links);
    Ok(ToolOutput::new(text, to_structured(&view)))
}

/// The executions `get_node` shows: the one named by `instanceId`, else the latest `want`.
fn chosen_instances<'a>(
    detail: &'a NodeDetail,
    args: &GetNodeArgs,
    want: usize,
) -> Result<Vec<(usize, &'a InstanceDetail)>, ToolError> {
    let total = detail.instances.len();
    Ok(match &args.instance_id {
        Some(id) => {
            let hit: Vec<_> = detail
                .instances
                .iter()
                .enumerate()
                .filter(|(_, i)| &i.summary.instance_id == id)
                .collect();
            if hit.is_empty() {
                return Err(ToolError::UnknownInstance {
                    run_id: args.run_id.clone(),
                    node_id: args.node_id.clone(),
                    instance_id: id.clone(),
                });
            }
            hit
        }
        None => detail
            .instances
            .iter()
            .enumerate()
            .skip(total.saturating_sub(want))
            .collect(),
    })
}

/// `get_node`'s text: the node line, each chosen execution (times, values, error, usage,
/// pauses) and how to see more.
fn node_text(
    view: &NodeView<'_>,
    detail: &NodeDetail,
    chosen: &[(usize, &InstanceDetail)],
    store: &RunStore,
    links: &Links,
) -> String {
    let total = detail.instances.len();
    let max_chars = view.max_chars;
    let mut text = format!(
        "Node {} ({}, \"{}\") of run {} — {}, {} instance(s){}\n{}\n",
        detail.node_id,
        detail.kind,
        cut_str(&detail.name, 120),
        detail.run_id,
        state_str(detail.status).as_str().unwrap_or_default(),
        total,
        detail
            .parent_id
            .as_deref()
            .map(|p| format!(", parent {p}"))
            .unwrap_or_default(),
        view.link
    );
    let text_chars = max_chars.min(4_000);
    for (index, inst) in chosen {
        instance_text(&mut text, *index, inst, text_chars, store);
    }
    let shown = chosen.len();
    if shown < total {
        let _ = writeln!(
            text,
            "\nShowing {shown} of {total} instances (the latest); pass instances (up to {GET_NODE_MAX_INSTANCES}) or instanceId for others."
        );
    }
    if view.values_truncated {
        let _ = writeln!(
            text,
            "\nValues were cut at {max_chars} characters: pass maxChars (up to {GET_NODE_MAX_CHARS}) for more, or read everything from {} (while `mindgate serve` runs).",
            links.api_node(&detail.run_id, &detail.node_id)
        );
    }
    text
}

/// One execution in `get_node`'s text: state, times, values, error, usage and pauses.
fn instance_text(
    text: &mut String,
    index: usize,
    inst: &InstanceDetail,
    text_chars: usize,
    store: &RunStore,
) {
    let s = &inst.summary;
    let _ = write!(
        text,
        "\n#{} instance {} — {}",
        index,
        if s.instance_id.is_empty() {
            "(unnamed)"
        } else {
            &s.instance_id
        },
        state_str(s.status).as_str().unwrap_or_default()
    );
    if let Some(d) = s.duration_ms {
        let _ = write!(text, ", {}", duration(d));
    }
    if let Some(h) = s.held_ms.filter(|h| *h > 0.0) {
        match s.work_ms {
            Some(w) => {
                let _ = write!(text, " (work {}, held {})", duration(w), duration(h));
            }
            None => {
                let _ = write!(text, " (held {})", duration(h));
            }
        }
    }
    if let Some(at) = s.started_at {
        let _ = write!(text, ", started {}", iso(at));
    }
    text.push('\n');
    if let Some(input) = &inst.input {
        let _ = writeln!(text, "  input: {}", one_line(input, text_chars));
    }
    if let Some(output) = &inst.output {
        let _ = writeln!(text, "  output: {}", one_line(output, text_chars));
    }
    if let Some(t) = &inst.transcript {
        crate::conversation::conversation_text(text, t, text_chars);
    }
    if !s.tokens.is_empty() {
        let _ = writeln!(
            text,
            "  streamed text: {}",
            one_line(&Value::String(s.tokens.clone()), text_chars)
        );
    }
    if !inst.tool_args.is_empty() {
        let _ = writeln!(
            text,
            "  tool args: {}",
            one_line(&Value::String(inst.tool_args.clone()), text_chars)
        );
    }
    if let Some(e) = &inst.error_detail {
        let name = e.get("name").and_then(Value::as_str).unwrap_or("Error");
        let msg = e
            .get("message")
            .map(|m| one_line(m, text_chars))
            .unwrap_or_default();
        let _ = writeln!(text, "  error: {name}: {msg}");
        if let Some(stack) = e.get("stack").and_then(Value::as_str) {
            let (st, _) = crate::output_limits::cut(stack, text_chars.min(1_500));
            let _ = writeln!(text, "  stack:\n    {}", st.replace('\n', "\n    "));
        }
    }
    if let Some(u) = &s.usage {
        let counts = mindgate_store::usage_counts(Some(u));
        let mut cost = mindgate_store::Cost::default();
        cost.add(store.prices(), s.model.as_deref(), &counts);
        let _ = write!(text, "  usage: {} in / {} out", counts.input, counts.output);
        if counts.cache_read + counts.cache_write > 0 {
            let _ = write!(
                text,
                " / {} cache read / {} cache write",
                counts.cache_read, counts.cache_write
            );
        }
        if let Some(model) = &s.model {
            let _ = write!(text, ", model {model}");
        }
        let _ = writeln!(text, ", cost {cost}");
    }
    for p in &inst.pauses {
        let _ = writeln!(
            text,
            "  paused {} at `{}`{}{}",
            p.pause_id,
            p.point,
            p.reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default(),
            match &p.action {
                Some(a) => format!(", released: {a}"),
                None => ", still held".to_owned(),
            }
        );
    }
}

/// `find_errors`: recent failed nodes and failed runs, newest first.
pub fn find_errors(
    store: &RunStore,
    args: &FindErrorsArgs,
    links: &Links,
    now_ms: i64,
) -> Result<ToolOutput, ToolError> {
    let limit = check_limit("limit", args.limit, LIST_DEFAULT, LIST_MAX)?;
    let since = args
        .since
        .as_ref()
        .map(|s| resolve_since(s, now_ms))
        .transpose()?;
    let report = store.error_report(limit, since)?;
    let mut runs = Vec::new();
    let mut run_lines = Vec::new();
    for failed in &report.runs {
        let run = &failed.run;
        let error = failed.error.as_ref().map(|e| {
            if failed.error_from_node {
                json!({
                    "name": e.get("name"),
                    "message": cut_str(e.get("message").and_then(Value::as_str).unwrap_or_default(), 500),
                })
            } else {
                preview(e, 1_000).0
            }
        });
        run_lines.push(format!(
            "- {}{}\n  {}",
            run_line(run),
            error
                .as_ref()
                .map(|e| format!("\n  error: {}", error_line(e, 300)))
                .unwrap_or_default(),
            links.run(&run.id)
        ));
        let mut v = run_value(run, links);
        if let Some(obj) = v.as_object_mut() {
            obj.insert("error".to_owned(), error.unwrap_or(Value::Null));
        }
        runs.push(v);
    }

    let nodes: Vec<Value> = report
        .nodes
        .iter()
        .map(|n| {
            let h = &n.hit;
            json!({
                "runId": h.run_id,
                "runName": h.run_name,
                "nodeId": h.node_id,
                "seq": h.seq,
                "ts": h.ts,
                "name": h.name,
                "message": cut_str(&h.message, 1_000),
                "recovered": n.recovered,
                "link": links.run_or_node(&h.run_id, h.node_id.as_deref()),
            })
        })
        .collect();
    let mut text = String::new();
    if nodes.is_empty() && runs.is_empty() {
        text.push_str("No errors found");
        if let Some(t) = since {
            let _ = write!(text, " since {}", iso(t));
        }
        text.push('.');
    }
    if !nodes.is_empty() {
        let _ = writeln!(text, "Failed nodes ({}, newest first):", nodes.len());
        for n in &report.nodes {
            let h = &n.hit;
            let _ = writeln!(
                text,
                "- {} run {} (\"{}\") node {}: {}: {}{}\n  {}",
                iso(h.ts),
                h.run_id,
                cut_str(&h.run_name, 60),
                h.node_id.as_deref().unwrap_or("-"),
                h.name,
                one_line(&Value::String(h.message.clone()), 300),
                if n.recovered { " (recovered)" } else { "" },
                links.run_or_node(&h.run_id, h.node_id.as_deref())
            );
        }
    }
    if !runs.is_empty() {
        let _ = writeln!(text, "\nFailed runs ({}):", runs.len());
        for l in &run_lines {
            let _ = writeln!(text, "{l}");
        }
    }
    if !nodes.is_empty() || !runs.is_empty() {
        text.push_str("\nDetails: get_node {\"runId\", \"nodeId\"} or get_run {\"runId\"}.");
    }
    Ok(ToolOutput::new(
        text,
        json!({ "nodes": nodes, "runs": runs, "since": since }),
    ))
}

/// `search_events`: events whose payload contains a text.
pub fn search_events(
    store: &RunStore,
    args: &SearchEventsArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    if args.query.trim().is_empty() {
        return Err(ToolError::bad("query", "must not be empty"));
    }
    if args.query.chars().count() > 500 {
        return Err(ToolError::bad("query", "is longer than 500 characters"));
    }
    let limit = check_limit("limit", args.limit, LIST_DEFAULT, LIST_MAX)?;
    if let Some(run) = &args.run_id {
        check_id("runId", run)?;
        require_run(store, run)?;
    }
    let hits = store.search_events(&args.query, args.run_id.as_deref(), limit)?;
    let mut text = if hits.is_empty() {
        format!(
            "No event payload contains \"{}\".",
            cut_str(&args.query, 100)
        )
    } else {
        format!(
            "{} hit(s) for \"{}\", newest run first:\n",
            hits.len(),
            cut_str(&args.query, 100)
        )
    };
    let mut values = Vec::new();
    for h in &hits {
        let link = links.run_or_node(&h.run_id, h.node_id.as_deref());
        let _ = writeln!(
            text,
            "- run {} seq {} {}{}: {}\n  {}",
            h.run_id,
            h.seq,
            h.type_name,
            h.node_id
                .as_deref()
                .map(|n| format!(" node {n}"))
                .unwrap_or_default(),
            one_line(&Value::String(h.snippet.clone()), 200),
            link
        );
        let mut v = serde_json::to_value(h).unwrap_or_else(|_| json!({}));
        if let Some(obj) = v.as_object_mut() {
            obj.insert("link".to_owned(), Value::String(link));
        }
        values.push(v);
    }
    let mut out = Map::new();
    out.insert("query".to_owned(), Value::String(args.query.clone()));
    out.insert("hits".to_owned(), Value::Array(values));
    Ok(ToolOutput::new(text, Value::Object(out)))
}

/// A stored count as a `usize` (saturating on a 32-bit target).
fn usize_of(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// `n noun` or `n nouns`.
fn count_of(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What the graph draws, as the glossary counts it (`docs/glossary.md`): the nodes that ran
/// (the run's node count), the ones only announced apart, the executions and the edges.
fn graph_counts(graph: &mindgate_store::RunGraph) -> String {
    let announced = graph.announced_only();
    let ran = graph.nodes.len() - announced;
    let nodes = if announced == 0 {
        count_of(ran, "node")
    } else {
        format!(
            "{} and {announced} announced but not run",
            count_of(ran, "node")
        )
    };
    format!(
        "{nodes}, {}, {}",
        count_of(graph.instance_count(), "instance"),
        count_of(graph.edges.len(), "edge")
    )
}
