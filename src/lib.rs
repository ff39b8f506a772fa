//! gitops-lint: lint GitOps repositories (Argo CD, Flux) for drift loops before they merge.
//!
//! Data flows down through the modules: source → yaml → render → gitops → rules → report.

pub mod baseline;
pub mod config;
pub mod diff;
pub mod fix;
#[doc(hidden)]
pub mod fuzzing;
pub mod github;
pub mod gitops;
pub mod lint;
pub mod object;
pub mod ownership;
pub mod redact;
pub mod render;
pub mod report;
pub mod rules;
pub mod source;
pub mod yaml;
