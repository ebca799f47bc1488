//! `mindgate annotate <RUN>`: a person's verdict, score, labels or comment on a run or
//! one node instance, written by the rule of [`super::write_route`].

use std::process::ExitCode;

use mindgate_home::Home;
use mindgate_store::{Annotation, Author, AuthorKind, NewAnnotation, Verdict};
use serde_json::Value;

use super::write_route::WriteRoute;
use super::write_stdout;
use crate::args::AnnotateArgs;
use crate::db_arg::RunDb;

/// Runs `mindgate annotate`.
pub fn run(args: &AnnotateArgs) -> anyhow::Result<ExitCode> {
    let home = Home::from_env();
    let db = RunDb::or_default(args.db.as_ref(), || home.run_db());
    let new = NewAnnotation {
        run_id: args.run_id.clone(),
        node_id: args.node.clone(),
        instance_id: args.instance.clone(),
        verdict: match (args.up, args.down) {
            (true, _) => Some(Verdict::Up),
            (_, true) => Some(Verdict::Down),
            _ => None,
        },
        score: args.score,
        score_name: args.score_name.clone(),
        labels: args.label.clone(),
        comment: args.comment.clone(),
        ..Default::default()
    };
    let stored = write(&WriteRoute::for_database(&db, &home)?, new)?;
    if args.json {
        let mut text = serde_json::to_string_pretty(&stored)?;
        text.push('\n');
        write_stdout(&text)?;
    } else {
        write_stdout(&format!("{}\n", line(&stored)))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Stores `new` as the person's, by the route.
pub(crate) fn write(route: &WriteRoute, new: NewAnnotation) -> anyhow::Result<Annotation> {
    match route {
        WriteRoute::Direct { store, .. } => Ok(store.create_annotation(new, Author::person())?),
        WriteRoute::Server(client) => {
            let body = body_of(&new);
            let answer = client.send("POST", "/api/annotations", Some(&body))?;
            Ok(serde_json::from_value(answer)?)
        }
    }
}

/// The `POST /api/annotations` body of `new`.
fn body_of(new: &NewAnnotation) -> Value {
    let mut body = serde_json::json!({"runId": new.run_id, "kind": new.kind, "labels": new.labels});
    let fields = [
        (
            "nodeId",
            new.node_id.as_ref().map(|v| Value::from(v.as_str())),
        ),
        (
            "instanceId",
            new.instance_id.as_ref().map(|v| Value::from(v.as_str())),
        ),
        ("verdict", new.verdict.map(|v| Value::from(v.as_str()))),
        ("score", new.score.map(Value::from)),
        (
            "scoreName",
            new.score_name.as_ref().map(|v| Value::from(v.as_str())),
        ),
        (
            "comment",
            new.comment.as_ref().map(|v| Value::from(v.as_str())),
        ),
        ("check", new.check.clone()),
    ];
    for (key, value) in fields {
        if let Some(v) = value {
            body[key] = v;
        }
    }
    body
}

/// One annotation on one line.
fn line(a: &Annotation) -> String {
    let mut s = format!("annotated run {}", a.run_id);
    if let Some(node) = &a.node_id {
        s.push_str(&format!(" node {node}"));
    }
    if let Some(v) = a.verdict {
        s.push_str(&format!(" thumbs {}", v.as_str()));
    }
    if let Some(score) = a.score {
        s.push_str(&format!(
            " {} {score}",
            a.score_name.as_deref().unwrap_or("score")
        ));
    }
    if !a.labels.is_empty() {
        s.push_str(&format!(" labels {}", a.labels.join(",")));
    }
    let who = match a.author.kind {
        AuthorKind::Person => "person",
        AuthorKind::Agent => "agent",
    };
    format!("{s} ({}, by a {who})", a.id)
}
