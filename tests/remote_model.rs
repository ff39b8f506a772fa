//! Every remote input an app names is in `App.remotes`, in the normal form `fetch` resolves,
//! on the line a person edits to pick another chart, version or base: one test per form
//! (Argo CD chart sources, Flux chart sources, kustomize `helmCharts`, Chart.yaml
//! dependencies, kustomize remote bases).

use gitops_lint::lint::{LintOptions, LintResult, lint};

fn lint_tree(files: &[(&str, &str)]) -> LintResult {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (rel, text) in files {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(tmp.path())).ok();
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{rel}: {e}"));
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

/// `app: kind source [chart] requested @ file:line: text of that line`.
fn remotes(r: &LintResult) -> Vec<String> {
    let mut out = Vec::new();
    for app in &r.model.apps {
        for u in &app.remotes {
            let file = r.map.get(u.span.file);
            let line = file.line_col(u.span.start as usize).line;
            let chart = if u.reference.chart.is_empty() {
                String::new()
            } else {
                format!(" {}", u.reference.chart)
            };
            out.push(format!(
                "{}: {} {}{chart} `{}` @ {}:{line}: {}",
                app.name,
                u.reference.kind.as_str(),
                u.reference.source,
                u.reference.requested,
                file.path,
                file.line_text(line).trim()
            ));
        }
    }
    out.sort();
    out
}

fn app(name: &str, source: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n{source}  destination:\n    server: https://kubernetes.default.svc\n    namespace: {name}\n"
    )
}

#[test]
fn argo_chart_sources_single_and_multi_helm_repository_and_oci() {
    let single = app(
        "web",
        "  source:\n    repoURL: https://charts.example.com/stable/\n    chart: web\n    targetRevision: 1.2.3\n",
    );
    let multi = app(
        "api",
        "  sources:\n    - repoURL: registry-1.docker.io/bitnamicharts\n      chart: nginx\n      targetRevision: 15.9.0\n      helm:\n        valueFiles: [$values/api/values.yaml]\n    - repoURL: https://github.com/example/gitops.git\n      targetRevision: main\n      ref: values\n",
    );
    let native_oci = app(
        "oci-native",
        "  source:\n    repoURL: oci://ghcr.io/example/charts/podinfo\n    targetRevision: 6.5.4\n    path: .\n",
    );
    let r = lint_tree(&[
        ("argocd/web.yaml", &single),
        ("argocd/api.yaml", &multi),
        ("argocd/oci-native.yaml", &native_oci),
        ("api/values.yaml", "replicaCount: 2\n"),
    ]);
    assert_eq!(
        remotes(&r),
        [
            "api: oci oci://registry-1.docker.io/bitnamicharts/nginx `15.9.0` @ argocd/api.yaml:10: chart: nginx",
            "oci-native: oci oci://ghcr.io/example/charts/podinfo `6.5.4` @ argocd/oci-native.yaml:9: repoURL: oci://ghcr.io/example/charts/podinfo",
            "web: helm https://charts.example.com/stable web `1.2.3` @ argocd/web.yaml:10: chart: web",
        ]
    );
    // Not fetched: the app says so, and what to run.
    let web = r.model.apps.iter().find(|a| a.name == "web").unwrap();
    let (status, reason) = web.status();
    assert_eq!(status.as_str(), "not-rendered");
    let (code, message) = reason.unwrap();
    assert_eq!(code, "remote-chart");
    assert!(message.contains("gitops-lint fetch"), "{message}");
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "offline-unrenderable-input" && f.app.as_deref() == Some("web"))
        .expect("offline finding for web");
    assert!(
        f.message.contains("run `gitops-lint fetch`"),
        "{}",
        f.message
    );
}

