//! File I/O: reading one session (file or folder) from disk, children included.
//!
//! The parsing itself is pure and lives in [`crate::parse`].

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bounded::{self, MAX_DECODED_BYTES, MAX_SESSION_BYTES};
use crate::error::{Error, Result};
use crate::parse::{self, claude, dsh};
use crate::session::{Agent, ReadWarning, Session};

/// How deep child sessions are followed (guards against cycles in `parentSession`).
const MAX_CHILD_DEPTH: usize = 8;

/// Reads the session at `path`, guessing its format (see [`detect_agent`]).
pub fn read_session(path: &Path) -> Result<Session> {
    let agent = detect_agent(path)?;
    read_session_as(path, agent)
}

/// Reads the session at `path` as `agent`'s format, with its child sessions.
pub fn read_session_as(path: &Path, agent: Agent) -> Result<Session> {
    read_with_depth(path, agent, 0)
}

/// [`read_session_as`] that hands a DSH session's own events (not its children's) to `sink`
/// while they are read (a zstd file's), and says whether `sink` was fed exactly the
/// session's events in order ([`dsh::parse_zstd_feeding`]); other formats and files feed
/// nothing (`false`).
pub(crate) fn read_session_feeding(
    path: &Path,
    agent: Agent,
    sink: &mut dyn dsh::EventSink,
) -> Result<(Session, bool)> {
    match agent {
        Agent::Dsh => read_dsh(path, 0, Some(sink)),
        _ => read_with_depth(path, agent, 0).map(|s| (s, false)),
    }
}

fn read_with_depth(path: &Path, agent: Agent, depth: usize) -> Result<Session> {
    match agent {
        Agent::Gemini => crate::gemini::read(path),
        Agent::OpenCode => crate::opencode::read(path),
        Agent::Dsh => read_dsh(path, depth, None).map(|(s, _)| s),
        Agent::ClaudeCode => {
            let bytes = read_file(path)?;
            let mut s = claude::parse(&bytes, &path.display().to_string());
            s.path = path.to_path_buf();
            for c in &mut s.children {
                c.path = path.to_path_buf();
            }
            // <dir>/<sessionId>/subagents/agent-*.jsonl
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let sub = path.with_file_name(stem).join("subagents");
            let mut agent_files =
                sorted_files(&sub, |n| n.starts_with("agent-") && n.ends_with(".jsonl"));
            // Claude Code ≤ 2.0: `agent-<id>.jsonl` sidechains beside the main transcript.
            if s.header.parent_session.is_none()
                && let Some(dir) = path.parent()
            {
                agent_files.extend(claude_sidechain_files(dir, &s.id));
            }
            for f in agent_files {
                match read_file(&f) {
                    Ok(b) => {
                        let mut child = claude::parse_subagent(&b, &f.display().to_string(), &s.id);
                        child.path = f;
                        s.children.push(child);
                    }
                    Err(e) => {
                        s.warnings
                            .push(ReadWarning::new(f.display().to_string(), 0, e.to_string()))
                    }
                }
            }
            Ok(s)
        }
        Agent::Pi | Agent::Codex => {
            let bytes = read_file(path)?;
            let mut s = parse::parse_bytes(agent, &bytes, &path.display().to_string());
            s.path = path.to_path_buf();
            if s.id.is_empty() {
                s.id = file_id(path);
                s.header.id = s.id.clone();
            }
            if agent == Agent::Codex && depth < MAX_CHILD_DEPTH && !s.id.is_empty() {
                for f in codex_child_files(path, &s.id) {
                    match read_with_depth(&f, Agent::Codex, depth + 1) {
                        Ok(c) => s.children.push(c),
                        Err(e) => s.warnings.push(ReadWarning::new(
                            f.display().to_string(),
                            0,
                            e.to_string(),
                        )),
                    }
                }
            }
            Ok(s)
        }
    }
}

fn file_id(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .trim_end_matches(".jsonl")
        .to_owned()
}

