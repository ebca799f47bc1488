//! Model-name matching: the names a model is looked up under, in order.

/// The names `model` is looked up under, first match wins:
///
/// 1. the name itself, trimmed and in lower case (`GPT-4o` → `gpt-4o`);
/// 2. without a provider prefix: everything up to the last `/` (`openai/gpt-4o`,
///    `models/gemini-1.5-pro`, `openrouter/anthropic/claude-sonnet-4`);
/// 3. then without a date or version-pin suffix: `-2024-08-06`, `-20241022`, `@20240620`,
///    `-latest`.
///
/// Nothing else: no prefix or fuzzy match, so `gpt-4o-mini-tts` is not priced as `gpt-4o-mini`.
pub fn name_candidates(model: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(3);
    let mut push = |name: &str| {
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    };
    let exact = model.trim().to_lowercase();
    push(&exact);
    let unprefixed = exact.rsplit('/').next().unwrap_or(&exact);
    push(unprefixed);
    push(without_date_suffix(unprefixed));
    out
}

/// `name` without one trailing date (`-YYYY-MM-DD`, `-YYYYMMDD`, `@YYYYMMDD`) or `-latest`.
fn without_date_suffix(name: &str) -> &str {
    if let Some(rest) = name.strip_suffix("-latest") {
        return rest;
    }
    let bytes = name.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    // -YYYY-MM-DD
    if bytes.len() > 11 {
        let tail = &bytes[bytes.len() - 11..];
        if tail[0] == b'-'
            && digits(&tail[1..5])
            && tail[5] == b'-'
            && digits(&tail[6..8])
            && tail[8] == b'-'
            && digits(&tail[9..11])
        {
            return &name[..name.len() - 11];
        }
    }
    // -YYYYMMDD or @YYYYMMDD
    if bytes.len() > 9 {
        let tail = &bytes[bytes.len() - 9..];
        if (tail[0] == b'-' || tail[0] == b'@') && digits(&tail[1..]) && tail[1] == b'2' {
            return &name[..name.len() - 9];
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_name_comes_first_in_lower_case() {
        assert_eq!(name_candidates(" GPT-4o "), ["gpt-4o"]);
    }

    #[test]
    fn provider_prefixes_are_dropped_up_to_the_last_slash() {
        assert_eq!(
            name_candidates("openai/gpt-4o"),
            ["openai/gpt-4o", "gpt-4o"]
        );
        assert_eq!(
            name_candidates("openrouter/anthropic/claude-sonnet-4"),
            ["openrouter/anthropic/claude-sonnet-4", "claude-sonnet-4"]
        );
        assert_eq!(
            name_candidates("models/gemini-1.5-pro"),
            ["models/gemini-1.5-pro", "gemini-1.5-pro"]
        );
    }

    #[test]
    fn date_suffixes_are_dropped_after_the_prefix() {
        assert_eq!(
            name_candidates("openai/gpt-4o-2024-08-06"),
            ["openai/gpt-4o-2024-08-06", "gpt-4o-2024-08-06", "gpt-4o"]
        );
        assert_eq!(
            name_candidates("claude-3-5-haiku-20241022"),
            ["claude-3-5-haiku-20241022", "claude-3-5-haiku"]
        );
        assert_eq!(
            name_candidates("claude-3-5-sonnet@20240620"),
            ["claude-3-5-sonnet@20240620", "claude-3-5-sonnet"]
        );
        assert_eq!(
            name_candidates("claude-3-7-sonnet-latest"),
            ["claude-3-7-sonnet-latest", "claude-3-7-sonnet"]
        );
    }

    #[test]
    fn other_suffixes_stay() {
        // A version number is not a date, and a model variant is not a suffix to drop.
        assert_eq!(name_candidates("gpt-4o-mini"), ["gpt-4o-mini"]);
        assert_eq!(name_candidates("o1-12345678"), ["o1-12345678"]);
        assert_eq!(name_candidates(""), Vec::<String>::new());
    }
}
