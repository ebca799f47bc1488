//! No function in any crate's `src/` is longer than [`MAX_LINES`] lines (from its `fn` to its
//! closing brace; `#[cfg(test)]` modules aside), so a newcomer can read each one at once.
//!
//! [`BEING_SPLIT`] names the functions that are still longer while their crate is being
//! reorganised; it only shrinks: an entry whose function is now short enough (or gone) fails the
//! test too, so the list is emptied as the splits land.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The longest a source function may be, in lines.
const MAX_LINES: usize = 120;

/// `(crate directory, function name)`: longer functions that are being split right now.
const BEING_SPLIT: &[(&str, &str)] = &[];

/// One function longer than [`MAX_LINES`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct LongFunction {
    crate_dir: String,
    name: String,
    file: String,
    line: usize,
    lines: usize,
}

/// Collects the functions of one file (free functions, methods, trait default bodies), skipping
/// `#[cfg(test)]` modules.
struct Lengths<'a> {
    crate_dir: &'a str,
    file: &'a str,
    long: Vec<LongFunction>,
}

impl Lengths<'_> {
    fn measure(&mut self, name: &syn::Ident, start: proc_macro2::Span, end: proc_macro2::Span) {
        let first = start.start().line;
        let lines = end.end().line + 1 - first;
        if lines > MAX_LINES {
            self.long.push(LongFunction {
                crate_dir: self.crate_dir.to_owned(),
                name: name.to_string(),
                file: self.file.to_owned(),
                line: first,
                lines,
            });
        }
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .meta
                .require_list()
                .is_ok_and(|list| list.tokens.to_string().contains("test"))
    })
}

impl<'ast> Visit<'ast> for Lengths<'_> {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if !is_cfg_test(&module.attrs) {
            syn::visit::visit_item_mod(self, module);
        }
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        self.measure(
            &function.sig.ident,
            function.sig.fn_token.span,
            function.block.brace_token.span.close(),
        );
        syn::visit::visit_item_fn(self, function);
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        self.measure(
            &function.sig.ident,
            function.sig.fn_token.span,
            function.block.brace_token.span.close(),
        );
        syn::visit::visit_impl_item_fn(self, function);
    }

    fn visit_trait_item_fn(&mut self, function: &'ast syn::TraitItemFn) {
        if let Some(body) = &function.default {
            self.measure(
                &function.sig.ident,
                function.sig.fn_token.span,
                body.brace_token.span.close(),
            );
        }
        syn::visit::visit_trait_item_fn(self, function);
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Every function longer than [`MAX_LINES`] in `crates/*/src/`.
fn long_functions() -> Vec<LongFunction> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let crate_dir = entry.file_name().to_string_lossy().into_owned();
        let mut files = Vec::new();
        rust_files(&entry.path().join("src"), &mut files);
        for path in files {
            let code = std::fs::read_to_string(&path).unwrap();
            let file = path.strip_prefix(&crates).unwrap().display().to_string();
            let syntax = syn::parse_file(&code).unwrap_or_else(|e| panic!("{file}: {e}"));
            let mut lengths = Lengths {
                crate_dir: &crate_dir,
                file: &file,
                long: Vec::new(),
            };
            lengths.visit_file(&syntax);
            long.extend(lengths.long);
        }
    }
    long.sort();
    long
}

#[test]
fn no_source_function_is_longer_than_the_limit() {
    let long = long_functions();
    let over: Vec<String> = long
        .iter()
        .filter(|f| !BEING_SPLIT.contains(&(f.crate_dir.as_str(), f.name.as_str())))
        .map(|f| format!("{}:{} {} ({} lines)", f.file, f.line, f.name, f.lines))
        .collect();
    let stale: Vec<String> = BEING_SPLIT
        .iter()
        .filter(|(dir, name)| !long.iter().any(|f| f.crate_dir == *dir && f.name == *name))
        .map(|(dir, name)| format!("{dir}: {name}"))
        .collect();
    assert!(
        over.is_empty() && stale.is_empty(),
        "functions over {MAX_LINES} lines (split them):\n  {}\n\
         BEING_SPLIT entries that are short now (remove them from \
         crates/testkit/tests/function_length.rs):\n  {}",
        over.join("\n  "),
        stale.join("\n  ")
    );
}

/// The measure itself: a long function is found, a test module is not.
#[test]
fn the_measure_counts_from_fn_to_the_closing_brace() {
    let body = "    let _ = 1;\n".repeat(MAX_LINES);
    let code = format!(
        "fn long() {{\n{body}}}\nfn short() {{}}\n#[cfg(test)]\nmod tests {{ fn also_long() {{\n{body}}} }}\n"
    );
    let syntax = syn::parse_file(&code).unwrap();
    let mut lengths = Lengths {
        crate_dir: "x",
        file: "x.rs",
        long: Vec::new(),
    };
    lengths.visit_file(&syntax);
    let found: Vec<(&str, usize)> = lengths
        .long
        .iter()
        .map(|f| (f.name.as_str(), f.lines))
        .collect();
    assert_eq!(found, [("long", MAX_LINES + 2)]);
}
