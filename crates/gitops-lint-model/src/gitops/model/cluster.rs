//! Where an app's objects land: the cluster, as data (`crate::gitops::cluster` reads it
//! from bootstrap paths, `kubeConfig` and destinations).

use super::kinds::is_flux_kustomization;
use super::{App, Controller};
use crate::object::Object;
use crate::source::{is_within, normalize_relative};
use crate::yaml::Node;

/// The cluster an app's objects land in.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cluster {
    /// The repo does not say (a templated destination, a standalone directory, a Flux tree
    /// outside every bootstrap path of a repo that has several).
    #[default]
    Unknown,
    /// The one cluster the controller runs in, when the repo names none.
    Default,
    /// A cluster the repo names: a bootstrap path, a kubeConfig reference, a destination.
    Named(String),
    /// While the model is built: the tree rooted in this directory, before it is known
    /// whether it shares its cluster with the other trees (`crate::gitops::cluster::settle`).
    Provisional(String),
}

impl Cluster {
    /// The name shown in listings and findings.
    pub fn name(&self) -> &str {
        match self {
            Cluster::Unknown => "unknown",
            Cluster::Default => "in-cluster",
            Cluster::Named(n) | Cluster::Provisional(n) => n,
        }
    }

    pub fn is_known(&self) -> bool {
        !matches!(self, Cluster::Unknown)
    }
}

/// Whether two apps deploy to one cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Same,
    Different,
    /// The repo does not say (a standalone directory, a templated destination, one app of
    /// Argo CD and one of Flux).
    Unknown,
}

/// Whether `a` and `b` deploy their objects to one cluster. Clusters compare within one
/// controller family: an Argo CD destination and a Flux bootstrap path are named in
/// different terms, so across families nothing is known.
pub fn placement(a: &App, b: &App) -> Placement {
    let family = |app: &App| match app.controller() {
        Controller::Argocd => 1,
        Controller::FluxKustomize | Controller::FluxHelm => 2,
        Controller::None => 0,
    };
    let (fa, fb) = (family(a), family(b));
    if fa == 0 || fb == 0 || fa != fb {
        return Placement::Unknown;
    }
    match (&a.cluster, &b.cluster) {
        (Cluster::Unknown, _) | (_, Cluster::Unknown) => Placement::Unknown,
        (x, y) if x == y => Placement::Same,
        _ => Placement::Different,
    }
}

pub(crate) fn applied_path(kustomization: &Object) -> Option<String> {
    kustomization
        .root
        .get_path(&["spec", "path"])
        .and_then(Node::scalar_text)
        .and_then(|p| normalize_relative(&p))
}

/// Does this Flux Kustomization, declared in `file`, apply its own file (the Kustomization
/// `flux bootstrap` writes)? Only from a GitRepository (an OCIRepository's `./` is another
/// tree), and not the whole repository (`./` of an external repo looks the same; a bootstrap
/// at the root is found by its `gotk-sync.yaml`).
pub fn applies_itself(decl: &Object, file: &str) -> bool {
    let from_git = decl
        .root
        .get_path(&["spec", "sourceRef", "kind"])
        .and_then(Node::scalar_text)
        .is_none_or(|k| k == "GitRepository");
    is_flux_kustomization(decl)
        && from_git
        && applied_path(decl).is_some_and(|p| !p.is_empty() && is_within(&p, file))
}
