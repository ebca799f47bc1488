//! The user's price file, `$MINDGATE_HOME/prices.toml`.
//!
//! ```toml
//! # US dollars per million tokens.
//! [models."gpt-4o"]
//! input = 2.5
//! output = 10.0
//! cache_read = 1.25     # optional: the input price when left out
//! cache_write = 2.5     # optional: the input price when left out
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::Price;

/// A price file that cannot be used. Nothing of it is applied.
#[derive(Debug, thiserror::Error)]
pub enum PricesFileError {
    /// The file exists but cannot be read.
    #[error("cannot read the price file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid price table.
    #[error("price file {}, line {line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the fault.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PricesFile {
    #[serde(default)]
    models: BTreeMap<String, toml::Spanned<FilePrice>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePrice {
    input: f64,
    output: f64,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
}

fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The entries of a price file: (lower-cased model name, price).
pub(crate) fn parse(text: &str, path: &Path) -> Result<Vec<(String, Price)>, PricesFileError> {
    let invalid = |line: usize, message: String| PricesFileError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    };
    let file: PricesFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |span| line_of(text, span.start));
        invalid(line, e.message().trim().to_owned())
    })?;
    let mut out = Vec::with_capacity(file.models.len());
    for (name, spanned) in file.models {
        let line = line_of(text, spanned.span().start);
        let name = name.trim().to_lowercase();
        if name.is_empty() {
            return Err(invalid(line, "a model name is empty".to_owned()));
        }
        let entry = spanned.into_inner();
        let price = Price {
            input: entry.input,
            output: entry.output,
            cache_read: entry.cache_read.unwrap_or(entry.input),
            cache_write: entry.cache_write.unwrap_or(entry.input),
        };
        for (field, value) in [
            ("input", price.input),
            ("output", price.output),
            ("cache_read", price.cache_read),
            ("cache_write", price.cache_write),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(invalid(
                    line,
                    format!(
                        "model `{name}`: {field} must be a price of 0 or more (USD per million tokens), not {value}"
                    ),
                ));
            }
        }
        out.push((name, price));
    }
    Ok(out)
}
