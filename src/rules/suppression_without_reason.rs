//! An inline `# gitops-lint: ignore[rule]` without a reason (reported by the suppression
//! pass; this file holds the rule's identity and document).

use super::{FixAvailability, Kinds, RuleMeta};
use crate::finding::Severity;

pub const ID: &str = "suppression-without-reason";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[],
    summary: "an inline gitops-lint suppression gives no reason",
    doc: include_str!("../../rules/suppression-without-reason.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Files,
};
