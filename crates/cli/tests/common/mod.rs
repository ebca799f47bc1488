//! What the CLI's real-binary tests share: the binary, a run of it in a home, its output.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// This build's `mindgate` binary.
pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mindgate"))
}

/// `mindgate ARGS` with `home` as the Mindgate home (and no `MINDGATE_DB` from outside).
pub fn mindgate(args: &[&str], home: &Path) -> Output {
    Command::new(bin())
        .args(args)
        .env(mindgate_home::env::MINDGATE_HOME, home)
        .env_remove(mindgate_home::env::MINDGATE_DB)
        .output()
        .unwrap()
}

/// Standard output then standard error, as text.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The JSON a successful run printed.
pub fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "{}", text(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}
