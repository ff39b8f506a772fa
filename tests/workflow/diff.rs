//! `gitops-lint diff --base`: a git repository built here, a clean base commit, a head that
//! adds an HPA conflict and a broad ignore; exactly those two findings are new, and only the
//! apps the change touches are rendered.

use crate::common::*;

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

    let out = bin()
        .args([
            "diff",
            "--base",
            "HEAD~1",
            "--format",
            "json",
            "--comment",
            "off",
        ])
        .arg(d)
        .output()
        .expect("run");
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
