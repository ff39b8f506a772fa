//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning (`upload-sarif`). Our own small
//! structs instead of a generated crate keep compile time down; a test validates the output
//! against the official schema.

use super::{Finding, Renderer, Report, Severity, repo_path};
use crate::config::checks::Check;
use crate::finding::problem_fingerprint;
use crate::rules;
use crate::source::{SourceMap, Span};
use serde::Serialize;

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    results: Vec<SarifResult<'a>>,
    column_kind: &'static str,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    /// The project's home (code scanning links the tool).
    information_uri: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: String,
    short_description: Text,
    full_description: Text,
    /// The rule's document at this release's tag (code scanning links it as "Learn more");
    /// none for the repository's own checks, documented in its configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    help: Help,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<&'static str>,
    /// Code scanning orders alerts by this (0.0–10.0).
    #[serde(rename = "security-severity", skip_serializing_if = "Option::is_none")]
    security_severity: Option<&'static str>,
    /// The objects the rule checks (`batch/Job,Pod`, `all`, `apps`, `files`).
    kinds: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    partial_fingerprints: Fingerprints,
    properties: ResultProperties<'a>,
}

/// v2: the problem key (`finding::problem_fingerprint`), with `:N` for the N-th result of
/// one key (N ≥ 2) in file order. v1 hashed the finding key alone, which three problems in
/// one `ignoreDifferences` list shared.
#[derive(Serialize)]
struct Fingerprints {
    #[serde(rename = "gitopsLint/v2")]
    key: String,
}

#[derive(Serialize)]
struct ResultProperties<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    app: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn location(
    map: &SourceMap,
    span: Span,
    prefix: &str,
    id: Option<usize>,
    msg: Option<&str>,
) -> Option<Location> {
    let path = map.path(span.file);
    if path.is_empty() {
        return None;
    }
    let start = map.line_col(span);
    let end = map.end_line_col(span);
    Some(Location {
        id,
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: repo_path(prefix, &path),
                uri_base_id: "%SRCROOT%",
            },
            region: Region {
                start_line: start.line,
                start_column: start.column,
                end_line: end.line.max(start.line),
                end_column: if end.line > start.line {
                    end.column
                } else {
                    end.column.max(start.column + 1)
                },
            },
        },
        message: msg.map(|m| Text {
            text: m.to_string(),
        }),
    })
}

/// `<repository>/blob/v<version>/rules/<id>.md`: the document as it was when this binary
/// was released, so the link matches the behaviour it describes.
pub fn help_uri(id: &str) -> String {
    format!(
        "{}/blob/v{}/rules/{id}.md",
        env!("CARGO_PKG_REPOSITORY").trim_end_matches('/'),
        env!("CARGO_PKG_VERSION")
    )
}

