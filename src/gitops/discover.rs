//! From parsed files to the app model: find the Argo CD and Flux apps and settings, decide
//! what each app renders (its units) and which objects it deploys, and gather the rest into
//! standalone apps (per directory, per unreferenced kustomization or chart).

use super::Skip;
use super::app_of_apps::{Origin, Pending};
use super::appset::{self, RepoTree};
use super::argo::{self, ArgoSource};
use super::artifact::{ArtifactFs, ArtifactTree};
use super::envsubst;
use super::flux::{self, FluxApp};
use super::remotes::Judgement;
use super::remotes::{IdentityRule, RepoIdentity, git_remotes};
use super::sourceignore::IgnoreRules;
use super::units::{self, HelmUnit, KustomizeUnit, Rendered, Unit};
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
    /// Kustomization references: (the directory that lists, the directory listed).
    edges: Vec<(String, String)>,
    /// Directories whose kustomization is a `kind: Component`: fragments, never built alone.
    components: BTreeSet<String>,
}

impl Layout {
    fn of(files: &[LoadedFile]) -> Layout {
        let mut charts = BTreeSet::new();
        let mut kustomizations = BTreeSet::new();
        let mut referenced = BTreeSet::new();
        let mut edges = Vec::new();
        let mut components = BTreeSet::new();
        for f in files {
            if file_name(&f.path) == "Chart.yaml" {
                charts.insert(dir_of(&f.path).to_string());
            } else if is_kustomization_file(&f.path) {
                let dir = dir_of(&f.path);
                kustomizations.insert(dir.to_string());
                let root = f.docs.first().map(|d| &d.root);
                if root.and_then(|r| r.get_str("kind")) == Some("Component") {
                    components.insert(dir.to_string());
                }
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
                            edges.push((dir.to_string(), n.clone()));
                            if n != dir {
                                referenced.insert(n);
                            }
                        }
                    }
                }
            } else {
                referenced.extend(f.docs.iter().flat_map(|d| flux_components(&d.root)));
            }
        }
        // A directory listed only by itself is not referenced (`resources: [.]`).
        Layout {
            charts,
            kustomizations,
            referenced,
            edges,
            components,
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
    /// Objects a Flux reference can name: those declared, then those apps render.
    catalog: Vec<Object>,
    /// ExternalArtifacts this repo's ArtifactGenerators build: (namespace, name) → the tree,
    /// or why it is not built.
    artifacts: BTreeMap<(String, String), Vec<(String, Result<Arc<ArtifactTree>, String>)>>,
    /// Copy operations that keep an artifact from being built, by artifact: reported as
    /// `render-failed` on the `from:` line for each app that consumes it.
    artifact_problems: BTreeMap<(String, String), Vec<(Span, String)>>,
    /// Every file of the repo, listed on first need (ignore rules, artifacts).
    all_files: Option<Vec<String>>,
    /// The file of the object being read: references resolve to the nearest declaration.
    near: String,
    /// GitRepository artifacts seen through ignore rules, by (namespace, name).
    git_trees: BTreeMap<(String, String), Option<Arc<ArtifactTree>>>,
}

