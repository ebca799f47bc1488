//! Gemini CLI sessions on disk: `~/.gemini/tmp/<project>/chats/session-*.json[l]`
//! (`$GEMINI_CLI_HOME/.gemini/tmp/…` when `GEMINI_CLI_HOME` is set). The project folder is the
//! SHA-256 hash of the project root in older versions and a slug in newer ones; it is the
//! session's workspace. The parsing is pure and lives in [`crate::parse::gemini`].
//!
//! Sessions are keyed by file, not by `sessionId` (Cloud Shell's A2A server writes many files
//! that all say `a2a-server`). Subagent runs are read as children of their parent session:
//! newer versions write them to `chats/<parentSessionId>/<id>.json[l]`; older ones wrote a
//! top-level file with `kind: "subagent"`, whose parent is the main session of the same folder
//! whose id shares its prefix or, failing that, whose time span holds the subagent's start.
//! Like every agent's subagent sessions, they are also listed on their own, marked with their
//! parent (`parent_session`).

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::bounded;
use crate::error::Result;
use crate::parse::gemini;
use crate::session::{ReadWarning, Session};
use crate::timestamp::parse_rfc3339_ms;

/// How many bytes of a file's start and end are looked at to learn its kind and time span.
const PEEK_BYTES: u64 = 8 * 1024;

/// Whether `name` is a Gemini CLI session file name (`session-*.json` / `.jsonl`).
pub fn is_session_name(name: &str) -> bool {
    name.starts_with("session-") && (name.ends_with(".json") || name.ends_with(".jsonl"))
}

fn name_of(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or_default()
}

fn is_regular(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file())
}

fn sorted(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    v.sort();
    v
}

/// What the start and end of a session file say, without parsing it whole.
#[derive(Debug, Clone, Default)]
struct Peek {
    id: Option<String>,
    subagent: bool,
    start_ms: Option<i64>,
    last_ms: Option<i64>,
}

fn peek(path: &Path) -> Peek {
    let Ok((mut f, len)) = bounded::open_regular(path) else {
        return Peek::default();
    };
    let mut head = Vec::new();
    let _ = (&mut f).take(PEEK_BYTES).read_to_end(&mut head);
    let mut tail = Vec::new();
    if len > PEEK_BYTES && f.seek(SeekFrom::Start(len - PEEK_BYTES)).is_ok() {
        let _ = f.take(PEEK_BYTES).read_to_end(&mut tail);
    }
    let head = String::from_utf8_lossy(&head);
    let tail = String::from_utf8_lossy(&tail);
    let find = |key: &str, last: bool| -> Option<String> {
        let texts: [&str; 2] = if last { [&tail, &head] } else { [&head, &tail] };
        texts.iter().find_map(|t| string_value(t, key, last))
    };
    Peek {
        id: find("sessionId", false),
        subagent: find("kind", true).as_deref() == Some("subagent"),
        start_ms: find("startTime", false).and_then(|t| parse_rfc3339_ms(&t)),
        last_ms: find("lastUpdated", true).and_then(|t| parse_rfc3339_ms(&t)),
    }
}

/// The string value of the first (or last) `"key": "value"` in `text`.
fn string_value(text: &str, key: &str, last: bool) -> Option<String> {
    let pat = format!("\"{key}\"");
    let at = if last {
        text.rfind(&pat)?
    } else {
        text.find(&pat)?
    };
    let rest = text[at + pat.len()..].trim_start().strip_prefix(':')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_owned())
}

/// The main session file of `chats` that a top-level `kind: "subagent"` file belongs to.
fn parent_of_subagent(file: &Path, p: &Peek, chats: &Path) -> Option<PathBuf> {
    let mains: Vec<(PathBuf, Peek)> = sorted(chats)
        .into_iter()
        .filter(|f| f != file && is_session_name(name_of(f)) && is_regular(f))
        .map(|f| {
            let k = peek(&f);
            (f, k)
        })
        .filter(|(_, k)| !k.subagent)
        .collect();
    let id = p.id.as_deref().unwrap_or_default();
    if let Some((f, _)) = mains.iter().find(|(_, k)| {
        k.id.as_deref()
            .is_some_and(|m| !m.is_empty() && m != id && id.starts_with(m))
    }) {
        return Some(f.clone());
    }
    let start = p.start_ms?;
    mains
        .into_iter()
        .filter(|(_, k)| {
            k.start_ms.is_some_and(|s| s <= start) && k.last_ms.is_some_and(|l| l >= start)
        })
        .max_by_key(|(_, k)| k.start_ms)
        .map(|(f, _)| f)
}

