//! Argo CD objects read from the repo: Application, ApplicationSet (its template, first
//! cut: not expanded), and argocd-cm settings.

use super::appset::{self, RepoTree};
use super::context::*;
use super::ignore::{IgnoreEntry, IgnoreOrigin};
use super::model::argo::{ArgoApp, ArgoSettings, ArgoSource, FilteredResource, SyncPolicy};
use super::model::kinds::is_argo_app;
use super::rendered::Rendered;
use super::units::{HelmUnit, KustomizeUnit, Unit};
use super::{App, AppKind};
use crate::object::Object;
use crate::render::{IssueKind, RenderIssue};
use crate::source::{RepoFs, normalize_relative};
use crate::source::{SourceMap, Span};
use crate::yaml::{Limits, Node, parse_str};

fn source_from(node: &Node) -> ArgoSource {
    let dir = node.get("directory");
    ArgoSource {
        repo_url: node.get_str("repoURL").map(str::to_string),
        path: node.get("path").and_then(Node::scalar_text),
        path_span: node.get("path").map(|n| n.span),
        chart: node.get_str("chart").map(str::to_string),
        target_revision: node.get("targetRevision").and_then(Node::scalar_text),
        ref_name: node.get_str("ref").map(str::to_string),
        recurse: dir
            .and_then(|d| d.get("recurse"))
            .and_then(Node::as_bool)
            .unwrap_or(false),
        include: dir.and_then(|d| d.get_str("include")).map(str::to_string),
        exclude: dir.and_then(|d| d.get_str("exclude")).map(str::to_string),
        node: node.clone(),
        local: false,
    }
}

/// Read the app part of an Application spec (for an ApplicationSet: its template's spec).
/// `automated.enabled` exists since Argo CD 3.1; `reads_enabled` false is an
/// older release, whose CRD prunes the field, so `automated` is on whatever it says.
pub fn read_app_spec(
    decl: &Object,
    spec: &Node,
    from_appset: bool,
    reads_enabled: bool,
) -> ArgoApp {
    let mut sources = Vec::new();
    if let Some(items) = spec.get("sources").and_then(Node::as_seq) {
        sources.extend(items.iter().map(source_from));
    } else if let Some(src) = spec.get("source") {
        sources.push(source_from(src));
    }
    let mut sync = SyncPolicy::default();
    if let Some(sp) = spec.get("syncPolicy") {
        sync.span = Some(sp.span);
        if let Some(auto) = sp.get("automated") {
            let enabled =
                !reads_enabled || auto.get("enabled").and_then(Node::as_bool).unwrap_or(true);
            sync.automated = enabled;
            sync.self_heal = enabled && auto.get("selfHeal").and_then(Node::as_bool) == Some(true);
            sync.prune = enabled && auto.get("prune").and_then(Node::as_bool) == Some(true);
        }
        if let Some(opts) = sp.get("syncOptions").and_then(Node::as_seq) {
            sync.options = opts.to_vec();
        }
    }
    let ignores = spec
        .get("ignoreDifferences")
        .and_then(Node::as_seq)
        .map(|items| {
            items
                .iter()
                .map(|i| IgnoreEntry::from_item(i, IgnoreOrigin::App))
                .collect()
        })
        .unwrap_or_default();
    ArgoApp {
        decl: decl.clone(),
        from_appset,
        sources,
        sync,
        ignores,
        destination_cluster: destination_cluster(spec),
    }
}

