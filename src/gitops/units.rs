//! Render units: what one app source turns into objects (a plain directory, Flux's
//! generated kustomization, a kustomize build, a Helm chart), and the dispatch to the
//! renderers. Units are rendered per app; objects keep spans into the files to edit.

use crate::object::Object;
use crate::render::{IssueKind, RenderIssue, RenderOutput};
use crate::source::{RepoFs, Span};
use crate::yaml::Node;

#[derive(Clone, Debug)]
pub enum Unit {
    /// Argo CD directory source: YAML files directly in `dir`, or below it with `recurse`.
    Directory {
        dir: String,
        recurse: bool,
        include: Option<String>,
        exclude: Option<String>,
    },
    /// A Flux Kustomization path without kustomization.yaml: every YAML file below it,
    /// sub-directories with their own kustomization built as such (catalog A4.1).
    FluxDirectory {
        dir: String,
    },
    Kustomize(KustomizeUnit),
    Helm(HelmUnit),
}

#[derive(Clone, Debug)]
pub struct KustomizeUnit {
    pub dir: String,
    /// Flux builds without the root-only load restriction (still inside the repo).
    pub flux: bool,
    /// Argo CD `source.kustomize` options, as written in the Application.
    pub argo_options: Option<Node>,
}

#[derive(Clone, Debug)]
pub struct HelmUnit {
    pub chart_dir: String,
    pub release_name: String,
    pub namespace: String,
    /// Repo-relative value files, in order, with the span of their entry.
    pub value_files: Vec<(String, Span)>,
    pub ignore_missing_value_files: bool,
    /// Inline values documents applied after the files (Argo `values`/`valuesObject`,
    /// Flux `values`), in order.
    pub inline_values: Vec<Node>,
    /// `--set` style parameters: (name, value, force string).
    pub parameters: Vec<(String, String, bool)>,
    pub skip_crds: bool,
    pub kube_version: Option<String>,
    pub api_versions: Vec<String>,
}

impl Unit {
    pub fn describe(&self) -> String {
        match self {
            Unit::Directory { dir, .. } => format!("directory {}", display_dir(dir)),
            Unit::FluxDirectory { dir } => format!("directory {} (flux)", display_dir(dir)),
            Unit::Kustomize(k) => format!("kustomize {}", display_dir(&k.dir)),
            Unit::Helm(h) => format!("helm {}", display_dir(&h.chart_dir)),
        }
    }
}

fn display_dir(d: &str) -> &str {
    if d.is_empty() { "." } else { d }
}

/// Render a kustomize or Helm unit (directories are resolved from already-parsed files by
/// the caller, which knows them).
pub fn render(unit: &Unit, fs: &dyn RepoFs, at: Span) -> RenderOutput {
    match unit {
        Unit::Kustomize(k) => render_kustomize(k, fs, at),
        Unit::Helm(h) => render_helm(h, fs, at),
        Unit::Directory { .. } | Unit::FluxDirectory { .. } => RenderOutput::default(),
    }
}

fn render_kustomize(k: &KustomizeUnit, _fs: &dyn RepoFs, at: Span) -> RenderOutput {
    RenderOutput {
        objects: Vec::<Object>::new(),
        issues: vec![RenderIssue {
            kind: IssueKind::Unrenderable,
            span: at,
            message: format!(
                "kustomization `{}` was not rendered: this build has no kustomize renderer",
                display_dir(&k.dir)
            ),
        }],
    }
}

fn render_helm(h: &HelmUnit, _fs: &dyn RepoFs, at: Span) -> RenderOutput {
    RenderOutput {
        objects: Vec::new(),
        issues: vec![RenderIssue {
            kind: IssueKind::Unrenderable,
            span: at,
            message: format!(
                "chart `{}` was not rendered: this build has no Helm renderer",
                display_dir(&h.chart_dir)
            ),
        }],
    }
}