/// The sessions under a Gemini CLI `tmp` folder (subagent files included), with their
/// project folder name.
pub fn list_sessions(tmp: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for project in sorted(tmp) {
        if !fs::symlink_metadata(&project).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let name = name_of(&project).to_owned();
        for f in sorted(&project.join("chats")) {
            if fs::symlink_metadata(&f).is_ok_and(|m| m.is_dir()) {
                // `chats/<parentId>/<id>.json[l]`: subagent sessions.
                out.extend(subagent_files(&f).into_iter().map(|c| (c, name.clone())));
            } else if is_session_name(name_of(&f)) && is_regular(&f) {
                out.push((f, name.clone()));
            }
        }
    }
    out
}

/// The `*.json` / `*.jsonl` files of a `chats/<parentId>/` folder.
fn subagent_files(dir: &Path) -> Vec<PathBuf> {
    sorted(dir)
        .into_iter()
        .filter(|f| {
            let n = name_of(f);
            (n.ends_with(".json") || n.ends_with(".jsonl")) && is_regular(f)
        })
        .collect()
}

/// The project folder (`<project>` of `<project>/chats/<file>`) of a session file.
pub fn project_of(path: &Path) -> Option<String> {
    let chats = path.parent()?;
    let chats = if name_of(chats) == "chats" {
        chats
    } else {
        chats.parent().filter(|c| name_of(c) == "chats")?
    };
    chats
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .map(str::to_owned)
}

/// Reads the Gemini CLI session at `path` with its subagent sessions.
pub fn read(path: &Path) -> Result<Session> {
    let mut s = read_one(path)?;
    let Some(chats) = path.parent() else {
        return Ok(s);
    };
    if name_of(chats) != "chats" {
        // `chats/<parentId>/<id>.json`: a subagent session read on its own.
        s.header.parent_session = Some(name_of(chats).to_owned());
        s.header.delegation_depth = s.header.delegation_depth.max(1);
        return Ok(s);
    }
    let is_subagent = s.meta.get("kind").and_then(|k| k.as_str()) == Some("subagent");
    if is_subagent {
        if let Some(parent) = parent_of_subagent(path, &peek(path), chats) {
            s.header.parent_session = read_one(&parent).ok().map(|p| p.id);
        }
        return Ok(s);
    }
    let mut child_files = if s.id.is_empty() {
        Vec::new()
    } else {
        subagent_files(&chats.join(&s.id))
    };
    for f in sorted(chats) {
        if f == path || !is_session_name(name_of(&f)) || !is_regular(&f) {
            continue;
        }
        let k = peek(&f);
        if k.subagent && parent_of_subagent(&f, &k, chats).as_deref() == Some(path) {
            child_files.push(f);
        }
    }
    for f in child_files {
        match read_one(&f) {
            Ok(mut c) => {
                if c.header.parent_session.is_none() {
                    c.header.parent_session = Some(s.id.clone());
                }
                c.header.delegation_depth = c.header.delegation_depth.max(1);
                s.children.push(c);
            }
            Err(e) => s
                .warnings
                .push(ReadWarning::new(f.display().to_string(), 0, e.to_string())),
        }
    }
    Ok(s)
}

fn read_one(path: &Path) -> Result<Session> {
    let bytes = bounded::read_regular(path, bounded::MAX_SESSION_BYTES)?;
    let mut s = gemini::parse(&bytes, &path.display().to_string());
    s.path = path.to_path_buf();
    // Keyed by file: a sessionId that is not a UUID (Cloud Shell's A2A server writes
    // `a2a-server` into every file) names the session by its file instead.
    if !looks_like_uuid(&s.id) {
        if !s.id.is_empty() {
            s.meta
                .insert("gemini_session_id".into(), s.id.clone().into());
        }
        s.id = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        s.header.id = s.id.clone();
    }
    if let Some(p) = project_of(path) {
        s.meta.insert("project".into(), p.into());
    }
    Ok(s)
}

/// `8-4-4-4-12` hexadecimal digits.
fn looks_like_uuid(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}
