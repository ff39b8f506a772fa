//! Every integration test in one binary, so the crates are linked once for the tests: each
//! file of tests/ is a module (`cargo test --test integration rule_fixtures::`). `fetch.rs`
//! (needs the `fetch` feature) and `helm_bench.rs` (bench/helm.sh) are binaries of their own.

#[path = "adversarial.rs"]
mod adversarial;
#[path = "app_model.rs"]
mod app_model;
#[path = "architecture.rs"]
mod architecture;
#[path = "checks.rs"]
mod checks;
#[path = "cli.rs"]
mod cli;
mod common;
#[path = "fuzz_regressions.rs"]
mod fuzz_regressions;
#[path = "hardening.rs"]
mod hardening;
#[path = "helm_corpus.rs"]
mod helm_corpus;
#[path = "helm_render.rs"]
mod helm_render;
#[path = "kb_writers.rs"]
mod kb_writers;
#[path = "kustomize_build.rs"]
mod kustomize_build;
#[path = "kustomize_parity.rs"]
mod kustomize_parity;
#[path = "nondeterminism.rs"]
mod nondeterminism;
#[path = "ownership.rs"]
mod ownership;
#[path = "real_repos.rs"]
mod real_repos;
#[path = "real_repos_coverage.rs"]
mod real_repos_coverage;
#[path = "remote_model.rs"]
mod remote_model;
#[path = "remote_render.rs"]
mod remote_render;
#[path = "rule_docs.rs"]
mod rule_docs;
#[path = "rule_fixtures.rs"]
mod rule_fixtures;
#[path = "workflow/main.rs"]
mod workflow;
