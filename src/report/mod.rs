//! Output: one report value ([`Report`]) and the formats that render it, each a [`Renderer`]
//! (human via miette, JSON, SARIF, JUnit, GitHub annotations, the markdown summary).

pub mod escape;
pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod sarif;
pub mod summary;

pub use crate::finding::{Edit, Finding, Fix, Label, Severity};
pub use summary::AppDiff;

use crate::config::checks::Check;
use crate::source::SourceMap;
use std::collections::BTreeMap;
use std::time::Duration;

/// One run's result as every output format reads it. The command line builds it once and
/// hands it to the chosen format (and to SARIF and the markdown summary when they are asked
/// for too), so no format re-reads another's output.
pub struct Report<'a> {
    /// What the run reports: after the baseline and `--changed`; in diff mode the new ones.
    pub findings: &'a [Finding],
    /// Every finding of the tree as `lint` reports it, also in diff mode (what code scanning
    /// gets: it compares a pull request's analysis with the base branch's itself, so an upload
    /// of the new findings alone would close every alert the change did not touch).
    pub tree: &'a [Finding],
    pub map: &'a SourceMap,
    /// The linted root relative to the repository root (GitHub-facing formats resolve paths
    /// against the checkout).
    pub prefix: &'a str,
    /// The repository's own checks (`checks:`): SARIF lists them as rules.
    pub checks: &'a [Check],
    /// Findings hidden because the baseline already has them.
    pub baselined: usize,
    /// The model's coverage line (apps found, rendered, partly, not rendered by reason).
    pub coverage: Option<&'a str>,
    /// How long the run took (JUnit's `time`).
    pub elapsed: Duration,
    /// Diff mode: what comparing with the base revision found.
    pub comparison: Option<Comparison<'a>>,
}

/// What `diff` adds to a report: the base, the findings the change fixes and the rendered
/// changes of the apps it affects.
pub struct Comparison<'a> {
    pub base_rev: &'a str,
    pub base_commit: &'a str,
    /// Findings of the base the change fixes, located in `base_map`.
    pub fixed: &'a [Finding],
    pub base_map: &'a SourceMap,
    /// Rendered manifest diffs of the affected apps.
    pub apps: &'a [AppDiff],
    pub apps_total: usize,
    pub affected: &'a [String],
    /// The lines the change adds or rewrites, per linted-root-relative path.
    pub changed_lines: &'a BTreeMap<String, Vec<(usize, usize)>>,
}

impl<'a> Report<'a> {
    /// A report of `findings` alone: the whole tree, no checks, no comparison.
    pub fn of(findings: &'a [Finding], map: &'a SourceMap) -> Report<'a> {
        Report {
            findings,
            tree: findings,
            map,
            prefix: "",
            checks: &[],
            baselined: 0,
            coverage: None,
            elapsed: Duration::ZERO,
            comparison: None,
        }
    }
}

/// An output format: the text it makes of a report.
pub trait Renderer {
    fn render(&self, report: &Report) -> String;
}

/// A linted-root-relative path as the repository names it (GitHub-facing formats resolve
/// paths against the checkout root, while the linted directory may be a subdirectory).
pub fn repo_path(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_string()
    } else if path.is_empty() {
        prefix.to_string()
    } else {
        format!("{prefix}/{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceMap, Span};

    /// What a chart's `fail` or a file name can carry: a workflow command on a new line
    /// (after CR LF and after blanks), ESC and C1 sequences, NEL, DEL, a bidirectional override
    /// and isolate.
    const PAYLOAD: &str = "boom, a long message that a renderer may wrap just before ::add-mask::wrapped\n::add-mask::s3cret\r\n  ::stop-commands::t0k\u{1b}[2J\u{9b}31m\u{85}\u{7f}x\u{202e}gpj.exe\u{2066}";

    fn hostile(c: char) -> bool {
        c == '\u{1b}'
            || c == '\r'
            || c == '\u{7f}'
            || ('\u{80}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }

    fn outputs() -> Vec<(&'static str, String)> {
        let map = SourceMap::new();
        let file = map.add_text(
            format!("apps/web\u{1b}[31m{}.yaml", '\u{202e}'),
            "spec:\n  replicas: 3 # \u{1b}]0;title\u{7}\u{202e}\n",
        );
        let f = Finding::new(
            "render-failed",
            Severity::Error,
            PAYLOAD,
            Span::new(file, 8, 19),
        )
        .label(PAYLOAD)
        .secondary(Span::new(file, 0, 4), PAYLOAD)
        .help(PAYLOAD)
        .app(PAYLOAD)
        .object(format!("Deployment/prod/{PAYLOAD}"))
        .field(PAYLOAD);
        let findings = [f];
        let report = Report::of(&findings, &map);
        let human = |color| human::Human {
            color,
            quiet: false,
        };
        vec![
            ("human", human(false).render(&report)),
            ("human (colour)", human(true).render(&report)),
            ("json", json::Json.render(&report)),
            ("sarif", sarif::Sarif.render(&report)),
            // The finding's help and message also reach `<skipped message=…>` through the
            // same escape; `<failure>` carries both.
            (
                "junit",
                junit::Junit {
                    fail_on: Severity::Error,
                    below: junit::Below::Skipped,
                }
                .render(&report),
            ),
            ("github", github::Annotations::default().render(&report)),
        ]
    }

    #[test]
    fn no_format_lets_hostile_text_through() {
        for (format, text) in outputs() {
            // Colour is ours: the only ESC allowed is an SGR sequence the renderer wrote.
            let plain = if format == "human (colour)" {
                strip_sgr(&text)
            } else {
                text.clone()
            };
            let raw: Vec<char> = plain.chars().filter(|c| hostile(*c)).collect();
            assert!(raw.is_empty(), "{format}: raw {raw:?} in\n{text}");
            // The only workflow commands are the annotation lines `--format github` writes.
            let commands: Vec<&str> = text
                .lines()
                .filter(|l| l.trim_start().starts_with("::"))
                .collect();
            let expected = usize::from(format == "github");
            assert_eq!(commands.len(), expected, "{format}: {commands:#?}");
            if format == "github" {
                assert!(commands[0].starts_with("::error file="), "{}", commands[0]);
            }
        }
    }

    #[test]
    fn json_formats_keep_the_exact_text() {
        for (format, text) in outputs() {
            let v: serde_json::Value = match format {
                "json" | "sarif" => serde_json::from_str(&text).expect(format),
                _ => continue,
            };
            let message = if format == "json" {
                &v["findings"][0]["message"]
            } else {
                &v["runs"][0]["results"][0]["properties"]["field"]
            };
            assert_eq!(message.as_str(), Some(PAYLOAD), "{format}");
        }
    }

    /// SGR sequences (ESC `[` digits and `;` `m`: what a colour theme writes) removed; any
    /// other ESC stays.
    fn strip_sgr(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("\u{1b}[") {
            out.push_str(&rest[..at]);
            let tail = &rest[at + 2..];
            let params = tail
                .find(|c: char| !c.is_ascii_digit() && c != ';')
                .unwrap_or(tail.len());
            if tail[params..].starts_with('m') {
                rest = &tail[params + 1..];
            } else {
                out.push('\u{1b}');
                rest = &rest[at + 1..];
            }
        }
        out.push_str(rest);
        out
    }
}
