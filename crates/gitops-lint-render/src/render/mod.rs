//! Renderers: turn a kustomization or a Helm chart into Kubernetes objects, natively and
//! offline, keeping for every output node the source span a person would edit.
//!
//! A renderer knows nothing about rules: it returns objects plus [`RenderIssue`]s, and the
//! rules stage turns issues into `render-failed` / `offline-unrenderable-input` findings.

pub use gitops_lint_gotmpl as gotmpl;
pub mod helm;
pub mod kustomize;
pub mod remote;

pub use remote::{Fetched, MountFs, RemoteInputs, RemoteUse};

use crate::object::Object;
use crate::source::Span;
use std::time::{Duration, Instant};

/// What one render of an app source may cost: the `limits:` keys of `.gitops-lint.yaml`
/// that bound the renderers. A render over a limit fails with a located `render-failed`
/// finding naming the key; the other apps are still rendered.
#[derive(Clone, Debug)]
pub struct RenderBudget {
    /// `max-template-steps`: nodes walked plus commands evaluated per chart render.
    pub max_template_steps: u64,
    /// `max-template-output-bytes`: bytes one chart render may produce.
    pub max_template_output_bytes: usize,
    /// `max-range-length`: iterations of one `range` (and elements `until`/`seq` may build).
    pub max_range_length: usize,
    /// `max-include-depth`: nesting of one named template's `include` (Helm's own is 1000).
    pub max_include_depth: usize,
    /// `max-kustomize-resources`: resources one kustomize build may hold.
    pub max_kustomize_resources: usize,
    /// `max-kustomize-depth`: deepest chain of nested kustomizations.
    pub max_kustomize_depth: usize,
    /// `max-render-seconds`: wall time of one render (a chart, a kustomization).
    pub max_render_time: Duration,
    /// `max-render-memory-bytes`: bytes of values one chart render may create (strings,
    /// lists, maps, encoder output; `gotmpl::funcs::memory`).
    pub max_render_memory_bytes: usize,
    /// `max-apps`: Applications app-of-apps may create in one lint, all levels and
    /// ApplicationSets together (30 children per level, 8 levels deep, is 2·10¹⁰ apps).
    pub max_apps: usize,
    /// Render each chart a second time with another seed, clock and zone. Off
    /// when `render-nondeterministic` is: nobody reads the comparison then.
    pub render_twice: bool,
    /// Chart archive bytes and subcharts unpacked by all renders of the lint together.
    pub archives: crate::render::helm::chart::ArchiveTotal,
}

impl Default for RenderBudget {
    fn default() -> Self {
        RenderBudget {
            max_template_steps: 20_000_000,
            max_template_output_bytes: 32 << 20,
            max_range_length: 1_000_000,
            max_include_depth: 1000,
            max_kustomize_resources: 50_000,
            max_kustomize_depth: 64,
            max_render_time: Duration::from_secs(10),
            max_render_memory_bytes:
                crate::render::gotmpl::funcs::memory::DEFAULT_MAX_RENDER_MEMORY_BYTES,
            max_apps: 10_000,
            render_twice: true,
            archives: Default::default(),
        }
    }
}

impl RenderBudget {
    /// The moment a render started now must stop by.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.max_render_time
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IssueKind {
    /// The build or template failed (`render-failed`).
    Failed,
    /// An input the tool will not fetch or run offline: remote base, exec/KRM plugin,
    /// a chart that is not vendored (`offline-unrenderable-input`).
    Unrenderable,
    /// A step left undone offline: a patch, replacement or template that found no target or
    /// failed while a remote input its render includes was not fetched ([`RenderIssue::input`]),
    /// which may hold what it needs. With every input present it may well succeed, so it is
    /// reported with that input, not as a failure.
    NotApplied,
    /// An input that lives in the cluster, not in Git (the cluster Secrets an ApplicationSet
    /// `clusters` generator lists): nothing in the repo can supply it, so it is only noted.
    InCluster,
}

impl IssueKind {
    /// The input is not fetched offline (`offline-unrenderable-input`).
    pub fn is_unrenderable(&self) -> bool {
        matches!(
            self,
            IssueKind::Unrenderable | IssueKind::InCluster | IssueKind::NotApplied
        )
    }
}

#[derive(Clone, Debug)]
pub struct RenderIssue {
    pub kind: IssueKind,
    /// The entry a person must fix (the kustomization field, the template action).
    pub span: Span,
    pub message: String,
    /// The remote input whose absence this issue is about, named as `gitops-lint fetch` and
    /// the lock name it (`chart oci://… 1.2.3`, `git https://…?ref=v1`, a URL). Issues with the
    /// same input, in any app, are one finding: what is missing is one thing to fetch.
    pub input: Option<MissingInput>,
}

/// A remote input a render went on without.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MissingInput {
    /// How every app naming it names it (`chart oci://… 1.2.3`, `https://… at v1`, a URL).
    pub name: String,
    /// `gitops-lint fetch` downloads it (a chart, a chart dependency, a git base, a file at an
    /// HTTPS URL); other inputs (a file over plain HTTP, a chart only the cluster's sources
    /// build) must be vendored.
    pub fetchable: bool,
}

impl MissingInput {
    pub fn fetchable(name: impl Into<String>) -> Option<MissingInput> {
        Some(MissingInput {
            name: name.into(),
            fetchable: true,
        })
    }
    pub fn vendor_only(name: impl Into<String>) -> Option<MissingInput> {
        Some(MissingInput {
            name: name.into(),
            fetchable: false,
        })
    }
}

/// What one render produced. Objects rendered before a failure are kept so that the rest of
/// the app can still be linted.
#[derive(Clone, Debug, Default)]
pub struct RenderOutput {
    pub objects: Vec<Object>,
    pub issues: Vec<RenderIssue>,
    /// Remote inputs the render met (fetched or not), each where it is named.
    pub remotes: Vec<RemoteUse>,
    /// The kustomization directories a kustomize build entered (its own first, then every
    /// base and component it included), fetched inputs' mounts left out: what the coverage
    /// line counts as linted.
    pub kustomize_dirs: Vec<String>,
}
