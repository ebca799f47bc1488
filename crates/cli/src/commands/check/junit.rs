//! A check's outcomes as JUnit XML (one test suite, one test case per rule, a `<failure>`
//! for each failed rule), the report CI systems display.

use super::evaluate::RuleOutcome;

/// Text made safe for XML content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot hold at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The report of run `run_id` checked against `baseline` (`link(node)`: the viewer deep
/// link of a failed rule).
pub fn report(
    run_id: &str,
    baseline: &str,
    outcomes: &[RuleOutcome],
    link: impl Fn(Option<&str>) -> String,
) -> String {
    let failures = outcomes.iter().filter(|o| !o.passed).count();
    let suite = escape(&format!("mindgate check {run_id} against {baseline}"));
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mindgate check\" tests=\"{}\" failures=\"{failures}\">\n  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">\n",
        outcomes.len(),
        outcomes.len()
    );
    for o in outcomes {
        let name = escape(&o.name);
        if o.passed {
            xml.push_str(&format!(
                "    <testcase classname=\"mindgate.check\" name=\"{name}\"/>\n"
            ));
        } else {
            xml.push_str(&format!(
                "    <testcase classname=\"mindgate.check\" name=\"{name}\">\n      <failure message=\"{}\">{}\n{}</failure>\n    </testcase>\n",
                escape(&o.message),
                escape(&o.message),
                escape(&link(o.node_id.as_deref()))
            ));
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}
