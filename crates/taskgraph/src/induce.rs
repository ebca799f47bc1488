//! Procedure induction: a succeeded task graph as a reusable, value-abstracted workflow
//! (AWM-style "induced procedure", the seed's `Rule.steps` / `variables` /
//! `successCriteria`).
//!
//! [`induce`] walks the task's successful tool calls in order and turns each into an
//! abstract step whose concrete values become variables: `read {file}`, `search {pattern}`,
//! `list {dir}`, `edit {file}`, `write {file}`, `run {test_command}`, `run {command}`,
//! `fetch {url}`, `search the web for {query}`, `delegate {subtask}`; a skill keeps its name
//! (`use skill lint-fix`) and any other tool is `use <tool>`. Consecutive repeats are
//! collapsed: a step repeated at once, or a run of up to [`MAX_CYCLE`] steps repeated at once
//! (`read {file}, run {command}, read {file}, run {command}` → `read {file}, run {command}`).
//! Todo-list writes are bookkeeping and failed, cancelled or still-open calls are not
//! part of what worked, so neither becomes a step. The success criteria are the test commands
//! that passed (else the last [`MAX_FALLBACK_CRITERIA`] commands that passed after the last
//! code change). A task that did not succeed induces nothing: [`Refusal`] says why, naming
//! the failing node; so does a workflow longer than [`MAX_STEPS`] (a session of many tasks).
//!
//! This module knows only the task graph; storing the result (deduplicated, quarantined,
//! provenance `induction`) is the memory crate's concern.

use serde::Serialize;
use serde_json::Value;

use crate::graph::classify::{FILE_ARGUMENT_KEYS, command_of};
use crate::graph::{Node, NodeMeta, NodeType, Status, TaskGraph, ToolMeta};
use crate::json_fields::str_field;
use crate::report::TaskReport;
use crate::text::truncate_chars;

/// Longest variable value kept, in characters (longer ones are cut with `…`).
pub const MAX_VALUE_CHARS: usize = 200;
/// Most distinct values kept per variable (the first seen).
pub const MAX_VALUES_PER_VARIABLE: usize = 20;
/// Most success criteria kept (the first seen).
pub const MAX_CRITERIA: usize = 10;
/// Most steps one procedure holds; a longer workflow is refused ([`Refusal::TooManySteps`]).
pub const MAX_STEPS: usize = 200;
/// Commands kept as criteria when no test ran (the last ones after the last code change).
pub const MAX_FALLBACK_CRITERIA: usize = 3;
/// Longest run of steps whose immediate repetition is collapsed (`read, run, read, run` →
/// `read, run`).
pub const MAX_CYCLE: usize = 4;
/// Steps named in the summary text before it ends with `…` (the full list is `steps`).
const STEPS_IN_TEXT: usize = 12;

/// A workflow induced from one succeeded task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Induction {
    /// The task (root session) id.
    pub task_id: String,
    /// The task title.
    pub title: String,
    /// The agent that wrote the session (`dsh`, `pi`, `claude_code`, `codex`), when known.
    pub agent: Option<String>,
    /// What the procedure does and how, in one line: the title and the steps.
    pub text: String,
    /// When it applies: the task's request.
    pub condition: String,
    /// The value-abstracted steps, in order, consecutive repeats collapsed.
    pub steps: Vec<String>,
    /// The variables the steps name, first use first, with the concrete values seen.
    pub variables: Vec<Variable>,
    /// Verifiable checks a reuse can run: the commands that passed.
    pub success_criteria: Vec<String>,
    /// The tool nodes the steps were abstracted from, in order.
    pub source_node_ids: Vec<String>,
}

/// One variable of an induced procedure (`file`, `test_command`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variable {
    /// Its name, as written between braces in the steps.
    pub name: String,
    /// The distinct concrete values the task used, first seen first.
    pub values: Vec<String>,
}

