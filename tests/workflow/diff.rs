//! `gitops-lint diff --base`: a git repository built here, a clean base commit, a head that
//! adds an HPA conflict and a broad ignore; exactly those two findings are new, and only the
//! apps the change touches are rendered.

use super::common::*;

fn json_findings(out: &std::process::Output) -> Vec<(String, String, u64)> {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_string(),
                f["file"].as_str().unwrap_or("").to_string(),
                f["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn reports_exactly_the_new_findings_and_the_affected_apps_diff() {
    let repo = fixture();
    let d = repo.path();
    // A full lint of the head sees the same two problems.
    let full = bin()
        .args(["--format", "json", "--comment", "off"])
        .arg(d)
        .output()
        .expect("run");
    assert_eq!(
        json_findings(&full).len(),
        2,
        "{}",
        String::from_utf8_lossy(&full.stdout)
    );

    let out = diff_last_commit_json().arg(d).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let mut found = json_findings(&out);
    found.sort();
    assert_eq!(
        found,
        [
            (
                "hpa-replicas-conflict".to_string(),
                "apps/shop/deployment.yaml".to_string(),
                6
            ),
            (
                "ignore-differences-broad".to_string(),
                "argocd/shop.yaml".to_string(),
                25
            ),
        ]
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["apps"]["affected"], serde_json::json!(["argocd", "shop"]));
    assert_eq!(v["apps"]["total"], 3);
    assert_eq!(v["fixed"], serde_json::json!([]));
    // shop and the argocd directory (its Application changed) are rendered; billing is not.
    assert!(
        stderr.contains("3 changed file(s); rendered 2 of 3 apps"),
        "{stderr}"
    );

    let human = bin()
        .args(["diff", "--base", "HEAD~1", "--no-color", "--comment", "off"])
        .arg(d)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("2 new finding(s), 0 fixed"), "{text}");
    assert!(
        text.contains("rendered changes of app shop (+13 -0)"),
        "{text}"
    );
    assert!(text.contains("+  replicas: 3\n"), "{text}");
    assert!(text.contains("+kind: HorizontalPodAutoscaler\n"), "{text}");
    assert!(!text.contains("app billing"), "{text}");
}

#[test]
fn fixed_findings_and_line_moves() {
    let repo = fixture();
    let d = repo.path();
    // Revert the conflict, and move the broad ignore's lines down by adding a label above.
    write(d, "apps/shop/deployment.yaml", DEPLOYMENT);
    write(
        d,
        "argocd/shop.yaml",
        &format!(
            "{}{BROAD_IGNORE}",
            APP.replace("NAME", "shop").replace(
                "  namespace: argocd\n",
                "  namespace: argocd\n  labels:\n    team: shop\n"
            )
        ),
    );
    let out = bin()
        .args(["diff", "--base", "HEAD", "--no-color", "--comment", "off"])
        .arg(d)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("0 new finding(s), 1 fixed"), "{text}");
    assert!(
        text.contains("fixed: hpa-replicas-conflict Deployment/prod/shop"),
        "{text}"
    );
}