#[test]
fn argo_https_repo_url_is_oci_when_its_repository_secret_enables_oci() {
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ghcr\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: repository\nstringData:\n  type: helm\n  url: https://ghcr.io/example/charts\n  enableOCI: \"true\"\n";
    let a = app(
        "podinfo",
        "  source:\n    repoURL: https://ghcr.io/example/charts\n    chart: podinfo\n    targetRevision: '>=6.0.0'\n",
    );
    let r = lint_tree(&[("argocd/repo.yaml", secret), ("argocd/podinfo.yaml", &a)]);
    assert_eq!(
        remotes(&r),
        [
            "podinfo: oci oci://ghcr.io/example/charts/podinfo `>=6.0.0` @ argocd/podinfo.yaml:10: chart: podinfo"
        ]
    );
}

#[test]
fn applicationset_template_chart_sources_name_one_remote_per_generated_app() {
    let set = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: ingress\n  namespace: argocd\nspec:\n  generators:\n    - list:\n        elements:\n          - env: dev\n            version: 4.10.0\n          - env: prod\n            version: 4.9.1\n  template:\n    metadata:\n      name: 'ingress-{{env}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://kubernetes.github.io/ingress-nginx\n        chart: ingress-nginx\n        targetRevision: '{{version}}'\n      destination:\n        server: https://kubernetes.default.svc\n        namespace: ingress\n";
    let r = lint_tree(&[("argocd/ingress.yaml", set)]);
    assert_eq!(
        remotes(&r),
        [
            "ingress-dev: helm https://kubernetes.github.io/ingress-nginx ingress-nginx `4.10.0` @ argocd/ingress.yaml:21: chart: ingress-nginx",
            "ingress-prod: helm https://kubernetes.github.io/ingress-nginx ingress-nginx `4.9.1` @ argocd/ingress.yaml:21: chart: ingress-nginx",
        ]
    );
}

const FLUX_SOURCES: &str = "apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: bitnami
  namespace: flux-system
spec:
  url: https://charts.bitnami.com/bitnami
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: stefanprodan
  namespace: flux-system
spec:
  type: oci
  url: oci://ghcr.io/stefanprodan/charts
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: podinfo-tag
  namespace: flux-system
spec:
  url: oci://ghcr.io/stefanprodan/charts/podinfo
  ref:
    tag: 6.5.4
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: podinfo-latest
  namespace: flux-system
spec:
  url: oci://ghcr.io/stefanprodan/charts/podinfo
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata:
  name: redis-chart
  namespace: flux-system
spec:
  chart: redis
  version: 17.x
  sourceRef:
    kind: HelmRepository
    name: bitnami
";

fn release(name: &str, chart: &str) -> String {
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n{chart}"
    )
}