/// Why a task graph induces no procedure (the message says it of the task: "it failed at …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The task's final outcome is a failure.
    #[error("it failed at {node_type} `{node_name}` ({node_id}){}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Failed {
        /// The task.
        task_id: String,
        /// The failing node (the latest failure; the failed turn when no step failed).
        node_id: String,
        /// Its type (`test`, `tool`, `phase`, …).
        node_type: &'static str,
        /// Its name (a test's command).
        node_name: String,
        /// Its error, when recorded.
        message: Option<String>,
    },
    /// The task has not ended.
    #[error("it is still running: induce it once it has succeeded")]
    Running {
        /// The task.
        task_id: String,
    },
    /// The task ended without succeeding (cancelled, aborted, never started).
    #[error("it did not succeed (its status is {status}){}", node.as_deref().map(|n| format!(": {n}")).unwrap_or_default())]
    NotSucceeded {
        /// The task.
        task_id: String,
        /// Its status (`CANCELLED`, `PENDING`, …).
        status: &'static str,
        /// The node that ended it, when one did (`phase-3 (aborted)`).
        node: Option<String>,
    },
    /// The abstracted workflow is longer than one procedure holds ([`MAX_STEPS`]): the
    /// session is many tasks in one.
    #[error(
        "it abstracts to {steps} steps, more than the {max} one procedure holds: the session is several tasks (induce a shorter one)"
    )]
    TooManySteps {
        /// The task.
        task_id: String,
        /// Steps after abstraction and collapsing.
        steps: usize,
        /// [`MAX_STEPS`].
        max: usize,
    },
    /// The task succeeded without a single successful tool call: there is no workflow.
    #[error("it succeeded without any tool call: there are no steps to induce")]
    NoSteps {
        /// The task.
        task_id: String,
    },
}

/// Induces the procedure of a succeeded task graph, or says why there is none.
///
/// ```
/// use mindgate_taskgraph::{build_graph, parse, Agent, BuildOptions};
/// use mindgate_taskgraph::induce::induce;
///
/// let jsonl = br#"{"type":"session","version":1,"id":"s1","createdAt":1000,"cwd":"/w","delegationDepth":0}
/// {"type":"user/message","seq":1,"time":1000,"data":{"text":"fix the parser"}}
/// {"type":"turn/start","seq":2,"time":1000,"data":{"turn":1}}
/// {"type":"step/start","seq":3,"time":1010,"data":{"turn":1,"step":1}}
/// {"type":"tool/call","seq":4,"time":1500,"data":{"turn":1,"step":1,"callId":"c1","name":"edit","arguments":"{\"path\":\"/w/src/parser.rs\"}"}}
/// {"type":"tool/call","seq":5,"time":1500,"data":{"turn":1,"step":1,"callId":"c2","name":"bash","arguments":"{\"command\":\"cargo test\"}"}}
/// {"type":"step/end","seq":6,"time":1500,"data":{"turn":1,"step":1}}
/// {"type":"tool/result","seq":7,"time":1700,"data":{"message":{"source":{"callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":"ok","isError":false}]}}}
/// {"type":"tool/result","seq":8,"time":1800,"data":{"message":{"source":{"callId":"c2"},"content":[{"type":"tool-result","toolCallId":"c2","content":"ok","isError":false}]}}}
/// {"type":"turn/end","seq":9,"time":1900,"data":{"turn":1,"reason":{"kind":"completed"}}}
/// "#;
/// let graph = build_graph(&parse::parse_bytes(Agent::Dsh, jsonl, "inline").events, &BuildOptions::default());
/// let p = induce(&graph).unwrap();
/// assert_eq!(p.steps, ["edit {file}", "run {test_command}"]);
/// assert_eq!(p.variables[0].values, ["src/parser.rs"]);
/// assert_eq!(p.success_criteria, ["`cargo test` passes"]);
/// ```
pub fn induce(graph: &TaskGraph) -> Result<Induction, Refusal> {
    refuse_unless_succeeded(graph)?;
    let cwd = graph.cwd.as_deref().unwrap_or_default();
    let mut steps: Vec<String> = Vec::new();
    let mut variables: Vec<Variable> = Vec::new();
    let mut source_node_ids = Vec::new();
    let mut tests_passed: Vec<String> = Vec::new();
    let mut commands_after_change: Vec<String> = Vec::new();
    for node in graph.nodes.iter().filter(|n| n.status == Status::Success) {
        let NodeMeta::Tool(meta) = &node.meta else {
            continue;
        };
        let abstracted = abstract_call(node, meta, cwd);
        if abstracted.is_empty() {
            continue;
        }
        source_node_ids.push(node.id.to_string());
        if is_change(node) {
            commands_after_change.clear();
        }
        for step in abstracted {
            match &step {
                Step::Bound {
                    variable, value, ..
                } if *variable == "test_command" => {
                    push_distinct(&mut tests_passed, value.clone(), MAX_CRITERIA);
                }
                Step::Bound {
                    variable, value, ..
                } if *variable == "command" => {
                    push_latest(&mut commands_after_change, value.clone());
                }
                _ => {}
            }
            let text = step.text();
            if let Step::Bound {
                variable, value, ..
            } = step
            {
                bind(&mut variables, variable, value);
            }
            push_step(&mut steps, text);
        }
    }
    if steps.is_empty() {
        return Err(Refusal::NoSteps {
            task_id: graph.task_id.clone(),
        });
    }
    if steps.len() > MAX_STEPS {
        return Err(Refusal::TooManySteps {
            task_id: graph.task_id.clone(),
            steps: steps.len(),
            max: MAX_STEPS,
        });
    }
    let criteria = if tests_passed.is_empty() {
        commands_after_change
    } else {
        tests_passed
    };
    let title = one_line(&graph.title);
    let condition = task_request(graph).unwrap_or_else(|| title.clone());
    Ok(Induction {
        task_id: graph.task_id.clone(),
        agent: TaskReport::new(graph)
            .agent()
            .and_then(Value::as_str)
            .map(str::to_owned),
        text: summary_text(&title, &steps),
        condition,
        steps,
        variables,
        success_criteria: criteria
            .into_iter()
            .map(|c| format!("`{c}` passes"))
            .collect(),
        source_node_ids,
        title,
    })
}

