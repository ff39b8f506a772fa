//! A rule that stopped on a bug in gitops-lint (a panic caught by the rule runner): one
//! finding naming the rule, while the others report. This file holds the id and document;
//! `run_isolated` in rules/mod.rs makes the finding.

use super::{FixAvailability, Kinds, RuleMeta};
use crate::finding::Severity;

pub const ID: &str = "internal-error";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "a rule stopped on a bug in gitops-lint; its findings are missing",
    doc: include_str!("../../rules/internal-error.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Files,
};
