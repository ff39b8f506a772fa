//! gitops-lint's app model, a crate of its own so that Cargo enforces that it imports nothing
//! above it (no rule, no report) and an edit to a rule or a report does not recompile it:
//! `gitops` (the readers of Argo CD and Flux declarations and the model they build, in
//! `gitops::model`), `config` (`.gitops-lint.yaml` and the knowledge base of writers it is read
//! with), `ownership` (who else writes each field) and `finding` (what every stage reports).
//! The main crate re-exports them under their old paths (`gitops_lint::gitops`, …).
#![deny(unsafe_code)]

// The layers below, at the paths the model names them by.
pub use gitops_lint_base::{base64, glob, hash, source, yaml};
pub use gitops_lint_render::{object, remote, render};

pub mod config;
pub mod finding;
pub mod gitops;
pub mod ownership;
