//! An app whose render fails as it would in Argo CD or Flux.

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::render::IssueKind;

pub const ID: &str = "render-failed";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "an app does not render (template error, missing path or value file, kustomize build error)",
    doc: include_str!("../../rules/render-failed.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for app in &model.apps {
        for issue in app.issues.iter().filter(|i| i.kind == IssueKind::Failed) {
            out.push(
                Finding::new(ID, Severity::Error, format!("app `{}` does not render: {}", app.name, issue.message), issue.span)
                    .label("render fails here")
                    .for_app(app)
                    .help(match app.controller() {
                        super::util::Controller::Argocd => "Fix the template, values or kustomization so that `helm template` / `kustomize build` succeeds; until then Argo CD reports ComparisonError and applies nothing new.",
                        super::util::Controller::FluxKustomize | super::util::Controller::FluxHelm => "Fix the template, values or kustomization so that the build succeeds; until then Flux reports the failure and keeps the last applied revision.",
                        super::util::Controller::None => "Fix the template, values or kustomization so that `helm template` / `kustomize build` succeeds; until then Argo CD reports ComparisonError and Flux keeps the last applied revision.",
                    }),
            );
        }
    }
}
