//! Issue 19's attacks, one repo each, as a pull request would bring them: each is a located
//! finding and exit 1 (never a crash, an abort or a silent pass), and what `helm template`
//! prints is not reproducible while lint stays deterministic. Time and peak memory are
//! measured by bench/adversarial.sh, not asserted here.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

/// A repo with one chart `c` (`Chart.yaml` and `templates/cm.yaml` = `template`), and
/// `extra` files (path, text).
fn chart_repo(template: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(root)).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
    write("c/templates/cm.yaml", template);
    for (rel, text) in extra {
        write(rel, text);
    }
    dir
}

fn lint_json(root: &Path, args: &[&str]) -> (Output, Vec<Value>) {
    let out = bin()
        .arg(root)
        .args(["--format", "json"])
        .args(args)
        .output()
        .expect("run gitops-lint");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let findings = v["findings"].as_array().cloned().unwrap_or_default();
    (out, findings)
}

/// The one finding of `rule` (file, line, message), asserting exit 1.
fn located(out: &Output, findings: &[Value], rule: &str) -> (String, u64, String) {
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = findings
        .iter()
        .find(|f| f["rule"] == rule)
        .unwrap_or_else(|| panic!("no {rule} finding in {findings:#?}"));
    (
        f["file"].as_str().unwrap_or_default().to_string(),
        f["line"].as_u64().unwrap_or(0),
        f["message"].as_str().unwrap_or_default().to_string(),
    )
}

const CM_HEAD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n";

#[test]
fn a_huge_printf_precision_prints_as_go_does_without_a_panic() {
    let repo = chart_repo(
        &format!("{CM_HEAD}  v: \"{{{{ printf \"%.65536f\" 1.0 | len }}}}\"\n"),
        &[],
    );
    let out = bin()
        .args(["render", "c"])
        .current_dir(repo.path())
        .output()
        .expect("render");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("v: \"65538\""));
}

#[test]
fn a_string_doubled_in_a_loop_stops_at_the_memory_budget() {
    let repo = chart_repo(
        &format!(
            "{{{{- $s := \"xxxxxxxx\" }}}}{{{{- range until 40 }}}}{{{{- $s = print $s $s }}}}{{{{- end }}}}\n{CM_HEAD}  v: \"{{{{ len $s }}}}\"\n"
        ),
        &[],
    );
    let (out, findings) = lint_json(repo.path(), &[]);
    let (file, line, message) = located(&out, &findings, "render-failed");
    assert_eq!(
        (file.as_str(), line),
        ("c/templates/cm.yaml", 1),
        "{message}"
    );
    assert!(
        message.contains("limits.max-render-memory-bytes"),
        "{message}"
    );
}

#[test]
fn to_yaml_of_shared_structure_stops_at_the_memory_budget() {
    let repo = chart_repo(
        &format!(
            "{{{{- $d := dict \"a\" \"b\" }}}}{{{{- range until 30 }}}}{{{{- $d = dict \"l\" $d \"r\" $d }}}}{{{{- end }}}}\n{CM_HEAD}  v: \"{{{{ toYaml $d | len }}}}\"\n"
        ),
        &[],
    );
    let (out, findings) = lint_json(repo.path(), &[]);
    let (file, line, message) = located(&out, &findings, "render-failed");
    assert_eq!(
        (file.as_str(), line),
        ("c/templates/cm.yaml", 7),
        "{message}"
    );
    assert!(message.contains("toYaml"), "{message}");
    assert!(
        message.contains("limits.max-render-memory-bytes"),
        "{message}"
    );
}

