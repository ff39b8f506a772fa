//! Reads of a Helm release's install/upgrade state (`.Release.IsInstall`, `.IsUpgrade`,
//! `.Revision`) that reach an object, as the chart renderer marked them. What they mean depends on
//! the controller: Argo CD renders with `helm template`, where they are constants (an install,
//! revision 1), so install-only logic is applied on every sync (`helm-install-hook-every-sync`);
//! Flux's helm-controller really installs and upgrades, so the object changes between install and
//! upgrade (`helm-nondeterministic-function`).

use crate::gitops::ModelObject;
use crate::render::helm::provenance::{RELEASE_BRANCH_LABEL, RELEASE_VALUE_LABEL};
use crate::source::Span;
use crate::yaml::path_to_string;
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

/// Each read that reaches `mo`, once per read position (the first field it reaches).
pub fn reads(mo: &ModelObject) -> Vec<ReleaseRead> {
    let mut seen: BTreeSet<(Span, bool)> = BTreeSet::new();
    let mut out = Vec::new();
    mo.object.root.walk(|path, node| {
        let Some(related) = &node.related else { return };
        for r in related.iter() {
            let (name, branch) = match (
                r.label.strip_prefix(RELEASE_VALUE_LABEL),
                r.label.strip_prefix(RELEASE_BRANCH_LABEL),
            ) {
                (Some(n), _) => (n, false),
                (_, Some(n)) => (n, true),
                _ => continue,
            };
            if seen.insert((r.span, branch)) {
                out.push(ReleaseRead {
                    name: name.to_string(),
                    at: r.span,
                    branch,
                    field: path_to_string(path),
                    node: node.span,
                });
            }
        }
    });
    out
}
