//! The pull-request workflow end to end (a module of tests/integration.rs, the one test
//! binary): `diff --base` on a fixture git repo, `--fix` and baselines on the seed repos, the
//! review against a mock GitHub API, SARIF against its schema, and the integration files.

mod common;
mod diff;
mod fix;
#[cfg(feature = "github")]
mod github_review;
mod integration_files;
mod junit;
mod pr_changes;
mod sarif;