/// The first of a source's `repoURL`, `chart` and `targetRevision` that still holds an
/// ApplicationSet template after expansion (`{{metadata.annotations.addons_repo_url}}`), or
/// what Go templates print for a parameter no generator set (`<no value>`, goTemplate).
fn templated_source_field(src: &ArgoSource) -> Option<String> {
    // A `ref` source only lends its files to the others' `$ref/…` values files.
    if src.chart.is_none() && src.path.is_none() && src.ref_name.is_some() {
        return None;
    }
    [
        src.repo_url.as_deref(),
        src.chart.as_deref(),
        src.target_revision.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find(|v| v.contains("{{") || v.contains("<no value>"))
    .map(str::to_string)
}

/// One name per cluster: Argo CD's own cluster is `in-cluster` by name and
/// `https://kubernetes.default.svc` by server.
fn destination_cluster(spec: &Node) -> Option<String> {
    let dest = spec.get("destination")?;
    let value = dest
        .get("server")
        .and_then(Node::scalar_text)
        .or_else(|| dest.get("name").and_then(Node::scalar_text))?;
    let value = value.trim().trim_end_matches('/').to_string();
    if value.is_empty() || value.contains("{{") || value.contains("${") {
        return None;
    }
    if value == "in-cluster" || value == "https://kubernetes.default.svc" {
        return Some("in-cluster".to_string());
    }
    Some(value)
}
pub fn is_argocd_cm(obj: &Object) -> bool {
    obj.kind == "ConfigMap" && obj.group().is_empty() && obj.name == "argocd-cm"
}

fn is_cmd_params_cm(obj: &Object) -> bool {
    obj.kind == "ConfigMap" && obj.group().is_empty() && obj.name == "argocd-cmd-params-cm"
}

/// The Argo CD instances the rendered output configures: one per (cluster, namespace) of an
/// `argocd-cm` or `argocd-cmd-params-cm`, each read where it lands after kustomize namespaces,
/// patches and generators or a chart's values made it. The first ConfigMap of a name in an
/// instance wins (the same file reached through two builds is one object).
pub fn read_instances<'a>(
    objects: impl Iterator<Item = &'a super::ModelObject>,
    apps: &[super::App],
    map: &SourceMap,
) -> Vec<ArgoSettings> {
    let mut out: Vec<ArgoSettings> = Vec::new();
    let same = |s: &ArgoSettings, ns: &str, cluster: &super::Cluster| {
        s.namespace.as_deref() == Some(ns) && s.cluster.name() == cluster.name()
    };
    for mo in objects {
        let (cm, params) = (is_argocd_cm(&mo.object), is_cmd_params_cm(&mo.object));
        if !cm && !params {
            continue;
        }
        let cluster = apps
            .get(mo.app)
            .map(|a| a.cluster.clone())
            .unwrap_or_default();
        let at = match out.iter().position(|s| same(s, &mo.namespace, &cluster)) {
            Some(i) => i,
            None => {
                out.push(ArgoSettings {
                    namespace: Some(mo.namespace.clone()),
                    cluster: cluster.clone(),
                    ..Default::default()
                });
                out.len() - 1
            }
        };
        let s = &mut out[at];
        if cm && s.decl.is_none() {
            let read = read_argocd_cm(&mo.object, map);
            *s = ArgoSettings {
                namespace: s.namespace.take(),
                cluster: std::mem::take(&mut s.cluster),
                server_side_diff: s.server_side_diff,
                ..read
            };
        } else if params && s.server_side_diff.is_none() {
            s.server_side_diff = mo
                .object
                .root
                .get_path(&["data", "controller.diff.server.side"])
                .and_then(Node::scalar_text)
                .map(|v| v.trim() == "true");
        }
    }
    out
}

const CUSTOMIZATION_TYPES: &[&str] = &[
    "health",
    "useOpenLibs",
    "actions",
    "ignoreDifferences",
    "ignoreResourceUpdates",
    "knownTypeFields",
];

