//! `$MINDGATE_HOME/run/serve-<port>.json`: how local tools find a running server.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ServerError;

/// Contents of the token file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenFile {
    /// Bound port.
    pub port: u16,
    /// Server process id.
    pub pid: u32,
    /// Control token.
    pub token: String,
    /// Viewer URL (with the token in its fragment).
    pub url: String,
}

/// Where the token file of a server on `port` lives.
pub fn token_file_path(home: &Path, port: u16) -> PathBuf {
    home.join("run").join(format!("serve-{port}.json"))
}

/// Writes the file with mode 0600 (its directory 0700).
pub fn write(home: &Path, contents: &TokenFile) -> Result<PathBuf, ServerError> {
    let path = token_file_path(home, contents.port);
    let err = |source| ServerError::TokenFile {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(err)?;
        }
    }
    let _ = std::fs::remove_file(&path);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut file = opts.open(&path).map_err(err)?;
    let text = serde_json::to_string_pretty(contents).unwrap_or_default();
    file.write_all(text.as_bytes()).map_err(err)?;
    Ok(path)
}

/// Reads a token file.
pub fn read(home: &Path, port: u16) -> Option<TokenFile> {
    let text = std::fs::read_to_string(token_file_path(home, port)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Removes the token file at `path` if it is still `ours` (same pid and token).
///
/// A server that stops after another one has started on the same home and
/// port must not delete the newcomer's file. Returns whether it was removed.
pub fn remove_if_owned(path: &Path, ours: &TokenFile) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    match serde_json::from_str::<TokenFile>(&text) {
        Ok(found) if found.pid == ours.pid && found.token == ours.token => {
            std::fs::remove_file(path).is_ok()
        }
        _ => {
            tracing::info!(
                path = %path.display(),
                "token file now belongs to another server; left in place"
            );
            false
        }
    }
}