#[test]
fn a_pull_request_cannot_raise_its_own_limits() {
    let repo = chart_repo(
        &format!(
            "{CM_HEAD}{{{{- range until 1000 }}}}{{{{- range until 1000 }}}}{{{{- range until 1000 }}}}{{{{- end }}}}{{{{- end }}}}{{{{- end }}}}\n"
        ),
        &[(
            ".gitops-lint.yaml",
            "limits:\n  max-template-steps: 4000000000000\n  max-render-seconds: 100000\n",
        )],
    );
    let (out, findings) = lint_json(repo.path(), &[]);
    let (_, _, message) = located(&out, &findings, "render-failed");
    // A default limit stops it (steps, seconds or the memory the billion `until` lists add
    // up to: which comes first depends on the build).
    assert!(
        [
            "max-template-steps",
            "max-render-seconds",
            "max-render-memory-bytes"
        ]
        .iter()
        .any(|k| message.contains(&format!("limits.{k}"))),
        "{message}"
    );
    let warnings: Vec<(String, u64)> = findings
        .iter()
        .filter(|f| f["rule"] == "yaml-syntax" && f["severity"] == "warning")
        .map(|f| {
            (
                f["file"].as_str().unwrap_or_default().to_string(),
                f["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        warnings,
        [
            (".gitops-lint.yaml".to_string(), 2),
            (".gitops-lint.yaml".to_string(), 3)
        ]
    );
    // The workflow (the command line) can raise a limit, not past its ceiling.
    let out = bin()
        .arg(repo.path())
        .args(["--limit", "max-render-seconds=100000"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hard ceiling"));
}

#[test]
fn key_generation_in_a_loop_is_budgeted() {
    let repo = chart_repo(
        &format!(
            "{{{{- range until 1000 }}}}{{{{ $k := genPrivateKey \"rsa\" }}}}{{{{- end }}}}\n{CM_HEAD}  v: x\n"
        ),
        &[],
    );
    let (out, findings) = lint_json(repo.path(), &[]);
    let (file, line, message) = located(&out, &findings, "render-failed");
    assert_eq!(
        (file.as_str(), line),
        ("c/templates/cm.yaml", 1),
        "{message}"
    );
    assert!(message.contains("genPrivateKey"), "{message}");
}

#[test]
fn helm_template_output_is_random_on_every_run_and_lint_is_deterministic() {
    let repo = chart_repo(
        &format!(
            "{CM_HEAD}  password: {{{{ randAlphaNum 24 | quote }}}}\n  key: {{{{ genPrivateKey \"rsa\" | quote }}}}\n"
        ),
        &[],
    );
    let template = || {
        let out = bin()
            .args(["helm", "template", "r", "c"])
            .current_dir(repo.path())
            .output()
            .expect("helm template");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.trim().strip_prefix(&format!("{name}: ")))
                .unwrap_or_default()
                .to_string()
        };
        (field("password"), field("key"))
    };
    let (p1, k1) = template();
    let (p2, k2) = template();
    assert_eq!(p1.len(), 26, "{p1}");
    assert_ne!(p1, p2, "randAlphaNum repeats between runs");
    assert!(k1.contains("BEGIN RSA PRIVATE KEY"), "{k1}");
    assert_ne!(k1, k2, "genPrivateKey repeats between runs");
    // `render --app` prints what the lint pipeline rendered: random there too.
    let render_app = || {
        let out = bin()
            .args(["render", ".", "--app", "c"])
            .current_dir(repo.path())
            .output()
            .expect("render --app");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (r1, r2) = (render_app(), render_app());
    assert!(r1.contains("password: "), "{r1}");
    assert_ne!(r1, r2, "render --app repeats its random values");
    let lint = || {
        bin()
            .arg(repo.path())
            .args(["--format", "json"])
            .output()
            .expect("lint")
            .stdout
    };
    assert_eq!(lint(), lint(), "lint output differs between runs");
}

#[test]
fn control_characters_in_file_names_never_reach_the_log_raw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = "apps/\u{1b}[31mred\u{7}.yaml";
    std::fs::create_dir_all(dir.path().join("apps")).expect("mkdir");
    std::fs::write(dir.path().join(name), "a: [unclosed\n").expect("write");
    for format in ["human", "github"] {
        let out = bin()
            .arg(dir.path())
            // The broken file is deployed by no app, so its YAML error is info.
            .args(["--format", format, "--no-color", "--fail-on", "info"])
            .output()
            .expect("lint");
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{format}: {text}"
        );
        assert!(
            text.contains("\\u{1b}[31mred\\u{7}.yaml"),
            "{format}: {text}"
        );
    }
}

/// A repo of `(path, text)` files and nothing else.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    dir
}

#[test]
fn a_kustomization_listing_itself_is_a_located_cycle() {
    let repo = repo(&[("a/kustomization.yaml", "resources: [., cm.yaml]\n")]);
    let (out, findings) = lint_json(repo.path(), &[]);
    let (file, line, message) = located(&out, &findings, "render-failed");
    assert_eq!(
        (file.as_str(), line),
        ("a/kustomization.yaml", 1),
        "{message}"
    );
    assert!(
        message.contains("cycle detected") && message.contains("a -> a"),
        "{message}"
    );
}

#[test]
fn two_kustomizations_listing_each_other_are_a_cycle_on_the_closing_entry() {
    let repo = repo(&[
        ("x/kustomization.yaml", "resources:\n- ../y\n"),
        ("y/kustomization.yaml", "resources:\n- ../x\n"),
    ]);
    let (out, findings) = lint_json(repo.path(), &[]);
    let cycles: Vec<_> = findings
        .iter()
        .filter(|f| f["rule"] == "render-failed")
        .collect();
    assert_eq!(cycles.len(), 1, "one finding per cycle: {cycles:#?}");
    let (file, line, message) = located(&out, &findings, "render-failed");
    assert_eq!(
        (file.as_str(), line),
        ("y/kustomization.yaml", 2),
        "{message}"
    );
    assert!(message.contains("x -> y -> x"), "{message}");
}

const APP_HEAD: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: payments\n  namespace: argocd\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: payments\n";

#[test]
fn a_path_dedented_from_source_is_reported_on_its_line() {
    let repo = repo(&[(
        "argocd/payments.yaml",
        &format!(
            "{APP_HEAD}  source:\n    repoURL: https://github.com/example/deploy.git\n    targetRevision: v1.4.0\n  path: apps/payments\n"
        ),
    )]);
    let (out, findings) = lint_json(repo.path(), &[]);
    let (file, line, message) = located(&out, &findings, "gitops-object-invalid");
    assert_eq!(
        (file.as_str(), line),
        ("argocd/payments.yaml", 14),
        "{message}"
    );
    assert_eq!(
        message,
        "unknown field spec.path: Application's `path` belongs under spec.source"
    );
    // One finding for one mistake: not also "the source has no path".
    let n = findings
        .iter()
        .filter(|f| f["rule"] == "gitops-object-invalid")
        .count();
    assert_eq!(n, 1, "{findings:#?}");
}

#[test]
fn applications_a_chart_renders_are_checked_on_the_template_line_and_values_are_not_noise() {
    let template = "{{- range .Values.apps }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ .name }}\n  namespace: argocd\nspec:\n  project: default\n  revisionHistoryLimit: {{ $.Values.history }}\n  source:\n    repoURL: https://github.com/example/deploy.git\n    targetRevision: v1.4.0\n    path: apps/{{ .name }}\n    helm:\n      valueFiles: {{ .valueFiles | toJson }}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {{ .name }}\n  syncPolicy:\n    automated:\n      prune: {{ .prune }}\n{{- end }}\n";
    let values = "history: 3\napps:\n  - name: web\n    prune: true\n    valueFiles: [values.yaml]\n  - name: api\n    prune: enabled\n    valueFiles: [values.yaml]\n";
    let repo = repo(&[
        (
            "apps-chart/Chart.yaml",
            "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
        ),
        ("apps-chart/values.yaml", values),
        ("apps-chart/templates/apps.yaml", template),
    ]);
    let (out, findings) = lint_json(repo.path(), &[]);
    let ours: Vec<(String, u64, String)> = findings
        .iter()
        .filter(|f| f["rule"] == "gitops-object-invalid")
        .map(|f| {
            (
                f["file"].as_str().unwrap_or_default().to_string(),
                f["line"].as_u64().unwrap_or(0),
                f["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    // Only `enabled` (a string where a boolean is required) of the second app.
    assert_eq!(ours.len(), 1, "{ours:#?}");
    let (file, line, message) = &ours[0];
    assert_eq!(
        (file.as_str(), *line),
        ("apps-chart/templates/apps.yaml", 22),
        "{message}"
    );
    assert!(
        message.starts_with("spec.syncPolicy.automated.prune must be a boolean, not a string"),
        "{message}"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// Template functions whose output can outgrow their arguments, each with a template that
/// would need gigabytes if the result were built before being checked.
fn growth_cases() -> Vec<(&'static str, String)> {
    // `$s` is one megabyte; `$many` repeats it 5000 times as arguments.
    let mb = "{{- $s := repeat 1048576 \"a\" }}";
    let many = vec!["$s"; 5000].join(" ");
    // `$s` doubled from 8 MB to 64 MB (120 MB created: inside the 128 MB budget).
    let mb64 = "{{- $s := repeat 8000000 \"a\" }}{{- $s = print $s $s }}{{- $s = print $s $s }}{{- $s = print $s $s }}";
    vec![
        ("replace", format!("{mb}{{{{ replace \"a\" (repeat 20000 \"b\") $s | len }}}}")),
        (
            "regexReplaceAll",
            format!("{mb}{{{{ regexReplaceAll \"a+\" $s (repeat 20000 \"$0\") | len }}}}"),
        ),
        (
            "regexReplaceAllLiteral",
            format!("{mb}{{{{ regexReplaceAllLiteral \"a\" $s (repeat 20000 \"b\") | len }}}}"),
        ),
        ("repeat", "{{ repeat 100000000000 \"ab\" | len }}".to_string()),
        (
            "toToml",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = list $l $l }}{{- end }}{{ toToml (dict \"k\" $l) | len }}".to_string(),
        ),
        (
            "toJson",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = list $l $l }}{{- end }}{{ toJson $l | len }}".to_string(),
        ),
        (
            "printf",
            "{{- $f := repeat 5000 \"%[1]1048576d\" }}{{ printf $f 7 | len }}".to_string(),
        ),
        ("indent", format!("{mb}{{{{ indent 20000 (replace \"a\" \"\\n\" $s) | len }}}}")),
        ("nindent", format!("{mb}{{{{ nindent 20000 (replace \"a\" \"\\n\" $s) | len }}}}")),
        ("join", "{{ join (repeat 100000 \"x\") (until 200000) | len }}".to_string()),
        ("wrapWith", format!("{mb}{{{{ wrapWith 1 (repeat 20000 \"-\") $s | len }}}}")),
        ("cat", format!("{mb}{{{{ cat {many} | len }}}}")),
        ("quote", format!("{mb}{{{{ quote {many} | len }}}}")),
        ("squote", format!("{mb}{{{{ squote {many} | len }}}}")),
        ("toStrings", format!("{mb}{{{{ toStrings (list {many}) | len }}}}")),
        (
            "concat",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = concat $l $l }}{{- end }}{{ len $l }}".to_string(),
        ),
        // A 64 MB string cut into 64 million strings: about 5 GB of small allocations.
        ("splitList", format!("{mb64}{{{{ splitList \"\" $s | len }}}}")),
        ("split", format!("{mb64}{{{{ split \"\" $s | len }}}}")),
        ("splitn", format!("{mb64}{{{{ splitn \"\" 100000000000 $s | len }}}}")),
        ("regexSplit", format!("{mb64}{{{{ regexSplit \"\" $s -1 | len }}}}")),
        ("regexFindAll", format!("{mb64}{{{{ regexFindAll \".\" $s -1 | len }}}}")),
        // Lists whose length is a number: 320 MB of slots for ten million elements.
        ("until", "{{ until 9999999 | len }}".to_string()),
        ("untilStep", "{{ untilStep 0 9999999 1 | len }}".to_string()),
        ("seq", "{{ seq 1 9999999 | len }}".to_string()),
        ("chunk", "{{ chunk 1 (until 3000000) | len }}".to_string()),
        (
            "deepCopy",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = list $l $l }}{{- end }}{{ deepCopy $l | len }}".to_string(),
        ),
        (
            "toYaml",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = list $l $l }}{{- end }}{{ toYaml $l | len }}".to_string(),
        ),
        (
            "toPrettyJson",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = list $l $l }}{{- end }}{{ toPrettyJson $l | len }}".to_string(),
        ),
        (
            "toRawJson",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = list $l $l }}{{- end }}{{ toRawJson $l | len }}".to_string(),
        ),
        (
            "toString",
            "{{- $l := list 1 2 }}{{- range until 40 }}{{- $l = list $l $l }}{{- end }}{{ toString $l | len }}".to_string(),
        ),
    ]
}

