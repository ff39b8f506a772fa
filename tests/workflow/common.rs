//! A fixture git repository shared by the diff and review tests: a clean base commit, and a
//! head that adds an HPA conflict and a broad ignore.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

/// `gitops-lint diff --base HEAD~1 --format json --comment off`: the pull request's last
/// commit against its parent, as JSON, without touching GitHub.
pub fn diff_last_commit_json() -> Command {
    let mut cmd = bin();
    cmd.args([
        "diff",
        "--base",
        "HEAD~1",
        "--format",
        "json",
        "--comment",
        "off",
    ]);
    cmd
}

pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

pub const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: NAME
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/gitops.git
    targetRevision: main
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

pub const DEPLOYMENT: &str = "apiVersion: apps/v1
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

pub const HPA: &str = "apiVersion: autoscaling/v2
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

pub const BROAD_IGNORE: &str = "  ignoreDifferences:
    # reason: the autoscaler operator tunes its own HPA
    - group: autoscaling
      kind: HorizontalPodAutoscaler
      jsonPointers:
        - /spec
";

/// Base: two clean apps. Head (working tree): shop pins replicas under a new HPA, and its
/// Application gains an ignore of a whole Service spec.
pub fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    for name in ["shop", "billing"] {
        write(
            d,
            &format!("argocd/{name}.yaml"),
            &APP.replace("NAME", name),
        );
    }
    write(d, "apps/shop/deployment.yaml", DEPLOYMENT);
    write(
        d,
        "apps/shop/service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: shop\nspec:\n  ports:\n    - port: 80\n",
    );
    write(
        d,
        "apps/billing/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: billing\ndata:\n  mode: batch\n",
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    write(
        d,
        "apps/shop/deployment.yaml",
        &DEPLOYMENT.replace("spec:\n  selector:", "spec:\n  replicas: 3\n  selector:"),
    );
    write(d, "apps/shop/hpa.yaml", HPA);
    write(
        d,
        "argocd/shop.yaml",
        &format!("{}{BROAD_IGNORE}", APP.replace("NAME", "shop")),
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "head"]);
    dir
}
