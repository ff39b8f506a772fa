//! `--format github`: workflow-command annotations (`::error file=…,line=…,endLine=…,title=…::`),
//! which GitHub shows on the pull request's changed files without any token.

use super::{Finding, Severity, repo_path};
use crate::source::SourceMap;
use std::fmt::Write;

/// Escaping for the message part of a workflow command.
fn escape_data(s: &str) -> String {
    let s = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    // ESC and the other controls would reach the log raw.
    super::escape::escape_controls(&s)
}

/// Escaping for `key=value` properties: also `:` and `,`, which delimit them.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

pub fn render(findings: &[Finding], map: &SourceMap, prefix: &str) -> String {
    let mut out = String::new();
    for f in findings {
        let path = map.path(f.primary.span.file);
        let start = map.line_col(f.primary.span);
        let end = map.end_line_col(f.primary.span);
        let title = match &f.object {
            Some(o) => format!("{} ({o})", f.rule),
            None => f.rule.to_string(),
        };
        let mut message = f.message.clone();
        if let Some(h) = &f.help {
            message.push_str("\n\n");
            message.push_str(h);
        }
        let mut props = String::new();
        if !path.is_empty() {
            let _ = write!(
                props,
                "file={},line={},endLine={},",
                escape_property(&repo_path(prefix, &path)),
                start.line,
                end.line.max(start.line)
            );
            // Columns only make sense on one line (GitHub ignores them otherwise).
            if end.line == start.line {
                let _ = write!(props, "col={},endColumn={},", start.column, end.column);
            }
        }
        let _ = write!(props, "title={}", escape_property(&title));
        let _ = writeln!(
            out,
            "::{} {props}::{}",
            command(f.severity),
            escape_data(&message)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    #[test]
    fn annotation_with_location_and_escapes() {
        let map = SourceMap::new();
        let file = map.add_text("apps/a.yaml", "a: 1\nreplicas: 3\n");
        let f = Finding::new(
            "hpa-replicas-conflict",
            Severity::Error,
            "50% off\nnext",
            Span::new(file, 5, 16),
        )
        .object("Deployment/prod/a");
        let text = render(&[f], &map, "deploy");
        assert_eq!(
            text,
            "::error file=deploy/apps/a.yaml,line=2,endLine=2,col=1,endColumn=12,title=hpa-replicas-conflict (Deployment/prod/a)::50%25 off%0Anext\n"
        );
    }
}
