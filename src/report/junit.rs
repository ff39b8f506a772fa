//! `--format junit`: one test suite per rule, one failing test case per finding at or above
//! `--fail-on`; below it, as `Below::Skipped` (default) or `Below::Failure` choose, so CI
//! test-report widgets show findings by rule. A clean run is one passing case. The shape is
//! the one JUnit readers share (Jenkins' schema, dorny/test-reporter, GitLab): `testsuites`
//! and each `testsuite` with `tests`, `failures`, `errors` (always 0: a finding is a
//! failure, an input the linter could not read is a finding too), `skipped` and `time` in
//! seconds; each `testcase` with `classname`, `name` and `time`. Rules run side by side, so
//! the run's time is on `testsuites` and the parts get 0.

use super::{Finding, Renderer, Report, Severity, repo_path};
use crate::source::SourceMap;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// What a finding below `--fail-on` becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Below {
    /// `<skipped>` with the message: shown, not counted as failed.
    #[default]
    Skipped,
    /// `<failure>` like the others: a report that lists warnings as failed tests.
    Failure,
}

/// `--format junit`; the run's time is the report's `elapsed`.
pub struct Junit {
    pub fail_on: Severity,
    pub below: Below,
}

impl Renderer for Junit {
    fn render(&self, report: &Report) -> String {
        suites(
            report.findings,
            report.map,
            report.prefix,
            self,
            report.elapsed,
        )
    }
}

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

fn suites(
    findings: &[Finding],
    map: &SourceMap,
    prefix: &str,
    options: &Junit,
    time: Duration,
) -> String {
    let failing = |f: &Finding| f.severity >= options.fail_on || options.below == Below::Failure;
    let mut by_rule: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        by_rule.entry(f.rule).or_default().push(f);
    }
    let failures = findings.iter().filter(|f| failing(f)).count();
    let total = findings.len().max(1);
    let skipped = findings.len() - failures;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"gitops-lint\" tests=\"{total}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">",
        time.as_secs_f64()
    );
    if findings.is_empty() {
        out.push_str(
            "  <testsuite name=\"gitops-lint\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"0\">\n",
        );
        out.push_str("    <testcase classname=\"gitops-lint\" name=\"no findings\" time=\"0\"/>\n");
        out.push_str("  </testsuite>\n");
    }
    for (rule, fs) in by_rule {
        let failed = fs.iter().filter(|f| failing(f)).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"{}\" time=\"0\">",
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
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\" time=\"0\">",
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
            if failing(f) {
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
        let opts = |fail_on, below| Junit { fail_on, below };
        let time = Duration::from_millis(1234);
        let xml = suites(
            std::slice::from_ref(&f),
            &map,
            "",
            &opts(Severity::Error, Below::Skipped),
            time,
        );
        assert!(xml.contains(
            "<testsuites name=\"gitops-lint\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" time=\"1.234\">"
        ));
        assert!(xml.contains(
            "<testsuite name=\"r\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" time=\"0\">"
        ));
        assert!(xml.contains("a &lt;b&gt; &amp; &quot;c&quot;"));
        let xml = suites(
            std::slice::from_ref(&f),
            &map,
            "sub",
            &opts(Severity::Warning, Below::Skipped),
            time,
        );
        assert!(xml.contains("<failure type=\"warning\""));
        assert!(xml.contains("file=\"sub/a.yaml\""));
        // Warnings below --fail-on as failures, when asked.
        let xml = suites(&[f], &map, "", &opts(Severity::Error, Below::Failure), time);
        assert!(
            xml.contains("failures=\"1\" errors=\"0\" skipped=\"0\""),
            "{xml}"
        );
        assert!(xml.contains("<failure type=\"warning\""));
        assert!(
            suites(&[], &map, "", &opts(Severity::Error, Below::Skipped), time)
                .contains("no findings")
        );
    }
}
