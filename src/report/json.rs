//! `--format json`: a documented, versioned schema (version 1):
//! `{"version": 1, "findings": [{"rule", "severity", "message", "file", "line", "column",
//! "end_line", "end_column", "app", "object", "help"}], "errors": [...]}`; `file` is
//! relative to the linted root, lines and columns are 1-based. In diff mode the fields `base`,
//! `fixed` and `apps` are added (version 1 allows new fields). `errors` is always empty now:
//! an input the linter cannot read is a finding; the field stays for version 1's readers.

use super::{Comparison, Finding, Renderer, Report};
use crate::source::SourceMap;
use serde::Serialize;

#[derive(Serialize)]
struct JsonFinding<'a> {
    rule: &'a str,
    severity: &'a str,
    message: &'a str,
    file: String,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    app: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<&'a str>,
    object: Option<&'a str>,
    field: Option<&'a str>,
    help: Option<&'a str>,
    related: Vec<JsonLabel>,
}

#[derive(Serialize)]
struct JsonLabel {
    file: String,
    line: usize,
    column: usize,
    message: String,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    findings: Vec<JsonFinding<'a>>,
    errors: [&'a str; 0],
    #[serde(flatten)]
    comparison: Option<JsonComparison<'a>>,
}

#[derive(Serialize)]
struct JsonComparison<'a> {
    base: JsonBase<'a>,
    fixed: Vec<JsonFixed<'a>>,
    apps: JsonApps<'a>,
}

#[derive(Serialize)]
struct JsonBase<'a> {
    rev: &'a str,
    commit: &'a str,
}

#[derive(Serialize)]
struct JsonFixed<'a> {
    rule: &'a str,
    severity: &'a str,
    message: &'a str,
    /// In the base revision.
    file: String,
    app: Option<&'a str>,
    object: Option<&'a str>,
    field: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonApps<'a> {
    total: usize,
    affected: &'a [String],
    diffs: Vec<JsonAppDiff<'a>>,
}

#[derive(Serialize)]
struct JsonAppDiff<'a> {
    app: &'a str,
    added: usize,
    removed: usize,
    diff: &'a str,
}

/// `--format json`.
pub struct Json;

impl Renderer for Json {
    fn render(&self, report: &Report) -> String {
        let value = JsonReport {
            version: 1,
            findings: report
                .findings
                .iter()
                .map(|f| finding(f, report.map))
                .collect(),
            errors: [],
            comparison: report.comparison.as_ref().map(comparison),
        };
        super::escape::inert_json(
            serde_json::to_string_pretty(&value).unwrap_or_else(|e| {
                format!("{{\"version\":1,\"findings\":[],\"errors\":[\"{e}\"]}}")
            }),
        )
    }
}

fn finding<'a>(f: &'a Finding, map: &SourceMap) -> JsonFinding<'a> {
    let start = map.line_col(f.primary.span);
    let end = map.end_line_col(f.primary.span);
    JsonFinding {
        rule: f.rule,
        severity: f.severity.as_str(),
        message: &f.message,
        file: map.path(f.primary.span.file),
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        app: f.app.as_deref(),
        cluster: f.cluster.as_deref(),
        object: f.object.as_deref(),
        field: f.field.as_deref(),
        help: f.help.as_deref(),
        related: f
            .secondary
            .iter()
            .map(|l| {
                let lc = map.line_col(l.span);
                JsonLabel {
                    file: map.path(l.span.file),
                    line: lc.line,
                    column: lc.column,
                    message: l.text.clone(),
                }
            })
            .collect(),
    }
}

fn comparison<'a>(c: &Comparison<'a>) -> JsonComparison<'a> {
    JsonComparison {
        base: JsonBase {
            rev: c.base_rev,
            commit: c.base_commit,
        },
        fixed: c
            .fixed
            .iter()
            .map(|f| JsonFixed {
                rule: f.rule,
                severity: f.severity.as_str(),
                message: &f.message,
                file: c.base_map.path(f.primary.span.file),
                app: f.app.as_deref(),
                object: f.object.as_deref(),
                field: f.field.as_deref(),
            })
            .collect(),
        apps: JsonApps {
            total: c.apps_total,
            affected: c.affected,
            diffs: c
                .apps
                .iter()
                .map(|a| JsonAppDiff {
                    app: &a.app,
                    added: a.added,
                    removed: a.removed,
                    diff: &a.diff,
                })
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{AppDiff, Severity};
    use crate::source::Span;
    use std::collections::BTreeMap;

    /// Diff mode adds `base`, `fixed` and `apps` after version 1's fields, built from the
    /// report itself (the fixed finding is located in the base revision's files).
    #[test]
    fn diff_mode_adds_the_comparison_after_the_version_1_fields() {
        let head = SourceMap::new();
        let file = head.add_text("apps/new.yaml", "a: 1\n");
        let new = [Finding::new(
            "r",
            Severity::Error,
            "new",
            Span::new(file, 0, 1),
        )];
        let base = SourceMap::new();
        let old = base.add_text("apps/old.yaml", "b: 2\n");
        let fixed = [
            Finding::new("s", Severity::Warning, "gone", Span::new(old, 0, 1))
                .app("shop")
                .object("Deployment/prod/web"),
        ];
        let apps = [AppDiff {
            app: "shop".into(),
            diff: "-b\n+c\n".into(),
            added: 1,
            removed: 1,
        }];
        let affected = ["shop".to_string()];
        let changed = BTreeMap::new();
        let mut report = Report::of(&new, &head);
        report.comparison = Some(Comparison {
            base_rev: "main",
            base_commit: "abc123",
            fixed: &fixed,
            base_map: &base,
            apps: &apps,
            apps_total: 3,
            affected: &affected,
            changed_lines: &changed,
        });
        let v: serde_json::Value = serde_json::from_str(&Json.render(&report)).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["version", "findings", "errors", "base", "fixed", "apps"]
        );
        assert_eq!(
            v["base"],
            serde_json::json!({"rev": "main", "commit": "abc123"})
        );
        assert_eq!(
            v["fixed"][0],
            serde_json::json!({"rule": "s", "severity": "warning", "message": "gone",
                "file": "apps/old.yaml", "app": "shop", "object": "Deployment/prod/web", "field": null})
        );
        assert_eq!(v["apps"]["total"], 3);
        assert_eq!(v["apps"]["affected"][0], "shop");
        assert_eq!(v["apps"]["diffs"][0]["diff"], "-b\n+c\n");
        // A plain lint has version 1's fields only.
        let plain: serde_json::Value =
            serde_json::from_str(&Json.render(&Report::of(&new, &head))).unwrap();
        assert_eq!(plain.as_object().unwrap().len(), 3);
    }
}
