//! `mindgate memory entities|merge|unmerge|maintain|export|import`.

use std::io::{BufReader, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Context;
use mindgate_memory::{Actor, EntityGraph, GraphEntity, MemoryStore, TransferReport};

use super::progress;
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

/// `mindgate memory export` (a progress bar of rows on a terminal's stderr).
pub fn export(args: &MemoryExportArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.as_ref())?;
    let bar = progress::bar(
        Some(store.export_rows()? + 1),
        "{spinner} exporting {pos}/{len} rows {wide_bar} {eta}",
    );
    let report = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = progress::LineCounter {
                inner: BufWriter::new(file),
                bar: bar.clone(),
            };
            let r = store.export_jsonl(&mut out)?;
            out.flush()?;
            r
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = progress::LineCounter {
                inner: BufWriter::new(stdout.lock()),
                bar: bar.clone(),
            };
            store.export_jsonl(&mut out)?
        }
    };
    bar.finish_and_clear();
    eprintln!("{}", summary("exported", &report));
    Ok(ExitCode::SUCCESS)
}

/// `mindgate memory import` (a progress bar of bytes read on a terminal's stderr).
pub fn import(args: &MemoryImportArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.as_ref())?;
    let report = if args.input.as_os_str() == "-" {
        let bar = progress::bar(None, "{spinner} importing {bytes} read");
        let stdin = std::io::stdin();
        let mut input = BufReader::new(progress::ByteCounter {
            inner: stdin.lock(),
            bar: bar.clone(),
        });
        let r = store.import_jsonl(&mut input);
        bar.finish_and_clear();
        r?
    } else {
        let file = std::fs::File::open(&args.input)
            .with_context(|| format!("cannot open {}", args.input.display()))?;
        let size = file.metadata().map(|m| m.len()).ok();
        let bar = progress::bar(
            size,
            "{spinner} importing {bytes}/{total_bytes} {wide_bar} {eta}",
        );
        let mut input = BufReader::new(progress::ByteCounter {
            inner: file,
            bar: bar.clone(),
        });
        let r = store.import_jsonl(&mut input);
        bar.finish_and_clear();
        r?
    };
    println!("{}", summary("imported", &report));
    Ok(ExitCode::SUCCESS)
}