/// What the rule reports, from its document: the text between the `**Severity:**` line and
/// the first section, as plain text on one line per paragraph, at most
/// `MAX_FULL_DESCRIPTION` characters.
pub fn full_description(doc: &str) -> String {
    let body = doc
        .lines()
        .skip_while(|l| !l.starts_with("**Severity:**"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect::<Vec<_>>()
        .join("\n");
    let text = body.trim();
    if text.chars().count() <= MAX_FULL_DESCRIPTION {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_FULL_DESCRIPTION - 1).collect();
    format!("{}…", cut.trim_end())
}

const MAX_FULL_DESCRIPTION: usize = 1000;

/// Code scanning's ranking of security alerts (CVSS-like), by the rule's default severity;
/// given only to rules tagged `security`, the only ones it reads it for.
fn security_severity(meta: &rules::RuleMeta) -> Option<&'static str> {
    meta.security.then_some(match meta.severity {
        Severity::Error => "7.5",
        Severity::Warning => "5.0",
        Severity::Info => "2.0",
    })
}

/// `prod-respect-ignore` → `ProdRespectIgnore`.
fn camel_name(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<String>()
}

fn rule_entry(meta: &'static rules::RuleMeta) -> Rule {
    // The rule document starts with a `# title` line; code scanning shows the help markdown.
    Rule {
        id: meta.id,
        name: camel_name(meta.id),
        short_description: Text {
            text: meta.summary.to_string(),
        },
        full_description: Text {
            text: full_description(meta.doc),
        },
        help_uri: Some(help_uri(meta.id)),
        help: Help {
            text: meta.doc.to_string(),
            markdown: meta.doc.to_string(),
        },
        default_configuration: Configuration {
            level: level(meta.severity),
        },
        properties: RuleProperties {
            tags: if meta.security {
                vec!["gitops", "drift", "security"]
            } else {
                vec!["gitops", "drift"]
            },
            security_severity: security_severity(meta),
            kinds: meta.kinds.describe(),
        },
    }
}

/// A check of the repository's configuration as a SARIF rule: its description, and its
/// document (what `gitops-lint explain` prints) as the help.
fn check_entry(check: &Check, map: &SourceMap) -> Rule {
    let lc = map.line_col(check.span);
    let doc = check.document(&format!("{}:{}", map.path(check.span.file), lc.line));
    Rule {
        id: check.id,
        name: camel_name(check.id),
        short_description: Text {
            text: check.summary(),
        },
        full_description: Text {
            text: full_description(&doc),
        },
        help_uri: None,
        help: Help {
            text: doc.clone(),
            markdown: doc,
        },
        default_configuration: Configuration {
            level: level(check.severity),
        },
        properties: RuleProperties {
            tags: vec!["gitops", "custom-check"],
            security_severity: None,
            kinds: check.matcher.describe_kinds(),
        },
    }
}

/// `--format sarif` and `--sarif-file`: the SARIF log of every finding of the tree
/// (`Report::tree`), with the repository's own checks as rules after the built-in ones. URIs
/// are relative to the repository root (`%SRCROOT%`): the report's prefix is the linted
/// directory's place in it.
pub struct Sarif;

impl Renderer for Sarif {
    fn render(&self, report: &Report) -> String {
        log(report.tree, report.map, report.prefix, report.checks)
    }
}

fn log(findings: &[Finding], map: &SourceMap, prefix: &str, checks: &[Check]) -> String {
    let registry = rules::registry();
    let rules: Vec<Rule> = registry
        .iter()
        .map(|r| rule_entry(r.meta))
        .chain(checks.iter().map(|c| check_entry(c, map)))
        .collect();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let results = findings
        .iter()
        .map(|f| {
            let key = problem_fingerprint(f, map);
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            let key = if *n == 1 { key } else { format!("{key}:{n}") };
            let rule_index = registry
                .iter()
                .map(|r| r.meta.id)
                .chain(checks.iter().map(|c| c.id))
                .position(|id| id == f.rule)
                .unwrap_or(0);
            let mut text = f.message.clone();
            if let Some(help) = &f.help {
                text.push_str("\n\n");
                text.push_str(help);
            }
            SarifResult {
                rule_id: f.rule,
                rule_index,
                level: level(f.severity),
                message: Text { text },
                locations: location(map, f.primary.span, prefix, None, None)
                    .into_iter()
                    .collect(),
                related_locations: f
                    .secondary
                    .iter()
                    .enumerate()
                    .filter_map(|(i, l)| location(map, l.span, prefix, Some(i), Some(&l.text)))
                    .collect(),
                partial_fingerprints: Fingerprints { key },
                properties: ResultProperties {
                    app: f.app.as_deref(),
                    object: f.object.as_deref(),
                    field: f.field.as_deref(),
                },
            }
        })
        .collect();
    let log = Log {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "gitops-lint",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: env!("CARGO_PKG_REPOSITORY"),
                    rules,
                },
            },
            results,
            column_kind: "unicodeCodePoints",
        }],
    };
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    super::escape::inert_json(s)
}
