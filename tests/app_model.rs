//! Which app renders which objects, for Flux and ApplicationSet repos, and the findings
//! that depend on the model (substitution, Flux ignore rules, generated apps).

use gitops_lint::lint::{LintOptions, lint};
use std::path::Path;

fn run(rel: &str) -> gitops_lint::lint::LintResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    match lint(&LintOptions {
        root,
        config: None,
        ..Default::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{rel}: {e}"),
    }
}

fn apps(r: &gitops_lint::lint::LintResult) -> Vec<String> {
    r.model
        .apps
        .iter()
        .map(|a| {
            let parent = a
                .parent
                .as_deref()
                .map(|p| format!(" <- {p}"))
                .unwrap_or_default();
            format!(
                "{} {} {} [{}]{parent}",
                a.name,
                a.kind.as_str(),
                a.objects.len(),
                a.sources.join(", ")
            )
        })
        .collect()
}

/// Lints a repo written to a temporary directory from `(path, text)` pairs.
fn lint_tree(files: &[(&str, impl AsRef<[u8]>)]) -> gitops_lint::lint::LintResult {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (rel, text) in files {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(tmp.path())).ok();
        std::fs::write(&p, text.as_ref()).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
    match lint(&LintOptions {
        root: tmp.path().to_path_buf(),
        config: None,
        ..Default::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

fn findings(r: &gitops_lint::lint::LintResult) -> Vec<String> {
    r.findings
        .iter()
        .map(|f| {
            let lc = r.map.line_col(f.primary.span);
            format!(
                "{} {}:{} {}",
                f.rule,
                r.map.path(f.primary.span.file),
                lc.line,
                f.app.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

#[test]
fn flux_kustomizations_render_their_paths_with_substitution_and_ignores() {
    let r = run("testdata/apps/flux");
    assert_eq!(
        apps(&r),
        [
            "api flux-helmrelease 2 [helm charts/api]",
            "podinfo flux-kustomization 2 [directory apps/podinfo (flux)]",
            "redis flux-kustomization 2 [directory apps/redis (flux)]",
            "cache flux-kustomization 2 [directory apps/cache (flux, generated kustomization)]",
            "clusters/prod standalone 7 [directory clusters/prod]",
        ]
    );
    // targetNamespace moves podinfo's objects to `web`; `${replicas}` came from the
    // cluster-vars ConfigMap and is an integer after substitution.
    let podinfo = r
        .model
        .objects
        .iter()
        .find(|o| o.object.name == "podinfo" && o.object.kind == "Deployment");
    assert_eq!(podinfo.map(|o| o.namespace.as_str()), Some("web"));
    assert_eq!(
        podinfo
            .and_then(|o| o.object.root.get_path(&["spec", "replicas"]))
            .and_then(|n| n.as_i64()),
        Some(2)
    );
    assert_eq!(
        findings(&r),
        [
            "hpa-replicas-conflict apps/podinfo/deployment.yaml:8 podinfo",
            "flux-substitution-undefined apps/podinfo/deployment.yaml:22 podinfo",
            // replicaCount: 4 from the api-values ConfigMap (valuesFrom).
            "hpa-replicas-conflict charts/api/templates/deployment.yaml:6 api",
            // The Flux patch sets the replicas: the finding is on its `value` line.
            "hpa-replicas-conflict clusters/prod/cache.yaml:28 cache",
        ],
        "redis is protected by its spec.ignore rule"
    );
    // kustomize-controller's overlay on a path without kustomization.yaml: prefix, target
    // namespace, image tag, and commonMetadata on every object.
    let cache = r
        .model
        .objects
        .iter()
        .find(|o| o.object.kind == "Deployment" && r.model.app_of(o).name == "cache");
    let cache = cache.map(|o| &o.object);
    assert_eq!(cache.map(|o| o.name.as_str()), Some("prod-cache"));
    assert_eq!(cache.and_then(|o| o.namespace.as_deref()), Some("cache"));
    assert_eq!(cache.and_then(|o| o.label("team")), Some("platform"));
    let image = cache
        .and_then(|o| {
            o.root
                .get_path(&["spec", "template", "spec", "containers"])
                .and_then(|c| c.as_seq())
                .and_then(|c| c.first())
                .and_then(|c| c.get_str("image"))
        })
        .map(str::to_string);
    assert_eq!(image.as_deref(), Some("registry.example.com/cache:1.1.0"));
    let hpa_target = r
        .model
        .objects
        .iter()
        .find(|o| o.object.kind == "HorizontalPodAutoscaler" && r.model.app_of(o).name == "cache")
        .and_then(|o| o.object.root.get_path(&["spec", "scaleTargetRef", "name"]))
        .and_then(|n| n.as_str())
        .map(str::to_string);
    assert_eq!(
        hpa_target.as_deref(),
        Some("prod-cache"),
        "name references follow the prefix"
    );
}

/// A HelmRelease whose chart comes through `chartRef` to a HelmChart declared in the repo
/// (GitRepository path), with values from a Secret's base64 data.
#[test]
fn helmrelease_chart_ref_and_secret_values() {
    let r = run("testdata/apps/flux-chartref");
    assert_eq!(
        apps(&r),
        [
            "api flux-helmrelease 1 [helm charts/api]",
            "api-canary flux-helmrelease 0 [helm charts/api]",
            "clusters standalone 5 [directory clusters]",
        ]
    );
    let replicas = r
        .model
        .objects
        .iter()
        .find(|o| o.object.kind == "Deployment")
        .and_then(|o| o.object.root.get_path(&["spec", "replicas"]))
        .and_then(|n| n.as_i64());
    assert_eq!(
        replicas,
        Some(5),
        "replicaCount from the Secret, over values-prod.yaml"
    );
    assert_eq!(
        findings(&r),
        ["render-failed clusters/api.yaml:65 api-canary"],
        "the missing second values file fails the release"
    );
}

#[test]
fn applicationset_git_directories_times_list() {
    let r = run("testdata/apps/appset");
    assert_eq!(
        apps(&r),
        [
            "billing-prod argo-appset 2 [directory apps/billing]",
            "ledger-prod argo-appset 1 [directory apps/ledger]",
            "apps/search standalone 1 [directory apps/search]",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    assert_eq!(
        findings(&r),
        ["hpa-replicas-conflict apps/billing/deployment.yaml:6 billing-prod"]
    );
    let billing = r
        .model
        .objects
        .iter()
        .find(|o| o.object.name == "billing" && o.object.kind == "Deployment");
    assert_eq!(billing.map(|o| o.namespace.as_str()), Some("finance"));
}

#[test]
fn stale_ignore_entries_are_info() {
    let r = run("testdata/apps/stale");
    assert_eq!(
        findings(&r),
        [
            "ignore-differences-stale argocd/cart.yaml:17 cart",
            "ignore-differences-stale argocd/cart.yaml:25 cart",
            // Flux: a Kustomization rule for a removed Deployment, a path nothing declares,
            // and a HelmRelease driftDetection rule for a kind the chart does not render.
            "ignore-differences-stale flux/billing.yaml:15 billing",
            "ignore-differences-stale flux/billing.yaml:20 billing",
            "ignore-differences-stale flux/billing.yaml:42 billing-db",
        ]
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.severity == gitops_lint::report::Severity::Info)
    );
}

/// The payments incident three ways: the finding sits on the line a person edits, with the
/// other contributing lines as secondary labels.
#[test]
fn hpa_conflict_points_at_the_line_to_edit_in_manifest_overlay_and_chart() {
    let r = run("testdata/apps/hpa-three-ways");
    let mut got: Vec<String> = r
        .findings
        .iter()
        .map(|f| {
            let lc = r.map.line_col(f.primary.span);
            let related: Vec<String> = f
                .secondary
                .iter()
                .map(|l| {
                    format!(
                        "{}:{}",
                        r.map.path(l.span.file),
                        r.map.line_col(l.span).line
                    )
                })
                .collect();
            format!(
                "{} {}:{} <- {}",
                f.rule,
                r.map.path(f.primary.span.file),
                lc.line,
                related.join(" ")
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "hpa-replicas-conflict charts/search/templates/deployment.yaml:6 <- charts/search/templates/hpa.yaml:10 charts/search/values-prod.yaml:2",
            "hpa-replicas-conflict overlays/prod/replicas.yaml:6 <- base/cart/hpa.yaml:9 base/cart/deployment.yaml:6",
            "hpa-replicas-conflict plain/orders/deployment.yaml:6 <- plain/orders/deployment.yaml:27",
        ]
    );
}

/// `goTemplate: true` renders parameters with Go text/template and Sprig; a git files
/// generator reads the JSON files of this repository.
#[test]
fn applicationset_go_template_with_git_files() {
    let r = run("testdata/apps/appset-go");
    assert_eq!(
        apps(&r),
        [
            "web-prod argo-appset 1 [directory envs/prod]",
            "web-staging argo-appset 1 [directory envs/staging]",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    let objects: Vec<String> = r.findings.iter().filter_map(|f| f.object.clone()).collect();
    assert_eq!(objects, ["Service/web-prod/web", "Service/web-staging/web"]);
}

/// `.argocd-source-<app>.yaml` in the source path is merged into the source (Image Updater's
/// git write-back), so the rendered image is the one Argo CD deploys.
#[test]
fn argocd_source_override_files_apply() {
    let r = run("testdata/apps/source-overrides");
    let image = r
        .model
        .objects
        .iter()
        .find(|o| o.object.kind == "Deployment")
        .and_then(|o| {
            o.object
                .root
                .get_path(&["spec", "template", "spec", "containers"])
                .and_then(|c| c.as_seq())
                .and_then(|c| c.first())
                .and_then(|c| c.get_str("image"))
                .map(str::to_string)
        });
    assert_eq!(image.as_deref(), Some("registry.example.com/cart:3.2.0"));
}

/// Findings with their related labels, sorted: `rule file:line app <- file:line ...`.
fn located(r: &gitops_lint::lint::LintResult) -> Vec<String> {
    let at = |span: gitops_lint::source::Span| {
        format!("{}:{}", r.map.path(span.file), r.map.line_col(span).line)
    };
    let mut got: Vec<String> = r
        .findings
        .iter()
        .map(|f| {
            let related: Vec<String> = f.secondary.iter().map(|l| at(l.span)).collect();
            format!(
                "{} {} {} <- {}",
                f.rule,
                at(f.primary.span),
                f.app.as_deref().unwrap_or("-"),
                related.join(" ")
            )
        })
        .collect();
    got.sort();
    got
}

/// A root Application renders a directory of Applications; one of them is a chart that
/// templates more Applications, another a multi-source app whose prod values come from
/// `$values`. Every rendered app is an app of the model with its parent, and findings about
/// a templated Application sit on the chart template's line.
#[test]
fn app_of_apps_with_multi_source_values() {
    let r = run("testdata/apps/app-of-apps");
    assert_eq!(
        apps(&r),
        [
            "platform argo 1 [helm platform-apps] <- root",
            "web argo 2 [helm charts/web] <- root",
            "root argo 2 [directory apps]",
            "metrics argo 3 [directory workloads/metrics] <- platform",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    assert_eq!(
        located(&r),
        [
            // replicas: 3 comes from the `$values` file, shown as the related line.
            "hpa-replicas-conflict charts/web/templates/deployment.yaml:6 web <- charts/web/templates/hpa.yaml:10 envs/prod/values.yaml:2",
            "hpa-replicas-conflict workloads/metrics/deployment.yaml:6 metrics <- workloads/metrics/deployment.yaml:37 platform-apps/templates/applications.yaml:21",
            "ignore-differences-broad platform-apps/templates/applications.yaml:24 metrics <- ",
            "ignore-differences-security-sensitive platform-apps/templates/applications.yaml:24 metrics <- ",
            "ignore-differences-unjustified platform-apps/templates/applications.yaml:21 metrics <- ",
            "respect-ignore-differences-missing platform-apps/templates/applications.yaml:24 metrics <- workloads/metrics/deployment.yaml:5 platform-apps/templates/applications.yaml:18",
        ]
    );
}

/// The second level of app-of-apps through charts: `prod-apps` renders a local chart with the
/// environment's values file, which templates one Application per app, each pointing at
/// another local chart with its own `valuesObject`, `parameters` or `values`. Each generated
/// app renders with what it carries: prod turns the HPA on for web (valuesObject) and checkout
/// (parameters), so their fixed `replicas` is a real conflict; worker's `values` set 4
/// replicas and no HPA.
#[test]
fn app_of_apps_through_charts_renders_the_second_level_with_its_values() {
    let r = run("testdata/apps/app-of-apps-charts");
    assert_eq!(
        apps(&r),
        [
            "prod-apps argo 3 [helm charts/apps]",
            "prod-checkout argo 2 [helm charts/web] <- prod-apps",
            "prod-web argo 2 [helm charts/web] <- prod-apps",
            "prod-worker argo 1 [helm charts/worker] <- prod-apps",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    assert_eq!(
        located(&r),
        [
            "hpa-replicas-conflict charts/web/templates/deployment.yaml:6 prod-checkout <- charts/web/templates/hpa.yaml:10 charts/web/values.yaml:1",
            "hpa-replicas-conflict charts/web/templates/deployment.yaml:6 prod-web <- charts/web/templates/hpa.yaml:10 charts/web/values.yaml:1",
        ]
    );
    let replicas = |app: &str| {
        r.model
            .apps
            .iter()
            .find(|a| a.name == app)
            .map(|a| {
                r.model
                    .objects_of(a)
                    .filter(|mo| mo.object.kind == "Deployment")
                    .filter_map(|mo| mo.object.root.get_path(&["spec", "replicas"]))
                    .filter_map(|n| n.scalar_text())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert_eq!(replicas("prod-worker"), ["4"]);
}

/// A field of each app's rendered objects, `app kind field=value`, for the apps of `r`.
fn rendered_fields(r: &gitops_lint::lint::LintResult, kind: &str, path: &[&str]) -> Vec<String> {
    let mut got: Vec<String> = r
        .model
        .apps
        .iter()
        .flat_map(|a| {
            r.model
                .objects_of(a)
                .filter(|mo| mo.object.kind == kind)
                .filter_map(|mo| mo.object.root.get_path(path)?.scalar_text())
                .map(|v| format!("{} {kind} {}={v}", a.name, path.join(".")))
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort();
    got
}

/// App-of-apps through a chart, as a platform repo writes it: `prod-apps` renders
/// charts/apps with values-prod.yaml, whose template makes one Application per app with
/// that app's `valuesObject`, `values` block, `parameters` or `valueFiles`. Each second-level
/// app renders with them: prod sets `replicaCount` on three apps whose chart has an HPA, and
/// each finding names the values-prod.yaml line that set it (through the parent template that
/// printed the child's values), not the template action or a copy of the values.
#[test]
fn app_of_apps_chart_values_reach_the_second_level_and_findings_name_the_values_line() {
    let r = run("testdata/apps/app-of-apps-values/bad");
    assert_eq!(
        apps(&r),
        [
            "prod-apps argo 4 [helm charts/apps]",
            "prod-checkout argo 2 [helm charts/checkout] <- prod-apps",
            "prod-payments argo 2 [helm charts/checkout] <- prod-apps",
            "prod-reports argo 1 [helm charts/reports] <- prod-apps",
            "prod-search argo 2 [helm charts/checkout] <- prod-apps",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    assert_eq!(
        located(&r),
        [
            "hpa-replicas-conflict charts/checkout/templates/deployment.yaml:7 prod-checkout <- charts/checkout/templates/hpa.yaml:9 charts/apps/values-prod.yaml:9",
            "hpa-replicas-conflict charts/checkout/templates/deployment.yaml:7 prod-payments <- charts/checkout/templates/hpa.yaml:9 charts/apps/values-prod.yaml:22",
            "hpa-replicas-conflict charts/checkout/templates/deployment.yaml:7 prod-search <- charts/checkout/templates/hpa.yaml:9 charts/apps/values-prod.yaml:28",
        ]
    );
    // The fix that edits the Application is not offered: the Application is a template's
    // output, and an edit there would land in every app it makes.
    assert!(
        r.findings
            .iter()
            .all(|f| f.fix.as_ref().is_none_or(|x| !x.safe))
    );
    // valueFiles of the child resolve in its own chart; its `values` block applies on top.
    assert_eq!(
        rendered_fields(&r, "CronJob", &["spec", "schedule"]),
        ["prod-reports CronJob spec.schedule=0 3 * * *"]
    );
    let images: Vec<String> = r
        .model
        .objects
        .iter()
        .filter(|mo| mo.object.kind == "CronJob")
        .filter_map(|mo| {
            let pod = [
                "spec",
                "jobTemplate",
                "spec",
                "template",
                "spec",
                "containers",
            ];
            mo.object
                .root
                .get_path(&pod)?
                .as_seq()?
                .first()?
                .get("image")?
                .scalar_text()
        })
        .collect();
    assert_eq!(images, ["registry.example.com/reports:1.4.0-prod"]);

    // The legitimate variant: prod tunes the HPA instead of the replica count.
    let clean = run("testdata/apps/app-of-apps-values/clean");
    assert_eq!(located(&clean), Vec::<String>::new());
    assert_eq!(
        rendered_fields(&clean, "HorizontalPodAutoscaler", &["spec", "minReplicas"]),
        [
            "prod-checkout HorizontalPodAutoscaler spec.minReplicas=3",
            "prod-payments HorizontalPodAutoscaler spec.minReplicas=2",
            "prod-search HorizontalPodAutoscaler spec.minReplicas=4",
        ]
    );
    assert_eq!(
        rendered_fields(&clean, "HorizontalPodAutoscaler", &["spec", "maxReplicas"]),
        [
            "prod-checkout HorizontalPodAutoscaler spec.maxReplicas=10",
            "prod-payments HorizontalPodAutoscaler spec.maxReplicas=4",
            "prod-search HorizontalPodAutoscaler spec.maxReplicas=10",
        ]
    );
}

/// Three levels: `platform` renders one `<env>-apps` Application per environment, passing
/// that environment's apps in its `valuesObject`; each renders charts/apps, which makes the
/// workload Applications. The replica count prod sets in charts/environments/values.yaml
/// travels through two templated `valuesObject`s and the finding still names that line.
/// Staging deploys the same chart to another cluster: not a second HPA on prod's workload.
#[test]
fn app_of_apps_three_levels_deep_keeps_the_values_line() {
    let r = run("testdata/apps/app-of-apps-three-levels/bad");
    assert_eq!(
        apps(&r),
        [
            "platform argo 2 [helm charts/environments]",
            "prod-apps argo 1 [helm charts/apps] <- platform",
            "staging-apps argo 1 [helm charts/apps] <- platform",
            "prod-checkout argo 2 [helm charts/checkout] <- prod-apps",
            "staging-checkout argo 2 [helm charts/checkout] <- staging-apps",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    assert_eq!(
        located(&r),
        [
            "hpa-replicas-conflict charts/checkout/templates/deployment.yaml:7 prod-checkout <- charts/checkout/templates/hpa.yaml:9 charts/environments/values.yaml:19",
        ]
    );
    let clean = run("testdata/apps/app-of-apps-three-levels/clean");
    assert_eq!(located(&clean), Vec::<String>::new());
    assert_eq!(
        rendered_fields(&clean, "HorizontalPodAutoscaler", &["spec", "minReplicas"]),
        [
            "prod-checkout HorizontalPodAutoscaler spec.minReplicas=3",
            "staging-checkout HorizontalPodAutoscaler spec.minReplicas=2",
        ]
    );
}

/// A child Application whose `path` an app-of-apps chart prints from its values, pointing at
/// a directory that does not exist: `render-failed` on the template's `path:` line, the
/// message naming the values line that holds the typo. The sibling with a real path renders.
#[test]
fn app_of_apps_child_with_a_missing_path_names_the_values_line() {
    let app = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: apps\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform/gitops.git\n    targetRevision: main\n    path: charts/apps\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n";
    let template = "{{- range $name, $app := .Values.apps }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ $name }}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform/gitops.git\n    targetRevision: main\n    path: workloads/{{ $app.dir | default $name }}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {{ $name }}\n{{- end }}\n";
    let r = lint_tree(&[
        ("argocd/apps.yaml", app),
        (
            "charts/apps/Chart.yaml",
            "apiVersion: v2\nname: apps\nversion: 1.0.0\n",
        ),
        ("charts/apps/templates/apps.yaml", template),
        (
            "charts/apps/values.yaml",
            "apps:\n  web: {}\n  billing:\n    dir: biling\n",
        ),
        (
            "workloads/web/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
        ),
        (
            "workloads/billing/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: billing\n",
        ),
    ]);
    assert_eq!(
        findings(&r),
        ["render-failed charts/apps/templates/apps.yaml:13 billing"]
    );
    assert!(
        r.findings[0].message.contains(
            "app path does not exist: `workloads/biling` (printed from charts/apps/values.yaml:4: `biling`)"
        ),
        "{}",
        r.findings[0].message
    );
    assert!(apps(&r).contains(&"web argo 1 [directory workloads/web] <- apps".to_string()));
}

/// a renders b, whose chart renders a again: reported once, on the line that closes the loop.
#[test]
fn app_of_apps_cycle_is_a_located_finding() {
    let r = run("testdata/apps/app-of-apps-cycle");
    assert_eq!(
        apps(&r),
        [
            "a argo 1 [helm b-chart]",
            "b argo 1 [helm a-chart] <- a",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    assert_eq!(
        findings(&r),
        ["offline-unrenderable-input a-chart/templates/app.yaml:5 b"]
    );
    assert!(
        r.findings[0]
            .message
            .contains("app-of-apps cycle a → b → a: `a` is not expanded again"),
        "{}",
        r.findings[0].message
    );
}

/// `profile:` in `.gitops-lint.yaml` gives Helm the destination cluster's version and APIs
/// (`.Capabilities`), unless the Application pins `helm.kubeVersion` / `helm.apiVersions`.
#[test]
fn profile_sets_helm_capabilities_unless_the_app_pins_them() {
    let r = run("testdata/apps/profile");
    assert_eq!(
        apps(&r),
        [
            "metrics-edge argo 1 [helm charts/metrics]",
            "argocd standalone 1 [directory argocd]",
        ]
    );
    let with_profile = {
        use gitops_lint::lint::{LintOptions, lint};
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/apps/profile");
        let config = root.join(".gitops-lint.yaml");
        match lint(&LintOptions {
            root: root.join("charts"),
            config: Some(config),
            ..Default::default()
        }) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    };
    let kube = |r: &gitops_lint::lint::LintResult| -> Vec<String> {
        r.model
            .objects
            .iter()
            .map(|o| match o.object.root.get_path(&["data", "kube"]) {
                Some(v) => format!("{} {}", o.object.kind, v.as_str().unwrap_or("?")),
                None => o.object.kind.clone(),
            })
            .collect()
    };
    assert_eq!(
        kube(&r)[0],
        "ConfigMap v1.30.4",
        "the app's own kubeVersion wins"
    );
    assert_eq!(
        kube(&with_profile),
        ["ConfigMap v1.31.2", "ServiceMonitor"],
        "a standalone chart renders for the profile's cluster"
    );
}

/// `profile:` says what the repo cannot: the cluster runs Argo CD 2.14 (label tracking and
/// status compared by default), namespace `shop` carries `pull: always` in the cluster, and
/// HPAs made outside the repo scale `api` (which pins replicas) and `worker` (which a KEDA
/// ScaledObject in the repo scales too). Each fact turns into a finding located in the repo
/// with the profile entry as the related line; without the profile they are absent or milder.
#[test]
fn profile_cluster_facts_drive_findings() {
    let r = run("testdata/apps/profile-cluster");
    let with_severity = |r: &gitops_lint::lint::LintResult| -> Vec<String> {
        let mut out: Vec<String> = located(r)
            .into_iter()
            .zip(r.findings.iter().map(|f| format!("{:?}", f.severity)))
            .map(|(l, s)| format!("{s} {l}"))
            .collect();
        out.sort();
        out
    };
    let _ = with_severity;
    let mut got: Vec<String> = r
        .findings
        .iter()
        .map(|f| {
            let at = |span: gitops_lint::source::Span| {
                format!("{}:{}", r.map.path(span.file), r.map.line_col(span).line)
            };
            let related: Vec<String> = f.secondary.iter().map(|l| at(l.span)).collect();
            format!(
                "{:?} {} {} <- {}",
                f.severity,
                f.rule,
                at(f.primary.span),
                related.join(" ")
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "Error autoscaler-conflict apps/api/worker.yaml:22 <- .gitops-lint.yaml:21",
            "Error hpa-replicas-conflict apps/api/deployment.yaml:8 <- .gitops-lint.yaml:12",
            "Error mutation-policy-conflict apps/api/deployment.yaml:18 <- platform/pull-policy.yaml:7 .gitops-lint.yaml:8",
            "Warning committed-live-state apps/api/deployment.yaml:19 <- ",
            // The label tracking of 2.14 is the release's default: the profile line is named.
            "Warning instance-label-clash apps/api/deployment.yaml:6 <- .gitops-lint.yaml:4",
        ]
    );
    let hpa = r
        .findings
        .iter()
        .find(|f| f.rule == "hpa-replicas-conflict");
    assert!(
        hpa.is_some_and(|f| f
            .message
            .contains("HorizontalPodAutoscaler shop/api (.gitops-lint.yaml profile.autoscalers)")),
        "{hpa:?}"
    );
    assert_eq!(
        r.model
            .profile
            .argo_version
            .as_ref()
            .map(|v| (v.major, v.minor)),
        Some((2, 14))
    );

    // The same repo without the profile: no autoscaler, unknown namespace labels (a warning),
    // Argo CD ≥ 3.0 defaults (annotation tracking, status ignored).
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/apps/profile-cluster");
    for rel in [
        "argocd/api.yaml",
        "apps/api/deployment.yaml",
        "apps/api/worker.yaml",
        "platform/pull-policy.yaml",
    ] {
        let to = tmp.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap_or(tmp.path())).ok();
        std::fs::copy(src.join(rel), &to).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
    std::fs::write(
        tmp.path().join(".gitops-lint.yaml"),
        "repo-urls:\n  - https://git.example.com/shop.git\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let plain = match lint(&LintOptions {
        root: tmp.path().to_path_buf(),
        config: None,
        ..Default::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let mut got: Vec<String> = plain
        .findings
        .iter()
        .map(|f| format!("{:?} {}", f.severity, f.rule))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "Info committed-live-state",
            "Warning mutation-policy-conflict"
        ]
    );
}

/// A HelmRelease's values from a ConfigMap (a literal block), a `targetPath` ConfigMap key,
/// a `targetPath` Secret key and an optional missing ConfigMap, then `spec.values`; and a
/// Flux Kustomization whose missing component is skipped with `ignoreMissingComponents`.
#[test]
fn helmrelease_values_from_target_paths_and_ignore_missing_components() {
    let r = run("testdata/apps/flux-values");
    assert_eq!(
        apps(&r),
        [
            "api flux-helmrelease 2 [helm charts/api]",
            "web flux-kustomization 1 [kustomize apps/web (flux overlay)]",
            "web-strict flux-kustomization 0 [kustomize apps/web (flux overlay)]",
            "clusters standalone 7 [directory clusters]",
        ]
    );
    // The replica count comes from the ConfigMap's block: the related line is its own line.
    assert_eq!(
        located(&r),
        [
            "hpa-replicas-conflict charts/api/templates/deployment.yaml:8 api <- charts/api/templates/hpa.yaml:9 clusters/api-values.yaml:9",
            "render-failed clusters/web.yaml:35 web-strict <- ",
        ]
    );
    let deployment = |name: &str| {
        r.model
            .objects
            .iter()
            .find(|o| o.object.kind == "Deployment" && o.object.name == name)
            .map(|o| &o.object.root)
    };
    let api = deployment("api-api");
    let container = api.and_then(|d| {
        d.get_path(&["spec", "template", "spec", "containers"])
            .and_then(|c| c.as_seq())
            .and_then(|c| c.first())
    });
    let at = |n: Option<&gitops_lint::yaml::Node>| -> Vec<String> {
        n.and_then(|n| n.related.as_ref())
            .map(|rel| {
                rel.iter()
                    .map(|l| {
                        format!(
                            "{}:{}",
                            r.map.path(l.span.file),
                            r.map.line_col(l.span).line
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let image = container.and_then(|c| c.get("image"));
    assert_eq!(
        image.and_then(|n| n.as_str()),
        Some("registry.example.com/api:2.7.1"),
        "targetPath image.tag overrides the ConfigMap's block"
    );
    let version =
        api.and_then(|d| d.get_path(&["metadata", "labels", "app.kubernetes.io/version"]));
    assert_eq!(version.and_then(|n| n.as_str()), Some("2.7.1"));
    assert_eq!(at(version), ["clusters/api-values.yaml:20"]);
    let password = container.and_then(|c| c.get_path(&["env"])).and_then(|e| {
        e.as_seq()
            .and_then(|e| e.first())
            .and_then(|e| e.get("value"))
    });
    assert_eq!(
        password.and_then(|n| n.as_str()),
        Some("correct-horse-battery")
    );
    assert_eq!(at(password), ["clusters/api-values.yaml:28"]);
    let port = container
        .and_then(|c| c.get_path(&["ports"]))
        .and_then(|p| {
            p.as_seq()
                .and_then(|p| p.first())
                .and_then(|p| p.get("containerPort"))
        });
    assert_eq!(
        port.and_then(|n| n.as_i64()),
        Some(8080),
        "spec.values last"
    );
    assert_eq!(at(port), ["clusters/api.yaml:31"]);
    // The present component applied, the missing one skipped.
    assert_eq!(
        deployment("web")
            .and_then(|d| d.get_path(&["metadata", "labels", "probes"]))
            .and_then(|n| n.as_str()),
        Some("enabled")
    );
}

/// One chart template renders the next level of an endless app-of-apps chain: eight levels
/// are apps (each with its parent), the ninth is a located finding on the template's line.
#[test]
fn app_of_apps_depth_limit_is_a_located_finding() {
    let r = run("testdata/apps/app-of-apps-depth");
    let mut expected: Vec<String> = (0..8)
        .map(|n| {
            let parent = if n == 0 {
                String::new()
            } else {
                format!(" <- level-{}", n - 1)
            };
            format!("level-{n} argo 1 [helm chain]{parent}")
        })
        .collect();
    expected.push("argocd standalone 1 [directory argocd]".into());
    assert_eq!(apps(&r), expected);
    // A cut tree is an error: the apps past it are not linted.
    assert_eq!(
        findings(&r),
        ["render-failed chain/templates/app.yaml:6 level-7"]
    );
    assert_eq!(r.findings[0].severity, gitops_lint::report::Severity::Error);
    assert!(
        r.findings[0]
            .message
            .contains("app-of-apps nesting deeper than 8 levels: `level-8` is not rendered"),
        "{}",
        r.findings[0].message
    );
}

/// Three children per level, each rendering three more: depth alone would allow 3⁷ apps.
/// The total is capped (`limits.max-apps`), and the cut is an error on the child that
/// crossed it, once.
#[test]
fn app_of_apps_fan_out_is_capped_in_total_with_an_error() {
    let files = [
        (".gitops-lint.yaml", "limits:\n  max-apps: 40\n"),
        (
            "argocd/root.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: fan\n  namespace: argocd\nspec:\n  source:\n    repoURL: https://git.example.com/x.git\n    path: fan\n    helm:\n      parameters: [{name: prefix, value: fan}]\n  destination: {server: https://kubernetes.default.svc, namespace: argocd}\n",
        ),
        (
            "fan/Chart.yaml",
            "apiVersion: v2\nname: fan\nversion: 1.0.0\n",
        ),
        ("fan/values.yaml", "prefix: fan\n"),
        (
            "fan/templates/apps.yaml",
            "{{- range $i := until 3 }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ $.Values.prefix }}-{{ $i }}\n  namespace: argocd\nspec:\n  source:\n    repoURL: https://git.example.com/x.git\n    path: fan\n    helm:\n      parameters: [{name: prefix, value: '{{ $.Values.prefix }}-{{ $i }}'}]\n  destination: {server: https://kubernetes.default.svc, namespace: argocd}\n{{- end }}\n",
        ),
    ];
    let r = lint_tree(&files);
    let argo_apps = r.model.apps.iter().filter(|a| a.argo.is_some()).count();
    assert_eq!(argo_apps, 41, "the root and the 40 it may create");
    let cut: Vec<&gitops_lint::report::Finding> = r
        .findings
        .iter()
        .filter(|f| f.message.contains("limits.max-apps"))
        .collect();
    assert_eq!(cut.len(), 1, "{:?}", findings(&r));
    assert_eq!(cut[0].rule, "render-failed");
    assert_eq!(cut[0].severity, gitops_lint::report::Severity::Error);
    assert_eq!(
        r.map.path(cut[0].primary.span.file),
        "fan/templates/apps.yaml"
    );
}

/// An ApplicationSet over its element limit, and ApplicationSets over the total of
/// Applications, are errors on the generators: part of the set is not linted.
#[test]
fn application_sets_cut_at_a_limit_are_errors() {
    let elements: Vec<String> = (0..5001).map(|i| format!("{{name: app-{i}}}")).collect();
    let appset = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: many\n  namespace: argocd\nspec:\n  generators:\n    - list:\n        elements: [{}]\n  template:\n    metadata: {{name: '{{{{name}}}}'}}\n    spec:\n      source: {{repoURL: https://git.example.com/x.git, path: web}}\n      destination: {{server: https://kubernetes.default.svc, namespace: web}}\n",
        elements.join(", ")
    );
    let files = [
        (".gitops-lint.yaml", "limits:\n  max-apps: 10\n".to_string()),
        ("argocd/many.yaml", appset),
        (
            "web/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n".into(),
        ),
    ];
    let r = lint_tree(&files);
    let generated = r
        .model
        .apps
        .iter()
        .filter(|a| a.generated_by.is_some())
        .count();
    assert_eq!(generated, 10);
    let cuts: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.rule == "render-failed")
        .map(|f| format!("{:?} {}", f.severity, f.message))
        .collect();
    assert!(
        cuts.iter()
            .any(|c| c.starts_with("Error") && c.contains("more than 5000 parameter sets")),
        "{cuts:?}"
    );
    assert!(
        cuts.iter()
            .any(|c| c.starts_with("Error") && c.contains("limits.max-apps")),
        "{cuts:?}"
    );
}

/// A `range` in one template renders several Applications from the same line: each is an
/// app of its own.
#[test]
fn applications_from_one_template_line_are_separate_apps() {
    let files = [
        (
            "argocd/root.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\nspec:\n  source: {repoURL: https://git.example.com/x.git, path: apps-chart}\n  destination: {server: https://kubernetes.default.svc, namespace: argocd}\n",
        ),
        (
            "apps-chart/Chart.yaml",
            "apiVersion: v2\nname: apps\nversion: 1.0.0\n",
        ),
        ("apps-chart/values.yaml", "apps: [cart, shop]\n"),
        (
            "apps-chart/templates/apps.yaml",
            "{{- range .Values.apps }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ . }}\n  namespace: argocd\nspec:\n  source: {repoURL: https://git.example.com/x.git, path: 'workloads/{{ . }}'}\n  destination: {server: https://kubernetes.default.svc, namespace: '{{ . }}'}\n{{- end }}\n",
        ),
        (
            "workloads/cart/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cart}\n",
        ),
        (
            "workloads/shop/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shop}\n",
        ),
    ];
    let r = lint_tree(&files);
    assert_eq!(
        apps(&r),
        [
            "root argo 2 [helm apps-chart]",
            "cart argo 1 [directory workloads/cart] <- root",
            "shop argo 1 [directory workloads/shop] <- root",
            "argocd standalone 1 [directory argocd]",
        ]
    );
}

/// `syncPolicy.automated.enabled: false` turns auto-sync off since Argo CD 3.1; an older
/// release's CRD prunes the field, so the app still syncs automatically and a replicas/HPA
/// conflict is an error there, a warning on 3.1.
#[test]
fn automated_enabled_is_read_only_from_argo_3_1() {
    let severity = |argo_version: &str| {
        let files = [
            (
                ".gitops-lint.yaml",
                format!("profile:\n  argo-version: \"{argo_version}\"\n"),
            ),
            (
                "argocd/web.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source: {repoURL: https://git.example.com/x.git, path: web}\n  destination: {server: https://kubernetes.default.svc, namespace: web}\n  syncPolicy:\n    automated: {enabled: false, selfHeal: true}\n".into(),
            ),
            (
                "web/deployment.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n".into(),
            ),
            (
                "web/hpa.yaml",
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n".into(),
            ),
        ];
        let r = lint_tree(&files);
        r.findings
            .iter()
            .map(|f| format!("{:?} {}", f.severity, f.rule))
            .collect::<Vec<_>>()
    };
    assert_eq!(severity("3.0.12"), ["Error hpa-replicas-conflict"]);
    assert_eq!(severity("3.1.0"), ["Warning hpa-replicas-conflict"]);
}

/// Argo CD's `source.kustomize.components` with `ignoreMissingComponents: true`: the missing
/// component is skipped, the present one applied; without the flag the build fails.
#[test]
fn argo_kustomize_ignore_missing_components() {
    let run_with = |flag: &str| {
        let files = [
            (
                "argocd/web.yaml",
                format!(
                    "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/x.git\n    path: web\n    kustomize:\n      components: [../probes, ../canary]\n{flag}  destination: {{server: https://kubernetes.default.svc, namespace: web}}\n"
                ),
            ),
            (
                "web/kustomization.yaml",
                "resources: [cm.yaml]\n".to_string(),
            ),
            (
                "web/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n".to_string(),
            ),
            (
                "probes/kustomization.yaml",
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels: {probes: enabled}\n".to_string(),
            ),
        ];
        lint_tree(&files)
    };
    let r = run_with("      ignoreMissingComponents: true\n");
    assert_eq!(findings(&r), Vec::<String>::new());
    let label = r
        .model
        .objects
        .iter()
        .find(|o| o.object.kind == "ConfigMap")
        .and_then(|o| o.object.label("probes").map(str::to_string));
    assert_eq!(label.as_deref(), Some("enabled"));
    let strict = run_with("");
    // (Located on the kustomization the overrides are written into, not yet on the
    // Application's `components` entry.)
    assert_eq!(
        findings(&strict),
        ["render-failed web/kustomization.yaml:1 web"]
    );
    assert!(
        strict.findings[0].message.contains("../canary"),
        "{}",
        strict.findings[0].message
    );
}

#[test]
fn flux_overlay_builds_obey_the_repo_limits() {
    // A Flux Kustomization with overlay options (namePrefix) is built with the generated or
    // overlaid kustomization: the repo's `limits:` must apply to that build too.
    let cm = |n: u32| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{n}}}\n");
    let files = [
        (
            ".gitops-lint.yaml",
            "limits:\n  max-kustomize-resources: 2\n".to_string(),
        ),
        (
            "clusters/web.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: web\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./web\n  prune: true\n  namePrefix: prod-\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n".to_string(),
        ),
        (
            "web/kustomization.yaml",
            "resources: [a.yaml, b.yaml, c.yaml]\n".to_string(),
        ),
        ("web/a.yaml", cm(1)),
        ("web/b.yaml", cm(2)),
        ("web/c.yaml", cm(3)),
    ];
    let r = lint_tree(&files);
    let over: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.message.contains("limits.max-kustomize-resources"))
        .map(|f| format!("{} {}", f.rule, r.map.path(f.primary.span.file)))
        .collect();
    assert_eq!(over.len(), 1, "{:#?}", findings(&r));
}

/// `(name kind parent status reason objects)` per app, from `apps --format json`'s model.
fn statuses(r: &gitops_lint::lint::LintResult) -> Vec<String> {
    let json = gitops_lint::gitops::listing::apps_json(&r.model);
    json["apps"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|a| {
            format!(
                "{} {} {} {} {} {}",
                a["name"].as_str().unwrap_or("?"),
                a["controller"].as_str().unwrap_or("?"),
                a["parent"].as_str().unwrap_or("-"),
                a["status"].as_str().unwrap_or("?"),
                a["reason"].as_str().unwrap_or("-"),
                a["objects"]
            )
        })
        .collect()
}

#[test]
fn this_repository_by_remote_config_bootstrap_or_majority() {
    let ks = |url: &str| {
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: fleet\n  namespace: flux-system\nspec:\n  url: {url}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps\n  sourceRef:\n    kind: GitRepository\n    name: fleet\n"
        )
    };
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    let remote = "[remote \"origin\"]\n\turl = git@GitHub.com:Acme/Fleet.git\n";
    // scp-like remote, https GitRepository with `.git`, another host case.
    let r = lint_tree(&[
        (".git/config", remote.to_string()),
        (
            "clusters/prod/sync.yaml",
            ks("https://github.com/acme/fleet.git"),
        ),
        ("apps/cm.yaml", cm.to_string()),
    ]);
    let app = r
        .model
        .apps
        .iter()
        .find(|a| a.name == "apps")
        .expect("apps");
    let j = app.repository.as_ref().expect("judged");
    assert!(j.local, "{j:?}");
    assert_eq!(j.rule.describe(), "git remote");
    assert_eq!(app.objects.len(), 1);
    // A remote that is another repository: external, with the reason.
    let r = lint_tree(&[
        (".git/config", remote.to_string()),
        (
            "clusters/prod/sync.yaml",
            ks("ssh://git@github.com/acme/other"),
        ),
        ("apps/cm.yaml", cm.to_string()),
    ]);
    assert!(
        statuses(&r).contains(&"apps flux-kustomize - not-rendered external-source 0".to_string()),
        "{:?}",
        statuses(&r)
    );
    // No remote: the bootstrap GitRepository (a gotk-sync.yaml) names the repo.
    let r = lint_tree(&[
        (
            "clusters/prod/flux-system/gotk-sync.yaml",
            ks("ssh://git@github.com/acme/fleet"),
        ),
        ("apps/cm.yaml", cm.to_string()),
    ]);
    let app = r
        .model
        .apps
        .iter()
        .find(|a| a.name == "apps")
        .expect("apps");
    assert_eq!(
        app.repository
            .as_ref()
            .map(|j| (j.local, j.rule.describe())),
        Some((true, "the repo's Flux bootstrap GitRepository"))
    );
    // No remote: the repoURL most Applications use for paths here; another one is external.
    let app = |name: &str, url: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  source:\n    repoURL: {url}\n    path: {path}\n  destination:\n    namespace: x\n"
        )
    };
    let r = lint_tree(&[
        (
            "argocd/a.yaml",
            app("a", "https://github.com/acme/fleet", "apps"),
        ),
        (
            "argocd/b.yaml",
            app("b", "https://github.com/acme/fleet.git", "apps"),
        ),
        (
            "argocd/c.yaml",
            app("c", "https://github.com/acme/vendor", "apps"),
        ),
        ("apps/cm.yaml", cm.to_string()),
    ]);
    let rule = |n: &str| {
        r.model
            .apps
            .iter()
            .find(|a| a.name == n)
            .and_then(|a| a.repository.as_ref())
            .map(|j| (j.local, j.rule.describe()))
    };
    let majority = "the repoURL most Applications use for paths here";
    assert_eq!(rule("b"), Some((true, majority)));
    assert_eq!(rule("c"), Some((false, majority)));
}

#[test]
fn nested_flux_kustomizations_render_with_their_own_spec() {
    let r = run("testdata/apps/flux-tree");
    assert_eq!(
        statuses(&r),
        [
            "podinfo flux-kustomize cluster-apps rendered - 1",
            "redis flux-helm redis not-rendered remote-chart 0",
            "redis flux-kustomize cluster-apps rendered - 2",
            "search flux-kustomize cluster-apps not-rendered render-failed 0",
            "cluster-apps flux-kustomize - rendered - 6",
            "apps/legacy none - rendered - 1",
            "clusters/prod none - rendered - 3",
        ]
    );
    let podinfo = r
        .model
        .apps
        .iter()
        .find(|a| a.name == "podinfo")
        .expect("podinfo");
    assert_eq!(podinfo.depends_on, ["redis"]);
    let d = &r.model.objects[podinfo.objects[0]];
    assert_eq!(
        (d.object.name.as_str(), d.namespace.as_str()),
        ("prod-podinfo", "web"),
        "namePrefix and targetNamespace of the child's own spec"
    );
    assert_eq!(d.object.label("acme.io/team"), Some("web"), "its component");
    assert_eq!(
        d.object.annotation("acme.io/url"),
        Some("https://podinfo.prod.acme.io"),
        "postBuild.substituteFrom of the child"
    );
    // spec.ignore of the GitRepository: apps/legacy is not in the artifact.
    let root = r
        .model
        .apps
        .iter()
        .find(|a| a.name == "cluster-apps")
        .expect("root");
    assert!(
        r.model
            .objects_of(root)
            .all(|o| o.object.name != "legacy-billing"),
        "ignored by spec.ignore"
    );
    assert_eq!(
        findings(&r),
        [
            "offline-unrenderable-input apps/redis/app/helmrelease.yaml:18 redis",
            "render-failed apps/search/ks.yaml:8 search",
        ]
    );
}

#[test]
fn artifact_generator_outputs_render_their_consumers() {
    let r = run("testdata/apps/flux-artifacts");
    assert_eq!(
        statuses(&r),
        [
            "web flux-kustomize - rendered - 1",
            "web-canary flux-helm - rendered - 1",
            "docs flux-kustomize - not-rendered render-failed 0",
            "clusters/prod none - rendered - 4",
            "clusters/prod/flux-system none - rendered - 1",
        ]
    );
    let replicas = |app: &str| {
        let a = r.model.apps.iter().find(|a| a.name == app).expect("app");
        r.model
            .objects_of(a)
            .find(|o| o.object.kind == "Deployment")
            .and_then(|o| o.object.root.get_path(&["spec", "replicas"]))
            .and_then(|n| n.as_i64())
    };
    assert_eq!(
        replicas("web"),
        Some(6),
        "the prod overlay over base, copied in"
    );
    assert_eq!(
        replicas("web-canary"),
        Some(1),
        "the chart from the artifact root"
    );
    assert_eq!(
        findings(&r),
        ["render-failed clusters/prod/artifacts.yaml:25 docs"],
        "the copy that matches nothing, on its from: line"
    );
}

/// Two clusters' GitRepositories share a name; an ArtifactGenerator reads the one declared
/// nearest to it, as a Kustomization's sourceRef does (it once read whichever came first,
/// because the nearest was judged from a file left over by the previous reader).
#[test]
fn an_artifact_generator_reads_the_git_repository_nearest_to_it() {
    let git = |url: &str| {
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  url: {url}\n"
        )
    };
    let generator = "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: shop\n  namespace: flux-system\nspec:\n  sources:\n    - alias: repo\n      kind: GitRepository\n      name: flux-system\n  artifacts:\n    - name: web\n      copy:\n        - from: \"@repo/deploy/**\"\n          to: \"@artifact/\"\n";
    let consumer = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: web\n  namespace: flux-system\nspec:\n  path: ./\n  sourceRef:\n    kind: ExternalArtifact\n    name: web\n";
    let r = lint_tree(&[
        (
            ".git/config",
            "[remote \"origin\"]\n\turl = https://github.com/acme/fleet\n".to_string(),
        ),
        // Declared first: another repository, the edge cluster's.
        (
            "clusters/edge/flux-system/gotk-sync.yaml",
            git("https://github.com/acme/edge"),
        ),
        (
            "clusters/prod/flux-system/gotk-sync.yaml",
            git("https://github.com/acme/fleet"),
        ),
        ("clusters/prod/artifacts.yaml", generator.to_string()),
        ("clusters/prod/web.yaml", consumer.to_string()),
        (
            "deploy/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: shop\n"
                .to_string(),
        ),
    ]);
    assert!(
        statuses(&r).contains(&"web flux-kustomize - rendered - 1".to_string()),
        "{:?}",
        statuses(&r)
    );
}

#[test]
fn fragments_are_not_apps_and_undeployed_failures_are_info() {
    let r = run("testdata/apps/fragments");
    assert_eq!(
        statuses(&r),
        [
            "shop argocd - not-rendered render-failed 0",
            ".archive/old-shop none - not-rendered render-failed 0",
            "loop/a none - not-rendered render-failed 0",
            "clusters/prod none - rendered - 1",
        ]
    );
    let with_severity: Vec<String> = r
        .findings
        .iter()
        .map(|f| {
            let lc = r.map.line_col(f.primary.span);
            format!(
                "{} {} {}:{}",
                f.rule,
                f.severity.as_str(),
                r.map.path(f.primary.span.file),
                lc.line
            )
        })
        .collect();
    assert_eq!(
        with_severity,
        [
            "render-failed info .archive/old-shop/kustomization.yaml:4",
            "render-failed error components/tls/kustomization.yaml:4",
            "render-failed info loop/b/kustomization.yaml:4",
        ],
        "the component breaks the app that uses it, once; the archive and the cycle no app reaches are info"
    );
    // A cycle through the directory itself is built and reported too.
    let r = lint_tree(&[
        ("a/kustomization.yaml", "resources: [., cm.yaml]\n"),
        (
            "a/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        ),
    ]);
    assert_eq!(findings(&r), ["render-failed a/kustomization.yaml:1 a"]);
}

#[test]
fn clusters_generator_expands_over_cluster_secrets() {
    let r = run("testdata/apps/appset-clusters");
    assert_eq!(
        statuses(&r),
        [
            "metrics-prod-eu argocd - rendered - 1",
            "logging-clusters-generator argocd - partial offline-unrenderable-input 1",
            "argocd none - rendered - 4",
        ]
    );
    let dest = r
        .model
        .argo_apps()
        .find(|(a, _)| a.name == "metrics-prod-eu")
        .and_then(|(_, argo)| {
            argo.decl
                .root
                .get_path(&["spec", "destination", "server"])
                .and_then(|n| n.scalar_text())
        });
    assert_eq!(dest.as_deref(), Some("https://prod-eu.k8s.acme.io"));
    assert_eq!(
        findings(&r),
        ["offline-unrenderable-input argocd/addons.yaml:33 logging-clusters-generator"]
    );
    let line = gitops_lint::gitops::listing::coverage_line(&r.model);
    assert_eq!(
        line,
        "coverage: 3 apps, 2 rendered, 1 partly rendered (1 offline-unrenderable-input), 0 not rendered\njudged with Argo CD 3.5.1 (the latest release; --argo-version or profile.argo-version to set)"
    );
}

/// Retired Flux apps kept in a folder the repository's GitRepository leaves out of its
/// artifact (`spec.ignore`), or that only a directory nothing deploys holds, break no
/// deployment: their render failures are info. The same Kustomization in the source is an
/// error.
#[test]
fn flux_apps_outside_the_source_artifact_are_not_deployed() {
    let git = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  url: https://git.example.com/platform/fleet.git\n  ref:\n    branch: main\n  ignore: |\n    /*\n    !/clusters\n    !/apps\n";
    let ks = flux_kustomization;
    let r = lint_tree(&[
        (
            ".gitops-lint.yaml",
            "repo-urls:\n  - https://git.example.com/platform/fleet.git\n".to_string(),
        ),
        ("clusters/main/flux-system/gotk-sync.yaml", git.to_string()),
        ("clusters/main/apps.yaml", ks("apps", "./apps")),
        (
            "apps/kustomization.yaml",
            "resources:\n  - web.yaml\n".to_string(),
        ),
        ("apps/web.yaml", ks("web", "./apps/web-gone")),
        (".archive/wiki/ks.yaml", ks("wiki", "./apps/wiki")),
    ]);
    let severity_of = |file: &str| severities(&r, "render-failed", file);
    assert_eq!(
        severity_of(".archive/wiki/ks.yaml"),
        vec!["info"],
        "{:#?}",
        findings(&r)
    );
    assert_eq!(
        severity_of("apps/web.yaml"),
        vec!["error"],
        "{:#?}",
        findings(&r)
    );
}

/// A repository bootstrapped from a kustomize directory (`clusters/main/kustomization.yaml`
/// lists the GitRepository and the root Kustomization, as `flux bootstrap` lays it out): the
/// directory is no GitOps app, but the GitRepository ships it, so what it holds is deployed.
/// Its apps' render failures stay errors and an unfetched chart a warning; the same objects in
/// the archive the GitRepository leaves out are info.
#[test]
fn a_bootstrap_directory_the_source_ships_deploys_what_it_holds() {
    let git = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  url: https://git.example.com/platform/fleet.git\n  ref:\n    branch: main\n  ignore: |\n    /.archive\n";
    let ks = flux_kustomization;
    let hr = |name: &str| {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 1h\n  chart:\n    spec:\n      chart: podinfo\n      version: 6.7.1\n      sourceRef:\n        kind: HelmRepository\n        name: podinfo\n        namespace: flux-system\n"
        )
    };
    let r = lint_tree(&[
        (
            ".gitops-lint.yaml",
            "repo-urls:\n  - https://git.example.com/platform/fleet.git\n".to_string(),
        ),
        (
            "clusters/main/kustomization.yaml",
            "resources:\n  - gotk-sync.yaml\n  - apps.yaml\n".to_string(),
        ),
        ("clusters/main/gotk-sync.yaml", git.to_string()),
        ("clusters/main/apps.yaml", ks("apps", "./apps")),
        (
            "apps/kustomization.yaml",
            "resources:\n  - web.yaml\n  - podinfo.yaml\n".to_string(),
        ),
        ("apps/web.yaml", ks("web", "./apps/web-gone")),
        ("apps/podinfo.yaml", hr("podinfo")),
        (
            ".archive/wiki/kustomization.yaml",
            "resources:\n  - ks.yaml\n  - hr.yaml\n".to_string(),
        ),
        (".archive/wiki/ks.yaml", ks("wiki", "./apps/wiki-gone")),
        (".archive/wiki/hr.yaml", hr("wiki")),
    ]);
    let severity_of = |rule: &str, file: &str| severities(&r, rule, file);
    let all = findings(&r);
    assert_eq!(
        severity_of("render-failed", "apps/web.yaml"),
        vec!["error"],
        "{all:#?}"
    );
    assert_eq!(
        severity_of("offline-unrenderable-input", "apps/podinfo.yaml"),
        vec!["warning"],
        "{all:#?}"
    );
    assert_eq!(
        severity_of("render-failed", ".archive/wiki/ks.yaml"),
        vec!["info"],
        "{all:#?}"
    );
    // The archived HelmRelease needs the same chart: one finding for the chart, on the use
    // that is deployed, naming both apps (the archived use is a related location).
    assert_eq!(
        severity_of("offline-unrenderable-input", ".archive/wiki/hr.yaml"),
        Vec::<&str>::new(),
        "{all:#?}"
    );
    assert!(
        all.iter().any(|f| f.contains("apps/podinfo.yaml")),
        "{all:#?}"
    );
}

/// A Flux Kustomization `name` building `path` from the flux-system GitRepository.
fn flux_kustomization(name: &str, path: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: {path}\n  prune: true\n"
    )
}

/// The severities of `rule`'s findings whose primary label is in `file`.
fn severities<'a>(r: &'a gitops_lint::lint::LintResult, rule: &str, file: &str) -> Vec<&'a str> {
    r.findings
        .iter()
        .filter(|f| f.rule == rule && r.map.path(f.primary.span.file) == file)
        .map(|f| f.severity.as_str())
        .collect()
}

/// `rule file:line cluster` of the findings at warning or above.
fn located_with_cluster(r: &gitops_lint::lint::LintResult) -> Vec<String> {
    let mut out: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.severity >= gitops_lint::report::Severity::Warning)
        .map(|f| {
            let lc = r.map.line_col(f.primary.span);
            format!(
                "{} {} {}:{} {}",
                f.rule,
                f.severity.as_str(),
                r.map.path(f.primary.span.file),
                lc.line,
                f.cluster.as_deref().unwrap_or("-")
            )
        })
        .collect();
    out.sort();
    out
}

/// `name kind cluster` of every app.
fn app_clusters(r: &gitops_lint::lint::LintResult) -> Vec<String> {
    r.model
        .apps
        .iter()
        .map(|a| format!("{} {} {}", a.name, a.kind.as_str(), a.cluster.name()))
        .collect()
}

#[test]
fn flux_apps_of_two_bootstrapped_clusters_are_two_apps_each() {
    let r = run("testdata/apps/flux-clusters");
    let apps = app_clusters(&r);
    for cluster in ["clusters/staging", "clusters/production"] {
        for app in [
            "apps flux-kustomization",
            "infra flux-kustomization",
            "podinfo flux-helmrelease",
        ] {
            let want = format!("{app} {cluster}");
            assert!(apps.contains(&want), "{want} missing from {apps:#?}");
        }
    }
    // Each cluster's HelmRelease renders with that cluster's values.
    let replicas: Vec<String> = r
        .model
        .apps
        .iter()
        .filter(|a| a.name == "podinfo")
        .flat_map(|a| r.model.objects_of(a))
        .filter_map(|o| o.object.root.get_path(&["spec", "replicas"])?.scalar_text())
        .collect();
    assert_eq!(replicas.len(), 2, "{replicas:?}");
    assert!(replicas.contains(&"1".to_string()) && replicas.contains(&"3".to_string()));
    // The ClusterIssuer both clusters get is not shared; the dashboard production deploys
    // twice is, for certain; the one-off Pod under tools/ that nothing deploys is info only.
    assert_eq!(
        located_with_cluster(&r),
        vec!["shared-resource error infra/dashboards/ups.yaml:4 clusters/production"]
    );
    let tools: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.rule == "server-assigned-field-declared")
        .collect();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].severity, gitops_lint::report::Severity::Info);
    assert!(
        tools[0]
            .message
            .contains("nothing in this repository deploys it")
    );
    let coverage = gitops_lint::gitops::listing::coverage_line(&r.model);
    assert!(
        coverage.contains("2 clusters: clusters/production"),
        "{coverage}"
    );
}

#[test]
fn kubeconfig_kustomizations_deploy_to_their_spokes() {
    let r = run("testdata/apps/flux-hub-spokes");
    assert_eq!(
        app_clusters(&r),
        vec![
            "flux-system flux-kustomization hub",
            "tenants flux-kustomization kubeconfig:production/cluster-kubeconfig",
            "tenants flux-kustomization kubeconfig:staging/cluster-kubeconfig",
        ]
    );
    // The same Namespace and ClusterRoleBinding in two spokes are two objects.
    assert_eq!(located_with_cluster(&r), Vec::<String>::new());
}

#[test]
fn argo_destinations_by_name_resolve_through_cluster_secrets() {
    let r = run("testdata/apps/argo-clusters");
    let apps = app_clusters(&r);
    assert!(
        apps.contains(&"platform-prod argo https://prod.k8s.acme.internal".to_string()),
        "{apps:#?}"
    );
    assert!(apps.contains(&"platform-staging argo https://staging.k8s.acme.internal".to_string()));
    // `name: prod` and the prod server are one cluster: the role is deployed twice there,
    // once in staging (not shared). Each prod copy is reported, naming the cluster.
    assert_eq!(
        located_with_cluster(&r),
        vec!["shared-resource error platform/rbac/reader.yaml:4 https://prod.k8s.acme.internal"]
    );
}

/// Secrets the repository makes but does not write (a SOPS-encrypted Secret, an
/// ExternalSecret's target) have known keys and unknown values: a variable that is not one
/// of a SOPS Secret's keys is undefined (SOPS leaves keys readable), a whole values document
/// only the cluster knows is left out with a note, and a key of a Secret made from keys the
/// repository does not list (`dataFrom`) is not reported missing.
#[test]
fn made_and_encrypted_secrets_have_known_keys_and_unknown_values() {
    let git = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: fleet, namespace: flux-system}\nspec:\n  interval: 1m\n  url: https://git.example.com/fleet.git\n  ref: {branch: main}\n";
    let web = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: web, namespace: flux-system}\nspec:\n  interval: 10m\n  path: ./apps/web\n  prune: true\n  sourceRef: {kind: GitRepository, name: fleet}\n  postBuild:\n    substituteFrom:\n      - kind: Secret\n        name: cluster-secrets\n";
    let sops = "apiVersion: v1\nkind: Secret\nmetadata: {name: cluster-secrets, namespace: flux-system}\nstringData:\n  SECRET_DOMAIN: ENC[AES256_GCM,data:abc=,iv:x,tag:y,type:str]\nsops:\n  mac: ENC[AES256_GCM,data:m,iv:x,tag:y,type:str]\n  lastmodified: '2024-01-01T00:00:00Z'\n";
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata:\n  host: web.${SECRET_DOMAIN}\n  mail: ${SECRET_SMTP_HOST}\n";
    let release = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: api, namespace: flux-system}\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: ./charts/api\n      sourceRef: {kind: GitRepository, name: fleet}\n  valuesFrom:\n    - kind: Secret\n      name: api-values\n    - kind: Secret\n      name: api-env\n      valuesKey: replicas\n      targetPath: replicaCount\n";
    let external = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: api-values, namespace: flux-system}\nspec:\n  secretStoreRef: {kind: ClusterSecretStore, name: vault}\n  target:\n    template:\n      data:\n        values.yaml: |\n          password: \"{{ .password }}\"\n  data:\n    - secretKey: password\n      remoteRef: {key: api/password}\n---\napiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: api-env, namespace: flux-system}\nspec:\n  secretStoreRef: {kind: ClusterSecretStore, name: vault}\n  dataFrom:\n    - extract: {key: api/env}\n";
    let r = lint_tree(&[
        ("clusters/prod/sources.yaml", git),
        ("clusters/prod/web.yaml", web),
        ("clusters/prod/api.yaml", release),
        ("clusters/prod/cluster-secrets.sops.yaml", sops),
        ("clusters/prod/api-secrets.yaml", external),
        ("apps/web/configmap.yaml", configmap),
        (
            "charts/api/Chart.yaml",
            "apiVersion: v2\nname: api\nversion: 1.0.0\n",
        ),
        ("charts/api/values.yaml", "replicaCount: 1\n"),
        (
            "charts/api/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\ndata:\n  replicas: {{ .Values.replicaCount | quote }}\n",
        ),
    ]);
    let mut got: Vec<String> = r
        .findings
        .iter()
        .map(|f| {
            format!(
                "{:?} {} {}:{}",
                f.severity,
                f.rule,
                r.map.path(f.primary.span.file),
                r.map.line_col(f.primary.span).line
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "Error flux-substitution-undefined apps/web/configmap.yaml:6",
            "Info offline-unrenderable-input clusters/prod/api-secrets.yaml:9",
            "Info offline-unrenderable-input clusters/prod/api.yaml:15",
        ]
    );
    let messages: Vec<&str> = r.findings.iter().map(|f| f.message.as_str()).collect();
    for part in [
        "Secret/cluster-secrets is SOPS-encrypted and holds only SECRET_DOMAIN",
        "key 'values.yaml' are known only in the cluster (made by ExternalSecret api-values)",
        "is made by ExternalSecret api-env from keys this repository does not list",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(part)),
            "{part} not in {messages:#?}"
        );
    }
}

/// kustomize-controller's generated kustomization for a path without one lists the nearest
/// directories below that have their own: a Flux overlay (here `patches:`) over such a path
/// builds them, so they are not built again as standalone kustomizations (where a build
/// without Flux's semantics fails or is reported twice).
#[test]
fn directories_a_flux_generated_kustomization_builds_are_not_standalone() {
    let ks = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 1h\n  path: ./apps\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n  patches:\n    - patch: |\n        - op: add\n          path: /metadata/labels/team\n          value: web\n      target: {kind: Deployment}\n";
    let kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml]\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx:1.27}]}\n";
    let r = lint_tree(&[
        ("clusters/prod/apps.yaml", ks),
        ("apps/web/kustomization.yaml", kustomization),
        ("apps/web/deployment.yaml", deployment),
    ]);
    let listed: Vec<String> = r
        .model
        .apps
        .iter()
        .map(|a| format!("{} {}", a.name, a.kind.as_str()))
        .collect();
    assert!(
        listed.contains(&"apps flux-kustomization".to_string()),
        "{listed:?}"
    );
    assert!(
        !listed.contains(&"apps/web standalone".to_string()),
        "built by the Flux Kustomization, not standalone: {listed:?}"
    );
}

/// The coverage line counts kustomization directories by the best app that built them: a
/// base under a rendered overlay is linted; one only under a partly rendered app (a remote
/// base not fetched) is partly; one only under a failed build is not linted, and so is a
/// component no build uses.
#[test]
fn the_coverage_line_counts_kustomization_directories_by_the_apps_that_built_them() {
    let kustomization = |body: &str| {
        format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n{body}")
    };
    let cm = |name: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata: {{a: b}}\n")
    };
    let app = |name: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform.git\n    targetRevision: main\n    path: {path}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {name}\n"
        )
    };
    let r = lint_tree(&[
        ("argocd/web.yaml", app("web", "apps/web/overlays/prod")),
        ("argocd/edge.yaml", app("edge", "apps/edge")),
        ("argocd/broken.yaml", app("broken", "apps/broken")),
        ("apps/web/base/kustomization.yaml", kustomization("resources: [cm.yaml]\n")),
        ("apps/web/base/cm.yaml", cm("web")),
        ("apps/web/overlays/prod/kustomization.yaml", kustomization("resources: [../../base]\n")),
        (
            "apps/edge/kustomization.yaml",
            kustomization("resources:\n  - https://github.com/example/edge//deploy?ref=v1.2.0\n  - ../shared\n"),
        ),
        ("apps/shared/kustomization.yaml", kustomization("resources: [cm.yaml]\n")),
        ("apps/shared/cm.yaml", cm("shared")),
        ("apps/broken/kustomization.yaml", kustomization("resources: [missing.yaml]\n")),
        (
            "components/unused/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels: {team: web}\n".to_string(),
        ),
    ]);
    let line = gitops_lint::gitops::listing::coverage_line(&r.model);
    let dirs = line
        .lines()
        .find(|l| l.starts_with("kustomization directories"))
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(
        dirs,
        "kustomization directories: 6, 2 linted, 2 only in partly rendered apps, 2 not linted (1 only in apps that did not render, 1 built by no app)"
    );
}

/// A Flux Kustomization over a directory without a kustomization file: kustomize-controller
/// generates one that takes each sub-directory's kustomization as a resource. Those
/// sub-directories are deployed by it, not standalone apps that "nothing deploys" (their
/// findings were reported twice, once as info).
#[test]
fn directories_a_flux_generated_kustomization_builds_are_not_standalone_apps() {
    let ks = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 30m\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: ./apps\n  prune: true\n";
    let cm = |name: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: prod\ndata: {{a: b}}\n"
        )
    };
    let r = lint_tree(&[
        ("clusters/prod/apps.yaml", ks.to_string()),
        (
            "apps/namespace.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n".to_string(),
        ),
        (
            "apps/backend/kustomization.yaml",
            "resources: [cm.yaml]\n".to_string(),
        ),
        ("apps/backend/cm.yaml", cm("backend")),
        (
            "apps/frontend/kustomization.yaml",
            "resources: [cm.yaml]\n".to_string(),
        ),
        ("apps/frontend/cm.yaml", cm("frontend")),
    ]);
    let listed = apps(&r);
    assert!(
        listed
            .iter()
            .any(|a| a.starts_with("apps flux-kustomization 3 ")),
        "{listed:#?}"
    );
    assert!(
        !listed
            .iter()
            .any(|a| a.starts_with("apps/backend") || a.starts_with("apps/frontend")),
        "{listed:#?}"
    );
}

/// Two clusters bootstrapped by Flux at different releases: each Kustomization is judged
/// with the release of its own cluster (`spec.ignore` is read from 2.9 only), the coverage
/// line names both, `apps --format json` carries each app's; a flag overrides them all and a
/// `profile.clusters` entry sets one cluster's.
#[test]
fn each_cluster_is_judged_with_the_flux_release_it_runs() {
    let gotk = |v: &str| {
        format!(
            "---\n# This manifest was generated by flux. DO NOT EDIT.\n# Flux Version: {v}\n# Components: source-controller,kustomize-controller\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n"
        )
    };
    let sync = |cluster: &str| {
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  ref: {{branch: main}}\n  url: https://github.com/example/fleet\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./clusters/{cluster}\n  prune: true\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
        )
    };
    let web = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: web\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps/web\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n  ignore:\n    - paths: [/spec/replicas]\n      target: {kind: Deployment, name: web}\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: web\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: ghcr.io/example/web:1.0.0}]\n";
    let hpa = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  namespace: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 6\n";
    let files = |config: Option<&str>| {
        let mut files: Vec<(String, String)> = vec![
            ("apps/web/deployment.yaml".into(), deployment.into()),
            ("apps/web/hpa.yaml".into(), hpa.into()),
        ];
        for (cluster, version) in [("staging", "v2.8.3"), ("production", "v2.9.4")] {
            let dir = format!("clusters/{cluster}");
            files.push((
                format!("{dir}/flux-system/gotk-components.yaml"),
                gotk(version),
            ));
            files.push((format!("{dir}/flux-system/gotk-sync.yaml"), sync(cluster)));
            files.push((format!("{dir}/web.yaml"), web.into()));
        }
        if let Some(c) = config {
            files.push((".gitops-lint.yaml".into(), c.into()));
        }
        files
    };
    let unread = |r: &gitops_lint::lint::LintResult| {
        let mut got: Vec<String> = findings(r)
            .into_iter()
            .filter(|f| f.starts_with("ignore-differences-invalid"))
            .collect();
        got.sort();
        got
    };

    let written = |files: &[(String, String)]| {
        let pairs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        lint_tree(&pairs)
    };
    let r = written(&files(None));
    assert_eq!(
        unread(&r),
        ["ignore-differences-invalid clusters/staging/web.yaml:11 web"]
    );
    let coverage = gitops_lint::gitops::listing::coverage_line(&r.model);
    assert!(
        coverage.contains("judged with clusters/production: Flux v2.9.4 (the gotk-components.yaml header, clusters/production/flux-system/gotk-components.yaml:3); clusters/staging: Flux v2.8.3 (the gotk-components.yaml header, clusters/staging/flux-system/gotk-components.yaml:3)"),
        "{coverage}"
    );
    let json = gitops_lint::gitops::listing::apps_json(&r.model);
    let mut judged: Vec<String> = json["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["name"] == "web")
        .map(|a| {
            format!(
                "{} {} {}:{}",
                a["judged-with"]["flux"]["version"],
                a["judged-with"]["flux"]["from"],
                a["judged-with"]["flux"]["file"],
                a["judged-with"]["flux"]["line"]
            )
        })
        .collect();
    judged.sort();
    assert_eq!(
        judged,
        [
            "\"v2.8.3\" \"repository\" \"clusters/staging/flux-system/gotk-components.yaml\":3",
            "\"v2.9.4\" \"repository\" \"clusters/production/flux-system/gotk-components.yaml\":3"
        ]
    );

    // `profile.clusters` sets one cluster's release over what the repo installs there.
    let r = written(&files(Some(
        "profile:\n  clusters:\n    clusters/staging: {flux-version: \"2.9\"}\n    clusters/production: {flux-version: \"2.8\"}\n",
    )));
    assert_eq!(
        unread(&r),
        ["ignore-differences-invalid clusters/production/web.yaml:11 web"]
    );

    // A flag is the user's word for every cluster, over the profile and the repo.
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (rel, text) in files(None) {
        let p = tmp.path().join(&rel);
        std::fs::create_dir_all(p.parent().unwrap_or(tmp.path())).ok();
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
    let r = lint(&LintOptions {
        root: tmp.path().to_path_buf(),
        flux_version: gitops_lint::config::Release::from_flag("2.7"),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        unread(&r),
        [
            "ignore-differences-invalid clusters/production/web.yaml:11 web",
            "ignore-differences-invalid clusters/staging/web.yaml:11 web"
        ]
    );
    assert!(
        gitops_lint::gitops::listing::coverage_line(&r.model)
            .contains("judged with Flux 2.7 (--flux-version)")
    );
}

/// An Application that installs the argo-cd chart at an exact version on the cluster it runs
/// in names the Argo CD release (2.14: label tracking by default); the same chart installed
/// by an ApplicationSet over cluster Secrets lands on clusters the repo does not name, so it
/// says nothing about the Argo CD that runs the apps.
#[test]
fn the_argo_cd_chart_version_names_the_release_only_where_it_lands() {
    let install = |destination: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: argo-cd\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://argoproj.github.io/argo-helm\n    chart: argo-cd\n    targetRevision: 7.8.2\n  destination:\n{destination}\n"
        )
    };
    let in_cluster = install("    server: https://kubernetes.default.svc\n    namespace: argocd");
    let r = lint_tree(&[("argocd/argo-cd.yaml", in_cluster.as_str())]);
    let argo = r.model.apps.iter().find(|a| a.name == "argo-cd");
    let judged = argo.map(|a| r.model.argo_version(a).clone());
    assert_eq!(
        judged.as_ref().map(|j| (j.major, j.minor, j.text.as_str())),
        Some((2, 14, "2.14"))
    );
    assert!(
        gitops_lint::gitops::listing::coverage_line(&r.model).contains(
            "judged with Argo CD 2.14 (the argo-cd chart 7.8.2 it installs, argocd/argo-cd.yaml:10)"
        ),
        "{}",
        gitops_lint::gitops::listing::coverage_line(&r.model)
    );

    let appset = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: spoke-argo-cd\n  namespace: argocd\nspec:\n  goTemplate: true\n  generators:\n    - clusters:\n        selector:\n          matchLabels: {enable_argocd: \"true\"}\n  template:\n    metadata:\n      name: 'argo-cd-{{.name}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://argoproj.github.io/argo-helm\n        chart: argo-cd\n        targetRevision: 7.8.2\n      destination:\n        server: '{{.server}}'\n        namespace: argocd\n";
    let r = lint_tree(&[("argocd/spokes.yaml", appset)]);
    let line = gitops_lint::gitops::listing::coverage_line(&r.model);
    assert!(
        line.contains("judged with Argo CD 3.5.1 (the latest release"),
        "{line}"
    );
}

/// A source an ApplicationSet fills from a cluster Secret's annotation, with no Secret in
/// the repository: the app is not rendered, for `templated-source`, and nothing asks for a
/// fetch of a URL that still reads `{{…}}`.
#[test]
fn a_source_the_cluster_fills_is_templated_not_fetchable() {
    let appset = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: addons-external-secrets\n  namespace: argocd\nspec:\n  goTemplate: true\n  generators:\n    - clusters:\n        selector:\n          matchLabels: {enable_external_secrets: \"true\"}\n  template:\n    metadata:\n      name: 'external-secrets-{{.name}}'\n    spec:\n      project: default\n      source:\n        repoURL: '{{.metadata.annotations.addons_chart_repository}}'\n        chart: external-secrets\n        targetRevision: 0.9.19\n      destination:\n        server: '{{.server}}'\n        namespace: external-secrets\n";
    let r = lint_tree(&[("bootstrap/addons.yaml", appset)]);
    let app = r
        .model
        .apps
        .iter()
        .find(|a| a.kind.as_str() == "argo-appset");
    let status = app.map(|a| {
        let (status, reason) = a.status();
        (
            status.as_str(),
            reason.map(|(code, _)| code),
            a.remotes.len(),
        )
    });
    assert_eq!(status, Some(("not-rendered", Some("templated-source"), 0)));
    assert!(
        !r.findings
            .iter()
            .any(|f| f.message.contains("gitops-lint fetch")),
        "{:?}",
        findings(&r)
    );
}

/// A chart that asks the cluster whether it serves `apiregistration.k8s.io/v1` gets the
/// answer a real cluster gives (Helm's offline list lacks the aggregation API): the APIService
/// renders as v1, and `api-removed` has nothing to say.
#[test]
fn lint_renders_see_the_aggregation_api_every_cluster_serves() {
    let template = "{{- if .Capabilities.APIVersions.Has \"apiregistration.k8s.io/v1\" }}\napiVersion: apiregistration.k8s.io/v1\n{{- else }}\napiVersion: apiregistration.k8s.io/v1beta1\n{{- end }}\nkind: APIService\nmetadata:\n  name: v1beta1.custom.metrics.k8s.io\nspec:\n  service: {name: adapter, namespace: monitoring}\n  group: custom.metrics.k8s.io\n  version: v1beta1\n  groupPriorityMinimum: 100\n  versionPriority: 100\n";
    let r = lint_tree(&[
        (
            "charts/adapter/Chart.yaml",
            "apiVersion: v2\nname: adapter\nversion: 1.0.0\n",
        ),
        ("charts/adapter/values.yaml", "{}\n"),
        ("charts/adapter/templates/apiservice.yaml", template),
    ]);
    let api = r
        .model
        .objects
        .iter()
        .find(|mo| mo.object.kind == "APIService")
        .map(|mo| mo.object.api_version.clone());
    assert_eq!(api.as_deref(), Some("apiregistration.k8s.io/v1"));
    assert!(
        !r.findings.iter().any(|f| f.rule == "api-removed"),
        "{:?}",
        findings(&r)
    );
}
