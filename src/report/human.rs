//! Human output through miette: file:line:col, the snippet, labelled spans, help, the rule
//! id and a hint to `gitops-lint explain`. Labels in other files become related notes.

use super::{Finding, Renderer, Report, Severity};
use crate::source::{SourceMap, Span};
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan,
};
use std::collections::{HashMap, HashSet};
use std::fmt;

struct Note {
    message: String,
    severity: miette::Severity,
    code: Option<String>,
    help: Option<String>,
    source: NamedSource<String>,
    labels: Vec<LabeledSpan>,
    related: Vec<Note>,
}

impl fmt::Debug for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for Note {}

impl Diagnostic for Note {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.code
            .as_ref()
            .map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }
    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(self.related.iter().map(|n| n as &dyn Diagnostic)))
    }
}

fn miette_severity(s: Severity) -> miette::Severity {
    match s {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
        Severity::Info => miette::Severity::Advice,
    }
}

fn source_span(span: Span) -> SourceSpan {
    SourceSpan::new((span.start as usize).into(), span.len())
}

fn named(map: &SourceMap, file: crate::source::FileId) -> NamedSource<String> {
    let f = map.get(file);
    NamedSource::new(esc(&f.path), inert_source(&f.text)).with_language("yaml")
}

use super::escape::escape_controls as esc;