/// The refusal for a graph whose task did not succeed.
fn refuse_unless_succeeded(graph: &TaskGraph) -> Result<(), Refusal> {
    let task_id = graph.task_id.clone();
    match graph.status {
        Status::Success => Ok(()),
        Status::Running | Status::Retrying => Err(Refusal::Running { task_id }),
        Status::Failed => Err(failed(graph)),
        other => Err(Refusal::NotSucceeded {
            task_id,
            status: other.as_str(),
            node: graph
                .nodes
                .iter()
                .rev()
                .find(|n| n.node_type == NodeType::Phase && n.status == other)
                .map(|n| match &n.meta {
                    NodeMeta::Phase(p) => match (&p.reason, p.unclosed) {
                        (_, true) => format!("{} was left open", n.id),
                        (Some(reason), _) => format!("{} ended {reason}", n.id),
                        (None, _) => n.id.to_string(),
                    },
                    _ => n.id.to_string(),
                }),
        }),
    }
}

/// The refusal of a failed task: its latest failed tool call, else its latest failed LLM step,
/// else its last failed turn.
fn failed(graph: &TaskGraph) -> Refusal {
    let report = TaskReport::new(graph);
    let latest = graph
        .summary
        .failed_steps
        .iter()
        .filter_map(|r| report.node(&r.id).map(|n| (r, n)))
        .max_by_key(|(_, n)| (n.node_type.is_tool_like(), n.end_time.or(n.start_time)));
    if let Some((r, n)) = latest {
        return Refusal::Failed {
            task_id: graph.task_id.clone(),
            node_id: n.id.to_string(),
            node_type: n.node_type.as_str(),
            node_name: match &n.meta {
                NodeMeta::Tool(m) if n.node_type == NodeType::Test => {
                    shell_command(m).unwrap_or_else(|| one_line(&n.name))
                }
                _ => one_line(&n.name),
            },
            message: report.failure_text(r).map(|m| one_line(&m)),
        };
    }
    let phase = graph
        .nodes
        .iter()
        .rev()
        .find(|n| n.node_type == NodeType::Phase && n.status == Status::Failed)
        .or_else(|| graph.node("task"));
    Refusal::Failed {
        task_id: graph.task_id.clone(),
        node_id: phase.map(|n| n.id.to_string()).unwrap_or_default(),
        node_type: phase.map_or("task", |n| n.node_type.as_str()),
        node_name: phase.map(|n| one_line(&n.name)).unwrap_or_default(),
        message: phase
            .and_then(|n| crate::report::node_error(&n.meta))
            .map(|m| one_line(&m)),
    }
}

/// One abstract step: a literal (`use skill lint-fix`) or a template with one variable.
enum Step {
    Literal(String),
    Bound {
        /// The words before the variable (`read`, `search the web for`).
        verb: &'static str,
        variable: &'static str,
        value: String,
    },
}

