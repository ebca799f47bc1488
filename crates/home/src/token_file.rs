//! `<home>/run/serve-<port>.json` and `<home>/run/agent-<port>.json`: how local tools find
//! a running `mindgate serve`.
//!
//! The server writes both files when it listens (mode 0600 in a 0700 folder: they hold
//! credentials) and removes them when it stops, unless another server on the same home and
//! port has written its own since. The `serve-` file holds the person's control token (the
//! viewer, `mindgate memory` and the scripts use it); the `agent-` file holds the agent
//! token, which acts as principal `agent` and never validates or rejects memories (the
//! SDK's memory client and `mindgate mcp` use it).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::Home;

/// Largest token file read (a real one is a few hundred bytes).
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// Contents of a token file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenFile {
    /// Bound port.
    pub port: u16,
    /// Server process id.
    pub pid: u32,
    /// Control token.
    pub token: String,
    /// Viewer URL (with the token in its fragment).
    #[serde(default)]
    pub url: String,
}

/// Failures writing or finding token files.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// Writing the file (or creating its folder) failed.
    #[error("cannot write token file {}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The home has no token folder.
    #[error(
        "no token files in {} — start `mindgate serve` (with the same MINDGATE_HOME) first",
        .dir.display()
    )]
    NoRunDir {
        /// `<home>/run`.
        dir: PathBuf,
    },
    /// No token file names a live server (on the port asked for).
    #[error("{}", describe_none_live(.dir, *.port))]
    NoneLive {
        /// `<home>/run`.
        dir: PathBuf,
        /// The port asked for, if any.
        port: Option<u16>,
    },
}

fn describe_none_live(dir: &Path, port: Option<u16>) -> String {
    match port {
        Some(p) => format!(
            "no live token file for port {p} in {} — is `mindgate serve --port {p}` running?",
            dir.display()
        ),
        None => format!(
            "no live token file in {} — start `mindgate serve` (with the same MINDGATE_HOME) first",
            dir.display()
        ),
    }
}

/// Writes the token file of `contents.port` with mode 0600 (its folder 0700), replacing an
/// older one. Returns its path.
pub fn write(home: &Home, contents: &TokenFile) -> Result<PathBuf, TokenFileError> {
    write_at(home, home.token_file(contents.port), contents)
}

/// Writes the agent token file of `contents.port` (`contents.token` is the agent token),
/// as [`write`] does. Returns its path.
pub fn write_agent(home: &Home, contents: &TokenFile) -> Result<PathBuf, TokenFileError> {
    write_at(home, home.agent_token_file(contents.port), contents)
}

fn write_at(home: &Home, path: PathBuf, contents: &TokenFile) -> Result<PathBuf, TokenFileError> {
    let err = |source| TokenFileError::Write {
        path: path.clone(),
        source,
    };
    let dir = home.run_dir();
    std::fs::create_dir_all(&dir).map_err(err)?;
    crate::private_fs::set_private_dir(&dir).map_err(err)?;
    // A new file, never an old one's permissions: remove, then create exclusively.
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(err(e)),
        _ => {}
    }
    let mut file = crate::private_fs::private_file_options()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(err)?;
    let text = serde_json::to_string_pretty(contents).map_err(|e| err(e.into()))?;
    file.write_all(text.as_bytes()).map_err(err)?;
    Ok(path)
}

/// Reads the token file of a server on `port`; `None` when it is missing or unreadable.
pub fn read(home: &Home, port: u16) -> Option<TokenFile> {
    read_path(&home.token_file(port))
}

/// Reads the agent token file of a server on `port`; `None` when it is missing or
/// unreadable.
pub fn read_agent(home: &Home, port: u16) -> Option<TokenFile> {
    read_path(&home.agent_token_file(port))
}

/// Reads the token file at `path`: only a regular file of at most
/// [`MAX_TOKEN_FILE_BYTES`] (a FIFO or a device in its place is skipped without blocking).
pub fn read_path(path: &Path) -> Option<TokenFile> {
    let bytes = read_bounded(path)?;
    serde_json::from_slice(&bytes).ok()
}

fn read_bounded(path: &Path) -> Option<Vec<u8>> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = open_nonblocking(path).ok()?;
    // The check that counts: on the open handle.
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_TOKEN_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= MAX_TOKEN_FILE_BYTES).then_some(bytes)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// What [`remove_if_owned`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The file was ours and is gone.
    Removed,
    /// The file now belongs to another server (another pid or token): left in place.
    OwnedByAnother,
    /// No readable file was there (or it could not be removed).
    NotFound,
}

/// Removes the token file at `path` if it is still `ours` (same pid and token).
///
/// A server that stops after another one has started on the same home and port must not
/// delete the newcomer's file.
pub fn remove_if_owned(path: &Path, ours: &TokenFile) -> Removal {
    match read_path(path) {
        Some(found) if found.pid == ours.pid && found.token == ours.token => {
            match std::fs::remove_file(path) {
                Ok(()) => Removal::Removed,
                Err(_) => Removal::NotFound,
            }
        }
        Some(_) => Removal::OwnedByAnother,
        None => Removal::NotFound,
    }
}

/// The running server to talk to, from the token files under `<home>/run/`: the one on
/// `port` when given, else the most recently written one whose process is alive (files
/// with an empty token are skipped).
pub fn find_live(home: &Home, port: Option<u16>) -> Result<TokenFile, TokenFileError> {
    find_live_named(home, port, "serve-")
}

