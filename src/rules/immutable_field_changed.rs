//! A pull request changes a field the API server refuses to change on an existing object
//! (reported by `diff`, which compares each object with itself in the base revision; this
//! file holds the rule's identity and document).

use super::{FixAvailability, Grade, Kinds, RuleMeta};
use crate::finding::Severity;

pub const ID: &str = "immutable-field-changed";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "the app does not sync on its own (an Argo CD Application without automated sync, or objects no GitOps app deploys): the next sync fails, not every one",
        },
    ],
    summary: "a change sets an immutable field of an existing object: every sync fails until the object is re-created",
    doc: include_str!("../../rules/immutable-field-changed.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.2.0",
    kinds: Kinds::Changes,
};
