//! A YAML file that does not parse (reported by the lint pipeline, which owns
//! parsing; this file holds the rule's identity and document).

use super::{FixAvailability, Grade, Kinds, RuleMeta};
use crate::finding::Severity;

pub const ID: &str = "yaml-syntax";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "`.gitops-lint.yaml` sets a limit above the default, which is ignored (the repository's configuration may only lower limits)",
        },
        Grade {
            severity: Severity::Info,
            when: "no app in the repository deploys the file that does not parse",
        },
    ],
    summary: "a YAML file does not parse (or exceeds a parser limit)",
    doc: include_str!("../../rules/yaml-syntax.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Files,
};
