//! Plain-text tables as the list commands print them: columns padded to their widest cell,
//! two spaces apart, no trailing spaces.

/// `header` and `rows` as aligned text, one line each.
pub fn text_table<S: AsRef<str>>(header: &[&str], rows: &[Vec<S>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.as_ref().chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, c) in cells.enumerate() {
            text.push_str(c);
            let width = widths.get(i).copied().unwrap_or(0);
            text.push_str(&" ".repeat(width.saturating_sub(c.chars().count()) + 2));
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for r in rows {
        line(&mut r.iter().map(AsRef::as_ref));
    }
    out
}
