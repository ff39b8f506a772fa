//! An inline `# gitops-lint: ignore[rule]` naming a rule id that does not exist (reported by
//! the suppression pass; this file holds the rule's identity and document).

use super::{FixAvailability, Kinds, RuleMeta};
use crate::finding::Severity;

pub const ID: &str = "suppression-unknown-rule";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[],
    summary: "an inline gitops-lint suppression names a rule id that does not exist",
    doc: include_str!("../../rules/suppression-unknown-rule.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Files,
};
