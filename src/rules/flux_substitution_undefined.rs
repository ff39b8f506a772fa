//! Flux post-build variables that are undefined, invalid or unsupported, and
//! substitution that silently does nothing.

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::Model;
use crate::gitops::envsubst::SubstProblemKind;
use crate::yaml::Node;

pub const ID: &str = "flux-substitution-undefined";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    summary: "Flux postBuild variable is undefined, invalid or unsupported",
    doc: include_str!("../../rules/flux-substitution-undefined.md"),
    fix: FixAvailability::None,
    removal: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

const HELP: &str = "Define the variable in postBuild.substitute / substituteFrom, give it a default (`${var:=value}`), escape it as `$${var}`, disable substitution on the object (label kustomize.toolkit.fluxcd.io/substitute: disabled), or set substituteStrategy: Always.";

/// `substituteFrom` sources whose variables cannot be known here: not in the repository, or
/// a Secret whose values are SOPS ciphertext (decrypted only in the cluster).
fn unknown_sources(model: &Model, decl: &crate::object::Object) -> Vec<String> {
    let refs = decl
        .root
        .get_path(&["spec", "postBuild", "substituteFrom"])
        .and_then(Node::as_seq)
        .unwrap_or_default();
    let mut out = Vec::new();
    for r in refs {
        let kind = r.get_str("kind").unwrap_or("ConfigMap");
        let name = r.get_str("name").unwrap_or("");
        let found = model
            .objects
            .iter()
            .find(|mo| mo.object.kind == kind && mo.object.name == name);
        let known = found.is_some_and(|mo| {
            mo.object.root.get("sops").is_none()
                && !["data", "stringData"].iter().any(|k| {
                    mo.object
                        .root
                        .get(k)
                        .and_then(Node::as_map)
                        .unwrap_or_default()
                        .iter()
                        .any(|e| crate::gitops::sops::is_ciphertext(&e.value))
                })
        });
        if !known {
            out.push(format!("{kind}/{name}"));
        }
    }
    out
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for app in &model.apps {
        let Some(flux) = &app.flux else { continue };
        let unknown = unknown_sources(model, &flux.decl);
        let mut seen = std::collections::BTreeSet::new();
        for p in &flux.subst_problems {
            if !seen.insert((p.span, p.var.clone())) {
                continue;
            }
            let (severity, message) = match p.kind {
                // Defined, perhaps, by a source this repository does not hold in clear text.
                SubstProblemKind::Undefined if !unknown.is_empty() => (
                    Severity::Info,
                    format!(
                        "`${{{}}}` has no default and is not defined in the repository; it may come from postBuild.substituteFrom {} (not in the repository or encrypted), else kustomize-controller ≥ 1.9 fails the Kustomization",
                        p.var,
                        unknown.join(", ")
                    ),
                ),
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
                    .for_app(app)
                    .help(HELP),
            );
        }
        // With sources whose variables are unknown, "no variables" is not known either
        // (offline-unrenderable-input names the missing sources).
        if flux.substitution_skipped && unknown.is_empty() {
            let span = flux
                .decl
                .root
                .get_path(&["spec", "postBuild"])
                .map(|n| n.span)
                .unwrap_or(flux.decl.span());
            out.push(
                Finding::new(ID, Severity::Warning, "postBuild defines no variables and substituteStrategy is WithVariables: nothing is substituted, so `${…}` expressions reach the cluster literally", span)
                    .label("substitution skipped")
                    .for_app(app)
                    .help(HELP),
            );
        }
    }
}
