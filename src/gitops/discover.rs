//! From parsed files to the app model: find the Argo CD and Flux apps and settings, decide
//! what each app renders (its units) and which objects it deploys, and gather the rest into
//! standalone apps (per directory, per unreferenced kustomization or chart).

use super::app_of_apps::Origin;
use super::appset::{self, RepoTree};
use super::argo::{self, ArgoSource};
use super::envsubst;
use super::flux::{self, FluxApp};
use super::remotes::{git_remotes, normalize_url};
use super::units::{self, HelmUnit, KustomizeUnit, Unit};
use super::{App, AppKind, Model, ModelObject};
use crate::config::Profile;
use crate::object::Object;
use crate::render::{IssueKind, RenderBudget, RenderIssue};
use crate::source::{FileId, RepoFs, SourceMap, Span, normalize_relative};
use crate::yaml::{Document, Node};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// A parsed repo file.
pub struct LoadedFile {
    pub id: FileId,
    /// Repo-relative, `/`-separated.
    pub path: String,
    pub docs: Vec<Document>,
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_kustomization_file(path: &str) -> bool {
    matches!(
        file_name(path),
        "kustomization.yaml" | "kustomization.yml" | "Kustomization"
    )
}

/// Is `path` inside `dir` (or equal to it)? `""` is the repo root.
fn under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || path.starts_with(&format!("{dir}/"))
}

/// The component directories a Flux Kustomization adds (`spec.components`, relative to its
/// `spec.path`): referenced, so not built on their own.
fn flux_components(root: &Node) -> Vec<String> {
    let is_flux = root.get_str("kind") == Some("Kustomization")
        && root
            .get_str("apiVersion")
            .is_some_and(|v| v.starts_with("kustomize.toolkit.fluxcd.io/"));
    let Some(spec) = root.get("spec").filter(|_| is_flux) else {
        return Vec::new();
    };
    let path = spec.get_str("path").unwrap_or("");
    spec.get("components")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::as_str)
        .filter(|c| !c.contains("://"))
        .filter_map(|c| normalize_relative(&format!("{path}/{c}")))
        .collect()
}

/// Directories that hold render inputs rather than plain manifests.
struct Layout {
    charts: BTreeSet<String>,
    kustomizations: BTreeSet<String>,
    /// Directories another kustomization in the repo refers to (bases, components).
    referenced: BTreeSet<String>,
}

impl Layout {
    fn of(files: &[LoadedFile]) -> Layout {
        let mut charts = BTreeSet::new();
        let mut kustomizations = BTreeSet::new();
        let mut referenced = BTreeSet::new();
        for f in files {
            if file_name(&f.path) == "Chart.yaml" {
                charts.insert(dir_of(&f.path).to_string());
            } else if is_kustomization_file(&f.path) {
                let dir = dir_of(&f.path);
                kustomizations.insert(dir.to_string());
                let root = f.docs.first().map(|d| &d.root);
                for key in ["resources", "bases", "components"] {
                    for r in root
                        .and_then(|r| r.get(key))
                        .and_then(Node::as_seq)
                        .unwrap_or_default()
                    {
                        if let Some(p) = r.as_str()
                            && !p.contains("://")
                            && let Some(n) = normalize_relative(&format!("{dir}/{p}"))
                        {
                            referenced.insert(n);
                        }
                    }
                }
            } else {
                referenced.extend(f.docs.iter().flat_map(|d| flux_components(&d.root)));
            }
        }
        Layout {
            charts,
            kustomizations,
            referenced,
        }
    }

    /// A file the Helm or kustomize renderer reads (templates, values, patches, bases), not
    /// a manifest applied as it is.
    fn is_render_input(&self, path: &str) -> bool {
        self.charts.iter().any(|d| under(path, d))
            || self.kustomizations.iter().any(|d| under(path, d))
    }

    /// Argo CD's source type discovery (catalog A2.1).
    fn unit_kind(&self, dir: &str) -> &'static str {
        if self.charts.contains(dir) {
            "helm"
        } else if self.kustomizations.contains(dir) {
            "kustomize"
        } else {
            "directory"
        }
    }
}

/// How the repo names itself: git remotes and configured URLs.
struct RepoIdentity {
    urls: Vec<String>,
}

