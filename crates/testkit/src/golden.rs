//! Golden files: a generated text compared with a committed file, regenerated on purpose.
//!
//! `UPDATE_GOLDEN=1` writes the file instead of comparing (after a reviewed change); a
//! difference otherwise fails with the first differing line and the command that
//! regenerates it. Used where the file itself is read elsewhere (the JSON Schemas that
//! `mindgate schema` prints and the docs link), so it stays plain, without a snapshot header.

use std::path::Path;

/// The environment variable that makes [`assert_golden`] write instead of compare.
pub const UPDATE_VAR: &str = "UPDATE_GOLDEN";

/// Fails unless `actual` is the content of `path`; with `UPDATE_GOLDEN` set, writes it.
/// `what` names the content in the failure, `regenerate` is the command that updates it.
///
/// # Panics
///
/// When the contents differ, or the file cannot be written with `UPDATE_GOLDEN` set.
pub fn assert_golden(path: &Path, actual: &str, what: &str, regenerate: &str) {
    if std::env::var_os(UPDATE_VAR).is_some() {
        if let Err(e) = std::fs::write(path, actual) {
            panic!("cannot write {}: {e}", path.display());
        }
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if let Some(line) = first_difference(&expected, actual) {
        panic!(
            "{what} changed (first difference at line {}).\n\
             Review it, then regenerate {} with\n\n    {UPDATE_VAR}=1 {regenerate}\n\n\
             expected: {:?}\nactual:   {:?}",
            line + 1,
            path.display(),
            expected.lines().nth(line).unwrap_or("<end of file>"),
            actual.lines().nth(line).unwrap_or("<end of file>"),
        );
    }
}

/// The first line (0-based) where `expected` and `actual` differ; `None` when they are equal.
pub fn first_difference(expected: &str, actual: &str) -> Option<usize> {
    if expected == actual {
        return None;
    }
    Some(
        actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count())),
    )
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn the_first_differing_line_is_found() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(first_difference("a\nb\n", "a\nc\n"), Some(1));
        assert_eq!(first_difference("a\n", "a\nb\n"), Some(1));
        assert_eq!(first_difference("a\nb", "a\nb\n"), Some(2));
    }
}
