//! `mindgate export --html`: one run as one self-contained HTML file.
//!
//! The page is the embedded viewer (`ui/dist`): `index.html` with `app.css` inlined, every
//! ES module of `js/` as a `data:` URL in an `<script type="importmap">` (their relative
//! imports rewritten to the bare names `mindgate/<file>.js` the map resolves), and the run
//! as JSON in `<script type="application/json" id="mindgate-export">` — its summary, its
//! projection snapshot (the `GET /api/runs/:id/graph` nodes), every node's detail and the
//! run report: the shapes the HTTP API serves. `js/embedded.js` answers the page's reads
//! from it, so no server is needed, and a Content-Security-Policy of `connect-src 'none'`
//! keeps the page from making any request.
//!
//! The data is an allow-list ([`page_data`]): only the fields the page reads are written,
//! each built from the store's shapes. [`Redaction`] leaves inputs, outputs, tool arguments
//! or tool results out of the file altogether (not merely hidden in the page), tool calls
//! and results inside a model's messages included ([`tool_calls`]).

mod page_data;
mod tool_calls;

use std::collections::BTreeMap;

use mindgate_store::{RunStore, StoreError};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::Serialize;
use serde_json::Value;

use crate::assets::asset;

/// What the exported file leaves out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Redaction {
    /// Every node's input.
    pub inputs: bool,
    /// Every node's output and streamed text.
    pub outputs: bool,
    /// Tool nodes' input and streamed arguments; the arguments of the tool calls in any
    /// node's input and output, and every node's streamed tool-call arguments.
    pub tool_args: bool,
    /// Tool nodes' output and streamed text; tool results inside any node's input and
    /// output (`role: "tool"` messages, `tool_result` blocks).
    pub tool_results: bool,
}

/// Why the page could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HtmlExportError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A viewer file is missing from this build.
    #[error("the viewer file {0} is not built into this binary")]
    MissingAsset(String),
}

/// The embedded data (read by `ui/dist/js/embedded.js`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Export {
    format: &'static str,
    version: u32,
    mindgate: &'static str,
    redaction: Redaction,
    run: page_data::PageRun,
    snapshot: Snapshot,
    nodes: BTreeMap<String, page_data::PageNodeDetail>,
    report: Option<page_data::PageReport>,
    /// The run's live annotations (a check's rule messages left out when anything is
    /// hidden: they may quote an output).
    annotations: Vec<mindgate_store::Annotation>,
}

/// The run's annotations for the page.
fn page_annotations(
    store: &RunStore,
    run_id: &str,
    hide: Redaction,
) -> Result<Vec<mindgate_store::Annotation>, StoreError> {
    let mut annotations = store.list_annotations(&mindgate_store::AnnotationFilter {
        run_id: Some(run_id.to_owned()),
        ..Default::default()
    })?;
    if hide != Redaction::default() {
        for a in &mut annotations {
            let rules = a.check.as_mut().and_then(|c| c.get_mut("rules"));
            if let Some(serde_json::Value::Array(rules)) = rules {
                for rule in rules
                    .iter_mut()
                    .filter_map(serde_json::Value::as_object_mut)
                {
                    rule.remove("message");
                }
            }
        }
    }
    Ok(annotations)
}

#[derive(Serialize)]
struct Snapshot {
    seq: Option<u64>,
    nodes: Vec<page_data::PageNode>,
    edges: Vec<mindgate_store::projection::GraphEdge>,
    /// The run's held time and work time, as the live graph snapshot carries them.
    times: mindgate_store::RunTimes,
}

/// Characters escaped in a `data:` URL of a module (kept inside a JSON string of a
/// `<script>`): controls (newlines would be stripped by the URL parser), space, `%`, `#`
/// and what could end the script or the string.
const DATA_URL: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'%')
    .add(b'#')
    .add(b'"')
    .add(b'\'')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'`');

/// JSON text safe inside a `<script>` element (`<` escaped, so no `</script>` can appear).
fn script_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".to_owned())
        .replace('<', "\\u003c")
}

/// [`script_json`] written straight into `out` (`null` if the value cannot be serialised).
fn push_script_json<T: Serialize>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    if serde_json::to_writer(ScriptSafe(&mut *out), value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

/// Appends JSON text with every `<` escaped as `\u003c` (so no `</script>` can appear).
struct ScriptSafe<'a>(&'a mut Vec<u8>);

impl std::io::Write for ScriptSafe<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|&b| b == b'<') {
            self.0.extend_from_slice(&rest[..at]);
            self.0.extend_from_slice(b"\\u003c");
            rest = &rest[at + 1..];
        }
        self.0.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The viewer's modules as an import map: `mindgate/<file>.js` → a `data:` URL of the file
