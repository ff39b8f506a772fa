//! `--format junit`: one test suite per rule, one failing test case per finding at or above
//! `--fail-on` (below it: skipped with the message), so CI test-report widgets show findings
//! by rule. A clean run is one passing case.

use super::{Finding, Severity, repo_path};
use crate::source::SourceMap;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Text for an attribute value or element content. Line breaks are character references
/// (`&#10;`): the document means the same, and nothing from a message starts a line of the
/// log the report is printed to (a `::add-mask::` there is a runner command). DEL, C1 and
/// the bidirectional controls are references too; the C0 controls XML 1.0 forbids even as
/// references become `?`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 && c != '\t' => out.push('?'),
            c if super::escape::is_inert_unsafe(c) => {
                out.push_str(&format!("&#x{:x};", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

pub fn render(findings: &[Finding], map: &SourceMap, prefix: &str, fail_on: Severity) -> String {
    let mut by_rule: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        by_rule.entry(f.rule).or_default().push(f);
    }
    let failures = findings.iter().filter(|f| f.severity >= fail_on).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total = findings.len().max(1);
    let _ = writeln!(
        out,
        "<testsuites name=\"gitops-lint\" tests=\"{total}\" failures=\"{failures}\">"
    );
    if findings.is_empty() {
        out.push_str(
            "  <testsuite name=\"gitops-lint\" tests=\"1\" failures=\"0\" skipped=\"0\">\n",
        );
        out.push_str("    <testcase classname=\"gitops-lint\" name=\"no findings\"/>\n");
        out.push_str("  </testsuite>\n");
    }
    for (rule, fs) in by_rule {
        let failed = fs.iter().filter(|f| f.severity >= fail_on).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" skipped=\"{}\">",
            escape(rule),
            fs.len(),
            fs.len() - failed
        );
        for f in fs {
            let path = repo_path(prefix, &map.path(f.primary.span.file));
            let lc = map.line_col(f.primary.span);
            let class = f.app.as_deref().unwrap_or(&path);
            let what = f.object.as_deref().unwrap_or("");
            let name = format!("{path}:{} {what}", lc.line);
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\">",
                escape(class),
                escape(name.trim_end()),
                escape(&path),
                lc.line
            );
            let mut body = f.message.clone();
            if let Some(h) = &f.help {
                body.push_str("\n\n");
                body.push_str(h);
            }
            if f.severity >= fail_on {
                let _ = writeln!(
                    out,
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>",
                    f.severity.as_str(),
                    escape(&f.message),
                    escape(&body)
                );
            } else {
                let _ = writeln!(
                    out,
                    "      <skipped message=\"{}: {}\"/>",
                    f.severity.as_str(),
                    escape(&f.message)
                );
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    #[test]
    fn one_suite_per_rule_and_escaped() {
        let map = SourceMap::new();
        let file = map.add_text("a.yaml", "x: 1\n");
        let f = Finding::new(
            "r",
            Severity::Warning,
            "a <b> & \"c\"",
            Span::new(file, 0, 1),
        );
        let xml = render(std::slice::from_ref(&f), &map, "", Severity::Error);
        assert!(xml.contains("<testsuite name=\"r\" tests=\"1\" failures=\"0\" skipped=\"1\">"));
        assert!(xml.contains("a &lt;b&gt; &amp; &quot;c&quot;"));
        let xml = render(&[f], &map, "sub", Severity::Warning);
        assert!(xml.contains("<failure type=\"warning\""));
        assert!(xml.contains("file=\"sub/a.yaml\""));
        assert!(render(&[], &map, "", Severity::Error).contains("no findings"));
    }
}
