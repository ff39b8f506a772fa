//! The model builder's shared state: the repo's layout (charts, kustomizations, references),
//! the context every reader renders through (this repo's identity, its plain manifests,
//! the objects references can name, Flux artifacts), and small path helpers. It imports no
//! reader: `argo.rs`, `flux.rs` and `discover.rs` build on it.

use super::artifact::ArtifactTree;
use super::remotes::RepoIdentity;
use super::render_jobs::{JobEnv, JobOutput, RenderJob, RenderMemo};
use super::rendered::Rendered;
use super::sourceignore::IgnoreRules;
use super::units::{KustomizeUnit, Unit};
use super::{App, AppKind, Cluster};
use crate::config::Profile;
use crate::object::Object;
use crate::render::RenderBudget;
use crate::source::{FileId, RepoFs, Span, is_within, normalize_relative};
use crate::yaml::{Document, Node};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

/// API versions every Kubernetes cluster serves that Helm's built-in list for offline renders
/// does not hold (https://github.com/helm/helm/blob/v3.18.0/pkg/chartutil/capabilities.go:
/// the client-go scheme and apiextensions only). Added to a lint render's capabilities unless
/// the app pins its own (`helm.apiVersions`).
const SERVED_BY_EVERY_CLUSTER: &[&str] = &[
    "apiregistration.k8s.io/v1",
    "apiregistration.k8s.io/v1/APIService",
];

/// A parsed repo file.
pub struct LoadedFile {
    pub id: FileId,
    /// Repo-relative, `/`-separated.
    pub path: String,
    pub docs: Vec<Document>,
}

pub(super) use crate::source::dir_of;

pub(super) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

pub(super) fn is_kustomization_file(path: &str) -> bool {
    matches!(
        file_name(path),
        "kustomization.yaml" | "kustomization.yml" | "Kustomization"
    )
}

