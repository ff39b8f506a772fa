//! gitops-lint: lint GitOps repositories (Argo CD, Flux) for drift loops before they merge.
//!
//! Data flows down through the modules: source → yaml → render → gitops → ownership → rules →
//! report → github (the order tests/architecture.rs holds).
#![deny(unsafe_code)]

/// Rendering allocates many small short-lived values (tokens, nodes, Go values), where
/// glibc's malloc and free took about a fifth of a Helm render. Set in the library so every
/// binary built on it (the CLI, the test and benchmark binaries) uses the same allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod alloc;
// The first layers, the template engine and the renderers are crates of their own
// (crates/); their old paths stay.
pub use gitops_lint_base::{base64, glob, hash, source, yaml};
pub use gitops_lint_render::{object, remote, render};
pub mod baseline;
pub mod config;
pub mod diff;
#[cfg(feature = "fetch")]
pub mod fetch;
pub mod finding;
pub mod fix;
#[doc(hidden)]
pub mod fuzzing;
pub mod github;
pub mod gitops;
pub mod lint;
pub mod manifest_files;
pub mod ownership;
pub mod redact;
pub mod report;
pub mod rules;
pub mod same_cause;