pub fn read_argocd_cm(obj: &Object, map: &SourceMap) -> ArgoSettings {
    let mut s = ArgoSettings {
        decl: Some(obj.clone()),
        ..Default::default()
    };
    let Some(data) = obj.root.get("data").and_then(Node::as_map) else {
        return s;
    };
    for entry in data {
        let key = entry.key.key_str().into_owned();
        let value = &entry.value;
        match key.as_str() {
            "application.instanceLabelKey" => s.instance_label_key = value.scalar_text(),
            "application.resourceTrackingMethod" => s.tracking_method = value.scalar_text(),
            "resource.exclusions" => {
                s.exclusions_at = Some(entry.key.span);
                if let Ok(parsed) = parse_embedded(value, map, &key) {
                    s.exclusions = read_filtered(&parsed);
                }
            }
            "resource.customizations" => {
                read_legacy_customizations(&mut s, entry.key.span, value, map)
            }
            _ => {}
        }
        let Some(rest) = key.strip_prefix("resource.customizations.") else {
            continue;
        };
        let (kind_of, group_kind) = rest.split_once('.').unwrap_or((rest, ""));
        if !CUSTOMIZATION_TYPES.contains(&kind_of) {
            s.override_errors.push((
                entry.key.span,
                format!("resource customization type `{kind_of}` is not supported"),
            ));
            continue;
        }
        if kind_of != "ignoreDifferences" {
            continue;
        }
        let (group, kind) = if group_kind == "all" {
            (Some("*".to_string()), Some("*".to_string()))
        } else {
            match group_kind.split('_').collect::<Vec<_>>().as_slice() {
                [kind] => (None, Some(kind.to_string())),
                [group, kind] => (Some(group.to_string()), Some(kind.to_string())),
                _ => {
                    s.override_errors.push((
                        entry.key.span,
                        format!("malformed group_kind `{group_kind}` (more than one `_`)"),
                    ));
                    continue;
                }
            }
        };
        match parse_embedded(value, map, &key) {
            Ok(parsed) => s.ignores.push(IgnoreEntry::from_system(
                &key,
                entry.key.span,
                group,
                kind,
                &parsed,
            )),
            Err(msg) => s.override_errors.push((value.span, msg)),
        }
    }
    s
}

/// `resource.exclusions` entries (`apiGroups`, `kinds`, `clusters`).
fn read_filtered(list: &Node) -> Vec<FilteredResource> {
    let strings = |n: &Node, k: &str| -> Vec<String> {
        n.get(k)
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Node::scalar_text)
            .collect()
    };
    list.as_seq()
        .unwrap_or_default()
        .iter()
        .map(|e| FilteredResource {
            api_groups: strings(e, "apiGroups"),
            kinds: strings(e, "kinds"),
            clusters: strings(e, "clusters"),
        })
        .collect()
}

/// The legacy single key: a YAML map keyed `group/Kind` whose `ignoreDifferences` values
/// must be YAML strings.
fn read_legacy_customizations(s: &mut ArgoSettings, key_span: Span, value: &Node, map: &SourceMap) {
    let parsed = match parse_embedded(value, map, "resource.customizations") {
        Ok(p) => p,
        Err(msg) => {
            s.override_errors.push((value.span, msg));
            return;
        }
    };
    let Some(entries) = parsed.as_map() else {
        return;
    };
    for e in entries {
        let gk = e.key.key_str().into_owned();
        let Some(ignore) = e.value.get("ignoreDifferences") else {
            continue;
        };
        let inner = match ignore.as_str() {
            Some(_) => {
                match parse_embedded(ignore, map, &format!("resource.customizations {gk}")) {
                    Ok(root) => Some(root),
                    Err(msg) => {
                        s.override_errors.push((ignore.span, msg));
                        continue;
                    }
                }
            }
            None => {
                s.override_errors.push((
                    key_span,
                    format!(
                        "`resource.customizations` entry `{gk}`: ignoreDifferences must be a YAML string, not a mapping"
                    ),
                ));
                continue;
            }
        };
        let (group, kind) = match gk.split_once('/') {
            Some((g, k)) => (Some(g.to_string()), Some(k.to_string())),
            None => (None, Some(gk.clone())),
        };
        if let Some(inner) = inner {
            s.ignores.push(IgnoreEntry::from_system(
                "resource.customizations",
                key_span,
                group,
                kind,
                &inner,
            ));
        }
    }
}

/// Values in argocd-cm are strings holding YAML: parse them as their own (virtual) file.
fn parse_embedded(value: &Node, map: &SourceMap, key: &str) -> Result<Node, String> {
    let Some(text) = value.as_str() else {
        return Err(format!("`{key}` must be a string holding YAML"));
    };
    let parent = map.get(value.span.file);
    let file = map.add(crate::source::SourceFile::new(
        format!("{}#{key}", parent.path),
        text.to_string(),
        crate::source::Origin::Virtual,
    ));
    let parsed = parse_str(text, file, &Limits::default());
    if let Some(err) = parsed.error {
        return Err(format!("`{key}` does not parse as YAML: {}", err.message));
    }
    let root = parsed
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .unwrap_or_else(|| Node::new(crate::yaml::Value::Null, value.span));
    // A literal block (`key: |`) read where it stands keeps each entry on its own line.
    if value.style == crate::yaml::Style::Literal
        && let Some(in_place) = super::in_place::in_place_roots(value, map)
        && let [one] = in_place.as_slice()
        && one.to_json() == root.to_json()
    {
        return Ok(one.clone());
    }
    Ok(root)
}