impl Ctx<'_> {
    /// A declared or rendered object by kind, namespace (an object without one matches any)
    /// and name.
    /// Of several (one repo holding several clusters' configs), the one declared nearest
    /// to the file being read (`near`).
    fn find(&self, kind: &str, ns: &str, name: &str) -> Option<Object> {
        let map = self.fs.source_map();
        self.catalog
            .iter()
            .filter(|o| {
                o.kind == kind && o.name == name && o.namespace.as_deref().unwrap_or(ns) == ns
            })
            .min_by_key(|o| {
                std::cmp::Reverse(common_dirs(&map.get(o.span().file).path, &self.near))
            })
            .cloned()
    }

    fn all_files(&mut self) -> &[String] {
        if self.all_files.is_none() {
            self.all_files = Some(super::artifact::repo_files(self.fs));
        }
        self.all_files.as_deref().unwrap_or_default()
    }

    /// source-controller's ignore rules for a GitRepository that is this repo: defaults,
    /// `.sourceignore` files, `spec.ignore`.
    fn ignore_rules(&mut self, git: &Object) -> IgnoreRules {
        let mut rules = IgnoreRules::with_defaults();
        let fs = self.fs;
        for f in self.all_files().to_vec() {
            if f == ".sourceignore" || f.ends_with("/.sourceignore") {
                if let Ok(id) = fs.read(&f) {
                    let dir = f.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                    rules.add(&fs.source_map().get(id).text, dir);
                }
            }
        }
        if let Some(text) = git
            .root
            .get_path(&["spec", "ignore"])
            .and_then(Node::scalar_text)
        {
            rules.add(&text, "");
        }
        rules
    }

    /// The artifact of a GitRepository that is this repo, when ignore rules change what it
    /// holds (`spec.ignore` or a `.sourceignore`); `None`: the repo as it is.
    fn git_artifact(&mut self, git: &Object) -> Option<Arc<ArtifactTree>> {
        let key = (git.namespace.clone().unwrap_or_default(), git.name.clone());
        if let Some(t) = self.git_trees.get(&key) {
            return t.clone();
        }
        let has_rules = git.root.get_path(&["spec", "ignore"]).is_some()
            || self
                .all_files()
                .iter()
                .any(|f| f == ".sourceignore" || f.ends_with("/.sourceignore"));
        let tree = has_rules.then(|| {
            let rules = self.ignore_rules(git);
            Arc::new(ArtifactTree::filtered(self.all_files(), &rules))
        });
        self.git_trees.insert(key, tree.clone());
        tree
    }

    /// A GitRepository artifact for an ArtifactGenerator input (always through its rules).
    fn git_artifact_always(&mut self, git: &Object) -> Arc<ArtifactTree> {
        match self.git_artifact(git) {
            Some(t) => t,
            None => {
                let rules = IgnoreRules::with_defaults();
                Arc::new(ArtifactTree::filtered(self.all_files(), &rules))
            }
        }
    }

    /// Build this repo's ArtifactGenerators (source-watcher) into `artifacts`.
    fn build_artifacts(&mut self) {
        let gens: Vec<Object> = self
            .catalog
            .iter()
            .filter(|o| super::artifact::is_artifact_generator(o))
            .cloned()
            .collect();
        for g in gens {
            let ns = g.namespace.clone().unwrap_or_else(|| "default".into());
            let mut inputs: BTreeMap<String, Result<ArtifactTree, String>> = BTreeMap::new();
            for s in g
                .root
                .get_path(&["spec", "sources"])
                .and_then(Node::as_seq)
                .unwrap_or_default()
            {
                let alias = s
                    .get("alias")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default();
                let kind = s
                    .get("kind")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default();
                let name = s
                    .get("name")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default();
                let src_ns = s
                    .get("namespace")
                    .and_then(Node::scalar_text)
                    .unwrap_or_else(|| ns.clone());
                let input = if kind == "GitRepository" {
                    // Not declared here (bootstrap writes it at install): judged by path.
                    let git = self.find(&kind, &src_ns, &name);
                    let url = git.as_ref().and_then(|g| {
                        g.root
                            .get_path(&["spec", "url"])
                            .and_then(Node::scalar_text)
                    });
                    if self.identity.judge(url.as_deref(), Some(""), self.fs).local {
                        Ok(match &git {
                            Some(g) => (*self.git_artifact_always(g)).clone(),
                            None => ArtifactTree::filtered(
                                self.all_files(),
                                &IgnoreRules::with_defaults(),
                            ),
                        })
                    } else {
                        Err(format!(
                            "its input GitRepository {src_ns}/{name} is another repository"
                        ))
                    }
                } else {
                    Err(format!(
                        "its input {kind} {src_ns}/{name} is not fetched offline"
                    ))
                };
                inputs.insert(alias, input);
            }
            let files = self.all_files().to_vec();
            for out in super::artifact::generate(&g, &files, &|s: &Node| {
                let alias = s
                    .get("alias")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default();
                inputs
                    .get(&alias)
                    .cloned()
                    .unwrap_or_else(|| Err(format!("source alias `{alias}` is unknown")))
            }) {
                let key = (out.namespace, out.name);
                let value = match (out.external, out.problems.first()) {
                    (Some(why), _) => Err(why),
                    (None, Some((_, m))) => Err(format!("source-watcher fails to build it: {m}")),
                    (None, None) => Ok(Arc::new(out.tree)),
                };
                if !out.problems.is_empty() {
                    self.artifact_problems.insert(key.clone(), out.problems);
                }
                let decl = self.fs.source_map().get(g.span().file).path.clone();
                self.artifacts.entry(key).or_default().push((decl, value));
            }
        }
    }

    /// The ExternalArtifact (namespace, name) declared nearest to `near`.
    fn artifact(&self, ns: &str, name: &str) -> Option<Result<Arc<ArtifactTree>, String>> {
        self.artifacts
            .get(&(ns.to_string(), name.to_string()))?
            .iter()
            .min_by_key(|(decl, _)| std::cmp::Reverse(common_dirs(decl, &self.near)))
            .map(|(_, v)| v.clone())
    }

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

    fn render_unit(&mut self, unit: Unit, at: Span, out: &mut Rendered) {
        let fs = self.fs;
        self.render_unit_in(unit, fs, at, out)
    }

    /// Render a unit reading from `fs` (the repo, or an artifact built from it).
    fn render_unit_in(&mut self, mut unit: Unit, fs: &dyn RepoFs, at: Span, out: &mut Rendered) {
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
                    let r = units::render(&u, fs, at, &self.budget);
                    out.objects.extend(r.objects);
                    out.issues.extend(r.issues);
                }
            }
            Unit::Kustomize(_) => {
                let r = units::render(&unit, fs, at, &self.budget);
                out.objects.extend(r.objects);
                out.issues.extend(r.issues);
            }
            Unit::Helm(h) => {
                let r = units::render(&unit, fs, at, &self.budget);
                if r.issues.is_empty() && self.budget.render_twice {
                    // The same commit, another seed, clock and zone: what changes is not Git.
                    let again = units::render_helm_with_other_clock(h, fs, at, &self.budget);
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

    /// A Flux Kustomization over an artifact tree: the kustomization at the path (or the one
    /// the controller generates from the tree's files), with the Kustomization's options.
    fn render_flux_tree(
        &mut self,
        tree: &ArtifactTree,
        dir: &str,
        spec: &Node,
        out: &mut Rendered,
    ) {
        use super::flux_overlay::{GeneratedFs, generated_kustomization, overlay};
        use crate::render::kustomize::{self, BuildOptions, LoadRestrictions};
        let opts = BuildOptions {
            load_restrictions: LoadRestrictions::None,
            max_resources: self.budget.max_kustomize_resources,
            max_depth: self.budget.max_kustomize_depth,
            deadline: Some(self.budget.deadline()),
        };
        mark_tree(self, tree, dir);
        let afs = ArtifactFs {
            inner: self.fs,
            tree,
        };
        let kustomizations: BTreeSet<String> = tree
            .files
            .keys()
            .filter(|f| is_kustomization_file(f))
            .map(|f| dir_of(f).to_string())
            .collect();
        let shown = if dir.is_empty() { "." } else { dir };
        let component_exists = |path: &str| {
            path.contains("://")
                || normalize_relative(&if dir.is_empty() {
                    path.to_string()
                } else {
                    format!("{dir}/{path}")
                })
                .is_some_and(|p| afs.is_dir(&p))
        };
        let r = if kustomizations.contains(dir) {
            out.sources
                .push(format!("kustomize {shown} (flux artifact)"));
            let base = read_kustomization(&afs, dir);
            kustomize::build_with_kustomization(
                &afs,
                dir,
                overlay(base, spec, &component_exists),
                &opts,
            )
        } else {
            out.sources.push(format!(
                "directory {shown} (flux artifact, generated kustomization)"
            ));
            let text = generated_kustomization(&afs, dir, &kustomizations);
            let gfs = GeneratedFs::new(&afs, dir, text);
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
        let resolved = if let Some(rest) = text.strip_prefix('$') {
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
        generated_by: None,
        depends_on: Vec::new(),
        repository: None,
        skipped: Vec::new(),
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
        identity: RepoIdentity::new(&git_remotes(root), repo_urls),
        fs,
        plain,
        owned,
        rendered_dirs: BTreeSet::new(),
        budget: budget.clone(),
        profile,
        catalog: Vec::new(),
        artifacts: BTreeMap::new(),
        artifact_problems: BTreeMap::new(),
        all_files: None,
        near: String::new(),
        git_trees: BTreeMap::new(),
    };
    let mut model = Model {
        map: map.clone(),
        apps: Vec::new(),
        objects: Vec::new(),
        argo: Default::default(),
        platform: Default::default(),
        profile: profile.clone(),
    };
    if !ctx.identity.knows_urls() {
        // No remote and nothing configured: the repo's own declarations name it.
        for url in flux::bootstrap_urls(&ctx.plain) {
            ctx.identity.add(&url, IdentityRule::FluxBootstrap);
        }
        if let Some(url) = argo::majority_repo_url(&ctx.plain, ctx.fs) {
            ctx.identity.add(&url, IdentityRule::ArgoMajority);
        }
    }
    for (obj, _) in &ctx.plain {
        if argo::is_argocd_cm(obj) {
            model.argo = argo::read_argocd_cm(obj, &model.map);
        }
    }
    let tree_files: Vec<(FileId, String)> = files.iter().map(|f| (f.id, f.path.clone())).collect();
    let cluster_secrets: Vec<Object> = ctx
        .plain
        .iter()
        .map(|(o, _)| o)
        .filter(|o| appset::is_cluster_secret(o))
        .cloned()
        .collect();
    let declared: Vec<Object> = ctx.plain.iter().map(|(o, _)| o.clone()).collect();
    // What Flux references can name: declared objects first, then every object written in
    // a render input as it is (the ConfigMap a `substituteFrom` names often sits in a
    // kustomization another Kustomization builds).
    ctx.catalog = declared.clone();
    for f in files.iter().filter(|f| ctx.layout.is_render_input(&f.path)) {
        ctx.catalog.extend(
            f.docs
                .iter()
                .filter_map(|d| Object::from_node(d.root.clone())),
        );
    }
    ctx.build_artifacts();

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
                clusters: &cluster_secrets,
            };
            pending.extend(appset_apps(&mut ctx, obj, &tree, go_template));
        } else if flux::is_flux_kustomization(obj) {
            pending.push(flux_kustomization(&mut ctx, obj));
        } else if flux::is_helm_release(obj) {
            pending.push(helm_release(&mut ctx, obj));
        }
        let origin = (argo::is_argo_app(obj) || argo::is_argo_appset(obj)).then(|| Origin::of(obj));
        origins.resize(before, None);
        origins.resize(pending.len(), origin);
    }

    expand_flux(&mut ctx, &mut pending, false);
    let tree = RepoTree {
        files: &tree_files,
        map: &map,
        clusters: &cluster_secrets,
    };
    super::app_of_apps::expand(&mut pending, &mut origins, false, |obj| {
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
    let standalone_kustomize = standalone_kustomizations(&ctx.layout, &ctx.rendered_dirs);
    let standalone_charts: Vec<String> = ctx
        .layout
        .charts
        .iter()
        .filter(|d| !ctx.layout.charts.iter().any(|c| c != *d && under(d, c)))
        .filter(|d| !ctx.rendered_dirs.contains(*d))
        .cloned()
        .collect();
    // What each standalone app stands for, to drop it if an app found below renders it.
    let mut standalone_of: Vec<(usize, Result<String, Vec<usize>>)> = Vec::new();
    for dir in standalone_kustomize {
        standalone_of.push((pending.len(), Ok(dir.clone())));
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
        standalone_of.push((pending.len(), Ok(dir.clone())));
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
        standalone_of.push((pending.len(), Err(indices)));
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

    // Directories rendered from here on are rendered by apps found in standalone builds.
    let _before = std::mem::take(&mut ctx.rendered_dirs);
    expand_flux(&mut ctx, &mut pending, true);
    super::app_of_apps::expand(&mut pending, &mut origins, true, |obj| {
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
    // Every Flux object the repo declares is an app: one in a build that did not render
    // (a remote base, a broken fragment) is listed as written, not rendered.
    let known: Vec<FluxKey> = pending
        .iter()
        .filter_map(|(a, _, _)| a.flux.as_ref().map(|f| flux_key(&f.decl)))
        .collect();
    let unlisted: Vec<Object> = ctx
        .catalog
        .iter()
        .filter(|o| flux::is_flux_kustomization(o) || flux::is_helm_release(o))
        .filter(|o| !o.name.contains("${"))
        .filter(|o| !known.iter().any(|k| same_flux(k, &flux_key(o))))
        .cloned()
        .collect();
    for obj in unlisted {
        let kind = if flux::is_helm_release(&obj) {
            AppKind::FluxHelmRelease
        } else {
            AppKind::FluxKustomization
        };
        let mut app = new_app(
            obj.name.clone(),
            kind,
            obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
        );
        app.flux = Some(FluxApp::read(&obj));
        app.depends_on = flux::depends_on(&obj);
        let file = ctx.fs.source_map().get(obj.span().file).path.clone();
        app.skipped.push(Skip {
            reason: "parent-not-rendered",
            message: format!(
                "declared in {file}, which no rendered build deploys: listed as written, not rendered"
            ),
        });
        pending.push((app, Rendered::default(), None));
    }
    // A standalone directory that an app found inside a standalone build renders (the
    // Applications of an app-of-apps chart) is that app's, not an app of its own.
    let parents: BTreeSet<String> = pending
        .iter()
        .filter_map(|(a, _, _)| a.parent.clone())
        .collect();
    let superseded: BTreeSet<usize> = standalone_of
        .into_iter()
        .filter(|(i, what)| {
            !parents.contains(&pending[*i].0.name)
                && match what {
                    Ok(dir) => ctx.rendered_dirs.contains(dir),
                    Err(indices) => indices.iter().all(|&k| ctx.owned[k]),
                }
        })
        .map(|(i, _)| i)
        .collect();
    let pending: Vec<Pending> = pending
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !superseded.contains(i))
        .map(|(_, p)| p)
        .collect();
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

/// The kustomizations built as standalone apps: those no other kustomization lists and no
/// app renders, then one per group of kustomizations that only list each other (a cycle no
/// root reaches: its build reports the cycle, once, on the entry that closes it).
/// Components and directories inside charts are fragments, never built alone.
fn standalone_kustomizations(layout: &Layout, rendered: &BTreeSet<String>) -> Vec<String> {
    let listed_by_other: BTreeSet<&str> = layout
        .edges
        .iter()
        .filter(|(from, to)| from != to)
        .map(|(_, to)| to.as_str())
        .collect();
    let fragment =
        |d: &str| layout.components.contains(d) || layout.charts.iter().any(|c| under(d, c));
    let mut reached: BTreeSet<String> = rendered.clone();
    // Flux `spec.components` directories are reached through their Kustomization.
    reached.extend(
        layout
            .referenced
            .iter()
            .filter(|d| !listed_by_other.contains(d.as_str()))
            .cloned(),
    );
    let mut out = Vec::new();
    let mut queue: Vec<String> = Vec::new();
    for d in &layout.kustomizations {
        if !listed_by_other.contains(d.as_str()) && !layout.referenced.contains(d) {
            if !rendered.contains(d) && !fragment(d) {
                out.push(d.clone());
            }
            queue.push(d.clone());
        }
    }
    queue.extend(reached.iter().cloned());
    let reach = |queue: &mut Vec<String>, reached: &mut BTreeSet<String>| {
        while let Some(d) = queue.pop() {
            for (_, to) in layout.edges.iter().filter(|(from, _)| *from == d) {
                if reached.insert(to.clone()) {
                    queue.push(to.clone());
                }
            }
        }
    };
    for d in &queue {
        reached.insert(d.clone());
    }
    reach(&mut queue, &mut reached);
    for d in &layout.kustomizations {
        if reached.contains(d) || fragment(d) {
            continue;
        }
        out.push(d.clone());
        reached.insert(d.clone());
        let mut q = vec![d.clone()];
        reach(&mut q, &mut reached);
    }
    out
}

type FluxKey = (String, Option<String>, String);

fn flux_key(o: &Object) -> FluxKey {
    (o.kind.clone(), o.namespace.clone(), o.name.clone())
}

/// The same Flux object: kind and name, and the namespace when both name one.
fn same_flux(a: &FluxKey, b: &FluxKey) -> bool {
    a.0 == b.0
        && a.2 == b.2
        && match (&a.1, &b.1) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
}

/// Kustomizations deployed by Kustomizations form a tree (the `cluster-apps` layout): each
/// Flux Kustomization or HelmRelease in a Kustomization's build becomes an app of its own,
/// read from the built object (the parent's patches and substitution applied), with the
/// parent recorded. A child also declared as a plain file is read again from the build.
///
/// With `from_builds`, the parents are the standalone kustomize and Helm builds instead (an
/// archive of retired apps, a tree no root reaches): the Flux objects they hold are listed
/// as apps too, under the directory that holds them.
fn expand_flux(ctx: &mut Ctx, pending: &mut Vec<Pending>, from_builds: bool) {
    let mut keys: Vec<Option<FluxKey>> = pending
        .iter()
        .map(|(a, _, _)| a.flux.as_ref().map(|f| flux_key(&f.decl)))
        .collect();
    let mut parents: Vec<Option<usize>> = vec![None; pending.len()];
    let mut i = 0;
    while i < pending.len() {
        let is_parent = if from_builds {
            pending[i].0.kind == AppKind::Standalone
                && pending[i]
                    .1
                    .sources
                    .iter()
                    .any(|s| s.starts_with("kustomize ") || s.starts_with("helm "))
        } else {
            pending[i].0.kind == AppKind::FluxKustomization
        };
        if !is_parent {
            i += 1;
            continue;
        }
        let parent_ns = pending[i]
            .0
            .flux
            .as_ref()
            .and_then(|f| f.decl.namespace.clone());
        let default_ns = pending[i].2.clone().or(parent_ns);
        let children: Vec<Object> = pending[i]
            .1
            .objects
            .iter()
            .filter(|o| flux::is_flux_kustomization(o) || flux::is_helm_release(o))
            .cloned()
            .collect();
        for mut child in children {
            if child.namespace.is_none() {
                child.namespace = default_ns.clone();
            }
            let key = flux_key(&child);
            let at = child
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span)
                .unwrap_or(child.span());
            // A Kustomization that applies its own file (a bootstrap root) is not a child.
            if keys[i].as_ref().is_some_and(|k| same_flux(k, &key)) {
                continue;
            }
            let mut chain = Vec::new();
            let mut cur = parents[i];
            while let Some(p) = cur {
                if chain.contains(&p) {
                    break;
                }
                chain.push(p);
                cur = parents[p];
            }
            if chain
                .iter()
                .any(|&a| keys[a].as_ref().is_some_and(|k| same_flux(k, &key)))
            {
                let message = format!(
                    "Kustomization cycle: `{}` deploys its own ancestor `{}`",
                    pending[i].0.name, child.name
                );
                pending[i].1.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    span: at,
                    message,
                });
                continue;
            }
            let existing = (0..pending.len())
                .find(|&j| j != i && keys[j].as_ref().is_some_and(|k| same_flux(k, &key)));
            if let Some(j) = existing {
                let orphan = parents[j].is_none() && pending[j].0.parent.is_none();
                if orphan && !from_builds && !chain.contains(&j) {
                    // Declared as a file too: the built object is what the cluster gets.
                    let app = create_flux(ctx, &child);
                    pending[j] = app;
                    parents[j] = Some(i);
                }
                continue;
            }
            if chain.len() + 1 >= super::app_of_apps::MAX_DEPTH {
                pending[i].1.issues.push(RenderIssue {
                    kind: IssueKind::Unrenderable,
                    span: at,
                    message: format!(
                        "Kustomizations nested deeper than {} levels: `{}` is not rendered",
                        super::app_of_apps::MAX_DEPTH,
                        child.name
                    ),
                });
                continue;
            }
            let app = create_flux(ctx, &child);
            pending.push(app);
            keys.push(Some(key));
            parents.push(Some(i));
        }
        i += 1;
    }
    for (j, parent) in parents.iter().enumerate() {
        if let Some(p) = parent {
            pending[j].0.parent = Some(pending[*p].0.name.clone());
        }
    }
}

fn create_flux(ctx: &mut Ctx, obj: &Object) -> Pending {
    if flux::is_helm_release(obj) {
        helm_release(ctx, obj)
    } else {
        flux_kustomization(ctx, obj)
    }
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
        if let Some(chart) = &src.chart {
            rendered.sources.push(format!("chart {chart}"));
            app.skipped.push(Skip {
                reason: "remote-chart",
                message: format!(
                    "chart `{chart}` comes from the Helm repository {}",
                    src.repo_url.as_deref().unwrap_or("?")
                ),
            });
            rendered.issues.push(RenderIssue { kind: IssueKind::Unrenderable, span: src.node.get("chart").map(|n| n.span).unwrap_or(at), message: format!("chart `{chart}` comes from a Helm repository ({}) and is not vendored in this repository", src.repo_url.as_deref().unwrap_or("?")) });
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

/// What a Flux consumer reads: this repo as it is, or an artifact built from it (the
/// repo through its GitRepository's ignore rules, an ArtifactGenerator's output).
enum FluxView {
    Repo,
    Tree(Arc<ArtifactTree>),
}

/// How many leading directories two repo paths share.
fn common_dirs(a: &str, b: &str) -> usize {
    dir_of(a)
        .split('/')
        .zip(dir_of(b).split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

fn view_has_dir(ctx: &Ctx, view: &FluxView, path: &str) -> bool {
    match view {
        FluxView::Repo => ctx.fs.is_dir(path),
        FluxView::Tree(t) => t.is_dir(path),
    }
}

/// What an artifact build below `dir` takes from the repo is rendered: its kustomization
/// directories and plain files are not standalone apps.
fn mark_tree(ctx: &mut Ctx, tree: &ArtifactTree, dir: &str) {
    for d in tree.repo_dirs_under(dir) {
        if ctx.layout.kustomizations.contains(&d) || ctx.layout.charts.contains(&d) {
            ctx.rendered_dirs.insert(d);
        }
    }
    let files: BTreeSet<&str> = tree.repo_files_under(dir).into_iter().collect();
    for (i, (_, file)) in ctx.plain.iter().enumerate() {
        if files.contains(file.as_str()) {
            ctx.owned[i] = true;
        }
    }
}

/// The copy operations that keep the ExternalArtifact a `sourceRef`/`chartRef` names from
/// being built, as `render-failed` issues on their `from:` lines.
fn artifact_failures(ctx: &Ctx, r: Option<&Node>, ns: &str) -> Vec<RenderIssue> {
    let Some(r) = r.filter(|r| r.get_str("kind") == Some("ExternalArtifact")) else {
        return Vec::new();
    };
    let name = r
        .get("name")
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let rns = r
        .get("namespace")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.to_string());
    ctx.artifact_problems
        .get(&(rns, name))
        .map(|ps| {
            ps.iter()
                .map(|(span, m)| RenderIssue {
                    kind: IssueKind::Failed,
                    span: *span,
                    message: format!("ArtifactGenerator copy fails: {m}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The source a Flux `sourceRef` names (catalog A1.9, A4): this repo (by URL, else by the
/// path existing), an artifact built from it, or something the linter does not fetch.
fn flux_source(
    ctx: &mut Ctx,
    spec: &Node,
    path: &str,
    ns: &str,
) -> (Result<FluxView, Skip>, Option<Judgement>) {
    let kind = spec
        .get_path(&["sourceRef", "kind"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let name = spec
        .get_path(&["sourceRef", "name"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let src_ns = spec
        .get_path(&["sourceRef", "namespace"])
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.to_string());
    match kind.as_str() {
        "GitRepository" => {
            let git = ctx.find("GitRepository", &src_ns, &name);
            let url = git.as_ref().and_then(|g| {
                g.root
                    .get_path(&["spec", "url"])
                    .and_then(Node::scalar_text)
            });
            let judgement = ctx.identity.judge(url.as_deref(), Some(path), ctx.fs);
            if !judgement.local {
                let skip = Skip {
                    reason: "external-source",
                    message: format!(
                        "GitRepository {src_ns}/{name} ({}) is another repository; the linter does not fetch it",
                        url.as_deref().unwrap_or("no URL")
                    ),
                };
                return (Err(skip), Some(judgement));
            }
            let view = match git.as_ref().and_then(|g| ctx.git_artifact(g)) {
                Some(tree) => FluxView::Tree(tree),
                None => FluxView::Repo,
            };
            (Ok(view), Some(judgement))
        }
        "ExternalArtifact" => match ctx.artifact(&src_ns, &name) {
            Some(Ok(tree)) => (Ok(FluxView::Tree(tree)), None),
            Some(Err(why)) => {
                let failed = ctx
                    .artifact_problems
                    .contains_key(&(src_ns.clone(), name.clone()));
                (
                    Err(Skip {
                        reason: if failed {
                            "render-failed"
                        } else {
                            "external-source"
                        },
                        message: format!("ExternalArtifact {src_ns}/{name}: {why}"),
                    }),
                    None,
                )
            }
            None => (
                Err(Skip {
                    reason: "external-source",
                    message: format!(
                        "ExternalArtifact {src_ns}/{name} is produced outside this repository; the linter does not fetch it"
                    ),
                }),
                None,
            ),
        },
        _ => {
            let url = ctx.find(&kind, &src_ns, &name).and_then(|o| {
                o.root
                    .get_path(&["spec", "url"])
                    .and_then(Node::scalar_text)
            });
            (
                Err(Skip {
                    reason: "external-source",
                    message: format!(
                        "source {kind}/{name}{} is an artifact the linter does not fetch",
                        url.map(|u| format!(" ({u})")).unwrap_or_default()
                    ),
                }),
                None,
            )
        }
    }
}

fn flux_kustomization(ctx: &mut Ctx, obj: &Object) -> (App, Rendered, Option<String>) {
    let mut app = new_app(
        obj.name.clone(),
        AppKind::FluxKustomization,
        obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
    );
    let mut fx = FluxApp::read(obj);
    app.depends_on = flux::depends_on(obj);
    ctx.near = ctx.fs.source_map().get(obj.span().file).path.clone();
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
        Some(path) => match flux_source(ctx, spec, &path, &ns) {
            (Err(skip), judgement) => {
                app.repository = judgement;
                if skip.reason == "render-failed" {
                    rendered
                        .sources
                        .push(format!("artifact ({})", skip.message));
                } else {
                    rendered
                        .sources
                        .push(format!("external ({})", skip.message));
                }
                rendered
                    .issues
                    .extend(artifact_failures(ctx, spec.get("sourceRef"), &ns));
                app.skipped.push(skip);
            }
            (Ok(view), judgement) if !view_has_dir(ctx, &view, &path) => {
                app.repository = judgement;
                rendered.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    span: at,
                    message: format!("kustomization path not found: `{raw_path}`"),
                })
            }
            (Ok(FluxView::Tree(tree)), judgement) => {
                app.repository = judgement;
                ctx.render_flux_tree(&tree, &path, spec, &mut rendered)
            }
            (Ok(FluxView::Repo), judgement) if super::flux_overlay::has_overlay(spec) => {
                app.repository = judgement;
                ctx.render_flux_overlay(&path, spec, &mut rendered)
            }
            (Ok(FluxView::Repo), judgement) => {
                app.repository = judgement;
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
    let (vars, missing) = flux::post_build_vars(spec, |kind, name| ctx.find(kind, &ns, name));
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

fn helm_release(ctx: &mut Ctx, obj: &Object) -> (App, Rendered, Option<String>) {
    let mut app = new_app(
        obj.name.clone(),
        AppKind::FluxHelmRelease,
        obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
    );
    app.flux = Some(FluxApp::read(obj));
    app.depends_on = flux::depends_on(obj);
    ctx.near = ctx.fs.source_map().get(obj.span().file).path.clone();
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
    // `chart.spec` (a HelmChart template), or `chartRef` to a HelmChart (same fields), an
    // OCIRepository or an ExternalArtifact (catalog A4.3).
    let chart_ref = spec.get("chartRef");
    let ref_kind = chart_ref
        .and_then(|r| r.get("kind"))
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let ref_name = chart_ref
        .and_then(|r| r.get("name"))
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let ref_ns = chart_ref
        .and_then(|r| r.get("namespace"))
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.clone());
    let ref_span = chart_ref.map(|n| n.span).unwrap_or(obj.span());
    let not_fetched =
        |app: &mut App, rendered: &mut Rendered, span: Span, chart: String, why: String| {
            rendered.sources.push(format!("chart {chart}"));
            app.skipped.push(Skip {
                reason: "remote-chart",
                message: format!("chart {chart} {why}"),
            });
            rendered.issues.push(RenderIssue {
                kind: IssueKind::Unrenderable,
                span,
                message: format!("chart {chart} {why}; the linter does not fetch charts"),
            });
        };
    let helm_chart = (spec.get_path(&["chart", "spec"]).is_none() && ref_kind == "HelmChart")
        .then(|| ctx.find("HelmChart", &ref_ns, &ref_name))
        .flatten();
    let (chart_spec, chart_source_ns) = match (spec.get_path(&["chart", "spec"]), &helm_chart) {
        (Some(c), _) => (c.clone(), ns.clone()),
        (None, Some(hc)) => match hc.root.get("spec") {
            Some(c) => (c.clone(), ref_ns.clone()),
            None => return (app, rendered, None),
        },
        (None, None) if ref_kind == "ExternalArtifact" => {
            // The artifact is the chart: rendered when this repo builds it.
            let Some(Ok(tree)) = ctx.artifact(&ref_ns, &ref_name) else {
                not_fetched(
                    &mut app,
                    &mut rendered,
                    ref_span,
                    format!("from ExternalArtifact {ref_ns}/{ref_name}"),
                    "is produced outside this repository".into(),
                );
                return (app, rendered, None);
            };
            let unit = flux_helm_unit(obj, spec, &ns, String::new(), vec![], ctx, &mut rendered);
            let afs = ArtifactFs {
                inner: ctx.fs,
                tree: &tree,
            };
            if !afs.is_file("Chart.yaml") {
                rendered.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    span: ref_span,
                    message: format!(
                        "ExternalArtifact {ref_ns}/{ref_name} holds no Chart.yaml at its root"
                    ),
                });
                return (app, rendered, None);
            }
            mark_tree(ctx, &tree, "");
            ctx.render_unit_in(Unit::Helm(unit), &afs, ref_span, &mut rendered);
            return (app, rendered, None);
        }
        (None, None) => {
            let chart = if ref_kind == "OCIRepository" {
                let oci = ctx.find("OCIRepository", &ref_ns, &ref_name);
                let url = oci
                    .as_ref()
                    .and_then(|o| o.root.get_path(&["spec", "url"]))
                    .and_then(Node::scalar_text)
                    .unwrap_or_else(|| "?".into());
                let r = |k: &str| {
                    oci.as_ref()
                        .and_then(|o| o.root.get_path(&["spec", "ref", k]))
                        .and_then(Node::scalar_text)
                };
                let version = r("digest")
                    .map(|d| format!("@{d}"))
                    .or_else(|| r("tag").map(|t| format!(":{t}")))
                    .or_else(|| r("semver").map(|t| format!(" {t}")))
                    .unwrap_or_default();
                format!("{url}{version} (OCIRepository {ref_ns}/{ref_name})")
            } else {
                format!("from {ref_kind} {ref_ns}/{ref_name}")
            };
            let why = if ref_kind == "HelmChart" {
                "is a HelmChart that is not in the repository"
            } else {
                "is an OCI artifact"
            };
            not_fetched(&mut app, &mut rendered, ref_span, chart, why.into());
            return (app, rendered, None);
        }
    };
    let at = chart_spec
        .get("chart")
        .map(|n| n.span)
        .unwrap_or(obj.span());
    let Some(chart) = chart_spec.get("chart").and_then(Node::scalar_text) else {
        return (app, rendered, None);
    };
    let src_kind = chart_spec
        .get_path(&["sourceRef", "kind"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let src_name = chart_spec
        .get_path(&["sourceRef", "name"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    if src_kind == "HelmRepository" || normalize_relative(&chart).is_none() {
        let version = chart_spec
            .get("version")
            .and_then(Node::scalar_text)
            .unwrap_or_else(|| "*".into());
        let url = ctx
            .find("HelmRepository", &chart_source_ns, &src_name)
            .and_then(|o| {
                o.root
                    .get_path(&["spec", "url"])
                    .and_then(Node::scalar_text)
            })
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        not_fetched(
            &mut app,
            &mut rendered,
            at,
            format!("`{chart}` {version} from HelmRepository {chart_source_ns}/{src_name}{url}"),
            "is not vendored in this repository".into(),
        );
        return (app, rendered, None);
    }
    let chart_path = normalize_relative(&chart).unwrap_or_default();
    let view = match flux_source(ctx, &chart_spec, &chart_path, &chart_source_ns) {
        (Ok(view), judgement) => {
            app.repository = judgement;
            view
        }
        (Err(skip), judgement) => {
            app.repository = judgement;
            rendered.sources.push(format!("chart {chart}"));
            app.skipped.push(skip);
            return (app, rendered, None);
        }
    };
    if !view_has_dir(ctx, &view, &chart_path) {
        rendered.sources.push(format!("chart {chart}"));
        rendered.issues.push(RenderIssue {
            kind: IssueKind::Failed,
            span: at,
            message: format!("chart path `{chart}` does not exist in the source"),
        });
        return (app, rendered, None);
    }
    let base_fs = ctx.fs;
    let tree_fs;
    let fs: &dyn RepoFs = match &view {
        FluxView::Repo => base_fs,
        FluxView::Tree(tree) => {
            tree_fs = ArtifactFs {
                inner: base_fs,
                tree,
            };
            &tree_fs
        }
    };
    // chart.spec.valuesFiles: paths from the source's root, before valuesFrom.
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
        match normalize_relative(&text).filter(|p| fs.is_file(p)) {
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
        rendered.sources.push(format!("helm {chart_path}"));
        return (app, rendered, None);
    }
    let mut unit = flux_helm_unit(
        obj,
        spec,
        &ns,
        chart_path.clone(),
        value_files,
        ctx,
        &mut rendered,
    );
    unit.ignore_missing_value_files = ignore_missing;
    if let FluxView::Tree(tree) = &view {
        mark_tree(ctx, tree, &chart_path);
    }
    ctx.render_unit_in(Unit::Helm(unit), fs, at, &mut rendered);
    // Helm's --namespace is a default: objects that name their namespace keep it.
    (app, rendered, None)
}

/// helm-controller's install of a HelmRelease: release name (`<targetNamespace>-<name>`
/// unless set), namespace, `valuesFrom` and `values` as layers (catalog A4.3).
fn flux_helm_unit(
    obj: &Object,
    spec: &Node,
    ns: &str,
    chart_dir: String,
    value_files: Vec<(String, Span)>,
    ctx: &Ctx,
    rendered: &mut Rendered,
) -> HelmUnit {
    let find = |kind: &str, ns: &str, name: &str| ctx.find(kind, ns, name);
    let (values_layers, value_issues) =
        super::values_from::flux_values(spec, ns, &find, ctx.fs.source_map());
    rendered.issues.extend(value_issues);
    let target_ns = spec.get("targetNamespace").and_then(Node::scalar_text);
    let release_name = spec
        .get("releaseName")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| match &target_ns {
            Some(t) => format!("{t}-{}", obj.name),
            None => obj.name.clone(),
        });
    HelmUnit {
        chart_dir,
        release_name,
        namespace: target_ns.unwrap_or_else(|| ns.to_string()),
        value_files,
        ignore_missing_value_files: false,
        inline_values: vec![],
        values_layers,
        parameters: vec![],
        skip_crds: false,
        kube_version: None,
        api_versions: vec![],
    }
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
