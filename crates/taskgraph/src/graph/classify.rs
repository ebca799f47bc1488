//! Tool classification: which node type a tool call becomes.

use serde_json::Value;

use super::model::NodeType;
use crate::util::value_text;

fn norm(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Classifies a call by tool name and arguments.
///
/// `skill` → skill; `subagent|agent|spawn_agent` (and Claude Code's `Task`) → subagent;
/// `todo_write` (and Codex's `update_plan`) → plan; `edit|write|str_replace_editor|apply_patch`
/// and close relatives → code; a `bash|shell|pwsh` command that looks like a test run → test;
/// everything else → tool.
pub fn classify(name: &str, arguments: &Value) -> NodeType {
    let n = norm(name);
    match n.as_str() {
        "skill" => NodeType::Skill,
        "subagent" | "agent" | "spawnagent" | "task" => NodeType::Subagent,
        "todowrite" | "updateplan" => NodeType::Plan,
        "edit"
        | "write"
        | "multiedit"
        | "strreplaceeditor"
        | "strreplacebasededittool"
        | "applypatch"
        | "notebookedit"
        | "writefile"
        | "editfile"
        | "createfile" => NodeType::Code,
        "bash" | "shell" | "pwsh" | "powershell" | "localshell" | "execcommand"
        | "shellcommand" | "containerexec" => {
            let cmd = command_of(arguments).unwrap_or_default();
            if cmd.trim_start().starts_with("apply_patch") || cmd.contains(" apply_patch") {
                NodeType::Code
            } else if looks_like_test(&cmd) {
                NodeType::Test
            } else {
                NodeType::Tool
            }
        }
        _ => NodeType::Tool,
    }
}

/// The command line of a shell call (`command` string or argv array, `cmd`, `script`).
pub fn command_of(arguments: &Value) -> Option<String> {
    let v = match arguments {
        Value::String(s) => return Some(s.clone()),
        Value::Object(o) => o
            .get("command")
            .or_else(|| o.get("cmd"))
            .or_else(|| o.get("script"))
            .or_else(|| o.get("input"))?,
        _ => return None,
    };
    match v {
        Value::Array(parts) => Some(
            parts
                .iter()
                .map(|p| {
                    p.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| p.to_string())
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        other => Some(value_text(other)),
    }
}

const TEST_RUNNERS: &[&str] = &[
    "pytest",
    "py.test",
    "jest",
    "vitest",
    "mocha",
    "rspec",
    "phpunit",
    "ctest",
    "tox",
    "nox",
    "cargo test",
    "cargo nextest",
    "go test",
    "npm test",
    "npm run test",
    "yarn test",
    "pnpm test",
    "pnpm run test",
    "bun test",
    "deno test",
    "make test",
    "make check",
    "mvn test",
    "gradle test",
    "gradlew test",
    "dotnet test",
    "mix test",
    "swift test",
    "python -m unittest",
    "bundle exec rake test",
];

/// Whether a command line runs tests (word-boundary match against common runners).
pub fn looks_like_test(cmd: &str) -> bool {
    let lower = cmd.to_ascii_lowercase();
    TEST_RUNNERS.iter().any(|runner| {
        lower.match_indices(runner).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + runner.len()..].chars().next();
            let boundary = |c: Option<char>| {
                c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            };
            boundary(before) && boundary(after)
        })
    })
}

/// Files named by a code-change call: path-like arguments, or the headers of a patch.
pub fn files_of(arguments: &Value) -> Vec<String> {
    for key in [
        "file_path",
        "path",
        "filePath",
        "file",
        "filename",
        "target_file",
        "notebook_path",
    ] {
        if let Some(p) = arguments.get(key).and_then(Value::as_str)
            && !p.is_empty()
        {
            return vec![p.to_owned()];
        }
    }
    let patch = match arguments {
        Value::String(s) => s.clone(),
        _ => ["input", "patch", "diff", "content"]
            .iter()
            .find_map(|k| arguments.get(*k).and_then(Value::as_str).map(str::to_owned))
            .or_else(|| command_of(arguments))
            .unwrap_or_default(),
    };
    let mut files: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_start();
        let f = [
            "*** Update File: ",
            "*** Add File: ",
            "*** Delete File: ",
            "*** Move to: ",
            "+++ b/",
        ]
        .iter()
        .find_map(|p| line.strip_prefix(p));
        if let Some(f) = f {
            let f = f.trim();
            if !f.is_empty() && !files.iter().any(|x| x == f) {
                files.push(f.to_owned());
            }
        }
    }
    files
}

/// The skill name of a `skill` call (`name`, `skill`, `skill_name` or `command`).
pub fn skill_name(arguments: &Value) -> Option<String> {
    match arguments {
        Value::String(s) => Some(s.clone()),
        _ => ["name", "skill", "skill_name", "command"]
            .iter()
            .find_map(|k| arguments.get(*k).and_then(Value::as_str).map(str::to_owned)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies() {
        assert_eq!(
            classify("bash", &json!({"command": "cargo test -p x"})),
            NodeType::Test
        );
        assert_eq!(classify("bash", &json!({"command": "ls"})), NodeType::Tool);
        assert_eq!(
            classify("shell", &json!({"command": ["bash", "-lc", "pytest -q"]})),
            NodeType::Test
        );
        assert_eq!(classify("str_replace_editor", &json!({})), NodeType::Code);
        assert_eq!(classify("TodoWrite", &json!({})), NodeType::Plan);
        assert_eq!(classify("Task", &json!({})), NodeType::Subagent);
        assert_eq!(classify("skill", &json!({})), NodeType::Skill);
        assert!(!looks_like_test("echo suggestions"));
        assert!(!looks_like_test("cat toxic.txt"));
        assert_eq!(
            files_of(&json!({"input": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n"})),
            vec!["src/a.rs".to_owned()]
        );
    }
}
