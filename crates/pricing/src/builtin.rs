//! The built-in price table.
//!
//! Standard (non-batch, short-context) list prices in US dollars per million tokens, taken
//! from the providers' public pricing pages on [`BUILTIN_PRICES_DATE`]. Prices change: a
//! user's `prices.toml` overrides any of them (`docs/cost.md`).
//!
//! Where a provider does not charge cache writes apart (OpenAI, Google), `cache_write` is the
//! input price; Anthropic's is its 5-minute cache-write price. Long-context tiers (Gemini
//! above 128k/200k prompt tokens) and batch discounts are not modelled.

/// The date the built-in prices were taken from the providers' pricing pages.
pub const BUILTIN_PRICES_DATE: &str = "2025-11-01";

/// `(model, input, output, cache_read, cache_write)`, USD per million tokens.
pub(crate) const PRICES: &[(&str, f64, f64, f64, f64)] = &[
    // OpenAI
    ("gpt-4o", 2.50, 10.00, 1.25, 2.50),
    ("gpt-4o-mini", 0.15, 0.60, 0.075, 0.15),
    ("gpt-4.1", 2.00, 8.00, 0.50, 2.00),
    ("gpt-4.1-mini", 0.40, 1.60, 0.10, 0.40),
    ("gpt-4.1-nano", 0.10, 0.40, 0.025, 0.10),
    ("o1", 15.00, 60.00, 7.50, 15.00),
    ("o1-mini", 1.10, 4.40, 0.55, 1.10),
    ("o3", 2.00, 8.00, 0.50, 2.00),
    ("o3-mini", 1.10, 4.40, 0.55, 1.10),
    ("o4-mini", 1.10, 4.40, 0.275, 1.10),
    ("gpt-5", 1.25, 10.00, 0.125, 1.25),
    ("gpt-5-mini", 0.25, 2.00, 0.025, 0.25),
    ("gpt-5-nano", 0.05, 0.40, 0.005, 0.05),
    ("gpt-5-codex", 1.25, 10.00, 0.125, 1.25),
    // Anthropic (cache write: the 5-minute cache)
    ("claude-opus-4-5", 5.00, 25.00, 0.50, 6.25),
    ("claude-opus-4-1", 15.00, 75.00, 1.50, 18.75),
    ("claude-opus-4", 15.00, 75.00, 1.50, 18.75),
    ("claude-opus-4-0", 15.00, 75.00, 1.50, 18.75),
    ("claude-3-opus", 15.00, 75.00, 1.50, 18.75),
    ("claude-sonnet-4-5", 3.00, 15.00, 0.30, 3.75),
    ("claude-sonnet-4", 3.00, 15.00, 0.30, 3.75),
    ("claude-sonnet-4-0", 3.00, 15.00, 0.30, 3.75),
    ("claude-3-7-sonnet", 3.00, 15.00, 0.30, 3.75),
    ("claude-3-5-sonnet", 3.00, 15.00, 0.30, 3.75),
    ("claude-haiku-4-5", 1.00, 5.00, 0.10, 1.25),
    ("claude-3-5-haiku", 0.80, 4.00, 0.08, 1.00),
    ("claude-3-haiku", 0.25, 1.25, 0.03, 0.30),
    // Google (prompts up to 128k tokens for 1.5, 200k for 2.5 Pro)
    ("gemini-1.5-pro", 1.25, 5.00, 0.3125, 1.25),
    ("gemini-1.5-flash", 0.075, 0.30, 0.01875, 0.075),
    ("gemini-1.5-flash-8b", 0.0375, 0.15, 0.01, 0.0375),
    ("gemini-2.0-flash", 0.10, 0.40, 0.025, 0.10),
    ("gemini-2.0-flash-lite", 0.075, 0.30, 0.01875, 0.075),
    ("gemini-2.5-pro", 1.25, 10.00, 0.125, 1.25),
    ("gemini-2.5-flash", 0.30, 2.50, 0.03, 0.30),
    ("gemini-2.5-flash-lite", 0.10, 0.40, 0.01, 0.10),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_normalised_and_prices_sane() {
        let mut seen = std::collections::HashSet::new();
        for (name, input, output, cache_read, cache_write) in PRICES {
            assert!(seen.insert(name), "{name} listed twice");
            assert_eq!(
                crate::name_candidates(name),
                [name.to_string()],
                "{name} is its own only lookup name"
            );
            for p in [input, output, cache_read, cache_write] {
                assert!(p.is_finite() && *p >= 0.0, "{name}: {p}");
            }
            assert!(
                cache_read <= input,
                "{name}: a cache read costs no more than input"
            );
        }
    }
}
