//! Reference documents generated from the clap definitions, so that they cannot go stale:
//! `docs/cli.md` (every command's long help) and the flag index of `docs/configuration.md`.
//! Printed by the hidden `mindgate reference cli|flags`; `crates/cli/tests/reference.rs`
//! compares them with the checked-in files.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use clap::{Arg, Command};

/// Width the help text is wrapped at, fixed so the output does not depend on the terminal.
const HELP_WIDTH: usize = 100;

/// How to regenerate the checked-in documents (named in their headers and in test failures).
pub const REGENERATE: &str = "UPDATE_GOLDEN=1 cargo test -p mindgate-cli --test reference";

/// The visible commands of `root`, depth first, each with its full path (`mindgate serve`).
fn visible_commands(root: Command) -> Vec<(String, Command)> {
    let mut root = root.term_width(HELP_WIDTH).max_term_width(HELP_WIDTH);
    root.build();
    let mut out = Vec::new();
    collect(&root, root.get_name().to_owned(), &mut out);
    out
}

fn collect(cmd: &Command, path: String, out: &mut Vec<(String, Command)>) {
    out.push((path.clone(), cmd.clone()));
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        collect(sub, format!("{path} {}", sub.get_name()), out);
    }
}

/// `docs/cli.md`: a table of contents, then every visible command's `--help` text.
pub fn cli_markdown(root: Command) -> String {
    let commands = visible_commands(root);
    let mut md = String::new();
    md.push_str("# CLI reference\n\n");
    let _ = writeln!(
        md,
        "<!-- Generated from crates/cli/src/args.rs by `mindgate reference cli`; do not edit.\n     \
         Regenerate with `{REGENERATE}`. -->\n"
    );
    md.push_str(
        "Every command of the `mindgate` binary with its `--help` text. Environment variables \
         and a one-table index of every flag are in [`configuration.md`](configuration.md).\n\n",
    );
    for (path, cmd) in &commands {
        let depth = path.matches(' ').count();
        let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(
            md,
            "{}- [`{path}`](#{}){}",
            "  ".repeat(depth),
            anchor(path),
            if about.is_empty() {
                String::new()
            } else {
                format!(" — {about}")
            }
        );
    }
    for (path, cmd) in commands {
        let help = cmd.clone().render_long_help().to_string();
        let help: Vec<&str> = help.lines().map(str::trim_end).collect();
        let _ = write!(
            md,
            "\n## `{path}`\n\n```text\n{}\n```\n",
            help.join("\n").trim_end()
        );
    }
    md
}

/// GitHub's anchor for a `## \`mindgate memory bench\`` heading.
fn anchor(path: &str) -> String {
    path.chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// One row of the flag index: a flag and the commands that take it with the same meaning.
struct FlagRow {
    flag: String,
    default: String,
    env: String,
    meaning: String,
    commands: Vec<String>,
}

/// The flag index of `docs/configuration.md`: every `--flag` of every visible command, one row
/// per flag and meaning, with the commands that take it.
pub fn flags_markdown(root: Command) -> String {
    let mut rows: BTreeMap<(String, String), FlagRow> = BTreeMap::new();
    for (path, cmd) in visible_commands(root) {
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if arg.is_hide_set() || long == "help" || long == "version" {
                continue;
            }
            let meaning = arg
                .get_help()
                .map(|h| one_line(&h.to_string()))
                .unwrap_or_default();
            let command = path.strip_prefix("mindgate ").unwrap_or(&path).to_owned();
            let row = rows
                .entry((long.to_owned(), meaning.clone()))
                .or_insert_with(|| FlagRow {
                    flag: flag_spelling(arg, long),
                    default: if arg.get_action().takes_values() {
                        arg.get_default_values()
                            .iter()
                            .map(|v| format!("`{}`", v.to_string_lossy()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    } else {
                        String::new()
                    },
                    env: arg
                        .get_env()
                        .map(|e| format!("`{}`", e.to_string_lossy()))
                        .unwrap_or_default(),
                    meaning,
                    commands: Vec::new(),
                });
            row.commands.push(format!("`{command}`"));
        }
    }
    let mut md = String::new();
    let _ = writeln!(
        md,
        "<!-- Generated from crates/cli/src/args.rs by `mindgate reference flags`; do not edit.\n     \
         Regenerate with `{REGENERATE}`. -->\n"
    );
    md.push_str("| Flag | Commands | Default | Meaning |\n| --- | --- | --- | --- |\n");
    for row in rows.into_values() {
        let default = match (row.default.is_empty(), row.env.is_empty()) {
            (true, true) => String::new(),
            (false, true) => row.default,
            (true, false) => format!("env {}", row.env),
            (false, false) => format!("{}, env {}", row.default, row.env),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            row.flag,
            row.commands.join(", "),
            default,
            row.meaning.replace('|', "\\|")
        );
    }
    md
}

/// `` `--db <PATH>` `` or `` `--json` ``.
fn flag_spelling(arg: &Arg, long: &str) -> String {
    let takes_value = arg.get_action().takes_values();
    let mut spelling = format!("--{long}");
    if let Some(short) = arg.get_short() {
        spelling = format!("-{short}, {spelling}");
    }
    if takes_value {
        let names = arg
            .get_value_names()
            .map(|names| names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .unwrap_or_else(|| vec![arg.get_id().as_str().to_uppercase()]);
        for name in names {
            let _ = write!(spelling, " <{name}>");
        }
    }
    format!("`{spelling}`")
}

/// Help text on one line (the flag index is a table).
fn one_line(help: &str) -> String {
    help.split_whitespace().collect::<Vec<_>>().join(" ")
}
