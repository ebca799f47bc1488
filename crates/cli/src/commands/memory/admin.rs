//! `mindgate memory entities|merge|unmerge|maintain|export|import`.

use std::io::{BufReader, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Context;
use mindgate_memory::{Actor, EntityGraph, GraphEntity, MemoryStore, TransferReport};

use super::records::open;
use crate::args::{
    MemoryExportArgs, MemoryIdArgs, MemoryImportArgs, MemoryMergeArgs, MemoryUserArgs,
};

fn entity_line(e: &GraphEntity) -> String {
    match &e.merged_into {
        Some(root) => format!("{} {:?} → merged into {root}", e.id, e.name),
        None => format!("{} {:?}", e.id, e.name),
    }
}

fn print<T: serde::Serialize>(
    json: bool,
    value: &T,
    text: impl FnOnce() -> String,
) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(value)?);
    } else {
        println!("{}", text());
    }
    Ok(ExitCode::SUCCESS)
}

/// `mindgate memory entities`.
pub fn entities(args: &MemoryUserArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let list = store.entities().list(&args.user)?;
    print(args.db.json, &list, || {
        if list.is_empty() {
            return format!("{} has no entities", args.user);
        }
        list.iter().map(entity_line).collect::<Vec<_>>().join("\n")
    })
}

/// `mindgate memory merge`.
pub fn merge(args: &MemoryMergeArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let root = store
        .entities()
        .merge(&args.from, &args.into, Actor::User)?;
    print(args.db.json, &root, || {
        format!("merged {} into {}", args.from, entity_line(&root))
    })
}

/// `mindgate memory unmerge`.
pub fn unmerge(args: &MemoryIdArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let e = store.entities().unmerge(&args.id, Actor::User)?;
    print(args.db.json, &e, || format!("unmerged {}", entity_line(&e)))
}

/// `mindgate memory maintain`.
pub fn maintain(args: &MemoryUserArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let report = store.maintain(&args.user)?;
    let value = serde_json::json!({
        "scanned": report.scanned,
        "archived": report.archived,
        "evicted": report.evicted,
    });
    print(args.db.json, &value, || {
        format!(
            "maintenance of {}: {} facts looked at, {} archived for low retention, {} evicted for capacity",
            args.user,
            report.scanned,
            report.archived.len(),
            report.evicted.len()
        )
    })
}

fn summary(verb: &str, r: &TransferReport) -> String {
    let tables = r
        .tables
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{verb} {} rows ({tables})", r.rows)
}

/// `mindgate memory export`.
pub fn export(args: &MemoryExportArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.as_ref())?;
    let report = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = BufWriter::new(file);
            let r = store.export_jsonl(&mut out)?;
            out.flush()?;
            r
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            store.export_jsonl(&mut out)?
        }
    };
    eprintln!("{}", summary("exported", &report));
    Ok(ExitCode::SUCCESS)
}

/// `mindgate memory import`.
pub fn import(args: &MemoryImportArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.as_ref())?;
    let report = if args.input.as_os_str() == "-" {
        let stdin = std::io::stdin();
        store.import_jsonl(&mut stdin.lock())?
    } else {
        let file = std::fs::File::open(&args.input)
            .with_context(|| format!("cannot open {}", args.input.display()))?;
        store.import_jsonl(&mut BufReader::new(file))?
    };
    println!("{}", summary("imported", &report));
    Ok(ExitCode::SUCCESS)
}