/// Every template function whose output can outgrow its arguments, driven with sizes that
/// would need 5 to 20 GB if built before being checked, under a 4 GiB address-space cap:
/// each chart stops with its own located `render-failed` naming the memory budget, and the
/// process survives to report all of them (issue 36: these were out-of-memory aborts).
#[test]
fn every_growth_function_stops_at_the_memory_budget_before_allocating() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        println!("skipped: no prlimit (util-linux)");
        return;
    }
    let cases = growth_cases();
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, (_, body)) in cases.iter().enumerate() {
        let chart = dir.path().join(format!("c{i}"));
        std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
        std::fs::write(
            chart.join("Chart.yaml"),
            format!("apiVersion: v2\nname: c{i}\nversion: 0.1.0\n"),
        )
        .expect("write");
        std::fs::write(
            chart.join("templates/cm.yaml"),
            format!("{CM_HEAD}  v: \"{body}\"\n"),
        )
        .expect("write");
    }
    let out = Command::new("prlimit")
        .arg(format!("--as={}", 4u64 << 30))
        .arg(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg(dir.path())
        .args(["--format", "json"])
        .output()
        .expect("run gitops-lint under prlimit");
    assert_eq!(
        out.status.code(),
        Some(1),
        "the process must survive: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let findings = v["findings"].as_array().cloned().unwrap_or_default();
    for (i, (name, _)) in cases.iter().enumerate() {
        let file = format!("c{i}/templates/cm.yaml");
        let stopped = findings.iter().any(|f| {
            f["rule"] == "render-failed"
                && f["file"] == file.as_str()
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("memory budget") || m.contains("exceeds the limit"))
        });
        assert!(stopped, "{name} ({file}): {findings:#?}");
    }
}

