//! The repository's `README.md` and its marked blocks: a fenced block right after a
//! `<!-- readme-snippet: NAME -->` line, so tests run exactly the text a reader copies.

use std::path::PathBuf;

/// The marker line that names the fenced block below it (`NAME` follows it).
pub const MARKER: &str = "<!-- readme-snippet: ";

/// Path of the repository's `README.md`.
pub fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md")
}

/// The text of `README.md`.
///
/// # Panics
/// When the file cannot be read.
pub fn text() -> String {
    let path = path();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The body of the fenced block marked `name` in `markdown` (between its fences, with a
/// final newline), or `None` when no such marked block exists.
pub fn block_in(markdown: &str, name: &str) -> Option<String> {
    let marker = format!("{MARKER}{name} -->");
    let mut lines = markdown.lines();
    lines.find(|line| line.trim() == marker)?;
    let fence = lines.next()?.trim_start();
    if !fence.starts_with("```") {
        return None;
    }
    let mut body = String::new();
    for line in lines {
        if line.trim_start().starts_with("```") {
            return Some(body);
        }
        body.push_str(line);
        body.push('\n');
    }
    None
}

/// The body of the README block marked `name`.
///
/// # Panics
/// When the README has no such block (a test must not pass on a block that went missing).
pub fn block(name: &str) -> String {
    block_in(&text(), name)
        .unwrap_or_else(|| panic!("README.md has no fenced block after `{MARKER}{name} -->`"))
}

#[cfg(test)]
mod tests {
    use super::block_in;

    #[test]
    fn a_marked_block_is_the_text_between_its_fences() {
        let md = "intro\n<!-- readme-snippet: sh -->\n```sh\necho one\necho two\n```\nafter\n";
        assert_eq!(block_in(md, "sh").as_deref(), Some("echo one\necho two\n"));
        assert_eq!(block_in(md, "rust"), None);
        assert_eq!(block_in("<!-- readme-snippet: sh -->\ntext\n", "sh"), None);
        assert_eq!(
            block_in("<!-- readme-snippet: sh -->\n```sh\nopen\n", "sh"),
            None
        );
    }
}
