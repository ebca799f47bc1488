//! Model prices and what token usage costs.
//!
//! - [`PriceTable`]: the built-in prices of common OpenAI, Anthropic and Google models
//!   ([`BUILTIN_PRICES_DATE`]: the date they were taken; they may be outdated), overridden
//!   and extended by the user's `prices.toml` ([`PriceTable::load`], path from
//!   `mindgate_home::Home::prices_file`);
//! - [`PriceTable::lookup`]: a model name matched exactly, then after the documented
//!   normalisation ([`name_candidates`]: lower case, provider prefix, date suffix) — never by
//!   guessing a near name;
//! - [`Cost`]: a sum of priced usage that names the models it could not price instead of
//!   guessing (`usd` is `None` as soon as one is unpriced).
//!
//! Every price is in US dollars per million tokens; cache reads and cache writes have prices
//! of their own. The rules are written out in `docs/cost.md`.
//!
//! ```
//! use mindgate_pricing::{Cost, PriceTable, TokenCounts};
//!
//! let table = PriceTable::builtin();
//! let mut cost = Cost::default();
//! let usage = TokenCounts { input: 1_000_000, output: 0, cache_read: 0, cache_write: 0 };
//! cost.add(&table, Some("openai/gpt-4o-2024-08-06"), &usage);
//! assert_eq!(cost.usd(), Some(2.5));
//! cost.add(&table, Some("my-local-model"), &usage);
//! assert_eq!(cost.usd(), None);
//! assert_eq!(cost.unpriced_models, ["my-local-model"]);
//! ```

mod builtin;
mod cost;
mod file;
mod matching;

pub use builtin::BUILTIN_PRICES_DATE;
pub use cost::{Cost, NO_MODEL, TokenCounts, format_usd};
pub use file::PricesFileError;
pub use matching::name_candidates;

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

/// What one model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// Input (prompt) tokens not served from a cache.
    pub input: f64,
    /// Output (completion) tokens, reasoning included.
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
}

impl Price {
    /// What `tokens` cost at this price, in US dollars.
    pub fn usd(&self, tokens: &TokenCounts) -> f64 {
        let per_token = |count: u64, per_million: f64| count as f64 * per_million / 1_000_000.0;
        per_token(tokens.input, self.input)
            + per_token(tokens.output, self.output)
            + per_token(tokens.cache_read, self.cache_read)
            + per_token(tokens.cache_write, self.cache_write)
    }
}

/// Where a price came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PriceSource {
    /// The built-in table.
    Builtin,
    /// The user's `prices.toml`.
    File,
}

/// A matched price: the table key it matched and the price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceMatch<'a> {
    /// The table entry's name.
    pub key: &'a str,
    /// Its price.
    pub price: Price,
    /// Built-in or from the file.
    pub source: PriceSource,
}

/// Model name → price: the built-in table, with the user's file over it.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    entries: HashMap<String, (Price, PriceSource)>,
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::builtin()
    }
}

impl PriceTable {
    /// The built-in prices only.
    pub fn builtin() -> PriceTable {
        let entries = builtin::PRICES
            .iter()
            .map(|(name, input, output, cache_read, cache_write)| {
                let price = Price {
                    input: *input,
                    output: *output,
                    cache_read: *cache_read,
                    cache_write: *cache_write,
                };
                ((*name).to_owned(), (price, PriceSource::Builtin))
            })
            .collect();
        PriceTable { entries }
    }

    /// The built-in prices with the file at `path` over them (a model it names replaces the
    /// built-in entry, a new one is added). A missing file is no error: the built-in table.
    pub fn load(path: &Path) -> Result<PriceTable, PricesFileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(PriceTable::builtin());
            }
            Err(source) => {
                return Err(PricesFileError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        PriceTable::builtin().with_file_text(&text, path)
    }

    /// This table with the entries of a `prices.toml` text over it (`path` only names the
    /// file in errors).
    pub fn with_file_text(
        mut self,
        text: &str,
        path: &Path,
    ) -> Result<PriceTable, PricesFileError> {
        for (name, price) in file::parse(text, path)? {
            self.entries.insert(name, (price, PriceSource::File));
        }
        Ok(self)
    }

    /// The price of `model`: the first of its [`name_candidates`] the table holds.
    pub fn lookup(&self, model: &str) -> Option<PriceMatch<'_>> {
        name_candidates(model).into_iter().find_map(|name| {
            self.entries
                .get_key_value(&name)
                .map(|(key, (price, source))| PriceMatch {
                    key,
                    price: *price,
                    source: *source,
                })
        })
    }

    /// Number of models priced.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table prices no model.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
