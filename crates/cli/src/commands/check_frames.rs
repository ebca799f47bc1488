//! `mindgate check-frames`: verdicts for captured frames, for adapter authors.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mindgate_protocol::{ParseResult, parse_envelope};

/// Reads frames from `input` (`-` = stdin), prints a verdict per line and a summary.
pub fn run(input: &Path) -> anyhow::Result<ExitCode> {
    let reader: Box<dyn BufRead> = if input.as_os_str() == "-" {
        Box::new(BufReader::new(io::stdin().lock()))
    } else {
        let file = File::open(input).with_context(|| format!("cannot open {}", input.display()))?;
        Box::new(BufReader::new(file))
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut counts = Counts::default();
    for (index, line) in reader.split(b'\n').enumerate() {
        let line = line.with_context(|| format!("cannot read {}", input.display()))?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let verdict = match std::str::from_utf8(line) {
            Ok(text) => parse_envelope(text),
            Err(e) => ParseResult::Invalid {
                reason: format!("not UTF-8: {e}"),
                issues: Vec::new(),
            },
        };
        counts.add(&verdict);
        let mut text = verdict.verdict();
        if let ParseResult::Invalid { issues, .. } = &verdict {
            for issue in issues {
                text.push_str(&format!(" [{}: {}]", issue.path, issue.message));
            }
        }
        writeln!(out, "{}: {}", index + 1, text)?;
    }
    writeln!(
        out,
        "{} frames: {} ok, {} unknown-type, {} version-mismatch, {} invalid",
        counts.total(),
        counts.ok,
        counts.unknown,
        counts.mismatch,
        counts.invalid
    )?;
    Ok(if counts.invalid + counts.mismatch > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Default)]
struct Counts {
    ok: usize,
    unknown: usize,
    mismatch: usize,
    invalid: usize,
}

impl Counts {
    fn add(&mut self, r: &ParseResult) {
        match r {
            ParseResult::Ok(_) => self.ok += 1,
            ParseResult::UnknownType(_) => self.unknown += 1,
            ParseResult::VersionMismatch { .. } => self.mismatch += 1,
            ParseResult::Invalid { .. } => self.invalid += 1,
        }
    }

    fn total(&self) -> usize {
        self.ok + self.unknown + self.mismatch + self.invalid
    }
}
