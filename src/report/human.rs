//! Human output through miette: file:line:col, the snippet, labelled spans, help, the rule
//! id and a hint to `gitops-lint explain`. Labels in other files become related notes.

use super::{Finding, Severity};
use crate::source::{SourceMap, Span};
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan,
};
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

/// The snippet text with control characters (ESC, BEL, …) replaced by `?` of the same byte
/// length, so spans still point where they did and the terminal gets nothing to obey.
fn inert_source(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
                "?".repeat(c.len_utf8())
            } else {
                c.to_string()
            }
        })
        .collect()
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
    let mut context = Vec::new();
    if let Some(app) = &f.app {
        context.push(format!("app {app}"));
    }
    if let Some(obj) = &f.object {
        context.push(obj.clone());
    }
    let message = if context.is_empty() {
        f.message.clone()
    } else {
        format!("{} [{}]", f.message, context.join(", "))
    };
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

pub fn render(findings: &[Finding], map: &SourceMap, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_context_lines(2);
    let mut out = String::new();
    for f in findings {
        let note = to_note(f, map);
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
    out
}

/// The line the human report ends with: how much of the repo was looked at, so a clean run
/// never hides apps that were not rendered.
pub fn coverage(line: &str) -> String {
    format!("{line}\n")
}
