//! The rules of `mindgate check` evaluated on a new run and its baseline: what each run
//! did (tool calls, errors, outputs, figures) read from the store's node details and the
//! diff engine's run sides ([`mindgate_store::diff`]), one outcome per rule.

use std::collections::BTreeMap;

use mindgate_store::datasets::source::final_output;
use mindgate_store::diff::RunDiff;
use mindgate_store::projection::NodeState;
use mindgate_store::{Annotation, AuthorKind, NodeDetail, RunSummary};
use serde::Serialize;
use serde_json::Value;

use super::rules::{Budget, OutputRule, Rules, ToolMatch};

/// One run as the rules read it.
pub struct Subject {
    /// Its summary.
    pub summary: RunSummary,
    /// Every node's detail (instances with outputs and states).
    pub details: Vec<NodeDetail>,
    /// Its live annotations.
    pub annotations: Vec<Annotation>,
}

/// What one rule found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleOutcome {
    /// The rule, named as its key in the rules file (`tools.sequence`, `errors.no_new`, …).
    pub name: String,
    /// Whether it holds.
    pub passed: bool,
    /// What was found.
    pub message: String,
    /// The node it is about, when one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
}

fn outcome(
    name: impl Into<String>,
    passed: bool,
    message: String,
    node: Option<&str>,
) -> RuleOutcome {
    RuleOutcome {
        name: name.into(),
        passed,
        message,
        node_id: node.map(str::to_owned),
    }
}

impl Subject {
    /// The tool calls in the order they started (node ids).
    fn tool_calls(&self) -> Vec<&str> {
        let mut calls: Vec<(i64, &str)> = self
            .details
            .iter()
            .filter(|n| n.kind == "tool")
            .flat_map(|n| {
                n.instances
                    .iter()
                    .map(move |i| (i.summary.started_at.unwrap_or(i64::MAX), n.node_id.as_str()))
            })
            .collect();
        calls.sort();
        calls.into_iter().map(|(_, id)| id).collect()
    }

    /// Failed instances by node.
    fn errors(&self) -> BTreeMap<&str, usize> {
        let mut out = BTreeMap::new();
        for n in &self.details {
            let failed = n
                .instances
                .iter()
                .filter(|i| i.summary.status == NodeState::Error)
                .count();
            if failed > 0 {
                out.insert(n.node_id.as_str(), failed);
            }
        }
        out
    }

    /// The output of `node`'s last instance (the one that finished last with an output),
    /// or the run's final output ([`final_output`], the rule datasets take too).
    fn output(&self, node: Option<&str>) -> Option<&Value> {
        match node {
            Some(id) => self
                .details
                .iter()
                .filter(|n| n.node_id == id)
                .flat_map(|n| n.instances.iter())
                .filter(|i| i.output.is_some())
                .max_by_key(|i| (i.summary.finished_at, i.summary.started_at))
                .and_then(|i| i.output.as_ref()),
            None => final_output(&self.details),
        }
    }
}

/// Every rule of `rules` on `new` against `base` (`diff` compares them, `base` as run A).
pub fn evaluate(rules: &Rules, new: &Subject, base: &Subject, diff: &RunDiff) -> Vec<RuleOutcome> {
    let mut out = Vec::new();
    if let Some(t) = &rules.tools {
        out.push(tools(t.same, new, base));
    }
    if rules.errors.as_ref().is_some_and(|e| e.no_new) {
        out.push(no_new_errors(new, base));
    }
    let cost = |d: &RunDiff, b: bool| if b { d.b.cost.usd } else { d.a.cost.usd };
    let tokens = |d: &RunDiff, b: bool| {
        let t = if b { &d.b.tokens } else { &d.a.tokens };
        Some((t.input + t.output) as f64)
    };
    let duration = |s: &Subject| s.summary.duration_ms.map(|d| d as f64);
    if let Some(b) = &rules.cost {
        budget(
            &mut out,
            "cost",
            b,
            cost(diff, true),
            cost(diff, false),
            |v| format!("${v:.4}"),
        );
    }
    if let Some(b) = &rules.duration {
        budget(
            &mut out,
            "duration",
            b,
            duration(new),
            duration(base),
            |v| format!("{v:.0} ms"),
        );
    }
    if let Some(b) = &rules.tokens {
        budget(
            &mut out,
            "tokens",
            b,
            tokens(diff, true),
            tokens(diff, false),
            |v| format!("{v:.0} tokens"),
        );
    }
    for rule in &rules.output {
        out.push(output(rule, new, base));
    }
    if let Some(a) = &rules.annotations {
        let want = a.baseline_verdict.get_ref();
        let found = base.annotations.iter().any(|x| {
            x.author.kind == AuthorKind::Person && x.verdict.is_some_and(|v| v.as_str() == want)
        });
        let message = if found {
            format!("the baseline carries a person's thumbs {want}")
        } else {
            format!("the baseline carries no person's thumbs {want}")
        };
        out.push(outcome(
            "annotations.baseline_verdict",
            found,
            message,
            None,
        ));
    }
    out
}

