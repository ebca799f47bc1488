//! [`FixtureHome`]: a Mindgate home in a temporary directory.

use std::path::Path;

use mindgate_home::Home;

/// A temporary Mindgate home (`MINDGATE_HOME` for a spawned binary, `home` for an in-process
/// server); the directory is removed when the value is dropped.
#[derive(Debug)]
pub struct FixtureHome {
    dir: tempfile::TempDir,
    home: Home,
}

impl FixtureHome {
    /// A new, empty home.
    ///
    /// # Panics
    /// When no temporary directory can be created (a broken test machine).
    pub fn new() -> FixtureHome {
        let dir = tempfile::Builder::new()
            .prefix("mindgate-test-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temporary home: {e}"));
        let home = Home::at(dir.path());
        FixtureHome { dir, home }
    }

    /// The home directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The home, for its file paths (`run_db()`, `token_file(port)`, …).
    pub fn home(&self) -> &Home {
        &self.home
    }
}

impl Default for FixtureHome {
    fn default() -> Self {
        FixtureHome::new()
    }
}
