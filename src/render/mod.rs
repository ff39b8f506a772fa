//! Renderers: turn a kustomization or a Helm chart into Kubernetes objects, natively and
//! offline, keeping for every output node the source span a person would edit.

pub mod gotmpl;
pub mod helm;
pub mod kustomize;
