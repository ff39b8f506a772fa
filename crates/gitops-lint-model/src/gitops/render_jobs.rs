//! The renders the model builder asks for, as jobs keyed by everything they read, and the
//! memo that answers them: a job several apps ask for (one overlay deployed to two clusters,
//! one chart with the same values) is rendered once, and the model builder's passes render
//! the jobs they found on all cores (`discover.rs`). A job is a pure function of its key and
//! of the files of this run, so the memo lives for one model build.

use super::artifact::{ArtifactFs, ArtifactTree};
use super::flux_overlay::{GeneratedFs, generated_kustomization, overlay};
use super::model::RenderDifference;
use super::units::{self, Unit};
use crate::object::Object;
use crate::render::kustomize::{self, BuildOptions, LoadRestrictions};
use crate::render::{IssueKind, RemoteInputs, RemoteUse, RenderBudget, RenderIssue};
use crate::source::{RepoFs, Span, normalize_relative};
use crate::yaml::Node;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// One render: what it builds and through which view of the repo.
#[derive(Clone, Debug)]
pub(super) enum RenderJob {
    /// A kustomize or Helm unit, read through the repo (with its mounts) or an artifact tree.
    Unit {
        unit: Unit,
        tree: Option<Arc<ArtifactTree>>,
    },
    /// A Flux Kustomization's options written into the kustomization at `dir` (or the one
    /// kustomize-controller generates), read through the repo or an artifact tree.
    FluxOverlay {
        dir: String,
        spec: Node,
        tree: Option<Arc<ArtifactTree>>,
    },
}

/// What a job produced.
#[derive(Debug, Default)]
pub(super) struct JobOutput {
    pub(super) objects: Vec<Object>,
    pub(super) issues: Vec<RenderIssue>,
    pub(super) remotes: Vec<RemoteUse>,
    /// Kustomization directories the render's kustomize build entered.
    pub(super) kustomize_dirs: Vec<String>,
    pub(super) differences: Vec<RenderDifference>,
    /// The render panicked (a bug): the app reports it on its own line.
    pub(super) panic: Option<String>,
}

impl JobOutput {
    /// The issue a panicking render leaves, on the line of the app that asked (`at`).
    pub(super) fn panic_issue(&self, job: &RenderJob, at: Span) -> Option<RenderIssue> {
        self.panic.as_ref().map(|why| RenderIssue {
            kind: IssueKind::Failed,
            input: None,
            span: at,
            message: format!(
                "gitops-lint failed internally while rendering {} ({why}); please report it",
                job.describe()
            ),
        })
    }
}

impl RenderJob {
    fn describe(&self) -> String {
        match self {
            RenderJob::Unit { unit, .. } => unit.describe(),
            RenderJob::FluxOverlay { dir, .. } => {
                format!(
                    "kustomize {} (flux overlay)",
                    if dir.is_empty() { "." } else { dir }
                )
            }
        }
    }

    /// Everything the render reads besides the run's files and limits, as text: two jobs
    /// with one key render the same. Argo CD `kustomize:` options count by what they set
    /// (their values, not where each Application wrote them: the build's spans never point
    /// there); Helm units and Flux options count with their spans, which outputs keep. An
    /// artifact tree counts by its content (`tree_key`).
    pub(super) fn key(
        &self,
        fs: &dyn RepoFs,
        tree_key: &mut dyn FnMut(&Arc<ArtifactTree>) -> String,
    ) -> String {
        let mut tree_text = |tree: &Option<Arc<ArtifactTree>>| match tree {
            Some(t) => tree_key(t),
            None => "repo".to_string(),
        };
        match self {
            RenderJob::Unit { unit, tree } => {
                let tree_text = tree_text(tree);
                match unit {
                    Unit::Kustomize(k) => {
                        let view = JobFs::new(fs, tree_ref(self));
                        let overrides = units::kustomize_overrides(k, view.fs());
                        format!(
                            "kustomize\n{tree_text}\n{}\n{}\n{overrides:?}",
                            k.dir, k.flux
                        )
                    }
                    other => format!("unit\n{tree_text}\n{other:?}"),
                }
            }
            RenderJob::FluxOverlay { dir, spec, tree } => {
                format!("overlay\n{}\n{dir}\n{spec:?}", tree_text(tree))
            }
        }
    }
}

