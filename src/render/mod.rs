//! Renderers: turn a kustomization or a Helm chart into Kubernetes objects, natively and
//! offline, keeping for every output node the source span a person would edit.
//!
//! A renderer knows nothing about rules: it returns objects plus [`RenderIssue`]s, and the
//! rules stage turns issues into `render-failed` / `offline-unrenderable-input` findings.

pub mod gotmpl;
pub mod helm;
pub mod kustomize;

use crate::object::Object;
use crate::source::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IssueKind {
    /// The build or template failed (catalog §31 `render-failed`).
    Failed,
    /// An input the tool will not fetch or run offline: remote base, exec/KRM plugin,
    /// a chart that is not vendored (catalog §25 `offline-unrenderable-input`).
    Unrenderable,
}

#[derive(Clone, Debug)]
pub struct RenderIssue {
    pub kind: IssueKind,
    /// The entry a person must fix (the kustomization field, the template action).
    pub span: Span,
    pub message: String,
}

/// What one render produced. Objects rendered before a failure are kept so that the rest of
/// the app can still be linted.
#[derive(Clone, Debug, Default)]
pub struct RenderOutput {
    pub objects: Vec<Object>,
    pub issues: Vec<RenderIssue>,
}
