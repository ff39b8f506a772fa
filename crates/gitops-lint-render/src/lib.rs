//! gitops-lint's renderers, a crate of their own so that Cargo enforces that they import
//! nothing above them (no app model, no rule) and an edit above them does not recompile
//! them: `render` (Kustomize and Helm built natively, with provenance to the source line),
//! `object` (a rendered Kubernetes object) and `remote` (the fetch cache and lock that remote
//! charts and bases are read from offline; the network side is the main crate's `fetch`).
//! The main crate re-exports them under their old paths (`gitops_lint::render`, …).
#![deny(unsafe_code)]

// The layers below, at the paths the renderers name them by.
pub use gitops_lint_base::{base64, glob, hash, source, yaml};

pub mod object;
pub mod remote;
pub mod render;