/// Kustomize growth paths, each charged to the build's memory budget (lowered here to
/// 1 MiB by the repository, as a pull request may): generators reading one big file many
/// times, transformer records of many `replicas` entries on many generated objects, and a
/// patch applied to every object a broad target picks. Each is a located `render-failed`
/// for its own build; the build beside them still renders.
#[test]
fn kustomize_growth_stops_at_the_build_memory_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(root)).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write(
        ".gitops-lint.yaml",
        "limits:\n  max-render-memory-bytes: 1048576\n",
    );
    // 200 generators over one 100 KB file: 20 MB of data.
    write("big-file/blob.txt", &"x".repeat(100_000));
    let gens: String = (0..200)
        .map(|i| format!("  - name: g{i}\n    files: [blob.txt]\n"))
        .collect();
    write(
        "big-file/kustomization.yaml",
        &format!("configMapGenerator:\n{gens}"),
    );
    // 300 generated objects times 300 `replicas` entries: 90,000 transformer records.
    let gens: String = (0..300)
        .map(|i| format!("  - name: g{i}\n    literals: [k=v]\n"))
        .collect();
    let replicas: String = (0..300)
        .map(|i| format!("  - name: web{i}\n    count: 2\n"))
        .collect();
    write(
        "records/kustomization.yaml",
        &format!("configMapGenerator:\n{gens}replicas:\n{replicas}"),
    );
    // A 10 KB patch on each of 300 ConfigMaps.
    let cms: String = (0..300)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n"))
        .collect();
    write("patched/cms.yaml", &cms);
    write(
        "patched/kustomization.yaml",
        &format!(
            "resources: [cms.yaml]\npatches:\n  - target: {{kind: ConfigMap}}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {{name: any}}\n      data: {{pad: \"{}\"}}\n",
            "p".repeat(10_000)
        ),
    );
    write("fine/kustomization.yaml", "resources: [cm.yaml]\n");
    write(
        "fine/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n",
    );
    let (out, findings) = lint_json(root, &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stopped = |file: &str| -> Option<u64> {
        findings
            .iter()
            .find(|f| {
                f["rule"] == "render-failed"
                    && f["file"] == file
                    && f["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("limits.max-render-memory-bytes"))
            })
            .and_then(|f| f["line"].as_u64())
    };
    assert!(
        stopped("big-file/kustomization.yaml").is_some_and(|l| l > 1),
        "{findings:#?}"
    );
    // On the `replicas` list, and on the patch.
    assert_eq!(
        stopped("records/kustomization.yaml"),
        Some(603),
        "{findings:#?}"
    );
    assert_eq!(
        stopped("patched/kustomization.yaml"),
        Some(5),
        "{findings:#?}"
    );
    assert!(
        findings
            .iter()
            .all(|f| !f["file"].as_str().is_some_and(|p| p.starts_with("fine/"))),
        "{findings:#?}"
    );
}

/// Functions whose result cannot outgrow their arguments by more than a small constant
/// factor (and so stays inside the render's memory budget, which the executor charges with
/// every result), each group with the reason. With `growth_cases` this must name every
/// function of the engine exactly once: a function added later fails this test until it is
/// driven to its budget or placed here with its reason.
const BOUNDED: &[(&str, &[&str])] = &[
    (
        "a number, a bool, a date, a hash or key material of a fixed size",
        &[
            "add",
            "add1",
            "add1f",
            "addf",
            "adler32sum",
            "ago",
            "all",
            "any",
            "atoi",
            "bcrypt",
            "biggest",
            "buildCustomCert",
            "ceil",
            "contains",
            "date",
            "dateInZone",
            "dateModify",
            "date_in_zone",
            "date_modify",
            "deepEqual",
            "derivePassword",
            "div",
            "divf",
            "duration",
            "durationRound",
            "empty",
            "float64",
            "floor",
            "genCA",
            "genCAWithKey",
            "genPrivateKey",
            "genSelfSignedCert",
            "genSelfSignedCertWithKey",
            "genSignedCert",
            "genSignedCertWithKey",
            "has",
            "hasKey",
            "hasPrefix",
            "hasSuffix",
            "htmlDate",
            "htmlDateInZone",
            "int",
            "int64",
            "isAbs",
            "kindIs",
            "kindOf",
            "max",
            "maxf",
            "min",
            "minf",
            "mod",
            "mul",
            "mulf",
            "mustDateModify",
            "mustHas",
            "mustRegexMatch",
            "mustToDate",
            "must_date_modify",
            "now",
            "osIsAbs",
            "randInt",
            "regexMatch",
            "round",
            "semver",
            "semverCompare",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "sub",
            "subf",
            "toDate",
            "toDecimal",
            "typeIs",
            "typeIsLike",
            "typeOf",
            "unixEpoch",
            "uuidv4",
            "getHostByName",
            "hello",
            "lookup",
        ],
    ),
    (
        "a part, a selection or a re-arrangement of their arguments (at most their size, plus \
         a slot per element for a new list or map)",
        &[
            "abbrev",
            "abbrevboth",
            "append",
            "base",
            "clean",
            "coalesce",
            "compact",
            "default",
            "dict",
            "dig",
            "dir",
            "ext",
            "fail",
            "first",
            "get",
            "initial",
            "keys",
            "last",
            "list",
            "merge",
            "mergeOverwrite",
            "mustAppend",
            "mustCompact",
            "mustFirst",
            "mustInitial",
            "mustLast",
            "mustMerge",
            "mustMergeOverwrite",
            "mustPrepend",
            "mustPush",
            "mustRegexFind",
            "mustRest",
            "mustReverse",
            "mustSlice",
            "mustUniq",
            "mustWithout",
            "nospace",
            "omit",
            "osBase",
            "osClean",
            "osDir",
            "osExt",
            "pick",
            "pluck",
            "plural",
            "prepend",
            "push",
            "regexFind",
            "required",
            "rest",
            "reverse",
            "set",
            "shuffle",
            "slice",
            "sortAlpha",
            "substr",
            "ternary",
            "trim",
            "trimAll",
            "trimPrefix",
            "trimSuffix",
            "trimall",
            "trunc",
            "tuple",
            "uniq",
            "unset",
            "values",
            "without",
            "urlJoin",
            "urlParse",
            "b32dec",
            "b64dec",
            "decryptAES",
            "htpasswd",
            "initials",
        ],
    ),
    (
        "a rewrite of a string growing it by a bounded factor (case mapping at most 3 bytes \
         per byte, base64/base32 8/5, an escape or separator per character, a line break \
         per character at most), under the output limit",
        &[
            "b32enc",
            "b64enc",
            "camelcase",
            "kebabcase",
            "lower",
            "regexQuoteMeta",
            "snakecase",
            "swapcase",
            "title",
            "untitle",
            "upper",
            "wrap",
            "encryptAES",
        ],
    ),
    (
        "random text of a requested length, capped at the element limit (10 million)",
        &[
            "randAlpha",
            "randAlphaNum",
            "randAscii",
            "randBytes",
            "randNumeric",
        ],
    ),
    (
        "parsers: the YAML, JSON and TOML decoders' own limits (nesting, aliases, size) bound \
         what they build",
        &[
            "fromJson",
            "fromJsonArray",
            "fromToml",
            "fromYaml",
            "fromYamlArray",
            "mustFromJson",
        ],
    ),
    (
        "another name for a function driven in `growth_cases` (the same code)",
        &[
            "mustChunk",
            "mustDeepCopy",
            "mustRegexFindAll",
            "mustRegexReplaceAll",
            "mustRegexReplaceAllLiteral",
            "mustRegexSplit",
            "mustToJson",
            "mustToPrettyJson",
            "mustToRawJson",
            "mustToYaml",
            "toYamlPretty",
        ],
    ),
];

#[test]
fn every_template_function_is_driven_to_its_budget_or_bounded_with_a_reason() {
    use std::collections::BTreeMap;
    let table: Vec<&str> = gitops_lint::render::gotmpl::funcs::FUNCS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let mut placed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let driven = growth_cases();
    for (name, _) in &driven {
        placed.entry(name).or_default().push("growth_cases");
    }
    for (why, names) in BOUNDED {
        for n in *names {
            placed.entry(n).or_default().push(why);
        }
    }
    let unplaced: Vec<&&str> = table.iter().filter(|n| !placed.contains_key(**n)).collect();
    assert!(
        unplaced.is_empty(),
        "functions neither driven nor bounded: {unplaced:?}"
    );
    let twice: Vec<(&&str, &Vec<&str>)> = placed.iter().filter(|(_, w)| w.len() > 1).collect();
    assert!(twice.is_empty(), "placed more than once: {twice:#?}");
    // `printf` is Go's builtin (not in the table) and driven all the same.
    let unknown: Vec<&&str> = placed
        .keys()
        .filter(|n| !table.contains(n) && **n != "printf")
        .collect();
    assert!(
        unknown.is_empty(),
        "not functions of the engine: {unknown:?}"
    );
}
