//! The repository's own checks (`checks:` in `.gitops-lint.yaml`): every example of
//! docs/checks.md is a fixture under testdata/checks/<check>/{bad,clean}, whose
//! `expected.txt` lists the findings at warning or above as `rule severity file:line` (the
//! line a person edits: the overlay patch, the field); configuration errors are located
//! and exit 2; an expression that runs away stops at its budget; checks are listed,
//! explained, suppressed and exported like rules.

use crate::common;

use common::copy_dir;
use gitops_lint::lint::{LintOptions, lint};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/checks")
        .join(case)
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

/// `rule severity file:line` of every finding at warning or above, sorted.
fn located(case: &str) -> Vec<String> {
    let result = lint(&LintOptions {
        root: fixture(case),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{case}: {e}"));
    common::located_findings(&result)
}

fn expected(case: &str) -> Vec<String> {
    common::expected_lines(&fixture(case).join("expected.txt"))
}

const EXAMPLES: &[&str] = &[
    "prod-respect-ignore",
    "helmrelease-drift-detection",
    "payments-no-replicas",
    "memory-limits",
    "deployment-has-pdb",
];

#[test]
fn every_example_reports_its_bad_fixture_on_the_edited_line_and_not_its_clean_one() {
    for check in EXAMPLES {
        let bad = format!("{check}/bad");
        let got = located(&bad);
        assert_eq!(got, expected(&bad), "{bad}");
        assert!(
            got.iter().any(|f| f.starts_with(&format!("{check} "))),
            "{bad}: the check itself must fire"
        );
        let clean = format!("{check}/clean");
        assert_eq!(located(&clean), expected(&clean), "{clean}");
    }
}

#[test]
fn every_example_is_in_the_guide() {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/checks.md"))
            .unwrap_or_else(|e| panic!("docs/checks.md: {e}"));
    for check in EXAMPLES {
        let config = std::fs::read_to_string(fixture(&format!("{check}/bad/.gitops-lint.yaml")))
            .unwrap_or_else(|e| panic!("{check}: {e}"));
        // The fixture's entry, as written, is the guide's example.
        let entry = config
            .split_once("checks:\n")
            .map(|(_, rest)| rest)
            .unwrap_or(&config);
        assert!(
            guide.contains(entry.trim_end()),
            "docs/checks.md does not show the `{check}` example as its fixture declares it"
        );
    }
}

#[test]
fn a_runaway_expression_stops_at_its_budget_on_the_object() {
    assert_eq!(
        located("runaway-expression"),
        expected("runaway-expression")
    );
    let out = bin()
        .arg(fixture("runaway-expression"))
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("stopped at its cost limit (20000 units, `limits.max-check-cost`)"),
        "{text}"
    );
}

/// A bad expression, path, template or id is a configuration error on its line: exit 2.
#[test]
fn configuration_errors_are_located() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    )
    .expect("write");
    for (config, at, needle) in [
        (
            "checks:\n  - id: replicas-set\n    expr: \"object.spec.replicas >\"\n    message: x\n",
            ".gitops-lint.yaml:3:11",
            "does not parse as CEL",
        ),
        (
            "checks:\n  - id: replicas-set\n    expr: \"has(object.spec)\"\n    message: x\n    field: \"$.spec.template.spec.containers[*].image\"\n",
            ".gitops-lint.yaml:5:12",
            "selects many nodes",
        ),
        (
            "checks:\n  - id: replicas-set\n    expr: \"has(object.spec)\"\n    message: \"{{ object.metadata.name\"\n",
            ".gitops-lint.yaml:4:14",
            "without a closing",
        ),
        (
            "checks:\n  - id: hpa-replicas-conflict\n    expr: \"true\"\n    message: x\n",
            ".gitops-lint.yaml:2:9",
            "id of a built-in rule",
        ),
        (
            "checks:\n  - id: x1\n    expr: \"cluster.name == 'a'\"\n    message: x\n",
            ".gitops-lint.yaml:3:11",
            "unknown variable `cluster`",
        ),
        (
            "checks:\n  - id: x1\n    match: {kinds: [Deployment], colour: red}\n    expr: \"true\"\n    message: x\n",
            ".gitops-lint.yaml:3:34",
            "unknown key `colour`",
        ),
        ("limits:\n  max-check-cost: 100000000000\n", "", ""),
    ] {
        std::fs::write(dir.path().join(".gitops-lint.yaml"), config).expect("write");
        let out = bin().arg(dir.path()).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        if at.is_empty() {
            // A limit above the default is not an error: ignored with a warning.
            assert_ne!(out.status.code(), Some(2), "{config}: {err}");
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{config}: {err}");
        assert!(err.contains(at) && err.contains(needle), "{config}: {err}");
    }
}

