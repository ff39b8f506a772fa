//! Reads of a Helm release's install/upgrade state (`.Release.IsInstall`, `.IsUpgrade`,
//! `.Revision`) that reach an object, as the chart renderer marked them. What they mean depends on
//! the controller: Argo CD renders with `helm template`, where they are constants (an install,
//! revision 1), so install-only logic is applied on every sync (`helm-install-hook-every-sync`);
//! Flux's helm-controller really installs and upgrades, so the object changes between install and
//! upgrade (`helm-nondeterministic-function`).

use crate::render::helm::provenance::{RELEASE_BRANCH_LABEL, RELEASE_VALUE_LABEL};
use crate::source::Span;
use crate::yaml::{Node, PathSeg, Related, path_to_string};
use std::collections::BTreeSet;

/// One read whose result reaches a field of an object.
pub struct ReleaseRead {
    /// `.Release.IsInstall`, `.Release.IsUpgrade` or `.Release.Revision`.
    pub name: String,
    /// The read in the template.
    pub at: Span,
    /// The read is an `if`/`with` condition around the field (else the field prints a value
    /// computed from it).
    pub branch: bool,
    /// The field it reaches (first one in document order) and that node's span.
    pub field: String,
    pub node: Span,
}

impl ReleaseRead {
    /// The read is install/upgrade logic: a branch, or a boolean used as a value
    /// (`ternary`, `default`). Printing the revision is not logic.
    pub fn is_logic(&self) -> bool {
        self.branch || self.name != ".Release.Revision"
    }

    /// The branch holds the whole object (its first field is already inside it).
    pub fn whole_object(&self) -> bool {
        self.branch && matches!(self.field.as_str(), "apiVersion" | "kind")
    }

    /// What depends on the read, for messages: `` `field` of Kind/ns/name `` or the object.
    pub fn subject(&self, object: &str) -> String {
        if self.whole_object() {
            object.to_string()
        } else {
            format!("{object} `{}`", self.field)
        }
    }
}

/// The reads found so far in a walk of one object, once per read position (the first field
/// it reaches, in document order).
#[derive(Default)]
pub struct Reads {
    seen: BTreeSet<(Span, bool)>,
    out: Vec<ReleaseRead>,
}

impl Reads {
    /// The reads among a node's related labels.
    pub fn add(&mut self, path: &[PathSeg<'_>], node: &Node, related: &[Related]) {
        for r in related {
            let (name, branch) = match (
                r.label.strip_prefix(RELEASE_VALUE_LABEL),
                r.label.strip_prefix(RELEASE_BRANCH_LABEL),
            ) {
                (Some(n), _) => (n, false),
                (_, Some(n)) => (n, true),
                _ => continue,
            };
            if self.seen.insert((r.span, branch)) {
                self.out.push(ReleaseRead {
                    name: name.to_string(),
                    at: r.span,
                    branch,
                    field: path_to_string(path),
                    node: node.span,
                });
            }
        }
    }

    pub fn into_reads(self) -> Vec<ReleaseRead> {
        self.out
    }
}
