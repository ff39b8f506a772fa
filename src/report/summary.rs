//! The markdown summary: the job summary (`$GITHUB_STEP_SUMMARY`) and the body of the sticky
//! pull-request comment. Counts, the top findings, and per app the rendered manifest diff in
//! a collapsible section.

use super::{Finding, Renderer, Report, Severity, repo_path};
use crate::source::SourceMap;
use std::fmt::Write;

/// Hidden marker that identifies our sticky comment among the PR's comments.
pub const MARKER: &str = "<!-- gitops-lint -->";

/// GitHub rejects comment bodies over 65,536 characters; keep well under.
pub const MAX_COMMENT_CHARS: usize = 60_000;

const TOP_FINDINGS: usize = 20;
const MAX_DIFF_LINES: usize = 300;

/// The rendered manifest change of one app between two revisions.
#[derive(Clone, Debug, PartialEq)]
pub struct AppDiff {
    pub app: String,
    /// Unified diff of the rendered manifests (empty when unchanged).
    pub diff: String,
    pub added: usize,
    pub removed: usize,
}

/// The markdown summary of a report, at most `max_chars` long (app diffs that do not fit are
/// counted, not cut).
pub struct Markdown {
    pub max_chars: usize,
}

impl Renderer for Markdown {
    fn render(&self, report: &Report) -> String {
        let fixed: Vec<(&str, &str)> = report
            .comparison
            .iter()
            .flat_map(|c| c.fixed)
            .map(|f| (f.rule, f.message.as_str()))
            .collect();
        Summary {
            findings: report.findings,
            map: report.map,
            prefix: report.prefix,
            base: report.comparison.as_ref().map(|c| c.base_rev),
            fixed: &fixed,
            diffs: report.comparison.as_ref().map_or(&[], |c| c.apps),
            baselined: report.baselined,
        }
        .render(self.max_chars)
    }
}

struct Summary<'a> {
    findings: &'a [Finding],
    map: &'a SourceMap,
    /// The linted directory relative to the repository root.
    prefix: &'a str,
    /// `diff` mode: the base revision and the findings the change fixes (rule, message).
    base: Option<&'a str>,
    fixed: &'a [(&'a str, &'a str)],
    diffs: &'a [AppDiff],
    /// Findings hidden because the baseline already has them.
    baselined: usize,
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn icon(s: Severity) -> &'static str {
    match s {
        Severity::Error => "🔴 error",
        Severity::Warning => "🟡 warning",
        Severity::Info => "🔵 info",
    }
}

/// The sections of what comparing the two revisions found, by rule: the heading and the
/// rule whose findings it lists.
const CHANGE_SECTIONS: &[(&str, &str)] = &[
    (
        "Changes the controller cannot apply",
        crate::rules::immutable_field_changed::ID,
    ),
    ("Changes that delete", crate::rules::pr_deletes_data::ID),
];

/// Most findings listed per section (they are all in the table's count).
const MAX_CHANGE_ITEMS: usize = 30;

