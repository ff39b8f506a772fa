//! The shipped knowledge base of writers (`kb/writers/*.yaml`): every operator has fixture
//! repos under testdata/kb/<operator>/{bad,clean}. The bad one declares each field the
//! operator writes and gets a finding naming the operator per entry, on the lines its
//! `expected.txt` lists; the clean one (the fix) gets nothing at warning or above and no
//! finding naming the operator. Then: an entry that needs deployment evidence stays silent
//! without it, `profile.operators` supplies it, and an unknown operator id is a located
//! configuration error.

use crate::common;

use common::{copy_dir, expected_lines, located_findings};
use gitops_lint::config::kb::catalog;
use gitops_lint::lint::{LintOptions, LintResult, lint};
use std::path::{Path, PathBuf};

fn fixture(operator: &str, case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/kb")
        .join(operator)
        .join(case)
}

fn lint_dir(dir: &Path) -> LintResult {
    lint(&LintOptions {
        root: dir.to_path_buf(),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Findings that name `who` in their message or in a related location.
fn naming<'a>(result: &'a LintResult, who: &str) -> Vec<&'a gitops_lint::report::Finding> {
    result
        .findings
        .iter()
        .filter(|f| f.message.contains(who) || f.secondary.iter().any(|s| s.text.contains(who)))
        .collect()
}

/// `webhooks[0].clientConfig.caBundle` as an entry writes it: `webhooks[*].clientConfig.caBundle`.
fn any_index(field: &str) -> String {
    let mut out = String::new();
    let mut in_index = false;
    for c in field.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[*]");
            }
            ']' => in_index = false,
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn every_operator_has_a_bad_and_a_clean_fixture_that_hold() {
    let dirs: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kb"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
    assert_eq!(
        dirs.len(),
        catalog().len(),
        "one fixture folder per operator: {dirs:?}"
    );
    for op in catalog() {
        let bad = fixture(&op.id, "bad");
        let result = lint_dir(&bad);
        assert_eq!(
            located_findings(&result),
            expected_lines(&bad.join("expected.txt")),
            "{}: findings at warning or above",
            op.id
        );
        let named = naming(&result, &op.name);
        // The fixture says which findings the operator's entries make (`operator.txt`), so
        // an entry that goes missing from the data fails here…
        let mut named_at: Vec<String> = named
            .iter()
            .map(|f| {
                format!(
                    "{} {}:{}",
                    f.rule,
                    result.map.path(f.primary.span.file),
                    result.map.line_col(f.primary.span).line
                )
            })
            .collect();
        named_at.sort();
        assert_eq!(
            named_at,
            expected_lines(&bad.join("operator.txt")),
            "{}: findings naming {}",
            op.id,
            op.name
        );
        // …and an entry added to the data without a case in the fixture fails too.
        for field in &op.fields {
            assert!(
                named
                    .iter()
                    .any(|f| f.field.as_deref().map(any_index) == Some(field.fact.path.clone())),
                "{}: no finding in the bad fixture for the entry on {}",
                op.id,
                field.fact.path
            );
        }

        let clean = fixture(&op.id, "clean");
        let result = lint_dir(&clean);
        assert_eq!(
            located_findings(&result),
            expected_lines(&clean.join("expected.txt")),
            "{}: clean findings",
            op.id
        );
        assert!(
            naming(&result, &op.name).is_empty(),
            "{}: the clean fixture still names {}",
            op.id,
            op.name
        );
    }
}

/// ECK's webhook entry is not self-evident: a webhook configuration of that name alone does
/// not show ECK runs. Without the operator's StatefulSet the finding goes; naming the
/// operator in `profile.operators` brings it back, pointing at that line.
#[test]
fn an_entry_without_deployment_evidence_applies_only_where_the_profile_names_the_operator() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    copy_dir(&fixture("eck", "bad"), tmp.path());
    let operator = tmp.path().join("apps/eck/operator.yaml");
    std::fs::remove_file(&operator).unwrap_or_else(|e| panic!("{e}"));
    let result = lint_dir(tmp.path());
    assert!(
        naming(&result, "the ECK operator").is_empty(),
        "no evidence, no finding: {:?}",
        located_findings(&result)
    );

    std::fs::write(
        tmp.path().join(".gitops-lint.yaml"),
        "profile:\n  operators:\n    - eck\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let result = lint_dir(tmp.path());
    let named = naming(&result, "the ECK operator");
    assert_eq!(named.len(), 1, "{:?}", located_findings(&result));
    let evidence = &named[0].secondary[0];
    assert_eq!(result.map.path(evidence.span.file), ".gitops-lint.yaml");
    assert_eq!(result.map.line_col(evidence.span).line, 3);
}

#[test]
fn an_unknown_operator_in_the_profile_is_a_located_configuration_error() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        tmp.path().join(".gitops-lint.yaml"),
        "profile:\n  operators:\n    - keda\n    - istiio\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let err = match lint(&LintOptions {
        root: tmp.path().to_path_buf(),
        ..Default::default()
    }) {
        Ok(_) => panic!("an unknown operator id was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(".gitops-lint.yaml:4"), "{err}");
    assert!(err.contains("did you mean `istio`"), "{err}");
}

/// `gitops-lint explain writers PATH` lists every operator and shows which apply to PATH,
/// with the line that shows each runs.
#[test]
fn explain_writers_shows_which_entries_apply_to_the_repository() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["explain", "writers"])
        .arg(fixture("keda", "bad"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for op in catalog() {
        assert!(
            text.contains(&format!("\n{} — ", op.id)),
            "{} missing:\n{text}",
            op.id
        );
    }
    assert!(
        text.contains(
            "runs here: image ghcr.io/kedacore/keda-admission-webhooks:2.16.0 at apps/keda/admission.yaml:18 (app keda)"
        ),
        "{text}"
    );
    assert!(
        text.contains("writes metadata.finalizers = finalizer.keda.sh on keda.sh/ScaledObject")
            && text.contains("(self-evident): applied to 1 object\n"),
        "{text}"
    );
    assert!(
        text.contains("Not seen in this repository: aws-load-balancer-controller,"),
        "{text}"
    );
}

/// A chart counts as deployment evidence offline (read from the app's remote inputs, not
/// from its render), but only for objects on the cluster it is installed on.
#[test]
fn a_chart_shows_its_operator_runs_on_the_cluster_it_is_installed_on() {
    let chart_app = |server: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: eck-operator\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://helm.elastic.co\n    chart: eck-operator\n    targetRevision: 2.16.1\n  destination:\n    server: {server}\n    namespace: elastic-system\n"
        )
    };
    let with_chart_on = |server: &str| {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        copy_dir(&fixture("eck", "bad"), tmp.path());
        std::fs::remove_file(tmp.path().join("apps/eck/operator.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            tmp.path().join("argocd/eck-operator.yaml"),
            chart_app(server),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let result = lint_dir(tmp.path());
        let evidence: Vec<String> = naming(&result, "the ECK operator")
            .iter()
            .flat_map(|f| &f.secondary)
            .map(|s| {
                format!(
                    "{}:{} {}",
                    result.map.path(s.span.file),
                    result.map.line_col(s.span).line,
                    s.text
                )
            })
            .collect();
        (tmp, evidence)
    };
    let (_same, evidence) = with_chart_on("https://kubernetes.default.svc");
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert!(
        evidence[0].starts_with(
            "argocd/eck-operator.yaml:10 the eck-operator chart deploys the ECK operator"
        ),
        "{evidence:?}"
    );
    let (_other, evidence) = with_chart_on("https://staging.example.com");
    assert!(
        evidence.is_empty(),
        "another cluster's operator: {evidence:?}"
    );
}

/// The published schema (`schema/kb-writer.schema.json`, for editors) describes every file
/// of the knowledge base.
#[test]
fn every_knowledge_base_file_validates_against_the_published_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("schema/kb-writer.schema.json"))
            .unwrap_or_else(|e| panic!("schema/kb-writer.schema.json: {e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for op in catalog() {
        let path = root
            .join("crates/gitops-lint-model/kb/writers")
            .join(op.file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        let parsed = gitops_lint::yaml::first_doc(&text).to_json();
        let errors = gitops_lint::render::helm::schema::validate_json(&schema, &parsed);
        assert_eq!(errors, Vec::<String>::new(), "{}", op.file);
    }
}