#[test]
fn flux_helm_releases_name_helm_repository_oci_repository_and_helm_chart_sources() {
    let files = [
        ("clusters/prod/sources.yaml", FLUX_SOURCES.to_string()),
        (
            "clusters/prod/redis.yaml",
            release(
                "redis",
                "  chart:\n    spec:\n      chart: redis\n      sourceRef:\n        kind: HelmRepository\n        name: bitnami\n",
            ),
        ),
        (
            "clusters/prod/podinfo.yaml",
            release(
                "podinfo",
                "  chart:\n    spec:\n      chart: podinfo\n      version: '>=6.0.0'\n      sourceRef:\n        kind: HelmRepository\n        name: stefanprodan\n",
            ),
        ),
        (
            "clusters/prod/podinfo-tag.yaml",
            release(
                "podinfo-tag",
                "  chartRef:\n    kind: OCIRepository\n    name: podinfo-tag\n",
            ),
        ),
        (
            "clusters/prod/podinfo-latest.yaml",
            release(
                "podinfo-latest",
                "  chartRef:\n    kind: OCIRepository\n    name: podinfo-latest\n",
            ),
        ),
        (
            "clusters/prod/cache.yaml",
            release(
                "cache",
                "  chartRef:\n    kind: HelmChart\n    name: redis-chart\n",
            ),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let r = lint_tree(&files);
    assert_eq!(
        remotes(&r),
        [
            "cache: helm https://charts.bitnami.com/bitnami redis `17.x` @ clusters/prod/sources.yaml:42: chart: redis",
            "podinfo-latest: oci oci://ghcr.io/stefanprodan/charts/podinfo `latest` @ clusters/prod/podinfo-latest.yaml:9: kind: OCIRepository",
            "podinfo-tag: oci oci://ghcr.io/stefanprodan/charts/podinfo `6.5.4` @ clusters/prod/podinfo-tag.yaml:9: kind: OCIRepository",
            "podinfo: oci oci://ghcr.io/stefanprodan/charts/podinfo `>=6.0.0` @ clusters/prod/podinfo.yaml:10: chart: podinfo",
            "redis: helm https://charts.bitnami.com/bitnami redis `*` @ clusters/prod/redis.yaml:10: chart: redis",
        ]
    );
}

#[test]
fn flux_source_ref_namespace_names_the_helm_repository_of_another_namespace() {
    let r = lint_tree(&[
        ("clusters/prod/sources.yaml", FLUX_SOURCES),
        (
            "apps/redis.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: redis\n  namespace: cache\nspec:\n  chart:\n    spec:\n      chart: redis\n      version: 18.0.0\n      sourceRef:\n        kind: HelmRepository\n        name: bitnami\n        namespace: flux-system\n",
        ),
    ]);
    assert_eq!(
        remotes(&r),
        [
            "redis: helm https://charts.bitnami.com/bitnami redis `18.0.0` @ apps/redis.yaml:9: chart: redis"
        ]
    );
}

#[test]
fn flux_chart_from_a_helm_repository_not_in_the_repo_names_nothing() {
    let r = lint_tree(&[(
        "clusters/prod/redis.yaml",
        &release(
            "redis",
            "  chart:\n    spec:\n      chart: redis\n      sourceRef:\n        kind: HelmRepository\n        name: elsewhere\n",
        ),
    )]);
    assert!(remotes(&r).is_empty(), "{:?}", remotes(&r));
}

#[test]
fn kustomize_helm_charts_with_a_repo_https_and_oci() {
    let k = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n  - name: cert-manager\n    repo: https://charts.jetstack.io\n    version: v1.14.4\n    releaseName: cert-manager\n  - name: podinfo\n    repo: oci://ghcr.io/stefanprodan/charts\n    version: 6.5.4\nresources:\n  - namespace.yaml\n";
    let a = app(
        "infra",
        "  source:\n    repoURL: https://github.com/example/gitops.git\n    targetRevision: main\n    path: infra\n",
    );
    let r = lint_tree(&[
        ("argocd/infra.yaml", &a),
        ("infra/kustomization.yaml", k),
        (
            "infra/namespace.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra\n",
        ),
    ]);
    assert_eq!(
        remotes(&r),
        [
            "infra: helm https://charts.jetstack.io cert-manager `v1.14.4` @ infra/kustomization.yaml:4: - name: cert-manager",
            "infra: oci oci://ghcr.io/stefanprodan/charts/podinfo `6.5.4` @ infra/kustomization.yaml:8: - name: podinfo",
        ]
    );
    // The rest of the build renders without the charts (partial).
    let infra = r.model.apps.iter().find(|a| a.name == "infra").unwrap();
    assert_eq!(infra.objects.len(), 1);
    assert_eq!(infra.status().0.as_str(), "partial");
}

#[test]
fn chart_dependencies_from_repositories_not_vendored() {
    let chart = "apiVersion: v2\nname: shop\nversion: 1.0.0\ndependencies:\n  - name: postgresql\n    version: 12.x.x\n    repository: https://charts.bitnami.com/bitnami\n  - name: common\n    version: 2.0.0\n    repository: oci://registry-1.docker.io/bitnamicharts\n  - name: local-lib\n    version: 0.1.0\n    repository: file://../local-lib\n  - name: added\n    version: 1.0.0\n    repository: '@stable'\n";
    let a = app(
        "shop",
        "  source:\n    repoURL: https://github.com/example/gitops.git\n    targetRevision: main\n    path: charts/shop\n",
    );
    let r = lint_tree(&[
        ("argocd/shop.yaml", &a),
        ("charts/shop/Chart.yaml", chart),
        ("charts/shop/values.yaml", "{}\n"),
    ]);
    assert_eq!(
        remotes(&r),
        [
            "shop: helm https://charts.bitnami.com/bitnami postgresql `12.x.x` @ charts/shop/Chart.yaml:5: - name: postgresql",
            "shop: oci oci://registry-1.docker.io/bitnamicharts/common `2.0.0` @ charts/shop/Chart.yaml:8: - name: common",
        ]
    );
    let shop = r.model.apps.iter().find(|a| a.name == "shop").unwrap();
    assert_eq!(shop.status().1.map(|(code, _)| code), Some("remote-chart"));
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "offline-unrenderable-input")
        .expect("offline finding");
    assert!(f.message.contains("gitops-lint fetch"), "{}", f.message);
}

#[test]
fn kustomize_remote_bases_in_each_form_and_the_rest_of_the_build_renders() {
    let k = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - github.com/example/platform//deploy/base?ref=v1.2.0\n  - https://github.com/example/monitoring.git//rules?ref=main\n  - git::https://gitlab.com/example/ops.git//base?version=v3\n  - ssh://git@git.example.com/team/infra.git//k8s\n  - git@github.com:example/secrets//sealed?ref=abc123&submodules=false\n  - https://dev.azure.com/org/project/_git/repo/deploy?ref=release\n  - https://raw.githubusercontent.com/example/crds/v1/crd.yaml\n  - configmap.yaml\n";
    let a = app(
        "platform",
        "  source:\n    repoURL: https://github.com/example/gitops.git\n    targetRevision: main\n    path: platform\n",
    );
    let r = lint_tree(&[
        ("argocd/platform.yaml", &a),
        ("platform/kustomization.yaml", k),
        (
            "platform/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
        ),
    ]);
    assert_eq!(
        remotes(&r),
        [
            "platform: git git@github.com:example/secrets `abc123` @ platform/kustomization.yaml:8: - git@github.com:example/secrets//sealed?ref=abc123&submodules=false",
            "platform: git https://dev.azure.com/org/project/_git/repo `release` @ platform/kustomization.yaml:9: - https://dev.azure.com/org/project/_git/repo/deploy?ref=release",
            "platform: git https://github.com/example/monitoring.git `main` @ platform/kustomization.yaml:5: - https://github.com/example/monitoring.git//rules?ref=main",
            "platform: git https://github.com/example/platform `v1.2.0` @ platform/kustomization.yaml:4: - github.com/example/platform//deploy/base?ref=v1.2.0",
            "platform: git https://gitlab.com/example/ops.git `v3` @ platform/kustomization.yaml:6: - git::https://gitlab.com/example/ops.git//base?version=v3",
            "platform: git ssh://git@git.example.com/team/infra.git `` @ platform/kustomization.yaml:7: - ssh://git@git.example.com/team/infra.git//k8s",
            // A file at a URL: `fetch` downloads it too (locked by its digest).
            "platform: url https://raw.githubusercontent.com/example/crds/v1/crd.yaml `` @ platform/kustomization.yaml:10: - https://raw.githubusercontent.com/example/crds/v1/crd.yaml",
        ]
    );
    let p = r.model.apps.iter().find(|a| a.name == "platform").unwrap();
    assert_eq!(p.objects.len(), 1, "the local ConfigMap still renders");
    let (status, reason) = p.status();
    assert_eq!(status.as_str(), "partial");
    assert_eq!(reason.map(|(code, _)| code), Some("remote-base"));
    let offline: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.rule == "offline-unrenderable-input")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(offline.len(), 7, "{offline:#?}");
}

#[test]
fn apps_json_lists_each_apps_remotes() {
    let a = app(
        "web",
        "  source:\n    repoURL: https://charts.example.com/stable\n    chart: web\n    targetRevision: 1.2.3\n",
    );
    let r = lint_tree(&[("argocd/web.yaml", &a)]);
    let json = gitops_lint::gitops::listing::apps_json(&r.model);
    assert_eq!(
        json["apps"][0]["remotes"],
        serde_json::json!([{
            "kind": "helm",
            "source": "https://charts.example.com/stable",
            "chart": "web",
            "requested": "1.2.3",
            "file": "argocd/web.yaml",
            "line": 10,
        }])
    );
}