/// Checks are rules to every other part: listed, explained, suppressed inline and by the
/// configuration, and exported to SARIF with their own rule entry.
#[test]
fn checks_are_listed_explained_suppressed_and_exported_like_rules() {
    let bad = fixture("prod-respect-ignore/bad");
    let out = bin().arg("rules").arg(&bad).output().expect("run");
    let rules = String::from_utf8_lossy(&out.stdout);
    assert!(
        rules
            .lines()
            .any(|l| l.starts_with("prod-respect-ignore ")
                && l.contains("check in .gitops-lint.yaml:2")),
        "{rules}"
    );
    let out = bin()
        .args(["explain", "prod-respect-ignore"])
        .arg(&bad)
        .output()
        .expect("run");
    let doc = String::from_utf8_lossy(&out.stdout);
    assert!(
        doc.contains("Every Application under prod/ keeps the live value")
            && doc.contains("Points at: `$.spec.syncPolicy`"),
        "{doc}"
    );

    let out = bin()
        .arg(&bad)
        .args(["--format", "sarif"])
        .output()
        .expect("run");
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).expect("sarif json");
    let run = &sarif["runs"][0];
    let rule_ids: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(rule_ids.contains(&"prod-respect-ignore"), "{rule_ids:?}");
    assert!(
        run["results"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["ruleId"] == "prod-respect-ignore"),
        "{run}"
    );

    // Suppressed on the line, with a reason; and switched off in the configuration.
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&bad, dir.path());
    let app = dir.path().join("prod/argocd/web.yaml");
    let text = std::fs::read_to_string(&app).expect("read");
    std::fs::write(
        &app,
        text.replace(
            "  syncPolicy:\n",
            "  # gitops-lint: ignore[prod-respect-ignore] web tolerates a reset of its replicas\n  syncPolicy:\n",
        ),
    )
    .expect("write");
    let out = bin().arg(dir.path()).output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("× Applications in prod/"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");

    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&bad, dir.path());
    let config = dir.path().join(".gitops-lint.yaml");
    let text = std::fs::read_to_string(&config).expect("read");
    std::fs::write(
        &config,
        format!("{text}rules:\n  prod-respect-ignore: off\n"),
    )
    .expect("write");
    let out = bin().arg(dir.path()).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The configuration examples of the README and of docs/checks.md validate against the
/// published JSON Schema, and a misspelt key or a wrong value does not.
#[test]
fn the_documented_configurations_validate_against_the_published_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("schema/gitops-lint.schema.json"))
            .expect("schema/gitops-lint.schema.json"),
    )
    .expect("schema json");
    let as_json = |text: &str| {
        let map = gitops_lint::source::SourceMap::new();
        let id = map.add_text(".gitops-lint.yaml", text);
        let parsed = gitops_lint::yaml::parse_str(text, id, &gitops_lint::yaml::Limits::default());
        parsed
            .docs
            .first()
            .map(|d| d.root.to_json())
            .unwrap_or(serde_json::Value::Null)
    };
    let validate =
        |text: &str| gitops_lint::render::helm::schema::validate_json(&schema, &as_json(text));

    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let block = readme
        .split("### Configuration: `.gitops-lint.yaml`")
        .nth(1)
        .and_then(|rest| rest.split("```yaml\n").nth(1))
        .and_then(|rest| rest.split("\n```").next())
        .expect("the README's configuration example");
    assert!(block.contains("checks:") && block.contains("profile:"));
    assert_eq!(validate(block), Vec::<String>::new(), "README example");
    for check in EXAMPLES {
        let config = std::fs::read_to_string(fixture(&format!("{check}/bad/.gitops-lint.yaml")))
            .expect("fixture config");
        assert_eq!(validate(&config), Vec::<String>::new(), "{check}");
    }
    for wrong in [
        "rule:\n  hpa-replicas-conflict: off\n",
        "rules:\n  hpa-replicas-conflict: loud\n",
        "limits:\n  max-files: -1\n",
        "checks:\n  - id: x\n    expr: 'true'\n",
        "profile:\n  clusters:\n    prod: {argo: 3.1}\n",
    ] {
        assert!(!validate(wrong).is_empty(), "{wrong}");
    }
}
