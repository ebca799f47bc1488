//! What `mindgate serve` prints once it listens: where things are, then what to do next
//! (open the viewer, run the demo, connect an app). Plain text, no colour codes, so it reads
//! the same in a terminal, a log file and a pipe.

use std::fmt::Write as _;

/// The ingest URL apps dial when they are given none (graphmind-ai, the SDKs, `mindgate demo`).
const DEFAULT_INGEST_URL: &str = "ws://127.0.0.1:4747/ingest";

/// Where the running server can be reached, as the banner names it.
pub(super) struct Endpoints<'a> {
    /// The viewer URL, control token included.
    pub viewer: &'a str,
    /// The URL apps connect to (the token in it when the server needs one from apps).
    pub ingest: &'a str,
    /// The OTLP/HTTP endpoint an OpenTelemetry exporter is given (`http://host:port`).
    pub otlp: &'a str,
    /// The OTLP/HTTP trace URL on the OTLP port, else on the main port.
    pub otlp_traces: &'a str,
    /// The run database, as the store names it.
    pub database: &'a str,
}

/// The startup text: the addresses, then three numbered next steps.
pub(super) fn startup(at: &Endpoints<'_>) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "Mindgate viewer: {}", at.viewer);
    let _ = writeln!(text, "Apps connect to:  {}", at.ingest);
    let _ = writeln!(text, "OpenTelemetry:    {}", at.otlp_traces);
    let _ = writeln!(text, "Database:         {}", at.database);
    let default_ingest = at.ingest == DEFAULT_INGEST_URL;
    // Both SDKs read GRAPHMIND_URL (the TypeScript one MINDGATE_URL first).
    let (demo, app_url) = if default_ingest {
        ("mindgate demo".to_owned(), String::new())
    } else {
        (
            format!("mindgate demo --url {}", at.ingest),
            format!(" with GRAPHMIND_URL={}", at.ingest),
        )
    };
    let _ = writeln!(text);
    let _ = writeln!(text, "Next:");
    let _ = writeln!(
        text,
        "  1. Open the viewer URL above (its token enables pause, step and resume)."
    );
    let _ = writeln!(text, "  2. Watch a demo agent run:  {demo}");
    let _ = writeln!(
        text,
        "  3. Connect your agent:      Python: pip install graphmind-ai==0.5.1{app_url}"
    );
    let _ = writeln!(
        text,
        "                              TypeScript: npm install --install-links <mindgate checkout>/sdks/typescript{app_url}"
    );
    let _ = writeln!(
        text,
        "                              OpenTelemetry: OTEL_EXPORTER_OTLP_ENDPOINT={}",
        at.otlp
    );
    let _ = writeln!(
        text,
        "                              more: README.md, section \"Connect your agent\""
    );
    text
}

#[cfg(test)]
mod tests {
    use super::{Endpoints, startup};

    fn endpoints<'a>(ingest: &'a str, otlp: &'a str) -> Endpoints<'a> {
        Endpoints {
            viewer: "http://127.0.0.1:4747/#token=t0k",
            ingest,
            otlp,
            otlp_traces: "http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_ENDPOINT; /v1/traces)",
            database: "/home/ada/.mindgate/mindgate.db",
        }
    }

    #[test]
    fn on_the_default_address_the_next_steps_need_no_url() {
        let text = startup(&endpoints(
            "ws://127.0.0.1:4747/ingest",
            "http://127.0.0.1:4318",
        ));
        assert!(text.starts_with("Mindgate viewer: http://127.0.0.1:4747/#token=t0k\n"));
        assert!(
            text.contains("Watch a demo agent run:  mindgate demo\n"),
            "{text}"
        );
        assert!(text.contains("pip install graphmind-ai==0.5.1\n"), "{text}");
        assert!(
            text.contains(
                "TypeScript: npm install --install-links <mindgate checkout>/sdks/typescript\n"
            ),
            "{text}"
        );
        assert!(text.contains("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318\n"));
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn elsewhere_the_next_steps_name_the_ingest_url() {
        let ingest = "ws://127.0.0.1:5000/ingest";
        let text = startup(&endpoints(ingest, "http://127.0.0.1:5000"));
        assert!(
            text.contains(&format!("mindgate demo --url {ingest}\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "graphmind-ai==0.5.1 with GRAPHMIND_URL={ingest}\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("/sdks/typescript with GRAPHMIND_URL={ingest}\n")),
            "{text}"
        );
    }
}
