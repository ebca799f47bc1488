//! [`Home`]: the Mindgate home directory and the files in it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::env;

/// Folder name of the default home inside the user's home directory (`~/.mindgate`).
pub const DEFAULT_FOLDER: &str = ".mindgate";
/// File name of the run database (`mindgate serve`, `mindgate mcp`).
pub const RUN_DB_FILE: &str = "mindgate.db";
/// File name of the memory store (`mindgate memory …`).
pub const MEMORY_DB_FILE: &str = "memory.db";
/// Folder of imported embedding models.
pub const MODELS_FOLDER: &str = "models";
/// Folder of the running servers' token files.
pub const RUN_FOLDER: &str = "run";
/// File name of the price table that overrides and extends the built-in one (`docs/cost.md`).
pub const PRICES_FILE: &str = "prices.toml";
/// The session search index's file name in the home.
pub const SESSION_SEARCH_FILE: &str = "session-search.db";

/// The Mindgate home directory: databases, token files and models live in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// The home at `root` (a `--home` flag, a test's temporary directory).
    pub fn at(root: impl Into<PathBuf>) -> Home {
        Home { root: root.into() }
    }

    /// The home of this process: `$MINDGATE_HOME` when set and not empty, else
    /// `~/.mindgate`, else `./.mindgate` when the user has no home directory.
    pub fn from_env() -> Home {
        Home::resolve(std::env::var_os(env::MINDGATE_HOME), std::env::home_dir())
    }

    /// The resolution rule of [`Home::from_env`] over given values: `mindgate_home` (the value
    /// of `$MINDGATE_HOME`) when not empty, else `user_home/.mindgate`, else `./.mindgate`.
    pub fn resolve(mindgate_home: Option<OsString>, user_home: Option<PathBuf>) -> Home {
        if let Some(root) = mindgate_home.filter(|v| !v.is_empty()) {
            return Home::at(root);
        }
        match user_home.filter(|h| !h.as_os_str().is_empty()) {
            Some(dir) => Home::at(dir.join(DEFAULT_FOLDER)),
            None => Home::at(DEFAULT_FOLDER),
        }
    }

    /// The home directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run database, `<home>/mindgate.db`.
    pub fn run_db(&self) -> PathBuf {
        self.root.join(RUN_DB_FILE)
    }

    /// The memory store, `<home>/memory.db`.
    pub fn memory_db(&self) -> PathBuf {
        self.root.join(MEMORY_DB_FILE)
    }

    /// Where imported models live, `<home>/models`.
    pub fn models_dir(&self) -> PathBuf {
        self.root.join(MODELS_FOLDER)
    }

    /// The search index of the coding-agent sessions, `<home>/session-search.db` (shared by
    /// `serve`, the CLI and MCP; rebuilt from the sessions when removed).
    pub fn session_search_db(&self) -> PathBuf {
        self.root.join(SESSION_SEARCH_FILE)
    }

    /// The price table overriding the built-in model prices, `<home>/prices.toml`.
    pub fn prices_file(&self) -> PathBuf {
        self.root.join(PRICES_FILE)
    }

    /// The folder of the running servers' token files, `<home>/run`.
    pub fn run_dir(&self) -> PathBuf {
        self.root.join(RUN_FOLDER)
    }

    /// The token file of a server on `port`, `<home>/run/serve-<port>.json`.
    pub fn token_file(&self, port: u16) -> PathBuf {
        self.run_dir().join(format!("serve-{port}.json"))
    }

    /// The agent token file of a server on `port`, `<home>/run/agent-<port>.json`: the
    /// credential agents (the SDK's memory client, `mindgate mcp`) use instead of the
    /// person's control token.
    pub fn agent_token_file(&self, port: u16) -> PathBuf {
        self.run_dir().join(format!("agent-{port}.json"))
    }
}

impl AsRef<Path> for Home {
    fn as_ref(&self) -> &Path {
        &self.root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mindgate_home_wins_over_the_user_home() {
        let home = Home::resolve(Some("/srv/mg".into()), Some("/home/ada".into()));
        assert_eq!(home.root(), Path::new("/srv/mg"));
    }

    #[test]
    fn an_empty_mindgate_home_counts_as_unset() {
        let home = Home::resolve(Some(OsString::new()), Some("/home/ada".into()));
        assert_eq!(home.root(), Path::new("/home/ada/.mindgate"));
    }

    #[test]
    fn without_a_user_home_the_home_is_relative() {
        assert_eq!(Home::resolve(None, None).root(), Path::new(".mindgate"));
        assert_eq!(
            Home::resolve(None, Some(PathBuf::new())).root(),
            Path::new(".mindgate")
        );
    }

    #[test]
    fn files_sit_in_their_places() {
        let home = Home::at("/h");
        assert_eq!(home.run_db(), Path::new("/h/mindgate.db"));
        assert_eq!(home.memory_db(), Path::new("/h/memory.db"));
        assert_eq!(home.models_dir(), Path::new("/h/models"));
        assert_eq!(home.run_dir(), Path::new("/h/run"));
        assert_eq!(home.prices_file(), Path::new("/h/prices.toml"));
        assert_eq!(home.token_file(4747), Path::new("/h/run/serve-4747.json"));
        assert_eq!(
            home.agent_token_file(4747),
            Path::new("/h/run/agent-4747.json")
        );
    }
}
