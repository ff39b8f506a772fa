//! The command line as a user runs it: exit codes, formats, config errors, bad input.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn demo_reports_the_replicas_line_and_exits_1() {
    let out = bin()
        .args([repo("testdata/demo").as_str(), "--no-color"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("hpa-replicas-conflict"), "{text}");
    assert!(text.contains("apps/payments/deployment.yaml:8:3"), "{text}");
    assert!(text.contains("jsonPathReplicas"), "{text}");
}

#[test]
fn json_format_is_versioned_and_located() {
    let out = bin()
        .args([repo("testdata/demo").as_str(), "--format", "json"])
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["version"], 1);
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "hpa-replicas-conflict");
    assert_eq!(f["file"], "apps/payments/deployment.yaml");
    assert_eq!(f["line"], 8);
    assert_eq!(f["column"], 3);
    assert_eq!(f["app"], "payments");
    assert_eq!(f["object"], "Deployment/prod/payments");
}

#[test]
fn fail_on_controls_the_exit_code() {
    let clean = repo("testdata/rules/respect-ignore-differences-missing/bad");
    let out = bin().args([clean.as_str()]).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "only a warning: below --fail-on error"
    );
    let out = bin()
        .args([clean.as_str(), "--fail-on", "warning"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn rules_and_explain() {
    let out = bin().arg("rules").output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("hpa-replicas-conflict") && text.contains("error"));
    let out = bin()
        .args(["explain", "hpa-replicas-conflict"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("# hpa-replicas-conflict"));
    let out = bin()
        .args(["explain", "no-such-rule"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn config_errors_exit_2_with_location() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "rules:\n  hpa-replicas-conflict: warning\n  no-such-rule: off\n",
    )
    .expect("write");
    let out = bin().arg(dir.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".gitops-lint.yaml:3:3") && err.contains("no-such-rule"),
        "{err}"
    );

    std::fs::write(dir.path().join(".gitops-lint.yaml"), "rulez: {}\n").expect("write");
    let out = bin().arg(dir.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn config_severity_off_and_object_ignore() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo");
    copy_dir(&src, dir.path());
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "rules:\n  ignore-differences-invalid: off\nignore:\n  - rule: hpa-replicas-conflict\n    object: Deployment/prod/payments\n    reason: HPA is being rolled out; tracked in OPS-12\n",
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

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).expect("read").flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            std::fs::create_dir_all(&t).expect("mkdir");
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).expect("copy");
        }
    }
}

/// Malformed files each give a located `yaml-syntax` error; nothing panics or hangs, and
/// the good file next to them is still linted.
#[test]
fn bad_input_is_located_and_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).expect("mkdir");
    let w = |name: &str, bytes: &[u8]| std::fs::write(root.join(name), bytes).expect("write");
    w(
        "tabs.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n",
    );
    w(
        "unclosed.yaml",
        b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"never closed\n",
    );
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 9].join(", ")
        ));
    }
    w("bomb.yaml", bomb.as_bytes());
    let mut big = b"apiVersion: v1\nkind: ConfigMap\ndata:\n  blob: ".to_vec();
    big.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
    w("big.yaml", &big);
    w("binary.yaml", &[0x7f, b'E', b'L', b'F', 0, 1, 2, 3]);
    w("latin1.yaml", b"a: caf\xe9\n");
    w("deep.yaml", "- ".repeat(50_000).as_bytes());
    w(
        "good.yaml",
        b"apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  clusterIP: \"\"\n",
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("loop-a.yaml"), root.join("loop-b.yaml")).ok();
        std::os::unix::fs::symlink(root.join("loop-b.yaml"), root.join("loop-a.yaml")).ok();
        std::fs::write(dir.path().join("secret.yaml"), "password: hunter2\n").expect("write");
        std::os::unix::fs::symlink(dir.path().join("secret.yaml"), root.join("escape.yaml")).ok();
    }
    let started = Instant::now();
    let out = bin()
        .arg(&root)
        .args(["--format", "json"])
        .output()
        .expect("run");
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let findings = v["findings"].as_array().cloned().unwrap_or_default();
    let at = |file: &str| {
        findings.iter().find(|f| f["file"] == file).map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_string(),
                f["line"].as_u64().unwrap_or(0),
                f["message"].as_str().unwrap_or("").to_string(),
            )
        })
    };
    let expect = |file: &str, line: u64, needle: &str| {
        let got = at(file);
        assert!(
            got.as_ref()
                .is_some_and(|(r, l, m)| r == "yaml-syntax" && *l == line && m.contains(needle)),
            "{file}: {got:?}"
        );
    };
    expect("tabs.yaml", 4, "");
    expect("unclosed.yaml", 4, "quoted scalar");
    expect("bomb.yaml", 6, "alias");
    expect("big.yaml", 1, "limit");
    expect("binary.yaml", 1, "binary");
    expect("latin1.yaml", 1, "UTF-8");
    expect("deep.yaml", 1, "nesting");
    #[cfg(unix)]
    {
        expect("loop-a.yaml", 1, "symlink");
        expect("escape.yaml", 1, "outside");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("hunter2"));
    }
    // The good file is still linted.
    assert!(at("good.yaml").is_some_and(|(r, _, _)| r == "server-assigned-field-declared"));
    println!("bad input linted in {elapsed:?}");
    assert!(elapsed.as_secs() < 30, "took {elapsed:?}");
}

#[test]
fn apps_lists_parents() {
    let out = bin()
        .args(["apps", repo("testdata/apps/app-of-apps").as_str()])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    assert_eq!(
        lines,
        [
            "APP                              KIND               PARENT                   OBJECTS  STATUS        SOURCE",
            "platform                         argo               root                           1  rendered      helm platform-apps [this repository (the repoURL most Applications use for paths here)]",
            "web                              argo               root                           2  rendered      helm charts/web [this repository (the repoURL most Applications use for paths here)]",
            "root                             argo               -                              2  rendered      directory apps [this repository (the repoURL most Applications use for paths here)]",
            "metrics                          argo               platform                       3  rendered      directory workloads/metrics [this repository (the repoURL most Applications use for paths here)]",
            "argocd                           standalone         -                              1  rendered      directory argocd",
        ]
    );
}

#[test]
fn profile_errors_are_located() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (text, at, needle) in [
        (
            "profile:\n  kube-version: latest\n",
            ".gitops-lint.yaml:2:17",
            "not a Kubernetes version",
        ),
        (
            "profile:\n  api-versions: [v1, {kind: ServiceMonitor}]\n",
            ".gitops-lint.yaml:2:22",
            "group/version",
        ),
        (
            "profile:\n  argo: 3.1\n",
            ".gitops-lint.yaml:2:3",
            "unknown key `argo`",
        ),
        (
            "profile:\n  argo-version: stable\n",
            ".gitops-lint.yaml:2:17",
            "is not an Argo CD version",
        ),
        (
            "profile:\n  autoscalers:\n    - {name: a, namespace: b, target: {name: c}, replicas: 2}\n",
            ".gitops-lint.yaml:3:50",
            "unknown key `replicas`",
        ),
    ] {
        std::fs::write(dir.path().join(".gitops-lint.yaml"), text).expect("write");
        let out = bin().arg(dir.path()).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(at) && err.contains(needle), "{text}: {err}");
    }
}
