//! Inputs the linter will not fetch or run offline (remote bases, plugins,
//! charts that are not vendored). The app is reported; everything else is still linted.

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::render::IssueKind;

pub const ID: &str = "offline-unrenderable-input";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    summary: "an input cannot be rendered offline (remote base, plugin, chart not vendored)",
    doc: include_str!("../../rules/offline-unrenderable-input.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for app in &model.apps {
        for issue in app.issues.iter().filter(|i| i.kind.is_unrenderable()) {
            out.push(
                // What only the cluster holds cannot be vendored: a note, not a warning.
                Finding::new(ID, if issue.kind == IssueKind::InCluster { Severity::Info } else { Severity::Warning }, format!("app `{}` is only partly linted: {}", app.name, issue.message), issue.span)
                    .label("not fetched or run offline")
                    .for_app(app)
                    .help("Charts and git bases: run `gitops-lint fetch` (lint then renders them from its verified cache), or vendor them. Anything else: vendor it, or lint it where it lives; lint itself never uses the network or runs plugins."),
            );
        }
    }
}
