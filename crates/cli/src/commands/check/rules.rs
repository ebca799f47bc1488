//! The rules file of `mindgate check` (TOML, read with the `toml` crate): what must hold
//! for a new run against its baseline. Unknown keys, wrong types and bad regexes are
//! refused with the file, the line and the key. Without a file, [`Rules::default_set`]
//! applies: the same sequence of tool calls, no new errors, the run's final output equal.

use std::path::Path;

use anyhow::bail;
use serde::Deserialize;
use toml::Spanned;

/// How the tool calls of the two runs must compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolMatch {
    /// The same tools in the same order (each call counted).
    Sequence,
    /// The same set of tools, in any order and number.
    Set,
}

/// `[tools]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsRule {
    /// `sequence` or `set`.
    pub same: ToolMatch,
}

/// `[errors]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorsRule {
    /// No node fails that did not fail in the baseline (and the run does not end in error
    /// when the baseline did not).
    pub no_new: bool,
}

/// A budget: absolute, or relative to the baseline (both may be given).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// At most this much (USD for cost, ms for duration, tokens for tokens).
    pub max: Option<f64>,
    /// At most this many percent over the baseline.
    pub max_increase_pct: Option<f64>,
}

/// `[[output]]`: a value of the new run's output.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputRule {
    /// The node whose (last instance's) output is read; the run's final output when absent.
    pub node: Option<String>,
    /// A JSON pointer into it (`/answer/0`); the whole output when absent.
    pub path: Option<String>,
    /// It equals this value.
    pub equals: Option<toml::Value>,
    /// It equals the baseline's value at the same place.
    #[serde(default)]
    pub same_as_baseline: bool,
    /// Its text contains this.
    pub contains: Option<String>,
    /// Its text matches this regular expression.
    pub matches: Option<Spanned<String>>,
}

/// `[annotations]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnnotationsRule {
    /// The baseline must carry a person's annotation of this verdict (`up` or `down`).
    pub baseline_verdict: Spanned<String>,
}

/// A rules file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// The tool calls.
    pub tools: Option<ToolsRule>,
    /// Errors.
    pub errors: Option<ErrorsRule>,
    /// Cost in USD.
    pub cost: Option<Budget>,
    /// Duration in ms.
    pub duration: Option<Budget>,
    /// Tokens (input and output).
    pub tokens: Option<Budget>,
    /// Output checks.
    #[serde(default)]
    pub output: Vec<OutputRule>,
    /// Annotations required.
    pub annotations: Option<AnnotationsRule>,
}

impl Rules {
    /// The default set: the same sequence of tool calls, no new errors, the run's final
    /// output equal to the baseline's.
    pub fn default_set() -> Rules {
        Rules {
            tools: Some(ToolsRule {
                same: ToolMatch::Sequence,
            }),
            errors: Some(ErrorsRule { no_new: true }),
            output: vec![OutputRule {
                node: None,
                path: None,
                equals: None,
                same_as_baseline: true,
                contains: None,
                matches: None,
            }],
            ..Rules::default()
        }
    }

    /// Reads and checks a rules file.
    pub fn load(file: &Path) -> anyhow::Result<Rules> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("cannot read the rules file {}: {e}", file.display()))?;
        Rules::parse(&text, &file.display().to_string())
    }

    /// Parses rules from `text` (`name` is the file, for the errors).
    pub fn parse(text: &str, name: &str) -> anyhow::Result<Rules> {
        let rules: Rules = match toml::from_str(text) {
            Ok(rules) => rules,
            Err(e) => {
                let (line, key) = e
                    .span()
                    .map_or((0, String::new()), |span| line_and_key(text, span.start));
                let message = e.message().trim().to_owned();
                bail!("{name}:{line}: key `{key}`: {message}");
            }
        };
        for out in &rules.output {
            if let Some(pattern) = &out.matches
                && let Err(e) = regex::Regex::new(pattern.get_ref())
            {
                let (line, _) = line_and_key(text, pattern.span().start);
                bail!("{name}:{line}: key `matches`: not a valid regular expression: {e}");
            }
            let checks = usize::from(out.equals.is_some())
                + usize::from(out.same_as_baseline)
                + usize::from(out.contains.is_some())
                + usize::from(out.matches.is_some());
            if checks == 0 {
                bail!(
                    "{name}: an [[output]] rule needs one of equals, same_as_baseline, contains, matches"
                );
            }
            if let Some(path) = &out.path
                && !path.is_empty()
                && !path.starts_with('/')
            {
                bail!("{name}: key `path`: {path:?} is not a JSON pointer (it starts with /)");
            }
        }
        if let Some(a) = &rules.annotations
            && !matches!(a.baseline_verdict.get_ref().as_str(), "up" | "down")
        {
            let (line, _) = line_and_key(text, a.baseline_verdict.span().start);
            bail!("{name}:{line}: key `baseline_verdict`: expected \"up\" or \"down\"");
        }
        Ok(rules)
    }
}

/// The 1-based line of byte `at` and the key written on it (the text before `=`, or the
/// table header).
fn line_and_key(text: &str, at: usize) -> (usize, String) {
    let at = at.min(text.len());
    let line = text[..at].matches('\n').count() + 1;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let source = text[start..end].trim();
    let key = match source.split_once('=') {
        Some((key, _)) => key.trim().to_owned(),
        None => source.trim_matches(['[', ']']).to_owned(),
    };
    (line, key)
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        match Rules::parse(text, "rules.toml") {
            Ok(r) => panic!("accepted: {r:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_rules_name_the_file_line_and_key() {
        let e = refused("[tools]\nsame = \"sequence\"\n\n[cost]\nmax_usd = 0.1\n");
        assert!(e.starts_with("rules.toml:5: key `max_usd`:"), "{e}");
        assert!(e.contains("unknown field"), "{e}");
        let e = refused("[tokens]\nmax = \"lots\"\n");
        assert!(e.starts_with("rules.toml:2: key `max`:"), "{e}");
        let e = refused("[[output]]\nnode = \"llm:a\"\nmatches = \"(unclosed\"\n");
        assert!(
            e.starts_with("rules.toml:3: key `matches`: not a valid regular expression"),
            "{e}"
        );
        let e = refused("[tools]\nsame = \"bag\"\n");
        assert!(e.starts_with("rules.toml:2: key `same`:"), "{e}");
        let e = refused("[annotations]\nbaseline_verdict = \"maybe\"\n");
        assert!(e.starts_with("rules.toml:2: key `baseline_verdict`"), "{e}");
        let e = refused("[[output]]\nnode = \"x\"\n");
        assert!(e.contains("needs one of"), "{e}");
    }

    #[test]
    fn a_full_file_reads() {
        let rules = Rules::parse(
            "[tools]\nsame = \"set\"\n[errors]\nno_new = true\n[cost]\nmax = 0.5\nmax_increase_pct = 20\n\
             [[output]]\npath = \"/answer\"\ncontains = \"Paris\"\n[[output]]\nnode = \"llm:a\"\nmatches = \"^ok\"\n\
             [annotations]\nbaseline_verdict = \"up\"\n",
            "r.toml",
        )
        .expect("rules");
        assert_eq!(rules.tools.map(|t| t.same), Some(ToolMatch::Set));
        assert_eq!(rules.output.len(), 2);
        assert_eq!(rules.cost.and_then(|c| c.max_increase_pct), Some(20.0));
    }
}