/// Reads a whole regular file, at most [`MAX_SESSION_BYTES`] (see [`crate::bounded`]).
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    bounded::read_regular(path, MAX_SESSION_BYTES)
}

fn sorted_files(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    v.sort();
    v
}

/// The DSH session file in a session folder: the highest version present
/// (`session.v4.jsonl[.zstd]` > … > `session.v1…` > `session.jsonl[.zstd]`).
pub fn dsh_session_file(dir: &Path) -> Option<PathBuf> {
    let rd = fs::read_dir(dir).ok()?;
    rd.filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            dsh_version(name).map(|v| (v, p.clone()))
        })
        .max_by_key(|(v, _)| *v)
        .map(|(_, p)| p)
}

/// The version of a DSH session file name (`session.jsonl.zstd` is 0), or `None`.
pub fn dsh_version(name: &str) -> Option<u32> {
    let rest = name.strip_suffix(".zstd").unwrap_or(name);
    let stem = rest.strip_suffix(".jsonl")?;
    if stem == "session" {
        return Some(0);
    }
    stem.strip_prefix("session.v")?.parse().ok()
}

/// Reads a DSH session (file or folder) and its child sessions; `sink` gets its own events
/// while a zstd file is read (the `bool`: whether it got exactly them, in order).
fn read_dsh(
    path: &Path,
    depth: usize,
    sink: Option<&mut dyn dsh::EventSink>,
) -> Result<(Session, bool)> {
    let (dir, file) = if path.is_dir() {
        let f = dsh_session_file(path).ok_or_else(|| Error::NotASession {
            path: path.to_path_buf(),
        })?;
        (path.to_path_buf(), f)
    } else {
        (
            path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            path.to_path_buf(),
        )
    };
    let label = file.display().to_string();
    let raw = read_file(&file)?;
    let (mut s, fed_whole) = if label.ends_with(".zstd") || raw.starts_with(&dsh::ZSTD_MAGIC) {
        // Frame by frame: the decoded text is never held whole.
        let read = match sink {
            Some(sink) => dsh::parse_zstd_feeding(&raw, &label, MAX_DECODED_BYTES, sink),
            None => dsh::parse_zstd_limited(&raw, &label, MAX_DECODED_BYTES).map(|s| (s, false)),
        };
        read.map_err(|_| Error::TooLarge {
            path: file.clone(),
            limit: MAX_DECODED_BYTES as u64,
        })?
    } else {
        (dsh::parse(&raw, &label), false)
    };
    drop(raw);
    s.path = dir.clone();
    if s.id.is_empty() {
        s.id = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        s.header.id = s.id.clone();
    }
    if depth < MAX_CHILD_DEPTH
        && let Some(ws) = dir.parent()
    {
        for sib in dsh_child_dirs(ws, &dir, &s.id) {
            match read_dsh(&sib, depth + 1, None) {
                Ok((c, _)) => s.children.push(c),
                Err(e) => s.warnings.push(ReadWarning::new(
                    sib.display().to_string(),
                    0,
                    e.to_string(),
                )),
            }
        }
    }
    Ok((s, fed_whole))
}

/// Session folders next to `dir` whose header names `parent_id` as `parentSession`.
fn dsh_child_dirs(workspace: &Path, dir: &Path, parent_id: &str) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(workspace) else {
        return Vec::new();
    };
    let mut out: Vec<(i64, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p != dir)
        .filter_map(|p| {
            let f = dsh_session_file(&p)?;
            let h = read_first_json_line(&f)?;
            let parent = h.get("parentSession").and_then(Value::as_str)?;
            (parent == parent_id).then(|| {
                let t = h
                    .get("createdAt")
                    .and_then(crate::timestamp::time_value_ms)
                    .unwrap_or(0);
                (t, p)
            })
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, p)| p).collect()
}

