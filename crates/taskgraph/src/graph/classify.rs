//! Tool classification: which node type a tool call becomes.

use std::borrow::Cow;

use serde_json::Value;

use super::model::NodeType;
use crate::json_fields::value_text;

/// Longest normalised name [`classify`] knows (`strreplacebasededittool`); anything longer
/// matches no known tool.
const NORM_MAX: usize = 32;

/// The name's ASCII letters and digits, lower-cased, in a stack buffer (no allocation);
/// `None` when longer than [`NORM_MAX`].
fn norm(name: &str, buf: &mut [u8; NORM_MAX]) -> Option<usize> {
    let mut n = 0;
    for b in name.bytes().filter(u8::is_ascii_alphanumeric) {
        *buf.get_mut(n)? = b.to_ascii_lowercase();
        n += 1;
    }
    Some(n)
}

/// Classifies a call by tool name and arguments.
///
/// `skill` → skill; `subagent|agent|spawn_agent` (and Claude Code's `Task`, Gemini CLI's
/// `codebase_investigator` / `cli_help` / `delegate_to_agent`) → subagent; `todo_write` (and
/// Codex's `update_plan`, Gemini CLI's `write_todos`) → plan;
/// `edit|write|str_replace_editor|apply_patch` and close relatives (Gemini CLI's `replace`) →
/// code; a `bash|shell|pwsh|run_shell_command` command that looks like a test run → test;
/// everything else → tool.
pub fn classify(name: &str, arguments: &Value) -> NodeType {
    let mut buf = [0u8; NORM_MAX];
    let Some(len) = norm(name, &mut buf) else {
        return NodeType::Tool;
    };
    // Only ASCII bytes were written.
    let n = std::str::from_utf8(&buf[..len]).unwrap_or_default();
    match n {
        "skill" => NodeType::Skill,
        // Gemini CLI's subagents are tools named after the agent.
        "subagent"
        | "agent"
        | "spawnagent"
        | "task"
        | "codebaseinvestigator"
        | "clihelp"
        | "delegatetoagent" => NodeType::Subagent,
        "todowrite" | "updateplan" | "writetodos" => NodeType::Plan,
        "edit"
        | "write"
        | "multiedit"
        | "strreplaceeditor"
        | "strreplacebasededittool"
        | "applypatch"
        | "notebookedit"
        | "writefile"
        | "editfile"
        | "createfile"
        | "replace" => NodeType::Code,
        "bash" | "shell" | "runshellcommand" | "pwsh" | "powershell" | "localshell"
        | "execcommand" | "shellcommand" | "containerexec" => {
            let cmd = command_str(arguments).unwrap_or_default();
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
    command_str(arguments).map(Cow::into_owned)
}

/// [`command_of`], borrowing when the command is a plain string.
pub(crate) fn command_str(arguments: &Value) -> Option<Cow<'_, str>> {
    match arguments {
        Value::String(s) => return Some(Cow::Borrowed(s)),
        Value::Object(o) => {
            if let Some(Value::String(s)) = o
                .get("command")
                .or_else(|| o.get("cmd"))
                .or_else(|| o.get("script"))
                .or_else(|| o.get("input"))
            {
                return Some(Cow::Borrowed(s));
            }
        }
        _ => {}
    }
    command_owned(arguments).map(Cow::Owned)
}

fn command_owned(arguments: &Value) -> Option<String> {
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

/// Bit `b` set when some runner starts with byte `b`.
const RUNNER_FIRST: u128 = {
    let mut m = 0u128;
    let mut k = 0;
    while k < TEST_RUNNERS.len() {
        m |= 1 << TEST_RUNNERS[k].as_bytes()[0];
        k += 1;
    }
    m
};

/// Whether a command line runs tests (word-boundary match against common runners).
pub fn looks_like_test(cmd: &str) -> bool {
    // One pass over the bytes, ASCII case-insensitive, trying the runners only where a word
    // starts. The runners are lower-case ASCII, so a match starts and ends on char boundaries
    // and a non-ASCII neighbour byte is never alphanumeric (a boundary), as the neighbouring
    // char would be. No runner has a border (a proper prefix that is also a suffix), so two
    // matches of one runner never overlap and every match is one that `match_indices` (which
    // skips overlapping matches) would report too.
    let hay = cmd.as_bytes();
    let boundary =
        |c: Option<&u8>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-'));
    (0..hay.len()).any(|i| {
        let c = hay[i].to_ascii_lowercase();
        c < 128
            && RUNNER_FIRST >> c & 1 == 1
            && boundary(i.checked_sub(1).and_then(|j| hay.get(j)))
            && TEST_RUNNERS.iter().any(|runner| {
                let r = runner.as_bytes();
                r[0] == c
                    && hay
                        .get(i..i + r.len())
                        .is_some_and(|w| w.eq_ignore_ascii_case(r))
                    && boundary(hay.get(i + r.len()))
            })
    })
}

/// Argument names that carry the file a tool call reads or changes, across the agents'
/// tool schemas (Claude Code, Codex, pi, DSH).
pub const FILE_ARGUMENT_KEYS: &[&str] = &[
    "file_path",
    "path",
    "filePath",
    "file",
    "filename",
    "target_file",
    "notebook_path",
];

/// Files named by a code-change call: path-like arguments, or the headers of a patch.
pub fn files_of(arguments: &Value) -> Vec<String> {
    for key in FILE_ARGUMENT_KEYS {
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

    /// `looks_like_test` relies on it: a runner's matches never overlap.
    #[test]
    fn runners_have_no_border() {
        for r in TEST_RUNNERS {
            assert!(r.bytes().all(|b| !b.is_ascii_uppercase()), "{r}");
            for k in 1..r.len() {
                assert_ne!(r[..k], r[r.len() - k..], "{r}");
            }
        }
    }

    /// The original definition (lower-cased copy, `match_indices` per runner).
    fn looks_like_test_reference(cmd: &str) -> bool {
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

    #[test]
    fn looks_like_test_matches_reference() {
        let words = [
            "cargo", "test", "Cargo", "TEST", "pytest", "py.test", "-q", "_", "-", "é", "ß", "go",
            "npm", "run", "tox", "nox", "detox", "make", "check", "&&", ";", "x", "mix", "",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut cmd = String::new();
            for _ in 0..(seed % 6) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                cmd.push_str(words[(seed % words.len() as u64) as usize]);
                if seed & 0x100 != 0 {
                    cmd.push(' ');
                }
            }
            seed = seed.wrapping_add(1);
            assert_eq!(
                looks_like_test(&cmd),
                looks_like_test_reference(&cmd),
                "{cmd:?}"
            );
        }
    }

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
        assert!(looks_like_test("CD x && Cargo Test"));
        assert!(looks_like_test("tox"));
        assert!(!looks_like_test("detox"));
        assert!(!looks_like_test("pytest_x"));
        assert!(looks_like_test("é pytest é"));
        assert!(!looks_like_test("cat toxic.txt"));
        assert_eq!(
            files_of(&json!({"input": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n"})),
            vec!["src/a.rs".to_owned()]
        );
    }
}
