//! Ignore entries (and IgnoreExtraneous) with no prose comment saying why.

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Edit, Finding, Fix, Severity};
use crate::gitops::ignore::{ARGO_ITEM_KEYS, IgnoreOrigin};
use crate::source::{SourceFile, Span, comment_in};

pub const ID: &str = "ignore-differences-unjustified";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[],
    summary: "ignore entry has no comment giving the reason",
    doc: include_str!("../../rules/ignore-differences-unjustified.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

const HELP: &str = "Add a comment above the entry: `# reason: <controller> owns <field> (<link>)`. A key inside the item is not a reason: Argo CD prunes it and kubectl rejects it.";

/// Is this comment a reason? Not commented-out YAML, not a bare TODO marker.
pub fn is_reason(comment: &str) -> bool {
    let t = comment.trim().trim_start_matches('#').trim();
    if t.is_empty() {
        return false;
    }
    // Bare markers, optionally with (owner), a `reason:` label or punctuation.
    let stripped: String = t
        .to_ascii_lowercase()
        .replace("reason:", "")
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '(' || *c == ')')
        .collect();
    let words: Vec<&str> = stripped.split_whitespace().collect();
    let marker_only = !words.is_empty()
        && words.iter().all(|w| {
            matches!(*w, "todo" | "fixme" | "xxx")
                || (w.starts_with('(') && w.ends_with(')'))
                || w.starts_with("todo(")
                || w.starts_with("fixme(")
        });
    if marker_only {
        return false;
    }
    // Commented-out YAML: `- /spec/replicas`, `- .spec.replicas`, `kind: Deployment`.
    if let Some(rest) = t.strip_prefix("- ") {
        let rest = rest.trim();
        if rest.starts_with('/') || rest.starts_with('.') {
            return false;
        }
    }
    if let Some((key, _)) = t.split_once(':') {
        let key = key.trim().trim_start_matches("- ");
        let object_fields = [
            "apiVersion",
            "metadata",
            "spec",
            "syncPolicy",
            "ignoreDifferences",
        ];
        if ARGO_ITEM_KEYS.contains(&key) || object_fields.contains(&key) {
            return false;
        }
    }
    true
}

/// Comments that belong to the item spanning `lines` (1-based, inclusive): the contiguous
/// comment lines directly above it, and comments on or inside its lines.
fn item_has_reason(file: &SourceFile, first: usize, last: usize) -> bool {
    for line in first..=last.min(file.line_count()) {
        if file.comment_on_line(line).is_some_and(is_reason) {
            return true;
        }
    }
    let mut line = first;
    while line > 1 {
        line -= 1;
        let text = file.line_text(line).trim();
        if !text.starts_with('#') {
            break;
        }
        if comment_in(text).is_some_and(is_reason) {
            return true;
        }
    }
    false
}

fn reason_fix(file: &SourceFile, span: Span) -> Fix {
    let line = file.line_of(span.start as usize);
    let range = file.line_range(line);
    let text = &file.text[range.clone()];
    let indent: String = text
        .chars()
        .take_while(|c| *c == ' ' || *c == '-')
        .map(|c| if c == '-' { ' ' } else { c })
        .collect();
    // Seq items: the comment goes at the `- ` column.
    let dash_col = text.find("- ").filter(|&i| text[..i].trim().is_empty());
    let indent = match dash_col {
        Some(i) => " ".repeat(i),
        None => indent,
    };
    Fix {
        title: "add a reason comment above the entry".into(),
        safe: true,
        edits: vec![Edit {
            span: Span::new(span.file, range.start, range.start),
            // Marker only: the rule keeps failing until a person writes the reason.
            replacement: format!("{indent}# reason: TODO\n"),
        }],
    }
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let map = &model.map;
    for (app, argo) in model.argo_apps() {
        for e in &argo.ignores {
            if e.origin != IgnoreOrigin::App {
                continue;
            }
            let file = map.get(e.span.file);
            let first = file.line_of(e.span.start as usize);
            let last = file.line_of(e.span.end.saturating_sub(1).max(e.span.start) as usize);
            if item_has_reason(&file, first, last) {
                continue;
            }
            out.push(
                Finding::new(
                    ID,
                    Severity::Warning,
                    format!(
                        "ignoreDifferences entry for {} has no comment saying why the difference is expected",
                        e.kind.as_deref().unwrap_or("?")
                    ),
                    e.span,
                )
                .label("no reason given")
                .for_app(app)
                .help(HELP)
                .with_fix(reason_fix(&file, e.span)),
            );
        }
    }
    for e in model.all_argo_settings().into_iter().flat_map(|s| &s.ignores) {
        let IgnoreOrigin::System { key } = &e.origin else {
            continue;
        };
        let file = map.get(e.span.file);
        let line = file.line_of(e.span.start as usize);
        if item_has_reason(&file, line, line) {
            continue;
        }
        out.push(
            Finding::new(
                ID,
                Severity::Warning,
                format!("argocd-cm `{key}` ignores differences for every app without a comment saying why"),
                e.span,
            )
            .label("no reason given")
            .help(HELP)
            .with_fix(reason_fix(&file, e.span)),
        );
    }
    // IgnoreExtraneous on managed objects: same requirement, once per annotation written
    // (a generatorOptions annotation lands on every generated object).
    let mut seen = std::collections::HashSet::new();
    for mo in model.in_scope() {
        let Some(ann) = mo
            .object
            .metadata()
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.entry("argocd.argoproj.io/compare-options"))
        else {
            continue;
        };
        if !ann
            .value
            .as_str()
            .is_some_and(|v| v.contains("IgnoreExtraneous"))
        {
            continue;
        }
        if !seen.insert(ann.key.span) {
            continue;
        }
        let file = map.get(ann.key.span.file);
        let line = file.line_of(ann.key.span.start as usize);
        if item_has_reason(&file, line, line) {
            continue;
        }
        let app = model.app_of(mo);
        out.push(
            super::util::about(
                Finding::new(
                    ID,
                    Severity::Warning,
                    "IgnoreExtraneous without a comment saying why this object may exist live but not in Git",
                    ann.key.span.cover(ann.value.span),
                )
                .label("no reason given")
                .help(HELP),
                app,
                mo,
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn reasons() {
        assert!(is_reason("replicas owned by HPA payments"));
        assert!(is_reason("reason: cert-manager cainjector writes caBundle"));
        assert!(!is_reason("TODO"));
        assert!(!is_reason("FIXME(alice):"));
        assert!(!is_reason("reason: TODO"));
        assert!(!is_reason("jsonPointers: [/spec/replicas]"));
        assert!(!is_reason("- /spec/replicas"));
        assert!(!is_reason("kind: Deployment"));
    }
}