fn tools(same: ToolMatch, new: &Subject, base: &Subject) -> RuleOutcome {
    let (a, b) = (base.tool_calls(), new.tool_calls());
    match same {
        ToolMatch::Sequence => {
            let first = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())));
            match first {
                None => outcome(
                    "tools.sequence",
                    true,
                    format!("{} tool call(s), the same", b.len()),
                    None,
                ),
                Some(i) => outcome(
                    "tools.sequence",
                    false,
                    format!(
                        "tool call {} differs: baseline {}, new {} ({} call(s) against {})",
                        i + 1,
                        a.get(i).copied().unwrap_or("(none)"),
                        b.get(i).copied().unwrap_or("(none)"),
                        b.len(),
                        a.len()
                    ),
                    b.get(i).or_else(|| a.get(i)).copied(),
                ),
            }
        }
        ToolMatch::Set => {
            let sa: std::collections::BTreeSet<&str> = a.into_iter().collect();
            let sb: std::collections::BTreeSet<&str> = b.into_iter().collect();
            let extra: Vec<&str> = sb.difference(&sa).copied().collect();
            let missing: Vec<&str> = sa.difference(&sb).copied().collect();
            let passed = extra.is_empty() && missing.is_empty();
            let message = if passed {
                format!("the same {} tool(s)", sb.len())
            } else {
                format!("new tools {extra:?}, tools no longer called {missing:?}")
            };
            let node = extra.first().or(missing.first()).copied();
            outcome("tools.set", passed, message, node)
        }
    }
}

fn no_new_errors(new: &Subject, base: &Subject) -> RuleOutcome {
    let (a, b) = (base.errors(), new.errors());
    let new_errors: Vec<(&str, usize)> = b
        .iter()
        .filter(|(node, n)| a.get(*node).is_none_or(|m| **n > *m))
        .map(|(node, n)| (*node, *n))
        .collect();
    let run_failed =
        new.summary.status.as_str() == "error" && base.summary.status.as_str() != "error";
    if let Some((node, n)) = new_errors.first() {
        let message = format!(
            "{} node(s) fail that did not in the baseline; first: {node} ({n} failed instance(s))",
            new_errors.len()
        );
        return outcome("errors.no_new", false, message, Some(node));
    }
    if run_failed {
        return outcome(
            "errors.no_new",
            false,
            "the run ended in error; the baseline did not".to_owned(),
            None,
        );
    }
    outcome("errors.no_new", true, "no new errors".to_owned(), None)
}

fn budget(
    out: &mut Vec<RuleOutcome>,
    what: &str,
    b: &Budget,
    new: Option<f64>,
    base: Option<f64>,
    show: impl Fn(f64) -> String,
) {
    if let Some(max) = b.max {
        let (passed, message) = match new {
            Some(v) => (v <= max, format!("{} (at most {})", show(v), show(max))),
            None => (false, format!("the new run's {what} is unknown")),
        };
        out.push(outcome(format!("{what}.max"), passed, message, None));
    }
    if let Some(pct) = b.max_increase_pct {
        let (passed, message) = match (new, base) {
            (Some(v), Some(w)) => {
                let limit = w * (1.0 + pct / 100.0);
                let change = if w > 0.0 {
                    (v - w) / w * 100.0
                } else if v > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                };
                (
                    v <= limit,
                    format!(
                        "{} against {} in the baseline ({change:+.0}%, at most +{pct}%)",
                        show(v),
                        show(w)
                    ),
                )
            }
            _ => (false, format!("the {what} of a run is unknown")),
        };
        out.push(outcome(
            format!("{what}.max_increase_pct"),
            passed,
            message,
            None,
        ));
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn output(rule: &OutputRule, new: &Subject, base: &Subject) -> RuleOutcome {
    let place = format!(
        "{}{}",
        rule.node.as_deref().unwrap_or("final"),
        rule.path.as_deref().unwrap_or("")
    );
    let at = |s: &Subject| -> Option<Value> {
        let v = s.output(rule.node.as_deref())?;
        match rule.path.as_deref() {
            Some(p) if !p.is_empty() => v.pointer(p).cloned(),
            _ => Some(v.clone()),
        }
    };
    let node = rule.node.as_deref();
    let got = at(new);
    let shown = |v: &Option<Value>| {
        v.as_ref()
            .map_or("(none)".to_owned(), |v| cut(&v.to_string()))
    };
    if rule.same_as_baseline {
        let want = at(base);
        let passed = got == want;
        let message = if passed {
            format!("{place} equals the baseline's")
        } else {
            format!(
                "{place} differs: baseline {}, new {}",
                shown(&want),
                shown(&got)
            )
        };
        return outcome(
            format!("output.same_as_baseline({place})"),
            passed,
            message,
            node,
        );
    }
    if let Some(want) = &rule.equals {
        let want = serde_json::to_value(want).ok();
        let passed = got.is_some() && got == want;
        return outcome(
            format!("output.equals({place})"),
            passed,
            format!("{place} is {}, expected {}", shown(&got), shown(&want)),
            node,
        );
    }
    if let Some(needle) = &rule.contains {
        let passed = got
            .as_ref()
            .is_some_and(|v| text_of(v).contains(needle.as_str()));
        return outcome(
            format!("output.contains({place})"),
            passed,
            format!("{place} is {}, must contain {needle:?}", shown(&got)),
            node,
        );
    }
    if let Some(pattern) = &rule.matches {
        let re = regex::Regex::new(pattern.get_ref());
        let passed = match (&re, &got) {
            (Ok(re), Some(v)) => re.is_match(&text_of(v)),
            _ => false,
        };
        return outcome(
            format!("output.matches({place})"),
            passed,
            format!(
                "{place} is {}, must match /{}/",
                shown(&got),
                pattern.get_ref()
            ),
            node,
        );
    }
    outcome(
        format!("output({place})"),
        false,
        "no check given".to_owned(),
        node,
    )
}

/// At most 160 characters of a value's text.
fn cut(text: &str) -> String {
    match text.char_indices().nth(160) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}