/// The snippet text with control characters (ESC, BEL, C1, …) and bidirectional controls
/// replaced by `?` of the same byte length, so spans still point where they did and the
/// terminal gets nothing to obey. Carriage returns stay (CRLF files).
fn inert_source(text: &str) -> String {
    let hostile = |c: char| super::escape::is_inert_unsafe(c) && c != '\r';
    if !text.chars().any(hostile) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if hostile(c) {
                "?".repeat(c.len_utf8())
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The message with the app and object it concerns: `… [app web, Deployment/shop/web]`.
fn with_context(f: &Finding) -> String {
    let context: Vec<String> = f
        .app
        .iter()
        .map(|app| match &f.cluster {
            Some(cluster) => format!("app {app} in {cluster}"),
            None => format!("app {app}"),
        })
        .chain(f.object.iter().cloned())
        .collect();
    if context.is_empty() {
        f.message.clone()
    } else {
        format!("{} [{}]", f.message, context.join(", "))
    }
}

fn to_note(f: &Finding, map: &SourceMap) -> Note {
    let file = f.primary.span.file;
    let mut labels = vec![LabeledSpan::new_primary_with_span(
        Some(esc(&f.primary.text)).filter(|t| !t.is_empty()),
        source_span(f.primary.span),
    )];
    let mut related = Vec::new();
    for l in &f.secondary {
        if l.span.file == file {
            labels.push(LabeledSpan::new_with_span(
                Some(esc(&l.text)),
                source_span(l.span),
            ));
        } else {
            related.push(Note {
                message: esc(&l.text),
                severity: miette::Severity::Advice,
                code: None,
                help: None,
                source: named(map, l.span.file),
                labels: vec![LabeledSpan::new_primary_with_span(
                    Some(esc(&l.text)),
                    source_span(l.span),
                )],
                related: vec![],
            });
        }
    }
    let message = with_context(f);
    let help = match &f.help {
        Some(h) => format!("{h}\nSee `gitops-lint explain {}`.", f.rule),
        None => format!("See `gitops-lint explain {}`.", f.rule),
    };
    Note {
        message: esc(&message),
        severity: miette_severity(f.severity),
        code: Some(f.rule.to_string()),
        help: Some(esc(&help)),
        source: named(map, file),
        labels,
        related,
    }
}

/// `--format human`: the report as people read it. Errors first, then warnings, then info;
/// within a severity one section per rule (a header with its count, its findings in path
/// order, large groups of one kind compacted after their first); then the count per rule,
/// the totals, the coverage line, in diff mode what the comparison found, and the findings
/// the baseline hides. `quiet` keeps the findings alone.
pub struct Human {
    pub color: bool,
    pub quiet: bool,
}

impl Renderer for Human {
    fn render(&self, report: &Report) -> String {
        let (mut text, counts) = sections(report.findings, report.map, self.color);
        if self.quiet {
            return text;
        }
        text.push_str(&counts);
        if let Some(line) = report.coverage {
            text.push_str(line);
            text.push('\n');
        }
        if let Some(c) = &report.comparison {
            text.push_str(&format!(
                "\ncompared with {} ({}): {} new finding(s), {} fixed\n",
                c.base_rev,
                &c.base_commit[..c.base_commit.len().min(12)],
                report.findings.len(),
                c.fixed.len()
            ));
            for f in c.fixed {
                text.push_str(&format!(
                    "  fixed: {} {}\n",
                    f.rule,
                    f.object
                        .as_deref()
                        .unwrap_or(&c.base_map.path(f.primary.span.file))
                ));
            }
            for app in c.apps {
                text.push_str(&format!(
                    "\nrendered changes of app {} (+{} -{}):\n{}",
                    app.app, app.added, app.removed, app.diff
                ));
            }
        }
        if report.baselined > 0 {
            text.push_str(&format!(
                "{} known finding(s) hidden by the baseline\n",
                report.baselined
            ));
        }
        text
    }
}

/// The findings by severity and rule, and the counts that close them.
fn sections(findings: &[Finding], map: &SourceMap, color: bool) -> (String, String) {
    let sections = by_severity_and_rule(findings);
    let mut ordered: Vec<Finding> = Vec::with_capacity(findings.len());
    let mut headers: Vec<(usize, String)> = Vec::new();
    for (severity, rule, members) in &sections {
        headers.push((
            ordered.len(),
            format!(
                "── {} · {rule} · {} finding(s) ──\n\n",
                severity.as_str(),
                members.len()
            ),
        ));
        ordered.extend(members.iter().map(|f| (*f).clone()));
    }
    let full = render_sections(&ordered, map, color, COMPACT_GROUP, &headers);
    // The totals line is the last line; the per-rule counts go just before it.
    let body_end = full.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    let (body, totals) = full.split_at(body_end);
    let mut footer = String::new();
    if !sections.is_empty() {
        footer.push_str("by rule:\n");
        for (severity, rule, members) in &sections {
            footer.push_str(&format!(
                "  {:<8} {:<40} {}\n",
                severity.as_str(),
                rule,
                members.len()
            ));
        }
    }
    footer.push_str(totals);
    (
        body.to_string(),
        super::escape::break_command_lines(&footer),
    )
}

/// Sections of the report: severities from error down, within each the rules in the order
/// their first finding comes, each with its findings in report order.
fn by_severity_and_rule(findings: &[Finding]) -> Vec<(Severity, &'static str, Vec<&Finding>)> {
    let mut sections: Vec<(Severity, &'static str, Vec<&Finding>)> = Vec::new();
    for severity in [Severity::Error, Severity::Warning, Severity::Info] {
        for f in findings.iter().filter(|f| f.severity == severity) {
            match sections
                .iter_mut()
                .find(|(s, r, _)| *s == severity && *r == f.rule)
            {
                Some((_, _, members)) => members.push(f),
                None => sections.push((severity, f.rule, vec![f])),
            }
        }
    }
    sections
}

/// Every finding in full, snippet and help each (the fixture snapshots pin every label).
pub fn render_all(findings: &[Finding], map: &SourceMap, color: bool) -> String {
    render_with(findings, map, color, usize::MAX)
}

fn render_with(findings: &[Finding], map: &SourceMap, color: bool, compact_group: usize) -> String {
    render_sections(findings, map, color, compact_group, &[])
}

/// The findings in the order given, with `headers` (position, text) written before the
/// finding at that position, and the totals line.
fn render_sections(
    findings: &[Finding],
    map: &SourceMap,
    color: bool,
    compact_group: usize,
    headers: &[(usize, String)],
) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_context_lines(2);
    let mut out = String::new();
    // Many findings of one kind (one rule, one severity, one fix: 69 charts not fetched, 40
    // Applications sharing a namespace) read as a wall of identical snippets. The first is
    // shown in full; the others of a large group get two lines each: the message and where.
    let mut group_size: HashMap<GroupKey, usize> = HashMap::new();
    for f in findings {
        *group_size.entry(group_key(f)).or_default() += 1;
    }
    let mut shown_in_full: HashSet<GroupKey> = HashSet::new();
    for (i, f) in findings.iter().enumerate() {
        if let Some((_, header)) = headers.iter().find(|(at, _)| *at == i) {
            out.push_str(&super::escape::escape_controls(header));
        }
        let key = group_key(f);
        if group_size[&key] >= compact_group && !shown_in_full.insert(key) {
            out.push_str(&compact(f, map));
            continue;
        }
        let mut note = to_note(f, map);
        // Under a section header that names the rule, miette's code line would repeat it.
        if !headers.is_empty() {
            note.code = None;
        }
        if handler.render_report(&mut out, &note).is_err() {
            let lc = map.line_col(f.primary.span);
            out.push_str(&format!(
                "{}:{}:{}: {} [{}] {}\n",
                esc(&map.path(f.primary.span.file)),
                lc.line,
                lc.column,
                f.severity.as_str(),
                f.rule,
                esc(&f.message)
            ));
        }
        out.push('\n');
    }
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    out.push_str(&format!(
        "{} error(s), {} warning(s), {} info\n",
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info)
    ));
    // miette wraps long messages at a space, which can put a message's ` ::` at a line start.
    super::escape::break_command_lines(&out)
}

/// A group of at least this many findings of one kind shows only its first one in full.
const COMPACT_GROUP: usize = 4;

type GroupKey<'a> = (&'a str, Severity, Option<&'a str>);

fn group_key(f: &Finding) -> GroupKey<'_> {
    (f.rule, f.severity, f.help.as_deref())
}

