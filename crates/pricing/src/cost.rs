//! [`Cost`]: priced usage that says what it could not price.

use serde::Serialize;

use crate::PriceTable;

/// What [`Cost::unpriced_models`] lists for usage that named no model.
pub const NO_MODEL: &str = "(no model name)";

/// Token counts of one usage report. `input` excludes the cached prompt tokens, which
/// `cache_read` and `cache_write` count apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenCounts {
    /// Input tokens not served from or written to a cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
}

impl TokenCounts {
    /// Whether no token is counted.
    pub fn is_zero(&self) -> bool {
        self.input == 0 && self.output == 0 && self.cache_read == 0 && self.cache_write == 0
    }

    /// Adds `other`, saturating.
    pub fn add(&mut self, other: &TokenCounts) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
    }
}

/// A sum of priced usage. `usd` is the total in US dollars when every usage added was
/// priced, and `null` as soon as one was not: `unpriced_models` names those models and
/// `priced_usd` is the part that could be priced (a lower bound). Never a guess.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// The total, when everything was priced.
    pub usd: Option<f64>,
    /// The priced part.
    pub priced_usd: f64,
    /// Models with usage and no price, sorted ([`NO_MODEL`] for usage without a model name).
    pub unpriced_models: Vec<String>,
}

impl Default for Cost {
    /// Nothing added yet: zero dollars, everything priced.
    fn default() -> Self {
        Cost {
            usd: Some(0.0),
            priced_usd: 0.0,
            unpriced_models: Vec::new(),
        }
    }
}

impl Cost {
    /// Adds the usage of one call of `model` (`None`: the call named no model).
    pub fn add(&mut self, table: &PriceTable, model: Option<&str>, tokens: &TokenCounts) {
        if tokens.is_zero() {
            return;
        }
        let model = model.map(str::trim).filter(|m| !m.is_empty());
        match model.and_then(|m| table.lookup(m)) {
            Some(found) => self.priced_usd += found.price.usd(tokens),
            None => self.note_unpriced(model.unwrap_or(NO_MODEL)),
        }
        self.refresh();
    }

    /// Adds another sum.
    pub fn merge(&mut self, other: &Cost) {
        self.priced_usd += other.priced_usd;
        for model in &other.unpriced_models {
            self.note_unpriced(model);
        }
        self.refresh();
    }

    /// The total, `None` when some usage was unpriced.
    pub fn usd(&self) -> Option<f64> {
        self.usd
    }

    fn note_unpriced(&mut self, model: &str) {
        if let Err(at) = self
            .unpriced_models
            .binary_search_by(|m| m.as_str().cmp(model))
        {
            self.unpriced_models.insert(at, model.to_owned());
        }
    }

    fn refresh(&mut self) {
        self.usd = self.unpriced_models.is_empty().then_some(self.priced_usd);
    }
}

/// US dollars as the views show them: `$0`, `<$0.0001`, four decimals under a dollar,
/// two from a dollar up.
pub fn format_usd(usd: f64) -> String {
    if usd == 0.0 {
        "$0".to_owned()
    } else if usd < 0.000_1 {
        "<$0.0001".to_owned()
    } else if usd < 1.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

impl std::fmt::Display for Cost {
    /// `$0.0123`, or `unknown (unpriced: model-a, model-b; $0.0100 priced)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.usd {
            Some(usd) => f.write_str(&format_usd(usd)),
            None => write!(
                f,
                "unknown (unpriced: {}; {} priced)",
                self.unpriced_models.join(", "),
                format_usd(self.priced_usd)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, cache_read: u64, cache_write: u64) -> TokenCounts {
        TokenCounts {
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn cache_tokens_have_their_own_prices() {
        let table = PriceTable::builtin();
        let mut cost = Cost::default();
        // claude-sonnet-4: 3 in, 15 out, 0.30 cache read, 3.75 cache write per million.
        cost.add(
            &table,
            Some("claude-sonnet-4-20250514"),
            &tokens(1_000, 2_000, 10_000, 4_000),
        );
        let want = (1_000.0 * 3.0 + 2_000.0 * 15.0 + 10_000.0 * 0.30 + 4_000.0 * 3.75) / 1e6;
        assert!(close(cost.usd().unwrap_or(f64::NAN), want), "{cost:?}");
    }

    #[test]
    fn an_unknown_model_makes_the_total_unknown_and_is_named() {
        let table = PriceTable::builtin();
        let mut cost = Cost::default();
        cost.add(&table, Some("gpt-4o-mini"), &tokens(1_000_000, 0, 0, 0));
        cost.add(&table, Some("llama-3-70b"), &tokens(10, 10, 0, 0));
        cost.add(&table, None, &tokens(5, 0, 0, 0));
        cost.add(&table, Some("llama-3-70b"), &tokens(1, 0, 0, 0));
        assert_eq!(cost.usd(), None);
        assert!(close(cost.priced_usd, 0.15));
        assert_eq!(cost.unpriced_models, [NO_MODEL, "llama-3-70b"]);
    }

    #[test]
    fn usage_without_tokens_prices_nothing_even_when_unnamed() {
        let table = PriceTable::builtin();
        let mut cost = Cost::default();
        cost.add(&table, None, &TokenCounts::default());
        assert_eq!(cost.usd(), Some(0.0));
        assert!(cost.unpriced_models.is_empty());
    }

    #[test]
    fn costs_display_plainly() {
        let table = PriceTable::builtin();
        let mut cost = Cost::default();
        assert_eq!(cost.to_string(), "$0");
        cost.add(&table, Some("gpt-4o"), &tokens(1_000, 100, 0, 0));
        assert_eq!(cost.to_string(), "$0.0035");
        cost.add(&table, Some("gpt-4o"), &tokens(1_000_000, 0, 0, 0));
        assert_eq!(cost.to_string(), "$2.50");
        cost.add(&table, Some("x-1"), &tokens(1, 0, 0, 0));
        assert_eq!(cost.to_string(), "unknown (unpriced: x-1; $2.50 priced)");
        assert_eq!(format_usd(0.000_01), "<$0.0001");
    }

    #[test]
    fn merged_sums_keep_both_parts() {
        let table = PriceTable::builtin();
        let (mut a, mut b) = (Cost::default(), Cost::default());
        a.add(&table, Some("gpt-4.1"), &tokens(0, 1_000_000, 0, 0));
        b.add(&table, Some("mystery"), &tokens(1, 0, 0, 0));
        a.merge(&b);
        assert!(close(a.priced_usd, 8.0));
        assert_eq!(a.usd(), None);
        assert_eq!(a.unpriced_models, ["mystery"]);
    }
}
