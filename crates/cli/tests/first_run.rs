//! `mindgate serve`'s first output says what to do next: open the viewer URL (with its
//! token), run the demo against this server, connect an app (graphmind-ai, an OpenTelemetry
//! exporter, the README's "Connect your agent"), in plain text when stdout is not a terminal;
//! the demo command it prints runs against this server as printed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mindgate_testkit::{ServeProcess, readme, wait};

/// The banner's lines, from the viewer URL to the README pointer, as the binary wrote them.
fn banner(server: &ServeProcess) -> Vec<String> {
    wait::until("serve's next steps", Duration::from_secs(10), || {
        let output = server.output();
        let lines: Vec<String> = output
            .lines()
            .skip_while(|l| !l.starts_with("Mindgate viewer: "))
            .map(str::to_owned)
            .collect();
        let end = lines.iter().position(|l| l.contains("more: README.md"))?;
        Some(lines[..=end].to_vec())
    })
}

#[test]
fn serve_says_what_to_do_next_without_colour_codes() {
    let server = ServeProcess::start(Path::new(env!("CARGO_BIN_EXE_mindgate")), &[]);
    let lines = banner(&server);
    let text = lines.join("\n");
    let ingest = format!("ws://127.0.0.1:{}/ingest", server.port());
    assert_eq!(
        lines[0],
        format!(
            "Mindgate viewer: http://127.0.0.1:{}/#token={}",
            server.port(),
            server.token()
        )
    );
    assert!(text.contains("Next:"), "{text}");
    assert!(text.contains("1. Open the viewer URL above"), "{text}");
    // Not on the default port: the demo and the Python and TypeScript clients are told where to go.
    assert!(
        text.contains(&format!(
            "2. Watch a demo agent run:  mindgate demo --url {ingest}"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Python: pip install graphmind-ai==0.5.1 with GRAPHMIND_URL={ingest}"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "TypeScript: npm install --install-links <mindgate checkout>/sdks/typescript with GRAPHMIND_URL={ingest}"
        )),
        "{text}"
    );
    assert!(
        text.contains("OpenTelemetry: OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:"),
        "{text}"
    );
    assert!(
        text.contains("more: README.md, section \"Connect your agent\""),
        "{text}"
    );
    assert!(
        readme::text().contains("\n## Connect your agent\n"),
        "the section the banner names is gone from README.md"
    );
    assert!(!text.contains('\u{1b}'), "colour codes in a pipe: {text:?}");
    assert!(lines.len() <= 12, "the banner grew long: {text}");
}

#[test]
fn the_printed_demo_command_runs_against_this_server() {
    let bin = Path::new(env!("CARGO_BIN_EXE_mindgate"));
    let server = ServeProcess::start(bin, &[]);
    let lines = banner(&server);
    let demo = lines
        .iter()
        .find_map(|l| l.split_once("Watch a demo agent run:"))
        .map(|(_, command)| command.trim().to_owned())
        .unwrap();
    let mut words = demo.split_whitespace();
    assert_eq!(words.next(), Some("mindgate"), "{demo}");
    let mut child = Command::new(bin)
        .args(words)
        .env_remove("MINDGATE_URL")
        .env_remove("GRAPHMIND_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Nobody watches: its error gate is released after the unwatched grace, so it ends.
    let status = wait::until("the demo to finish", Duration::from_secs(60), || {
        child.try_wait().unwrap()
    });
    assert!(status.success(), "{demo} failed");
    let (code, runs) = server.request("GET", "/api/runs", None, true).unwrap();
    assert_eq!(code, 200, "{runs}");
    let names: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["plan-trip"], "{runs}");
}