#[test]
fn unknown_base_is_a_usage_error() {
    let repo = fixture();
    let out = bin()
        .args(["diff", "--base", "no-such-branch", "--comment", "off"])
        .arg(repo.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown revision `no-such-branch`"));
    let out = bin()
        .args(["diff", "--base=--output=/tmp/x", "--comment", "off"])
        .arg(repo.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn untracked_files_count_as_changes() {
    let repo = fixture();
    let d = repo.path();
    write(
        d,
        "apps/billing/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  a: b\n",
    );
    let out = bin()
        .args(["diff", "--base", "HEAD", "--no-color", "--comment", "off"])
        .arg(d)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 changed file(s); rendered 1 of 3 apps"),
        "{stderr}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("rendered changes of app billing (+7 -0)"),
        "{text}"
    );
    // A comment-only edit changes no rendered manifest.
    let cm = d.join("apps/billing/configmap.yaml");
    let before = std::fs::read_to_string(&cm).expect("read");
    std::fs::write(&cm, format!("# owned by billing\n{before}")).expect("write");
    std::fs::remove_file(d.join("apps/billing/extra.yaml")).expect("rm");
    let out = bin()
        .args(["diff", "--base", "HEAD", "--no-color", "--comment", "off"])
        .arg(d)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("rendered changes of app"), "{text}");
}

/// The long flags a `--help` text lists.
fn flags_of(args: &[&str]) -> std::collections::BTreeSet<String> {
    let out = bin().args(args).output().expect("run");
    // Option lines: `  -q, --quiet`, `      --format <FORMAT>`.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("--")))
        .map(|w| w.trim_end_matches(',').to_string())
        .collect()
}

/// `diff` is what the Action runs on pull requests: every lint flag but the ones that write
/// files (`--fix` and its options, `--write-baseline`) must mean the same there.
#[test]
fn diff_accepts_every_lint_flag() {
    let lint = flags_of(&["--help"]);
    let diff = flags_of(&["diff", "--help"]);
    assert!(
        lint.contains("--no-ignore") && lint.contains("--cache") && lint.contains("--changed"),
        "{lint:?}"
    );
    let writes_files = ["--fix", "--dry-run", "--unsafe-fixes", "--write-baseline"];
    let missing: Vec<&String> = lint
        .iter()
        .filter(|f| !writes_files.contains(&f.as_str()) && *f != "--version")
        .filter(|f| !diff.contains(*f))
        .collect();
    assert!(missing.is_empty(), "diff refuses {missing:?}");
    // `lint` is the same command as no subcommand (whose help also has the program's --version).
    let mut as_lint = flags_of(&["lint", "--help"]);
    as_lint.insert("--version".into());
    assert_eq!(as_lint, lint);
}

/// `--no-ignore`, `--changed` and `--cache` act in diff mode as they do in a lint.
#[test]
fn diff_honours_no_ignore_changed_and_cache() {
    let repo = fixture();
    let d = repo.path();
    // A `.ignore` in the working tree hides the new HPA, so its conflict is not seen...
    write(d, ".ignore", "apps/shop/hpa.yaml\n");
    let rules_of = |extra: &[&str]| -> Vec<String> {
        let out = diff_last_commit_json()
            .args(extra)
            .arg(".")
            .current_dir(d)
            .output()
            .expect("run");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut rules: Vec<String> = json_findings(&out).into_iter().map(|f| f.0).collect();
        rules.sort();
        rules
    };
    let conflict = "hpa-replicas-conflict".to_string();
    assert!(!rules_of(&[]).contains(&conflict));
    // ...unless --no-ignore reads it anyway.
    assert_eq!(
        rules_of(&["--no-ignore"]),
        ["hpa-replicas-conflict", "ignore-differences-broad"]
    );
    // --changed keeps the new findings of the apps the files feed (the cache is empty).
    let cache = d.join("empty-cache");
    assert_eq!(
        rules_of(&[
            "--no-ignore",
            "--cache",
            cache.to_str().expect("utf-8"),
            "--changed",
            "apps/shop/deployment.yaml",
            "--",
        ]),
        ["hpa-replicas-conflict", "ignore-differences-broad"]
    );
    assert!(
        rules_of(&[
            "--no-ignore",
            "--changed",
            "apps/billing/configmap.yaml",
            "--"
        ])
        .is_empty()
    );
}

/// The README's `args` example, through the Action's own script in diff mode (what every
/// pull request runs), with the real binary: findings (1), not a usage error (2).
#[test]
fn action_script_runs_the_documented_args_in_diff_mode() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let action = std::fs::read_to_string(root.join("action.yml")).expect("action.yml");
    let example = readme
        .lines()
        .find(|l| l.starts_with("| `args` |"))
        .and_then(|l| l.split("(`").nth(1))
        .and_then(|l| l.split("`)").next())
        .expect("the README's args example")
        .to_string();
    assert!(
        action.contains(&format!("(for example \"{example}\")")),
        "{example}"
    );
    let repo = fixture();
    let out = std::process::Command::new("bash")
        .arg(root.join(".github/action/run.sh"))
        .env("GITOPS_LINT_BIN", env!("CARGO_BIN_EXE_gitops-lint"))
        .env("GITOPS_LINT_PATH", repo.path())
        .env("GITOPS_LINT_BASE", "HEAD~1")
        .env("GITOPS_LINT_FAIL_ON", "error")
        .env("GITOPS_LINT_FORMAT", "github")
        .env("GITOPS_LINT_COMMENT", "false")
        .env("GITOPS_LINT_ARGS", &example)
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_EVENT_PATH")
        .current_dir(repo.path())
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("::error file=apps/shop/deployment.yaml"),
        "{stdout}"
    );
}

/// Code scanning gets the whole tree in diff mode too (what `lint` reports), so alerts the
/// change did not touch stay open; the other formats report only what the change adds.
#[test]
fn diff_mode_sarif_is_the_whole_tree() {
    let repo = fixture();
    let d = repo.path();
    let sarif = d.join("out.sarif");
    // The head compared with itself: nothing new, both findings still there.
    let out = bin()
        .args([
            "diff",
            "--base",
            "HEAD",
            "--format",
            "json",
            "--comment",
            "off",
        ])
        .arg("--sarif-file")
        .arg(&sarif)
        .arg(d)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(json_findings(&out).is_empty());
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&sarif).expect("sarif written")).expect("json");
    let mut rules: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["ruleId"].as_str())
        .collect();
    rules.sort();
    assert_eq!(rules, ["hpa-replicas-conflict", "ignore-differences-broad"]);
    // `--format sarif` on stdout is the same log.
    let out = bin()
        .args([
            "diff",
            "--base",
            "HEAD",
            "--format",
            "sarif",
            "--comment",
            "off",
        ])
        .arg(d)
        .output()
        .expect("run");
    let stdout: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(stdout, log);
}