impl Step {
    fn bound(verb: &'static str, variable: &'static str, value: &str, cwd: &str) -> Option<Self> {
        let value = clean_value(value, cwd)?;
        Some(Step::Bound {
            verb,
            variable,
            value,
        })
    }

    fn text(&self) -> String {
        match self {
            Step::Literal(s) => s.clone(),
            Step::Bound { verb, variable, .. } => format!("{verb} {{{variable}}}"),
        }
    }
}

/// Whether a successful node changed code.
fn is_change(node: &Node) -> bool {
    node.node_type == NodeType::Code
}

/// The steps of one successful tool node (none for bookkeeping).
fn abstract_call(node: &Node, meta: &ToolMeta, cwd: &str) -> Vec<Step> {
    let args = &meta.arguments;
    match node.node_type {
        NodeType::Plan | NodeType::Task | NodeType::Phase | NodeType::Agent => Vec::new(),
        NodeType::Code => {
            let verb = if matches!(
                normalised(&meta.tool_name).as_str(),
                "write" | "writefile" | "createfile"
            ) {
                "write"
            } else {
                "edit"
            };
            let mut files = meta.files.clone();
            if files.is_empty()
                && let Some(Some(f)) = &meta.file
            {
                files.push(f.clone());
            }
            let steps: Vec<Step> = files
                .iter()
                .filter_map(|f| Step::bound(verb, "file", f, cwd))
                .collect();
            if steps.is_empty() {
                vec![Step::Literal("edit the code".to_owned())]
            } else {
                steps
            }
        }
        NodeType::Test => shell_command(meta)
            .and_then(|c| Step::bound("run", "test_command", &c, cwd))
            .into_iter()
            .collect(),
        NodeType::Skill => {
            let name = crate::graph::classify::skill_name(args).unwrap_or_default();
            let name = one_line(&name);
            vec![Step::Literal(if name.is_empty() {
                "use a skill".to_owned()
            } else {
                format!("use skill {}", truncate_chars(&name, 64))
            })]
        }
        NodeType::Subagent => str_field(args, &["description", "prompt", "task", "message"])
            .and_then(|d| Step::bound("delegate", "subtask", d, cwd))
            .into_iter()
            .collect(),
        NodeType::Tool => tool_step(&meta.tool_name, args, meta, cwd)
            .into_iter()
            .collect(),
    }
}

/// A plain tool call as a step: file, search and list tools by name, shell commands by
/// their program, anything else by its tool name.
fn tool_step(tool: &str, args: &Value, meta: &ToolMeta, cwd: &str) -> Option<Step> {
    let name = normalised(tool);
    match name.as_str() {
        "read" | "readfile" | "view" | "cat" | "open" | "openfile" | "notebookread" => {
            Step::bound("read", "file", str_field(args, FILE_ARGUMENT_KEYS)?, cwd)
        }
        "grep" | "search" | "glob" | "find" | "rg" | "ripgrep" | "codebasesearch"
        | "searchfiles" | "grepsearch" | "filesearch" => Step::bound(
            "search",
            "pattern",
            str_field(args, &["pattern", "query", "regex", "glob", "q"])?,
            cwd,
        ),
        "ls" | "list" | "listdir" | "listfiles" | "listdirectory" => Some(
            Step::bound(
                "list",
                "dir",
                str_field(args, FILE_ARGUMENT_KEYS).unwrap_or("."),
                cwd,
            )
            .unwrap_or(Step::Literal("list the files".to_owned())),
        ),
        "webfetch" | "fetch" | "fetchurl" => {
            Step::bound("fetch", "url", str_field(args, &["url", "uri"])?, cwd)
        }
        "websearch" | "websearchcall" => Step::bound(
            "search the web for",
            "query",
            str_field(args, &["query", "q"])?,
            cwd,
        ),
        // Input to a command already running: part of that command's step.
        "writestdin" => None,
        "bash" | "shell" | "pwsh" | "powershell" | "localshell" | "execcommand"
        | "shellcommand" | "containerexec" => shell_step(&shell_command(meta)?, cwd),
        _ => {
            let tool = one_line(tool);
            (!tool.is_empty()).then(|| Step::Literal(format!("use {}", truncate_chars(&tool, 64))))
        }
    }
}

