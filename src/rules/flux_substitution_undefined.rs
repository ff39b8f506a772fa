//! Catalog §28: Flux post-build variables that are undefined, invalid or unsupported, and
//! substitution that silently does nothing.

use super::{FixAvailability, RuleMeta};
use crate::finding::{Finding, Severity};
use crate::gitops::Model;
use crate::gitops::envsubst::SubstProblemKind;

pub const ID: &str = "flux-substitution-undefined";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    summary: "Flux postBuild variable is undefined, invalid or unsupported",
    doc: include_str!("../../rules/flux-substitution-undefined.md"),
    fix: FixAvailability::None,
    removal: false,
    since: "0.1.0",
};

const HELP: &str = "Define the variable in postBuild.substitute / substituteFrom, give it a default (`${var:=value}`), escape it as `$${var}`, disable substitution on the object (label kustomize.toolkit.fluxcd.io/substitute: disabled), or set substituteStrategy: Always.";

pub fn check(model: &Model, out: &mut Vec<Finding>) {
    for app in &model.apps {
        let Some(flux) = &app.flux else { continue };
        let mut seen = std::collections::BTreeSet::new();
        for p in &flux.subst_problems {
            if !seen.insert((p.span, p.var.clone())) {
                continue;
            }
            let (severity, message) = match p.kind {
                // kustomize-controller ≥ 1.9 fails the reconciliation (StrictPostBuildSubstitutions).
                SubstProblemKind::Undefined => (
                    Severity::Error,
                    format!(
                        "`${{{}}}` is not defined and has no default: kustomize-controller ≥ 1.9 fails the whole Kustomization (older versions render an empty string)",
                        p.var
                    ),
                ),
                SubstProblemKind::InvalidName => (
                    Severity::Error,
                    format!("`${{{}}}` is not a valid variable name", p.var),
                ),
                SubstProblemKind::Unsupported => (
                    Severity::Warning,
                    format!(
                        "`${{{}…}}` uses a form Flux does not support (`+`, `:?`, `:+`)",
                        p.var
                    ),
                ),
            };
            out.push(
                Finding::new(ID, severity, message, p.span)
                    .label("substituted by Flux postBuild")
                    .app(app.name.clone())
                    .help(HELP),
            );
        }
        if flux.substitution_skipped {
            let span = flux
                .decl
                .root
                .get_path(&["spec", "postBuild"])
                .map(|n| n.span)
                .unwrap_or(flux.decl.span());
            out.push(
                Finding::new(ID, Severity::Warning, "postBuild defines no variables and substituteStrategy is WithVariables: nothing is substituted, so `${…}` expressions reach the cluster literally", span)
                    .label("substitution skipped")
                    .app(app.name.clone())
                    .help(HELP),
            );
        }
    }
}
