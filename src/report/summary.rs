//! The markdown summary: the job summary (`$GITHUB_STEP_SUMMARY`) and the body of the sticky
//! pull-request comment. Counts, the top findings, and per app the rendered manifest diff in
//! a collapsible section.

use super::{Finding, Severity, repo_path};
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

pub struct Summary<'a> {
    pub findings: &'a [Finding],
    pub map: &'a SourceMap,
    /// The linted directory relative to the repository root.
    pub prefix: &'a str,
    /// `diff` mode: the base revision and the findings the change fixes (with their map).
    pub base: Option<&'a str>,
    pub fixed: &'a [(String, String)],
    pub diffs: &'a [AppDiff],
    /// Findings hidden because the baseline already has them.
    pub baselined: usize,
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

impl Summary<'_> {
    pub fn render(&self, max_chars: usize) -> String {
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
    }
}