/// A shell command as a step: `cat`/`head`/`tail`/`sed -n` read a file, `grep`/`rg`/`find`
/// search, `ls`/`tree` list, anything else is `run {command}`.
fn shell_step(command: &str, cwd: &str) -> Option<Step> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let program = words.first()?.rsplit('/').next().unwrap_or_default();
    let simple = !command.contains(['|', ';', '>', '<', '&', '`', '$']);
    let operands: Vec<&str> = words[1..]
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-'))
        .map(unquote)
        .collect();
    if simple {
        match program {
            "cat" | "head" | "tail" | "less" | "bat" | "nl" if !operands.is_empty() => {
                return Step::bound("read", "file", operands.last()?, cwd);
            }
            "sed" if words.get(1) == Some(&"-n") && operands.len() >= 2 => {
                return Step::bound("read", "file", operands.last()?, cwd);
            }
            "grep" | "rg" | "ag" | "ack" | "egrep" | "fgrep" if !operands.is_empty() => {
                return Step::bound("search", "pattern", operands.first()?, cwd);
            }
            "find" | "fd" => {
                let pattern = words
                    .windows(2)
                    .find(|w| matches!(w[0], "-name" | "-iname" | "-path"))
                    .map(|w| unquote(w[1]))
                    .or_else(|| operands.last().copied())
                    .unwrap_or(".");
                return Step::bound("search", "pattern", pattern, cwd);
            }
            "ls" | "tree" => {
                return Step::bound("list", "dir", operands.last().copied().unwrap_or("."), cwd);
            }
            _ => {}
        }
    }
    Step::bound("run", "command", command, cwd)
}

/// The command line of a shell call without its `bash -lc` wrapper or a leading `cd <dir> &&`.
fn shell_command(meta: &ToolMeta) -> Option<String> {
    let raw = match &meta.command {
        Some(Some(c)) => c.clone(),
        _ => command_of(&meta.arguments)?,
    };
    let mut cmd = raw.trim();
    for wrapper in [
        "bash -lc ",
        "bash -c ",
        "sh -lc ",
        "sh -c ",
        "zsh -lc ",
        "zsh -c ",
        "/bin/bash -lc ",
        "/bin/bash -c ",
        "/bin/sh -c ",
    ] {
        if let Some(rest) = cmd.strip_prefix(wrapper) {
            cmd = unquote(rest.trim());
            break;
        }
    }
    if let Some(rest) = cmd.strip_prefix("cd ")
        && let Some((_, after)) = rest.split_once("&&")
    {
        cmd = after.trim();
    }
    let cmd = one_line(cmd);
    (!cmd.is_empty()).then_some(cmd)
}

/// A value as a variable binding: one line, relative to the task's directory, bounded.
fn clean_value(value: &str, cwd: &str) -> Option<String> {
    let v = one_line(value);
    let v = if cwd.is_empty() {
        v.as_str()
    } else {
        v.strip_prefix(cwd)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|rest| !rest.is_empty())
            .unwrap_or(&v)
    };
    let v = truncate_chars(v, MAX_VALUE_CHARS);
    (!v.is_empty()).then_some(v)
}

/// Appends a step, then drops a run of up to [`MAX_CYCLE`] steps that repeats the run just
/// before it (a plain repeat is the run of one).
fn push_step(steps: &mut Vec<String>, step: String) {
    steps.push(step);
    for k in 1..=MAX_CYCLE {
        let n = steps.len();
        if n >= 2 * k && steps[n - k..] == steps[n - 2 * k..n - k] {
            steps.truncate(n - k);
            return;
        }
    }
}

fn bind(variables: &mut Vec<Variable>, name: &'static str, value: String) {
    match variables.iter_mut().find(|v| v.name == name) {
        Some(v) => push_distinct(&mut v.values, value, MAX_VALUES_PER_VARIABLE),
        None => variables.push(Variable {
            name: name.to_owned(),
            values: vec![value],
        }),
    }
}

/// Keeps the last [`MAX_FALLBACK_CRITERIA`] distinct values, latest use last.
fn push_latest(list: &mut Vec<String>, value: String) {
    list.retain(|v| *v != value);
    list.push(value);
    if list.len() > MAX_FALLBACK_CRITERIA {
        list.remove(0);
    }
}

fn push_distinct(list: &mut Vec<String>, value: String, cap: usize) {
    if list.len() < cap && !list.contains(&value) {
        list.push(value);
    }
}