/// A finding of a group already shown in full: its message (with app and object) and where,
/// in two lines; the snippet and the help are the group's first finding's.
fn compact(f: &Finding, map: &SourceMap) -> String {
    let lc = map.line_col(f.primary.span);
    let mark = match f.severity {
        Severity::Error => "×",
        Severity::Warning => "⚠",
        Severity::Info => "☞",
    };
    format!(
        "  {mark} {}\n    at {}:{}:{} · {} (help as above)\n\n",
        esc(&with_context(f)),
        esc(&map.path(f.primary.span.file)),
        lc.line,
        lc.column,
        f.rule
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(findings: &[Finding], map: &SourceMap) -> String {
        Human {
            color: false,
            quiet: false,
        }
        .render(&Report::of(findings, map))
    }

    fn not_fetched(map: &SourceMap, app: &str) -> Finding {
        let file = map.add_text(format!("apps/{app}.yaml"), "spec:\n  chart: web\n");
        Finding::new(
            "offline-unrenderable-input",
            Severity::Warning,
            format!("app `{app}` is only partly linted"),
            Span::new(file, 8, 18),
        )
        .help("run `gitops-lint fetch`")
        .app(app)
    }

    #[test]
    fn severity_first_one_section_per_rule_and_counts_per_rule() {
        let map = SourceMap::new();
        let file = map.add_text("a.yaml", "a: 1\nb: 2\nc: 3\nd: 4\n");
        let at = |rule, severity, line: usize| {
            Finding::new(
                rule,
                severity,
                format!("{rule} on {line}"),
                Span::new(file, line * 5, line * 5 + 4),
            )
        };
        // In path order the rules alternate and the error comes last.
        let findings = [
            at("shared-resource", Severity::Warning, 0),
            at("unpinned-source", Severity::Warning, 1),
            at("shared-resource", Severity::Warning, 2),
            at("hpa-replicas-conflict", Severity::Error, 3),
        ];
        let text = plain(&findings, &map);
        let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("── ")).collect();
        assert_eq!(
            headers,
            [
                "── error · hpa-replicas-conflict · 1 finding(s) ──",
                "── warning · shared-resource · 2 finding(s) ──",
                "── warning · unpinned-source · 1 finding(s) ──",
            ]
        );
        // The header names the rule: no finding repeats it on a line of its own.
        assert!(
            !text.lines().any(|l| [
                "hpa-replicas-conflict",
                "shared-resource",
                "unpinned-source"
            ]
            .contains(&l.trim())),
            "{text}"
        );
        let pos = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
        assert!(pos("hpa-replicas-conflict on 3") < pos("shared-resource on 0"));
        assert!(pos("shared-resource on 2") < pos("unpinned-source on 1"));
        assert!(
            text.ends_with(
                "by rule:\n  error    hpa-replicas-conflict                    1\n  warning  shared-resource                          2\n  warning  unpinned-source                          1\n1 error(s), 3 warning(s), 0 info\n"
            ),
            "{text}"
        );
        let quiet = Human {
            color: false,
            quiet: true,
        }
        .render(&Report::of(&findings, &map));
        assert!(
            text.starts_with(&quiet) && !quiet.contains("by rule:"),
            "{quiet}"
        );
    }

    #[test]
    fn a_large_group_of_one_kind_shows_its_first_in_full_and_the_rest_in_two_lines() {
        let map = SourceMap::new();
        let names = ["a", "b", "c", "d"];
        let findings: Vec<Finding> = names.iter().map(|n| not_fetched(&map, n)).collect();
        let text = plain(&findings, &map);
        assert_eq!(text.matches("╭─[").count(), 1, "{text}");
        assert_eq!(text.matches("help:").count(), 1, "{text}");
        for n in &names[1..] {
            assert!(
                text.contains(&format!(
                    "  ⚠ app `{n}` is only partly linted [app {n}]\n    at apps/{n}.yaml:2:3 · offline-unrenderable-input (help as above)\n"
                )),
                "{text}"
            );
        }
        assert!(
            text.ends_with(
                "by rule:\n  warning  offline-unrenderable-input               4\n0 error(s), 4 warning(s), 0 info\n"
            ),
            "{text}"
        );
        // Every one in full for the snapshots; a small group is never compacted.
        assert_eq!(render_all(&findings, &map, false).matches("╭─[").count(), 4);
        assert_eq!(plain(&findings[..3], &map).matches("╭─[").count(), 3);
    }
}