/// The component directories a Flux Kustomization adds (`spec.components`, relative to its
/// `spec.path`): referenced, so not built on their own.
pub(super) fn flux_components(root: &Node) -> Vec<String> {
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
#[derive(Clone)]
pub(super) struct Layout {
    pub(super) charts: BTreeSet<String>,
    pub(super) kustomizations: BTreeSet<String>,
    /// Directories another kustomization in the repo refers to (bases, components).
    pub(super) referenced: BTreeSet<String>,
    /// Kustomization references: (the directory that lists, the directory listed).
    pub(super) edges: Vec<(String, String)>,
    /// Directories whose kustomization is a `kind: Component`: fragments, never built alone.
    pub(super) components: BTreeSet<String>,
}

impl Layout {
    /// The kustomization directories strictly below `dir` with none between: what
    /// kustomize-controller's generated kustomization for `dir` lists as resources.
    pub(super) fn nested_kustomizations(&self, dir: &str) -> Vec<String> {
        self.kustomizations
            .iter()
            .filter(|k| is_within(dir, k) && *k != dir)
            .filter(|k| {
                !self
                    .kustomizations
                    .iter()
                    .any(|o| o != *k && is_within(o, k) && is_within(dir, o) && o != dir)
            })
            .cloned()
            .collect()
    }

    pub(super) fn of(files: &[LoadedFile]) -> Layout {
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
    pub(super) fn is_render_input(&self, path: &str) -> bool {
        crate::source::self_and_parents(path)
            .any(|d| self.charts.contains(d) || self.kustomizations.contains(d))
    }

    /// Argo CD's source type discovery
    /// (https://argo-cd.readthedocs.io/en/stable/user-guide/tool_detection/).
    pub(super) fn unit_kind(&self, dir: &str) -> &'static str {
        if self.charts.contains(dir) {
            "helm"
        } else if self.kustomizations.contains(dir) {
            "kustomize"
        } else {
            "directory"
        }
    }
}

/// One ArtifactGenerator output: its tree, or why it is not built.
pub(super) type ArtifactBuild = Result<Arc<ArtifactTree>, String>;

pub(super) struct Ctx<'a> {
    pub(super) layout: Layout,
    pub(super) identity: RepoIdentity,
    pub(super) fs: &'a dyn RepoFs,
    /// Plain manifests (objects of files that are not render inputs) and their file.
    pub(super) plain: Arc<Vec<(Object, String)>>,
    /// `plain` by directory (directory apps take a directory's objects).
    pub(super) plain_by_dir: Arc<super::plain_index::PlainByDir>,
    pub(super) owned: Vec<bool>,
    /// Kustomization and chart directories some app renders (not standalone then).
    pub(super) rendered_dirs: BTreeSet<String>,
    pub(super) budget: RenderBudget,
    /// The destination cluster: Helm's `.Capabilities` unless an app pins them.
    pub(super) profile: &'a Profile,
    /// Objects a Flux reference can name: those declared, then those apps render.
    pub(super) catalog: Arc<Vec<Object>>,
    /// The directories Flux bootstraps apply, longest first (`cluster::bootstrap_paths`).
    pub(super) bootstraps: Arc<Vec<String>>,
    /// ExternalArtifacts this repo's ArtifactGenerators build: (namespace, name) → the tree,
    /// or why it is not built.
    pub(super) artifacts: BTreeMap<(String, String), Vec<(String, ArtifactBuild)>>,
    /// Copy operations that keep an artifact from being built, by artifact: reported as
    /// `render-failed` on the `from:` line for each app that consumes it.
    pub(super) artifact_problems: BTreeMap<(String, String), Vec<(Span, String)>>,
    /// Every file of the repo, listed on first need (ignore rules, artifacts).
    pub(super) all_files: Option<Vec<String>>,
    /// GitRepository artifacts seen through ignore rules, by (namespace, name).
    pub(super) git_trees: BTreeMap<(String, String), Option<Arc<ArtifactTree>>>,
    /// The lock and cache: remote charts and bases render from here (`fs` mounts them).
    pub(super) remotes: crate::render::RemoteInputs,
    /// Renders done so far, by job (several apps asking for one job share its output).
    pub(super) memo: RenderMemo,
    /// While planning: a job not in the memo is noted in `wanted` and answered with nothing,
    /// to be rendered with the others on all cores before the next pass. Otherwise it is
    /// rendered on the spot.
    pub(super) defer_renders: bool,
    pub(super) wanted: Vec<(String, RenderJob)>,
    pub(super) wanted_keys: HashSet<String>,
    /// Artifact trees by content (`render_jobs::tree_key`), computed once per tree: the
    /// `Arc` kept here cannot be freed and its address reused by another tree.
    pub(super) tree_keys: Vec<(Arc<ArtifactTree>, String)>,
}

/// What a pass computed that the next one would compute the same way, since no render
/// feeds it: the artifacts this repo builds and its GitRepositories' views of it.
#[derive(Default)]
pub(super) struct Carried {
    pub(super) artifacts: BTreeMap<(String, String), Vec<(String, ArtifactBuild)>>,
    pub(super) artifact_problems: BTreeMap<(String, String), Vec<(Span, String)>>,
    pub(super) all_files: Option<Vec<String>>,
    pub(super) git_trees: BTreeMap<(String, String), Option<Arc<ArtifactTree>>>,
    pub(super) tree_keys: Vec<(Arc<ArtifactTree>, String)>,
}