/// `"x"` / `'x'` → `x`.
fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// The first non-empty line, whitespace runs collapsed.
fn one_line(s: &str) -> String {
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A tool name's ASCII letters and digits, lower-cased (`str_replace_editor` → `strreplaceeditor`).
fn normalised(tool: &str) -> String {
    tool.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The task's request (the first user message), one line, bounded.
fn task_request(graph: &TaskGraph) -> Option<String> {
    let NodeMeta::Task(t) = &graph.node("task")?.meta else {
        return None;
    };
    let r = one_line(t.user_request.as_deref()?);
    (!r.is_empty()).then(|| truncate_chars(&r, 500))
}

/// `"<title>: read {file}, then edit {file}, then run {test_command}"`.
fn summary_text(title: &str, steps: &[String]) -> String {
    let mut text = truncate_chars(title, 200);
    text.push_str(": ");
    text.push_str(
        &steps
            .iter()
            .take(STEPS_IN_TEXT)
            .cloned()
            .collect::<Vec<_>>()
            .join(", then "),
    );
    if steps.len() > STEPS_IN_TEXT {
        text.push_str(&format!(", … ({} steps)", steps.len()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands_become_steps() {
        let text = |c: &str| shell_step(c, "/w").map(|s| s.text());
        assert_eq!(text("cat src/a.rs").as_deref(), Some("read {file}"));
        assert_eq!(
            text("sed -n 1,20p /w/src/a.rs").as_deref(),
            Some("read {file}")
        );
        assert_eq!(
            text("rg -n saveDraft src").as_deref(),
            Some("search {pattern}")
        );
        assert_eq!(text("ls -la").as_deref(), Some("list {dir}"));
        assert_eq!(text("cat a | wc -l").as_deref(), Some("run {command}"));
        assert_eq!(text("cargo build").as_deref(), Some("run {command}"));
        match shell_step("sed -n 1,20p /w/src/a.rs", "/w") {
            Some(Step::Bound { value, .. }) => assert_eq!(value, "src/a.rs"),
            _ => panic!("not bound"),
        }
    }

    #[test]
    fn a_session_of_many_tasks_is_too_long_for_one_procedure() {
        use crate::event::{Event, EventKind, TurnEndKind, TurnReason};
        let mut events = crate::synth::session_events(20_000);
        let (seq, time) = events.last().map_or((0, 0), |e| (e.seq, e.time_ms));
        let turn = events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::TurnStart { turn } => Some(*turn),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        events.push(Event::new(
            seq + 1,
            time + 1,
            EventKind::TurnEnd {
                turn,
                reason: TurnReason::new(TurnEndKind::Completed),
            },
        ));
        let g = crate::build_graph(&events, &crate::BuildOptions::default());
        assert_eq!(g.status, Status::Success);
        match induce(&g) {
            Err(Refusal::TooManySteps { steps, max, .. }) => assert!(steps > max, "{steps}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn repeated_runs_collapse() {
        let mut steps = Vec::new();
        for s in [
            "read", "read", "edit", "run", "edit", "run", "edit", "run", "search",
        ] {
            push_step(&mut steps, s.to_owned());
        }
        assert_eq!(steps, ["read", "edit", "run", "search"]);
        let mut steps = Vec::new();
        for s in ["a", "b", "c", "d", "e", "a", "b", "c", "d", "e"] {
            push_step(&mut steps, s.to_owned());
        }
        assert_eq!(steps.len(), 10, "runs longer than MAX_CYCLE stay");
    }

    #[test]
    fn wrappers_are_stripped() {
        let meta = |c: &str| ToolMeta {
            command: Some(Some(c.to_owned())),
            ..ToolMeta::default()
        };
        assert_eq!(
            shell_command(&meta("bash -lc 'cargo test'")).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            shell_command(&meta("cd /w && npm test")).as_deref(),
            Some("npm test")
        );
        assert_eq!(shell_command(&meta("  \n ")), None);
    }

    #[test]
    fn values_are_bounded_single_lines() {
        let long = "x".repeat(500);
        assert_eq!(
            clean_value(&long, "").map(|v| v.chars().count()),
            Some(MAX_VALUE_CHARS + 1)
        );
        assert_eq!(clean_value("a\nb", "").as_deref(), Some("a"));
        assert_eq!(clean_value("/w", "/w").as_deref(), Some("/w"));
        assert_eq!(clean_value("  ", ""), None);
    }
}
