//! Flux post-build variables that are undefined, invalid or unsupported, and
//! substitution that silently does nothing.

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::envsubst::SubstProblemKind;
use crate::gitops::model::flux::FluxApp;
use crate::gitops::model::flux::SourceKeys;

pub const ID: &str = "flux-substitution-undefined";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "the expression uses a form Flux does not support (`+`, `:?`, `:+`), or postBuild defines no variables under substituteStrategy WithVariables, so nothing is substituted",
        },
        Grade {
            severity: Severity::Info,
            when: "the variable may come from a postBuild.substituteFrom source that is not in the repository",
        },
    ],
    summary: "Flux postBuild variable is undefined, invalid or unsupported",
    doc: include_str!("../../rules/flux-substitution-undefined.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

const HELP: &str = "Define the variable in postBuild.substitute / substituteFrom, give it a default (`${var:=value}`), escape it as `$${var}`, disable substitution on the object (label kustomize.toolkit.fluxcd.io/substitute: disabled), or set substituteStrategy: Always.";

/// What the `substituteFrom` sources say of a variable no source defines.
struct Sources {
    /// Not in the repository: anything may be defined there.
    missing: Vec<String>,
    /// Made in the cluster with keys the repository does not list.
    open: bool,
    /// Made or encrypted, with every key known: named in the message.
    closed: Vec<String>,
}

fn sources(flux: &FluxApp) -> Sources {
    let mut out = Sources {
        missing: Vec::new(),
        open: false,
        closed: Vec::new(),
    };
    for s in &flux.substitute_from {
        match &s.keys {
            SourceKeys::Written => {}
            SourceKeys::Missing => out.missing.push(s.reference.clone()),
            SourceKeys::Open { .. } => out.open = true,
            SourceKeys::Closed { how, keys } => out.closed.push(format!(
                "{} is {how} and holds {}",
                s.reference,
                if keys.is_empty() {
                    "no keys".to_string()
                } else {
                    format!("only {}", keys.join(", "))
                }
            )),
        }
    }
    out
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for app in &model.apps {
        let Some(flux) = &app.flux else { continue };
        let sources = sources(flux);
        let mut seen = std::collections::BTreeSet::new();
        for p in &flux.subst_problems {
            if !seen.insert((p.span, p.var.clone())) {
                continue;
            }
            let (severity, message) = match p.kind {
                // Defined, perhaps, by a source this repository does not hold.
                SubstProblemKind::Undefined if !sources.missing.is_empty() => (
                    Severity::Info,
                    format!(
                        "`${{{}}}` has no default and is not defined in the repository; it may come from postBuild.substituteFrom {} (not in the repository), else kustomize-controller ≥ 1.9 fails the Kustomization",
                        p.var,
                        sources.missing.join(", ")
                    ),
                ),
                // A Secret made from keys the repository does not list may define anything.
                SubstProblemKind::Undefined if sources.open => continue,
                // kustomize-controller ≥ 1.9 fails the reconciliation (StrictPostBuildSubstitutions).
                SubstProblemKind::Undefined => (
                    Severity::Error,
                    format!(
                        "`${{{}}}` is not defined and has no default: kustomize-controller ≥ 1.9 fails the whole Kustomization (older versions render an empty string){}",
                        p.var,
                        sources
                            .closed
                            .iter()
                            .map(|c| format!("; postBuild.substituteFrom {c}"))
                            .collect::<String>()
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
        if flux.substitution_skipped && sources.missing.is_empty() && !sources.open {
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
