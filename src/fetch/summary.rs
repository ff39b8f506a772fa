//! What `fetch` tells the job summary (`$GITHUB_STEP_SUMMARY`): each input with where it is
//! named and what became of it (downloaded at which version, already cached, or why it
//! failed), then what the lint will still render without: the coverage line and every input
//! that stays missing, as the lint reports it.

use super::{Resolution, Resolved};
use crate::source::SourceMap;

/// Most inputs listed one by one; the rest are counted.
const MAX_ROWS: usize = 100;

/// One input of the run, ready to print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputLine {
    /// How the lint names it (`chart web 1.2.0 from https://…`, a URL).
    pub input: String,
    /// `downloaded 1.2.0`, `cached 1.2.0`, or the failure.
    pub result: String,
    pub failed: bool,
    /// The first line that names it, and how many more do.
    pub named_at: String,
    pub more_uses: usize,
}

impl InputLine {
    pub fn of(r: &Resolution, map: &SourceMap) -> InputLine {
        let (result, failed) = match &r.result {
            Resolved::Downloaded(e) => (format!("downloaded {}", shown_version(e)), false),
            Resolved::Cached(e) => (format!("cached {}", shown_version(e)), false),
            Resolved::Failed(why) => (why.clone(), true),
        };
        InputLine {
            input: r.reference.to_string(),
            result,
            failed,
            named_at: r
                .spans
                .first()
                .map(|s| super::location(map, *s))
                .unwrap_or_default(),
            more_uses: r.spans.len().saturating_sub(1),
        }
    }
}

/// The version a lock entry resolved to; a URL's file by its digest (it has no version).
fn shown_version(e: &crate::remote::LockEntry) -> String {
    match e.reference.kind {
        crate::remote::RemoteKind::Url => {
            let hex = e.digest.trim_start_matches("sha256:");
            format!("sha256:{}", &hex[..hex.len().min(12)])
        }
        _ => e.resolved.clone(),
    }
}

/// Read what stays unrendered from a lint over the fetched cache.
pub fn after_fetch(
    linted: &crate::lint::LintResult,
    coverage: &mut String,
    missing: &mut Vec<(String, String)>,
) {
    *coverage = crate::gitops::listing::coverage_summary(&linted.model);
    missing.clear();
    missing.extend(
        linted
            .findings
            .iter()
            .filter(|f| f.rule == crate::rules::offline_unrenderable_input::ID)
            .map(|f| {
                (
                    super::location(&linted.map, f.primary.span),
                    f.message.clone(),
                )
            }),
    );
}

/// The job summary's section for one run.
pub fn markdown(report: &super::RunReport) -> String {
    let failed = report.inputs.iter().filter(|i| i.failed).count();
    let mut out = String::from("### gitops-lint fetch\n\n");
    out.push_str(&format!(
        "Remote inputs: **{} downloaded**, {} already in the cache, **{failed} failed**{}.\n\n",
        report.fetched,
        report.cached,
        if report.lock_written {
            format!(" ({} written)", crate::remote::LOCK_FILE)
        } else {
            String::new()
        }
    ));
    if !report.inputs.is_empty() {
        out.push_str("| Input | Result | Named at |\n| --- | --- | --- |\n");
        // Failures first: they are what a reader must act on.
        let mut rows: Vec<&InputLine> = report.inputs.iter().collect();
        rows.sort_by_key(|i| !i.failed);
        for i in rows.iter().take(MAX_ROWS) {
            let result = if i.failed {
                format!("**failed**: {}", cell(&i.result))
            } else {
                cell(&i.result)
            };
            let more = if i.more_uses > 0 {
                format!(" and {} more", i.more_uses)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "| {} | {result} | {}{more} |\n",
                code(&i.input),
                code(&i.named_at)
            ));
        }
        if rows.len() > MAX_ROWS {
            out.push_str(&format!(
                "\n… and {} more inputs (see the step's log).\n",
                rows.len() - MAX_ROWS
            ));
        }
        out.push('\n');
    }
    for note in &report.notes {
        out.push_str(&format!("- {}\n", cell(note)));
    }
    if !report.notes.is_empty() {
        out.push('\n');
    }
    // `coverage: …` and its further lines (kustomization directories, clusters), each a
    // sentence of its own.
    let mut lines = report.coverage.lines();
    if let Some(first) = lines.next() {
        out.push_str(&format!("After the fetch, {}.", cell(first)));
        for l in lines {
            out.push_str(&format!(" {}.", capitalised(&cell(l))));
        }
        out.push_str("\n\n");
    }
    if !report.still_missing.is_empty() {
        out.push_str(
            "Still rendered without these inputs (the lint reports each as `offline-unrenderable-input`):\n\n",
        );
        for (at, message) in report.still_missing.iter().take(MAX_ROWS) {
            out.push_str(&format!("- {}: {}\n", code(at), cell(message)));
        }
        if report.still_missing.len() > MAX_ROWS {
            out.push_str(&format!(
                "- … and {} more\n",
                report.still_missing.len() - MAX_ROWS
            ));
        }
        out.push('\n');
    }
    out
}

/// Text from the repository or a server in a table cell: no HTML, no table breaks, one line.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '`' => out.push('\''),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// As code, escaped the same way (a backtick in the text would end the span).
fn code(text: &str) -> String {
    format!("`{}`", cell(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(input: &str, result: &str, failed: bool) -> InputLine {
        InputLine {
            input: input.into(),
            result: result.into(),
            failed,
            named_at: "apps/web.yaml:12".into(),
            more_uses: 0,
        }
    }

    #[test]
    fn failures_come_first_and_repository_text_cannot_break_the_table() {
        let report = super::super::RunReport {
            fetched: 1,
            cached: 0,
            failures: Vec::new(),
            notes: vec!["registry.example: no credentials".into()],
            rounds: 1,
            lock_written: true,
            inputs: vec![
                line(
                    "chart web 1.2.0 from https://c.example",
                    "downloaded 1.2.0",
                    false,
                ),
                line(
                    "https://x.example/a|b<script>.yaml",
                    "HTTP 404\n::error::x `y`",
                    true,
                ),
            ],
            coverage: "coverage: 2 apps, 1 rendered, 1 partly rendered (1 remote-file)".into(),
            still_missing: vec![(
                "apps/x/kustomization.yaml:4".into(),
                "https://x.example/a.yaml is not fetched".into(),
            )],
        };
        let md = markdown(&report);
        assert_eq!(
            md,
            "### gitops-lint fetch\n\n\
             Remote inputs: **1 downloaded**, 0 already in the cache, **1 failed** (.gitops-lint.lock written).\n\n\
             | Input | Result | Named at |\n| --- | --- | --- |\n\
             | `https://x.example/a\\|b&lt;script&gt;.yaml` | **failed**: HTTP 404 ::error::x 'y' | `apps/web.yaml:12` |\n\
             | `chart web 1.2.0 from https://c.example` | downloaded 1.2.0 | `apps/web.yaml:12` |\n\n\
             - registry.example: no credentials\n\n\
             After the fetch, coverage: 2 apps, 1 rendered, 1 partly rendered (1 remote-file).\n\n\
             Still rendered without these inputs (the lint reports each as `offline-unrenderable-input`):\n\n\
             - `apps/x/kustomization.yaml:4`: https://x.example/a.yaml is not fetched\n\n"
        );
    }
}
