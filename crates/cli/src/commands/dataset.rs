//! `mindgate dataset add|list|show|export|import|update|rm`: datasets of examples taken from runs
//! or written out, each edit a new version (`mindgate_store::datasets`), read and written
//! by the rule of [`super::write_route`] — through the running server that holds the file,
//! directly otherwise — so the answers are the HTTP API's either way.

use std::io::Read as _;
use std::process::ExitCode;

use anyhow::Context as _;
use mindgate_home::Home;
use mindgate_store::datasets::jsonl;
use mindgate_store::{
    AddExamples, Author, Dataset, DatasetVersion, Example, ExamplePatch, ExampleSource,
};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

use super::write_route::WriteRoute;
use super::write_stdout;
use crate::args::{
    DatasetAddArgs, DatasetArgs, DatasetCommand, DatasetExportArgs, DatasetImportArgs,
    DatasetRmArgs, DatasetShowArgs, DatasetUpdateArgs,
};
use crate::db_arg::RunDb;

/// Runs `mindgate dataset …`.
pub fn run(args: &DatasetArgs) -> anyhow::Result<ExitCode> {
    let home = Home::from_env();
    let db = RunDb::or_default(args.db.as_ref(), || home.run_db());
    let route = WriteRoute::for_database(&db, &home)?;
    let answer = match &args.command {
        DatasetCommand::Add(a) => add(&route, a)?,
        DatasetCommand::List => list(&route)?,
        DatasetCommand::Show(a) => show(&route, a)?,
        DatasetCommand::Export(a) => return export(&route, a),
        DatasetCommand::Import(a) => import(&route, a)?,
        DatasetCommand::Update(a) => update(&route, a)?,
        DatasetCommand::Rm(a) => rm(&route, a)?,
    };
    let text = if args.json {
        let mut t = serde_json::to_string_pretty(&answer)?;
        t.push('\n');
        t
    } else {
        human(&args.command, &answer)?
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// A JSON argument: JSON text, or a bare word taken as a string.
fn json_arg(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn add(route: &WriteRoute, a: &DatasetAddArgs) -> anyhow::Result<Value> {
    // The name is a path segment of the API: checked before it is sent.
    mindgate_store::datasets::check_name(&a.name)?;
    let metadata: Map<String, Value> = match &a.metadata {
        None => Map::new(),
        Some(m) => serde_json::from_str(m).context("--metadata: give a JSON object")?,
    };
    let body = match (&a.run, &a.input) {
        (Some(run), _) => AddExamples {
            from: Some(ExampleSource {
                run_id: run.clone(),
                node_id: a.node.clone(),
                instance_id: a.instance.clone(),
            }),
            metadata,
            ..Default::default()
        },
        (None, input) => AddExamples {
            examples: vec![mindgate_store::NewExample {
                input: input.as_deref().map(json_arg).unwrap_or(Value::Null),
                expected: a.expected.as_deref().map(json_arg),
                metadata,
                source: None,
            }],
            ..Default::default()
        },
    };
    match route {
        WriteRoute::Direct { store, .. } => {
            let (dataset, examples) = store.add_to_dataset(&a.name, body, Author::person())?;
            Ok(json!({"dataset": dataset, "examples": examples}))
        }
        WriteRoute::Server(c) => c.send(
            "POST",
            &format!("/api/datasets/{}/examples", a.name),
            Some(&serde_json::to_value(&body)?),
        ),
    }
}

fn list(route: &WriteRoute) -> anyhow::Result<Value> {
    match route {
        WriteRoute::Direct { store, .. } => Ok(json!({"datasets": store.list_datasets()?})),
        WriteRoute::Server(c) => c.send("GET", "/api/datasets", None),
    }
}

fn version_query(version: Option<u32>) -> String {
    version.map_or_else(String::new, |v| format!("?version={v}"))
}

fn show(route: &WriteRoute, a: &DatasetShowArgs) -> anyhow::Result<Value> {
    mindgate_store::datasets::check_name(&a.name)?;
    match (route, a.versions) {
        (WriteRoute::Direct { store, .. }, true) => {
            Ok(json!({"versions": store.dataset_versions(&a.name)?}))
        }
        (WriteRoute::Direct { store, .. }, false) => {
            let (dataset, examples) = store.get_dataset(&a.name, a.version)?;
            Ok(json!({"dataset": dataset, "examples": examples}))
        }
        (WriteRoute::Server(c), true) => {
            c.send("GET", &format!("/api/datasets/{}/versions", a.name), None)
        }
        (WriteRoute::Server(c), false) => c.send(
            "GET",
            &format!("/api/datasets/{}{}", a.name, version_query(a.version)),
            None,
        ),
    }
}

fn export(route: &WriteRoute, a: &DatasetExportArgs) -> anyhow::Result<ExitCode> {
    mindgate_store::datasets::check_name(&a.name)?;
    let bytes = match route {
        WriteRoute::Direct { store, .. } => {
            let mut out = Vec::new();
            store.export_dataset(&a.name, a.version, &mut out)?;
            out
        }
        WriteRoute::Server(c) => c
            .send_text(
                "GET",
                &format!(
                    "/api/datasets/{}/export{}",
                    a.name,
                    version_query(a.version)
                ),
                None,
            )?
            .into_bytes(),
    };
    match &a.output {
        Some(path) => {
            std::fs::write(path, &bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            let header = jsonl::parse_header(&String::from_utf8_lossy(&bytes))?;
            eprintln!(
                "exported {} version {} ({} examples) to {}",
                header.name,
                header.version,
                header.examples,
                path.display()
            );
        }
        None => write_stdout(&String::from_utf8_lossy(&bytes))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn import(route: &WriteRoute, a: &DatasetImportArgs) -> anyhow::Result<Value> {
    let text = if a.file.as_os_str() == "-" {
        let mut t = String::new();
        std::io::stdin()
            .read_to_string(&mut t)
            .context("cannot read stdin")?;
        t
    } else {
        std::fs::read_to_string(&a.file)
            .with_context(|| format!("cannot read {}", a.file.display()))?
    };
    let file = jsonl::parse(&text).with_context(|| format!("{}", a.file.display()))?;
    if let Some(name) = &a.name {
        mindgate_store::datasets::check_name(name)?;
    }
    match route {
        WriteRoute::Direct { store, .. } => {
            let dataset = store.import_dataset(file, a.name.as_deref(), Author::person())?;
            Ok(json!({"dataset": dataset}))
        }
        WriteRoute::Server(c) => {
            let path = match &a.name {
                Some(n) => format!("/api/datasets?name={n}"),
                None => "/api/datasets".to_owned(),
            };
            let answer = c.send_text("POST", &path, Some(("application/x-ndjson", text)))?;
            Ok(serde_json::from_str(&answer)?)
        }
    }
}

/// The body of `PATCH /api/datasets/NAME/examples/ID` from the flags: only what is given.
fn patch_body(a: &DatasetUpdateArgs) -> anyhow::Result<Value> {
    let mut body = Map::new();
    if let Some(input) = &a.input {
        body.insert("input".into(), json_arg(input));
    }
    if let Some(expected) = &a.expected {
        body.insert("expected".into(), json_arg(expected));
    }
    if a.no_expected {
        body.insert("expected".into(), Value::Null);
    }
    if let Some(m) = &a.metadata {
        let metadata: Map<String, Value> =
            serde_json::from_str(m).context("--metadata: give a JSON object")?;
        body.insert("metadata".into(), Value::Object(metadata));
    }
    Ok(Value::Object(body))
}

fn update(route: &WriteRoute, a: &DatasetUpdateArgs) -> anyhow::Result<Value> {
    mindgate_store::datasets::check_name(&a.name)?;
    let body = patch_body(a)?;
    match route {
        WriteRoute::Direct { store, .. } => {
            // The same reading of the body as the HTTP route's.
            let patch: ExamplePatch = serde_json::from_value(body)?;
            let (dataset, example) =
                store.update_example(&a.name, &a.example, patch, Author::person())?;
            Ok(json!({"dataset": dataset, "example": example}))
        }
        WriteRoute::Server(c) => c.send(
            "PATCH",
            &format!(
                "/api/datasets/{}/examples/{}",
                a.name,
                utf8_percent_encode(&a.example, NON_ALPHANUMERIC)
            ),
            Some(&body),
        ),
    }
}

fn rm(route: &WriteRoute, a: &DatasetRmArgs) -> anyhow::Result<Value> {
    mindgate_store::datasets::check_name(&a.name)?;
    match route {
        WriteRoute::Direct { store, .. } => {
            let dataset = if a.dataset {
                store.delete_dataset(&a.name, Author::person())?
            } else {
                store.remove_examples(&a.name, &a.examples, Author::person())?
            };
            Ok(json!({"dataset": dataset}))
        }
        WriteRoute::Server(c) if a.dataset => {
            c.send("DELETE", &format!("/api/datasets/{}", a.name), None)
        }
        WriteRoute::Server(c) => {
            // One version for all of them, as the direct write makes (ids never hold ',').
            let ids: Vec<String> = a
                .examples
                .iter()
                .map(|id| utf8_percent_encode(id, NON_ALPHANUMERIC).to_string())
                .collect();
            c.send(
                "DELETE",
                &format!("/api/datasets/{}/examples?ids={}", a.name, ids.join(",")),
                None,
            )
        }
    }
}

fn field<T: serde::de::DeserializeOwned>(answer: &Value, key: &str) -> anyhow::Result<T> {
    serde_json::from_value(answer.get(key).cloned().unwrap_or(Value::Null))
        .with_context(|| format!("the answer has no readable {key}"))
}

fn dataset_line(d: &Dataset) -> String {
    let mut s = format!("{} version {} ({} examples", d.name, d.version, d.examples);
    if d.version != d.latest {
        s.push_str(&format!("; newest version {}", d.latest));
    }
    s.push(')');
    s
}

fn short(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 80 {
        format!("{}…", t.chars().take(79).collect::<String>())
    } else {
        t
    }
}

fn example_line(e: &Example) -> String {
    let mut s = format!("  {}  input {}", e.id, short(&e.input));
    if let Some(x) = &e.expected {
        s.push_str(&format!("  expected {}", short(x)));
    }
    if let Some(src) = &e.source {
        s.push_str(&format!("  from run {}", src.run_id));
        if let Some(n) = &src.node_id {
            s.push_str(&format!(" node {n}"));
        }
        if let Some(i) = &src.instance_id {
            s.push_str(&format!(" instance {i}"));
        }
    }
    s
}

/// The answer for a person.
fn human(command: &DatasetCommand, answer: &Value) -> anyhow::Result<String> {
    let mut out = String::new();
    match command {
        DatasetCommand::List => {
            let list: Vec<Dataset> = field(answer, "datasets")?;
            if list.is_empty() {
                out.push_str("no datasets\n");
            }
            for d in list {
                out.push_str(&format!("{}\n", dataset_line(&d)));
            }
        }
        DatasetCommand::Show(a) if a.versions => {
            let versions: Vec<DatasetVersion> = field(answer, "versions")?;
            for v in versions {
                let who = match v.by.kind {
                    mindgate_store::AuthorKind::Person => "a person",
                    mindgate_store::AuthorKind::Agent => "an agent",
                };
                out.push_str(&format!(
                    "version {}  {} {}  → {} examples  by {who}\n",
                    v.version,
                    v.action,
                    v.example_ids.join(","),
                    v.examples
                ));
            }
        }
        DatasetCommand::Show(_) => {
            let d: Dataset = field(answer, "dataset")?;
            out.push_str(&format!("{}\n", dataset_line(&d)));
            for e in field::<Vec<Example>>(answer, "examples")? {
                out.push_str(&format!("{}\n", example_line(&e)));
            }
        }
        DatasetCommand::Add(_) => {
            let d: Dataset = field(answer, "dataset")?;
            for e in field::<Vec<Example>>(answer, "examples")? {
                out.push_str(&format!("added{}\n", example_line(&e).trim_end()));
            }
            out.push_str(&format!("{}\n", dataset_line(&d)));
        }
        DatasetCommand::Update(_) => {
            let d: Dataset = field(answer, "dataset")?;
            let e: Example = field(answer, "example")?;
            out.push_str(&format!("updated{}\n", example_line(&e).trim_end()));
            out.push_str(&format!("{}\n", dataset_line(&d)));
        }
        DatasetCommand::Import(_) | DatasetCommand::Rm(_) | DatasetCommand::Export(_) => {
            let d: Dataset = field(answer, "dataset")?;
            out.push_str(&format!("{}\n", dataset_line(&d)));
        }
    }
    Ok(out)
}
