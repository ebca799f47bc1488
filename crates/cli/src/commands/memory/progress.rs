//! Progress bars of `memory export` / `memory import` on standard error — only when it is
//! a terminal (scripts and pipes see nothing but the summary).

use std::io::{IsTerminal, Read, Write};

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` units with `template`, or a hidden one when stderr is not a terminal.
pub fn bar(len: Option<u64>, template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match len {
        Some(len) => ProgressBar::new(len),
        None => ProgressBar::new_spinner(),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// A writer that advances the bar by one per line written (export: one row per line).
pub struct LineCounter<W> {
    /// Where the bytes go.
    pub inner: W,
    /// The bar.
    pub bar: ProgressBar,
}

impl<W: Write> Write for LineCounter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        let lines = buf[..n].iter().filter(|b| **b == b'\n').count();
        if lines > 0 {
            self.bar.inc(lines as u64);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A reader that advances the bar by the bytes read (import: the file's size is known).
pub struct ByteCounter<R> {
    /// Where the bytes come from.
    pub inner: R,
    /// The bar.
    pub bar: ProgressBar,
}

impl<R: Read> Read for ByteCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}
