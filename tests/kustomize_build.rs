//! Behaviour of the native kustomize build beyond parity: located issues for malformed
//! inputs, load restrictions, provenance of patched and transformed values, Argo CD
//! overrides. Each test builds a small repository in a temporary directory.

use gitops_lint::render::kustomize::{
    BuildOptions, ImageOverride, KustomizeOverrides, LoadRestrictions, SharedBuilds, build,
    build_with_overrides, to_yaml_stream,
};
use gitops_lint::render::{IssueKind, RenderOutput};
use gitops_lint::source::{DiskFs, SourceMap, Span};
use gitops_lint::yaml::Node;
use std::path::Path;
use std::sync::Arc;

struct Repo {
    _dir: tempfile::TempDir,
    fs: DiskFs,
    map: Arc<SourceMap>,
}

/// A repository in a temporary directory; a setup failure fails the test (a test that
/// returned early would pass without checking anything).
fn repo(files: &[(&str, &str)]) -> Repo {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = std::fs::canonicalize(dir.path()).expect("its canonical path");
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&full, text).expect("write");
    }
    let map = Arc::new(SourceMap::new());
    let fs = DiskFs::new(root.join("repo"), map.clone(), 1 << 20);
    Repo { _dir: dir, fs, map }
}

/// `path:line` of a span.
fn at(map: &SourceMap, span: Span) -> String {
    format!("{}:{}", map.path(span.file), map.line_col(span).line)
}

fn only_issue(out: &RenderOutput) -> &gitops_lint::render::RenderIssue {
    assert_eq!(out.issues.len(), 1, "issues: {:?}", out.issues);
    &out.issues[0]
}

const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.0
";

#[test]
fn missing_file_is_located_on_its_entry() {
    let r = repo(&[
        (
            "repo/app/kustomization.yaml",
            "resources:\n- deploy.yaml\n- missing.yaml\n",
        ),
        ("repo/app/deploy.yaml", DEPLOY),
    ]);
    let out = build(&r.fs, "app", &BuildOptions::default());
    let issue = only_issue(&out);
    assert_eq!(issue.kind, IssueKind::Failed);
    assert_eq!(at(&r.map, issue.span), "app/kustomization.yaml:3");
    assert!(issue.message.contains("missing.yaml"), "{}", issue.message);
}

