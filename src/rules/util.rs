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
    f.for_app(app).object(id)
}

/// Attach an app's identity (name and cluster) to a finding.
pub trait ForApp {
    fn for_app(self, app: &App) -> Finding;
}

impl ForApp for Finding {
    fn for_app(self, app: &App) -> Finding {
        let mut f = self.app(app.name.clone());
        f.app_decl = app.span;
        // Kept only where the repo has several clusters (`lint.rs`), so keys stay as they were.
        if app.cluster.is_known() {
            f.cluster(app.cluster.name())
        } else {
            f
        }
    }
}

/// `Kind/namespace/name` for messages.
pub fn object_id(obj: &ModelObject) -> String {
    format!("{}/{}/{}", obj.object.kind, obj.namespace, obj.object.name)
}

/// The controller that applies an app's objects: rules decide and word themselves for it
/// (Argo CD, kustomize-controller, helm-controller, nothing in the repo). One type with the
/// model's `App::controller()`.
pub use crate::gitops::Controller;

/// Whether two objects certainly live in different clusters (`Model::placement`: Argo CD
/// destinations, Flux bootstrap paths and `kubeConfig`s that differ). Anything else may
/// share a cluster.
pub fn in_other_clusters(model: &crate::gitops::Model, a: &ModelObject, b: &ModelObject) -> bool {
    model.placement(a, b) == crate::gitops::Placement::Different
}
