//! The annotation tools: `annotate` (an agent's verdict, score, labels or comment on a
//! run or a node instance, recorded as an agent's) and `list_annotations`.

use std::fmt::Write as _;

use mindgate_store::{Annotation, AnnotationFilter, Author, AuthorKind, NewAnnotation, RunStore};
use serde_json::json;

use crate::error::ToolError;
use crate::output::{Links, ToolOutput};
use crate::output_limits::cut_str;
use crate::params::{AnnotateArgs, ListAnnotationsArgs};
use crate::runs::check_id;

/// One annotation on one line: target, verdict, score, labels, comment, who.
pub fn annotation_line(a: &Annotation) -> String {
    let mut s = format!("{} on run {}", a.id, cut_str(&a.run_id, 120));
    if let Some(node) = &a.node_id {
        let _ = write!(s, " node {}", cut_str(node, 120));
    }
    if let Some(v) = a.verdict {
        let _ = write!(s, ", thumbs {}", v.as_str());
    }
    if let Some(score) = a.score {
        let _ = write!(
            s,
            ", {} {score}",
            a.score_name.as_deref().unwrap_or("score")
        );
    }
    if !a.labels.is_empty() {
        let _ = write!(s, ", labels [{}]", a.labels.join(", "));
    }
    if let Some(c) = &a.comment {
        let _ = write!(s, ", \"{}\"", cut_str(c, 200));
    }
    if let Some(check) = &a.check {
        let passed = check.get("passed").and_then(serde_json::Value::as_bool);
        let _ = write!(
            s,
            ", check {}",
            if passed == Some(true) {
                "passed"
            } else {
                "failed"
            }
        );
    }
    let who = match a.author.kind {
        AuthorKind::Person => "a person",
        AuthorKind::Agent => "an agent",
    };
    let _ = write!(s, " — by {who}");
    s
}

/// `annotate`: stores an agent's annotation (marked as an agent's).
pub fn annotate(
    store: &RunStore,
    args: &AnnotateArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    check_id("runId", &args.run_id)?;
    let new = NewAnnotation {
        run_id: args.run_id.clone(),
        node_id: args.node_id.clone(),
        instance_id: args.instance_id.clone(),
        verdict: args.verdict.map(Into::into),
        score: args.score,
        score_name: args.score_name.clone(),
        labels: args.labels.clone().unwrap_or_default(),
        comment: args.comment.clone(),
        ..Default::default()
    };
    let mut author = Author::agent();
    author.name = Some("mcp".to_owned());
    // The tools read a SQLite file read-only; the write takes a connection of its own
    // (SQLite referees it against the server's writer).
    let made = match store.database() {
        mindgate_store::Database::Sqlite(path) => {
            RunStore::open(&path)?.create_annotation(new, author)?
        }
        mindgate_store::Database::Postgres(_) => store.create_annotation(new, author)?,
    };
    let text = format!(
        "Stored {}\n{}\n(marked as an agent's annotation; a person sees it in the viewer)",
        annotation_line(&made),
        links.run(&made.run_id)
    );
    Ok(ToolOutput::new(text, json!({ "annotation": made })))
}

/// `list_annotations`: annotations of a run, a node or a label, oldest first.
pub fn list_annotations(
    store: &RunStore,
    args: &ListAnnotationsArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    if args.run_id.is_none() && args.label.is_none() {
        return Err(ToolError::BadArgument {
            field: "runId",
            message: "give runId, label or both".to_owned(),
        });
    }
    let filter = AnnotationFilter {
        run_id: args.run_id.clone().filter(|s| !s.is_empty()),
        node_id: args.node_id.clone().filter(|s| !s.is_empty()),
        label: args.label.clone().filter(|s| !s.is_empty()),
        limit: Some(200),
        ..Default::default()
    };
    let found = store.list_annotations(&filter)?;
    let mut text = if found.is_empty() {
        "No annotations match.".to_owned()
    } else {
        format!("{} annotation(s), oldest first:\n", found.len())
    };
    for a in &found {
        let _ = writeln!(text, "- {}\n  {}", annotation_line(a), links.run(&a.run_id));
    }
    Ok(ToolOutput::new(text, json!({ "annotations": found })))
}
