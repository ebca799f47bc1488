//! The database file on disk: created private (directory 0700, file 0600), an existing one
//! checked (refused when its owner cannot write it, warned about when others can read it).
//! Used by the run database and the session search index.

use std::path::Path;

use mindgate_home::private_fs;

use crate::error::{Result, StoreError};

/// Creates the parent directory (mode 0700) and the file (mode 0600) if needed.
///
/// An existing file keeps its mode: one the user made read-only is refused
/// with [`StoreError::ReadOnly`] (nothing is written to it), and one other
/// users can read is only warned about.
pub(crate) fn prepare_path(path: &Path) -> Result<()> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    private_fs::create_private_parent(path).map_err(io)?;
    match std::fs::metadata(path) {
        Ok(meta) => check_existing_file(path, &meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            private_fs::create_private_file(path).map_err(io)?;
            // The umask may have narrowed the mode further; make it exactly 0600.
            private_fs::set_private(path).map_err(io)
        }
        Err(e) => Err(io(e)),
    }
}

/// Refuses a database file its owner cannot write; warns when others can read it.
#[cfg(unix)]
fn check_existing_file(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o200 == 0 {
        return Err(StoreError::ReadOnly {
            path: path.to_path_buf(),
            mode,
        });
    }
    if mode & 0o077 != 0 {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            "the database file is accessible to other users; `chmod 600` it to keep your runs private"
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_existing_file(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    if meta.permissions().readonly() {
        return Err(StoreError::ReadOnly {
            path: path.to_path_buf(),
            mode: 0o444,
        });
    }
    Ok(())
}
