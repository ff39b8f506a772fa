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

/// The official SARIF 2.1.0 schema's validator, or `None` (with a note) without ../shared.
fn schema_validator() -> Option<jsonschema::Validator> {
    let path = shared_dir().join("schemas/sarif-2.1.0.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "skipped: no SARIF schema at {} (set GITOPS_LINT_SHARED)",
            path.display()
        );
        return None;
    };
    // The published schema's `run.language` pattern ends in `]?$`: ECMAScript reads the lone
    // `]` as a literal, Rust's regex refuses it. Escaping it keeps the meaning.
    let text = text.replace("[a-zA-Z]{2}]?$", "[a-zA-Z]{2}\\\\]?$");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema is json");
    Some(jsonschema::validator_for(&schema).expect("schema compiles"))
}

#[test]
fn sarif_is_valid_against_the_2_1_0_schema() {
    let Some(validator) = schema_validator() else {
        return;
    };
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
    assert!(first["partialFingerprints"]["gitopsLint/v2"].is_string());
    let index = first["ruleIndex"].as_u64().expect("index") as usize;
    assert_eq!(rules[index]["id"], "hpa-replicas-conflict");
}

fn sarif_of_dir(dir: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["--format", "sarif", "--comment", "off"])
        .arg(dir)
        .output()
        .expect("run");
    serde_json::from_slice(&out.stdout).expect("sarif is json")
}

fn fingerprints(log: &serde_json::Value) -> Vec<String> {
    log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            r["partialFingerprints"]["gitopsLint/v2"]
                .as_str()
                .expect("fingerprint")
                .to_string()
        })
        .collect()
}

/// Every result of the demo and of the real repositories has its own fingerprint, from its
/// problem key alone (no `:N` occurrence suffix needed), so code scanning keeps one alert
/// per problem.
#[test]
fn every_distinct_result_has_its_own_fingerprint() {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo")];
    let corpus = shared_dir().join("corpus/real-repos");
    match std::fs::read_dir(&corpus) {
        Ok(entries) => {
            let mut repos: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            repos.sort();
            dirs.extend(repos);
        }
        Err(_) => println!("real repos skipped: no corpus at {}", corpus.display()),
    }
    let validator = schema_validator();
    let mut total = 0;
    for dir in &dirs {
        let log = sarif_of_dir(dir);
        if let Some(v) = &validator {
            let errors: Vec<String> = v
                .iter_errors(&log)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:#?}", dir.display());
        }
        let prints = fingerprints(&log);
        let unique: std::collections::BTreeSet<&String> = prints.iter().collect();
        assert_eq!(unique.len(), prints.len(), "{}: {prints:#?}", dir.display());
        assert!(
            prints.iter().all(|p| !p.contains(':')),
            "{}: results share a problem key: {prints:#?}",
            dir.display()
        );
        total += prints.len();
    }
    // The demo's three ignore-differences-invalid results (one Application entry) are three.
    let demo = sarif_of("testdata/demo");
    let invalid = demo["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["ruleId"] == "ignore-differences-invalid")
        .count();
    assert_eq!(invalid, 3);
    println!(
        "{total} results in {} repositories, all distinct",
        dirs.len()
    );
}

/// Lines moving (a comment added on top, the entries re-indented) leave every fingerprint
/// as it was.
#[test]
fn fingerprints_survive_line_moves() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo");
    let before = fingerprints(&sarif_of_dir(&demo));
    let dir = tempfile::tempdir().expect("tmp");
    let copy = dir.path().join("demo");
    let status = Command::new("cp")
        .arg("-r")
        .arg(&demo)
        .arg(&copy)
        .status()
        .expect("cp");
    assert!(status.success());
    for rel in ["argocd/webhooks.yaml", "apps/payments/deployment.yaml"] {
        let path = copy.join(rel);
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, format!("# moved down\n\n{text}")).expect("write");
    }
    let after = fingerprints(&sarif_of_dir(&copy));
    let mut a = before.clone();
    let mut b = after.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_eq!(before.len(), 5);
}

/// Rule metadata code scanning shows: the full description from the rule document (not the
/// one-line summary again), the tool's home, and a security severity only with the
/// `security` tag (the only rules code scanning reads it for).
#[test]
fn rule_metadata_is_complete() {
    let log = sarif_of("testdata/demo");
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["informationUri"], env!("CARGO_PKG_REPOSITORY"));
    let rules = driver["rules"].as_array().expect("rules");
    let mut security = 0;
    for rule in rules {
        let id = rule["id"].as_str().expect("id");
        let full = rule["fullDescription"]["text"].as_str().expect("full");
        let short = rule["shortDescription"]["text"].as_str().expect("short");
        assert!(full.len() > short.len() && full != short, "{id}: {full}");
        assert!(
            !full.contains("**Severity:**") && !full.starts_with('#'),
            "{id}"
        );
        let tagged = rule["properties"]["tags"]
            .as_array()
            .expect("tags")
            .iter()
            .any(|t| t == "security");
        let severity = rule["properties"].get("security-severity");
        assert_eq!(tagged, severity.is_some(), "{id}");
        if let Some(s) = severity {
            let v: f64 = s.as_str().expect("a string").parse().expect("a number");
            assert!((0.0..=10.0).contains(&v));
            security += 1;
        }
    }
    assert!(security >= 1);
}
