//! Session readers never hang on special files and never read past their caps
//! (issue #10: `/dev/zero`, FIFOs, zstd bombs).

use std::fs;
use std::path::Path;
use std::time::Duration;

use mindgate_taskgraph::bounded::MAX_DECODED_BYTES;
use mindgate_taskgraph::parse::dsh::{DecodedTooLarge, decode_zstd_frames_limited};
use mindgate_taskgraph::{Catalog, DiscoveryConfig, Error, read_session};

/// A zstd frame of RLE blocks decoding to `blocks` × 128 KiB of `b'x'`: a few bytes per
/// 128 KiB, hand-made so the test needs no compressor.
fn rle_bomb(blocks: usize) -> Vec<u8> {
    const BLOCK: u32 = 128 * 1024;
    // Magic, frame header descriptor (no content size, no checksum, not single-segment),
    // window descriptor for a 128 KiB window (exponent 7).
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38];
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = (BLOCK << 3) | (1 << 1) | last; // block type 1 = RLE
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(b'x');
    }
    out
}

fn dsh_root() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let root = dir.path().join("sessions").join("ws");
    fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
    (dir, root)
}

fn session_dir(root: &Path, name: &str) -> std::path::PathBuf {
    let d = root.join(name);
    fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
    d
}

const GOOD: &[u8] = br#"{"type":"session","version":1,"id":"good-1","createdAt":1000,"cwd":"/w","delegationDepth":0}
{"type":"user/message","seq":1,"time":1000,"data":{"text":"hi"}}
"#;

#[test]
fn the_rle_bomb_really_expands() {
    let mut w = Vec::new();
    let out = decode_zstd_frames_limited(&rle_bomb(3), "bomb", &mut w, usize::MAX);
    assert_eq!(out.map(|b| b.len()), Ok(3 * 128 * 1024));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn zstd_decoding_stops_at_the_limit() {
    let mut w = Vec::new();
    let bomb = rle_bomb(64); // 8 MiB from 262 bytes
    assert_eq!(
        decode_zstd_frames_limited(&bomb, "bomb", &mut w, 1024 * 1024),
        Err(DecodedTooLarge)
    );
    assert_eq!(
        decode_zstd_frames_limited(&bomb, "bomb", &mut w, 8 * 1024 * 1024).map(|b| b.len()),
        Ok(8 * 1024 * 1024)
    );
}

#[test]
fn a_zstd_bomb_session_is_refused_not_expanded() {
    let (_dir, root) = dsh_root();
    let s = session_dir(&root, "bomb");
    let blocks = MAX_DECODED_BYTES / (128 * 1024) + 8;
    let bomb = rle_bomb(blocks);
    assert!(bomb.len() < 64 * 1024, "{} bytes", bomb.len());
    fs::write(s.join("session.jsonl.zstd"), &bomb).unwrap_or_else(|e| panic!("{e}"));
    match read_session(&s) {
        Err(Error::TooLarge { limit, .. }) => assert_eq!(limit, MAX_DECODED_BYTES as u64),
        other => panic!("expected TooLarge, got {:?}", other.map(|s| s.events.len())),
    }
}

#[cfg(unix)]
#[test]
fn special_files_named_like_sessions_fail_fast_and_do_not_stop_discovery() {
    let (dir, root) = dsh_root();
    // A FIFO and a symlink to /dev/zero posing as session files, next to a good session.
    let fifo = session_dir(&root, "fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join("session.jsonl"))
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    let zero = session_dir(&root, "zero");
    std::os::unix::fs::symlink("/dev/zero", zero.join("session.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));
    fs::write(session_dir(&root, "good").join("session.jsonl"), GOOD)
        .unwrap_or_else(|e| panic!("{e}"));
    // Also as extra paths: a FIFO and a device link with pi/Claude-looking names.
    let extra = dir.path().join("extra");
    fs::create_dir_all(&extra).unwrap_or_else(|e| panic!("{e}"));
    let made = std::process::Command::new("mkfifo")
        .arg(extra.join("a.jsonl"))
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    std::os::unix::fs::symlink("/dev/zero", extra.join("rollout-zero.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));

    let mut config = DiscoveryConfig::empty();
    config.dsh_sessions = Some(dir.path().join("sessions"));
    config.extra_paths = vec![extra];
    // On a thread, so a reader that blocks (the FIFO waiting for a writer) fails the test
    // instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let fifo = read_session(&fifo).map(|_| ()).map_err(|e| e.to_string());
        let zero = read_session(&zero).map(|_| ()).map_err(|e| e.to_string());
        let mut catalog = Catalog::new(config);
        let ids: Vec<String> = catalog.refresh().iter().map(|t| t.id.clone()).collect();
        let _ = tx.send((fifo, zero, ids));
    });
    let (fifo, zero, ids) = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("reading special files blocked"));
    for r in [fifo, zero] {
        let e = r.err().unwrap_or_default();
        assert!(e.contains("is not a regular file"), "{e}");
    }
    assert_eq!(ids, ["good-1"]);
    drop(dir);
}
