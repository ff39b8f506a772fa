//! Small helpers the rules share: spans of whole entries, object identity for findings.

use crate::finding::Finding;
use crate::gitops::{App, ModelObject};
use crate::source::Span;
use crate::yaml::{Entry, Node};

/// The span of a `key: value` entry, from the key to the end of the value (the line(s) a
/// person edits or deletes).
pub fn entry_span(entry: &Entry) -> Span {
    entry.key.span.cover(entry.value.full_span())
}

/// The entry at a key path, e.g. `["spec", "replicas"]`.
pub fn entry_at<'a>(root: &'a Node, path: &[&str]) -> Option<&'a Entry> {
    let (last, parents) = path.split_last()?;
    root.get_path(parents)?.entry(last)
}

/// Attach app and object identity to a finding about `obj`.
pub fn about(f: Finding, app: &App, obj: &ModelObject) -> Finding {
    let id = format!("{}/{}/{}", obj.object.kind, obj.namespace, obj.object.name);
    f.app(app.name.clone()).object(id)
}

/// `Kind/namespace/name` for messages.
pub fn object_id(obj: &ModelObject) -> String {
    format!("{}/{}/{}", obj.object.kind, obj.namespace, obj.object.name)
}

/// The controller that applies an app's objects (issue 16, class 10): rules decide and word
/// themselves for it (catalog Part A; A4 for Flux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    ArgoCd,
    FluxKustomize,
    FluxHelm,
    /// No app in the repo deploys the object (kubectl, CI, a controller elsewhere).
    Standalone,
}

impl Controller {
    pub fn of(app: &App) -> Controller {
        if app.argo.is_some() {
            return Controller::ArgoCd;
        }
        match app.flux.as_ref().map(|f| &f.kind) {
            Some(crate::gitops::flux::FluxKind::HelmRelease) => Controller::FluxHelm,
            Some(_) => Controller::FluxKustomize,
            None => Controller::Standalone,
        }
    }

    pub fn is_flux(self) -> bool {
        matches!(self, Controller::FluxKustomize | Controller::FluxHelm)
    }

    /// The controller's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Controller::ArgoCd => "Argo CD",
            Controller::FluxKustomize => "kustomize-controller",
            Controller::FluxHelm => "helm-controller",
            Controller::Standalone => "whatever applies it",
        }
    }
}