/// with its relative imports (`'./x.js'`) rewritten to the same bare names.
fn import_map() -> Result<String, HtmlExportError> {
    let modules: Vec<String> = crate::assets::asset_paths()
        .into_iter()
        .filter(|p| p.starts_with("js/") && p.ends_with(".js") && !p[3..].contains('/'))
        .collect();
    let names: Vec<&str> = modules.iter().map(|p| &p[3..]).collect();
    let mut imports = serde_json::Map::new();
    for path in &modules {
        let bytes = asset(path).ok_or_else(|| HtmlExportError::MissingAsset(path.clone()))?;
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        for name in &names {
            for quote in ['\'', '"'] {
                text = text.replace(
                    &format!("{quote}./{name}{quote}"),
                    &format!("{quote}mindgate/{name}{quote}"),
                );
            }
        }
        let url = format!(
            "data:text/javascript;charset=utf-8,{}",
            utf8_percent_encode(&text, DATA_URL)
        );
        imports.insert(format!("mindgate/{}", &path[3..]), Value::String(url));
    }
    Ok(script_json(&serde_json::json!({ "imports": imports })))
}

/// The page's `<head>` additions: the policy, the style, the import map, the data, the entry.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline' data:; style-src 'unsafe-inline'; \
     img-src data:; font-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'";

