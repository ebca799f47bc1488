//! Bounded file access for the session readers: only regular files are opened, never more
//! than a size cap is read, and opening never blocks.
//!
//! A session path can come from a folder listing (a `session.jsonl` that is really a FIFO, or
//! a symlink to `/dev/zero`) or from a caller. Reading such a path with `fs::read` would hang
//! on the FIFO or grow without end on the device, so every reader goes through
//! [`read_regular`]: the file is opened without blocking (`O_NONBLOCK` on Unix, which a FIFO
//! needs to open without a writer), checked to be a regular file *on the open handle* (so a
//! swap between the check and the open does not help), and read up to a cap.
//!
//! ```
//! use mindgate_taskgraph::bounded::{read_regular, MAX_SESSION_BYTES};
//! use mindgate_taskgraph::Error;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let file = dir.path().join("s.jsonl");
//! std::fs::write(&file, b"{}\n").unwrap();
//! assert_eq!(read_regular(&file, MAX_SESSION_BYTES).unwrap(), b"{}\n");
//! assert!(matches!(read_regular(&file, 2), Err(Error::TooLarge { .. })));
//! assert!(matches!(read_regular(dir.path(), 10), Err(Error::NotAFile { .. })));
//! ```

use std::fs::{self, File};
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Largest session file read from disk, in bytes (256 MiB).
pub const MAX_SESSION_BYTES: u64 = 256 * 1024 * 1024;

/// Largest decompressed size of a zstd session file, in bytes (256 MiB); a small zstd bomb
/// stops here instead of expanding without end.
pub const MAX_DECODED_BYTES: usize = 256 * 1024 * 1024;

/// Opens `path` for reading if it is a regular file (symlinks are followed), without ever
/// blocking: FIFOs, sockets and devices are refused with [`Error::NotAFile`]. Returns the
/// file and its length.
pub fn open_regular(path: &Path) -> Result<(File, u64)> {
    // Cheap refusal before any open (opening some devices has side effects).
    let meta = fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let file = open_nonblocking(path).map_err(|e| Error::io(path, e))?;
    // The check that counts: on the handle, after the open.
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
        });
    }
    Ok((file, meta.len()))
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// Reads the regular file at `path` whole, refusing files over `limit` bytes with
/// [`Error::TooLarge`] (checked before reading, and again while reading in case the file
/// grows).
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path)?;
    if len > limit {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(bytes)
}

/// Reads at most `max` bytes from the start of the regular file at `path`.
pub fn read_head(path: &Path, max: u64) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(max)).unwrap_or(0));
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let fifo = dir.path().join("session.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
        // Without the check this read would wait for a writer forever.
        assert!(matches!(
            read_regular(&fifo, MAX_SESSION_BYTES),
            Err(Error::NotAFile { .. })
        ));
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), MAX_SESSION_BYTES),
            Err(Error::NotAFile { .. })
        ));
        let link = dir.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(read_head(&link, 16), Err(Error::NotAFile { .. })));
    }

    #[test]
    fn size_cap_holds() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let file = dir.path().join("big.jsonl");
        fs::write(&file, vec![b'x'; 1000]).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            read_regular(&file, 999),
            Err(Error::TooLarge { limit: 999, .. })
        ));
        assert_eq!(read_regular(&file, 1000).map(|b| b.len()).ok(), Some(1000));
        assert_eq!(read_head(&file, 10).map(|b| b.len()).ok(), Some(10));
        let missing = read_regular(&dir.path().join("nope"), 10);
        assert!(matches!(missing, Err(Error::Io { .. })));
    }
}