impl RepoIdentity {
    /// Catalog A1.9: by URL when the repo knows its URLs, else by whether the path exists.
    fn is_this_repo(&self, url: Option<&str>, path: Option<&str>, fs: &dyn RepoFs) -> bool {
        if let Some(url) = url
            && !self.urls.is_empty()
        {
            return self.urls.contains(&normalize_url(url));
        }
        path.and_then(normalize_relative)
            .is_some_and(|p| fs.is_dir(&p))
    }
}

struct Ctx<'a> {
    layout: Layout,
    identity: RepoIdentity,
    fs: &'a dyn RepoFs,
    /// Plain manifests (objects of files that are not render inputs) and their file.
    plain: Vec<(Object, String)>,
    owned: Vec<bool>,
    /// Kustomization and chart directories some app renders (not standalone then).
    rendered_dirs: BTreeSet<String>,
    budget: RenderBudget,
    /// The destination cluster: Helm's `.Capabilities` unless an app pins them.
    profile: &'a Profile,
}

/// What rendering one app's sources produced.
#[derive(Default)]
pub(super) struct Rendered {
    pub(super) objects: Vec<Object>,
    pub(super) issues: Vec<RenderIssue>,
    sources: Vec<String>,
    differences: Vec<super::twice::RenderDifference>,
}