/// The whole exported page of run `run_id` (`None` when the run does not exist).
pub fn export_html(
    store: &RunStore,
    run_id: &str,
    hide: Redaction,
) -> Result<Option<String>, HtmlExportError> {
    let Some(run) = store.get_run_with_cost(run_id)? else {
        return Ok(None);
    };
    // One pass over the run's events, streamed (none held): the graph, the node details
    // and the report all come from its projection.
    let Some(projection) = store.projection(run_id)? else {
        return Ok(None);
    };
    let (graph, details) = projection.into_details();
    let mut nodes = BTreeMap::new();
    // The page's shapes take the store's apart: nothing big is copied.
    for detail in details {
        let detail = page_data::PageNodeDetail::new(detail, hide);
        nodes.insert(detail.node_id().to_owned(), detail);
    }
    let report = Some(page_data::PageReport::new(mindgate_store::run_report(
        &run,
        &graph,
        store.run_finish_error(&run)?,
        store.prices(),
    )));
    let times = graph.times;
    let graph_nodes = graph
        .nodes
        .into_iter()
        .map(|node| page_data::PageNode::new(node, hide))
        .collect();
    let export = Export {
        format: "mindgate.html-export",
        version: 1,
        mindgate: env!("CARGO_PKG_VERSION"),
        redaction: hide,
        run: page_data::PageRun::new(&run),
        snapshot: Snapshot {
            seq: run.last_seq,
            nodes: graph_nodes,
            edges: graph.edges,
            times,
        },
        nodes,
        report,
        annotations: page_annotations(store, run_id, hide)?,
    };
    let index = asset("index.html")
        .ok_or_else(|| HtmlExportError::MissingAsset("index.html".to_owned()))?;
    let css =
        asset("app.css").ok_or_else(|| HtmlExportError::MissingAsset("app.css".to_owned()))?;
    let css = String::from_utf8_lossy(&css).replace("</style", "<\\/style");
    let import_map = import_map()?;
    // The page is written in one buffer, the data serialised straight into it: a big
    // run's data (tens of MB) is never copied.
    let write_head = |page: &mut Vec<u8>| {
        page.extend_from_slice(
            format!(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
                 <style>\n{css}\n</style>\n\
                 <script type=\"importmap\">{import_map}</script>\n\
                 <script type=\"application/json\" id=\"mindgate-export\">"
            )
            .as_bytes(),
        );
        push_script_json(page, &export);
        page.extend_from_slice(
            b"</script>\n<script type=\"module\">import 'mindgate/main.js';</script>\n",
        );
    };
    let mut page: Vec<u8> = Vec::with_capacity(index.len() + 1024);
    let mut head_written = false;
    for line in String::from_utf8_lossy(&index).lines() {
        let trimmed = line.trim_start();
        // The served page's files and the pages an export does not carry.
        if trimmed.starts_with("<link rel=\"stylesheet\"")
            || trimmed.starts_with("<script type=\"module\" src=")
            || trimmed.contains("id=\"nav-")
        {
            if !head_written {
                write_head(&mut page);
                head_written = true;
            }
            continue;
        }
        // What only a live viewer has (the held-gates panel, the keys that act on gates,
        // breakpoints and memory): a read-only page leaves it out.
        if trimmed.contains(" data-live-only") {
            continue;
        }
        if trimmed.starts_with("<title>") {
            page.extend_from_slice(
                format!(
                    "<title>{} — Mindgate run export</title>\n",
                    html_escape(if run.name.is_empty() {
                        &run.id
                    } else {
                        &run.name
                    })
                )
                .as_bytes(),
            );
            continue;
        }
        page.extend_from_slice(line.as_bytes());
        page.push(b'\n');
    }
    if !head_written {
        return Err(HtmlExportError::MissingAsset(
            "index.html's stylesheet and module lines".to_owned(),
        ));
    }
    // Only UTF-8 was written (str pieces and serde_json's output).
    let page = String::from_utf8(page)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok(Some(page))
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use mindgate_protocol::parse_envelope;
    use mindgate_store::{NewEvent, Writer, WriterConfig};
    use serde_json::json;

    fn store() -> (tempfile::TempDir, RunStore) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        let (writer, _) = Writer::open(&path, WriterConfig::default(), None).unwrap();
        let frames = [
            (
                "run.started",
                json!({"app": "a", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "</script><b>x"}}),
            ),
            (
                "node.started",
                json!({"nodeId": "tool:t", "kind": "tool", "name": "t", "instanceId": "t1", "input": {"arg": "TOOL-ARG-1"}}),
            ),
            (
                "node.token",
                json!({"nodeId": "tool:t", "instanceId": "t1", "deltas": [{"t": "tool-args", "v": "STREAMED-ARG-2"}]}),
            ),
            (
                "node.finished",
                json!({"nodeId": "tool:t", "instanceId": "t1", "durationMs": 1, "status": "ok", "output": "TOOL-RESULT-3"}),
            ),
            (
                "node.started",
                json!({"nodeId": "llm:m", "kind": "llm", "name": "m", "instanceId": "m1", "input": {"prompt": "LLM-INPUT-4"}}),
            ),
            (
                "node.token",
                json!({"nodeId": "llm:m", "instanceId": "m1", "deltas": [{"t": "text", "v": "LLM-TEXT-5"}]}),
            ),
            (
                "node.finished",
                json!({"nodeId": "llm:m", "instanceId": "m1", "durationMs": 1, "status": "ok", "output": "LLM-OUTPUT-6"}),
            ),
            ("run.finished", json!({"status": "ok"})),
        ];
        for (seq, (ty, payload)) in frames.into_iter().enumerate() {
            let f = json!({"gm": 1, "seq": seq, "ts": 1_000 + seq as i64, "runId": "r", "type": ty, "payload": payload}).to_string();
            writer
                .append(NewEvent::from_frame(&f, &parse_envelope(&f)).unwrap())
                .unwrap();
        }
        writer.close().unwrap();
        let store = RunStore::open(&path).unwrap();
        (dir, store)
    }

    const ALL: [&str; 6] = [
        "TOOL-ARG-1",
        "STREAMED-ARG-2",
        "TOOL-RESULT-3",
        "LLM-INPUT-4",
        "LLM-TEXT-5",
        "LLM-OUTPUT-6",
    ];

    fn present(page: &str) -> Vec<&'static str> {
        ALL.into_iter().filter(|s| page.contains(s)).collect()
    }

    #[test]
    fn each_switch_leaves_its_values_out_of_the_file() {
        let (_dir, store) = store();
        let page = |hide| export_html(&store, "r", hide).unwrap().unwrap();
        assert_eq!(present(&page(Redaction::default())), ALL);
        let cases = [
            (
                Redaction {
                    inputs: true,
                    ..Default::default()
                },
                vec!["TOOL-RESULT-3", "LLM-TEXT-5", "LLM-OUTPUT-6"],
            ),
            (
                Redaction {
                    outputs: true,
                    ..Default::default()
                },
                vec!["TOOL-ARG-1", "STREAMED-ARG-2", "LLM-INPUT-4"],
            ),
            (
                Redaction {
                    tool_args: true,
                    ..Default::default()
                },
                vec!["TOOL-RESULT-3", "LLM-INPUT-4", "LLM-TEXT-5", "LLM-OUTPUT-6"],
            ),
            (
                Redaction {
                    tool_results: true,
                    ..Default::default()
                },
                vec![
                    "TOOL-ARG-1",
                    "STREAMED-ARG-2",
                    "LLM-INPUT-4",
                    "LLM-TEXT-5",
                    "LLM-OUTPUT-6",
                ],
            ),
        ];
        for (hide, left) in cases {
            assert_eq!(present(&page(hide)), left, "{hide:?}");
        }
    }

    #[test]
    fn the_page_is_self_contained_and_its_data_cannot_close_a_script() {
        let (_dir, store) = store();
        let page = export_html(&store, "r", Redaction::default())
            .unwrap()
            .unwrap();
        assert!(
            !page.contains("src=\"js/") && !page.contains("href=\"app.css\""),
            "no file reference"
        );
        assert!(page.contains("connect-src 'none'"));
        assert!(page.contains("\"mindgate/main.js\":\"data:text/javascript"));
        // The run name holds `</script>`: escaped in the data, HTML-escaped in the title.
        assert_eq!(
            page.matches("</script>").count(),
            3,
            "importmap, data and entry only"
        );
        assert!(page.contains("<title>&lt;/script&gt;&lt;b&gt;x — Mindgate run export</title>"));
        assert!(
            export_html(&store, "nope", Redaction::default())
                .unwrap()
                .is_none()
        );
    }
}