fn tree_ref(job: &RenderJob) -> Option<&ArtifactTree> {
    match job {
        RenderJob::Unit { tree, .. } | RenderJob::FluxOverlay { tree, .. } => tree.as_deref(),
    }
}

/// An artifact tree by content: its file list (artifact path → repo path) hashed.
pub(super) fn tree_key(tree: &ArtifactTree) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (artifact, repo) in &tree.files {
        h.update(artifact.as_bytes());
        h.update([0]);
        h.update(repo.as_bytes());
        h.update([0]);
    }
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("tree {hex}")
}

/// The repo, or an artifact tree over it.
struct JobFs<'a> {
    repo: &'a dyn RepoFs,
    artifact: Option<ArtifactFs<'a>>,
}

impl<'a> JobFs<'a> {
    fn new(repo: &'a dyn RepoFs, tree: Option<&'a ArtifactTree>) -> JobFs<'a> {
        JobFs {
            repo,
            artifact: tree.map(|tree| ArtifactFs { inner: repo, tree }),
        }
    }

    fn fs(&self) -> &dyn RepoFs {
        match &self.artifact {
            Some(a) => a,
            None => self.repo,
        }
    }
}

/// A build's kustomization directories as repo paths: in an artifact tree, the directory
/// each kustomization file was copied from (one the controller generates has none).
fn repo_dirs(dirs: Vec<String>, tree: Option<&ArtifactTree>) -> Vec<String> {
    match tree {
        None => dirs,
        Some(t) => dirs
            .iter()
            .filter_map(|d| t.repo_kustomization_dir(d))
            .collect(),
    }
}

/// What every job of a run renders with.
pub(super) struct JobEnv<'a> {
    /// The repo with its remote mounts.
    pub(super) fs: &'a dyn RepoFs,
    pub(super) budget: &'a RenderBudget,
    pub(super) remotes: &'a RemoteInputs,
    /// The repo's kustomization directories (what a generated kustomization must not list).
    pub(super) kustomizations: &'a BTreeSet<String>,
    /// Included kustomizations built so far, for every job of this model build.
    pub(super) shared: &'a Arc<kustomize::SharedBuilds>,
}