impl Ctx<'_> {
    fn plain_in(
        &mut self,
        dir: &str,
        recurse: bool,
        include: Option<&str>,
        exclude: Option<&str>,
    ) -> Vec<Object> {
        let include = include.and_then(glob);
        let exclude = exclude.and_then(glob);
        let mut out = Vec::new();
        for (i, (obj, file)) in self.plain.iter().enumerate() {
            let fdir = dir_of(file);
            let inside = if recurse {
                under(fdir, dir)
            } else {
                fdir == dir
            };
            if !inside {
                continue;
            }
            let rel = if dir.is_empty() {
                file.as_str()
            } else {
                file.strip_prefix(&format!("{dir}/")).unwrap_or(file)
            };
            if include.as_ref().is_some_and(|g| !g.is_match(rel))
                || exclude.as_ref().is_some_and(|g| g.is_match(rel))
            {
                continue;
            }
            self.owned[i] = true;
            out.push(obj.clone());
        }
        out
    }

    fn render_unit(&mut self, mut unit: Unit, at: Span, out: &mut Rendered) {
        out.sources.push(unit.describe());
        if let Unit::Helm(h) = &mut unit {
            // Argo passes the destination cluster's version and APIs unless the app sets
            // helm.kubeVersion / helm.apiVersions; Flux always the cluster's (catalog A2.2).
            if h.kube_version.is_none() {
                h.kube_version = self.profile.kube_version.clone();
            }
            if h.api_versions.is_empty() {
                h.api_versions = self.profile.api_versions.clone();
            }
        }
        match &unit {
            Unit::Kustomize(k) => {
                self.rendered_dirs.insert(k.dir.clone());
            }
            Unit::Helm(h) => {
                self.rendered_dirs.insert(h.chart_dir.clone());
            }
            _ => {}
        }
        match &unit {
            Unit::Directory {
                dir,
                recurse,
                include,
                exclude,
            } => {
                let objs = self.plain_in(dir, *recurse, include.as_deref(), exclude.as_deref());
                out.objects.extend(objs);
            }
            Unit::FluxDirectory { dir } => {
                // Sub-directories with their own kustomization are built as such.
                let nested: Vec<String> = self
                    .layout
                    .kustomizations
                    .iter()
                    .filter(|k| under(k, dir) && *k != dir)
                    .filter(|k| {
                        !self
                            .layout
                            .kustomizations
                            .iter()
                            .any(|o| o != *k && under(k, o) && under(o, dir) && o != dir)
                    })
                    .cloned()
                    .collect();
                let objs = self.plain_in(dir, true, None, None);
                out.objects.extend(objs);
                for k in nested {
                    let u = Unit::Kustomize(KustomizeUnit {
                        dir: k,
                        flux: true,
                        argo_options: None,
                    });
                    let r = units::render(&u, self.fs, at, &self.budget);
                    out.objects.extend(r.objects);
                    out.issues.extend(r.issues);
                }
            }
            Unit::Kustomize(_) => {
                let r = units::render(&unit, self.fs, at, &self.budget);
                out.objects.extend(r.objects);
                out.issues.extend(r.issues);
            }
            Unit::Helm(h) => {
                let r = units::render(&unit, self.fs, at, &self.budget);
                if r.issues.is_empty() && self.budget.render_twice {
                    // The same commit, another seed, clock and zone: what changes is not Git.
                    let again = units::render_helm_with_other_clock(h, self.fs, at, &self.budget);
                    if again.issues.is_empty() {
                        out.differences
                            .extend(super::twice::compare(&r.objects, &again.objects));
                    }
                }
                out.objects.extend(r.objects);
                out.issues.extend(r.issues);
            }
        }
    }

    /// A Flux Kustomization with overlay options: the kustomization at the path (or the one
    /// the controller generates) with the options written into it (catalog A4.1).
    fn render_flux_overlay(&mut self, dir: &str, spec: &Node, out: &mut Rendered) {
        use super::flux_overlay::{GeneratedFs, generated_kustomization, overlay};
        use crate::render::kustomize::{self, BuildOptions, LoadRestrictions};
        // The repo's `limits:` apply here as to every other kustomize build.
        let opts = BuildOptions {
            load_restrictions: LoadRestrictions::None,
            max_resources: self.budget.max_kustomize_resources,
            max_depth: self.budget.max_kustomize_depth,
            deadline: Some(self.budget.deadline()),
        };
        self.rendered_dirs.insert(dir.to_string());
        let shown = if dir.is_empty() { "." } else { dir };
        // A component is a directory relative to the kustomization (remote ones are kept:
        // the build reports them).
        let fs = self.fs;
        let component_exists = |path: &str| {
            path.contains("://")
                || normalize_relative(&if dir.is_empty() {
                    path.to_string()
                } else {
                    format!("{dir}/{path}")
                })
                .is_some_and(|p| fs.is_dir(&p))
        };
        let r = if self.layout.kustomizations.contains(dir) {
            out.sources
                .push(format!("kustomize {shown} (flux overlay)"));
            let base = read_kustomization(self.fs, dir);
            kustomize::build_with_kustomization(
                self.fs,
                dir,
                overlay(base, spec, &component_exists),
                &opts,
            )
        } else {
            // The generated kustomization lists the plain files: they are this app's.
            self.plain_in(dir, true, None, None);
            out.sources
                .push(format!("directory {shown} (flux, generated kustomization)"));
            let text = generated_kustomization(self.fs, dir, &self.layout.kustomizations);
            let gfs = GeneratedFs::new(self.fs, dir, text);
            kustomize::build_with_kustomization(
                &gfs,
                dir,
                overlay(gfs.root(), spec, &component_exists),
                &opts,
            )
        };
        out.objects.extend(r.objects);
        out.issues.extend(r.issues);
    }

    /// The unit an Argo source path renders as (catalog A2.1: explicit block, else discovery).
    fn argo_unit(
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

/// Argo CD's helm invocation for a source (catalog A2.2).
fn argo_helm_unit(
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
    if let Some(obj) = h("valuesObject") {
        inline_values.push(obj.clone());
    } else if let Some(v) = h("values") {
        inline_values.push(v.clone());
    }
    let parameters = h("parameters")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| {
            Some((
                p.get("name")?.scalar_text()?,
                p.get("value")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default(),
                p.get("forceString").and_then(Node::as_bool) == Some(true),
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
        values_layers: vec![],
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

fn new_app(name: String, kind: AppKind, span: Option<Span>) -> App {
    App {
        name,
        kind,
        argo: None,
        flux: None,
        sources: Vec::new(),
        destination_namespace: None,
        objects: Vec::new(),
        issues: Vec::new(),
        render_differences: Vec::new(),
        span,
        parent: None,
    }
}

/// Renders Go templates for ApplicationSets with `goTemplate: true`.
pub type GoTemplateFn<'a> = Option<&'a dyn Fn(&str, &serde_json::Value) -> Result<String, String>>;

/// What the model needs besides the files: from `.gitops-lint.yaml` and the command line.
pub struct ModelSettings<'a> {
    /// URLs that mean "this repository" in Application sources.
    pub repo_urls: &'a [String],
    /// Limits of each render.
    pub budget: &'a RenderBudget,
    /// The destination cluster (`profile:`): Helm's `.Capabilities` unless an app pins them.
    pub profile: &'a Profile,
}

pub fn build_model(
    files: &[LoadedFile],
    fs: &dyn RepoFs,
    map: Arc<SourceMap>,
    root: &Path,
    settings: &ModelSettings,
) -> Model {
    build_model_with(
        files,
        fs,
        map,
        root,
        settings,
        Some(&super::gotemplate::render),
    )
}

pub fn build_model_with(
    files: &[LoadedFile],
    fs: &dyn RepoFs,
    map: Arc<SourceMap>,
    root: &Path,
    settings: &ModelSettings,
    go_template: GoTemplateFn,
) -> Model {
    let (repo_urls, budget, profile) = (settings.repo_urls, settings.budget, settings.profile);
    let layout = Layout::of(files);
    let mut plain: Vec<(Object, String)> = Vec::new();
    for f in files {
        if layout.is_render_input(&f.path) {
            continue;
        }
        for doc in &f.docs {
            if let Some(obj) = Object::from_node(doc.root.clone()) {
                plain.push((obj, f.path.clone()));
            }
        }
    }
    let owned = vec![false; plain.len()];
    let mut ctx = Ctx {
        layout,
        identity: RepoIdentity {
            urls: git_remotes(root)
                .iter()
                .chain(repo_urls)
                .map(|u| normalize_url(u))
                .collect(),
        },
        fs,
        plain,
        owned,
        rendered_dirs: BTreeSet::new(),
        budget: budget.clone(),
        profile,
    };
    let mut model = Model {
        map: map.clone(),
        apps: Vec::new(),
        objects: Vec::new(),
        argo: Default::default(),
        platform: Default::default(),
        profile: profile.clone(),
    };
    for (obj, _) in &ctx.plain {
        if argo::is_argocd_cm(obj) {
            model.argo = argo::read_argocd_cm(obj, &model.map);
        }
    }
    let tree_files: Vec<(FileId, String)> = files.iter().map(|f| (f.id, f.path.clone())).collect();
    let declared: Vec<Object> = ctx.plain.iter().map(|(o, _)| o.clone()).collect();
    let find_object = |kind: &str, ns: &str, name: &str| {
        declared
            .iter()
            .find(|o| {
                o.kind == kind && o.name == name && o.namespace.as_deref().unwrap_or(ns) == ns
            })
            .cloned()
    };

    // (app, rendered objects, default namespace override)
    let mut pending: Vec<(App, Rendered, Option<String>)> = Vec::new();
    // The Application / ApplicationSet each pending app was read from (app-of-apps).
    let mut origins: Vec<Option<Origin>> = Vec::new();
    for obj in &declared {
        let before = pending.len();
        if argo::is_argo_app(obj) {
            if let Some(spec) = obj.root.get("spec") {
                pending.push(argo_app(
                    &mut ctx,
                    obj,
                    obj.name.clone(),
                    spec,
                    AppKind::Argo,
                ));
            }
        } else if argo::is_argo_appset(obj) {
            let tree = RepoTree {
                files: &tree_files,
                map: &map,
            };
            pending.extend(appset_apps(&mut ctx, obj, &tree, go_template));
        } else if flux::is_flux_kustomization(obj) {
            pending.push(flux_kustomization(&mut ctx, obj, &find_object));
        } else if flux::is_helm_release(obj) {
            pending.push(helm_release(&mut ctx, obj, &declared, &find_object));
        }
        let origin = (argo::is_argo_app(obj) || argo::is_argo_appset(obj)).then(|| Origin::of(obj));
        origins.resize(before, None);
        origins.resize(pending.len(), origin);
    }

    let tree = RepoTree {
        files: &tree_files,
        map: &map,
    };
    super::app_of_apps::expand(&mut pending, origins, |obj| {
        if argo::is_argo_app(obj) {
            obj.root
                .get("spec")
                .map(|spec| {
                    vec![argo_app(
                        &mut ctx,
                        obj,
                        obj.name.clone(),
                        spec,
                        AppKind::Argo,
                    )]
                })
                .unwrap_or_default()
        } else {
            appset_apps(&mut ctx, obj, &tree, go_template)
        }
    });

    // Standalone: unreferenced kustomizations and charts, then loose manifests per directory.
    let standalone_kustomize: Vec<String> = ctx
        .layout
        .kustomizations
        .iter()
        .filter(|d| {
            !ctx.layout.referenced.contains(*d) && !ctx.layout.charts.iter().any(|c| under(d, c))
        })
        .filter(|d| !ctx.rendered_dirs.contains(*d))
        .cloned()
        .collect();
    let standalone_charts: Vec<String> = ctx
        .layout
        .charts
        .iter()
        .filter(|d| !ctx.layout.charts.iter().any(|c| c != *d && under(d, c)))
        .filter(|d| !ctx.rendered_dirs.contains(*d))
        .cloned()
        .collect();
    for dir in standalone_kustomize {
        let mut r = Rendered::default();
        let at = kustomization_span(files, &dir);
        ctx.render_unit(
            Unit::Kustomize(KustomizeUnit {
                dir: dir.clone(),
                flux: false,
                argo_options: None,
            }),
            at,
            &mut r,
        );
        pending.push((
            new_app(
                if dir.is_empty() { ".".into() } else { dir },
                AppKind::Standalone,
                Some(at),
            ),
            r,
            None,
        ));
    }
    for dir in standalone_charts {
        let mut r = Rendered::default();
        let at = files
            .iter()
            .find(|f| {
                f.path
                    == if dir.is_empty() {
                        "Chart.yaml".to_string()
                    } else {
                        format!("{dir}/Chart.yaml")
                    }
            })
            .map(|f| Span::new(f.id, 0, 0))
            .unwrap_or_default();
        let name = file_name(&dir).to_string();
        let unit = HelmUnit {
            chart_dir: dir.clone(),
            release_name: "release-name".into(),
            namespace: "default".into(),
            value_files: vec![],
            ignore_missing_value_files: false,
            inline_values: vec![],
            values_layers: vec![],
            parameters: vec![],
            skip_crds: false,
            kube_version: None,
            api_versions: vec![],
        };
        ctx.render_unit(Unit::Helm(unit), at, &mut r);
        pending.push((
            new_app(
                if name.is_empty() { ".".into() } else { name },
                AppKind::Standalone,
                Some(at),
            ),
            r,
            None,
        ));
    }
    let mut by_dir: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (_, file)) in ctx.plain.iter().enumerate() {
        if !ctx.owned[i] {
            by_dir.entry(dir_of(file).to_string()).or_default().push(i);
        }
    }
    for (dir, indices) in by_dir {
        let mut r = Rendered {
            sources: vec![format!(
                "directory {}",
                if dir.is_empty() { "." } else { &dir }
            )],
            ..Default::default()
        };
        r.objects = indices.iter().map(|&i| ctx.plain[i].0.clone()).collect();
        pending.push((
            new_app(
                if dir.is_empty() { ".".into() } else { dir },
                AppKind::Standalone,
                None,
            ),
            r,
            None,
        ));
    }

    for (mut app, rendered, ns_override) in pending {
        let index = model.apps.len();
        app.issues.extend(rendered.issues);
        app.sources.extend(rendered.sources);
        app.render_differences.extend(rendered.differences);
        for obj in rendered.objects {
            let namespace = if obj.is_cluster_scoped() {
                String::new()
            } else {
                ns_override
                    .clone()
                    .or_else(|| obj.namespace.clone())
                    .or_else(|| app.destination_namespace.clone())
                    .unwrap_or_else(|| "default".into())
            };
            app.objects.push(model.objects.len());
            model.objects.push(ModelObject {
                object: obj,
                app: index,
                namespace,
            });
        }
        model.apps.push(app);
    }
    model
}

/// The Applications an ApplicationSet generates (or, when nothing expands, an app that
/// carries the expansion problems).
fn appset_apps(
    ctx: &mut Ctx,
    obj: &Object,
    tree: &RepoTree,
    go_template: GoTemplateFn,
) -> Vec<(App, Rendered, Option<String>)> {
    let exp = appset::expand(obj, tree, go_template);
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
        out.push((app, r, ns));
    }
    if out.is_empty() && !exp.issues.is_empty() {
        let mut app = new_app(obj.name.clone(), AppKind::ArgoAppSet, Some(obj.span()));
        app.issues = exp.issues;
        out.push((app, Rendered::default(), None));
    }
    out
}

fn kustomization_span(files: &[LoadedFile], dir: &str) -> Span {
    files
        .iter()
        .find(|f| dir_of(&f.path) == dir && is_kustomization_file(&f.path))
        .map(|f| Span::new(f.id, 0, 0))
        .unwrap_or_default()
}

fn argo_app(
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
    let mut argo_app = argo::read_app_spec(obj, spec, kind == AppKind::ArgoAppSet, reads_enabled);
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
                .is_this_repo(src.repo_url.as_deref(), probe.as_deref(), ctx.fs);
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
        if let Some(chart) = &src.chart {
            rendered.sources.push(format!("chart {chart}"));
            rendered.issues.push(RenderIssue { kind: IssueKind::Unrenderable, span: src.node.get("chart").map(|n| n.span).unwrap_or(at), message: format!("chart `{chart}` comes from a Helm repository ({}) and is not vendored in this repository", src.repo_url.as_deref().unwrap_or("?")) });
            continue;
        }
        let Some(raw_path) = src.path.as_deref() else {
            continue;
        };
        if !ctx
            .identity
            .is_this_repo(src.repo_url.as_deref(), Some(raw_path), ctx.fs)
        {
            rendered.sources.push(format!(
                "external {}",
                src.repo_url.as_deref().unwrap_or("?")
            ));
            continue;
        }
        let Some(path) = normalize_relative(raw_path) else {
            rendered.issues.push(RenderIssue {
                kind: IssueKind::Failed,
                span: at,
                message: format!("source path `{raw_path}` leaves the repository"),
            });
            continue;
        };
        if !ctx.fs.is_dir(&path) {
            rendered.issues.push(RenderIssue {
                kind: IssueKind::Failed,
                span: at,
                message: format!("app path does not exist: `{raw_path}`"),
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
                span: at,
                message,
            }),
        }
    }
    app.argo = Some(argo_app);
    (app, rendered, None)
}

/// The parsed kustomization file of `dir` (null when it cannot be read; the build reports it).
fn read_kustomization(fs: &dyn RepoFs, dir: &str) -> Node {
    let null = || Node::new(crate::yaml::Value::Null, Span::default());
    let Some(path) = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .map(|n| {
            if dir.is_empty() {
                n.to_string()
            } else {
                format!("{dir}/{n}")
            }
        })
        .find(|p| fs.is_file(p))
    else {
        return null();
    };
    let Ok(id) = fs.read(&path) else {
        return null();
    };
    let text = fs.source_map().get(id).text.clone();
    crate::yaml::parse_str(&text, id, &crate::yaml::Limits::default())
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .unwrap_or_else(null)
}

/// The `$ref/path` value files of a multi-source app: (ref name, repo-relative directory of
/// the file), for deciding whether a `ref` source is this repository (catalog A1.9).
fn ref_value_files(sources: &[ArgoSource]) -> Vec<(String, String)> {
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

/// A Flux GitRepository is this repo when its URL matches, or (no URL known) when the path
/// that uses it exists (catalog A1.9).
fn flux_source_is_local(
    ctx: &Ctx,
    spec: &Node,
    path: &str,
    find: &dyn Fn(&str, &str, &str) -> Option<Object>,
    ns: &str,
) -> Result<(), String> {
    let kind = spec
        .get_path(&["sourceRef", "kind"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let name = spec
        .get_path(&["sourceRef", "name"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    if kind != "GitRepository" {
        return Err(format!(
            "source {kind}/{name} is an artifact the linter does not fetch"
        ));
    }
    let src_ns = spec
        .get_path(&["sourceRef", "namespace"])
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.to_string());
    let url = find("GitRepository", &src_ns, &name).and_then(|g| {
        g.root
            .get_path(&["spec", "url"])
            .and_then(Node::scalar_text)
    });
    if ctx
        .identity
        .is_this_repo(url.as_deref(), Some(path), ctx.fs)
    {
        Ok(())
    } else {
        Err(format!(
            "GitRepository {src_ns}/{name} is not this repository"
        ))
    }
}

fn flux_kustomization(
    ctx: &mut Ctx,
    obj: &Object,
    find: &dyn Fn(&str, &str, &str) -> Option<Object>,
) -> (App, Rendered, Option<String>) {
    let mut app = new_app(
        obj.name.clone(),
        AppKind::FluxKustomization,
        obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
    );
    let mut fx = FluxApp::read(obj);
    let mut rendered = Rendered::default();
    let ns = obj
        .namespace
        .clone()
        .unwrap_or_else(|| "flux-system".into());
    let Some(spec) = obj.root.get("spec") else {
        return (app, rendered, None);
    };
    let raw_path = spec
        .get("path")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| "./".into());
    let at = spec.get("path").map(|n| n.span).unwrap_or(obj.span());
    let target_ns = spec.get("targetNamespace").and_then(Node::scalar_text);
    app.destination_namespace = target_ns.clone();
    match normalize_relative(&raw_path) {
        None => rendered.issues.push(RenderIssue {
            kind: IssueKind::Failed,
            span: at,
            message: format!("spec.path `{raw_path}` leaves the repository"),
        }),
        Some(path) => match flux_source_is_local(ctx, spec, &path, find, &ns) {
            Err(msg) => rendered.sources.push(format!("external ({msg})")),
            Ok(()) if !ctx.fs.is_dir(&path) => rendered.issues.push(RenderIssue {
                kind: IssueKind::Failed,
                span: at,
                message: format!("kustomization path not found: `{raw_path}`"),
            }),
            Ok(()) if super::flux_overlay::has_overlay(spec) => {
                ctx.render_flux_overlay(&path, spec, &mut rendered)
            }
            Ok(()) => {
                let unit = if ctx.layout.kustomizations.contains(&path) {
                    Unit::Kustomize(KustomizeUnit {
                        dir: path,
                        flux: true,
                        argo_options: None,
                    })
                } else {
                    Unit::FluxDirectory { dir: path }
                };
                ctx.render_unit(unit, at, &mut rendered);
            }
        },
    }
    // postBuild substitution on the built objects.
    let (vars, missing) = flux::post_build_vars(spec, |kind, name| find(kind, &ns, name));
    for (span, message) in missing {
        rendered.issues.push(RenderIssue {
            kind: IssueKind::Unrenderable,
            span,
            message,
        });
    }
    if spec.get("postBuild").is_some() {
        let strategy_always = spec
            .get_path(&["postBuild", "substituteStrategy"])
            .and_then(Node::as_str)
            == Some("Always");
        if vars.is_empty() && !strategy_always {
            fx.substitution_skipped = true;
        }
        for o in &mut rendered.objects {
            let disabled = o.label("kustomize.toolkit.fluxcd.io/substitute") == Some("disabled")
                || o.annotation("kustomize.toolkit.fluxcd.io/substitute") == Some("disabled");
            if disabled || fx.substitution_skipped {
                continue;
            }
            envsubst::substitute_node(&mut o.root, &vars, &mut fx.subst_problems);
            if let Some(re) = Object::from_node(o.root.clone()) {
                *o = re;
            }
        }
    }
    for o in &mut rendered.objects {
        super::flux_overlay::apply_common_metadata(o, spec);
    }
    app.flux = Some(fx);
    (app, rendered, target_ns)
}

fn helm_release(
    ctx: &mut Ctx,
    obj: &Object,
    declared: &[Object],
    find: &dyn Fn(&str, &str, &str) -> Option<Object>,
) -> (App, Rendered, Option<String>) {
    let mut app = new_app(
        obj.name.clone(),
        AppKind::FluxHelmRelease,
        obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
    );
    app.flux = Some(FluxApp::read(obj));
    let mut rendered = Rendered::default();
    let ns = obj
        .namespace
        .clone()
        .unwrap_or_else(|| "flux-system".into());
    let Some(spec) = obj.root.get("spec") else {
        return (app, rendered, None);
    };
    let target_ns = spec.get("targetNamespace").and_then(Node::scalar_text);
    let release_ns = target_ns.clone().unwrap_or_else(|| ns.clone());
    app.destination_namespace = Some(release_ns.clone());
    // `chart.spec` (a HelmChart template) or `chartRef` to a HelmChart declared in the repo,
    // which has the same fields (catalog A4.3).
    let chart_ref = spec
        .get_path(&["chart", "spec"])
        .is_none()
        .then(|| chart_ref_spec(spec, find, &ns))
        .flatten();
    let chart_source_ns = chart_ref
        .as_ref()
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| ns.clone());
    let chart_spec = spec
        .get_path(&["chart", "spec"])
        .or_else(|| chart_ref.as_ref().and_then(|(c, _)| c.root.get("spec")));
    let at = chart_spec
        .and_then(|c| c.get("chart"))
        .map(|n| n.span)
        .unwrap_or(obj.span());
    let Some(chart) = chart_spec
        .and_then(|c| c.get("chart"))
        .and_then(Node::scalar_text)
    else {
        let kind = spec
            .get_path(&["chartRef", "kind"])
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        rendered.sources.push(format!("chartRef {kind}"));
        rendered.issues.push(RenderIssue {
            kind: IssueKind::Unrenderable,
            span: spec.get("chartRef").map(|n| n.span).unwrap_or(obj.span()),
            message: format!(
                "spec.chartRef points at {} the linter does not fetch",
                if kind == "HelmChart" {
                    "a HelmChart that is not in the repository"
                } else {
                    "an OCI artifact or external artifact"
                }
            ),
        });
        return (app, rendered, None);
    };
    let chart_spec = chart_spec
        .cloned()
        .unwrap_or_else(|| Node::new(crate::yaml::Value::Null, at));
    let local = normalize_relative(&chart).filter(|p| {
        flux_source_is_local(ctx, &chart_spec, p, find, &chart_source_ns).is_ok()
            && ctx.fs.is_dir(p)
    });
    let Some(chart_dir) = local else {
        let src = chart_spec
            .get_path(&["sourceRef", "name"])
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        rendered.sources.push(format!("chart {chart}"));
        rendered.issues.push(RenderIssue {
            kind: IssueKind::Unrenderable,
            span: at,
            message: format!(
                "chart `{chart}` from source `{src}` is not vendored in this repository"
            ),
        });
        return (app, rendered, None);
    };
    let _ = declared;
    let (values_layers, value_issues) =
        super::values_from::flux_values(spec, &ns, find, ctx.fs.source_map());
    rendered.issues.extend(value_issues);
    let release_name = spec
        .get("releaseName")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| match &target_ns {
            Some(t) => format!("{t}-{}", obj.name),
            None => obj.name.clone(),
        });
    // chart.spec.valuesFiles: paths from the source's root (this repo), before valuesFrom.
    let ignore_missing = chart_spec
        .get("ignoreMissingValuesFiles")
        .and_then(Node::as_bool)
        == Some(true);
    let mut value_files = Vec::new();
    let mut missing_value_file = false;
    for v in chart_spec
        .get("valuesFiles")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let Some(text) = v.scalar_text() else {
            continue;
        };
        match normalize_relative(&text).filter(|p| ctx.fs.is_file(p)) {
            Some(p) => value_files.push((p, v.span)),
            None if ignore_missing => {}
            None => {
                missing_value_file = true;
                rendered.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    span: v.span,
                    message: format!(
                        "values file `{text}` does not exist in the chart source (set ignoreMissingValuesFiles to tolerate it)"
                    ),
                });
            }
        }
    }
    if missing_value_file {
        // helm-controller fails the chart build: nothing of this release is applied.
        rendered.sources.push(format!("helm {chart_dir}"));
        return (app, rendered, None);
    }
    let unit = HelmUnit {
        chart_dir,
        release_name,
        namespace: release_ns.clone(),
        value_files,
        ignore_missing_value_files: ignore_missing,
        inline_values: vec![],
        values_layers,
        parameters: vec![],
        skip_crds: false,
        kube_version: None,
        api_versions: vec![],
    };
    ctx.render_unit(Unit::Helm(unit), at, &mut rendered);
    // Helm's --namespace is a default: objects that name their namespace keep it.
    (app, rendered, None)
}

