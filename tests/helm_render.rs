//! The chart layer on small fixture charts (testdata/helm): provenance of rendered nodes,
//! and malformed charts that must give located issues (never a panic or a hang).

use gitops_lint::render::helm::{TemplateOptions, cli_fs, template, template_to_string};
use gitops_lint::render::{IssueKind, RenderOutput};
use gitops_lint::source::{DiskFs, RepoFs};
use std::path::Path;

fn fixtures() -> DiskFs {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/helm");
    match cli_fs(&dir) {
        Ok(fs) => fs,
        Err(e) => panic!("fixtures: {e}"),
    }
}

fn render(fs: &DiskFs, chart: &str) -> RenderOutput {
    template(fs, chart, &TemplateOptions::default())
}

/// The text and 1-based line of a span.
fn at(fs: &DiskFs, span: gitops_lint::source::Span) -> (String, usize, String) {
    let map = fs.source_map();
    let file = map.get(span.file);
    let line = file.line_of(span.start as usize);
    (file.path.clone(), line, map.text(span))
}

#[test]
fn replicas_point_at_the_template_line_and_the_values_line() {
    let fs = fixtures();
    let out = render(&fs, "provenance");
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let deploy = out.objects.iter().find(|o| o.kind == "Deployment");
    let Some(deploy) = deploy else {
        panic!("no Deployment in {:?}", out.objects.len())
    };
    assert_eq!(deploy.name, "release-name-web");
    let Some(replicas) = deploy.root.get_path(&["spec", "replicas"]) else {
        panic!("no replicas")
    };
    assert_eq!(replicas.as_i64(), Some(3));
    let (path, line, text) = at(&fs, replicas.span);
    assert_eq!(path, "provenance/templates/deployment.yaml");
    assert_eq!(line, 7);
    assert_eq!(text, "{{ .Values.replicaCount }}");
    let related = replicas
        .related
        .as_ref()
        .map(|r| r.as_ref().clone())
        .unwrap_or_default();
    assert_eq!(related.len(), 1, "{related:?}");
    let (vpath, vline, vtext) = at(&fs, related[0].span);
    assert_eq!(vpath, "provenance/values.yaml");
    assert_eq!(vline, 2);
    assert_eq!(vtext, "3");
    assert_eq!(related[0].label, "value from provenance/values.yaml");
    // Literal template text maps to itself.
    let Some(kind) = deploy.root.entry("kind") else {
        panic!("no kind")
    };
    let (kpath, kline, ktext) = at(&fs, kind.key.span);
    assert_eq!(
        (kpath.as_str(), kline, ktext.as_str()),
        ("provenance/templates/deployment.yaml", 2, "kind")
    );
}

#[test]
fn output_is_framed_and_sorted_like_helm() {
    let fs = fixtures();
    let text =
        template_to_string(&fs, "provenance", &TemplateOptions::default()).unwrap_or_else(|e| e);
    let expected = "---\n# Source: web/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: release-name-web\nspec:\n  ports:\n    - port: 80\n---\n# Source: web/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: release-name-web\n  namespace: default\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: web\n          image: \"nginx:1.27\"\n";
    assert_eq!(text, expected);
}

#[test]
fn set_values_override_and_keep_int64() {
    let fs = fixtures();
    let opts = TemplateOptions {
        set: vec!["replicaCount=5".into()],
        ..TemplateOptions::default()
    };
    let text = template_to_string(&fs, "provenance", &opts).unwrap_or_else(|e| e);
    assert!(text.contains("replicas: 5\n"), "{text}");
}

fn single_issue(chart: &str) -> (IssueKind, String, String, usize) {
    let fs = fixtures();
    let out = render(&fs, chart);
    assert_eq!(out.issues.len(), 1, "{chart}: {:?}", out.issues);
    let issue = &out.issues[0];
    let (path, line, _) = at(&fs, issue.span);
    (issue.kind.clone(), issue.message.clone(), path, line)
}

#[test]
fn template_syntax_error_is_located() {
    let (kind, msg, path, line) = single_issue("malformed/syntax-error");
    assert_eq!(kind, IssueKind::Failed);
    assert!(
        msg.starts_with("parse error at (syntax-error/templates/cm.yaml:"),
        "{msg}"
    );
    assert_eq!(path, "malformed/syntax-error/templates/cm.yaml");
    assert!(line >= 6, "{line}");
}

#[test]
fn undefined_template_is_located() {
    let (_, msg, path, line) = single_issue("malformed/undefined-template");
    assert!(msg.ends_with("template \"nope\" not defined"), "{msg}");
    assert_eq!(
        (path.as_str(), line),
        ("malformed/undefined-template/templates/cm.yaml", 6)
    );
}

#[test]
fn include_recursion_stops_with_an_issue() {
    let (_, msg, path, _) = single_issue("malformed/include-recursion");
    assert!(
        msg.contains("nested reference") || msg.contains("loop"),
        "{msg}"
    );
    assert!(
        path.starts_with("malformed/include-recursion/templates/"),
        "{path}"
    );
}

#[test]
fn missing_required_value_is_located() {
    let (_, msg, path, line) = single_issue("malformed/missing-required");
    assert_eq!(
        msg,
        "execution error at (missing-required/templates/cm.yaml:6:11): host is required"
    );
    assert_eq!(
        (path.as_str(), line),
        ("malformed/missing-required/templates/cm.yaml", 6)
    );
}

