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
// The first layers, the template engine, the renderers and the app model are crates of their own
// (crates/); their old paths stay.
pub use gitops_lint_base::{base64, glob, hash, source, yaml};
pub use gitops_lint_model::{config, finding, gitops, ownership};
pub use gitops_lint_render::{object, remote, render};
pub mod baseline;
pub mod diff;
#[cfg(feature = "fetch")]
pub mod fetch;
pub mod fix;
#[doc(hidden)]
pub mod fuzzing;
pub mod github;
pub mod lint;
pub mod manifest_files;
pub mod redact;
pub mod report;
pub mod rules;
pub mod same_cause;
