//! Private files: what Mindgate writes under its home (databases, lock and token files) is
//! its user's alone — folders it creates are mode 0700, files mode 0600 (on Unix; elsewhere
//! the platform's defaults). The one place this rule is written.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// Creates the parent folder of `path` (and its missing ancestors) when it does not exist,
/// the folder itself mode 0700. An existing folder is left as it is; a bare file name
/// (the current folder) needs nothing.
pub fn create_private_parent(path: &Path) -> io::Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.exists() => {
            std::fs::create_dir_all(dir)?;
            set_mode(dir, 0o700)
        }
        _ => Ok(()),
    }
}

/// [`OpenOptions`] whose newly created files are mode 0600 (before the umask); the caller
/// adds read / write / create flags.
pub fn private_file_options() -> OpenOptions {
    #[allow(unused_mut)]
    let mut opts = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts
}

/// Creates `path` as an empty private file when it does not exist; an existing one is not
/// opened (a read-only file stays unopened and unchanged).
pub fn create_private_file(path: &Path) -> io::Result<()> {
    match private_file_options()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Sets the mode of `path` to exactly 0600 (the umask may have narrowed a new file's mode;
/// an old file may be wider).
pub fn set_private(path: &Path) -> io::Result<()> {
    set_mode(path, 0o600)
}

/// Sets the mode of `dir` to exactly 0700.
pub fn set_private_dir(dir: &Path) -> io::Result<()> {
    set_mode(dir, 0o700)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o777)
    }

    #[test]
    fn new_folders_and_files_are_private_and_old_ones_are_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a/b/db.sqlite");
        create_private_parent(&file).unwrap();
        create_private_file(&file).unwrap();
        set_private(&file).unwrap();
        assert_eq!(mode(&tmp.path().join("a/b")), 0o700);
        assert_eq!(mode(&file), 0o600);

        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let old = open.join("old");
        std::fs::write(&old, b"kept").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        create_private_parent(&old).unwrap();
        create_private_file(&old).unwrap();
        assert_eq!(mode(&open), 0o755);
        assert_eq!(mode(&old), 0o644);
        assert_eq!(std::fs::read(&old).ok().as_deref(), Some(&b"kept"[..]));
        create_private_parent(Path::new("bare-name")).unwrap();
    }
}
