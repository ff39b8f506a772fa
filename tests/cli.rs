//! The command line as a user runs it: exit codes, formats, config errors, bad input.

use crate::common;

use common::copy_dir;
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
    let doc = String::from_utf8_lossy(&out.stdout);
    assert!(doc.starts_with("# hpa-replicas-conflict"));
    // After the document, the severities the code declares (RuleMeta::severity_section).
    assert!(
        doc.ends_with(&gitops_lint::rules::find("hpa-replicas-conflict").map_or(
            String::new(),
            |r| format!("{}{}", r.meta.doc, r.meta.severity_section())
        )) && doc
            .contains("\n## Severity (from the code)\n\n- `error`: the default\n- `warning` when "),
        "{doc}"
    );
    let out = bin()
        .args(["explain", "no-such-rule"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    // A typo gets the rule it is near.
    let out = bin()
        .args(["explain", "hpa-replica-conflict"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown rule `hpa-replica-conflict` (did you mean `hpa-replicas-conflict`?"),
        "{err}"
    );
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
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "rules:\n  hpa-replica-conflict: warning\n",
    )
    .expect("write");
    let out = bin().arg(dir.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did you mean `hpa-replicas-conflict`?"),
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
            "APP                              KIND               CLUSTER              PARENT                   OBJECTS  STATUS        SOURCE",
            "platform                         argo               in-cluster           root                           1  rendered      helm platform-apps [this repository (the repoURL most Applications use for paths here)]",
            "web                              argo               in-cluster           root                           2  rendered      helm charts/web [this repository (the repoURL most Applications use for paths here)]",
            "root                             argo               in-cluster           -                              2  rendered      directory apps [this repository (the repoURL most Applications use for paths here)]",
            "metrics                          argo               in-cluster           platform                       3  rendered      directory workloads/metrics [this repository (the repoURL most Applications use for paths here)]",
            "argocd                           standalone         -                    -                              1  rendered      directory argocd",
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
            "profile:\n  clusters:\n    prod: {flux-version: next}\n",
            ".gitops-lint.yaml:3:26",
            "`profile.clusters.prod.flux-version` is not a Flux version",
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

#[test]
fn a_configuration_symlinked_out_of_the_repo_is_refused_unread() {
    let outside = tempfile::tempdir().expect("tempdir");
    let secret = outside.path().join("runner-secret.yaml");
    std::fs::write(&secret, "hunter2-runner-token: 1\n").expect("write");
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(&secret, dir.path().join(".gitops-lint.yaml")).expect("symlink");
    let out = bin().arg(dir.path()).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("outside the repository"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    // `--config` naming the link inside the tree is the same pull-request content.
    let link = dir.path().join(".gitops-lint.yaml");
    let out = bin()
        .arg(dir.path())
        .arg("--config")
        .arg(&link)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("outside the repository") && !err.contains("hunter2"),
        "{err}"
    );
}

#[test]
fn configuration_errors_quote_keys_never_values() {
    let outside = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, text) in [
        "profile:\n  kube-version: hunter2\n",
        "profile:\n  argo-version: hunter2\n",
        "rules:\n  yaml-syntax: hunter2\n",
        "ignore:\n  - {rule: hunter2, object: x, reason: y}\n",
        "exclude: ['hunter2[']\n",
        "platform:\n  owned-fields: [{owner: a, path: 'hunter2..['}]\n",
        "profile:\n  autoscalers:\n    - {kind: hunter2, name: a, namespace: b, target: {name: c}}\n",
    ]
    .into_iter()
    .enumerate()
    {
        // A `--config` outside the repository may be any file of the runner.
        let config = outside.path().join(format!("c{i}.yaml"));
        std::fs::write(&config, text).expect("write");
        let out = bin()
            .arg(dir.path())
            .arg("--config")
            .arg(&config)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(!err.contains("hunter2"), "{text}: {err}");
        assert!(
            [":1:", ":2:", ":3:"].iter().any(|at| err.contains(at)),
            "located: {text}: {err}"
        );
    }
}

#[test]
fn an_exclude_that_keeps_out_everything_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("apps")).expect("mkdir");
    std::fs::write(
        dir.path().join("apps/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    )
    .expect("write");
    std::fs::write(dir.path().join(".gitops-lint.yaml"), "exclude: [\"**\"]\n").expect("write");
    let out = bin().arg(dir.path()).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nothing would be linted"), "{err}");
    // Excluding part of the tree is fine.
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "exclude: [\"ci/**\"]\n",
    )
    .expect("write");
    let out = bin().arg(dir.path()).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn rules_of(out: &std::process::Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["rule"].as_str().unwrap_or(""),
                f["file"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn quiet_prints_findings_only() {
    let out = bin()
        .args([repo("testdata/demo").as_str(), "--no-color", "--quiet"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(text.contains("hpa-replicas-conflict"), "{text}");
    assert!(
        !text.contains("error(s)"),
        "counts line in quiet output: {text}"
    );
    // Nothing to report: nothing printed at all, on either stream.
    // A `clean-<case>` fixture has no finding at all (a `clean/` one may keep infos).
    let clean = repo("testdata/rules/hpa-replicas-conflict/clean-scaler-other-namespace");
    let out = bin().args([clean.as_str(), "-q"]).output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // Without it the counts line is there (so the check above means something).
    let out = bin().args([clean.as_str()]).output().expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 error(s)"));
    // The notes --fix --dry-run prints on stderr go too.
    let dir = repo("testdata/demo");
    let out = bin()
        .args([dir.as_str(), "--fix", "--dry-run", "-q"])
        .output()
        .expect("run");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("RespectIgnoreDifferences"));
}

#[test]
fn a_misspelled_suppression_is_reported_with_the_nearest_rule() {
    let bad = repo("testdata/rules/suppression-unknown-rule/bad");
    let out = bin()
        .args([bad.as_str(), "--format", "json"])
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let findings = v["findings"].as_array().expect("findings");
    let typo = findings
        .iter()
        .find(|f| f["rule"] == "suppression-unknown-rule" && f["line"] == 6)
        .expect("typo reported");
    assert!(
        typo["message"]
            .as_str()
            .is_some_and(|m| m.contains("`hpa-replica-conflict`"))
    );
    assert!(
        typo["help"]
            .as_str()
            .is_some_and(|h| h.contains("ignore[hpa-replicas-conflict]")),
        "{typo}"
    );
    // On the id itself, just after `ignore[` (column 30 to 36 of that line).
    assert_eq!(typo["column"], 37);
    assert_eq!(typo["end_column"], 57);
    // The finding it meant to hide is still reported.
    assert!(
        findings
            .iter()
            .any(|f| f["rule"] == "hpa-replicas-conflict")
    );
    let out = bin()
        .args([bad.as_str(), "--no-color"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("did you mean `hpa-replicas-conflict`?"));
}

#[test]
fn gitignored_files_are_not_read_unless_no_ignore() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).expect("git dir");
    std::fs::create_dir_all(root.join("apps/web")).expect("mkdir");
    std::fs::create_dir_all(root.join("rendered")).expect("mkdir");
    std::fs::write(
        root.join("apps/web/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n",
    )
    .expect("write");
    // Build output a .gitignore excludes, and scratch files an .ignore excludes: both broken.
    std::fs::write(root.join(".gitignore"), "rendered/\n").expect("write");
    std::fs::write(root.join("rendered/all.yaml"), "a: [\n").expect("write");
    std::fs::write(root.join(".ignore"), "scratch.yaml\n").expect("write");
    std::fs::write(root.join("apps/web/scratch.yaml"), "b: {\n").expect("write");
    let path = root.to_string_lossy().into_owned();
    let out = bin()
        .args([path.as_str(), "--format", "json"])
        .output()
        .expect("run");
    assert_eq!(rules_of(&out), Vec::<String>::new());
    assert_eq!(out.status.code(), Some(0));
    let out = bin()
        .args([path.as_str(), "--format", "json", "--no-ignore"])
        .output()
        .expect("run");
    assert_eq!(
        rules_of(&out),
        [
            "yaml-syntax apps/web/scratch.yaml",
            "yaml-syntax rendered/all.yaml"
        ]
    );
    // `apps` reads the same files the lint does.
    let out = bin().args(["apps", path.as_str()]).output().expect("run");
    // (No app of that directory: the STATUS column's `rendered` is another word.)
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !listing.lines().any(|l| l.starts_with("rendered")),
        "{listing}"
    );
}

#[test]
fn changed_files_limit_the_report_to_the_apps_they_feed() {
    let demo = repo("testdata/demo");
    let run = |files: &[&str]| {
        let mut cmd = bin();
        cmd.current_dir(&demo)
            .args(["--format", "json", "--changed"])
            .args(files);
        cmd.output().expect("run")
    };
    // The HPA feeds the payments app only.
    let out = run(&["apps/payments/hpa.yaml"]);
    assert_eq!(
        rules_of(&out),
        ["hpa-replicas-conflict apps/payments/deployment.yaml"]
    );
    assert_eq!(out.status.code(), Some(1));
    // The webhooks app's Application: only its findings.
    let out = run(&["argocd/webhooks.yaml"]);
    let rules = rules_of(&out);
    assert!(
        !rules.is_empty() && rules.iter().all(|r| r.ends_with("argocd/webhooks.yaml")),
        "{rules:?}"
    );
    // No file at all (nothing changed): nothing to report.
    let out = run(&[]);
    assert_eq!(rules_of(&out), Vec::<String>::new());
    assert_eq!(out.status.code(), Some(0));
    // A file no app reads: nothing.
    let out = run(&["README.md"]);
    assert_eq!(rules_of(&out), Vec::<String>::new());
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = bin().args(["completions", shell]).output().expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        for word in ["explain", "fail-on", "quiet", "no-ignore"] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    let out = bin().args(["completions", "tcsh"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = bin().arg("man").output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(".ie") || text.contains("\n.TH gitops-lint 1"),
        "{text}"
    );
    assert!(text.contains("\\-\\-fail\\-on"), "{text}");
    // bash accepts the generated script.
    if Path::new("/bin/bash").exists() {
        let script = bin()
            .args(["completions", "bash"])
            .output()
            .expect("run")
            .stdout;
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("c.bash");
        std::fs::write(&file, script).expect("write");
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(". {} && complete -p gitops-lint", file.display()))
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn shared_dir() -> std::path::PathBuf {
    std::env::var_os("GITOPS_LINT_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

fn helm_installed() -> bool {
    Command::new("helm")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A chart that prints the values the CLI items set, in a directory of its own.
fn write_values_chart(dir: &Path) {
    std::fs::create_dir_all(dir.join("chart/templates")).expect("mkdir");
    std::fs::write(
        dir.join("chart/Chart.yaml"),
        "apiVersion: v2\nname: notes\nversion: 1.2.0\n",
    )
    .expect("write");
    std::fs::write(dir.join("chart/values.yaml"), "replicas: 1\nnote: none\n").expect("write");
    std::fs::write(
        dir.join("chart/templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-notes\n  namespace: {{ .Release.Namespace }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n  note: {{ .Values.note | quote }}\n",
    )
    .expect("write");
    std::fs::write(dir.join("prod.yaml"), "replicas: 3\n").expect("write");
    std::fs::write(dir.join("note.txt"), "line one, with a comma\nline two\n").expect("write");
}

#[test]
fn helm_template_help_lists_the_supported_flags() {
    for args in [
        &["helm", "template", "--help"][..],
        &["helm", "template", "rel", "c", "-h"],
        &["helm", "--help"],
    ] {
        let out = bin().args(args).output().expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for flag in [
            "--set-file",
            "--dry-run",
            "--values",
            "--show-only",
            "--kube-version",
        ] {
            assert!(text.contains(flag), "{args:?}: help lacks {flag}");
        }
    }
}

#[test]
fn helm_template_set_file_and_dry_run_match_helm() {
    let dir = tempfile::tempdir().expect("tmp");
    write_values_chart(dir.path());
    let args = [
        "template",
        "rel",
        "chart",
        "-n",
        "shop",
        "-f",
        "prod.yaml",
        "--set-file",
        "note=note.txt",
        "--dry-run",
    ];
    let ours = bin()
        .current_dir(dir.path())
        .arg("helm")
        .args(args)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&ours.stdout).into_owned();
    assert_eq!(
        ours.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert!(
        text.contains("note: \"line one, with a comma\\nline two\\n\""),
        "{text}"
    );
    assert!(text.contains("replicas: \"3\""), "{text}");
    for dry in ["--dry-run=client", "--dry-run=server"] {
        let mut a = args.to_vec();
        let last = a.len() - 1;
        a[last] = dry;
        let out = bin()
            .current_dir(dir.path())
            .arg("helm")
            .args(&a)
            .output()
            .expect("run");
        assert_eq!(String::from_utf8_lossy(&out.stdout), text, "{dry}");
    }
    // A file that is not there: helm's message.
    let out = bin()
        .current_dir(dir.path())
        .args([
            "helm",
            "template",
            "rel",
            "chart",
            "--set-file",
            "note=missing.txt",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "failed parsing --set-file data: open missing.txt: no such file or directory"
        )
    );
    if !helm_installed() {
        println!("skipped the comparison with helm: helm is not installed");
        return;
    }
    let theirs = Command::new("helm")
        .current_dir(dir.path())
        .args(args)
        .output()
        .expect("helm");
    assert_eq!(text, String::from_utf8_lossy(&theirs.stdout));
}

#[test]
fn absolute_and_outside_cwd_chart_paths_render_as_helm_does() {
    let chart = shared_dir().join("corpus/real-repos/argoproj__argocd-example-apps/helm-guestbook");
    let Ok(chart) = std::fs::canonicalize(&chart) else {
        println!("skipped: no corpus chart at {}", chart.display());
        return;
    };
    let elsewhere = tempfile::tempdir().expect("tmp");
    let values = chart.join("values-production.yaml");
    let abs = chart.to_string_lossy().into_owned();
    let args = [
        "template",
        "rel",
        abs.as_str(),
        "-n",
        "shop",
        "-f",
        values.to_str().expect("utf-8"),
    ];
    let ours = bin()
        .current_dir(elsewhere.path())
        .arg("helm")
        .args(args)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&ours.stdout).into_owned();
    assert_eq!(
        ours.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert!(
        text.contains("# Source: helm-guestbook/templates/deployment.yaml"),
        "{text}"
    );
    // `render` with the chart given by absolute path prints the same as `helm template`
    // with render's release name.
    let rendered = bin()
        .current_dir(elsewhere.path())
        .args(["render", abs.as_str()])
        .output()
        .expect("run");
    assert_eq!(
        rendered.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    // And a relative path that leaves the cwd.
    let up = Path::new("..").join(chart.strip_prefix("/").expect("absolute"));
    let depth = elsewhere
        .path()
        .canonicalize()
        .expect("tmp")
        .components()
        .count()
        - 1;
    let rel = (1..depth).fold(up, |p, _| Path::new("..").join(p));
    let relative = bin()
        .current_dir(elsewhere.path())
        .args(["helm", "template", "rel"])
        .arg(&rel)
        .args(["-n", "shop", "-f", values.to_str().expect("utf-8")])
        .output()
        .expect("run");
    assert_eq!(
        String::from_utf8_lossy(&relative.stdout),
        text,
        "{}",
        rel.display()
    );
    if !helm_installed() {
        println!("skipped the comparison with helm: helm is not installed");
        return;
    }
    let theirs = Command::new("helm")
        .current_dir(elsewhere.path())
        .args(args)
        .output()
        .expect("helm");
    assert_eq!(text, String::from_utf8_lossy(&theirs.stdout));
    let theirs = Command::new("helm")
        .current_dir(elsewhere.path())
        .args(["template", "release-name", abs.as_str()])
        .output()
        .expect("helm");
    assert_eq!(
        String::from_utf8_lossy(&rendered.stdout),
        String::from_utf8_lossy(&theirs.stdout)
    );
}

#[test]
fn render_reads_a_kustomization_outside_the_cwd() {
    let dir = tempfile::tempdir().expect("tmp");
    let base = dir.path().join("gitops/apps/web");
    std::fs::create_dir_all(&base).expect("mkdir");
    std::fs::write(
        base.join("kustomization.yaml"),
        "namespace: web\nresources: [cm.yaml]\n",
    )
    .expect("write");
    std::fs::write(
        base.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n",
    )
    .expect("write");
    let elsewhere = tempfile::tempdir().expect("tmp");
    let out = bin()
        .current_dir(elsewhere.path())
        .arg("render")
        .arg(&base)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("namespace: web"));
    // What `kubectl kustomize` prints for the same absolute path, from the same place.
    let Ok(theirs) = Command::new("kubectl")
        .current_dir(elsewhere.path())
        .arg("kustomize")
        .arg(&base)
        .output()
    else {
        println!("skipped the comparison: kubectl is not installed");
        return;
    };
    assert!(theirs.status.success());
    assert_eq!(out.stdout, theirs.stdout);
}

/// `--fix --dry-run --format json`: the patch as JSON, nothing written.
#[test]
fn fix_dry_run_prints_json_when_asked() {
    let demo = repo("testdata/demo");
    let out = bin()
        .args(["--fix", "--dry-run", "--format", "json", "--comment", "off"])
        .arg(&demo)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["version"], 1);
    let patches = v["patches"].as_array().expect("patches");
    assert!(!patches.is_empty(), "{v}");
    assert!(v["fixed"].as_u64().is_some_and(|n| n > 0));
    for p in patches {
        let file = p["file"].as_str().expect("file");
        assert!(
            p["diff"]
                .as_str()
                .is_some_and(|d| d.starts_with(&format!("--- a/{file}\n"))),
            "{p}"
        );
    }
}

/// overlay -> mid -> base: three levels of kustomizations, which `max-kustomize-depth=2` stops.
fn three_level_kustomization() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write(
        "apps/web/overlay/kustomization.yaml",
        "resources: [../mid]\n",
    );
    write("apps/web/mid/kustomization.yaml", "resources: [../base]\n");
    write("apps/web/base/kustomization.yaml", "resources: [cm.yaml]\n");
    write(
        "apps/web/base/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata: {a: b}\n",
    );
    dir
}

/// `--fix` lints twice (before and after writing); the second lint, whose findings and exit
/// code are reported, keeps the user's `--limit`: a limit the first lint was held to is not
/// dropped by the second.
#[test]
fn fix_keeps_the_limits_for_the_lint_it_reports() {
    let dir = three_level_kustomization();
    let depth_failures = |extra: &[&str]| -> usize {
        let out = bin()
            .args([
                "--format",
                "json",
                "--comment",
                "off",
                "--limit",
                "max-kustomize-depth=2",
            ])
            .args(extra)
            .arg(dir.path())
            .output()
            .expect("run");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        v["findings"]
            .as_array()
            .map(|f| {
                f.iter()
                    .filter(|f| {
                        f["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("limits.max-kustomize-depth"))
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let plain = depth_failures(&[]);
    assert!(plain > 0, "the limit holds without --fix");
    assert_eq!(depth_failures(&["--fix"]), plain, "and with --fix");
}

/// `--argo-version` overrides what the repository says: the CRD finding of Argo CD 3.x goes
/// away under 2.14, and the coverage line names the flag; a value that is no release is a
/// usage error.
#[test]
fn argo_version_flag_selects_the_release() {
    let fixture = repo("testdata/rules/crd-preserve-unknown-fields/bad");
    let out = bin().arg(&fixture).output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("crd-preserve-unknown-fields"), "{text}");
    let out = bin()
        .arg(&fixture)
        .args(["--argo-version", "2.14"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("crd-preserve-unknown-fields")
            && text.contains("judged with Argo CD 2.14 (--argo-version)"),
        "{text}"
    );
    let out = bin()
        .arg(&fixture)
        .args(["--argo-version", "stable"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a release"));
}

/// Every command that builds the model takes the lint's `--limit` (and `--no-ignore`), so
/// `apps`, `render --app` and `fetch` see the model `lint --limit …` lints: here a
/// three-level kustomization that `max-kustomize-depth=2` stops.
#[test]
fn every_command_that_builds_the_model_takes_the_limits() {
    let dir = three_level_kustomization();
    let limit = ["--limit", "max-kustomize-depth=2"];
    let run = |args: &[&str], limited: bool| {
        let mut cmd = bin();
        cmd.args(args);
        if limited {
            cmd.args(limit);
        }
        cmd.arg(dir.path()).output().expect("run")
    };
    // apps: the overlay renders without the limit and fails with it.
    let status = |limited: bool| -> String {
        let out = run(&["apps", "--format", "json"], limited);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        let apps = v["apps"].as_array().cloned().unwrap_or_default();
        let overlay = apps
            .iter()
            .find(|a| a["name"].as_str() == Some("apps/web/overlay"))
            .unwrap_or_else(|| panic!("no overlay app: {v}"));
        format!("{} {}", overlay["status"], overlay["reason"])
    };
    assert_eq!(status(false), "\"rendered\" null", "apps without --limit");
    assert_eq!(
        status(true),
        "\"not-rendered\" \"render-failed\"",
        "apps honours --limit"
    );

    // render --app: prints the ConfigMap without the limit; with it, the located failure.
    let plain = run(&["render", "--app", "apps/web/overlay"], false);
    assert!(plain.status.success());
    assert!(String::from_utf8_lossy(&plain.stdout).contains("name: web"));
    let limited = run(&["render", "--app", "apps/web/overlay"], true);
    assert!(!limited.status.success());
    assert!(
        String::from_utf8_lossy(&limited.stderr).contains("max-kustomize-depth"),
        "{}",
        String::from_utf8_lossy(&limited.stderr)
    );

    // fetch accepts the same flags (nothing remote here: nothing to download).
    if cfg!(feature = "fetch") {
        let fetched = run(&["fetch", "--quiet", "--no-ignore"], true);
        assert!(
            fetched.status.success(),
            "{}",
            String::from_utf8_lossy(&fetched.stderr)
        );
    }
}
