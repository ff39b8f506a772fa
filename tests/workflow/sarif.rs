//! `--format sarif` against the official SARIF 2.1.0 schema (from ../shared, located by
//! `GITOPS_LINT_SHARED`; skipped with a reason when it is not there).

use std::path::{Path, PathBuf};
use std::process::Command;

fn shared_dir() -> PathBuf {
    std::env::var_os("GITOPS_LINT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

fn sarif_of(repo: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["--format", "sarif", "--comment", "off"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(repo))
        .output()
        .expect("run");
    serde_json::from_slice(&out.stdout).expect("sarif is json")
}

#[test]
fn sarif_is_valid_against_the_2_1_0_schema() {
    let path = shared_dir().join("schemas/sarif-2.1.0.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "skipped: no SARIF schema at {} (set GITOPS_LINT_SHARED)",
            path.display()
        );
        return;
    };
    // The published schema's `run.language` pattern ends in `]?$`: ECMAScript reads the lone
    // `]` as a literal, Rust's regex refuses it. Escaping it keeps the meaning.
    let text = text.replace("[a-zA-Z]{2}]?$", "[a-zA-Z]{2}\\\\]?$");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema is json");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    for repo in [
        "testdata/demo",
        "testdata/rules/ignore-differences-invalid/bad",
        "testdata/rules/hpa-replicas-conflict/clean",
    ] {
        let log = sarif_of(repo);
        let errors: Vec<String> = validator
            .iter_errors(&log)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{repo}: {errors:#?}");
    }
    // The validator does reject a broken log (so the check above means something).
    let mut broken = sarif_of("testdata/demo");
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn sarif_is_upload_ready() {
    let log = sarif_of("testdata/demo");
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let hpa = rules
        .iter()
        .find(|r| r["id"] == "hpa-replicas-conflict")
        .expect("rule metadata");
    assert!(
        hpa["help"]["markdown"]
            .as_str()
            .is_some_and(|h| h.len() > 100)
    );
    assert_eq!(hpa["defaultConfiguration"]["level"], "error");
    // Every rule links its document at this release's tag, under the crate's repository.
    let repository = env!("CARGO_PKG_REPOSITORY");
    assert!(
        repository.starts_with("https://github.com/"),
        "{repository}"
    );
    for rule in rules {
        let id = rule["id"].as_str().expect("id");
        assert_eq!(
            rule["helpUri"],
            format!(
                "{repository}/blob/v{}/rules/{id}.md",
                env!("CARGO_PKG_VERSION")
            ),
            "{id}"
        );
        // The linked document is the one in this repository, and the help is its text.
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("rules/{id}.md")),
        )
        .unwrap_or_else(|e| panic!("rules/{id}.md: {e}"));
        assert_eq!(rule["help"]["markdown"], doc.as_str(), "{id}");
    }
    let first = &run["results"][0];
    assert_eq!(first["ruleId"], "hpa-replicas-conflict");
    let region = &first["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 8);
    let uri = first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .expect("uri");
    // Relative to the repository root (the checkout), not to the linted directory.
    assert_eq!(uri, "testdata/demo/apps/payments/deployment.yaml");
    assert!(first["partialFingerprints"]["gitopsLint/v1"].is_string());
    let index = first["ruleIndex"].as_u64().expect("index") as usize;
    assert_eq!(rules[index]["id"], "hpa-replicas-conflict");
}