/// Sidechain transcripts (`*agent-*.jsonl`) in `dir` whose lines name `session_id` as their
/// session (Claude Code ≤ 2.0 wrote them beside the main transcript).
fn claude_sidechain_files(dir: &Path, session_id: &str) -> Vec<PathBuf> {
    if session_id.is_empty() {
        return Vec::new();
    }
    sorted_files(dir, |n| n.contains("agent-") && n.ends_with(".jsonl"))
        .into_iter()
        .filter(|f| claude_sidechain_parent(f).as_deref() == Some(session_id))
        .collect()
}

/// The parent session id of a Claude Code sidechain transcript (its first line is a sidechain
/// line naming `sessionId`), or `None` for any other file.
pub(crate) fn claude_sidechain_parent(path: &Path) -> Option<String> {
    let v = read_first_json_line(path)?;
    if v.get("isSidechain").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    v.get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Codex rollouts next to `path` (same day folder) whose `session_meta` names `parent_id` as
/// their parent thread (`parent_thread_id`, or `source.subagent.thread_spawn.parent_thread_id`),
/// oldest first.
fn codex_child_files(path: &Path, parent_id: &str) -> Vec<PathBuf> {
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    sorted_files(dir, |n| n.contains("rollout-") && n.ends_with(".jsonl"))
        .into_iter()
        .filter(|f| f != path)
        .filter(|f| {
            read_first_json_line(f).is_some_and(|v| {
                let meta = v.get("payload").unwrap_or(&v);
                let parent = meta
                    .get("parent_thread_id")
                    .and_then(Value::as_str)
                    .or_else(|| {
                        meta.pointer("/source/subagent/thread_spawn/parent_thread_id")
                            .and_then(Value::as_str)
                    });
                parent == Some(parent_id)
            })
        })
        .collect()
}

/// Reads and parses only the first line of a (possibly zstd) JSONL file.
pub(crate) fn read_first_json_line(path: &Path) -> Option<Value> {
    let (f, _) = bounded::open_regular(path).ok()?;
    let mut line = String::new();
    let is_zstd = path.extension().is_some_and(|e| e == "zstd");
    let reader: Box<dyn Read> = if is_zstd {
        Box::new(zstd::stream::read::Decoder::new(f).ok()?)
    } else {
        Box::new(f)
    };
    BufReader::new(reader.take(16 * 1024 * 1024))
        .read_line(&mut line)
        .ok()?;
    serde_json::from_str(line.trim()).ok()
}

/// Guesses the format of a session path.
///
/// A folder holding `session*.jsonl[.zstd]` (or such a file) is DSH; `rollout-*.jsonl` is
/// Codex; a `session-*.json[l]` with Gemini CLI's metadata is Gemini; an OpenCode storage
/// session file or `opencode.db/<id>` path is OpenCode; other `.jsonl` files are sniffed from
/// their first lines.
pub fn detect_agent(path: &Path) -> Result<Agent> {
    if crate::opencode::is_session_path(path) {
        return Ok(Agent::OpenCode);
    }
    let meta = fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return if dsh_session_file(path).is_some() {
            Ok(Agent::Dsh)
        } else {
            Err(Error::NotASession {
                path: path.to_path_buf(),
            })
        };
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if dsh_version(name).is_some() {
        return Ok(Agent::Dsh);
    }
    if name.starts_with("rollout-") {
        return Ok(Agent::Codex);
    }
    let head = bounded::read_head(path, 256 * 1024)?;
    if (crate::gemini::is_session_name(name) || name.ends_with(".json"))
        && parse::gemini::sniff(&head)
    {
        return Ok(Agent::Gemini);
    }
    if head.starts_with(&dsh::ZSTD_MAGIC) {
        return Ok(Agent::Dsh);
    }
    if let Some(agent) = parse::sniff_agent(&head) {
        return Ok(agent);
    }
    // A first line longer than the sniffed head (huge tool output): look at the whole file.
    if head.len() == 256 * 1024 {
        let all = read_file(path)?;
        if let Some(agent) = parse::sniff_agent(&all) {
            return Ok(agent);
        }
    }
    Err(Error::NotASession {
        path: path.to_path_buf(),
    })
}