#[test]
fn schema_violation_points_at_the_schema() {
    let (_, msg, path, _) = single_issue("malformed/bad-schema");
    assert_eq!(
        msg,
        "values don't meet the specifications of the schema(s) in the following chart(s):\nbad-schema:\n- (root): host is required\n- a: Invalid type. Expected: string, given: integer\n"
    );
    assert_eq!(path, "malformed/bad-schema/values.schema.json");
}

#[test]
fn huge_range_hits_a_limit() {
    let (_, msg, path, _) = single_issue("malformed/huge-range");
    assert!(msg.contains("limit") || msg.contains("exceed"), "{msg}");
    assert_eq!(path, "malformed/huge-range/templates/cm.yaml");
}

#[test]
fn missing_dependency_is_unrenderable() {
    let (kind, msg, path, line) = single_issue("malformed/missing-dependency");
    assert_eq!(kind, IssueKind::Unrenderable);
    assert!(
        msg.ends_with("missing in charts/ directory: redis"),
        "{msg}"
    );
    assert_eq!(
        (path.as_str(), line),
        ("malformed/missing-dependency/Chart.yaml", 5)
    );
}

#[test]
fn a_partial_render_leaves_a_missing_dependency_out_and_renders_the_parent() {
    let fs = fixtures();
    let opts = TemplateOptions {
        partial_dependencies: true,
        ..TemplateOptions::default()
    };
    let out = template(&fs, "partial/missing-dependency", &opts);
    // The parent's own template renders; the dependency is one issue naming it.
    assert_eq!(out.objects.len(), 1, "{:?}", out.issues);
    assert_eq!(out.issues.len(), 1, "{:?}", out.issues);
    let issue = &out.issues[0];
    assert_eq!(issue.kind, IssueKind::Unrenderable);
    let (path, line, _) = at(&fs, issue.span);
    assert_eq!(
        (path.as_str(), line),
        ("partial/missing-dependency/Chart.yaml", 5)
    );
    let input = issue
        .input
        .as_ref()
        .expect("the issue names the dependency");
    assert_eq!(
        input.name,
        "chart redis 18.x.x from https://charts.bitnami.com/bitnami"
    );
    assert!(input.fetchable);
}

#[test]
fn charts_outside_the_root_are_refused() {
    let fs = fixtures();
    let out = render(&fs, "../helm/provenance");
    assert_eq!(out.objects.len(), 0);
    assert_eq!(out.issues.len(), 1);
}

#[test]
fn dependencies_alias_condition_tags_globals_and_import_values() {
    let fs = fixtures();
    let text = template_to_string(&fs, "deps", &TemplateOptions::default()).unwrap_or_else(|e| e);
    let expected = "---\n# Source: app/charts/archive/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: archive\ndata:\n  size: \"1\"\n  drop: \"keep-me\"\n  region: \"eu-west-1\"\n  template: \"app/charts/archive/templates/cm.yaml\"\n---\n# Source: app/charts/primary/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: primary\ndata:\n  size: \"10\"\n  drop: \"deleted\"\n  region: \"eu-west-1\"\n  template: \"app/charts/primary/templates/cm.yaml\"\n---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  archive: \"cold\"\n  subcharts: \"archive,primary\"\n";
    assert_eq!(text, expected);
    // --set turns the replica on and drops the archive by tag.
    let opts = TemplateOptions {
        set: vec!["replica.enabled=true,tags.archive=false".into()],
        ..TemplateOptions::default()
    };
    let text = template_to_string(&fs, "deps", &opts).unwrap_or_else(|e| e);
    assert!(
        text.contains("# Source: app/charts/replica/templates/cm.yaml"),
        "{text}"
    );
    assert!(!text.contains("charts/archive/"), "{text}");
}

#[test]
fn built_in_objects_marshal_like_helm() {
    let fs = fixtures();
    let text =
        template_to_string(&fs, "builtins", &TemplateOptions::default()).unwrap_or_else(|e| e);
    let expected = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/helm/builtins/expected.txt"),
    )
    .unwrap_or_default();
    assert_eq!(text, expected);
}

/// `testdata/helm/fidelity/<case>/`: a chart (`chart/`) with what `helm template r chart`
/// (helm v3.18.0) printed there recorded beside it (`expected.out`, `expected.err`);
/// with an `args` file, its lines follow `helm template r chart`. Native output must be the
/// same text.
#[test]
fn fidelity_cases_match_recorded_helm_template() {
    use gitops_lint::render::helm::{cli_fs, parse_helm_template_args, run};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/helm/fidelity");
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
        let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap_or_default();
        // `args`: more `helm template` arguments, one a line (`-f`, `values-dev.yaml`)
        let mut args: Vec<String> = ["template", "r", "chart"].map(String::from).to_vec();
        args.extend(read("args").lines().map(String::from));
        let (out, err) = match (cli_fs(case), parse_helm_template_args(&args)) {
            (Ok(fs), Ok((chart, mut opts))) => {
                opts.abs_root = Some(fs.root().display().to_string());
                let r = run(&fs, &chart, &opts, false);
                (r.stdout.clone(), r.stderr())
            }
            (Err(e), _) | (_, Err(e)) => (String::new(), format!("Error: {e}\n")),
        };
        if out != read("expected.out") || err != read("expected.err") {
            problems.push(format!("{name}: stdout:\n{out}\nstderr:\n{err}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
