//! Which objects are the Flux kinds the model reads, by API group and kind (any served
//! version). A leaf: the cluster model and the Flux reader both ask, and neither may import
//! the other's readers.

use crate::object::Object;

pub fn is_flux_kustomization(o: &Object) -> bool {
    o.group() == "kustomize.toolkit.fluxcd.io" && o.kind == "Kustomization"
}

pub fn is_helm_release(o: &Object) -> bool {
    o.group() == "helm.toolkit.fluxcd.io" && o.kind == "HelmRelease"
}

pub fn is_git_repository(o: &Object) -> bool {
    o.group() == "source.toolkit.fluxcd.io" && o.kind == "GitRepository"
}
