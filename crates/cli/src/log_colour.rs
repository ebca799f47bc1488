//! Whether the logs on standard error carry ANSI colour codes: only on a terminal, and
//! never when `NO_COLOR` is set to a non-empty value (<https://no-color.org>).

use std::ffi::OsString;
use std::io::IsTerminal as _;

use mindgate_home::env;

/// True when the logs written to standard error may be coloured.
pub fn stderr_colour() -> bool {
    colour_allowed(
        std::io::stderr().is_terminal(),
        std::env::var_os(env::NO_COLOR),
    )
}

fn colour_allowed(terminal: bool, no_color: Option<OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour_allowed(true, None));
        assert!(colour_allowed(true, Some(OsString::new())));
        assert!(!colour_allowed(true, Some(OsString::from("1"))));
        assert!(!colour_allowed(false, None));
    }
}
