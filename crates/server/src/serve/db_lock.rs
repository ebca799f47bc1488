//! One server per database: an advisory lock on `<db>.lock`, held from before the
//! database is opened until the store is flushed and closed.
//!
//! The lock is `std::fs::File::try_lock` (`flock` on Unix, `LockFileEx` on
//! Windows), so it disappears with the process however it ends — a `kill -9`
//! leaves no stale lock. The file itself stays (removing it would let a waiting
//! process lock a file nobody else can see); it holds `{pid, port}` of the
//! current holder so a refused start can say who has the database.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use mindgate_home::private_fs;

pub use crate::error::LockHolder;
use crate::error::ServerError;

/// A held database lock; released when dropped.
#[derive(Debug)]
pub struct DbLock {
    // Held for its lock; closing the file releases it.
    _file: File,
    path: PathBuf,
}

impl DbLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `<db>.lock`, beside the database.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    db.with_file_name(name)
}

/// Takes the lock of `db` for `holder`, or says who has it.
pub fn acquire(db: &Path, holder: LockHolder) -> Result<DbLock, ServerError> {
    let path = lock_path(db);
    let io = |source| ServerError::Lock {
        path: path.clone(),
        source,
    };
    private_fs::create_private_parent(&path).map_err(io)?;
    let mut file = private_fs::private_file_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            let holder = file
                .read_to_string(&mut text)
                .ok()
                .and_then(|_| serde_json::from_str::<LockHolder>(&text).ok());
            return Err(ServerError::DatabaseInUse {
                db: db.to_path_buf(),
                holder,
            });
        }
        Err(TryLockError::Error(source)) => return Err(io(source)),
    }
    let text = serde_json::to_string(&holder).unwrap_or_default();
    file.set_len(0).map_err(io)?;
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)?;
    file.flush().map_err(io)?;
    Ok(DbLock { _file: file, path })
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("m.db");
        assert_eq!(lock_path(&db), dir.path().join("m.db.lock"));
        let first = acquire(&db, LockHolder { pid: 7, port: 4747 }).expect("first");
        match acquire(&db, LockHolder { pid: 8, port: 4748 }) {
            Err(ServerError::DatabaseInUse { holder, .. }) => {
                assert_eq!(holder, Some(LockHolder { pid: 7, port: 4747 }));
            }
            other => panic!("expected DatabaseInUse, got {other:?}"),
        }
        drop(first);
        let again = acquire(&db, LockHolder { pid: 8, port: 4748 }).expect("after release");
        assert_eq!(again.path(), dir.path().join("m.db.lock"));
    }
}
