//! A pull request makes the controller delete an object that holds data: a PVC, Namespace,
//! CRD, ConfigMap or Secret moves to another app or leaves an app that prunes (reported by
//! `diff`; this file holds the rule's identity and document).

use super::{FixAvailability, Grade, Kinds, RuleMeta};
use crate::finding::Severity;

pub const ID: &str = "pr-deletes-data";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "an object that is not a PVC, PersistentVolume, Namespace or CRD moves from one app to another: it is pruned and created again, and no stored data is lost",
        },
    ],
    summary: "a change makes the controller delete (and perhaps re-create empty) an object that holds data",
    doc: include_str!("../../rules/pr-deletes-data.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.2.0",
    kinds: Kinds::Changes,
};
