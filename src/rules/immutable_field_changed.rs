//! A pull request changes a field the API server refuses to change on an existing object
//! (reported by `diff`, which compares each object with itself in the base revision; this
//! file holds the rule's identity and document).

use super::{FixAvailability, Kinds, RuleMeta};
use crate::finding::Severity;

pub const ID: &str = "immutable-field-changed";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    summary: "a change sets an immutable field of an existing object: every sync fails until the object is re-created",
    doc: include_str!("../../rules/immutable-field-changed.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.2.0",
    kinds: Kinds::Changes,
};