/// The agent credential of the running server to talk to: like [`find_live`], over the
/// agent token files (`<home>/run/agent-<port>.json`).
pub fn find_live_agent(home: &Home, port: Option<u16>) -> Result<TokenFile, TokenFileError> {
    find_live_named(home, port, "agent-")
}

fn find_live_named(
    home: &Home,
    port: Option<u16>,
    prefix: &str,
) -> Result<TokenFile, TokenFileError> {
    let dir = home.run_dir();
    let entries =
        std::fs::read_dir(&dir).map_err(|_| TokenFileError::NoRunDir { dir: dir.clone() })?;
    let mut best: Option<(SystemTime, TokenFile)> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !(name.starts_with(prefix) && name.ends_with(".json")) {
            continue;
        }
        let Some(file) = read_path(&path) else {
            continue;
        };
        if port.is_some_and(|p| p != file.port) || !pid_alive(file.pid) || file.token.is_empty() {
            continue;
        }
        let modified = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        if best.as_ref().is_none_or(|(t, _)| modified > *t) {
            best = Some((modified, file));
        }
    }
    best.map(|(_, file)| file)
        .ok_or(TokenFileError::NoneLive { dir, port })
}

/// Whether process `pid` runs (always true where `/proc` is missing: nothing to tell).
fn pid_alive(pid: u32) -> bool {
    let proc_root = Path::new("/proc");
    !proc_root.join("self").exists() || proc_root.join(pid.to_string()).exists()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn ours(port: u16) -> TokenFile {
        TokenFile {
            port,
            pid: std::process::id(),
            token: "t0ken".into(),
            url: format!("http://127.0.0.1:{port}/#token=t0ken"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_token_file_is_private_and_replaces_an_old_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        std::fs::create_dir_all(home.run_dir()).unwrap();
        // An older file readable by everyone must not pass its mode on.
        std::fs::write(home.token_file(4747), "old").unwrap();
        std::fs::set_permissions(
            home.token_file(4747),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let path = write(&home, &ours(4747)).unwrap();
        assert_eq!(path, home.token_file(4747));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&home.run_dir()), 0o700);
        assert_eq!(read(&home, 4747), Some(ours(4747)));
    }

    #[test]
    fn only_the_owner_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let path = write(&home, &ours(1234)).unwrap();
        let other = TokenFile {
            token: "another".into(),
            ..ours(1234)
        };
        assert_eq!(remove_if_owned(&path, &other), Removal::OwnedByAnother);
        assert!(path.exists());
        assert_eq!(remove_if_owned(&path, &ours(1234)), Removal::Removed);
        assert!(!path.exists());
        assert_eq!(remove_if_owned(&path, &ours(1234)), Removal::NotFound);
    }

    #[test]
    fn find_live_takes_the_port_asked_for_and_skips_dead_or_empty_files() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        assert!(matches!(
            find_live(&home, None),
            Err(TokenFileError::NoRunDir { .. })
        ));
        write(&home, &ours(1000)).unwrap();
        write(&home, &ours(2000)).unwrap();
        write(
            &home,
            &TokenFile {
                token: String::new(),
                ..ours(3000)
            },
        )
        .unwrap();
        std::fs::write(home.run_dir().join("serve-4000.json"), "not json").unwrap();
        std::fs::write(home.run_dir().join("notes.txt"), "{}").unwrap();
        assert_eq!(find_live(&home, Some(1000)).unwrap().port, 1000);
        assert_eq!(find_live(&home, Some(2000)).unwrap().port, 2000);
        let any = find_live(&home, None).unwrap().port;
        assert!(any == 1000 || any == 2000, "{any}");
        let err = find_live(&home, Some(3000)).unwrap_err();
        assert!(err.to_string().contains("port 3000"), "{err}");
        if Path::new("/proc/self").exists() {
            write(
                &home,
                &TokenFile {
                    pid: u32::MAX,
                    ..ours(5000)
                },
            )
            .unwrap();
            assert!(find_live(&home, Some(5000)).is_err());
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_agent_token_file_is_private_and_found_apart_from_the_control_token() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        write(&home, &ours(4747)).unwrap();
        let agent = TokenFile {
            token: "agent-t0ken".into(),
            url: "http://127.0.0.1:4747".into(),
            ..ours(4747)
        };
        let path = write_agent(&home, &agent).unwrap();
        assert_eq!(path, home.agent_token_file(4747));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(read_agent(&home, 4747), Some(agent.clone()));
        assert_eq!(find_live_agent(&home, Some(4747)).unwrap(), agent);
        // The control token's finder never returns the agent file, nor the reverse.
        assert_eq!(find_live(&home, None).unwrap().token, "t0ken");
        assert_eq!(find_live_agent(&home, None).unwrap().token, "agent-t0ken");
        assert_eq!(remove_if_owned(&path, &agent), Removal::Removed);
        assert!(find_live_agent(&home, Some(4747)).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_in_place_of_a_token_file_is_skipped_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        std::fs::create_dir_all(home.run_dir()).unwrap();
        let fifo = home.token_file(6000);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo unavailable");
            return;
        }
        assert_eq!(read(&home, 6000), None);
        assert!(find_live(&home, Some(6000)).is_err());
    }
}