impl JobEnv<'_> {
    /// Render one job. A panic fails that job only (defence in depth: a bug in one app's
    /// render must not stop the run).
    pub(super) fn run(&self, job: &RenderJob) -> JobOutput {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_unguarded(job)))
            .unwrap_or_else(|panic| JobOutput {
                panic: Some(units::panic_text(panic.as_ref()).to_string()),
                ..JobOutput::default()
            })
    }

    fn run_unguarded(&self, job: &RenderJob) -> JobOutput {
        let view = JobFs::new(self.fs, tree_ref(job));
        let fs = view.fs();
        match job {
            RenderJob::Unit { unit, .. } => {
                let (r, differences) = match unit {
                    Unit::Helm(h) => units::render_helm(
                        h,
                        fs,
                        self.budget,
                        self.remotes,
                        self.budget.render_twice,
                    ),
                    _ => {
                        // Included kustomizations are shared between jobs that read the
                        // repo itself (an artifact tree is another set of files).
                        let shared = tree_ref(job).is_none().then(|| self.shared.clone());
                        (
                            units::render_unguarded(unit, fs, self.budget, self.remotes, shared),
                            Vec::new(),
                        )
                    }
                };
                JobOutput {
                    objects: r.objects,
                    issues: r.issues,
                    remotes: r.remotes,
                    kustomize_dirs: repo_dirs(r.kustomize_dirs, tree_ref(job)),
                    differences,
                    panic: None,
                }
            }
            RenderJob::FluxOverlay { dir, spec, .. } => {
                let r = self.flux_overlay(fs, dir, spec, tree_ref(job));
                JobOutput {
                    objects: r.objects,
                    issues: r.issues,
                    remotes: r.remotes,
                    kustomize_dirs: repo_dirs(r.kustomize_dirs, tree_ref(job)),
                    ..JobOutput::default()
                }
            }
        }
    }

    /// The kustomization at `dir` (or the one the controller generates from the files there)
    /// with the Kustomization's options written into it, as kustomize-controller does before it
    /// builds.
    fn flux_overlay(
        &self,
        fs: &dyn RepoFs,
        dir: &str,
        spec: &Node,
        tree: Option<&ArtifactTree>,
    ) -> crate::render::RenderOutput {
        // The repo's `limits:` apply here as to every other kustomize build.
        let opts = BuildOptions {
            load_restrictions: LoadRestrictions::None,
            max_resources: self.budget.max_kustomize_resources,
            max_depth: self.budget.max_kustomize_depth,
            deadline: Some(self.budget.deadline()),
            remotes: self.remotes.clone(),
            // The generated kustomization and the Flux options live in this view only.
            shared: None,
            max_memory_bytes: self.budget.max_render_memory_bytes,
        };
        // A component is a directory relative to the kustomization (remote ones are kept:
        // the build reports them).
        let component_exists = |path: &str| {
            path.contains("://")
                || normalize_relative(&if dir.is_empty() {
                    path.to_string()
                } else {
                    format!("{dir}/{path}")
                })
                .is_some_and(|p| fs.is_dir(&p))
        };
        let in_tree;
        let kustomizations = match tree {
            Some(t) => {
                in_tree = t.kustomization_dirs();
                &in_tree
            }
            None => self.kustomizations,
        };
        if kustomizations.contains(dir) {
            let base = read_kustomization(fs, dir);
            kustomize::build_with_kustomization(
                fs,
                dir,
                overlay(base, spec, &component_exists),
                &opts,
            )
        } else {
            let text = generated_kustomization(fs, dir, kustomizations);
            let gfs = GeneratedFs::new(fs, dir, text);
            kustomize::build_with_kustomization(
                &gfs,
                dir,
                overlay(gfs.root(), spec, &component_exists),
                &opts,
            )
        }
    }
}

/// Jobs by key, with what they produced.
#[derive(Default)]
pub(super) struct RenderMemo {
    done: HashMap<String, Arc<JobOutput>>,
    /// Included kustomizations built once for all jobs (a base under many overlays).
    pub(super) shared: Arc<kustomize::SharedBuilds>,
}

impl RenderMemo {
    pub(super) fn get(&self, key: &str) -> Option<Arc<JobOutput>> {
        self.done.get(key).cloned()
    }

    /// Add rendered jobs.
    pub(super) fn extend(&mut self, done: Vec<(String, JobOutput)>) {
        for (key, out) in done {
            self.done.insert(key, Arc::new(out));
        }
    }

    /// Let go of every output: the pass that becomes the model then takes the objects of a
    /// render no other app shares instead of copying them. Only for that pass, once it asks
    /// for no more renders.
    pub(super) fn release_outputs(&mut self) {
        self.done.clear();
    }

    pub(super) fn insert(&mut self, key: String, out: JobOutput) -> Arc<JobOutput> {
        let out = Arc::new(out);
        self.done.insert(key, out.clone());
        out
    }
}

/// Render `jobs` on all cores. Each job runs entirely on one thread (the template engine's
/// values are not shared between threads); the outputs come back in the jobs' order.
pub(super) fn render_parallel(
    env: &JobEnv,
    jobs: Vec<(String, RenderJob)>,
) -> Vec<(String, JobOutput)> {
    use rayon::prelude::*;
    jobs.into_par_iter()
        .map(|(key, job)| {
            let out = env.run(&job);
            (key, out)
        })
        .collect()
}

/// The parsed kustomization file of `dir` (null when it cannot be read; the build reports it).
pub(super) fn read_kustomization(fs: &dyn RepoFs, dir: &str) -> Node {
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
