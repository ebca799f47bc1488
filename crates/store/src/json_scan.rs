//! A structural scanner over JSON text already known to be valid: finds a
//! top-level member's text and removes insignificant whitespace without
//! parsing or re-encoding anything.

use std::borrow::Cow;

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ws(bytes[i]) {
        i += 1;
    }
    i
}

/// Index just past the string starting at `bytes[i] == b'"'`.
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Index just past the JSON value starting at `bytes[i]` (valid JSON assumed).
fn skip_value(bytes: &[u8], mut i: usize) -> usize {
    match bytes.get(i) {
        Some(b'"') => skip_string(bytes, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = skip_string(bytes, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bytes.len()
        }
        _ => {
            while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b']') && !is_ws(bytes[i]) {
                i += 1;
            }
            i
        }
    }
}

/// The text of the top-level member `key` of a valid JSON object text, when it
/// occurs exactly once and no key of the object is written with escapes.
pub(crate) fn scan_member<'a>(json: &'a str, key: &[u8]) -> Option<&'a str> {
    let bytes = json.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found: Option<(usize, usize)> = None;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b'}') => break,
            Some(b'"') => {}
            _ => return None,
        }
        let key_end = skip_string(bytes, i);
        let name = bytes.get(i + 1..key_end.checked_sub(1)?)?;
        if name.contains(&b'\\') {
            return None;
        }
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(bytes, i + 1);
        let value_end = skip_value(bytes, i);
        if value_end <= i {
            return None;
        }
        if name == key {
            if found.is_some() {
                return None;
            }
            found = Some((i, value_end));
        }
        i = skip_ws(bytes, value_end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => break,
            _ => return None,
        }
    }
    let (start, end) = found?;
    json.get(start..end)
}

/// Removes insignificant whitespace from valid JSON text (borrowing when there is none).
pub fn minify(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = skip_string(bytes, i),
            b if is_ws(b) => {
                let buf = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
                buf.extend_from_slice(bytes.get(copied..i).unwrap_or_default());
                i = skip_ws(bytes, i);
                copied = i;
            }
            _ => i += 1,
        }
    }
    let Some(mut buf) = out else {
        return Cow::Borrowed(json);
    };
    buf.extend_from_slice(bytes.get(copied..).unwrap_or_default());
    // Only ASCII whitespace outside strings was removed, so UTF-8 is intact.
    match String::from_utf8(buf) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(json),
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn minify_keeps_whitespace_inside_strings() {
        let text = r#"{ "a" : "x y\" z" , "b" : [ 1 , 2 ] }"#;
        assert_eq!(minify(text), r#"{"a":"x y\" z","b":[1,2]}"#);
    }

    #[test]
    fn payload_scan_matches_serde_on_tricky_frames() {
        let frames = [
            r#"{"gm":1,"payload":{"a":"}\"{","b":[{"c":"]"}]},"type":"x"}"#,
            r#" { "type" : "x" , "payload" : { "k" : [ 1 , { } ] } } "#,
            r#"{"payload":{},"extra":{"payload":{"x":1}}}"#,
            r#"{"a":"payload","payload":{"s":"caf\u00e9 \\"}}"#,
        ];
        for frame in frames {
            let v: serde_json::Value = serde_json::from_str(frame).expect("json");
            let scanned = scan_member(frame, b"payload").expect("found");
            let back: serde_json::Value = serde_json::from_str(scanned).expect("scanned json");
            assert_eq!(back, v["payload"], "{frame}");
            let min: serde_json::Value = serde_json::from_str(&minify(scanned)).expect("minified");
            assert_eq!(min, v["payload"], "{frame}");
        }
        // Escaped keys and duplicates are left to serde.
        assert_eq!(scan_member(r#"{"p\u0061yload":{}}"#, b"payload"), None);
        assert_eq!(
            scan_member(r#"{"payload":{},"payload":{}}"#, b"payload"),
            None
        );
    }
}
