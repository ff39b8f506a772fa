//! `--format github`: workflow-command annotations (`::error file=…,line=…,endLine=…,title=…::`),
//! which GitHub shows on the pull request's changed files without any token. GitHub keeps 10
//! annotations per level per step (and 50 per job) and drops the rest silently, so the ones
//! that matter go first: errors, then warnings, then notices, in diff mode those on the
//! changed lines first; at most `max_per_level` of each, then one notice saying how many were
//! left out and where they are.

use super::{Finding, Renderer, Report, Severity, repo_path};
use crate::source::SourceMap;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Annotations of one level GitHub shows for a step.
pub const DEFAULT_MAX_PER_LEVEL: usize = 10;

/// `--format github`. In diff mode the findings on the lines the change adds or rewrites
/// (the report's comparison) are annotated first.
pub struct Annotations {
    /// Annotations of each level (error, warning, notice) written at most.
    pub max_per_level: usize,
}

impl Default for Annotations {
    fn default() -> Self {
        Annotations {
            max_per_level: DEFAULT_MAX_PER_LEVEL,
        }
    }
}

impl Renderer for Annotations {
    fn render(&self, report: &Report) -> String {
        let changed = report.comparison.as_ref().map(|c| c.changed_lines);
        annotations(
            report.findings,
            report.map,
            report.prefix,
            self.max_per_level,
            changed,
        )
    }
}

type ChangedLines = BTreeMap<String, Vec<(usize, usize)>>;

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

/// The annotations to write, in order: by level, then (diff mode) on a changed line first,
/// then the report's order; and how many were left out.
fn select<'a>(
    findings: &'a [Finding],
    map: &SourceMap,
    max_per_level: usize,
    changed: Option<&ChangedLines>,
) -> (Vec<&'a Finding>, usize) {
    let on_changed_line = |f: &Finding| {
        changed.is_some_and(|changed| {
            let line = map.line_col(f.primary.span).line;
            changed
                .get(&map.path(f.primary.span.file))
                .is_some_and(|ranges| ranges.iter().any(|&(a, b)| a <= line && line <= b))
        })
    };
    let mut chosen = Vec::new();
    let mut left_out = 0;
    for severity in [Severity::Error, Severity::Warning, Severity::Info] {
        let mut level: Vec<(bool, &Finding)> = findings
            .iter()
            .filter(|f| f.severity == severity)
            .map(|f| (!on_changed_line(f), f))
            .collect();
        // Stable: the report's order within each group.
        level.sort_by_key(|(elsewhere, _)| *elsewhere);
        let mut room = max_per_level;
        // The closing notice is a notice too: it takes the last notice's place.
        if severity == Severity::Info && (left_out > 0 || level.len() > room) {
            room = room.saturating_sub(1);
        }
        left_out += level.len().saturating_sub(room);
        chosen.extend(level.into_iter().take(room).map(|(_, f)| f));
    }
    (chosen, left_out)
}

fn annotations(
    findings: &[Finding],
    map: &SourceMap,
    prefix: &str,
    max_per_level: usize,
    changed: Option<&ChangedLines>,
) -> String {
    let mut out = String::new();
    let (chosen, left_out) = select(findings, map, max_per_level, changed);
    for f in chosen {
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
    if left_out > 0 {
        let _ = writeln!(
            out,
            "::notice title=gitops-lint::{}",
            escape_data(&format!(
                "{left_out} more finding(s) not annotated (GitHub shows {} per level in a step; --max-annotations raises the cap): the job summary counts them, code scanning (the SARIF upload) and `gitops-lint` run locally list them all",
                DEFAULT_MAX_PER_LEVEL
            ))
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
        let text = annotations(&[f], &map, "deploy", DEFAULT_MAX_PER_LEVEL, None);
        assert_eq!(
            text,
            "::error file=deploy/apps/a.yaml,line=2,endLine=2,col=1,endColumn=12,title=hpa-replicas-conflict (Deployment/prod/a)::50%25 off%0Anext\n"
        );
    }

    #[test]
    fn errors_first_at_most_ten_per_level_then_one_notice() {
        let map = SourceMap::new();
        let text = "x: 1\n".repeat(60);
        let file = map.add_text("a.yaml", text);
        // In path order: 20 notices, 20 warnings, 15 errors interleaved.
        let findings: Vec<Finding> = (0..55)
            .map(|i| {
                let severity = match i % 4 {
                    0 | 3 if i < 40 => Severity::Info,
                    1 => Severity::Warning,
                    _ => Severity::Error,
                };
                Finding::new(
                    "r",
                    severity,
                    format!("m{i}"),
                    Span::new(file, i * 5, i * 5 + 4),
                )
            })
            .collect();
        let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        assert!(
            count(Severity::Error) > 10
                && count(Severity::Warning) > 10
                && count(Severity::Info) > 10
        );
        let out = annotations(&findings, &map, "", DEFAULT_MAX_PER_LEVEL, None);
        let lines: Vec<&str> = out.lines().collect();
        let kinds: Vec<&str> = lines
            .iter()
            .map(|l| l.split([' ', ':']).nth(2).unwrap_or(""))
            .collect();
        assert_eq!(kinds[..10], ["error"; 10]);
        assert_eq!(kinds[10..20], ["warning"; 10]);
        // Nine notices and the closing one: ten notices in all.
        assert_eq!(kinds[20..], ["notice"; 10]);
        let left = findings.len() - 29;
        assert!(
            lines[29].starts_with(&format!(
                "::notice title=gitops-lint::{left} more finding(s) not annotated"
            )),
            "{}",
            lines[29]
        );
        // Diff mode: on a changed line first, within the level.
        let changed: BTreeMap<String, Vec<(usize, usize)>> =
            [("a.yaml".to_string(), vec![(50, 55)])]
                .into_iter()
                .collect();
        let out = annotations(&findings, &map, "", 2, Some(&changed));
        let first: Vec<&str> = out.lines().take(2).collect();
        assert!(
            first
                .iter()
                .all(|l| l.starts_with("::error file=a.yaml,line=5")),
            "{out}"
        );
        // No cap hit: no closing notice.
        let few = annotations(&findings[..3], &map, "", DEFAULT_MAX_PER_LEVEL, None);
        assert_eq!(few.lines().count(), 3);
    }
}
