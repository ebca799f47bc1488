//! A dataset version as JSON Lines: a header line naming the dataset, the version and the
//! number of examples, then one example per line, in the dataset's order.
//!
//! ```text
//! {"dataset":{"name":"refunds","version":3,"examples":2}}
//! {"id":"ex_…","input":{…},"expected":{…},"metadata":{},"source":{"runId":"…"},"addedBy":{"kind":"person"},"updatedAt":…}
//! ```
//!
//! Import keeps every field (ids, authors, times, the order of keys), so exporting what
//! was imported gives the same bytes.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::{Example, MAX_BATCH, bad, check_name};
use crate::error::Result;

/// The header line's `dataset` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// The dataset's name.
    pub name: String,
    /// The version exported.
    pub version: u32,
    /// How many example lines follow.
    pub examples: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderLine {
    dataset: Header,
}

/// A parsed export.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetFile {
    /// Its header.
    pub header: Header,
    /// Its examples, in order.
    pub examples: Vec<Example>,
}

/// Writes `examples` of version `version` of `name` as JSON Lines.
pub fn write(name: &str, version: u32, examples: &[Example], out: &mut dyn Write) -> Result<()> {
    let header = HeaderLine {
        dataset: Header {
            name: name.to_owned(),
            version,
            examples: examples.len() as u64,
        },
    };
    let io = |e: std::io::Error| bad(format!("cannot write the export: {e}"));
    let mut line = super::backend::to_json(&header)?;
    line.push('\n');
    out.write_all(line.as_bytes()).map_err(io)?;
    for e in examples {
        let mut line = super::backend::to_json(e)?;
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(io)?;
    }
    Ok(())
}

/// Reads an export's header (its first line) only.
pub fn parse_header(text: &str) -> Result<Header> {
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let header = serde_json::from_str::<HeaderLine>(first)
        .map_err(|e| {
            bad(format!(
                "line 1: not a dataset export (the first line is {{\"dataset\": {{\"name\", \"version\", \"examples\"}}}}): {e}"
            ))
        })?
        .dataset;
    check_name(&header.name).map_err(|e| bad(format!("line 1: {e}")))?;
    Ok(header)
}

/// Reads an export; refused, naming the line, when a line is not what it should be, an id
/// repeats, or the number of examples is not the header's (a cut file).
pub fn parse(text: &str) -> Result<DatasetFile> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, first)) = lines.next() else {
        return Err(bad("not a dataset export: the file is empty"));
    };
    let header = parse_header(first)?;
    let mut examples: Vec<Example> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (i, line) in lines {
        let n = i + 1;
        if examples.len() >= MAX_BATCH {
            return Err(bad(format!(
                "line {n}: more than {MAX_BATCH} examples in one import"
            )));
        }
        let example: Example = serde_json::from_str(line)
            .map_err(|e| bad(format!("line {n}: invalid example: {e}")))?;
        example
            .check_fields()
            .map_err(|e| bad(format!("line {n}: {e}")))?;
        if !ids.insert(example.id.clone()) {
            return Err(bad(format!("line {n}: example id {} repeats", example.id)));
        }
        examples.push(example);
    }
    if examples.len() as u64 != header.examples {
        return Err(bad(format!(
            "the header says {} examples, the file has {}: is it cut short?",
            header.examples,
            examples.len()
        )));
    }
    Ok(DatasetFile { header, examples })
}