/// With no git remote, the `repoURL` most of the repo's Applications use for source paths
/// that exist here (ties: the first in file order).
pub fn majority_repo_url(
    plain: &[(Object, String)],
    fs: &dyn crate::source::RepoFs,
) -> Option<String> {
    let mut counts: Vec<(String, String, usize)> = Vec::new();
    for (o, _) in plain.iter().filter(|(o, _)| is_argo_app(o)) {
        let Some(spec) = o.root.get("spec") else {
            continue;
        };
        let sources: Vec<&Node> = match spec.get("sources").and_then(Node::as_seq) {
            Some(s) => s.iter().collect(),
            None => spec.get("source").into_iter().collect(),
        };
        for s in sources {
            let (Some(url), Some(path)) = (
                s.get("repoURL").and_then(Node::scalar_text),
                s.get("path").and_then(Node::scalar_text),
            ) else {
                continue;
            };
            if !crate::source::normalize_relative(&path).is_some_and(|p| fs.is_dir(&p)) {
                continue;
            }
            let key = super::remotes::normalize_url(&url);
            match counts.iter_mut().find(|(k, _, _)| *k == key) {
                Some(c) => c.2 += 1,
                None => counts.push((key, url, 1)),
            }
        }
    }
    let best = counts.iter().map(|c| c.2).max()?;
    counts.into_iter().find(|c| c.2 == best).map(|c| c.1)
}

impl Ctx<'_> {
    /// The unit an Argo source path renders as (an explicit `helm`/`kustomize`/`directory` block,
    /// else Argo CD's tool detection).
    pub(super) fn argo_unit(
        &self,
        app_name: &str,
        dest_ns: Option<&str>,
        src: &ArgoSource,
        path: String,
        sources: &[ArgoSource],
    ) -> Result<Unit, String> {
        let node = &src.node;
        if node.get("plugin").is_some() {
            return Err(
                "a config-management plugin renders this source; plugins are never run offline"
                    .into(),
            );
        }
        if node.get_path(&["directory", "jsonnet"]).is_some()
            && self.layout.unit_kind(&path) == "directory"
        {
            return Err("jsonnet sources are not rendered offline".into());
        }
        let kind = if node.get("helm").is_some() {
            "helm"
        } else if node.get("kustomize").is_some() {
            "kustomize"
        } else if node.get("directory").is_some() {
            "directory"
        } else {
            self.layout.unit_kind(&path)
        };
        Ok(match kind {
            "helm" => Unit::Helm(argo_helm_unit(app_name, dest_ns, node, path, sources)),
            "kustomize" => Unit::Kustomize(KustomizeUnit {
                dir: path,
                flux: false,
                argo_options: node.get("kustomize").cloned(),
            }),
            _ => Unit::Directory {
                dir: path,
                recurse: src.recurse,
                include: src.include.clone(),
                exclude: src.exclude.clone(),
            },
        })
    }
}

