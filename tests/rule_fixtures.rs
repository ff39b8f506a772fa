//! Every rule has fixture repos under testdata/rules/<rule>/{bad,clean}; each holds an
//! `expected.txt` listing the findings at warning or above as `rule severity file:line`.
//! The whole list must match: a finding that appears or disappears fails the test.
//! Further clean repos, `clean-<case>/`, pin one false-positive class each (issue 16): they
//! must have no finding at all, not even info.

use gitops_lint::lint::{LintOptions, lint};
use gitops_lint::report::Severity;
use std::path::{Path, PathBuf};

fn findings_of(dir: &Path) -> Vec<String> {
    findings_at_or_above(dir, Severity::Warning)
}

fn findings_at_or_above(dir: &Path, floor: Severity) -> Vec<String> {
    let result = match lint(&LintOptions {
        root: dir.to_path_buf(),
        config: None,
    }) {
        Ok(r) => r,
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    let mut lines: Vec<String> = result
        .findings
        .iter()
        .filter(|f| f.severity >= floor)
        .map(|f| {
            let lc = result.map.line_col(f.primary.span);
            format!(
                "{} {} {}:{}",
                f.rule,
                f.severity.as_str(),
                result.map.path(f.primary.span.file),
                lc.line
            )
        })
        .collect();
    lines.sort();
    lines
}

fn fixture_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules");
    let mut dirs = Vec::new();
    for rule in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        for case in std::fs::read_dir(rule.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = case.file_name().to_string_lossy().into_owned();
            if (name == "bad" || name == "clean" || name.starts_with("clean-"))
                && case.path().is_dir()
            {
                dirs.push(case.path());
            }
        }
    }
    dirs.sort();
    dirs
}

#[test]
fn every_fixture_reports_exactly_its_expected_findings() {
    let dirs = fixture_dirs();
    assert!(dirs.len() >= 32, "fixtures missing: {}", dirs.len());
    let mut failures = Vec::new();
    for dir in &dirs {
        let expected_text = std::fs::read_to_string(dir.join("expected.txt")).unwrap_or_default();
        let mut expected: Vec<String> = expected_text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect();
        expected.sort();
        let got = findings_of(dir);
        if got != expected {
            failures.push(format!(
                "{}\n  expected:\n    {}\n  got:\n    {}",
                dir.display(),
                expected.join("\n    "),
                got.join("\n    ")
            ));
        }
        // A bad fixture must show its own rule; a clean one nothing at warning or above.
        let rule = dir
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if dir.ends_with("bad") && !got.iter().any(|l| l.starts_with(&format!("{rule} "))) {
            failures.push(format!("{}: no {rule} finding", dir.display()));
        }
        let is_clean = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("clean"));
        if is_clean && !got.is_empty() {
            failures.push(format!("{}: clean fixture has findings", dir.display()));
        }
        // A false-positive class (`clean-<case>`) must not come back even as info.
        if dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("clean-"))
        {
            let info = findings_at_or_above(dir, Severity::Info);
            if !info.is_empty() {
                failures.push(format!(
                    "{}: false-positive fixture has findings:\n    {}",
                    dir.display(),
                    info.join("\n    ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Redaction masks Secret values, never the names, namespaces and keys a finding points at
/// (issue 16, class 9): the admin user `grafana` is a Secret value, the generator
/// `grafana-dashboards` a public name.
#[test]
fn redaction_keeps_names_namespaces_and_keys() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/redaction/names-kept");
    let result = match lint(&LintOptions {
        root: dir.clone(),
        config: None,
    }) {
        Ok(r) => r,
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    let messages: Vec<&str> = result.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("`grafana-dashboards`")),
        "{messages:#?}"
    );
    assert!(
        messages.iter().all(|m| !m.contains("<redacted")),
        "{messages:#?}"
    );
}

/// Every finding words itself for the controller that deploys its object (issue 16, class
/// 10): no Argo CD explanation for what only Flux applies, no Flux one for Argo CD apps.
#[test]
fn findings_speak_of_the_controller_that_applies_the_object() {
    use gitops_lint::gitops::AppKind;
    let mut failures = Vec::new();
    for dir in fixture_dirs() {
        let Ok(result) = lint(&LintOptions {
            root: dir.clone(),
            config: None,
        }) else {
            continue;
        };
        for f in &result.findings {
            let Some(app) = f
                .app
                .as_ref()
                .and_then(|name| result.model.apps.iter().find(|a| &a.name == name))
            else {
                continue;
            };
            let text = format!("{} {}", f.message, f.help.as_deref().unwrap_or(""));
            let foreign: &[&str] = match app.kind {
                AppKind::FluxKustomization | AppKind::FluxHelmRelease => &["Argo", "argocd"],
                AppKind::Argo | AppKind::ArgoAppSet => {
                    &["kustomize-controller", "helm-controller", "Flux"]
                }
                AppKind::Standalone => &[],
            };
            if let Some(word) = foreign.iter().find(|w| text.contains(*w)) {
                failures.push(format!(
                    "{}: {} ({:?} app `{}`) mentions {word}: {}",
                    dir.display(),
                    f.rule,
                    app.kind,
                    app.name,
                    f.message
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
