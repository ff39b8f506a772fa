//! `gitops-lint diff --base`: a git repository built here, a clean base commit, a head that
//! adds an HPA conflict and a broad ignore; exactly those two findings are new, and only the
//! apps the change touches are rendered.

use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: NAME
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/gitops.git
    path: apps/NAME
  destination:
    server: https://kubernetes.default.svc
    namespace: prod
  syncPolicy:
    automated:
      selfHeal: true
    syncOptions:
      - RespectIgnoreDifferences=true
";

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      containers:
        - name: shop
          image: registry.example.com/shop:1.0.0
";

const HPA: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: shop
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: shop
  minReplicas: 2
  maxReplicas: 10
";

const BROAD_IGNORE: &str = "  ignoreDifferences:
    # reason: the feature-flag controller rewrites the flags
    - kind: ConfigMap
      jsonPointers:
        - /data
";

/// Base: two clean apps. Head (working tree): shop pins replicas under a new HPA, and its
/// Application gains an ignore of a whole Service spec.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    for name in ["shop", "billing"] {
        write(d, &format!("argocd/{name}.yaml"), &APP.replace("NAME", name));
    }
    write(d, "apps/shop/deployment.yaml", DEPLOYMENT);
    write(d, "apps/shop/service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: shop\nspec:\n  ports:\n    - port: 80\n");
    write(d, "apps/billing/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: billing\ndata:\n  mode: batch\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    write(
        d,
        "apps/shop/deployment.yaml",
        &DEPLOYMENT.replace("spec:\n  selector:", "spec:\n  replicas: 3\n  selector:"),
    );
    write(d, "apps/shop/hpa.yaml", HPA);
    write(d, "argocd/shop.yaml", &format!("{}{BROAD_IGNORE}", APP.replace("NAME", "shop")));
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "head"]);
    dir
}

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
    let full = bin().args(["--format", "json", "--comment", "off"]).arg(d).output().expect("run");
    assert_eq!(json_findings(&full).len(), 2, "{}", String::from_utf8_lossy(&full.stdout));

    let out = bin()
        .args(["diff", "--base", "HEAD~1", "--format", "json", "--comment", "off"])
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
            ("hpa-replicas-conflict".to_string(), "apps/shop/deployment.yaml".to_string(), 6),
            ("ignore-differences-broad".to_string(), "argocd/shop.yaml".to_string(), 23),
        ]
    );
    // shop and the argocd directory (its Application changed) are rendered; billing is not.
    assert!(stderr.contains("3 changed file(s); rendered 2 of 3 apps"), "{stderr}");

    let human = bin()
        .args(["diff", "--base", "HEAD~1", "--no-color", "--comment", "off"])
        .arg(d)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("2 new finding(s), 0 fixed"), "{text}");
    assert!(text.contains("rendered changes of app shop (+13 -0)"), "{text}");
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
        &format!("{}{BROAD_IGNORE}", APP.replace("NAME", "shop").replace("  namespace: argocd\n", "  namespace: argocd\n  labels:\n    team: shop\n")),
    );
    let out = bin()
        .args(["diff", "--base", "HEAD", "--no-color", "--comment", "off"])
        .arg(d)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("0 new finding(s), 1 fixed"), "{text}");
    assert!(text.contains("fixed: hpa-replicas-conflict Deployment/prod/shop"), "{text}");
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