/// Argo CD's helm invocation for a source
/// (https://argo-cd.readthedocs.io/en/stable/user-guide/helm/).
pub(super) fn argo_helm_unit(
    app_name: &str,
    dest_ns: Option<&str>,
    node: &Node,
    path: String,
    sources: &[ArgoSource],
) -> HelmUnit {
    let helm = node.get("helm");
    let h = |k: &str| helm.and_then(|h| h.get(k));
    let mut value_files = Vec::new();
    for v in h("valueFiles").and_then(Node::as_seq).unwrap_or_default() {
        let Some(text) = v.scalar_text() else {
            continue;
        };
        let resolved = if super::units::downloader_scheme(&text).is_some() {
            // `secrets://…`, `https://…`: read by a Helm downloader plugin, kept as written.
            Some(text.clone())
        } else if let Some(rest) = text.strip_prefix('$') {
            // `$ref/path` of a multi-source app: the path from that source's repo root.
            let (r, p) = rest.split_once('/').unwrap_or((rest, ""));
            if sources.iter().any(|s| s.ref_name.as_deref() == Some(r)) {
                normalize_relative(p)
            } else {
                None
            }
        } else if let Some(abs) = text.strip_prefix('/') {
            normalize_relative(abs)
        } else {
            normalize_relative(&format!("{path}/{text}"))
        };
        if let Some(r) = resolved {
            value_files.push((r, v.span));
        }
    }
    let mut inline_values = Vec::new();
    let mut values_layers = Vec::new();
    if let Some(obj) = h("valuesObject") {
        // Given as nodes, so a value keeps the Application line that wrote it.
        values_layers.push(crate::render::helm::layers::ValuesLayer::Docs {
            label: "value from the Application's helm.valuesObject".into(),
            roots: vec![obj.clone()],
        });
    } else if let Some(v) = h("values") {
        inline_values.push(v.clone());
    }
    let parameters = h("parameters")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| {
            let value = p.get("value");
            Some((
                p.get("name")?.scalar_text()?,
                value.and_then(Node::scalar_text).unwrap_or_default(),
                p.get("forceString").and_then(Node::as_bool) == Some(true),
                value.map_or(p.span, crate::render::helm::values::written_at),
            ))
        })
        .collect();
    HelmUnit {
        chart_dir: path,
        release_name: h("releaseName")
            .and_then(Node::scalar_text)
            .unwrap_or_else(|| app_name.to_string()),
        namespace: h("namespace")
            .and_then(Node::scalar_text)
            .or(dest_ns.map(str::to_string))
            .unwrap_or_else(|| "default".into()),
        value_files,
        ignore_missing_value_files: h("ignoreMissingValueFiles").and_then(Node::as_bool)
            == Some(true),
        inline_values,
        values_layers,
        parameters,
        skip_crds: h("skipCrds").and_then(Node::as_bool) == Some(true),
        kube_version: h("kubeVersion").and_then(Node::scalar_text),
        api_versions: h("apiVersions")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Node::scalar_text)
            .collect(),
    }
}

/// The Applications an ApplicationSet generates (or, when nothing expands, an app that
/// carries the expansion problems).
pub(super) fn appset_apps(
    ctx: &mut Ctx,
    obj: &Object,
    tree: &RepoTree,
    go_template: GoTemplateFn,
    generated: &mut usize,
) -> Vec<(App, Rendered, Option<String>)> {
    let mut exp = appset::expand(obj, tree, go_template);
    // Every declared ApplicationSet together stays within `max-apps`; a cut set is an error.
    let max_apps = ctx.budget.max_apps;
    let room = max_apps.saturating_sub(*generated);
    if exp.apps.len() > room {
        exp.apps.truncate(room);
        exp.issues.push(crate::render::RenderIssue {
            kind: crate::render::IssueKind::Failed,
            input: None,
            span: obj
                .root
                .get_path(&["spec", "generators"])
                .map(|g| g.span)
                .unwrap_or(obj.span()),
            message: format!(
                "ApplicationSets generate more than {max_apps} Applications in total (limit `limits.max-apps`); the rest are not linted"
            ),
        });
    }
    *generated += exp.apps.len();
    let mut out = Vec::new();
    for (app_obj, _) in &exp.apps {
        let Some(spec) = app_obj.root.get("spec") else {
            continue;
        };
        let (mut app, r, ns) = argo_app(
            ctx,
            app_obj,
            app_obj.name.clone(),
            spec,
            AppKind::ArgoAppSet,
        );
        if out.is_empty() {
            app.issues.extend(exp.issues.iter().cloned());
        }
        app.generated_by = Some(obj.name.clone());
        out.push((app, r, ns));
    }
    if out.is_empty() && !exp.issues.is_empty() {
        let mut app = new_app(obj.name.clone(), AppKind::ArgoAppSet, Some(obj.span()));
        app.generated_by = Some(obj.name.clone());
        app.issues = exp.issues;
        out.push((app, Rendered::default(), None));
    }
    out
}

