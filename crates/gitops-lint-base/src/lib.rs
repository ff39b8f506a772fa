//! gitops-lint's first layers, a crate of their own so that Cargo enforces that they import
//! nothing above them and an edit above them does not recompile them: `source` (the repo
//! walk, files, spans, line maps), `yaml` (the span-preserving YAML tree, its parser with
//! limits, emitter and paths), `glob`, `hash` (the hash maps of the hot lookups) and `base64` (the one encoder). The
//! main crate re-exports them under their old paths (`gitops_lint::yaml`, …).
#![deny(unsafe_code)]

pub mod base64;
pub mod glob;
pub mod hash;
pub mod source;
pub mod yaml;
