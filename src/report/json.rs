//! `--format json`: a documented, versioned schema (version 1):
//! `{"version": 1, "findings": [{"rule", "severity", "message", "file", "line", "column",
//! "end_line", "end_column", "app", "object", "help"}], "errors": [...]}`; `file` is
//! relative to the linted root, lines and columns are 1-based.

use super::Finding;
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
    errors: &'a [String],
}

pub fn render(findings: &[Finding], errors: &[String], map: &SourceMap) -> String {
    let findings = findings
        .iter()
        .map(|f| {
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
        })
        .collect();
    let report = JsonReport {
        version: 1,
        findings,
        errors,
    };
    super::escape::inert_json(
        serde_json::to_string_pretty(&report)
            .unwrap_or_else(|e| format!("{{\"version\":1,\"findings\":[],\"errors\":[\"{e}\"]}}")),
    )
}