impl Ctx<'_> {
    /// A declared or rendered object by kind, namespace (an object without one matches any)
    /// and name.
    /// Of several (one repo holding several clusters' configs), the one declared nearest
    /// to `near`, the file of the object whose reference is resolved.
    pub(super) fn find(&self, kind: &str, ns: &str, name: &str, near: &str) -> Option<Object> {
        let map = self.fs.source_map();
        self.catalog
            .iter()
            .filter(|o| {
                o.kind == kind && o.name == name && o.namespace.as_deref().unwrap_or(ns) == ns
            })
            .min_by_key(|o| std::cmp::Reverse(common_dirs(&map.get(o.span().file).path, near)))
            .cloned()
    }

    pub(super) fn all_files(&mut self) -> &[String] {
        if self.all_files.is_none() {
            self.all_files = Some(super::artifact::repo_files(self.fs));
        }
        self.all_files.as_deref().unwrap_or_default()
    }

    /// source-controller's ignore rules for a GitRepository that is this repo: defaults,
    /// `.sourceignore` files, `spec.ignore`.
    pub(super) fn ignore_rules(&mut self, git: &Object) -> IgnoreRules {
        let mut rules = IgnoreRules::with_defaults();
        let fs = self.fs;
        for f in self.all_files().to_vec() {
            if (f == ".sourceignore" || f.ends_with("/.sourceignore"))
                && let Ok(id) = fs.read(&f)
            {
                let dir = f.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                rules.add(&fs.source_map().get(id).text, dir);
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
    pub(super) fn git_artifact(&mut self, git: &Object) -> Option<Arc<ArtifactTree>> {
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
    pub(super) fn git_artifact_always(&mut self, git: &Object) -> Arc<ArtifactTree> {
        match self.git_artifact(git) {
            Some(t) => t,
            None => {
                let rules = IgnoreRules::with_defaults();
                Arc::new(ArtifactTree::filtered(self.all_files(), &rules))
            }
        }
    }

    /// Build this repo's ArtifactGenerators (source-watcher) into `artifacts`.
    pub(super) fn build_artifacts(&mut self) {
        let gens: Vec<Object> = self
            .catalog
            .iter()
            .filter(|o| super::artifact::is_artifact_generator(o))
            .cloned()
            .collect();
        for g in gens {
            let ns = g.namespace.clone().unwrap_or_else(|| "default".into());
            // A generator's GitRepository is the one declared nearest to the generator.
            let near = self.fs.source_map().get(g.span().file).path.clone();
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
                    let git = self.find(&kind, &src_ns, &name, &near);
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

    /// The ExternalArtifact (namespace, name) declared nearest to `near`, the file of the
    /// object that names it.
    pub(super) fn artifact(
        &self,
        ns: &str,
        name: &str,
        near: &str,
    ) -> Option<Result<Arc<ArtifactTree>, String>> {
        self.artifacts
            .get(&(ns.to_string(), name.to_string()))?
            .iter()
            .min_by_key(|(decl, _)| std::cmp::Reverse(common_dirs(decl, near)))
            .map(|(_, v)| v.clone())
    }

    pub(super) fn plain_in(
        &mut self,
        dir: &str,
        recurse: bool,
        include: Option<&str>,
        exclude: Option<&str>,
    ) -> Vec<Object> {
        let include = include.and_then(glob);
        let exclude = exclude.and_then(glob);
        let mut out = Vec::new();
        let plain = self.plain.clone();
        for i in self.plain_by_dir.indices(dir, recurse) {
            let (obj, file) = &plain[i];
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

    pub(super) fn render_unit(&mut self, unit: Unit, at: Span, out: &mut Rendered) {
        self.render_unit_in(unit, None, at, out)
    }

    /// Render a unit reading from the repo, or from an artifact `tree` built from it.
    pub(super) fn render_unit_in(
        &mut self,
        mut unit: Unit,
        tree: Option<&Arc<ArtifactTree>>,
        at: Span,
        out: &mut Rendered,
    ) {
        out.sources.push(unit.describe());
        if let Unit::Helm(h) = &mut unit {
            // Argo passes the destination cluster's version and APIs unless the app sets
            // helm.kubeVersion / helm.apiVersions; Flux always the cluster's.
            if h.kube_version.is_none() {
                h.kube_version = self.profile.kube_version.clone();
            }
            if h.api_versions.is_empty() {
                h.api_versions = self.profile.api_versions.clone();
                // Every cluster serves the aggregation API, which Helm's offline list (the
                // client-go scheme plus apiextensions) lacks: a chart that asks
                // `.Capabilities.APIVersions.Has "apiregistration.k8s.io/v1"` gets `true`
                // from the cluster Argo CD and helm-controller render against.
                for v in SERVED_BY_EVERY_CLUSTER {
                    if !h.api_versions.iter().any(|a| a == v) {
                        h.api_versions.push((*v).to_string());
                    }
                }
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
                let nested = self.layout.nested_kustomizations(dir);
                let objs = self.plain_in(dir, true, None, None);
                out.objects.extend(objs);
                for k in nested {
                    // Built here, so not a standalone app as well.
                    self.rendered_dirs.insert(k.clone());
                    let u = Unit::Kustomize(KustomizeUnit {
                        dir: k,
                        flux: true,
                        argo_options: None,
                    });
                    self.render_job(
                        RenderJob::Unit {
                            unit: u,
                            tree: tree.cloned(),
                        },
                        at,
                        out,
                    );
                }
            }
            Unit::Kustomize(_) | Unit::Helm(_) => self.render_job(
                RenderJob::Unit {
                    unit,
                    tree: tree.cloned(),
                },
                at,
                out,
            ),
        }
    }

    /// What the next pass may start from (see [`Carried`]).
    pub(super) fn carry(&mut self) -> Carried {
        Carried {
            artifacts: std::mem::take(&mut self.artifacts),
            artifact_problems: std::mem::take(&mut self.artifact_problems),
            all_files: self.all_files.take(),
            git_trees: std::mem::take(&mut self.git_trees),
            tree_keys: std::mem::take(&mut self.tree_keys),
        }
    }

    /// What every render of this run renders with.
    pub(super) fn job_env(&self) -> JobEnv<'_> {
        JobEnv {
            fs: self.fs,
            budget: &self.budget,
            remotes: &self.remotes,
            kustomizations: &self.layout.kustomizations,
            shared: &self.memo.shared,
        }
    }

    /// The output of `job`: from the memo, rendered now, or (while planning) nothing yet.
    fn job_output(&mut self, job: &RenderJob) -> Option<Arc<JobOutput>> {
        let tree_keys = &mut self.tree_keys;
        let key = job.key(self.fs, &mut |tree| {
            if let Some((_, key)) = tree_keys.iter().find(|(t, _)| Arc::ptr_eq(t, tree)) {
                return key.clone();
            }
            let key = super::render_jobs::tree_key(tree);
            tree_keys.push((tree.clone(), key.clone()));
            key
        });
        if let Some(out) = self.memo.get(&key) {
            return Some(out);
        }
        if self.defer_renders {
            if self.wanted_keys.insert(key.clone()) {
                self.wanted.push((key, job.clone()));
            }
            return None;
        }
        let out = self.job_env().run(job);
        Some(self.memo.insert(key, out))
    }

    /// Add what `job` renders to `out`; `at` is the line of the app that asks for it.
    fn render_job(&mut self, job: RenderJob, at: Span, out: &mut Rendered) {
        let Some(r) = self.job_output(&job) else {
            return;
        };
        out.issues.extend(r.issues.iter().cloned());
        out.issues.extend(r.panic_issue(&job, at));
        out.remotes.extend(r.remotes.iter().cloned());
        out.kustomize_dirs.extend(r.kustomize_dirs.iter().cloned());
        out.differences.extend(r.differences.iter().cloned());
        out.objects.extend_job(r);
    }

    /// Note the remote inputs a render named that are not fetched: the app is partly rendered
    /// for that reason (`remote-base` for a git base, `remote-file` for a file at a URL,
    /// `remote-chart` for a chart or a chart dependency), once per input.
    pub(super) fn note_unfetched(&self, out: &mut Rendered) {
        for u in &out.remotes {
            let (reason, fetched) = match u.reference.kind {
                crate::remote::RemoteKind::Git => {
                    ("remote-base", self.remotes.git_tree(&u.reference))
                }
                crate::remote::RemoteKind::Url => {
                    ("remote-file", self.remotes.url_file(&u.reference))
                }
                crate::remote::RemoteKind::Helm | crate::remote::RemoteKind::Oci => {
                    ("remote-chart", self.remotes.chart(&u.reference))
                }
            };
            if let crate::render::Fetched::Missing(why) = fetched
                && !out.skipped.iter().any(|s| s.message == why)
            {
                out.skipped.push(super::Skip {
                    reason,
                    message: why,
                });
            }
        }
    }

    /// A Flux Kustomization over an artifact tree: the kustomization at the path (or the one
    /// the controller generates from the tree's files), with the Kustomization's options.
    pub(super) fn render_flux_tree(
        &mut self,
        tree: &Arc<ArtifactTree>,
        dir: &str,
        spec: &Node,
        out: &mut Rendered,
    ) {
        mark_tree(self, tree, dir);
        let shown = if dir.is_empty() { "." } else { dir };
        if tree.has_kustomization(dir) {
            out.sources
                .push(format!("kustomize {shown} (flux artifact)"));
        } else {
            out.sources.push(format!(
                "directory {shown} (flux artifact, generated kustomization)"
            ));
        }
        let job = RenderJob::FluxOverlay {
            dir: dir.to_string(),
            spec: spec.clone(),
            tree: Some(tree.clone()),
        };
        self.render_job(job, spec.span, out);
    }

    /// A Flux Kustomization with overlay options: the kustomization at the path (or the one the
    /// controller generates) with the options written into it
    /// (https://fluxcd.io/flux/components/kustomize/kustomizations/).
    pub(super) fn render_flux_overlay(&mut self, dir: &str, spec: &Node, out: &mut Rendered) {
        self.rendered_dirs.insert(dir.to_string());
        let shown = if dir.is_empty() { "." } else { dir };
        if self.layout.kustomizations.contains(dir) {
            out.sources
                .push(format!("kustomize {shown} (flux overlay)"));
        } else {
            // The generated kustomization lists the plain files (they are this app's) and the
            // nearest directories below with a kustomization of their own, which it builds:
            // they are not standalone builds.
            self.plain_in(dir, true, None, None);
            let nested = self.layout.nested_kustomizations(dir);
            self.rendered_dirs.extend(nested);
            out.sources
                .push(format!("directory {shown} (flux, generated kustomization)"));
        }
        let job = RenderJob::FluxOverlay {
            dir: dir.to_string(),
            spec: spec.clone(),
            tree: None,
        };
        self.render_job(job, spec.span, out);
    }
}

/// Where a Flux object declared in `file` is applied before any parent claims it: the
/// bootstrap path that holds the file, else (provisionally) the tree of its directory.
pub(super) fn initial_flux_home(ctx: &Ctx, file: &str) -> Cluster {
    super::cluster::bootstrap_cluster_of(&ctx.bootstraps, file)
        .unwrap_or_else(|| Cluster::Provisional(dir_of(file).to_string()))
}

/// Put a Flux app in the cluster its declaration is applied to: its objects land there too,
/// unless `spec.kubeConfig` sends them to another cluster.
pub(super) fn place_flux_app(app: &mut App, home: Cluster) {
    app.cluster = app
        .flux
        .as_ref()
        .and_then(|f| super::cluster::kubeconfig_cluster(&f.decl))
        .unwrap_or_else(|| home.clone());
    app.home = home;
}

pub(super) fn new_app(name: String, kind: AppKind, span: Option<Span>) -> App {
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
        parent_span: None,
        generated_by: None,
        depends_on: Vec::new(),
        repository: None,
        skipped: Vec::new(),
        outside_source: false,
        entry_point: false,
        remotes: Vec::new(),
        kustomize_dirs: Default::default(),
        cluster: Cluster::Unknown,
        home: Cluster::Unknown,
    }
}

/// Renders Go templates for ApplicationSets with `goTemplate: true`.
pub type GoTemplateFn<'a> = Option<&'a dyn Fn(&str, &serde_json::Value) -> Result<String, String>>;

/// How many leading directories two repo paths share.
pub(super) fn common_dirs(a: &str, b: &str) -> usize {
    dir_of(a)
        .split('/')
        .zip(dir_of(b).split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

/// What an artifact build below `dir` takes from the repo is rendered: its kustomization
/// directories and plain files are not standalone apps.
pub(super) fn mark_tree(ctx: &mut Ctx, tree: &ArtifactTree, dir: &str) {
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

/// Argo's directory include/exclude: a glob, or `{a,b}` alternatives.
pub(super) fn glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}