impl Summary<'_> {
    /// `diff` mode: per app, the changes its controller cannot apply and those that delete,
    /// each with where and what (the table above shows only the top findings).
    fn changes_sections(&self, out: &mut String) {
        for (heading, rule) in CHANGE_SECTIONS {
            let mut by_app: std::collections::BTreeMap<&str, Vec<&Finding>> = Default::default();
            for f in self.findings.iter().filter(|f| f.rule == *rule) {
                by_app
                    .entry(f.app.as_deref().unwrap_or("(no app)"))
                    .or_default()
                    .push(f);
            }
            if by_app.is_empty() {
                continue;
            }
            let total: usize = by_app.values().map(Vec::len).sum();
            let _ = writeln!(out, "### {heading} ({total})\n");
            let mut listed = 0;
            for (app, findings) in &by_app {
                let _ = writeln!(out, "- app `{}`", md_escape(app));
                for f in findings {
                    if listed == MAX_CHANGE_ITEMS {
                        break;
                    }
                    listed += 1;
                    let path = repo_path(self.prefix, &self.map.path(f.primary.span.file));
                    let line = self.map.line_col(f.primary.span).line;
                    let _ = writeln!(
                        out,
                        "  - {} `{}:{line}`: {}",
                        icon(f.severity),
                        md_escape(&path),
                        md_escape(&f.message)
                    );
                }
            }
            if total > listed {
                let _ = writeln!(out, "\n…and {} more.", total - listed);
            }
            out.push('\n');
        }
    }

    fn render(&self, max_chars: usize) -> String {
        let mut out = String::new();
        let count = |s: Severity| self.findings.iter().filter(|f| f.severity == s).count();
        let _ = writeln!(out, "{MARKER}");
        let what = if self.base.is_some() {
            "new findings"
        } else {
            "findings"
        };
        let _ = writeln!(
            out,
            "## gitops-lint: {} {what} ({} errors, {} warnings, {} info)\n",
            self.findings.len(),
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info)
        );
        if let Some(base) = self.base {
            let _ = writeln!(
                out,
                "Compared with `{}`: **{}** new, **{}** fixed, {} app(s) with rendered changes.\n",
                md_escape(base),
                self.findings.len(),
                self.fixed.len(),
                self.diffs.iter().filter(|d| !d.diff.is_empty()).count()
            );
        }
        if self.baselined > 0 {
            let _ = writeln!(
                out,
                "{} known finding(s) hidden by the baseline.\n",
                self.baselined
            );
        }
        if !self.findings.is_empty() {
            out.push_str("| Severity | Rule | Where | Finding |\n|---|---|---|---|\n");
            let mut sorted: Vec<&Finding> = self.findings.iter().collect();
            sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
            for f in sorted.iter().take(TOP_FINDINGS) {
                let path = repo_path(self.prefix, &self.map.path(f.primary.span.file));
                let line = self.map.line_col(f.primary.span).line;
                let _ = writeln!(
                    out,
                    "| {} | `{}` | `{}:{line}` | {} |",
                    icon(f.severity),
                    f.rule,
                    md_escape(&path),
                    md_escape(&f.message)
                );
            }
            if self.findings.len() > TOP_FINDINGS {
                let _ = writeln!(out, "\n…and {} more.", self.findings.len() - TOP_FINDINGS);
            }
            out.push('\n');
        }
        if self.base.is_some() {
            self.changes_sections(&mut out);
        }
        if !self.fixed.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>Fixed by this change ({})</summary>\n",
                self.fixed.len()
            );
            for (rule, message) in self.fixed.iter().take(TOP_FINDINGS) {
                let _ = writeln!(out, "- `{rule}`: {}", md_escape(message));
            }
            out.push_str("\n</details>\n\n");
        }
        let mut omitted = 0;
        for d in self.diffs.iter().filter(|d| !d.diff.is_empty()) {
            let mut section = String::new();
            let _ = writeln!(
                section,
                "<details><summary>Rendered changes: <code>{}</code> (+{} −{})</summary>\n\n```diff",
                md_escape(&d.app),
                d.added,
                d.removed
            );
            let lines: Vec<&str> = d.diff.lines().collect();
            for l in lines.iter().take(MAX_DIFF_LINES) {
                // A fence inside the diff would end the code block early.
                section.push_str(&l.replace("```", "`\u{200b}``"));
                section.push('\n');
            }
            if lines.len() > MAX_DIFF_LINES {
                let _ = writeln!(section, "… {} more lines", lines.len() - MAX_DIFF_LINES);
            }
            section.push_str("```\n\n</details>\n\n");
            if out.len() + section.len() + 200 > max_chars {
                omitted += 1;
            } else {
                out.push_str(&section);
            }
        }
        if omitted > 0 {
            let _ = writeln!(
                out,
                "{omitted} more app diff(s) omitted (size limit); run `gitops-lint diff` locally to see them."
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    #[test]
    fn counts_findings_and_folds_diffs() {
        let map = SourceMap::new();
        let file = map.add_text("a.yaml", "x: 1\n");
        let f = Finding::new("r", Severity::Error, "bad | thing", Span::new(file, 0, 1));
        let diffs = [AppDiff {
            app: "payments".into(),
            diff: "-replicas: 3\n+replicas: 4\n".into(),
            added: 1,
            removed: 1,
        }];
        let text = Summary {
            findings: &[f],
            map: &map,
            prefix: "",
            base: Some("main"),
            fixed: &[],
            diffs: &diffs,
            baselined: 0,
        }
        .render(MAX_COMMENT_CHARS);
        assert!(text.starts_with(MARKER));
        assert!(text.contains("1 new findings (1 errors, 0 warnings, 0 info)"));
        assert!(text.contains("bad \\| thing"));
        assert!(text.contains("<details><summary>Rendered changes: <code>payments</code> (+1 −1)"));
        assert!(text.contains("```diff\n-replicas: 3\n+replicas: 4\n```"));
        assert!(!text.contains("### Changes"));
    }

    #[test]
    fn diff_mode_lists_changes_per_app_by_kind() {
        let map = SourceMap::new();
        let file = map.add_text("apps/shop/job.yaml", "a: 1\nb: 2\n");
        let finding = |rule: &'static str, app: &str, at: usize| {
            Finding::new(
                rule,
                Severity::Error,
                format!("{rule} in {app}"),
                Span::new(file, at, at + 1),
            )
            .app(app)
        };
        let findings = [
            finding(crate::rules::immutable_field_changed::ID, "shop", 0),
            finding(crate::rules::pr_deletes_data::ID, "storage", 5),
            finding(crate::rules::immutable_field_changed::ID, "billing", 5),
        ];
        let summary = |base| {
            Summary {
                findings: &findings,
                map: &map,
                prefix: "",
                base,
                fixed: &[],
                diffs: &[],
                baselined: 0,
            }
            .render(MAX_COMMENT_CHARS)
        };
        let text = summary(Some("main"));
        let cannot = text
            .find("### Changes the controller cannot apply (2)")
            .unwrap_or_else(|| panic!("{text}"));
        let delete = text
            .find("### Changes that delete (1)")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(cannot < delete, "{text}");
        let section = &text[cannot..delete];
        assert!(section.contains("- app `billing`\n  - 🔴 error `apps/shop/job.yaml:2`: immutable-field-changed in billing\n- app `shop`\n"), "{section}");
        assert!(
            text[delete..].contains(
                "- app `storage`\n  - 🔴 error `apps/shop/job.yaml:2`: pr-deletes-data in storage"
            ),
            "{text}"
        );
        // A plain lint has no base: no such sections.
        assert!(!summary(None).contains("### Changes"));
    }
}