#[test]
fn cycle_is_reported() {
    let r = repo(&[
        ("repo/a/kustomization.yaml", "resources:\n- ../b\n"),
        ("repo/b/kustomization.yaml", "resources:\n- ../a\n"),
    ]);
    let out = build(&r.fs, "a", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(issue.message.contains("cycle"), "{}", issue.message);
    assert_eq!(at(&r.map, issue.span), "b/kustomization.yaml:2");
}

#[test]
fn paths_outside_the_repository_are_refused() {
    let r = repo(&[
        (
            "repo/app/kustomization.yaml",
            "resources:\n- ../../outside\n",
        ),
        ("outside/kustomization.yaml", "resources: []\n"),
    ]);
    let out = build(&r.fs, "app", &BuildOptions::default());
    let issue = only_issue(&out);
    assert_eq!(issue.kind, IssueKind::Failed);
    assert!(
        issue.message.contains("outside the repository"),
        "{}",
        issue.message
    );
    assert_eq!(at(&r.map, issue.span), "app/kustomization.yaml:2");
}

#[test]
fn remote_bases_and_unvendored_charts_are_unrenderable() {
    let r = repo(&[
        (
            "repo/remote/kustomization.yaml",
            "resources:\n- https://github.com/org/repo//base?ref=v1\n",
        ),
        (
            "repo/chart/kustomization.yaml",
            "helmCharts:\n- name: redis\n  repo: https://charts.example.com\n",
        ),
        (
            "repo/pinned/kustomization.yaml",
            "helmCharts:\n- name: redis\n  repo: https://charts.example.com\n  version: 19.0.1\n",
        ),
    ]);
    let out = build(&r.fs, "remote", &BuildOptions::default());
    let issue = only_issue(&out);
    assert_eq!(issue.kind, IssueKind::Unrenderable);
    assert!(issue.message.contains("remote"), "{}", issue.message);
    let out = build(&r.fs, "chart", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(issue.kind.is_unrenderable());
    assert!(issue.message.contains("redis"), "{}", issue.message);
    // No `version`: the pull would take the newest chart, so the input also floats.
    assert_eq!(issue.kind, IssueKind::Unrenderable);
    assert_eq!(
        out.remotes.iter().map(|u| u.floats).collect::<Vec<_>>(),
        vec![true]
    );
    let out = build(&r.fs, "pinned", &BuildOptions::default());
    assert_eq!(only_issue(&out).kind, IssueKind::Unrenderable);
    assert_eq!(
        out.remotes.iter().map(|u| u.floats).collect::<Vec<_>>(),
        vec![false]
    );
}

#[test]
fn patch_targeting_nothing_and_invalid_ops_fail() {
    let r = repo(&[
        (
            "repo/a/kustomization.yaml",
            "resources:\n- deploy.yaml\npatches:\n- path: p.yaml\n",
        ),
        ("repo/a/deploy.yaml", DEPLOY),
        (
            "repo/a/p.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nope\nspec:\n  replicas: 2\n",
        ),
        (
            "repo/b/kustomization.yaml",
            "resources:\n- deploy.yaml\npatches:\n- target:\n    kind: Deployment\n  patch: |-\n    - op: frobnicate\n      path: /spec/replicas\n",
        ),
        ("repo/b/deploy.yaml", DEPLOY),
    ]);
    let out = build(&r.fs, "a", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(
        issue.message.contains("failed to find unique target"),
        "{}",
        issue.message
    );
    assert_eq!(at(&r.map, issue.span), "a/kustomization.yaml:4");
    let out = build(&r.fs, "b", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(issue.message.contains("frobnicate"), "{}", issue.message);
}

#[test]
fn malformed_inputs_do_not_panic() {
    let r = repo(&[
        ("repo/a/kustomization.yaml", "- just\n- a list\n"),
        (
            "repo/b/kustomization.yaml",
            "resources: {a: b}\nnamePrefix: [1]\npatches: 3\n",
        ),
        ("repo/c/kustomization.yaml", "resources:\n- bad.yaml\n"),
        ("repo/c/bad.yaml", "a: [unclosed\n"),
        ("repo/d/kustomization.yaml", "kind: Banana\n"),
    ]);
    for dir in ["a", "b", "c", "d", "missing"] {
        let out = build(&r.fs, dir, &BuildOptions::default());
        if dir != "b" {
            assert!(!out.issues.is_empty(), "{dir} should fail");
        }
    }
}

#[test]
fn load_restrictions_follow_the_option() {
    let r = repo(&[
        (
            "repo/app/kustomization.yaml",
            "resources:\n- ../shared/deploy.yaml\n",
        ),
        ("repo/shared/deploy.yaml", DEPLOY),
    ]);
    let out = build(&r.fs, "app", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(
        issue.message.contains("not in or below"),
        "{}",
        issue.message
    );
    let opts = BuildOptions {
        load_restrictions: LoadRestrictions::None,
        ..BuildOptions::default()
    };
    let out = build(&r.fs, "app", &opts);
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    assert_eq!(out.objects.len(), 1);
}

fn find<'a>(node: &'a Node, path: &[&str]) -> &'a Node {
    node.get_path(path).unwrap_or(node)
}

#[test]
fn patched_value_points_at_the_patch_and_remembers_the_base() {
    let r = repo(&[
        (
            "repo/base/kustomization.yaml",
            "resources:\n- deploy.yaml\n",
        ),
        ("repo/base/deploy.yaml", DEPLOY),
        (
            "repo/overlays/prod/kustomization.yaml",
            "resources:\n- ../../base\nnamePrefix: prod-\npatches:\n- path: patch.yaml\nimages:\n- name: nginx\n  newTag: \"2.0\"\n",
        ),
        (
            "repo/overlays/prod/patch.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n",
        ),
    ]);
    let out = build(&r.fs, "overlays/prod", &BuildOptions::default());
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let root = &out.objects[0].root;
    let replicas = find(root, &["spec", "replicas"]);
    assert_eq!(replicas.as_i64(), Some(5));
    assert_eq!(at(&r.map, replicas.span), "overlays/prod/patch.yaml:6");
    let related = replicas.related.as_deref().cloned().unwrap_or_default();
    assert_eq!(related.len(), 1, "{related:?}");
    assert_eq!(related[0].label, "base value");
    assert_eq!(at(&r.map, related[0].span), "base/deploy.yaml:6");
    // A name set by a transformer points at the kustomization entry.
    let name = find(root, &["metadata", "name"]);
    assert_eq!(name.as_str(), Some("prod-web"));
    assert_eq!(at(&r.map, name.span), "overlays/prod/kustomization.yaml:3");
    let image = &root
        .get_path(&["spec", "template", "spec", "containers"])
        .and_then(Node::as_seq)
        .unwrap_or(&[])[0];
    let image = find(image, &["image"]);
    assert_eq!(image.as_str(), Some("nginx:2.0"));
    assert_eq!(at(&r.map, image.span), "overlays/prod/kustomization.yaml:7");
}

#[test]
fn argo_overrides_edit_a_copy_of_the_kustomization() {
    let r = repo(&[
        ("repo/app/kustomization.yaml", "resources:\n- deploy.yaml\n"),
        ("repo/app/deploy.yaml", DEPLOY),
    ]);
    let overrides = KustomizeOverrides {
        name_prefix: Some("argo-".into()),
        namespace: Some("team".into()),
        images: vec![ImageOverride {
            spec: "nginx=registry.local/nginx:9".into(),
        }],
        common_labels: vec![("owner".into(), "team".into())],
        ..KustomizeOverrides::default()
    };
    let out = build_with_overrides(&r.fs, "app", &overrides, &BuildOptions::default());
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let yaml = to_yaml_stream(&out.objects);
    assert!(yaml.contains("name: argo-web"), "{yaml}");
    assert!(yaml.contains("namespace: team"), "{yaml}");
    assert!(yaml.contains("image: registry.local/nginx:9"), "{yaml}");
    assert!(yaml.contains("owner: team"), "{yaml}");
    // The file on disk is untouched.
    let on_disk = std::fs::read_to_string(Path::new(r.fs.root()).join("app/kustomization.yaml"))
        .unwrap_or_default();
    assert_eq!(on_disk, "resources:\n- deploy.yaml\n");
}

#[test]
fn generated_config_map_gets_kustomize_hash_and_references_follow() {
    let r = repo(&[
        (
            "repo/app/kustomization.yaml",
            "resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: cfg\n  literals:\n  - TEST='\n",
        ),
        (
            "repo/app/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      volumes:\n      - name: c\n        configMap:\n          name: cfg\n",
        ),
    ]);
    let out = build(&r.fs, "app", &BuildOptions::default());
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let yaml = to_yaml_stream(&out.objects);
    // kustomize names this ConfigMap test-m8t7bmb6g2 for name "test"; the hash ignores the name.
    assert!(yaml.contains("name: cfg-m8t7bmb6g2"), "{yaml}");
    assert_eq!(yaml.matches("cfg-m8t7bmb6g2").count(), 2, "{yaml}");
}

const SA_AND_BINDING: &str = "apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cr
subjects:
- kind: ServiceAccount
  name: sa
";

#[test]
fn ambiguous_name_reference_is_an_error_on_the_reference() {
    // Two namespaced copies of one ServiceAccount: a binding naming `sa` without a
    // namespace cannot tell which one it means (kustomize fails the same way).
    let r = repo(&[
        ("repo/kustomization.yaml", "resources:\n- a\n- b\n"),
        (
            "repo/a/kustomization.yaml",
            "namespace: a\nresources:\n- sa.yaml\n",
        ),
        ("repo/a/sa.yaml", SA_AND_BINDING),
        (
            "repo/b/kustomization.yaml",
            "namespace: b\nresources:\n- sa.yaml\n",
        ),
        (
            "repo/b/sa.yaml",
            &SA_AND_BINDING.replace("name: crb", "name: crb-b"),
        ),
    ]);
    let out = build(&r.fs, "", &BuildOptions::default());
    let issue = only_issue(&out);
    assert_eq!(issue.kind, IssueKind::Failed);
    assert!(
        issue.message.contains(
            "found multiple possible referrals: ServiceAccount.v1.[noGrp]/sa.a, ServiceAccount.v1.[noGrp]/sa.b"
        ),
        "{}",
        issue.message
    );
    assert_eq!(at(&r.map, issue.span), "a/sa.yaml:16");
}

#[test]
fn same_named_references_prefer_the_copy_with_the_referrers_affixes() {
    // Lenient first (an unsuffixed referrer may name a suffixed object), strict when that
    // leaves several: each Deployment keeps the ServiceAccount of its own overlay.
    let deploy = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: dep
spec:
  template:
    spec:
      serviceAccountName: sa
";
    let r = repo(&[
        (
            "repo/kustomization.yaml",
            "namespace: ns\nresources:\n- plain\n- private\n",
        ),
        ("repo/plain/kustomization.yaml", "resources:\n- ../base\n"),
        (
            "repo/private/kustomization.yaml",
            "resources:\n- ../base\nnameSuffix: -private\n",
        ),
        (
            "repo/base/kustomization.yaml",
            "resources:\n- dep.yaml\n- sa.yaml\n",
        ),
        ("repo/base/dep.yaml", deploy),
        (
            "repo/base/sa.yaml",
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
        ),
    ]);
    let out = build(&r.fs, "", &BuildOptions::default());
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let refs: Vec<(String, String)> = out
        .objects
        .iter()
        .filter(|o| o.kind == "Deployment")
        .map(|o| {
            let sa = o
                .root
                .get_path(&["spec", "template", "spec", "serviceAccountName"])
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string();
            (o.name.clone(), sa)
        })
        .collect();
    assert_eq!(
        refs,
        [
            ("dep".to_string(), "sa".to_string()),
            ("dep-private".to_string(), "sa-private".to_string())
        ]
    );
}

#[test]
fn blank_subject_namespace_is_refused_where_it_is_written() {
    let r = repo(&[
        ("repo/kustomization.yaml", "resources:\n- rb.yaml\n"),
        (
            "repo/rb.yaml",
            "apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: r
subjects:
- kind: ServiceAccount
  name: sa
  namespace:
",
        ),
    ]);
    let out = build(&r.fs, "", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(
        issue.message.contains("namespace is blank for resource"),
        "{}",
        issue.message
    );
    assert_eq!(at(&r.map, issue.span), "rb.yaml:12");
}

#[test]
fn namespace_field_spec_on_a_list_is_refused() {
    let r = repo(&[
        (
            "repo/kustomization.yaml",
            "resources:\n- sa.yaml\ntransformers:\n- ns.yaml\n",
        ),
        ("repo/sa.yaml", SA_AND_BINDING),
        (
            "repo/ns.yaml",
            "apiVersion: builtin
kind: NamespaceTransformer
metadata:
  name: ns
  namespace: test
fieldSpecs:
- path: subjects
  kind: ClusterRoleBinding
",
        ),
    ]);
    let out = build(&r.fs, "", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(
        issue.message.starts_with(
            "namespace field specs must target scalar nodes: considering field 'subjects' of object ClusterRoleBinding.v1.rbac.authorization.k8s.io/crb.[noNs]: wrong node kind: expected ScalarNode but got SequenceNode"
        ),
        "{}",
        issue.message
    );
    assert_eq!(at(&r.map, issue.span), "ns.yaml:5");
}

#[test]
fn openapi_field_errors_are_located() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
    let r = repo(&[
        (
            "repo/old/kustomization.yaml",
            "resources:\n- cm.yaml\nopenapi:\n  version: v1.14.1\n",
        ),
        ("repo/old/cm.yaml", cm),
        (
            "repo/missing/kustomization.yaml",
            "resources:\n- cm.yaml\nopenapi:\n  path: schema.json\n",
        ),
        ("repo/missing/cm.yaml", cm),
    ]);
    let out = build(&r.fs, "old", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(
        issue
            .message
            .starts_with("the specified OpenAPI version is not built in"),
        "{}",
        issue.message
    );
    assert_eq!(at(&r.map, issue.span), "old/kustomization.yaml:4");
    let out = build(&r.fs, "missing", &BuildOptions::default());
    let issue = only_issue(&out);
    assert!(issue.message.contains("schema.json"), "{}", issue.message);
    assert_eq!(at(&r.map, issue.span), "missing/kustomization.yaml:4");
}

/// The vendored-chart fixture: `helmCharts` with a chart under `charts/`.
fn helm_fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize/helm-charts")
}

fn build_helm_fixture() -> (RenderOutput, Arc<SourceMap>) {
    let map = Arc::new(SourceMap::new());
    let root = std::fs::canonicalize(helm_fixture()).unwrap_or_else(|_| helm_fixture());
    let fs = DiskFs::new(root, map.clone(), 1 << 20);
    (build(&fs, "app", &BuildOptions::default()), map)
}

fn normalised(s: &str) -> String {
    s.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

#[test]
fn vendored_helm_chart_renders_like_kubectl_kustomize_enable_helm() {
    let (out, _) = build_helm_fixture();
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let want = std::fs::read_to_string(helm_fixture().join("expected.yaml")).unwrap_or_default();
    assert!(!want.is_empty(), "expected.yaml is missing");
    assert_eq!(normalised(&to_yaml_stream(&out.objects)), normalised(&want));
}

#[test]
fn vendored_helm_chart_values_keep_their_provenance() {
    let (out, map) = build_helm_fixture();
    let Some(dep) = out.objects.iter().find(|o| o.kind == "Deployment") else {
        panic!("no Deployment in {:?}", out.issues);
    };
    let replicas = dep.root.get_path(&["spec", "replicas"]);
    let Some(replicas) = replicas else {
        panic!("no replicas");
    };
    assert_eq!(
        at(&map, replicas.span),
        "app/charts/web/templates/deployment.yaml:12"
    );
    let related: Vec<String> = replicas
        .related
        .iter()
        .flat_map(|r| r.iter())
        .map(|r| at(&map, r.span))
        .collect();
    assert!(
        related.iter().any(|r| r == "app/values/prod.yaml:1"),
        "{related:?}"
    );
}

/// Differential check against the real thing when helm and kubectl are installed.
#[test]
fn vendored_helm_chart_matches_kubectl_when_available() {
    let helm = ["/usr/local/bin/helm", "/usr/bin/helm"]
        .into_iter()
        .find(|p| Path::new(p).is_file());
    let Some(helm) = helm else {
        println!("skipped: helm is not installed (kubectl kustomize --enable-helm needs it)");
        return;
    };
    let run = std::process::Command::new("kubectl")
        .args(["kustomize", "--enable-helm", "--helm-command", helm])
        .arg(helm_fixture().join("app"))
        .output();
    let Ok(run) = run else {
        println!("skipped: kubectl is not installed");
        return;
    };
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let (out, _) = build_helm_fixture();
    assert_eq!(
        normalised(&to_yaml_stream(&out.objects)),
        normalised(&String::from_utf8_lossy(&run.stdout))
    );
}

#[test]
fn hash_transformer_hashes_generated_objects_where_it_runs() {
    // Checked against kubectl kustomize v5.5: the generated ConfigMap still wants its hash
    // at the end of the build, so it carries two.
    let r = repo(&[
        (
            "repo/kustomization.yaml",
            "configMapGenerator:\n- name: cm\n  literals:\n  - a=b\ntransformers:\n- h.yaml\n",
        ),
        (
            "repo/h.yaml",
            "apiVersion: builtin\nkind: HashTransformer\nmetadata:\n  name: h\n",
        ),
    ]);
    let out = build(&r.fs, "", &BuildOptions::default());
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let names: Vec<&str> = out.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["cm-4h2mbtbbt6-4h2mbtbbt6"]);
}

/// `testdata/kustomize/fidelity/<case>/`: small kustomizations whose `kubectl kustomize`
/// (v5.5.0) output is recorded beside them (`expected.yaml`, or `expected-error.txt` with
/// kubectl's error message, which the native issue must contain). The build directory is
/// the case's `overlay/` when it has one.
#[test]
fn fidelity_cases_match_recorded_kubectl_kustomize() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize/fidelity");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    cases.sort();
    assert!(!cases.is_empty(), "no cases under {}", root.display());
    let mut problems = Vec::new();
    for case in &cases {
        let name = case
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let dir = if case.join("overlay").is_dir() {
            "overlay"
        } else {
            "."
        };
        let map = Arc::new(SourceMap::new());
        let fs = DiskFs::new(case.clone(), map.clone(), 1 << 20);
        let out = build(&fs, dir, &BuildOptions::default());
        if let Ok(want) = std::fs::read_to_string(case.join("expected.yaml")) {
            if !out.issues.is_empty() {
                problems.push(format!("{name}: issues {:?}", out.issues));
            } else if normalised(&to_yaml_stream(&out.objects)) != normalised(&want) {
                problems.push(format!(
                    "{name}: output differs:\n{}",
                    to_yaml_stream(&out.objects)
                ));
            }
        } else if let Ok(err) = std::fs::read_to_string(case.join("expected-error.txt")) {
            // kubectl's message names the entry in quotes: the native issue must too
            let quoted = err.split('\'').nth(1).unwrap_or(err.trim());
            if !out.issues.iter().any(|i| i.message.contains(quoted)) {
                problems.push(format!(
                    "{name}: want an issue naming {quoted:?}, got {:?}",
                    out.issues
                ));
            }
        } else {
            problems.push(format!("{name}: no expected.yaml or expected-error.txt"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `gitops-lint render DIR` outside any repository is rooted at `/`: the error's location is
/// the absolute path, as kubectl prints it (not `tmp/...`).
#[test]
fn render_errors_outside_a_repository_keep_the_absolute_path() {
    let r = repo(&[("repo/kustomization.yaml", "resources:\n- missing.yaml\n")]);
    let dir = r.fs.root().to_path_buf();
    if dir.ancestors().any(|a| a.join(".git").exists()) {
        return; // the temporary directory is inside a repository: rooted there instead
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("render")
        .arg(&dir)
        .output();
    let Ok(out) = out else {
        panic!("could not run gitops-lint");
    };
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!("Error: {}/kustomization.yaml:2:3:", dir.display());
    assert!(err.starts_with(&want), "{err}");
    // The directory named inside the message is absolute too; the relative entry stays.
    let named = format!("(resource in '{}')", dir.display());
    assert!(err.contains(&named), "{err}");
    assert!(err.contains("'missing.yaml'"), "{err}");
}

/// The output of `dir` built alone, and with `shared` sub-builds, as text (objects, then
/// issues).
fn built_text(r: &Repo, dir: &str, shared: Option<&Arc<SharedBuilds>>) -> String {
    let opts = BuildOptions {
        shared: shared.cloned(),
        ..BuildOptions::default()
    };
    let out = build(&r.fs, dir, &opts);
    let issues: Vec<&str> = out.issues.iter().map(|i| i.message.as_str()).collect();
    format!("{}\n{issues:?}", to_yaml_stream(&out.objects))
}

/// Overlays over one base share its build (`BuildOptions::shared`), and each prints what it
/// prints when it builds the base itself: its own prefix, namespace, image and patch on the
/// base's objects, generated names and hashes included, however the overlays nest.
#[test]
fn overlays_sharing_a_base_print_what_they_print_alone() {
    let r = repo(&[
        (
            "repo/base/kustomization.yaml",
            "resources:\n- deployment.yaml\nlabels:\n- pairs:\n    tier: web\nconfigMapGenerator:\n- name: web-config\n  literals:\n  - MODE=base\n",
        ),
        ("repo/base/deployment.yaml", DEPLOY),
        (
            "repo/overlays/a/kustomization.yaml",
            "resources:\n- ../../base\nnamePrefix: a-\nimages:\n- name: nginx\n  newTag: \"2.0\"\n",
        ),
        (
            "repo/overlays/b/kustomization.yaml",
            "resources:\n- ../../base\nnamespace: team-b\npatches:\n- patch: |-\n    - op: replace\n      path: /spec/replicas\n      value: 3\n  target:\n    kind: Deployment\n",
        ),
        (
            "repo/overlays/c/kustomization.yaml",
            "resources:\n- ../a\nnameSuffix: -c\nconfigMapGenerator:\n- name: a-web-config\n  behavior: merge\n  literals:\n  - MODE=c\n",
        ),
    ]);
    let shared = Arc::new(SharedBuilds::default());
    for dir in [
        "overlays/a",
        "overlays/b",
        "overlays/c",
        "overlays/a",
        "base",
    ] {
        let alone = built_text(&r, dir, None);
        let with_shared = built_text(&r, dir, Some(&shared));
        assert!(alone.contains("kind: Deployment"), "{dir}: {alone}");
        assert_eq!(alone, with_shared, "{dir}");
    }
    // The base (under a, b and c) and overlays/a (under c) were each built once and kept.
    assert_eq!(shared.len(), 2);
}

/// A shared build never hides a cycle or a limit: they fail as when built alone.
#[test]
fn a_shared_base_still_fails_on_a_cycle_and_on_the_depth_limit() {
    let r = repo(&[
        (
            "repo/base/kustomization.yaml",
            "resources:\n- deployment.yaml\n",
        ),
        ("repo/base/deployment.yaml", DEPLOY),
        ("repo/mid/kustomization.yaml", "resources:\n- ../base\n"),
        ("repo/top/kustomization.yaml", "resources:\n- ../mid\n"),
        ("repo/x/kustomization.yaml", "resources:\n- ../y\n"),
        ("repo/y/kustomization.yaml", "resources:\n- ../x\n"),
    ]);
    let shared = Arc::new(SharedBuilds::default());
    for dir in ["top", "x", "y", "top"] {
        assert_eq!(
            built_text(&r, dir, None),
            built_text(&r, dir, Some(&shared)),
            "{dir}"
        );
    }
    // `top` nests three deep: with a depth limit of 2 it fails, shared `mid` or not.
    let limited = |shared: Option<Arc<SharedBuilds>>| {
        let opts = BuildOptions {
            max_depth: 2,
            shared,
            ..BuildOptions::default()
        };
        let out = build(&r.fs, "top", &opts);
        out.issues
            .iter()
            .map(|i| i.message.clone())
            .collect::<Vec<_>>()
    };
    let alone = limited(None);
    assert!(
        alone.iter().any(|m| m.contains("deeper than 2")),
        "{alone:?}"
    );
    assert_eq!(alone, limited(Some(shared)));
}

// Partial offline builds: what a remote input that is not fetched would have held is absent,
// so steps aimed at it are recorded against that input and the local rest still builds.

const PARTIAL_OVERLAY: &str = "resources:
- https://github.com/argoproj/argo-cd//manifests/cluster-install?ref=v2.13.1
- deploy.yaml
patches:
- path: argocd-cm.yaml
- target:
    kind: Deployment
    name: argocd-server
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --insecure
vars:
- name: ARGOCD_URL
  objref:
    apiVersion: v1
    kind: ConfigMap
    name: argocd-cm
  fieldref:
    fieldpath: data.url
replicas:
- name: argocd-repo-server
  count: 2
- name: web
  count: 3
replacements:
- source:
    kind: ConfigMap
    name: argocd-cm
    fieldPath: data.url
  targets:
  - select:
      kind: Deployment
      name: web
    fieldPaths:
    - metadata.annotations.url
    options:
      create: true
";

const ARGOCD_CM_PATCH: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
data:
  url: https://argocd.example.com
";

#[test]
fn steps_aimed_at_an_unfetched_remote_input_are_recorded_against_it_and_the_rest_builds() {
    let r = repo(&[
        ("repo/prod/kustomization.yaml", PARTIAL_OVERLAY),
        ("repo/prod/deploy.yaml", DEPLOY),
        ("repo/prod/argocd-cm.yaml", ARGOCD_CM_PATCH),
    ]);
    let out = build(&r.fs, "prod", &BuildOptions::default());
    // The local Deployment rendered, with the local replicas entry applied.
    assert_eq!(out.objects.len(), 1, "objects: {:?}", out.objects);
    let replicas = out.objects[0].root.get_path(&["spec", "replicas"]);
    assert_eq!(replicas.and_then(Node::as_i64), Some(3));
    assert!(
        out.issues.iter().all(|i| i.kind != IssueKind::Failed),
        "no failure while a remote input is missing: {:?}",
        out.issues
    );
    let input = |i: &gitops_lint::render::RenderIssue| i.input.as_ref().map(|m| m.name.clone());
    let remote = out
        .issues
        .iter()
        .filter(|i| i.kind == IssueKind::Unrenderable)
        .collect::<Vec<_>>();
    assert_eq!(remote.len(), 1, "{:?}", out.issues);
    let name = input(remote[0]).expect("the remote base names its input");
    assert!(
        name.contains("argoproj/argo-cd") && name.contains("v2.13.1"),
        "{name}"
    );
    // The patch by id, the targeted patch (kustomize applies a selector that picks nothing
    // silently), the var, the replicas entry and the replacement source each wait for that
    // input, on their own lines.
    let mut undone: Vec<String> = out
        .issues
        .iter()
        .filter(|i| i.kind == IssueKind::NotApplied)
        .map(|i| {
            assert_eq!(input(i).as_deref(), Some(name.as_str()));
            at(&r.map, i.span)
        })
        .collect();
    undone.sort();
    assert_eq!(
        undone,
        [
            "prod/kustomization.yaml:14",
            "prod/kustomization.yaml:22",
            "prod/kustomization.yaml:28",
            "prod/kustomization.yaml:5",
            "prod/kustomization.yaml:7"
        ]
    );
}

#[test]
fn with_every_input_local_a_step_that_finds_no_target_still_fails() {
    let local_only = PARTIAL_OVERLAY.replace(
        "- https://github.com/argoproj/argo-cd//manifests/cluster-install?ref=v2.13.1\n",
        "",
    );
    let r = repo(&[
        ("repo/prod/kustomization.yaml", local_only.as_str()),
        ("repo/prod/deploy.yaml", DEPLOY),
        ("repo/prod/argocd-cm.yaml", ARGOCD_CM_PATCH),
    ]);
    let out = build(&r.fs, "prod", &BuildOptions::default());
    let issue = only_issue(&out);
    assert_eq!(issue.kind, IssueKind::Failed);
    assert!(
        issue.message.contains("no matches for Id ConfigMap"),
        "{}",
        issue.message
    );
    assert_eq!(at(&r.map, issue.span), "prod/kustomization.yaml:4");
}

#[test]
fn a_remote_patch_file_is_left_out_and_the_build_goes_on() {
    let r = repo(&[
        (
            "repo/app/kustomization.yaml",
            "resources:\n- deploy.yaml\npatches:\n- path: https://raw.githubusercontent.com/org/patches/main/web.yaml\n",
        ),
        ("repo/app/deploy.yaml", DEPLOY),
    ]);
    let out = build(&r.fs, "app", &BuildOptions::default());
    assert_eq!(out.objects.len(), 1);
    let issue = only_issue(&out);
    assert_eq!(issue.kind, IssueKind::Unrenderable);
    assert_eq!(at(&r.map, issue.span), "app/kustomization.yaml:4");
    let input = issue.input.as_ref().expect("names its input");
    assert_eq!(
        input.name,
        "https://raw.githubusercontent.com/org/patches/main/web.yaml"
    );
    // `fetch` downloads HTTPS files (locked by digest); plain HTTP can only be vendored.
    assert!(input.fetchable);
    let r = repo(&[
        (
            "repo/app/kustomization.yaml",
            "resources:\n- deploy.yaml\npatches:\n- path: http://patches.example.com/web.yaml\n",
        ),
        ("repo/app/deploy.yaml", DEPLOY),
    ]);
    let out = build(&r.fs, "app", &BuildOptions::default());
    assert_eq!(out.objects.len(), 1);
    let input = only_issue(&out).input.as_ref().expect("names its input");
    assert!(!input.fetchable, "{input:?}");
}

/// A generator that merges into (or replaces) an object of an unfetched remote base waits
/// for that input like a patch does; with every input local, the missing object fails the
/// build as in kustomize.
#[test]
fn a_merging_generator_aimed_at_an_unfetched_input_is_recorded_against_it() {
    let overlay = |base: &str| {
        format!(
            "resources:\n{base}- deploy.yaml\nconfigMapGenerator:\n- name: argocd-cm\n  behavior: merge\n  literals:\n  - timeout.reconciliation=15s\n"
        )
    };
    let remote = overlay(
        "- https://raw.githubusercontent.com/argoproj/argo-cd/v2.13.1/manifests/install.yaml\n",
    );
    let r = repo(&[
        ("repo/prod/kustomization.yaml", remote.as_str()),
        ("repo/prod/deploy.yaml", DEPLOY),
    ]);
    let out = build(&r.fs, "prod", &BuildOptions::default());
    assert_eq!(out.objects.len(), 1, "the local Deployment renders");
    let undone: Vec<String> = out
        .issues
        .iter()
        .filter(|i| i.kind == IssueKind::NotApplied)
        .map(|i| at(&r.map, i.span))
        .collect();
    assert_eq!(undone, ["prod/kustomization.yaml:5"], "{:?}", out.issues);
    assert!(out.issues.iter().all(|i| i.kind != IssueKind::Failed));

    let local = overlay("");
    let r = repo(&[
        ("repo/prod/kustomization.yaml", local.as_str()),
        ("repo/prod/deploy.yaml", DEPLOY),
    ]);
    let out = build(&r.fs, "prod", &BuildOptions::default());
    let issue = only_issue(&out);
    assert_eq!(issue.kind, IssueKind::Failed);
    assert!(
        issue.message.contains("does not exist; cannot merge"),
        "{}",
        issue.message
    );
}
