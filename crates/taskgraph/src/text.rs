//! Display text: truncated names, the request a user message carries, workspace slugs.

/// Truncates `s` to at most `max` characters (on a char boundary), appending `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((idx, _)) => {
            let mut out = String::with_capacity(idx + 3);
            out.push_str(&s[..idx]);
            out.push('…');
            out
        }
    }
}

/// The request a user message carries, for titles: `None` for a slash-command envelope
/// (`<command-name>/clear</command-name>…`, written by Claude Code when the user runs a
/// command), and the text after Codex Desktop's "# Files mentioned by the user" preamble
/// (its `## My request for Codex:` section).
///
/// ```
/// use mindgate_taskgraph::text::request_text;
/// assert_eq!(request_text("<command-name>/clear</command-name>"), None);
/// assert_eq!(
///     request_text("# Files mentioned by the user:\n\n## a.md: /a.md\n\n## My request for Codex:\nfix it"),
///     Some("fix it")
/// );
/// assert_eq!(request_text("  fix the bug "), Some("fix the bug"));
/// ```
pub fn request_text(text: &str) -> Option<&str> {
    let t = text.trim();
    if t.is_empty()
        || t.starts_with("<command-name>")
        || t.starts_with("<command-message>")
        || t.starts_with("<local-command")
    {
        return None;
    }
    if t.starts_with("# Files mentioned by the user") {
        const ASK: &str = "## My request for Codex:";
        let rest = t.find(ASK).map(|i| t[i + ASK.len()..].trim())?;
        return (!rest.is_empty()).then_some(rest);
    }
    Some(t)
}

/// The DSH/pi workspace slug of a working directory: separators become `-`, wrapped in `--…--`.
///
/// `/Users/kevin/Desktop/Nothing/Napkin` → `--Users-kevin-Desktop-Nothing-Napkin--`.
pub fn workspace_slug(cwd: &str) -> String {
    let trimmed = cwd.trim_start_matches(['/', '\\']);
    let body: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_and_truncate() {
        assert_eq!(
            workspace_slug("/Users/kevin/Desktop/Nothing/Napkin"),
            "--Users-kevin-Desktop-Nothing-Napkin--"
        );
        assert_eq!(truncate_chars("héllo", 2), "hé…");
        assert_eq!(truncate_chars("hi", 2), "hi");
    }
}