/// `spec.chartRef` to a HelmChart declared in the repo: the HelmChart and its namespace.
fn chart_ref_spec(
    spec: &Node,
    find: &dyn Fn(&str, &str, &str) -> Option<Object>,
    ns: &str,
) -> Option<(Object, String)> {
    let r = spec.get("chartRef")?;
    if r.get_str("kind") != Some("HelmChart") {
        return None;
    }
    let chart_ns = r
        .get("namespace")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.to_string());
    let chart = find("HelmChart", &chart_ns, r.get_str("name")?)?;
    Some((chart, chart_ns))
}

/// Argo's directory include/exclude: a glob, or `{a,b}` alternatives.
fn glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// `.argocd-source.yaml` then `.argocd-source-<app>.yaml` in the source path, merged into the
/// source as the repo-server does (JSON merge patch: maps merge, other values replace).
fn with_source_overrides(fs: &dyn RepoFs, path: &str, app: &str, src: &ArgoSource) -> ArgoSource {
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

fn merge_patch(base: &mut Node, patch: &Node) {
    use crate::yaml::{Entry, Value};
    let (Value::Map(b), Value::Map(p)) = (&mut base.value, &patch.value) else {
        *base = patch.clone();
        return;
    };
    for pe in p {
        let key = pe.key.key_str();
        match b.iter_mut().find(|e| e.key.key_str() == key) {
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
