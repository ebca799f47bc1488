//! Builds a Mindgate run database from captured frames (one JSON text frame per
//! line, as `scripts/record_python_frames.py` records from the real
//! graphmind-ai client), through the store's own write path.
//!
//! ```sh
//! cargo run -p mindgate-mcp --example mcp_fixture -- OUT.db FRAMES.jsonl [MORE.jsonl …]
//! ```
//!
//! The Python MCP tests use it to get a database filled by a real run.

use std::process::ExitCode;

use mindgate_protocol::parse_envelope;
use mindgate_store::{NewEvent, Writer, WriterConfig};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((db, inputs)) = args.split_first().filter(|(_, rest)| !rest.is_empty()) else {
        eprintln!("usage: mcp_fixture OUT.db FRAMES.jsonl [MORE.jsonl …]");
        return ExitCode::from(2);
    };
    let writer = match Writer::open(std::path::Path::new(db), WriterConfig::default(), None) {
        Ok((w, _)) => w,
        Err(e) => {
            eprintln!("cannot open {db}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stored = 0usize;
    for input in inputs {
        let text = match std::fs::read_to_string(input) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cannot read {input}: {e}");
                return ExitCode::FAILURE;
            }
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if let Some(event) = NewEvent::from_frame(line, &parse_envelope(line)) {
                if let Err(e) = writer.append(event) {
                    eprintln!("cannot store a frame of {input}: {e}");
                    return ExitCode::FAILURE;
                }
                stored += 1;
            }
        }
    }
    if let Err(e) = writer.flush().and_then(|()| writer.close()) {
        eprintln!("cannot finish {db}: {e}");
        return ExitCode::FAILURE;
    }
    println!("{stored} events stored in {db}");
    ExitCode::SUCCESS
}