pub(super) fn argo_app(
    ctx: &mut Ctx,
    obj: &Object,
    name: String,
    spec: &Node,
    kind: AppKind,
) -> (App, Rendered, Option<String>) {
    let reads_enabled = !ctx
        .profile
        .argo_version
        .as_ref()
        .is_some_and(|v| v.before(3, 1));
    let mut argo_app = read_app_spec(obj, spec, kind == AppKind::ArgoAppSet, reads_enabled);
    let ref_files = ref_value_files(&argo_app.sources);
    for src in &mut argo_app.sources {
        // A `ref` source without a path is this repo when its `$ref/...` files exist here.
        let probe = match (&src.path, &src.ref_name) {
            (None, Some(r)) => ref_files
                .iter()
                .find(|(name, _)| name == r)
                .map(|(_, p)| p.clone()),
            _ => src.path.clone(),
        };
        src.local = src.chart.is_none()
            && ctx
                .identity
                .judge(src.repo_url.as_deref(), probe.as_deref(), ctx.fs)
                .local;
    }
    let span = obj
        .metadata()
        .and_then(|m| m.get("name"))
        .map(|n| n.span)
        .or(Some(obj.span()));
    let mut app = new_app(name.clone(), kind, span);
    app.destination_namespace = spec
        .get_path(&["destination", "namespace"])
        .and_then(Node::scalar_text)
        .filter(|s| !s.is_empty());
    let mut rendered = Rendered::default();
    for src in &argo_app.sources {
        let at = src.path_span.unwrap_or(obj.span());
        // An ApplicationSet parameter no generator in the repository supplies (a cluster
        // Secret's annotation): which repository or chart is not knowable here, so there is
        // nothing to fetch either.
        if let Some(field) = templated_source_field(src) {
            rendered.sources.push(format!("templated {field}"));
            app.skipped.push(super::Skip {
                reason: "templated-source",
                message: format!(
                    "source `{field}` is an ApplicationSet parameter no generator in the repository fills (it comes from the cluster, e.g. a cluster Secret's annotation); the linter cannot tell which source it is"
                ),
            });
            continue;
        }
        let native_oci = src.chart.is_none()
            && src
                .repo_url
                .as_deref()
                .is_some_and(|u| u.trim().starts_with("oci://"));
        if src.chart.is_some() || native_oci {
            // A chart from a Helm repository or an OCI registry: the `chart:` line picks it
            // (the repoURL for an OCI source that is the chart itself).
            let span = src
                .node
                .get("chart")
                .or_else(|| src.node.get("repoURL"))
                .map(|n| n.span)
                .unwrap_or(at);
            let reference = super::remote_charts::argo_chart_ref(
                ctx,
                src.repo_url.as_deref().unwrap_or(""),
                src.chart.as_deref(),
                src.target_revision.as_deref().unwrap_or(""),
            );
            // An OCI source's `path` selects a directory of the artifact (`.` for a chart).
            let sub = if native_oci {
                src.path
                    .as_deref()
                    .and_then(normalize_relative)
                    .unwrap_or_default()
            } else {
                String::new()
            };
            let dest_ns = app.destination_namespace.clone();
            let sources = argo_app.sources.clone();
            super::remote_charts::render_remote_chart(
                ctx,
                &mut app,
                &mut rendered,
                reference,
                span,
                |_, _, root| {
                    let dir = if sub.is_empty() {
                        root
                    } else {
                        format!("{root}/{sub}")
                    };
                    Some(argo_helm_unit(
                        &name,
                        dest_ns.as_deref(),
                        &src.node,
                        dir,
                        &sources,
                    ))
                },
            );
            continue;
        }
        let Some(raw_path) = src.path.as_deref() else {
            continue;
        };
        let judgement = ctx
            .identity
            .judge(src.repo_url.as_deref(), Some(raw_path), ctx.fs);
        let local = judgement.local;
        if app.repository.is_none() {
            app.repository = Some(judgement);
        }
        if !local {
            let url = src.repo_url.as_deref().unwrap_or("?");
            rendered.sources.push(format!("external {url}"));
            app.skipped.push(super::Skip {
                reason: "external-source",
                message: format!(
                    "source {url} is another repository; the linter does not fetch it"
                ),
            });
            continue;
        }
        let Some(path) = normalize_relative(raw_path) else {
            rendered.issues.push(RenderIssue {
                kind: IssueKind::Failed,
                input: None,
                span: at,
                message: format!("source path `{raw_path}` leaves the repository"),
            });
            continue;
        };
        if !ctx.fs.is_dir(&path) {
            // A path an app-of-apps chart printed from its values: name the values line too.
            let from = src
                .node
                .get("path")
                .and_then(|n| n.related.as_deref())
                .and_then(|r| r.iter().find(|r| r.label.starts_with("value from ")))
                .map(|r| {
                    let lc = ctx.fs.source_map().line_col(r.span);
                    format!(
                        " (printed from {}:{}: `{}`)",
                        ctx.fs.source_map().path(r.span.file),
                        lc.line,
                        ctx.fs.source_map().text(r.span)
                    )
                })
                .unwrap_or_default();
            rendered.issues.push(RenderIssue {
                kind: IssueKind::Failed,
                input: None,
                span: at,
                message: format!(
                    "app path does not exist: `{raw_path}`{from}; Argo CD resolves it from the repository root"
                ),
            });
            continue;
        }
        // Parameter overrides committed next to the source (Image Updater write-back).
        let src = &with_source_overrides(ctx.fs, &path, &name, src);
        match ctx.argo_unit(
            &name,
            app.destination_namespace.as_deref(),
            src,
            path,
            &argo_app.sources,
        ) {
            Ok(unit) => ctx.render_unit(unit, at, &mut rendered),
            Err(message) => rendered.issues.push(RenderIssue {
                kind: IssueKind::Unrenderable,
                input: None,
                span: at,
                message,
            }),
        }
    }
    app.argo = Some(argo_app);
    (app, rendered, None)
}

/// The `$ref/path` value files of a multi-source app: (ref name, repo-relative directory of
/// the file), for deciding whether a `ref` source is this repository.
pub(super) fn ref_value_files(sources: &[ArgoSource]) -> Vec<(String, String)> {
    sources
        .iter()
        .flat_map(|s| {
            s.node
                .get_path(&["helm", "valueFiles"])
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(Node::scalar_text)
                .collect::<Vec<_>>()
        })
        .filter_map(|v| {
            let (r, p) = v.strip_prefix('$')?.split_once('/')?;
            let p = normalize_relative(p)?;
            Some((r.to_string(), dir_of(&p).to_string()))
        })
        .collect()
}

/// `.argocd-source.yaml` then `.argocd-source-<app>.yaml` in the source path, merged into the
/// source as the repo-server does (JSON merge patch: maps merge, other values replace).
pub(super) fn with_source_overrides(
    fs: &dyn RepoFs,
    path: &str,
    app: &str,
    src: &ArgoSource,
) -> ArgoSource {
    let mut merged = src.clone();
    for file in [
        ".argocd-source.yaml".to_string(),
        format!(".argocd-source-{app}.yaml"),
    ] {
        let rel = if path.is_empty() {
            file
        } else {
            format!("{path}/{file}")
        };
        let Ok(id) = fs.read(&rel) else { continue };
        let text = fs.source_map().get(id).text.clone();
        let parsed = crate::yaml::parse_str(&text, id, &crate::yaml::Limits::default());
        if let Some(doc) = parsed.docs.into_iter().next() {
            merge_patch(&mut merged.node, &doc.root);
        }
    }
    merged
}

pub(super) fn merge_patch(base: &mut Node, patch: &Node) {
    use crate::yaml::{Entry, Value};
    let (Value::Map(b), Value::Map(p)) = (&mut base.value, &patch.value) else {
        *base = patch.clone();
        return;
    };
    for pe in p {
        let key = pe.key.key_str();
        match b.iter_mut().find(|e| e.key.key_is(&key)) {
            Some(be) if pe.value.is_null() => be.value = pe.value.clone(),
            Some(be) => merge_patch(&mut be.value, &pe.value),
            None => b.push(Entry {
                key: pe.key.clone(),
                value: pe.value.clone(),
            }),
        }
    }
    b.retain(|e| !e.value.is_null() || !p.iter().any(|pe| pe.key.key_str() == e.key.key_str()));
}
